"""predictor.db.guard: every wait of db init, db prune and ingest bounded, and Ctrl-C or SIGTERM heard at once.

Against the real PostgreSQL server: a lock held by another session keeps a
statement waiting, and the proxy of ``pgproxy`` swallows the server's answers;
a bare listener plays a server that accepts connections and never speaks.
"""

import os
import signal
import socket
import subprocess
import sys
import time

import psycopg2
import pytest
from pgproxy import PgProxy

from predictor.db.sessions import connect
from predictor.errors import DeadlineExceeded

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = "04/10/2026 12:00:00;E;{0}.svr;user=alice queue=workq ctime=1775822400 start=1775822400 end=1775823000 " \
       "Exit_status=0 Resource_List.walltime=01:00:00 Resource_List.ncpus=1\n"


@pytest.fixture
def mute():
    """A listener that accepts connections and never says a word; its DSN."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield "host=127.0.0.1 port={} user=postgres dbname=postgres sslmode=disable".format(listener.getsockname()[1])
    listener.close()


@pytest.fixture
def locked(db):
    """completed_jobs locked by another session until the test ends."""
    holder = psycopg2.connect(db.dsn)
    cursor = holder.cursor()
    cursor.execute("LOCK TABLE completed_jobs, ingest_progress IN ACCESS EXCLUSIVE MODE")
    yield db
    holder.rollback()
    holder.close()


def start(*argv):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.Popen([sys.executable, "-m", "predictor"] + list(argv), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def stopped_by(process, signum, after_s=1.5):
    """Send ``signum`` after ``after_s``; ``(status, stderr, seconds it took to stop)``."""
    time.sleep(after_s)
    assert process.poll() is None, process.communicate()
    sent = time.monotonic()
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    return process.returncode, err, time.monotonic() - sent


def test_mute_server_connect_is_bounded(mute):
    """A server that accepts and never answers: --connect-timeout 2 ends db init in seconds, one line, exit 2."""
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "predictor", "db", "init", "--dsn", mute, "--connect-timeout",
                             "2"], capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=REPO))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "timeout expired" in result.stderr and time.monotonic() - started < 10


@pytest.mark.parametrize("argv", [["db", "init"], ["db", "prune", "--older-than", "1"]])
def test_ctrl_c_while_connecting_stops_at_once(mute, argv):
    """Ctrl-C while libpq waits for a mute server: ended by SIGINT (a shell reports 130) within a second, not after
    the connect timeout."""
    status, err, took = stopped_by(start(*argv, "--dsn", mute), signal.SIGINT)
    assert status == -signal.SIGINT and took < 2 and "Traceback" not in err and err.endswith("interrupted\n"), err


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, -signal.SIGINT), (signal.SIGTERM, 143)])
def test_prune_waiting_on_a_lock_stops_at_once(locked, signum, status):
    """db prune blocked behind another session's lock: Ctrl-C or SIGTERM ends it at once."""
    status_seen, err, took = stopped_by(start("db", "prune", "--older-than", "1", "--dsn", locked.dsn), signum)
    assert (status_seen, took < 2) == (status, True) and "Traceback" not in err, err


def test_lock_wait_is_bounded_by_the_statement_timeout(locked):
    """--statement-timeout 1: the lock wait ends with the server's own words, one line, exit 2."""
    result = subprocess.run([sys.executable, "-m", "predictor", "db", "prune", "--older-than", "1", "--dsn",
                             locked.dsn, "--statement-timeout", "1"], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=REPO))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "canceling statement due to statement timeout" in result.stderr


def test_unanswered_statement_ends_at_its_budget(database):
    """A server that stops answering mid-session: the statement ends after its budget and the grace, as
    DeadlineExceeded, instead of waiting for ever."""
    proxy = PgProxy()
    try:
        conn = connect(proxy.dsn(dbname=database.name), 1.0, read_only=True)
        proxy.mode = "silent"
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="no answer within 1 s"):
            conn.cursor().execute("SELECT 1")
        assert time.monotonic() - started < 6
        conn.close()
    finally:
        proxy.close()


@pytest.mark.parametrize("signum, status, word", [(signal.SIGINT, -signal.SIGINT, "interrupted"),
                                                  (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_interrupted_ingest_is_not_a_success(locked, tmp_path, signum, status, word):
    """An ingest stopped by Ctrl-C or SIGTERM ends by SIGINT (a shell reports 130) or exits 143, and says what it
    had loaded (cron must not take half a load for a whole one)."""
    (tmp_path / "20260410").write_text("".join(LINE.format(job) for job in range(1, 50)))
    process = start("ingest", "--dsn", locked.writer_dsn, "--workers", "0", str(tmp_path))
    status_seen, err, took = stopped_by(process, signum)
    lines = err.splitlines()
    assert status_seen == status and took < 3 and "Traceback" not in err, err
    assert any(line.startswith(word + ": ") and "jobs loaded" in line for line in lines), err
