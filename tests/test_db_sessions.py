"""predictor.db.sessions: the admin commands' psycopg2 session settings and error lines."""

import traceback

import psycopg2
import pytest

from predictor.db.sessions import describe_error, session_dsn
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
