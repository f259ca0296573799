"""Talk to PostgreSQL within a hard deadline, whatever the server does.

psycopg2's asynchronous connections let us wait with ``poll()`` and give up
at a monotonic deadline: a stopped, firewalled, locked or slow server costs
at most the budget. (libpq's own ``connect_timeout`` has a 2 s floor and
whole-second steps, too coarse for a hook.) ``select.poll`` is used rather
than ``select.select`` because pbs_server's file descriptors can exceed 1024.

Host names are resolved before the deadline applies (libpq resolves them
synchronously): give ``host`` as an IP address, or add ``hostaddr``.
"""

import select
import time

import psycopg2
import psycopg2.extensions

from .errors import DeadlineExceeded

__all__ = ["connect", "execute"]

_EVENTS = {
    psycopg2.extensions.POLL_READ: select.POLLIN,
    psycopg2.extensions.POLL_WRITE: select.POLLOUT,
}


def _wait(conn, deadline):
    while True:
        state = conn.poll()
        if state == psycopg2.extensions.POLL_OK:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded("no answer from the database within the time budget")
        poller = select.poll()
        poller.register(conn.fileno(), _EVENTS[state] | select.POLLERR | select.POLLHUP)
        poller.poll(max(1, int(remaining * 1000 + 0.999)))


def connect(dsn, deadline):
    """An open asynchronous (autocommit) connection, or an error by ``deadline``."""
    conn = psycopg2.connect(dsn, async_=True)
    try:
        _wait(conn, deadline)
    except BaseException:
        conn.close()
        raise
    return conn


def execute(conn, sql, params, deadline, fetch=False):
    """Run one statement on an asynchronous connection; the rows if ``fetch``."""
    cursor = conn.cursor()
    try:
        cursor.execute(sql, params)
        _wait(conn, deadline)
        return cursor.fetchall() if fetch else None
    finally:
        cursor.close()
