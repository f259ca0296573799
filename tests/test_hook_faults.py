"""Fault tests: whatever the database or the install does, every job is accepted, and the hook says why.

Each fault runs the real hook file for the four events under the PBS stand-in
and checks what the hook decided: accepted, unchanged (modifyjob may only lower
soft_walltime to a lowered walltime, or PBS would reject the qalter), one log
line an admin sees by default, and the reason in it -- the database did not
answer within the budget (DeadlineExceeded, after which the runtime pauses
it), was skipped during that pause, or could not be reached. How long the
machine took is recorded (test property ``worst_s``, see it with
``--junitxml``), never asserted, except a liveness bound far above the budget
that catches a hook waiting for ever. Faults that stop, restart or freeze a
server use a private cluster; lock and slow-query faults use a database of
their own on the shared server.
"""

import json
import os
import subprocess
import sys
import textwrap
import time

import pbs_standin as pbs
import psycopg2
import pytest
from conftest import READER_LOGIN, dsn_for
from dbfaults import OUTCOMES, outcome, slow_reads, throwaway_database  # noqa: F401 (slow_reads is a fixture)
from hookenv import (
    HOOK_FILE,
    finished_job,
    fresh_pbs_server,  # noqa: F401 (a fixture)
    full_job,
    restart_interpreter,
    run,
    write_config,
)
from pgcluster import PrivateCluster, free_port

from predictor.jobs import CompletedJob
from predictor.server import runtime
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory

pytestmark = pytest.mark.usefixtures("fresh_pbs_server")

BUDGET_S = 0.5
LIVENESS_S = 5.0
"""Beyond the budget, a hook run that takes this long is waiting for ever: a generous bound, not a timing."""
PREDICTED_S = 2100
"""alice's prediction for a 2 h job from her history (one 600 s job of a 1 h walltime; v3)."""


def events():
    """One fresh event per hook with the resources each job has before it: (event, resources)."""
    queued = pbs.queuejob_event("alice", {"walltime": 7200})
    starting = pbs.runjob_event(full_job("5.svr", walltime=7200, soft_walltime=2100))
    altered = pbs.modifyjob_event(full_job("5.svr", walltime=3600, soft_walltime=2100), {"walltime": 7200}, "root")
    ended = pbs.jobobit_event(finished_job("6.svr"))
    return {
        "queuejob": (queued, {"walltime": 7200}),
        "runjob": (starting, {"walltime": 7200, "soft_walltime": 2100}),
        "modifyjob": (altered, {"walltime": 7200, "soft_walltime": 2100}),
        "jobobit": (ended, {"walltime": 3600, "ncpus": 4}),
    }


def every_event(said):
    return dict.fromkeys(events(), said)


TIMEOUT_THEN_PAUSE = {"queuejob": "timed out", "runjob": "skipped", "modifyjob": "skipped", "jobobit": "timed out"}
"""A database that does not answer, with the default pause: the reader times out once and is then skipped;
the writer (jobobit) has a pause of its own."""


def assert_all_fail_open(config, said, budget_s=BUDGET_S, record=None):
    """Run the four hooks: each accepted unchanged, with one visible line whose reason is ``said[event]``.

    ``said[event]`` is an ``OUTCOMES`` name (see dbfaults.py) or, for other failures, a phrase of the line.
    """
    worst = 0.0
    for event, (pbs_event, before) in events().items():
        result = run(event, pbs_event, config)
        assert result.accepted, (event, result.reason)
        assert result.resources == before, event
        assert len(result.warnings) == 1, (event, result.logs)
        if said[event] in OUTCOMES:
            assert outcome(result) == said[event], (event, result.warnings)
        else:
            assert said[event] in result.warnings[0], (event, result.warnings)
        assert result.elapsed_s < budget_s + LIVENESS_S, (event, result.elapsed_s)
        worst = max(worst, result.elapsed_s)
    if record is not None:
        record("worst_s", round(worst, 3))


def config_for(tmp_path, reader_dsn, writer_dsn, **settings):
    settings.setdefault("budget_s", BUDGET_S)
    return write_config(tmp_path, reader_dsn=reader_dsn, writer_dsn=writer_dsn, **settings)


def qsub(config):
    return run("queuejob", pbs.queuejob_event("alice", {"walltime": 7200}), config)


def record_job(dsn, job):
    with HookHistory(connect_params(dsn), read_only=False) as store:
        store.add(job)


# --- a private cluster: stopped, restarted, frozen ------------------------------------

@pytest.fixture(scope="module")
def cluster():
    """A private PostgreSQL cluster with the schema and two login roles."""
    private = PrivateCluster()
    try:
        private.start()
        private.reader_dsn, private.writer_dsn = private.setup_schema()
        record_job(private.writer_dsn, CompletedJob("1.svr", "alice", runtime_s=600, end_time=1000, walltime_s=3600))
        yield private
    finally:
        private.destroy()


@pytest.fixture
def cluster_config(cluster, tmp_path):
    config = config_for(tmp_path, cluster.reader_dsn, cluster.writer_dsn)
    yield config
    cluster.ensure_running()


def warm_up(config):
    """One good event of each kind, so that both connections are cached."""
    assert qsub(config).resources["soft_walltime"] == PREDICTED_S
    assert run("jobobit", pbs.jobobit_event(finished_job("2.svr")), config).warnings == []


def test_connection_refused(tmp_path, record_property):
    """Nothing listens on the database port: every job accepted unchanged, 'cannot reach', no pause."""
    dsn = "host=127.0.0.1 port={} user=x dbname=y".format(free_port())
    assert_all_fail_open(config_for(tmp_path, dsn, dsn), every_event("unreachable"), record=record_property)
    assert runtime.RUNTIME.paused() == 0


def test_server_stopped(cluster, cluster_config, record_property):
    """The server stops while connections are cached: every job accepted unchanged, 'cannot reach', no pause."""
    warm_up(cluster_config)
    cluster.stop()
    assert_all_fail_open(cluster_config, every_event("unreachable"), record=record_property)
    assert runtime.RUNTIME.paused() == 0


def test_server_restarted_between_two_events(cluster, cluster_config, record_property):
    """After a restart the dead cached connection is replaced transparently: no log line, a prediction."""
    warm_up(cluster_config)
    cluster.restart()
    queued = qsub(cluster_config)
    ended = run("jobobit", pbs.jobobit_event(finished_job("3.svr")), cluster_config)
    assert queued.resources["soft_walltime"] == PREDICTED_S and queued.warnings == [] and ended.warnings == []
    record_property("worst_s", round(max(queued.elapsed_s, ended.elapsed_s), 3))


def test_server_frozen(cluster, cluster_config, record_property):
    """A server that accepts TCP but never answers (SIGSTOP): the budget runs out, then the database is paused."""
    warm_up(cluster_config)
    cluster.freeze()
    assert_all_fail_open(cluster_config, TIMEOUT_THEN_PAUSE, record=record_property)
    assert runtime.RUNTIME.paused() == 2


def test_frozen_server_is_skipped_after_a_timeout(cluster, cluster_config):
    """After one timeout the next job skips the database, even one that would answer again by then."""
    cluster.freeze()
    first = qsub(cluster_config)
    paused = runtime.RUNTIME.paused()
    cluster.thaw()
    second = qsub(cluster_config)
    assert (outcome(first), paused, outcome(second)) == ("timed out", 1, "skipped")
    assert second.accepted and "soft_walltime" not in second.resources


def test_default_budget_holds_for_a_frozen_server(cluster, tmp_path, record_property):
    """With the default 2 s budget a frozen server is still given up on at the deadline, and paused."""
    config = write_config(tmp_path, reader_dsn=cluster.reader_dsn, writer_dsn=cluster.writer_dsn)
    cluster.freeze()
    try:
        assert_all_fail_open(config, TIMEOUT_THEN_PAUSE, budget_s=2.0, record=record_property)
    finally:
        cluster.ensure_running()
    assert runtime.RUNTIME.paused() == 2


def test_qalter_lowering_walltime_still_succeeds_when_database_is_down(tmp_path):
    """With no database, modifyjob lowers soft_walltime to the new walltime so PBS accepts the qalter."""
    dsn = "host=127.0.0.1 port={} user=x".format(free_port())
    event = pbs.modifyjob_event(full_job(walltime=7200, soft_walltime=2100), {"walltime": 600}, "root")
    result = run("modifyjob", event, config_for(tmp_path, dsn, dsn))
    assert result.accepted and result.resources["soft_walltime"] == 600 and len(result.warnings) == 1
    assert "-> 00:10:00" in result.warnings[0]


# --- a database of our own on the shared server: locks and slow queries -------------

def _two_jobs_of_alice(dsn):
    record_job(dsn, CompletedJob("1.svr", "alice", runtime_s=600, end_time=1000, walltime_s=3600))
    record_job(dsn, CompletedJob("6.svr", "alice", runtime_s=600, end_time=1001, walltime_s=3600))


@pytest.fixture(scope="module")
def own_db(database):
    """A throwaway database on the shared server (the session fixture made the login roles)."""
    with throwaway_database("swt_faults", _two_jobs_of_alice) as name:
        yield name


@pytest.fixture
def own_config(own_db, tmp_path, database):
    return config_for(tmp_path, dsn_for(own_db, READER_LOGIN), database.writer_dsn.replace(database.name, own_db))


@pytest.fixture
def holder(own_db):
    """A second session that holds locks in an open transaction until the test ends."""
    conn = psycopg2.connect(dsn_for(own_db))
    yield conn
    conn.rollback()
    conn.close()


class RuntimeClock:
    """The runtime's clock, moved forward by the test: ``time.monotonic()`` plus what ``advance`` added.

    Based on time.monotonic because the runtime also starts each event's deadline from it.
    """

    def __init__(self):
        self.offset_s = 0.0

    def __call__(self):
        return time.monotonic() + self.offset_s

    def advance(self, seconds):
        self.offset_s += seconds


@pytest.fixture
def clock(fresh_pbs_server):
    """This test's hook runtime, on a ``RuntimeClock``."""
    moved = RuntimeClock()
    runtime.RUNTIME = runtime.Runtime(clock=moved)
    return moved


def test_statement_blocked_by_a_lock(own_config, holder, record_property):
    """completed_jobs locked by another session: the budget runs out, jobs accepted unchanged, database paused."""
    with holder.cursor() as cursor:
        cursor.execute("LOCK TABLE completed_jobs IN ACCESS EXCLUSIVE MODE")
    assert_all_fail_open(own_config, TIMEOUT_THEN_PAUSE, record=record_property)
    assert runtime.RUNTIME.paused() == 2


def test_jobobit_blocked_by_a_row_lock(own_config, holder):
    """The finished job's row locked by another transaction: not recorded now (timed out), accepted."""
    with holder.cursor() as cursor:
        cursor.execute("SELECT 1 FROM completed_jobs WHERE job_id = '6.svr' FOR UPDATE")
    result = run("jobobit", pbs.jobobit_event(finished_job("6.svr", runtime=900)), own_config)
    assert result.accepted and outcome(result) == "timed out" and "may not be recorded" in result.warnings[0]
    assert result.elapsed_s < BUDGET_S + LIVENESS_S


def test_database_asked_again_after_the_pause(holder, tmp_path, own_db, clock):
    """Skipped until pause_after_timeout_s has passed on the runtime's clock, then asked again."""
    config = config_for(tmp_path, dsn_for(own_db, READER_LOGIN), None, pause_after_timeout_s=30)
    with holder.cursor() as cursor:
        cursor.execute("LOCK TABLE completed_jobs IN ACCESS EXCLUSIVE MODE")
    timed_out = qsub(config)
    holder.rollback()  # the database would answer from now on
    clock.advance(20)
    during = qsub(config)
    clock.advance(11)
    after = qsub(config)
    assert (outcome(timed_out), outcome(during)) == ("timed out", "skipped")
    assert "soft_walltime" not in during.resources
    assert after.warnings == [] and "soft_walltime" in after.resources  # predicted: only the database tells


def test_query_slower_than_the_budget(own_config, slow_reads, record_property):
    """The prediction query itself takes 5 s: each prediction hook gives up at the deadline, job unchanged."""
    worst = 0.0
    for event in ("queuejob", "runjob", "modifyjob"):
        restart_interpreter()  # a runtime of its own, so that no pause spares this event the query
        pbs_event, before = events()[event]
        result = run(event, pbs_event, own_config)
        assert result.accepted and result.resources == before and outcome(result) == "timed out", event
        assert runtime.RUNTIME.paused() == 1 and result.elapsed_s < BUDGET_S + LIVENESS_S, event
        worst = max(worst, result.elapsed_s)
    record_property("worst_s", round(worst, 3))


# --- config and install faults ---------------------------------------------------------

@pytest.mark.parametrize("settings, named", [
    ({"reader_dsn": "host=127.0.0.1", "budget_s": "2"}, "budget_s"),
    ({"reader_dsn": "host=127.0.0.1", "keep_admin_soft_walltime": "yes"}, "keep_admin_soft_walltime"),
    ({"reader_dsn": "host=db.example.org"}, "reader_dsn"),
    ({"reader_dsn": "host=127.0.0.1 keepalives=1"}, "keepalives"),
    ({"reader_dsn": "host=127.0.0.1", "algoritm": "v3"}, "algoritm"),
    ({"budget_s": 2}, "reader_dsn"),
])
def test_bad_config_fails_open(tmp_path, settings, named):
    """A bad config: every job accepted unchanged, one line naming the setting."""
    config = write_config(tmp_path, **settings)
    for event, (pbs_event, before) in events().items():
        result = run(event, pbs_event, config)
        assert result.accepted and result.resources == before, event
        assert len(result.warnings) == 1 and named in result.warnings[0], (event, result.warnings)


def test_unparsable_config_fails_open(tmp_path):
    """A config file that is not JSON: accepted, one line saying so."""
    path = tmp_path / "h.json"
    path.write_text("{reader_dsn: nope")
    result = run("queuejob", pbs.queuejob_event("alice", {"walltime": 60}), str(path))
    assert result.accepted and len(result.warnings) == 1 and "not valid JSON" in result.warnings[0]


def test_no_config_fails_open():
    """No hook config imported: accepted, one line saying how to import one."""
    assert_all_fail_open(None, every_event("no hook config"))


def test_unexpected_job_value_fails_open(tmp_path):
    """An odd value from PBS (a text stime) in jobobit: accepted, one line naming it."""
    config = write_config(tmp_path, reader_dsn="host=127.0.0.1", writer_dsn="host=127.0.0.1")
    job = pbs.Job({"walltime": 60}, id="1.svr", euser="alice", stime="yesterday")
    result = run("jobobit", pbs.jobobit_event(job), config)
    assert result.accepted and len(result.warnings) == 1 and "stime" in result.warnings[0]


_DRIVER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    import pbs_standin as pbs
    result = pbs.run_hook({hook!r}, pbs.queuejob_event("alice", {{"walltime": 60}}), {config!r})
    print(json.dumps([result.accepted, result.resources.get("soft_walltime"), result.warnings]))
""")


@pytest.mark.parametrize("package_path, missing", [("/nonexistent/pbs-softwalltime", "predictor"),
                                                   (os.path.dirname(os.path.dirname(HOOK_FILE)), "pg8000")])
def test_package_that_cannot_be_imported_fails_open(tmp_path, package_path, missing):
    """predictor missing, or pg8000 missing behind it, in a fresh interpreter: accepted, one line naming it."""
    config = write_config(tmp_path, reader_dsn="host=127.0.0.1", package_path=package_path)
    code = _DRIVER.format(tests=os.path.dirname(os.path.abspath(__file__)), hook=HOOK_FILE, config=config)
    # -S: no site-packages, so neither the installed predictor nor pg8000; -E: no PYTHONPATH pointing at a
    # checkout; cwd elsewhere hides the checkout.
    output = subprocess.run([sys.executable, "-S", "-E", "-c", code], cwd=str(tmp_path), stdout=subprocess.PIPE,
                            check=True, universal_newlines=True).stdout
    accepted, soft, warnings = json.loads(output)
    assert accepted and soft is None and len(warnings) == 1 and "cannot load the predictor package" in warnings[0]
    assert "No module named '{}'".format(missing) in warnings[0]
