"""tang's default key through its checkpoints (sql/007_tang_checkpoints.sql,
sql/008_tang_percentile_generic_plan.sql) against the straightforward computation: every job of the key in the
window, nearest rank."""

import os
import shutil
import threading
import time
import uuid
from fractions import Fraction

import psycopg2
import pytest
from conftest import empty_tables
from hypothesis import given, settings
from hypothesis import strategies as st
from pgadmin import admin_execute, dsn_for, run_sql
from strategies import PROJECTS

from predictor.algorithms import EVERY_ROW, make_algorithm, nearest_rank
from predictor.db.prune import prune
from predictor.db.schema import find_sql_dir, init_schema
from predictor.history import MemoryHistory, predict
from predictor.jobs import CompletedJob, JobRequest
from predictor.queries import TANG_PERCENTILE, percentile_fraction
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory

USERS = ("alice", "bob")
WALLTIMES = (1, 7, 1000)
"""Small walltimes put many used times in one bucket (used x 256 // walltime) and at the walltime itself."""
PERCENTILES = (1, 50, 85, 100)
KEY = "user+project+walltime"


@pytest.fixture
def spacing(database):
    """Set how many jobs of a key lie between two checkpoints (the schema's 64 is put back after the test)."""
    def set_spacing(rows):
        run_sql(database.dsn, "UPDATE tang_settings SET checkpoint_rows = %s", (rows,))
    yield set_spacing
    set_spacing(64)


def expected(jobs, user, project, walltime, since, percentile):
    """The straightforward computation: every job of the key that ended at or after ``since``, nearest rank."""
    used = sorted(min(job.runtime_s, walltime) for job in jobs if job.user == user and job.project == project
                  and job.walltime_s == walltime and (since is None or job.end_time >= since))
    if not used:
        return 0, None
    return len(used), Fraction(used[nearest_rank(percentile, len(used)) - 1], walltime)


def assert_every_window_agrees(dsn, jobs):
    """For every key, each window start (every end time of the key's jobs, the second after it, and none), the
    hooks' store gives the straightforward answer (the percentiles taken in turn)."""
    with HookHistory(connect_params(dsn)) as reader:
        for user in USERS:
            for project in PROJECTS:
                for walltime in WALLTIMES:
                    request = JobRequest(user, walltime, project=project)
                    ends = {job.end_time for job in jobs if (job.user, job.project, job.walltime_s) == (
                        user, project, walltime)}
                    starts = [None, -1] + sorted(ends | {end + 1 for end in ends})
                    for index, since in enumerate(starts):
                        percentile = PERCENTILES[index % len(PERCENTILES)]
                        assert reader.tang_percentile(KEY, request, since, percentile) == expected(
                            jobs, user, project, walltime, since, percentile), (user, project, walltime, since)


def upsert(dsn, jobs):
    """One INSERT ... ON CONFLICT DO UPDATE statement for ``jobs`` (new ones inserted, known ones updated)."""
    columns = [list(column) for column in zip(*[(job.job_id, job.user, job.project, job.walltime_s, job.runtime_s,
                                                  job.end_time) for job in jobs])]
    run_sql(dsn, "INSERT INTO completed_jobs (job_id, user_name, project, walltime_s, runtime_s, end_time)"
                   " SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::integer[], %s::integer[],"
                   " %s::bigint[]) ON CONFLICT (job_id) DO UPDATE SET user_name = EXCLUDED.user_name,"
                   " project = EXCLUDED.project, walltime_s = EXCLUDED.walltime_s, runtime_s = EXCLUDED.runtime_s,"
                   " end_time = EXCLUDED.end_time", columns)


@st.composite
def keyed_jobs(draw, max_jobs=20):
    """Jobs of few keys, ids from a small pool (so that a job is written again, changed), end times 0..50."""
    jobs = {}
    for _ in range(draw(st.integers(1, max_jobs))):
        job_id = "{}.svr".format(draw(st.integers(0, 40)))
        jobs[job_id] = CompletedJob(
            job_id, draw(st.sampled_from(USERS)), draw(st.integers(0, 1100)), draw(st.integers(0, 50)),
            walltime_s=draw(st.sampled_from(WALLTIMES + (None, 0))), project=draw(st.sampled_from(PROJECTS)))
    return list(jobs.values())


operations = st.lists(st.one_of(
    st.tuples(st.just("upsert"), keyed_jobs()),
    st.tuples(st.just("record"), keyed_jobs(max_jobs=3)),
    st.tuples(st.just("delete"), st.integers(0, 51), st.integers(0, 40)),
), min_size=1, max_size=6)
"""upsert: one multi-row statement as the owner; record: the writer role's function, one job per statement
(the jobobit hook's way); delete: the jobs that ended before a time and whose id number is below a bound."""


@settings(max_examples=40)
@given(st.integers(1, 4), operations)
def test_checkpoints_give_the_straightforward_percentile(database, spacing, rows, steps):
    """After any inserts, updates (of a job's key, end time or runtime) and deletes, with checkpoints every 1 to
    4 jobs, every window of every key gives the percentile of all its jobs, the window's boundary included."""
    empty_tables(database)
    spacing(rows)
    table = {}
    with HookHistory(connect_params(database.writer_dsn), read_only=False) as writer:
        for step in steps:
            if step[0] == "upsert":
                upsert(database.dsn, step[1])
            elif step[0] == "record":
                for job in step[1]:
                    writer.add(job)
            else:
                run_sql(database.dsn, "DELETE FROM completed_jobs WHERE end_time < %s"
                          " AND split_part(job_id, '.', 1)::integer < %s", step[1:])
                table = {job_id: job for job_id, job in table.items()
                         if not (job.end_time < step[1] and int(job_id.split(".")[0]) < step[2])}
            if step[0] != "delete":
                table.update((job.job_id, job) for job in step[1])
    assert_every_window_agrees(database.reader_dsn, list(table.values()))


def heavy_jobs(count, first_end=0, step=3, user="alice", project="p1", walltime=1000):
    """``count`` jobs of one key, ``step`` seconds apart, runtimes spread over the whole ratio range."""
    return [CompletedJob("{}.{}".format(index, user), user, index * 7919 % 1201, first_end + index * step,
                         walltime_s=walltime, project=project) for index in range(count)]


def test_a_key_with_many_jobs_has_checkpoints(db):
    """200 jobs of one key with the schema's spacing (64): checkpoints, and the straightforward answer for
    windows that start anywhere among them."""
    jobs = heavy_jobs(200)
    upsert(db.dsn, jobs[:150])
    for job in jobs[150:]:
        upsert(db.dsn, [job])
    assert run_sql(db.dsn, "SELECT count(*) FROM tang_checkpoints")[0][0] == 3
    with HookHistory(connect_params(db.reader_dsn)) as reader:
        for since in range(-1, 605, 7):
            for percentile in PERCENTILES:
                assert reader.tang_percentile(KEY, JobRequest("alice", 1000, project="p1"), since, percentile) == \
                    expected(jobs, "alice", "p1", 1000, since, percentile)


def test_prune_keeps_the_checkpoints_right(db):
    """db prune deletes old jobs of a key with checkpoints; the percentile is then that of the jobs left."""
    jobs = heavy_jobs(300, step=86400)
    upsert(db.dsn, jobs)
    assert prune(db.dsn, 200 * 86400, 15) == 200
    left = jobs[200:]
    with HookHistory(connect_params(db.reader_dsn)) as reader:
        for since in (None, 0, 199 * 86400, 250 * 86400, 250 * 86400 + 1, 299 * 86400):
            assert reader.tang_percentile(KEY, JobRequest("alice", 1000, project="p1"), since, 85) == \
                expected(left, "alice", "p1", 1000, since, 85)


def test_truncate_empties_the_checkpoints(db):
    """TRUNCATE of completed_jobs takes its checkpoints with it."""
    upsert(db.dsn, heavy_jobs(100))
    run_sql(db.dsn, "TRUNCATE completed_jobs")
    assert run_sql(db.dsn, "SELECT count(*) FROM tang_checkpoints") == [(0,)]


def test_an_update_of_other_columns_leaves_the_checkpoints(db):
    """Writing a job again with only its soft walltime changed rebuilds nothing."""
    jobs = heavy_jobs(100)
    upsert(db.dsn, jobs)
    before = run_sql(db.dsn, "SELECT xmin::text, end_time FROM tang_checkpoints ORDER BY end_time")
    run_sql(db.dsn, "UPDATE completed_jobs SET soft_walltime_s = 5")
    assert run_sql(db.dsn, "SELECT xmin::text, end_time FROM tang_checkpoints ORDER BY end_time") == before


def test_two_writers_of_one_key_take_turns(db):
    """A writer whose jobs end before the checkpoint another writer has not committed yet waits for it, and the
    checkpoints then count both writers' jobs."""
    first = heavy_jobs(70, first_end=1000)
    second = heavy_jobs(5, first_end=1001, step=20, user="alice")
    second = [job._replace(job_id="late" + job.job_id) for job in second]
    conn = psycopg2.connect(db.dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute("INSERT INTO completed_jobs (job_id, user_name, project, walltime_s, runtime_s, end_time)"
                           " SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::integer[],"
                           " %s::integer[], %s::bigint[])",
                           [list(column) for column in zip(*[(job.job_id, job.user, job.project, job.walltime_s,
                                                               job.runtime_s, job.end_time) for job in first])])
            writer = threading.Thread(target=upsert, args=(db.dsn, second))
            writer.start()
            time.sleep(0.5)
            assert writer.is_alive()  # waiting for the first writer's key
        conn.commit()
        writer.join(30)
    finally:
        conn.close()
    assert run_sql(db.dsn, "SELECT count(*) FROM tang_checkpoints")[0][0] >= 1
    with HookHistory(connect_params(db.reader_dsn)) as reader:
        for since in (None, 1000, 1050, 1100, 1150):
            assert reader.tang_percentile(KEY, JobRequest("alice", 1000, project="p1"), since, 85) == \
                expected(first + second, "alice", "p1", 1000, since, 85)


def test_the_percentile_is_planned_once_per_connection(database):
    """tang_percentile keeps a generic plan: PostgreSQL would otherwise plan its statements anew for each of a
    connection's first five calls (about 20 ms each at 10 M rows), and a hook's connection is new after every
    restart of the server's interpreter."""
    settings = run_sql(database.dsn, "SELECT proconfig FROM pg_proc WHERE proname = 'tang_percentile'")
    assert settings == [(["search_path=pg_catalog, pg_temp", "plan_cache_mode=force_generic_plan"],)]


def test_migration_from_version_6_keeps_the_predictions(tmp_path):
    """A database at schema version 6 with jobs, migrated to 7, 8 and 9, predicts what version 6's statement did."""
    for name in sorted(os.listdir(find_sql_dir())):
        if name[:3].isdigit() and int(name[:3]) <= 6:
            shutil.copy(os.path.join(find_sql_dir(), name), str(tmp_path))
    name = "swt_test_migrate_{}".format(uuid.uuid4().hex[:8])
    admin_execute("CREATE DATABASE " + name)
    try:
        dsn = dsn_for(name)
        assert init_schema(dsn, str(tmp_path)) == [1, 2, 3, 4, 5, 6]
        jobs = heavy_jobs(300) + heavy_jobs(90, user="bob", project=None, walltime=7) + heavy_jobs(10, user="carol")
        upsert(dsn, jobs)
        keys = [("alice", "p1", 1000), ("bob", None, 7), ("carol", "p1", 1000), ("alice", None, 1000)]
        starts = [None, 0, 300, 450, 451, 899]
        before = [straightforward(dsn, key, since) for key in keys for since in starts]
        assert init_schema(dsn) == [7, 8, 9]
        assert run_sql(dsn, "SELECT count(*) FROM tang_checkpoints")[0][0] == 5
        with HookHistory(connect_params(dsn)) as store:
            after = [store.tang_percentile(KEY, JobRequest(user, walltime, project=project), since, 85)
                     for user, project, walltime in keys for since in starts]
        assert after == before
        memory = MemoryHistory(capacity=EVERY_ROW)
        for job in jobs:
            memory.add(job)
        with HookHistory(connect_params(dsn)) as store:
            for user, project, walltime in keys:
                request = JobRequest(user, walltime, project=project, submit_time=900 + 86400)
                assert predict(store, make_algorithm("tang", window_days=1), request) == predict(
                    memory, make_algorithm("tang", window_days=1), request)
    finally:
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))


def straightforward(dsn, key, since):
    """Version 6's statement for tang's default key: ``(rows, R)`` (no window: from -2**62, as psycopg2 cannot
    send -2**63 to a bigint parameter)."""
    user, project, walltime = key
    form = "user+project+walltime" if project is not None else "user+no project+walltime"
    values = (user, project, walltime) if project is not None else (user, walltime)
    rows, used = run_sql(dsn, TANG_PERCENTILE[form],
                           (percentile_fraction(85),) + values + (-2 ** 62 if since is None else since,))[0]
    return rows, None if used is None else Fraction(used, walltime)
