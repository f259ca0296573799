"""Hostile names: quotes, ';', backslashes, SQL fragments and non-ASCII, stored and matched verbatim.

Rows arrive both ways -- the ingester reading a log written with pbs_server's
own formats, and the jobobit hook -- next to bystander rows that must not
change. Then every hostile user gets the prediction of their own history and
nobody else's (queuejob hook, ``python -m predictor predict``), and
``skip_queues`` matches hostile queue names verbatim. (test_server_runtime.py
has a Hypothesis property for user names through jobobit and queuejob.)
"""

import pbs_standin as pbs
import psycopg2
import pytest
from hookenv import (
    fresh_pbs_server,  # noqa: F401 (a fixture)
    run,
    write_config,
)
from reliability import predictor_cli, rejections

from predictor.algorithms import make_algorithm
from predictor.history import MemoryHistory, predict
from predictor.jobs import CompletedJob, JobRequest

pytestmark = pytest.mark.usefixtures("fresh_pbs_server")

RAW_HOSTILE = [
    "o'brien", 'say"hi"', "a;b", "back\\slash", "x';DROP/**/TABLE/**/completed_jobs;--",
    "1');DELETE/**/FROM/**/completed_jobs;--", "%s", "%(user)s", "$1", "\\N", "\\.", "E'\\x41'", "--", "/*",
    "a=b", "\u03a9mega", "\u7528\u6237", "tab\there", "nbsp\u00a0x", "ideo\u3000x", "emoji\U0001f642",
    "\u202eRTL", "line\u2028sep", "unit\x1fsep", "bell\x07",
]
"""Values pbs_server writes raw (user, group, jobname, queue): no ASCII space, no leading quote."""

SPACED_HOSTILE = ["my project; DROP TABLE completed_jobs; --", 'say "hi" there', "caf\u00e9 cr\u00e8me"]
"""Values with spaces: pbs_server quotes these (project, account, resources)."""

HOSTILE_IDS = ["7.s\u00e9rveur", "8.svr'--", '9.svr"', "10.svr\\N", "11[3].svr", "12.svr%s", "13.svr\\.", "14.svr/*"]

BYSTANDERS = [CompletedJob("{}.svr".format(n), user, runtime_s=600 + n, end_time=1000 + n, walltime_s=3600,
                           group="users", project="p", queue="workq", ncpus=1, submit_time=900, start_time=950,
                           exit_status=0) for n, user in enumerate(["alice", "bob", "alice", "carol"])]

COLUMNS = "job_id, user_name, group_name, project, queue, runtime_s, walltime_s, end_time"


def pbs_value(value):
    """As cpy_quote_value writes it: quoted only when it holds a space, in ' if it holds a "."""
    if " " not in value:
        return value
    return "'{}'".format(value) if '"' in value else '"{}"'.format(value)


def e_record(job_id, user, group, project, queue, runtime, end):
    start = end - runtime
    return ("04/10/2026 12:00:05;E;{};user={} group={} project={} jobname={} queue={} ctime={} qtime={} "
            "etime={} start={} Resource_List.ncpus=1 Resource_List.walltime=01:00:00 end={} Exit_status=0 "
            "resources_used.walltime={:02d}:{:02d}:{:02d} run_count=1\n").format(
                job_id, user, group, pbs_value(project), user, queue, start - 5, start - 5, start - 5, start, end,
                runtime // 3600, runtime // 60 % 60, runtime % 60)


def hostile_jobs():
    """One job per hostile value (as user, group, project, queue and job name), and hostile job ids."""
    jobs = []
    for n, value in enumerate(RAW_HOSTILE):
        project = SPACED_HOSTILE[n % len(SPACED_HOSTILE)] if n % 2 else value
        jobs.append(CompletedJob("{}.hostile".format(n), value, runtime_s=60 * (n + 1), end_time=5000 + n,
                                 walltime_s=3600, group=value, project=project, queue=value))
    for n, job_id in enumerate(HOSTILE_IDS):
        jobs.append(CompletedJob(job_id, "dave", runtime_s=100 + n, end_time=6000 + n, walltime_s=3600,
                                 group="users", project="p", queue="workq"))
    return jobs


def table(dsn, where="TRUE", params=None):
    conn = psycopg2.connect(dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute("SELECT {} FROM completed_jobs WHERE {} ORDER BY job_id".format(COLUMNS, where), params)
            return cursor.fetchall()
    finally:
        conn.close()


def expected_row(job):
    return (job.job_id, job.user, job.group, job.project, job.queue, job.runtime_s, job.walltime_s, job.end_time)


def with_bystanders(db, tmp_path):
    """Load the bystander jobs with the ingester; return their rows as stored."""
    log = tmp_path / "20260409"
    log.write_text("".join(e_record(job.job_id, job.user, job.group, job.project, job.queue, job.runtime_s,
                                    job.end_time) for job in BYSTANDERS))
    assert predictor_cli("ingest", "--dsn", db.writer_dsn, log).returncode == 0
    return table(db.dsn)


def test_hostile_values_through_the_ingester(db, tmp_path):
    """Every field stored verbatim; nothing rejected; the bystander rows unchanged."""
    before = with_bystanders(db, tmp_path)
    log = tmp_path / "20260410"
    jobs = hostile_jobs()
    log.write_text("".join(e_record(job.job_id, job.user, job.group, job.project, job.queue, job.runtime_s,
                                    job.end_time) for job in jobs), encoding="utf-8")
    result = predictor_cli("ingest", "--dsn", db.writer_dsn, log)
    assert result.returncode == 0 and rejections(result.stderr) == {}, result.stderr
    assert table(db.dsn, "job_id NOT LIKE '_.svr'") == sorted(expected_row(job) for job in jobs)
    assert table(db.dsn, "job_id LIKE '_.svr'") == before


def test_hostile_values_through_the_jobobit_hook(db, tmp_path):
    """A finished job with hostile user, group, project, queue and id: stored verbatim, bystanders unchanged."""
    before = with_bystanders(db, tmp_path)
    config = write_config(tmp_path, reader_dsn=db.reader_dsn, writer_dsn=db.writer_dsn)
    jobs = hostile_jobs() + [CompletedJob("99.hostile", value, runtime_s=77, end_time=7000, walltime_s=3600,
                                          group=value, project=value, queue=value)
                             for value in ["'leading quote", "with space", '"both\' quotes"']]
    for job in jobs:
        finished = pbs.Job({"walltime": 3600}, {"walltime": job.runtime_s}, id=job.job_id, euser=job.user,
                           egroup=job.group, project=job.project, queue=pbs.Queue(job.queue),
                           stime=job.end_time - job.runtime_s, obittime=job.end_time, Exit_status=0)
        result = run("jobobit", pbs.jobobit_event(finished), config)
        assert result.accepted and result.warnings == [], result.logs
        assert table(db.dsn, "job_id = %s", (job.job_id,)) == [expected_row(job)]
    assert table(db.dsn, "job_id LIKE '_.svr'") == before


@pytest.fixture
def loaded(db, tmp_path):
    """Bystanders and hostile jobs in the database (through the ingester); the config for the hooks."""
    with_bystanders(db, tmp_path)
    log = tmp_path / "20260410"
    log.write_text("".join(e_record(job.job_id, job.user, job.group, job.project, job.queue, job.runtime_s,
                                    job.end_time) for job in hostile_jobs()), encoding="utf-8")
    assert predictor_cli("ingest", "--dsn", db.writer_dsn, log).returncode == 0
    return write_config(tmp_path, reader_dsn=db.reader_dsn)


def own_prediction(user, walltime_s):
    """The v3 prediction from exactly ``user``'s jobs among all loaded, in memory."""
    memory = MemoryHistory(capacity=15)
    for job in BYSTANDERS + hostile_jobs():
        if job.user == user:
            memory.add(job)
    return predict(memory, make_algorithm("v3"), JobRequest(user, walltime_s))


def test_hostile_users_get_their_own_prediction(loaded):
    """queuejob for each hostile user sets the prediction of their own history, bystanders' unchanged."""
    for user in RAW_HOSTILE + ["alice", "bob"]:
        result = run("queuejob", pbs.queuejob_event(user, {"walltime": 7200}), loaded)
        assert result.accepted and result.warnings == [], (user, result.logs)
        assert result.resources["soft_walltime"] == own_prediction(user, 7200), user


@pytest.mark.parametrize("user", ["x';DROP/**/TABLE/**/completed_jobs;--", "\\N", "%(user)s", "\u7528\u6237",
                                  "tab\there"])
def test_cli_predict_for_a_hostile_user(db, loaded, user):
    """python -m predictor predict --user HOSTILE: the user's own single job, nobody else's."""
    result = predictor_cli("predict", "--dsn", db.reader_dsn, "--user", user, "--walltime", "02:00:00")
    job = next(job for job in hostile_jobs() if job.user == user)
    assert result.returncode == 0 and "history: 1 completed job(s)" in result.stdout, result.stderr
    assert job.job_id in result.stdout and "({} s)".format(own_prediction(user, 7200)) in result.stdout


def test_skip_queues_match_hostile_names_verbatim(db, loaded, tmp_path):
    """A hostile queue in skip_queues is skipped; the same name one character longer is not."""
    config = write_config(tmp_path, name="skip.json", reader_dsn=db.reader_dsn, skip_queues=RAW_HOSTILE)
    for queue in RAW_HOSTILE:
        skipped = run("queuejob", pbs.queuejob_event("alice", {"walltime": 7200}, queue=queue), config)
        asked = run("queuejob", pbs.queuejob_event("alice", {"walltime": 7200}, queue=queue + "x"), config)
        assert "soft_walltime" not in skipped.resources and asked.resources["soft_walltime"] == \
            own_prediction("alice", 7200), queue
