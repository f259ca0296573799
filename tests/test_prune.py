"""predictor.db.prune and ``db prune``: only rows both old and beyond each user's newest jobs go."""

import subprocess
import sys

import psycopg2
import pytest
from hookenv import write_config

from predictor.db.prune import prune
from predictor.errors import DatabaseError

DAY = 86400
NOW = 100 * DAY


def add(db, user, *ends):
    conn = psycopg2.connect(db.dsn)
    try:
        with conn, conn.cursor() as cursor:
            for end in ends:
                cursor.execute("INSERT INTO completed_jobs (job_id, user_name, runtime_s, end_time) "
                               "VALUES (%s, %s, 1, %s)", ("{}-{}".format(user, end), user, end))
    finally:
        conn.close()


def remaining(db):
    conn = psycopg2.connect(db.dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute("SELECT job_id FROM completed_jobs ORDER BY job_id")
            return [row[0] for row in cursor.fetchall()]
    finally:
        conn.close()


def test_old_and_deep_rows_go_the_rest_stays(db):
    """Keep 2 per user, prune before day 50: only rows that are both old and beyond the newest 2 go."""
    add(db, "alice", 10 * DAY, 20 * DAY, 30 * DAY, 90 * DAY)   # 10 and 20 are old and deep
    add(db, "bob", 10 * DAY, 20 * DAY)                          # old but among bob's newest 2
    add(db, "carol", 60 * DAY, 70 * DAY, 80 * DAY, 90 * DAY)   # deep but recent
    assert prune(db.dsn, 50 * DAY, keep_per_user=2) == 2
    assert "alice-{}".format(10 * DAY) not in remaining(db) and "alice-{}".format(20 * DAY) not in remaining(db)
    assert len(remaining(db)) == 8


def test_dry_run_counts_and_keeps(db):
    """--dry-run counts what would go and deletes nothing."""
    add(db, "alice", 1, 2, 3, 4)
    assert prune(db.dsn, 50 * DAY, keep_per_user=1, dry_run=True) == 3
    assert len(remaining(db)) == 4


def test_writer_role_may_not_prune(db):
    """Deleting needs the owner: the writer role (which never deletes) is refused."""
    add(db, "alice", 1, 2, 3)
    with pytest.raises(DatabaseError, match="permission denied"):
        prune(db.writer_dsn, 50 * DAY, keep_per_user=1)
    assert len(remaining(db)) == 3


def predictor(*args):
    return subprocess.run([sys.executable, "-m", "predictor"] + list(args), capture_output=True, text=True,
                          timeout=60)


def test_cli_keeps_at_least_the_configs_window(db, tmp_path):
    """With --config, a larger window than --keep-per-user is kept (the hooks read that many)."""
    add(db, "alice", *range(1, 21))
    config = write_config(tmp_path, reader_dsn="host=10.0.0.5 user=x", algorithm="v3", window=18)
    result = predictor("db", "prune", "--dsn", db.dsn, "--older-than", "1", "--keep-per-user", "5",
                       "--config", config)
    assert result.returncode == 0 and "deleted 2 completed job(s)" in result.stdout
    assert len(remaining(db)) == 18


def test_cli_keeps_tangs_time_window(db, tmp_path):
    """tang reads every job of its time window: --older-than shorter than it is refused, and the rows are not
    kept by count (there is no row limit to keep)."""
    config = write_config(tmp_path, reader_dsn="host=10.0.0.5 user=x", algorithm="tang", window_days=30)
    refused = predictor("db", "prune", "--dsn", db.dsn, "--older-than", "29", "--config", config)
    assert refused.returncode == 2 and "time window is 30 days" in refused.stderr and "Traceback" not in refused.stderr
    add(db, "alice", *range(1, 21))
    result = predictor("db", "prune", "--dsn", db.dsn, "--older-than", "30", "--keep-per-user", "5",
                       "--config", config)
    assert result.returncode == 0 and len(remaining(db)) == 5


@pytest.mark.parametrize("args", [["--older-than", "0"], ["--older-than", "x"], ["--older-than", "1",
                                                                                  "--keep-per-user", "0"]])
def test_cli_refuses_bad_bounds(args):
    """A zero or non-numeric age, or keeping no job per user, is refused before any connection."""
    result = predictor("db", "prune", "--dsn", "host=127.0.0.1 port=1", *args)
    assert result.returncode == 2 and "argument --" in result.stderr and "Traceback" not in result.stderr
