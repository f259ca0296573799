"""predictor.server.store: the hooks' history on the real PostgreSQL, and its one reconnect.

The store reaches the shared server through a ``PgProxy``, which counts the
connections it accepted: that is how a test sees whether the store reopened a
connection, and how often.
"""

import time

import pytest
from pgadmin import terminate_backend
from pgproxy import PgProxy

from predictor.errors import ConfigError, DatabaseError, DeadlineExceeded
from predictor.jobs import CompletedJob, HistoryRow
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory

LONG_S = 30.0
MARGIN_S = 5.0


@pytest.fixture
def proxy():
    """A PgProxy in front of the shared server, closed after the test."""
    proxy = PgProxy()
    yield proxy
    proxy.close()


@pytest.fixture
def store(db, proxy):
    """A writable HookHistory on the emptied test database, through the proxy."""
    with HookHistory(connect_params(proxy.dsn(dbname=db.name), environ={}), timeout_s=LONG_S,
                     read_only=False) as history:
        yield history


def job(job_id, end_time, user="alice", runtime_s=600):
    return CompletedJob(job_id, user, runtime_s=runtime_s, end_time=end_time, walltime_s=3600)


def backend_pid(store):
    return store.execute("SELECT pg_backend_pid()")[0][0]


def test_recent_gives_the_users_newest_jobs_first(store):
    """recent: the user's jobs as HistoryRows, newest first, at most ``limit``."""
    for index, end_time in enumerate([100, 300, 200]):
        store.add(job("{}.svr".format(index), end_time))
    store.add(job("9.svr", 400, user="bob"))
    assert store.recent("alice", 2) == [HistoryRow(300, "1.svr", 600, 3600), HistoryRow(200, "2.svr", 600, 3600)]


def test_add_twice_keeps_one_row(store):
    """add is an upsert: the same job id again replaces the row."""
    store.add(job("1.svr", 100, runtime_s=60))
    store.add(job("1.svr", 100, runtime_s=90))
    assert store.recent("alice", 5) == [HistoryRow(100, "1.svr", 90, 3600)]


def test_reader_cannot_add(db):
    """A read-only store's add is refused by the server: DatabaseError."""
    with HookHistory(connect_params(db.reader_dsn, environ={}), read_only=True) as reader:
        with pytest.raises(DatabaseError):
            reader.add(job("1.svr", 100))


def test_timeout_must_be_positive(db):
    """A time budget of zero or less is a config error."""
    with pytest.raises(ConfigError, match="timeout_s"):
        HookHistory(connect_params(db.dsn, environ={}), timeout_s=0)


def test_dropped_connection_is_reopened_within_the_same_call(store, proxy, db):
    """The server dropped the cached connection: the next call reopens it once and succeeds."""
    store.add(job("1.svr", 100))
    first = backend_pid(store)
    terminate_backend(db.dsn, first)
    deadline = time.monotonic() + LONG_S
    assert store.recent("alice", 5, deadline) == [HistoryRow(100, "1.svr", 600, 3600)]
    assert time.monotonic() < deadline and proxy.accepted == 2 and backend_pid(store) != first



def test_a_failed_reopen_is_not_tried_again(store, proxy):
    """Connection dropped and the server now refuses: one reopen, then DatabaseError; the next call tries once."""
    store.recent("alice", 5)
    proxy.mode = "refuse"
    proxy.cut()
    with pytest.raises(DatabaseError) as caught:
        store.recent("alice", 5)
    assert not isinstance(caught.value, DeadlineExceeded) and proxy.accepted == 2
    with pytest.raises(DatabaseError):
        store.recent("alice", 5)
    assert proxy.accepted == 3


def test_a_server_error_is_not_retried(store, proxy):
    """A failed statement on a live connection is raised as is; the connection is kept."""
    first = backend_pid(store)
    with pytest.raises(DatabaseError, match="22012"):
        store.execute("SELECT 1/0")
    assert backend_pid(store) == first and proxy.accepted == 1


def test_a_timeout_is_not_retried_and_drops_the_connection(db, proxy):
    """DeadlineExceeded is raised at the deadline without a reopen; the next call opens a fresh connection."""
    with HookHistory(connect_params(proxy.dsn(dbname=db.name), environ={}), timeout_s=1.0) as store:
        store.recent("alice", 5)
        proxy.mode = "drip"
        deadline = time.monotonic() + 1.0
        with pytest.raises(DeadlineExceeded):
            store.recent("alice", 5, deadline)
        assert deadline <= time.monotonic() < deadline + MARGIN_S and proxy.accepted == 1
        proxy.mode = "forward"
        assert store.recent("alice", 5) == [] and proxy.accepted == 2


def test_close_then_use_reopens(store, proxy):
    """After close(), the next call opens a new connection."""
    store.recent("alice", 5)
    store.close()
    store.recent("alice", 5)
    assert proxy.accepted == 2
