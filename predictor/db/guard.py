"""Every wait on the database bounded, and Ctrl-C or SIGTERM heard at any moment, for the admin commands.

libpq waits inside C: while it does, Python runs no signal handler, so two
Ctrl-C did nothing while a server that had accepted the connection never
answered. Here:

* the connection is opened in a helper thread while the main thread waits on
  it, which Ctrl-C interrupts; libpq's ``connect_timeout`` bounds it;
* each statement and commit is watched by one watchdog thread. When it runs
  past its budget, or when SIGINT or SIGTERM arrives (the watchdog hears them
  through ``signal.set_wakeup_fd``, even while the main thread is inside
  libpq), the watchdog shuts the connection's socket down: libpq returns at
  once, and the main thread raises ``DeadlineExceeded`` or the signal's own
  exception (KeyboardInterrupt, ``Terminated``).

The server's own ``statement_timeout`` (the same budget) normally ends a slow
statement first with its own words; the watchdog, a little later, covers a
server that answers nothing at all.
"""

import os
import select
import signal
import socket
import threading
import time

import psycopg2
import psycopg2.extensions

from ..errors import DeadlineExceeded

__all__ = ["GRACE_S", "GuardedConnection", "open_guarded"]

GRACE_S = 2.0
"""How long after the server's statement_timeout the watchdog stops waiting for its answer."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Watchdog:
    """One thread that shuts down the sockets of connections whose wait ran out, or on SIGINT/SIGTERM."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waits = {}  # id(conn) -> (conn, deadline)
        self._read, write = os.pipe()
        os.set_blocking(write, False)
        self._write = write
        self._installed = False
        threading.Thread(target=self._run, name="database watchdog", daemon=True).start()

    def listen(self):
        """Hear signals through the wakeup descriptor (main thread only; elsewhere, only deadlines)."""
        if self._installed or threading.current_thread() is not threading.main_thread():
            return
        signal.set_wakeup_fd(self._write)
        self._installed = True

    def watch(self, conn, budget_s):
        with self._lock:
            self._waits[id(conn)] = (conn, time.monotonic() + budget_s)
        try:
            os.write(self._write, b"\0")  # the thread recomputes its timeout
        except BlockingIOError:  # the pipe is full of wake-ups already
            pass

    def done(self, conn):
        with self._lock:
            self._waits.pop(id(conn), None)

    def _run(self):
        while True:
            with self._lock:
                deadlines = [deadline for _, deadline in self._waits.values()]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready, _, _ = select.select([self._read], [], [], timeout)
            heard = os.read(self._read, 512) if ready else b""
            self._stop(any(number in heard for number in _SIGNALS))

    def _stop(self, everyone):
        now = time.monotonic()
        with self._lock:
            due = [conn for conn, deadline in self._waits.values() if everyone or deadline <= now]
        for conn in due:
            conn.expired = not everyone
            _shut(conn)
            self.done(conn)


def _shut(conn):
    """libpq's socket shut down under it: its wait ends at once with 'server closed the connection'."""
    try:
        duplicate = socket.socket(fileno=os.dup(conn.fileno()))
    except (OSError, psycopg2.Error):
        return
    with duplicate:
        try:
            duplicate.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


_watchdog = None
_watchdog_lock = threading.Lock()


def _the_watchdog():
    global _watchdog
    with _watchdog_lock:
        if _watchdog is None or _watchdog_pid != os.getpid():
            _start_watchdog()
    _watchdog.listen()
    return _watchdog


_watchdog_pid = None


def _start_watchdog():
    global _watchdog, _watchdog_pid
    _watchdog, _watchdog_pid = _Watchdog(), os.getpid()


def _forget_wakeup_in_child():
    """A forked worker does not write its signals into the parent's watchdog."""
    if threading.current_thread() is threading.main_thread():
        signal.set_wakeup_fd(-1)


if hasattr(os, "register_at_fork"):  # Python 3.7+; on 3.6 the ingester's workers reset their signals themselves
    os.register_at_fork(after_in_child=_forget_wakeup_in_child)  # novermin


class _Watched:
    """A statement or commit under the watchdog: DeadlineExceeded instead of 'connection closed' when it ran out."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        self.conn.expired = False
        _the_watchdog().watch(self.conn, self.conn.budget_s + GRACE_S)

    def __exit__(self, kind, error, traceback):
        _the_watchdog().done(self.conn)
        if kind is not None and issubclass(kind, psycopg2.Error) and self.conn.expired:
            raise DeadlineExceeded("database: no answer within {:g} s (the statement timeout): the server is "
                                   "stuck or unreachable".format(self.conn.budget_s)) from error
        return False


class GuardedCursor(psycopg2.extensions.cursor):
    """A cursor whose statements the watchdog bounds."""

    def execute(self, query, vars=None):
        with _Watched(self.connection):
            return super().execute(query, vars)

    def executemany(self, query, vars_list):
        with _Watched(self.connection):
            return super().executemany(query, vars_list)

    def copy_expert(self, sql, file, size=8192):
        with _Watched(self.connection):
            return super().copy_expert(sql, file, size)

    def callproc(self, procname, parameters=None):
        with _Watched(self.connection):
            return super().callproc(procname, parameters)


class GuardedConnection(psycopg2.extensions.connection):
    """A connection whose cursors, commits and rollbacks the watchdog bounds (``budget_s`` each)."""

    budget_s = 600.0
    expired = False

    def __init__(self, dsn, *args, **kwargs):
        super().__init__(dsn, *args, **kwargs)
        self.cursor_factory = GuardedCursor

    def commit(self):
        with _Watched(self):
            return super().commit()

    def rollback(self):
        """Roll back; nothing to do on a session that is gone (the server rolled it back), so that the error
        which ended it -- an interrupt, a deadline -- is the one reported, not 'no connection'."""
        if self.closed or self.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_UNKNOWN:
            return None
        with _Watched(self):
            return super().rollback()


def open_guarded(dsn, budget_s):
    """``psycopg2.connect(dsn)`` as a ``GuardedConnection`` with ``budget_s`` per statement; Ctrl-C and SIGTERM
    interrupt the connect itself (libpq's connect_timeout in ``dsn`` bounds it)."""
    _the_watchdog()
    outcome = {}

    def opening():
        try:
            outcome["conn"] = psycopg2.connect(dsn, connection_factory=GuardedConnection)
        except BaseException as err:  # handed to the waiting thread, which raises it
            outcome["error"] = err
    helper = threading.Thread(target=opening, name="database connect", daemon=True)
    helper.start()
    helper.join()
    if "error" in outcome:
        raise outcome["error"]
    outcome["conn"].budget_s = budget_s
    return outcome["conn"]
