"""psycopg2 sessions for the admin commands (db init, db prune, ingest, report): the one connect.

The hooks never import this module: they run inside pbs_server, where a C
extension such as psycopg2 does not survive an interpreter restart (see
predictor.server.driver).
"""

import contextlib

import psycopg2
import psycopg2.extensions

from ..errors import ConfigError, DatabaseError
from ..queries import APPLICATION_NAME
from . import CONNECT_TIMEOUT_S
from .guard import open_guarded

__all__ = ["connect", "session", "session_dsn", "describe_error", "row_refused", "CONNECT_TIMEOUT_S"]


def session_dsn(dsn, timeout_s, read_only, connect_timeout_s=None):
    """``dsn`` plus this package's session settings: ``timeout_s`` per statement and lock wait,
    ``connect_timeout_s`` to connect (default: the DSN's connect_timeout, else ``CONNECT_TIMEOUT_S``)."""
    try:
        params = psycopg2.extensions.parse_dsn(dsn)
    except (psycopg2.ProgrammingError, TypeError, UnicodeError):
        # psycopg2's message quotes the DSN, which may hold a password: not even as the cause.
        raise ConfigError("dsn: not a valid libpq connection string (key=value pairs or a postgresql:// URI, "
                          "in UTF-8)") from None
    timeout_ms = max(1, int(timeout_s * 1000))
    settings = "-c statement_timeout={0} -c lock_timeout={0}".format(timeout_ms)
    if read_only:
        settings += " -c default_transaction_read_only=on"
    params["options"] = (params.get("options", "") + " " + settings).strip()
    params.setdefault("application_name", APPLICATION_NAME)
    # Names are sent as UTF-8 whatever the database encoding, so the server, not
    # the client library, judges what it can store (a refusal is then per row).
    params["client_encoding"] = "UTF8"
    if connect_timeout_s is not None:
        params["connect_timeout"] = str(max(2, int(connect_timeout_s + 0.999)))  # libpq's least is 2 s
    params.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
    return psycopg2.extensions.make_dsn(**params)


def connect(dsn, timeout_s, read_only, connect_timeout_s=None):
    """A psycopg2 connection with the settings of ``session_dsn`` whose every statement is bounded by
    ``timeout_s`` and every wait interruptible (``guard``); DatabaseError (one line) if refused."""
    try:
        return open_guarded(session_dsn(dsn, timeout_s, read_only, connect_timeout_s), timeout_s)
    except psycopg2.Error as err:
        raise DatabaseError(describe_error(err)) from err


@contextlib.contextmanager
def session(dsn, timeout_s, read_only, connect_timeout_s=None):
    """A connection for one piece of work: psycopg2's errors become one DatabaseError line, and the
    connection is closed at the end, whatever happened."""
    conn = connect(dsn, timeout_s, read_only, connect_timeout_s)
    try:
        yield conn
    except psycopg2.Error as err:
        raise DatabaseError(describe_error(err)) from err
    finally:
        conn.close()


def describe_error(err):
    """One line for a psycopg2 error: ``database: <first line>``, never a password.

    "connection already closed" is what closing or rolling back a connection the
    server dropped says; the error that dropped it, if chained, is the cause.
    """
    while isinstance(err, psycopg2.InterfaceError) and isinstance(err.__context__, psycopg2.Error):
        err = err.__context__
    text = str(err).strip().splitlines()
    return "database: " + (text[0] if text else type(err).__name__)


_NOT_THE_ROW = frozenset(["08", "25", "28", "3D", "40", "42", "53", "55", "57", "58", "F0", "XX"])
"""SQLSTATE classes that speak of the session, the server or the schema, never of one row's values:
connection, transaction state, authorization, no database, deadlock or serialization, access rule,
resources (disk full), lock or object state, operator intervention (shutdown, timeout), system, config."""


def row_refused(err, conn):
    """Did the server refuse the rows of a statement for what they hold (an over-long value, a broken
    constraint, an index entry too big, a trigger's exception), on a connection that is still there?"""
    code = getattr(err, "pgcode", None)
    return bool(code) and code[:2] not in _NOT_THE_ROW and not conn.closed
