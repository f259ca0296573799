"""predictor.db.schema: db init."""

import psycopg2
import psycopg2.errors
import pytest

from predictor.db.schema import find_sql_dir, init_schema, migrations
from predictor.errors import DatabaseError


def query(dsn, sql):
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchall()
    finally:
        conn.close()


def test_migrations_are_numbered_in_order():
    """The shipped schema files are found and ordered by number, each number once (a database that has
    applied a version never applies another file of that number)."""
    versions = [version for version, _ in migrations(find_sql_dir())]
    assert versions == list(range(1, len(versions) + 1))


def test_init_is_idempotent(database):
    """A second db init applies nothing and changes nothing."""
    assert init_schema(database.dsn) == []
    versions = query(database.dsn, "SELECT version FROM schema_version ORDER BY 1")
    assert versions == [(version,) for version in range(1, 10)]


def test_roles_exist(database):
    """The reader and writer roles are created."""
    rows = query(database.dsn, "SELECT rolname FROM pg_roles WHERE rolname IN ('softwalltime_reader', "
                               "'softwalltime_writer') ORDER BY 1")
    assert rows == [("softwalltime_reader",), ("softwalltime_writer",)]


@pytest.mark.parametrize("login, table, privilege, expected", [
    ("reader_dsn", "completed_jobs", "SELECT", True),
    ("reader_dsn", "completed_jobs", "INSERT", False),
    ("reader_dsn", "completed_jobs", "UPDATE", False),
    ("reader_dsn", "completed_jobs", "DELETE", False),
    ("reader_dsn", "ingest_progress", "SELECT", False),
    ("writer_dsn", "completed_jobs", "INSERT", False),
    ("writer_dsn", "completed_jobs", "UPDATE", False),
    ("writer_dsn", "completed_jobs", "DELETE", False),
    ("writer_dsn", "ingest_progress", "SELECT", True),
    ("writer_dsn", "ingest_progress", "UPDATE", False),
    ("writer_dsn", "ingest_progress", "DELETE", False),
])
def test_role_privileges(database, login, table, privilege, expected):
    """Each role has exactly the privileges it needs."""
    sql = "SELECT has_table_privilege('{}', '{}')".format(table, privilege)
    assert query(getattr(database, login), sql) == [(expected,)]


@pytest.mark.parametrize("login", ["reader_dsn", "writer_dsn"])
def test_roles_cannot_create_tables(database, login):
    """Neither role may create objects in the schema."""
    assert query(getattr(database, login), "SELECT has_schema_privilege('public', 'CREATE')") == [(False,)]


@pytest.mark.parametrize("login, statement", [
    ("reader_dsn", "CREATE TEMP TABLE t (a int)"),
    ("reader_dsn", "SELECT lo_create(0)"),
    ("reader_dsn", "SELECT lo_from_bytea(0, 'x')"),
    ("writer_dsn", "SELECT lo_create(0)"),
])
def test_roles_cannot_create_temporary_objects(database, login, statement):
    """What PostgreSQL lets every role create (temporary tables, large objects) is refused here."""
    conn = psycopg2.connect(getattr(database, login))
    try:
        with pytest.raises(psycopg2.errors.InsufficientPrivilege), conn.cursor() as cursor:
            cursor.execute(statement)
    finally:
        conn.rollback()
        conn.close()


def test_unreachable_server_is_database_error():
    """db init against a closed port fails with a DatabaseError."""
    with pytest.raises(DatabaseError, match="^database: "):
        init_schema("host=127.0.0.1 port=1 user=postgres connect_timeout=2")
