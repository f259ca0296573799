"""The ingester's side of PostgreSQL: progress, chunk commits, refused rows, and the lock against a second copy.

One psycopg2 connection at a time. Given a ``connect`` function (the CLI's:
``db.sessions.connect`` bound to the DSN), a connection that was lost or
dropped is opened again on next use; given a connection (tests, a library
caller), that one is used and never replaced. Every psycopg2 error leaves as
one ``DatabaseError`` line.
"""

import io

import psycopg2

from ..db.sessions import describe_error, row_refused
from ..errors import DatabaseError
from ..queries import COPY_STAGING, CREATE_STAGING, PROGRESS_GET, PROGRESS_PUT, UPSERT_ONE, UPSERT_STAGED

__all__ = ["IngestStore", "LockHolder"]

_LOCK_SPACE = "pbs-softwalltime ingest"
"""The first key of the ingester's advisory locks (the second: the directory's path), apart from anyone else's."""
_TRY_LOCK = "SELECT pg_try_advisory_lock(hashtext(%s), hashtext(%s))"
_UNLOCK = "SELECT pg_advisory_unlock(hashtext(%s), hashtext(%s))"
_LOCK_HOLDER = (
    "SELECT a.pid, host(a.client_addr), a.application_name, to_char(a.backend_start AT TIME ZONE 'UTC',"
    " 'YYYY-MM-DD HH24:MI') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
    " AND l.classid = hashtext(%s)::oid AND l.objid = hashtext(%s)::oid"
)


class LockHolder:
    """The session that holds a directory's lock, as far as this role may see it."""

    def __init__(self, key, row):
        self.key = key
        self.row = row

    def __str__(self):
        if self.row is None:
            return "another ingester is loading {} into this database".format(self.key)
        pid, address, application, since = self.row
        where = ["pid {}".format(pid)] + (["from " + address] if address else []) + (
            [application] if application else []) + (["since {} UTC".format(since)] if since else [])
        return "another ingester is loading {} into this database ({})".format(self.key, ", ".join(where))


class IngestStore:
    """The database side of one ingester; ``close()`` when done."""

    def __init__(self, connection):
        if callable(connection):
            self._connect, self._conn = connection, None
        else:
            self._connect, self._conn = None, connection
            connection.set_client_encoding("UTF8")  # the server, not psycopg2, judges what it can store
        self._staging_ready = False
        self._locked = []

    def conn(self):
        """A live connection: the one open, or a new one (DatabaseError if none can be had)."""
        if self._conn is None or self._conn.closed:
            if self._connect is None:
                raise DatabaseError("database: the connection was closed")
            self._conn, self._staging_ready, self._locked = self._connect(), False, []
        return self._conn

    def lost(self):
        """Is the connection gone (dropped, or closed by the server: a restart, a network cut)?"""
        return self._conn is None or bool(self._conn.closed)

    def drop(self):
        """Forget the connection (closing it, which releases its locks) so that the next use opens another;
        a connection given by the caller is kept."""
        if self._connect is not None and self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()
        self._staging_ready, self._locked = False, []

    def close(self):
        """Done: the connection this store opened is closed; a caller's is kept, its locks released."""
        if self._connect is None and self._locked and not self.lost():
            try:
                with self._conn, self._conn.cursor() as cursor:
                    self._unlock(cursor)
            except psycopg2.Error as err:
                raise DatabaseError(describe_error(err)) from err
        self.drop()

    @property
    def locked(self):
        """The lock keys this connection holds."""
        return list(self._locked)

    def lock(self, keys):
        """Take the session locks of ``keys`` (sorted: two ingesters never wait on each other in a circle);
        None, or the ``LockHolder`` of the first key another session holds (then nothing is held)."""
        try:
            return self._lock(sorted(keys))
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err

    def _lock(self, keys):
        conn = self.conn()
        with conn, conn.cursor() as cursor:  # session locks: they outlive the transaction
            for key in keys:
                cursor.execute(_TRY_LOCK, (_LOCK_SPACE, key))
                if not cursor.fetchone()[0]:
                    holder = self._holder(cursor, key)
                    self._unlock(cursor)
                    return holder
                self._locked.append(key)
        return None

    def _unlock(self, cursor):
        for key in self._locked:
            cursor.execute(_UNLOCK, (_LOCK_SPACE, key))
        self._locked = []

    @staticmethod
    def _holder(cursor, key):
        cursor.execute(_LOCK_HOLDER, (_LOCK_SPACE, key))
        row = cursor.fetchone()
        return LockHolder(key, row)

    def progress(self, path):
        """``(head_sha1, tail_sha1, offset_bytes, line_no)`` stored for ``path``, or None."""
        conn = self.conn()
        try:
            with conn, conn.cursor() as cursor:
                cursor.execute(PROGRESS_GET, (path,))
                return cursor.fetchone()
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err

    def commit(self, progress, copy_text, jobs, rows, before_commit):
        """Write a chunk's rows (``copy_text``) and its ``progress`` in one transaction; return the jobs written.

        If the server refuses rows for what they hold, the chunk is written again
        one row at a time (``rows()``: ``[(values, line_no)]``) and the refused
        rows are left out. ``before_commit([(line_no, reason)] refused)`` is
        called once the transaction holds everything, before it commits.
        """
        conn = self.conn()
        try:
            self._prepare_staging(conn)
            with conn, conn.cursor() as cursor:
                if copy_text:
                    cursor.copy_expert(COPY_STAGING, io.StringIO(copy_text))
                    cursor.execute(UPSERT_STAGED)
                cursor.execute(PROGRESS_PUT, progress)
                before_commit([])
            return jobs
        except psycopg2.Error as err:
            if not row_refused(err, conn):
                raise DatabaseError(describe_error(err)) from err
        return self._commit_row_by_row(conn, progress, rows(), before_commit)

    def _prepare_staging(self, conn):
        """Create the session's staging table once, in its own transaction."""
        if not self._staging_ready:
            with conn, conn.cursor() as cursor:
                cursor.execute(CREATE_STAGING)
            self._staging_ready = True

    @staticmethod
    def _commit_row_by_row(conn, progress, rows, before_commit):
        """Each row in a savepoint of its own: a refused one is rolled back and reported, the others written."""
        written, refused = 0, []
        try:
            with conn, conn.cursor() as cursor:
                for values, line_no in rows:
                    cursor.execute("SAVEPOINT job")
                    try:
                        cursor.execute(UPSERT_ONE, values)
                        written += 1
                    except psycopg2.Error as err:
                        if not row_refused(err, conn):
                            raise
                        cursor.execute("ROLLBACK TO SAVEPOINT job")
                        refused.append((line_no, refusal(err)))
                cursor.execute(PROGRESS_PUT, progress)
                before_commit(refused)
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err
        return written


def refusal(err):
    """``field NAME: refused by the database: reason`` (no field when the server names none)."""
    column = getattr(getattr(err, "diag", None), "column_name", None)
    text = "refused by the " + describe_error(err)
    return "field {}: {}".format(column, text) if column else text
