"""Run the four real hook files under the PBS stand-in with Python 3.6, against the real PostgreSQL.

Called by .ci/py36-hooks inside a Python 3.6 venv holding only psycopg2 (what
PBS's embedded interpreter on EL8 has); not a pytest module, and kept to
Python 3.6 syntax. Exit status 0 when every check passed, 1 otherwise; one line
per check on stdout. The database is a throwaway one on
$PBS_SOFTWALLTIME_TEST_DSN (default: 127.0.0.1:5432, user postgres).
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import uuid

import psycopg2

import pbs_standin as pbs
from pgadmin import READER_LOGIN, WRITER_LOGIN, admin_execute, dsn_for, ensure_login
from predictor.jobs import CompletedJob
from predictor.pgstore import PgHistory
from predictor.schema import init_schema

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOKS = os.path.join(ROOT, "hooks")
BUDGET_S = 0.5
failures = []


def check(name, condition, detail=""):
    print("{} {}{}".format("ok  " if condition else "FAIL", name, "" if condition else ": {}".format(detail)))
    if not condition:
        failures.append(name)


def create_database(name):
    admin_execute("CREATE DATABASE " + name)
    init_schema(dsn_for(name))
    ensure_login(READER_LOGIN, "softwalltime_reader")
    ensure_login(WRITER_LOGIN, "softwalltime_writer")
    return dsn_for(name, READER_LOGIN), dsn_for(name, WRITER_LOGIN)


def write_config(directory, **settings):
    path = os.path.join(directory, "hook{}.json".format(uuid.uuid4().hex[:6]))
    with open(path, "w", encoding="utf-8") as config_file:
        json.dump(settings, config_file, ensure_ascii=False)
    return path


def run(event, pbs_event, config):
    return pbs.run_hook(os.path.join(HOOKS, event + ".py"), pbs_event, config)


def job(job_id="5.svr", user="alice", walltime=7200, soft_walltime=None):
    resources = {"walltime": walltime}
    if soft_walltime is not None:
        resources["soft_walltime"] = soft_walltime
    return pbs.Job(resources, id=job_id, euser=user, egroup="users", queue=pbs.Queue("workq"))


def finished(job_id, user="alice", runtime=600, walltime=3600):
    return pbs.Job({"walltime": walltime, "ncpus": 4}, {"walltime": runtime}, id=job_id, euser=user, egroup="users",
                   queue=pbs.Queue("workq"), ctime=999950, stime=1000000, obittime=1000000 + runtime, Exit_status=0)


def end_to_end(config, writer_dsn, reader_dsn):
    with PgHistory(writer_dsn, read_only=False) as history:
        history.add(CompletedJob("1.svr", "alice", runtime_s=600, end_time=1000, walltime_s=3600))
        queued = run("queuejob", pbs.queuejob_event("alice", {"walltime": 7200}), config)
        check("queuejob sets soft_walltime from history", queued.resources.get("soft_walltime") == 2100, queued)
        history.add(CompletedJob("2.svr", "alice", runtime_s=1800, end_time=2000, walltime_s=3600))
    started = run("runjob", pbs.runjob_event(job(soft_walltime=2100)), config)
    check("runjob predicts again from the grown history", started.resources.get("soft_walltime") == 4500, started)
    altered = run("modifyjob", pbs.modifyjob_event(job(soft_walltime=4500), {"walltime": 3000}, "root"), config)
    check("modifyjob keeps soft_walltime within a lowered walltime", altered.accepted
          and altered.resources.get("soft_walltime") == 2400, altered)
    ended = run("jobobit", pbs.jobobit_event(finished("3.svr", runtime=2500, walltime=3000)), config)
    with PgHistory(reader_dsn) as reader:
        recorded = [(row.job_id, row.runtime_s) for row in reader.recent("alice", 15)]
    check("jobobit records the finished job", ended.warnings == [] and ("3.svr", 2500) in recorded, ended)


def hostile_names(config):
    for user in ["o'brien", "a;b", "x'); DROP TABLE completed_jobs;--", "Ωmega", "用户", "%(user)s"]:
        run("jobobit", pbs.jobobit_event(finished("h-" + user, user=user)), config)
        mine, other = (run("queuejob", pbs.queuejob_event(name, {"walltime": 7200}), config).resources.get(
            "soft_walltime") for name in (user, user + "x"))
        check("user {!r} stored and matched verbatim".format(user), (mine, other) == (2100, 7200), (mine, other))


def free_port():
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
    finally:
        probe.close()


def faults(directory):
    dsn = "host=127.0.0.1 port={} user=x dbname=y".format(free_port())
    config = write_config(directory, reader_dsn=dsn, writer_dsn=dsn, budget_s=BUDGET_S)
    cases = [("queuejob", pbs.queuejob_event("alice", {"walltime": 7200})),
             ("runjob", pbs.runjob_event(job(soft_walltime=2100))),
             ("modifyjob", pbs.modifyjob_event(job(walltime=3600, soft_walltime=2100), {"walltime": 7200}, "root")),
             ("jobobit", pbs.jobobit_event(finished("9.svr")))]
    for event, pbs_event in cases:
        result = run(event, pbs_event, config)
        check("{} fails open when the database refuses".format(event), result.accepted and len(result.warnings) == 1
              and result.elapsed_s < BUDGET_S + 0.3, result)
    bad = write_config(directory, reader_dsn="host=127.0.0.1", budget_s="2")
    result = run("queuejob", pbs.queuejob_event("alice", {"walltime": 60}), bad)
    check("a bad config fails open naming the setting", result.accepted and "budget_s" in result.warnings[0], result)


def import_failure(directory):
    config = write_config(directory, reader_dsn="host=127.0.0.1", package_path="/nonexistent")
    code = ("import sys; sys.path.insert(0, {!r}); import pbs_standin as pbs; "
            "r = pbs.run_hook({!r}, pbs.queuejob_event('alice', {{'walltime': 60}}), {!r}); "
            "print(r.accepted, len(r.warnings))").format(os.path.join(ROOT, "tests"),
                                                         os.path.join(HOOKS, "queuejob.py"), config)
    output = subprocess.check_output([sys.executable, "-S", "-c", code], cwd=directory, universal_newlines=True)
    check("a package that cannot be imported fails open", output.split() == ["True", "1"], output)


def main():
    print("Python {} with psycopg2 {}".format(sys.version.split()[0], psycopg2.__version__))
    name = "swt_py36_{}_{}".format(os.getpid(), uuid.uuid4().hex[:8])
    reader_dsn, writer_dsn = create_database(name)
    directory = tempfile.mkdtemp(prefix="swt_py36_")
    try:
        config = write_config(directory, reader_dsn=reader_dsn, writer_dsn=writer_dsn)
        end_to_end(config, writer_dsn, reader_dsn)
        hostile_names(config)
        faults(directory)
        import_failure(directory)
    finally:
        from predictor import pbshook
        pbshook.reset()
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))
    print("{} check(s) failed".format(len(failures)) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
