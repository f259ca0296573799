"""pbs-softwalltime server hook: queuejob, runjob and modifyjob set soft_walltime; jobobit records the job.

Install it with the qmgr lines that `python -m predictor hooks qmgr` prints (see
docs/install.md): one PBS hook for queuejob, runjob and modifyjob with the
reader's config, one for jobobit with the writer's. Everything but finding the
package lives in the package (predictor.server). This file never rejects an
event: if the package cannot be imported, the event is accepted with one line
in the server log and, for a qalter that lowers the walltime below the job's
soft_walltime, soft_walltime is lowered here so that PBS does not reject it.

Python 3.6 syntax and the standard library only: pbs_server runs this file in
its embedded interpreter, which sees no site-packages.
"""

import pbs


def _settings():
    """The hook config as a dict, or an empty one (the package judges it properly)."""
    try:
        import json
        with open(pbs.hook_config_filename, encoding="utf-8") as config_file:
            settings = json.load(config_file)
        return settings if isinstance(settings, dict) else {}
    except Exception:
        return {}


def _import_runtime():
    import sys
    if "predictor.server.runtime" not in sys.modules:
        package_path = _settings().get("package_path")
        if isinstance(package_path, str) and package_path not in sys.path:
            sys.path.append(package_path)
    from predictor.server import runtime
    return runtime


def _warn(message):
    try:
        pbs.logmsg(pbs.LOG_WARNING, message)
    except Exception:  # nowhere left to report to; the event must still be accepted
        pass


def _keep_soft_walltime_within_walltime(event):
    """modifyjob: lower soft_walltime to a walltime lowered below it, or PBS rejects the user's qalter."""
    # Written out rather than the package's clamp: this runs exactly when the package could not be used.
    try:
        if event.type != pbs.MODIFYJOB or _settings().get("mode") == "observe":
            return
        change = event.job.Resource_List
        walltime, current = change["walltime"], event.job_o.Resource_List["soft_walltime"]
        if walltime is not None and change["soft_walltime"] is None and current is not None \
                and 0 < int(walltime) < int(current):
            change["soft_walltime"] = pbs.duration(int(walltime))
    except Exception:
        pass


def _accept_unchanged(event, what, err):
    reason = "{}: {}".format(type(err).__name__, " ".join(str(err).split()))
    _warn("pbs-softwalltime: job accepted, {} ({})".format(what, reason)[:2000])
    _keep_soft_walltime_within_walltime(event)
    try:
        event.accept()
    except SystemExit:
        raise
    except Exception:
        pass  # ending the script without accept or reject accepts too


def _main():
    try:
        event = pbs.event()
    except Exception:
        return  # no event to act on; ending without accept or reject accepts
    try:
        runtime = _import_runtime()
    except Exception as err:
        _accept_unchanged(event, "cannot load the predictor package; check package_path in the hook config", err)
        return
    try:
        runtime.run(pbs)
    except Exception as err:  # the package failed in a way it should have caught itself
        _accept_unchanged(event, "the predictor package failed", err)


_main()
