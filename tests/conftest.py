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
import psycopg2.extensions
import pytest
from hypothesis import HealthCheck, settings

from predictor.schema import init_schema

ADMIN_DSN = os.environ.get("PBS_SOFTWALLTIME_TEST_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=postgres")
READER_LOGIN = "softwalltime_test_reader"
WRITER_LOGIN = "softwalltime_test_writer"

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


class TestDatabase(NamedTuple):
    """A throwaway database: its name and DSNs for the owner and both roles."""

    name: str
    dsn: str
    reader_dsn: str
    writer_dsn: str


def dsn_for(dbname, user=None):
    params = psycopg2.extensions.parse_dsn(ADMIN_DSN)
    params["dbname"] = dbname
    if user:
        params["user"] = user
    return psycopg2.extensions.make_dsn(**params)


def admin_execute(*statements):
    conn = psycopg2.connect(ADMIN_DSN, connect_timeout=5)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
    finally:
        conn.close()


def _ensure_login(name, group):
    admin_execute(
        "DO $$ BEGIN CREATE ROLE {} LOGIN IN ROLE {}; "
        "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$".format(name, group),
        "GRANT {} TO {}".format(group, name),
    )


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
        _ensure_login(READER_LOGIN, "softwalltime_reader")
        _ensure_login(WRITER_LOGIN, "softwalltime_writer")
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
