"""pbs-softwalltime queuejob hook: set Resource_List.soft_walltime from the submitting user's history.

Install: qmgr -c "import hook softwalltime_queuejob application/x-python default queuejob.py"
(see docs/install.md). Everything but finding the package lives in
predictor.pbshook; if the package cannot even be imported, the job is
accepted unchanged with one line in the server log.
"""

import pbs

try:
    import sys
    if "predictor.pbshook" not in sys.modules:
        # Only the config knows where the package is; its other settings are checked by the package.
        import json
        try:
            with open(pbs.hook_config_filename, encoding="utf-8") as config_file:
                package_path = json.load(config_file).get("package_path")
        except Exception:
            package_path = None
        if isinstance(package_path, str) and package_path not in sys.path:
            sys.path.insert(0, package_path)
    from predictor import pbshook
except Exception as err:  # fail open: a broken install must never reject a job
    reason = "{}: {}".format(type(err).__name__, " ".join(str(err).split()))
    pbs.logmsg(pbs.LOG_WARNING, "pbs-softwalltime queuejob: job accepted unchanged: cannot load the predictor "
               "package ({}); set package_path in the hook config".format(reason))
    pbs.event().accept()

pbshook.run(pbs, "queuejob")
