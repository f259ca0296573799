"""predictor.db.sessions: the admin commands' psycopg2 session settings and error lines."""

import traceback

import psycopg2
import pytest

from predictor.db.sessions import describe_error, row_refused, session_dsn
from predictor.errors import ConfigError


def test_bad_dsn_names_dsn_without_echoing_it():
    """A malformed DSN is a ConfigError that does not repeat the DSN (it may hold a password)."""
    with pytest.raises(ConfigError) as info:
        session_dsn("host=x password=hunter2 junk", 1.0, True)
    assert "hunter2" not in str(info.value)


def test_bad_uri_error_and_its_causes_hold_no_password():
    """libpq quotes a malformed URI whole: the error keeps no cause that a traceback would print."""
    with pytest.raises(ConfigError) as info:
        session_dsn("postgresql://alice:hunter2@[10.0.0.5/softwalltime", 1.0, True)
    printed = "".join(traceback.format_exception(info.type, info.value, None))  # this frame quotes the literal
    assert "hunter2" not in printed


def test_session_dsn_keeps_callers_options():
    """The caller's own options survive next to ours."""
    assert "-c search_path=x" in psycopg2.extensions.parse_dsn(
        session_dsn("host=h options='-c search_path=x'", 1.0, True))["options"]


def test_session_dsn_sets_timeouts_and_read_only():
    """The budget becomes statement_timeout and lock_timeout; a reader session is read-only."""
    options = psycopg2.extensions.parse_dsn(session_dsn("host=h", 1.5, True))["options"]
    assert options == "-c statement_timeout=1500 -c lock_timeout=1500 -c default_transaction_read_only=on"


def test_describe_error_is_the_first_line():
    """A multi-line libpq error becomes its first line."""
    assert describe_error(psycopg2.OperationalError("could not connect\nDETAIL: more")) == "database: could not connect"


def server_error(dsn, statement):
    """``(error, connection)``: what the server answered ``statement`` with, on a connection left open."""
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute(statement)
    except psycopg2.Error as err:
        return err, conn
    raise AssertionError("{} was not refused".format(statement))


@pytest.mark.parametrize("statement, of_the_row", [
    ("SELECT 2147483648::integer", True),  # 22003: a value out of range
    ("SELECT record_completed_jobs(ARRAY[ROW('x', NULL, NULL, NULL, NULL, NULL, NULL, 1, NULL, NULL, NULL, 1, "
     "NULL)::completed_jobs])", True),  # 23502: a NOT NULL column without a value
    ("SELECT 1/0", True),  # 22012: division by zero
    ("SET LOCAL statement_timeout = 1; SELECT pg_sleep(1)", False),  # 57014: a timeout, not the row
    ("SELECT * FROM nowhere", False),  # 42P01: the schema, not the row
    ("LOCK TABLE completed_jobs", False),  # 42501: a privilege
])
def test_row_refusal_told_from_the_sessions_troubles(database, statement, of_the_row):
    """Only errors about what a row holds are isolated row by row; timeouts, privileges, schema are not."""
    err, conn = server_error(database.writer_dsn, statement)
    try:
        assert row_refused(err, conn) is of_the_row, err.pgcode
    finally:
        conn.close()


def test_no_row_refused_on_a_lost_connection(database):
    """An error on a connection that is gone is never a row's fault."""
    err, conn = server_error(database.writer_dsn, "SELECT 1/0")
    conn.close()
    assert not row_refused(err, conn)


def test_the_cause_of_connection_already_closed_is_described():
    """Closing or rolling back a dropped connection says "connection already closed": the error that dropped
    it is the line."""
    try:
        try:
            raise psycopg2.OperationalError("terminating connection due to administrator command\nmore")
        except psycopg2.OperationalError:
            raise psycopg2.InterfaceError("connection already closed")
    except psycopg2.InterfaceError as err:
        assert describe_error(err) == "database: terminating connection due to administrator command"
