"""Shared fixtures. Database tests use the real PostgreSQL server.

The server is ``$PBS_SOFTWALLTIME_TEST_DSN`` (default: 127.0.0.1:5432, user
postgres). Each test run creates its own database, applies the schema with
``init_schema`` and drops the database at the end. Tests needing the
database fail, never skip, when the server is unreachable.
"""

import os
import uuid
from typing import NamedTuple

import psycopg2
import pytest
from hypothesis import HealthCheck, Phase, settings
from pgadmin import ADMIN_DSN, READER_LOGIN, WRITER_LOGIN, admin_execute, dsn_for, ensure_login  # noqa: F401

from predictor.db.schema import init_schema

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# benchmarks/mutants.py only needs to know that a test fails, not the smallest example: no shrinking.
settings.register_profile("mutants", settings.get_profile("default"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


class TestDatabase(NamedTuple):
    """A throwaway database: its name and DSNs for the owner and both roles."""

    name: str
    dsn: str
    reader_dsn: str
    writer_dsn: str


@pytest.fixture(scope="session")
def database():
    """The run's database with the schema applied; dropped at the end."""
    name = "swt_test_{}_{}".format(os.getpid(), uuid.uuid4().hex[:8])
    try:
        admin_execute("CREATE DATABASE " + name)
    except psycopg2.OperationalError as err:
        pytest.fail("PostgreSQL is needed for this test and is unreachable at {!r}: {}".format(ADMIN_DSN, err))
    try:
        init_schema(dsn_for(name))
        ensure_login(READER_LOGIN, "softwalltime_reader")
        ensure_login(WRITER_LOGIN, "softwalltime_writer")
        yield TestDatabase(name, dsn_for(name), dsn_for(name, READER_LOGIN), dsn_for(name, WRITER_LOGIN))
    finally:
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))


@pytest.fixture
def db(database):
    """The run's database, emptied before the test."""
    empty_tables(database)
    return database


def empty_tables(database):
    conn = psycopg2.connect(database.dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute("TRUNCATE completed_jobs, ingest_progress")
    finally:
        conn.close()
