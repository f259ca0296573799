"""predictor.server.runtime and the real hook file under the PBS stand-in, against the real PostgreSQL."""

import os
import subprocess
import sys
import uuid

import pbs_standin as pbs
import psycopg2
import pytest
from conftest import READER_LOGIN, WRITER_LOGIN, empty_tables
from hookenv import (
    HOOKS_DIR,
    finished_job,
    fresh_pbs_server,  # noqa: F401 (a fixture)
    full_job,
    hook_path,
    run,
    write_config,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hostile_names

import predictor.server
from predictor.ingest.ingester import Ingester
from predictor.jobs import CompletedJob
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory

pytestmark = pytest.mark.usefixtures("fresh_pbs_server")


def past(job_id, user="alice", runtime=600, walltime=3600, end=1000):
    return CompletedJob(job_id=job_id, user=user, runtime_s=runtime, end_time=end, walltime_s=walltime)


@pytest.fixture
def config(db, tmp_path):
    return write_config(tmp_path, reader_dsn=db.reader_dsn, writer_dsn=db.writer_dsn)


@pytest.fixture
def history(db):
    with HookHistory(connect_params(db.writer_dsn), read_only=False) as store:
        yield store


def rows(db, sql="SELECT * FROM completed_jobs ORDER BY job_id", params=None):
    conn = psycopg2.connect(db.dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    finally:
        conn.close()


def qsub(config, user="alice", **resources):
    return run("queuejob", pbs.queuejob_event(user, resources), config)


def test_every_event_end_to_end(db, config, history):
    """History in, then qsub, job start, qalter and job end give the expected soft walltimes and row."""
    history.add(past("1.svr", runtime=600, walltime=3600))                 # ratio 1/6
    submitted = qsub(config, walltime=7200)
    assert submitted.accepted and submitted.resources["soft_walltime"] == 7200 // 6 + 900
    history.add(past("2.svr", runtime=1800, walltime=3600, end=2000))      # ratio 1/2 since submission
    job = full_job("3.svr", walltime=7200, soft_walltime=submitted.resources["soft_walltime"])
    started = run("runjob", pbs.runjob_event(job), config)
    assert started.accepted and started.resources["soft_walltime"] == 3600 + 900
    job = full_job("3.svr", walltime=7200, soft_walltime=4500)
    altered = run("modifyjob", pbs.modifyjob_event(job, {"walltime": 3000}, "root"), config)
    assert altered.accepted and altered.resources["soft_walltime"] == 1500 + 900
    ended = run("jobobit", pbs.jobobit_event(finished_job("3.svr", runtime=2500, walltime=3000)), config)
    assert ended.accepted and ended.warnings == []
    assert rows(db, "SELECT job_id, user_name, runtime_s, walltime_s FROM completed_jobs WHERE job_id = '3.svr'") == [
        ("3.svr", "alice", 2500, 3000)]


def test_no_walltime_requested_sets_nothing(config):
    """A qsub without walltime is left for runjob; no database query, no log line."""
    result = qsub(config, ncpus=4)
    assert result.accepted and "soft_walltime" not in result.resources and result.logs == []


def test_user_without_history_gets_the_walltime(config):
    """No history: the soft walltime is the walltime itself."""
    assert qsub(config, "newcomer", walltime=5000).resources["soft_walltime"] == 5000


def test_soft_walltime_is_set_as_duration(config, history):
    """The value set is a pbs.duration, as PBS requires."""
    history.add(past("1.svr"))
    assert isinstance(qsub(config, walltime=7200).resources["soft_walltime"], pbs.duration)


def test_runjob_fills_in_a_default_walltime(config, history):
    """A job that got its walltime from a default at runjob gets its soft walltime then."""
    history.add(past("1.svr", runtime=600, walltime=3600))
    result = run("runjob", pbs.runjob_event(full_job(walltime=3600)), config)
    assert result.resources["soft_walltime"] == 600 + 900


def test_runjob_prediction_is_clamped_to_walltime(config, history):
    """PBS does not check runjob values, so the hook keeps them within walltime itself."""
    history.add(past("1.svr", runtime=7200, walltime=3600))   # ratio 2: more than the walltime
    result = run("runjob", pbs.runjob_event(full_job(walltime=600, soft_walltime=500)), config)
    assert result.resources["soft_walltime"] == 600


@pytest.mark.parametrize("predicted, kept", [(10 ** 6, 600), (0, 1), (-5, 1)])
def test_runjob_keeps_any_prediction_within_one_and_walltime(config, monkeypatch, predicted, kept):
    """The hook's own clamp, not only the algorithm's: whatever the predictor returns, runjob sets [1, walltime]."""
    from predictor.server import runtime
    monkeypatch.setattr(runtime, "predict", lambda store, algorithm, request, deadline: predicted)
    result = run("runjob", pbs.runjob_event(full_job(walltime=600, soft_walltime=500)), config)
    assert result.accepted and result.resources["soft_walltime"] == kept


def test_qalter_of_other_attributes_is_left_alone(db, tmp_path):
    """A qalter that does not change walltime needs no prediction (not even a database)."""
    config = write_config(tmp_path, reader_dsn="host=127.0.0.1 port=1 user=x")
    job = full_job(walltime=3600, soft_walltime=1200)
    result = run("modifyjob", pbs.modifyjob_event(job, {"ncpus": 8}, "alice"), config)
    assert result.accepted and result.resources["soft_walltime"] == 1200 and result.logs == []


def test_qalter_of_soft_walltime_by_a_manager_is_kept(config, history):
    """A manager's qalter -l soft_walltime is passed through as given."""
    history.add(past("1.svr"))
    job = full_job(walltime=7200, soft_walltime=2100)
    result = run("modifyjob", pbs.modifyjob_event(job, {"walltime": 3600, "soft_walltime": 3000}, "root"), config)
    assert result.accepted and result.resources["soft_walltime"] == 3000


def test_keep_admin_value_at_qsub(db, tmp_path, history):
    """With keep_admin_soft_walltime, a manager's qsub -l soft_walltime is kept."""
    history.add(past("1.svr"))
    config = write_config(tmp_path, reader_dsn=db.reader_dsn, keep_admin_soft_walltime=True)
    assert qsub(config, walltime=7200, soft_walltime=60).resources["soft_walltime"] == 60


def test_runjob_after_queued_s_predicts_again_only_after_an_hour(db, tmp_path, history):
    """runjob_after_queued_s 3600: a job submitted a minute ago keeps its queuejob soft_walltime; one submitted
    two hours ago gets a new prediction (v3: 0.5 x 3600 + 900)."""
    import time
    history.add(past("1.svr", runtime=1800, walltime=3600))
    config = write_config(tmp_path, reader_dsn=db.reader_dsn, runjob_after_queued_s=3600)

    def start(queued_s):
        job = full_job(walltime=3600, soft_walltime=1000)
        job.ctime = int(time.time()) - queued_s
        return run("runjob", pbs.runjob_event(job), config).resources["soft_walltime"]
    assert (start(60), start(7200)) == (1000, 1800 + 900)


def test_skipped_users_and_queues_get_no_prediction(db, tmp_path, history):
    """skip_users and skip_queues leave those jobs without a prediction."""
    history.add(past("1.svr"))
    config = write_config(tmp_path, reader_dsn=db.reader_dsn, skip_users=["alice"], skip_queues=["debug"])
    by_user = qsub(config, walltime=7200)
    by_queue = run("queuejob", pbs.queuejob_event("bob", {"walltime": 7200}, queue="debug"), config)
    assert "soft_walltime" not in by_user.resources and "soft_walltime" not in by_queue.resources


def test_jobobit_stores_every_column(db, config):
    """jobobit writes the finished job with all its columns."""
    job = finished_job("9.svr", runtime=600, walltime=3600, stime=1000000, Exit_status=-29)
    run("jobobit", pbs.jobobit_event(job), config)
    assert rows(db) == [("9.svr", "alice", "users", "_pbs_project_default", "workq", 4, 3600, 600, None, 999950,
                         1000000, 1000600, -29)]


def test_job_seen_by_jobobit_and_ingester_is_stored_once(db, config, tmp_path):
    """The jobobit hook and the ingester upsert the same row for the same job."""
    run("jobobit", pbs.jobobit_event(finished_job("42.svr", runtime=3600, stime=1775822405)), config)
    log = tmp_path / "20260410"
    log.write_text("04/10/2026 12:00:05;E;42.svr;user=alice group=users queue=workq ctime=1775822400 "
                   "start=1775822405 end=1775826005 Exit_status=0 Resource_List.walltime=01:00:00 "
                   "resources_used.walltime=01:00:00\n")
    conn = psycopg2.connect(db.writer_dsn)
    try:
        Ingester(conn).ingest([str(log)])
    finally:
        conn.close()
    assert rows(db, "SELECT job_id, runtime_s FROM completed_jobs") == [("42.svr", 3600)]


def test_array_parent_is_not_recorded(db, config):
    """The parent of a job array (123[].svr) is not a run; its subjobs are."""
    run("jobobit", pbs.jobobit_event(finished_job("123[].svr")), config)
    run("jobobit", pbs.jobobit_event(finished_job("123[1].svr")), config)
    assert rows(db, "SELECT job_id FROM completed_jobs") == [("123[1].svr",)]


@settings(max_examples=25)
@given(hostile_names)
def test_hostile_user_names_stored_and_matched_verbatim(database, tmp_path_factory, user):
    """Quotes, semicolons and non-ASCII user names round-trip through jobobit and queuejob."""
    empty_tables(database)
    config = write_config(tmp_path_factory.mktemp("h"), reader_dsn=database.reader_dsn,
                          writer_dsn=database.writer_dsn)
    ended = run("jobobit", pbs.jobobit_event(finished_job("1.svr", user, runtime=600, walltime=3600)), config)
    assert ended.warnings == [] and rows(database, "SELECT user_name FROM completed_jobs") == [(user,)]
    assert qsub(config, user, walltime=7200).resources["soft_walltime"] == 7200 // 6 + 900
    assert qsub(config, user + "x", walltime=7200).resources["soft_walltime"] == 7200


@pytest.fixture
def tagged_config(db, tmp_path):
    """A config whose connections carry a name unique to this test, to count them in pg_stat_activity."""
    tag = "swt_test_{}".format(uuid.uuid4().hex[:12])
    dsns = [dsn + " application_name=" + tag for dsn in (db.reader_dsn, db.writer_dsn)]
    return write_config(tmp_path, reader_dsn=dsns[0], writer_dsn=dsns[1]), tag


def backends(db, tag, user):
    return rows(db, "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND usename = %s",
                (tag, user))[0][0]


def test_connection_reused_between_events(db, tagged_config):
    """Many events share one reader connection; predictions never use the writer role."""
    config, tag = tagged_config
    for index in range(5):
        qsub(config, "user{}".format(index), walltime=3600)
        run("runjob", pbs.runjob_event(full_job(user="user{}".format(index), walltime=3600)), config)
    assert (backends(db, tag, READER_LOGIN), backends(db, tag, WRITER_LOGIN)) == (1, 0)


def test_jobobit_uses_the_writer_role(db, tagged_config):
    """Only jobobit connects, and as the writer."""
    config, tag = tagged_config
    run("jobobit", pbs.jobobit_event(finished_job()), config)
    assert (backends(db, tag, READER_LOGIN), backends(db, tag, WRITER_LOGIN)) == (0, 1)


def test_changed_config_takes_effect(db, tmp_path, history):
    """A config imported again (a new file content) is read again at the next event."""
    history.add(past("1.svr", runtime=600, walltime=3600))
    config = write_config(tmp_path, reader_dsn=db.reader_dsn, algorithm="v3")
    first = qsub(config, walltime=7200).resources["soft_walltime"]
    write_config(tmp_path, reader_dsn=db.reader_dsn, algorithm="v1", window=1)
    assert (first, qsub(config, walltime=7200).resources["soft_walltime"]) == (2100, 600)


def test_success_is_not_logged_by_default(config):
    """A successful prediction logs only at EVENT_DEBUG3, which the server log omits by default."""
    result = qsub(config, walltime=3600)
    assert result.warnings == [] and [level for level, _ in result.logs] == [pbs.EVENT_DEBUG3]


def test_hook_on_an_event_it_does_not_handle_fails_open(config):
    """The hook file attached to another event (movejob) accepts it and says which events it handles."""
    moved = pbs.Event(pbs.MOVEJOB, full_job(walltime=3600))
    result = pbs.run_hook(hook_path(), moved, config)
    assert result.accepted and "soft_walltime" not in result.resources
    assert len(result.warnings) == 1 and "queuejob, runjob, modifyjob, jobobit" in result.warnings[0]


@pytest.fixture
def package_unimportable(monkeypatch):
    """The hook file's ``from predictor.server import runtime`` fails, as with a wrong package_path."""
    monkeypatch.setitem(sys.modules, "predictor.server.runtime", None)
    monkeypatch.delattr(predictor.server, "runtime")


def test_unimportable_package_accepts_with_one_line(package_unimportable, config):
    """Without the package a qsub is accepted unchanged, with one warning naming package_path."""
    result = qsub(config, walltime=3600)
    assert result.accepted and "soft_walltime" not in result.resources
    assert len(result.warnings) == 1 and "package_path" in result.warnings[0]


def test_unimportable_package_still_lets_qalter_lower_the_walltime(package_unimportable, config):
    """The hook file itself lowers soft_walltime to a walltime qalter lowers below it."""
    job = full_job(walltime=7200, soft_walltime=4000)
    result = run("modifyjob", pbs.modifyjob_event(job, {"walltime": 600}, "alice"), config)
    assert result.accepted and result.resources["soft_walltime"] == 600


def test_unimportable_package_in_observe_mode_changes_nothing(package_unimportable, db, tmp_path):
    """In observe mode even the hook file's own clamp stays its hand (PBS then judges the qalter alone)."""
    config = write_config(tmp_path, reader_dsn=db.reader_dsn, mode="observe")
    job = full_job(walltime=7200, soft_walltime=4000)
    result = run("modifyjob", pbs.modifyjob_event(job, {"walltime": 600}, "alice"), config)
    assert result.resources["soft_walltime"] == 4000 and result.reason == pbs.ILLEGAL_VALUE


@pytest.fixture
def logmsg_raises(monkeypatch):
    """A PBS whose logmsg raises, as a bad level does on a real server."""
    def refuse(level, msg):
        raise TypeError("Invalid severity or eventtype value")
    monkeypatch.setattr(pbs, "logmsg", refuse)


def test_raising_logmsg_with_the_package_missing_still_accepts(logmsg_raises, package_unimportable, config):
    """Even the failure line failing does not reject the qsub."""
    assert qsub(config, walltime=3600).accepted


def test_raising_logmsg_with_the_database_down_still_accepts(logmsg_raises, tmp_path):
    """The package's own failure path survives a raising logmsg too."""
    config = write_config(tmp_path, reader_dsn="host=127.0.0.1 port=1 user=x")
    assert qsub(config, walltime=3600).accepted


def test_observe_mode_predicts_and_logs_but_sets_nothing(db, tmp_path, history):
    """mode observe: the job keeps no soft_walltime; the log says what would have been set."""
    history.add(past("1.svr", runtime=600, walltime=3600))
    config = write_config(tmp_path, reader_dsn=db.reader_dsn, mode="observe")
    result = qsub(config, walltime=7200)
    assert result.accepted and "soft_walltime" not in result.resources
    assert [msg for _, msg in result.logs] == [
        "pbs-softwalltime queuejob: user 'alice': observe mode, nothing set: would set soft_walltime none -> 00:35:00"]


def test_observe_mode_still_records_finished_jobs(db, tmp_path):
    """mode observe changes no job, but jobobit still records the history."""
    config = write_config(tmp_path, writer_dsn=db.writer_dsn, mode="observe")
    run("jobobit", pbs.jobobit_event(finished_job("5.svr")), config)
    assert rows(db, "SELECT job_id FROM completed_jobs") == [("5.svr",)]


def test_config_with_only_writer_dsn_serves_jobobit(db, tmp_path):
    """A jobobit-only config (writer_dsn alone) records jobs; on a predicting event it says what is missing."""
    config = write_config(tmp_path, writer_dsn=db.writer_dsn)
    ended = run("jobobit", pbs.jobobit_event(finished_job("6.svr")), config)
    submitted = qsub(config, walltime=3600)
    assert ended.warnings == [] and rows(db, "SELECT job_id FROM completed_jobs") == [("6.svr",)]
    assert submitted.accepted and len(submitted.warnings) == 1 and "reader_dsn" in submitted.warnings[0]


def test_hook_side_code_is_python36_compatible():
    """hooks/ and predictor/ pass vermin's Python 3.6 check (PBS's embedded interpreter)."""
    package = os.path.join(os.path.dirname(HOOKS_DIR), "predictor")
    vermin = os.path.join(os.path.dirname(sys.executable), "vermin")
    result = subprocess.run([vermin, "-t=3.6-", "--no-tips", "--violations", HOOKS_DIR, package],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert result.returncode == 0, result.stdout


durations = st.one_of(st.none(), st.integers(0, 3), st.integers(1, 10 ** 6))


@st.composite
def prediction_events(draw):
    """(hook event, a function making that PBS event afresh) with arbitrary walltimes and soft walltimes."""
    user = draw(st.sampled_from(["alice", "bob", "o'brien"]))
    resources = {name: value for name in ("walltime", "soft_walltime", "min_walltime")
                 for value in [draw(durations)] if value is not None}
    kind = draw(st.sampled_from(["queuejob", "runjob", "modifyjob"]))
    change = {name: value for name in ("walltime", "ncpus") for value in [draw(durations)] if value is not None}
    makers = {
        "queuejob": lambda: pbs.queuejob_event(user, resources),
        "runjob": lambda: pbs.runjob_event(full_job(user=user, **resources)),
        "modifyjob": lambda: pbs.modifyjob_event(full_job(user=user, **resources), change, "root"),
    }
    return kind, makers[kind]


def test_the_no_op_hook_accepts(tmp_path):
    """The baseline of the next test: a hook that does nothing is accepted for a legal job."""
    noop = tmp_path / "noop.py"
    noop.write_text("pass\n")
    assert pbs.run_hook(str(noop), pbs.queuejob_event("alice", {"walltime": 60})).accepted


@settings(max_examples=150)
@given(prediction_events(), st.booleans())
def test_hooks_never_cause_a_rejection(database, tmp_path_factory, generated, reachable):
    """Any request PBS accepts without our hooks, it accepts with them; a soft_walltime set is legal."""
    event, make = generated
    directory = tmp_path_factory.mktemp("p")
    noop = directory / "noop.py"
    noop.write_text("pass\n")
    baseline = pbs.run_hook(str(noop), make())
    dsn = database.reader_dsn if reachable else "host=127.0.0.1 port=1 user=x"
    result = run(event, make(), write_config(directory, reader_dsn=dsn))
    assert result.accepted or not baseline.accepted, result.reason
    assert len(result.warnings) <= 1
    soft, walltime = result.resources.get("soft_walltime"), result.resources.get("walltime")
    if soft is not None and soft != baseline.resources.get("soft_walltime"):
        assert walltime is not None and 1 <= soft <= walltime


def test_qalter_that_would_fail_without_hooks_succeeds_with_them(config, history):
    """Lowering walltime below soft_walltime fails without our hooks and succeeds with them."""
    history.add(past("1.svr"))
    job = full_job(walltime=7200, soft_walltime=2100)
    result = run("modifyjob", pbs.modifyjob_event(job, {"walltime": 600}, "root"), config)
    assert result.accepted and result.resources["soft_walltime"] <= 600
