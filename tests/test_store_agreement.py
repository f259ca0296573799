"""The hooks' PostgreSQL store (predictor.server.store) against the real server, and against MemoryHistory."""

from fractions import Fraction

import psycopg2
import pytest
from conftest import empty_tables
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import PROJECTS, completed_jobs, histories, hostile_names

from predictor.algorithms import ALGORITHMS, EVERY_ROW, make_algorithm, nearest_rank
from predictor.errors import DatabaseError
from predictor.history import MemoryHistory, predict
from predictor.jobs import MAX_INT32, CompletedJob, JobRequest
from predictor.queries import PROJECT_HISTORY_SINCE, RECENT_HISTORY_SINCE, TANG_PERCENTILE
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory


def hook_history(dsn, read_only=True, timeout_s=2.0):
    """The hooks' store for ``dsn``."""
    return HookHistory(connect_params(dsn), timeout_s=timeout_s, read_only=read_only)


def job(job_id, user="alice", end=0, runtime=10, walltime=100):
    return CompletedJob(job_id=job_id, user=user, runtime_s=runtime, end_time=end, walltime_s=walltime)


@pytest.fixture
def writer(db):
    with hook_history(db.writer_dsn, read_only=False) as store:
        yield store


@pytest.fixture
def reader(db):
    with hook_history(db.reader_dsn) as store:
        yield store


def test_add_then_recent(writer, reader):
    """A job written by the writer role is read back by the reader role."""
    writer.add(job("1.svr", end=5, runtime=42))
    assert [(row.job_id, row.runtime_s) for row in reader.recent("alice", 15)] == [("1.svr", 42)]


def test_upsert_stores_job_once(writer, reader):
    """Adding the same job id twice keeps one row with the latest values."""
    writer.add(job("1.svr", runtime=10))
    writer.add(job("1.svr", runtime=20))
    assert [row.runtime_s for row in reader.recent("alice", 15)] == [20]


def test_connection_reused_across_calls(reader):
    """Two calls share one server session."""
    pids = [reader.execute("SELECT pg_backend_pid()") for _ in range(2)]
    assert pids[0] == pids[1]


def test_reader_cannot_write(db, reader):
    """The read-only role is refused an INSERT."""
    with pytest.raises(DatabaseError, match="permission denied|read-only"):
        hook_history(db.reader_dsn, read_only=False).add(job("x"))


def _plan_with_rows(db, writer, query, parameters=None):
    """PostgreSQL's plan for ``query`` over 50 rows of 5 users, with sequential scans ruled out."""
    for index in range(50):
        writer.add(job(str(index), user="u{}".format(index % 5), end=index))
    conn = psycopg2.connect(db.dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute("ANALYZE completed_jobs")
            cursor.execute("SET enable_seqscan = off")
            cursor.execute("EXPLAIN " + query, parameters)
            return "\n".join(row[0] for row in cursor.fetchall())
    finally:
        conn.close()


def test_query_plan_is_index_only(db, writer):
    """The prediction query is served by completed_jobs_user_recent."""
    plan = _plan_with_rows(db, writer, "SELECT end_time, job_id, runtime_s, walltime_s FROM completed_jobs"
                                       " WHERE user_name = 'u1' ORDER BY end_time DESC, job_id DESC LIMIT 15")
    assert "completed_jobs_user_recent" in plan and "Sort" not in plan


def test_time_bounded_query_plan_is_index_only(db, writer):
    """tang's query, bounded by end time, is served by the same index, without a sort."""
    plan = _plan_with_rows(db, writer, RECENT_HISTORY_SINCE, ("u1", 20, 1000))
    assert "Index Only Scan using completed_jobs_user_recent" in plan and "Sort" not in plan
    assert "end_time >= " in plan and "Filter" not in plan


def test_project_query_plan_is_index_only(db, writer):
    """tang's project key reads a project's rows through completed_jobs_project_recent, without a sort."""
    plan = _plan_with_rows(db, writer, PROJECT_HISTORY_SINCE, ("p1", 20, 1000))
    assert "Index Only Scan using completed_jobs_project_recent" in plan and "Sort" not in plan


def test_tang_query_plan_is_one_index_range(db, writer):
    """The straightforward statement for tang's default key reads its window from an index of the key, index
    only."""
    plan = _plan_with_rows(db, writer, TANG_PERCENTILE["user+project+walltime"], (0.85, "u1", "p1", 100, 20))
    assert "Index Only Scan using completed_jobs_tang" in plan and "Seq Scan" not in plan


# R = used/walltime with the largest walltimes: neighbours that differ by about 2**-62, R = 1, R over 1 (killed).
CLOSE_RATIOS = [(MAX_INT32 - 2, MAX_INT32 - 1), (MAX_INT32 - 1, MAX_INT32), (MAX_INT32 - 3, MAX_INT32 - 2),
                (1, MAX_INT32), (1, MAX_INT32 - 1), (0, 7), (7, 7), (9, 7), (2, MAX_INT32), (3, 6), (1, 2)]


def test_tang_percentile_of_close_ratios_is_exact(writer, reader):
    """PostgreSQL's percentile is the exact R (a Fraction) of every rank, for neighbours 2**-62 apart."""
    for index, (used, walltime) in enumerate(CLOSE_RATIOS):
        writer.add(job("{}.svr".format(index), end=index, runtime=used, walltime=walltime))
    ratios = sorted(Fraction(min(used, walltime), walltime) for used, walltime in CLOSE_RATIOS)
    request = JobRequest("alice", 100)
    for percentile in range(1, 101):
        expected = ratios[nearest_rank(percentile, len(ratios)) - 1]
        assert reader.tang_percentile("user", request, None, percentile) == (len(ratios), expected)


def test_tang_percentile_rank_is_integer_arithmetic(writer, reader):
    """The nearest rank is ceil(p x n / 100) where p/100 x n in floating point is not (7 % of 100 rows: rank 7)."""
    for index in range(100):
        writer.add(job("{}.svr".format(index), end=index, runtime=index, walltime=1000))
    assert reader.tang_percentile("user", JobRequest("alice", 1000), None, 7) == (100, Fraction(6, 1000))
    assert reader.tang_percentile("user", JobRequest("alice", 1000), 50, 7) == (50, Fraction(53, 1000))


def test_tang_reads_more_than_a_thousand_rows(writer, reader):
    """The hooks' tang reads every job of the month: 1,500 similar jobs, the newest 1,000 at R 0.1 and the
    500 before at R 1; the 85th percentile is 1 (the newest 1,000 alone would give 0.1)."""
    jobs = [CompletedJob("{}.svr".format(index), "alice", 100 if index >= 500 else 1000, 10 ** 6 + index,
                         walltime_s=1000, project="p1") for index in range(1500)]
    for completed in jobs:
        writer.add(completed)
    request = JobRequest("alice", 1000, project="p1", submit_time=10 ** 6 + 2000)
    assert predict(reader, make_algorithm("tang"), request) == 1000


def test_time_bounded_recent_stops_at_the_bound(writer, reader):
    """since=T returns the newest rows that ended at T or later, newest first."""
    for index, end in enumerate([5, 10, 10, 20]):
        writer.add(job("{}.svr".format(index), end=end))
    assert [row.job_id for row in reader.recent("alice", 1000, since=10)] == ["3.svr", "2.svr", "1.svr"]
    assert [row.job_id for row in reader.recent("alice", 2, since=10)] == ["3.svr", "2.svr"]


TANG_VARIANTS = [make_algorithm("tang", percentile=percentile, window_days=1, min_history=history, key=key)
                 for percentile, history, key in [(85, 10, "user"), (50, 1, "user"), (100, 2, "user+walltime"),
                                                  (50, 1, "user+project+walltime"), (85, 2, "user+project"),
                                                  (70, 1, "project")]]
"""tang over one day, so submissions at 86400 + 0..55 put the bound among the generated end times (0..50)."""


@settings(max_examples=60)
@given(histories(max_jobs=40), st.lists(st.integers(1, 10 ** 6), min_size=1, max_size=4))
def test_both_stores_predict_identically(database, generated, walltimes):
    """Random histories give the same rows and predictions from PostgreSQL and memory."""
    users, jobs = generated
    empty_tables(database)
    memory, by_project = MemoryHistory(capacity=EVERY_ROW), MemoryHistory(capacity=EVERY_ROW, owner="project")
    with hook_history(database.writer_dsn, read_only=False) as writer:
        for completed in jobs:
            writer.add(completed)
            memory.add(completed)
            by_project.add(completed)
    with hook_history(database.reader_dsn) as reader:
        for user in users:
            assert reader.recent(user, 15) == memory.recent(user, 15)
            for name in sorted(ALGORITHMS):
                algorithm = make_algorithm(name)
                for walltime in walltimes:
                    request = JobRequest(user, walltime)
                    assert predict(reader, algorithm, request) == predict(memory, algorithm, request)
            for since in (0, 25, 51):
                assert reader.recent(user, 1000, since=since) == memory.recent(user, 1000, since=since)
            for algorithm in TANG_VARIANTS:
                for walltime, submitted, project in zip(walltimes, (86400, 86425, 86440, 86455), PROJECTS * 2):
                    request = JobRequest(user, walltime, project=project, submit_time=submitted)
                    store = by_project if algorithm.by_project else memory
                    assert predict(reader, algorithm, request) == predict(store, algorithm, request)
        for project in PROJECTS[1:]:
            assert reader.project_recent(project, EVERY_ROW, since=25) == by_project.project_recent(
                project, EVERY_ROW, since=25)


@settings(max_examples=30)
@given(completed_jobs(users=hostile_names, job_id="7.svr"))
def test_hostile_values_round_trip(database, completed):
    """Quotes, semicolons and non-ASCII are stored and matched verbatim."""
    empty_tables(database)
    with hook_history(database.writer_dsn, read_only=False) as writer:
        writer.add(completed)
    with hook_history(database.reader_dsn) as reader:
        assert reader.recent(completed.user, 1) == [completed.history_row()]
        assert reader.recent(completed.user + "x", 1) == []
