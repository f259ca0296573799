"""Database faults shared by the hook fault tests: a throwaway database, slow reads, and what a hook decided."""

import contextlib
import os
import uuid

import psycopg2
import pytest
from pgadmin import READER_LOGIN, admin_execute, dsn_for

from predictor.db.schema import init_schema

OUTCOMES = {
    "timed out": ("within the time budget", "no time left in the budget"),
    "skipped": ("database skipped for",),
    "unreachable": ("cannot reach the server",),
}
"""What a hook's warning says the database did, by the phrases of predictor.server (DeadlineExceeded,
the pause after a timeout, a refused or dropped connection)."""


def outcome(result):
    """The ``OUTCOMES`` name of a hook run's one visible warning, else None (no warning, or another reason)."""
    if len(result.warnings) != 1:
        return None
    named = [name for name, phrases in OUTCOMES.items() if any(phrase in result.warnings[0] for phrase in phrases)]
    return named[0] if len(named) == 1 else None


@contextlib.contextmanager
def throwaway_database(prefix, seed):
    """A database of its own on the shared server, with the schema and ``seed(dsn)`` applied."""
    name = "{}_{}_{}".format(prefix, os.getpid(), uuid.uuid4().hex[:8])
    admin_execute("CREATE DATABASE " + name)
    try:
        init_schema(dsn_for(name))
        seed(dsn_for(name))
        yield name
    finally:
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))


@pytest.fixture
def slow_reads(own_db):
    """Row-level security makes every row the reader login reads cost a 5 s pg_sleep.

    ``own_db`` is the requesting test module's throwaway database.
    """
    conn = psycopg2.connect(dsn_for(own_db))
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute("ALTER TABLE completed_jobs ENABLE ROW LEVEL SECURITY")
        cursor.execute("CREATE POLICY slow_reads ON completed_jobs FOR SELECT TO {} "
                       "USING ((SELECT true FROM pg_sleep(5)))".format(READER_LOGIN))
    yield
    with conn.cursor() as cursor:
        cursor.execute("DROP POLICY slow_reads ON completed_jobs")
        cursor.execute("ALTER TABLE completed_jobs DISABLE ROW LEVEL SECURITY")
    conn.close()
