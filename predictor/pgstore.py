"""The PostgreSQL history store.

One cached connection per store, re-opened once, within the same deadline,
when the server dropped it (a restart between two PBS events). Every call is
bounded by a deadline; the server also gets ``statement_timeout`` and
``lock_timeout`` so a query abandoned at the deadline does not linger.
"""

import time

import psycopg2
import psycopg2.extensions

from . import deadline as pgdeadline
from .errors import ConfigError, DatabaseError, DeadlineExceeded
from .jobs import HistoryRow
from .queries import RECENT_HISTORY, UPSERT_ONE, job_values

__all__ = ["PgHistory", "session_dsn", "describe_error"]

APPLICATION_NAME = "pbs-softwalltime"


def session_dsn(dsn, timeout_s, read_only):
    """``dsn`` plus this package's session settings (the caller's settings win)."""
    try:
        params = psycopg2.extensions.parse_dsn(dsn)
    except (psycopg2.ProgrammingError, TypeError):
        # psycopg2's message quotes the DSN, which may hold a password: not even as the cause.
        raise ConfigError("dsn: not a valid libpq connection string (key=value pairs or a postgresql:// URI)") from None
    timeout_ms = max(1, int(timeout_s * 1000))
    settings = "-c statement_timeout={0} -c lock_timeout={0}".format(timeout_ms)
    if read_only:
        settings += " -c default_transaction_read_only=on"
    params["options"] = (params.get("options", "") + " " + settings).strip()
    params.setdefault("application_name", APPLICATION_NAME)
    # Names are sent as UTF-8 whatever the database encoding, so the server, not
    # the client library, judges what it can store (a refusal is then per row).
    params["client_encoding"] = "UTF8"
    params.setdefault("connect_timeout", str(max(2, int(timeout_s + 0.999))))
    return psycopg2.extensions.make_dsn(**params)


def describe_error(err):
    """One line for a psycopg2 error: ``database: <first line>``, never a password."""
    text = str(err).strip().splitlines()
    return "database: " + (text[0] if text else type(err).__name__)


class PgHistory:
    """Completed-job history in PostgreSQL, with a time budget per call."""

    def __init__(self, dsn, timeout_s=2.0, read_only=True):
        if not timeout_s > 0:
            raise ConfigError("timeout_s must be > 0, not {!r}".format(timeout_s))
        self.timeout_s = timeout_s
        self._dsn = session_dsn(dsn, timeout_s, read_only)
        self._conn = None

    def recent(self, user, limit, deadline=None):
        """The user's newest ``limit`` jobs as ``HistoryRow``s, newest first."""
        rows = self._run(RECENT_HISTORY, {"user": user, "limit": limit}, deadline, fetch=True)
        return [HistoryRow(*row) for row in rows]

    def add(self, job, deadline=None):
        """Upsert one completed job (the same statement as the ingester's)."""
        self._run(UPSERT_ONE, job_values(job), deadline)

    def close(self):
        """Close the cached connection, if any."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _run(self, sql, params, deadline, fetch=False):
        if deadline is None:
            deadline = time.monotonic() + self.timeout_s
        cached = self._conn is not None
        try:
            return self._attempt(sql, params, deadline, fetch)
        except psycopg2.Error as err:
            dropped = self._conn is not None and self._conn.closed
            self.close()
            if not (cached and dropped and time.monotonic() < deadline):
                raise DatabaseError(describe_error(err)) from err
        return self._retry(sql, params, deadline, fetch)

    def _retry(self, sql, params, deadline, fetch):
        try:
            return self._attempt(sql, params, deadline, fetch)
        except psycopg2.Error as err:
            self.close()
            raise DatabaseError(describe_error(err)) from err

    def _attempt(self, sql, params, deadline, fetch):
        try:
            if self._conn is None:
                self._conn = pgdeadline.connect(self._dsn, deadline)
            return pgdeadline.execute(self._conn, sql, params, deadline, fetch)
        except DeadlineExceeded:
            self.close()
            raise
