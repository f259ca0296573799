"""Run the installed hook file under the PBS stand-in with Python 3.6, as on an EL8 server, against PostgreSQL.

Called by .ci/py36-hooks, which installs the package with EL8's own pip into a
``--target`` directory and runs this file with ``python3.6 -S`` (no
site-packages, as in pbs_server's interpreter): ``sys.path`` holds only this
directory (for pbs_standin) and the standard library. The package and pg8000
come from the target directory, which the hook config names as
``package_path``, as docs/install.md has it. Not a pytest module; Python 3.6
syntax, and only the standard library and what is in the target directory.

    python3.6 -S tests/py36_hooks_driver.py TARGET_DIR READER_DSN WRITER_DSN

The database behind the DSNs (schema, reader and writer logins) is made and
dropped by .ci/py36-hooks. Exit status 0 when every check passed, 1 otherwise;
one line per check on stdout.
"""

import importlib.machinery
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time

import pbs_standin as pbs

TESTS = os.path.dirname(os.path.abspath(__file__))
BUDGET_S = 0.5
LIVENESS_S = 5.0
"""Beyond the budget, a hook run this long is waiting for ever: a generous bound, not a timing."""
failures = []


def check(name, condition, detail=""):
    print("{} {}{}".format("ok  " if condition else "FAIL", name, "" if condition else ": {}".format(detail)))
    if not condition:
        failures.append(name)


class Site:
    """What the checks share: the installed hook file, the target directory, the DSNs, a scratch directory."""

    def __init__(self, target, reader_dsn, writer_dsn):
        self.target = os.path.abspath(target)
        self.hook = os.path.join(self.target, "predictor", "hooks", "softwalltime.py")
        self.reader_dsn, self.writer_dsn = reader_dsn, writer_dsn
        self.scratch = tempfile.mkdtemp(prefix="swt_py36_")

    def config(self, **settings):
        """A hook config file naming the target as package_path, with ``settings``."""
        settings.setdefault("package_path", self.target)
        fd, path = tempfile.mkstemp(suffix=".json", dir=self.scratch)
        with os.fdopen(fd, "w", encoding="utf-8") as config_file:
            json.dump(settings, config_file, ensure_ascii=False)
        return path

    def run(self, pbs_event, config):
        return pbs.run_hook(self.hook, pbs_event, config)


def job(job_id="5.svr", user="alice", walltime=7200, soft_walltime=None):
    resources = {"walltime": walltime}
    if soft_walltime is not None:
        resources["soft_walltime"] = soft_walltime
    return pbs.Job(resources, id=job_id, euser=user, egroup="users", queue=pbs.Queue("workq"))


def finished(job_id, user="alice", runtime=600, walltime=3600):
    return pbs.Job({"walltime": walltime, "ncpus": 4}, {"walltime": runtime}, id=job_id, euser=user, egroup="users",
                   queue=pbs.Queue("workq"), ctime=999950, stime=1000000, obittime=1000000 + runtime, Exit_status=0)


def qsub(site, config, user="alice"):
    return site.run(pbs.queuejob_event(user, {"walltime": 7200}), config)


def isolated():
    check("the package is importable only through package_path (no site-packages, no checkout)",
          importlib.util.find_spec("predictor") is None and importlib.util.find_spec("pg8000") is None, sys.path)


def end_to_end(site, config):
    first = site.run(pbs.jobobit_event(finished("1.svr", runtime=600, walltime=3600)), config)
    check("jobobit records a finished job, the package loaded from package_path", first.accepted
          and first.warnings == [] and sys.modules["predictor"].__file__.startswith(site.target + os.sep), first)
    queued = qsub(site, config)
    check("queuejob sets soft_walltime from the history", queued.resources.get("soft_walltime") == 2100, queued)
    site.run(pbs.jobobit_event(finished("2.svr", runtime=1800, walltime=3600)), config)
    started = site.run(pbs.runjob_event(job(soft_walltime=2100)), config)
    check("runjob predicts again from the grown history", started.resources.get("soft_walltime") == 4500, started)
    altered = site.run(pbs.modifyjob_event(job(soft_walltime=4500), {"walltime": 3000}, "root"), config)
    check("modifyjob keeps soft_walltime within a lowered walltime", altered.accepted
          and altered.resources.get("soft_walltime") == 2400, altered)
    ended = site.run(pbs.jobobit_event(finished("3.svr", runtime=2500, walltime=3000)), config)
    check("jobobit records the job with its runtime", ended.warnings == [] and ("3.svr", 2500) in recorded(site), ended)


def recorded(site):
    """alice's newest jobs as the reader sees them: (job_id, runtime_s)."""
    from predictor.server.dsn import connect_params
    from predictor.server.store import HookHistory
    with HookHistory(connect_params(site.reader_dsn)) as reader:
        return [(row.job_id, row.runtime_s) for row in reader.recent("alice", 15)]


def hostile_names(site, config):
    for user in ["o'brien", "a;b", "x'); DROP TABLE completed_jobs;--", "\u03a9mega", "\u7528\u6237", "%(user)s"]:
        site.run(pbs.jobobit_event(finished("h-" + user, user=user)), config)
        mine, other = (qsub(site, config, name).resources.get("soft_walltime") for name in (user, user + "x"))
        check("user {!r} stored and matched verbatim".format(user), (mine, other) == (2100, 7200), (mine, other))


def free_port():
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
    finally:
        probe.close()


def fresh_runtime():
    """A new hook runtime, as after a restart of pbs_server's interpreter (no pause, no connection)."""
    from predictor.server import runtime
    runtime.RUNTIME.close()
    runtime.RUNTIME = runtime.Runtime()
    return runtime


def database_down(site):
    dsn = "host=127.0.0.1 port={} user=x dbname=y".format(free_port())
    config = site.config(reader_dsn=dsn, writer_dsn=dsn, budget_s=BUDGET_S)
    cases = [("queuejob", pbs.queuejob_event("alice", {"walltime": 7200}), {"walltime": 7200}),
             ("runjob", pbs.runjob_event(job(soft_walltime=2100)), {"walltime": 7200, "soft_walltime": 2100}),
             ("modifyjob", pbs.modifyjob_event(job(walltime=3600, soft_walltime=2100), {"walltime": 7200}, "root"),
              {"walltime": 7200, "soft_walltime": 2100}),
             ("jobobit", pbs.jobobit_event(finished("9.svr")), {"walltime": 3600, "ncpus": 4})]
    for event, pbs_event, before in cases:
        result = site.run(pbs_event, config)
        check("{}: database down, job accepted unchanged, one line saying so".format(event), result.accepted
              and result.resources == before and len(result.warnings) == 1
              and "cannot reach the server" in result.warnings[0], result)


def database_silent(site):
    """A server that accepts TCP and never answers: the budget decides, then the pause spares the next job."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        runtime = fresh_runtime()
        dsn = "host=127.0.0.1 port={} user=x dbname=y".format(silent.getsockname()[1])
        config = site.config(reader_dsn=dsn, budget_s=BUDGET_S)
        first = qsub(site, config)
        paused = runtime.RUNTIME.paused()
        second = qsub(site, config)
    finally:
        silent.close()
    check("database silent: accepted, given up at the deadline, then paused", first.accepted and paused == 1
          and len(first.warnings) == 1 and "within the time budget" in first.warnings[0]
          and first.elapsed_s < BUDGET_S + LIVENESS_S, first)
    check("database silent: the next job skips the database during the pause", second.accepted
          and len(second.warnings) == 1 and "skipped" in second.warnings[0], second)


def deadline_inside_a_query(site):
    """pg8000 1.24's socket is re-armed with the time left: a query outlasting the deadline is abandoned."""
    from predictor.errors import DeadlineExceeded
    from predictor.server.dsn import connect_params
    from predictor.server.store import HookHistory
    with HookHistory(connect_params(site.reader_dsn), timeout_s=5.0) as store:  # the server would wait 5 s
        try:
            store.execute("SELECT pg_sleep(3)", deadline=time.monotonic() + BUDGET_S)
            outcome = "answered"
        except DeadlineExceeded:
            outcome = "deadline"
        again = store.recent("alice", 1)
    check("a query slower than the deadline raises DeadlineExceeded; the store connects again",
          outcome == "deadline" and len(again) == 1, (outcome, again))


def bad_config(site):
    config = site.config(reader_dsn="host=127.0.0.1", budget_s="2")
    result = qsub(site, config)
    check("a bad config fails open naming the setting", result.accepted and len(result.warnings) == 1
          and "budget_s" in result.warnings[0], result)


def import_failure(site):
    config = site.config(reader_dsn="host=127.0.0.1", package_path="/nonexistent")
    code = ("import sys; sys.path.insert(0, {!r}); import pbs_standin as pbs; "
            "r = pbs.run_hook({!r}, pbs.queuejob_event('alice', {{'walltime': 60}}), {!r}); "
            "print(r.accepted, len(r.warnings))").format(TESTS, site.hook, config)
    output = subprocess.check_output([sys.executable, "-S", "-E", "-c", code], cwd=site.scratch,
                                     universal_newlines=True)
    check("a package that cannot be imported fails open", output.split() == ["True", "1"], output)


def loaded_from(site):
    """Every loaded module with a file: where it came from, and which are C extensions."""
    stdlib = tuple(os.path.realpath(sysconfig.get_path(name)) + os.sep for name in ("stdlib", "platstdlib"))
    allowed = stdlib + tuple(os.path.realpath(path) + os.sep for path in (site.target, TESTS))
    outside, foreign_extensions = [], []
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path:
            continue
        path = os.path.realpath(path)
        if not path.startswith(allowed):
            outside.append((name, path))
        if path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) and not path.startswith(stdlib):
            foreign_extensions.append((name, path))
    return outside, foreign_extensions


def no_c_extension(site):
    outside, foreign_extensions = loaded_from(site)
    check("no C extension from outside the standard library was loaded", foreign_extensions == [],
          foreign_extensions)
    check("psycopg2 was not imported", not any(name.split(".")[0] == "psycopg2" for name in sys.modules))
    check("every module came from the standard library, the target or tests/", outside == [], outside)


def main():
    target, reader_dsn, writer_dsn = sys.argv[1:4]
    site = Site(target, reader_dsn, writer_dsn)
    print("Python {} -S, package and pg8000 from {}".format(sys.version.split()[0], site.target))
    isolated()
    try:
        config = site.config(reader_dsn=reader_dsn, writer_dsn=writer_dsn)
        end_to_end(site, config)
        hostile_names(site, config)
        database_down(site)
        database_silent(site)
        deadline_inside_a_query(site)
        bad_config(site)
        import_failure(site)
        no_c_extension(site)
    finally:
        if "predictor.server.runtime" in sys.modules:
            fresh_runtime()  # closes the cached connections before the database is dropped
        shutil.rmtree(site.scratch, ignore_errors=True)  # its hook configs: nothing of the run is left in /tmp
    print("{} check(s) failed".format(len(failures)) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
