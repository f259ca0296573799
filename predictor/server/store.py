"""The completed-job history in PostgreSQL, as the hooks see it.

One cached connection per store, opened again once, within the same
deadline, when the server dropped it (a database restart between two PBS
events). Every call is bounded by a deadline.
"""

import time
from fractions import Fraction

from ..errors import ConfigError, DatabaseError, DeadlineExceeded
from ..jobs import MAX_INT32, HistoryRow
from ..queries import (
    PROJECT_HISTORY_SINCE,
    RATIO_KEY_BITS,
    RECENT_HISTORY,
    RECENT_HISTORY_SINCE,
    TANG_PERCENTILE,
    TANG_PERCENTILE_CHECKPOINTED,
    UPSERT_ONE,
    job_values,
    percentile_fraction,
)
from . import driver

__all__ = ["HookHistory"]


class HookHistory:
    """A user's newest completed jobs, and the jobobit upsert, with a time budget per call."""

    def __init__(self, params, timeout_s=2.0, read_only=True):
        if not timeout_s > 0:
            raise ConfigError("timeout_s must be > 0, not {!r}".format(timeout_s))
        self.params = params
        self.timeout_s = timeout_s
        self.read_only = read_only
        self._conn = None

    def recent(self, user, limit, deadline=None, since=None):
        """The user's newest ``limit`` jobs as ``HistoryRow``s, newest first; ``since``: only those that ended
        then or later."""
        if since is None:
            rows = self._run(RECENT_HISTORY, (user, limit), deadline, fetch=True)
        else:
            rows = self._run(RECENT_HISTORY_SINCE, (user, since, limit), deadline, fetch=True)
        return [HistoryRow(*row) for row in rows]

    def project_recent(self, project, limit, deadline=None, since=None):
        """The project's newest ``limit`` jobs (every user's), newest first; ``since``: only those that ended
        then or later."""
        rows = self._run(PROJECT_HISTORY_SINCE, (project, 0 if since is None else since, limit), deadline, fetch=True)
        return [HistoryRow(*row) for row in rows]

    def tang_percentile(self, key, request, since, percentile, deadline=None):
        """``(eligible rows, their nearest-rank percentile R as a Fraction or None)`` for tang's ``key`` and the
        job ``request``, computed by PostgreSQL (no row leaves it); ``since``: the oldest end time (None: any).
        The default key reads its checkpoints (``TANG_PERCENTILE_CHECKPOINTED``), the others every row of the
        window (``TANG_PERCENTILE``)."""
        form, values = _tang_values(key, request)
        if form is None:
            return 0, None
        oldest = -2 ** 63 if since is None else since
        if key == "user+project+walltime":
            rows, used = self._run(TANG_PERCENTILE_CHECKPOINTED, (request.user, request.project, request.walltime_s,
                                                                  oldest, percentile), deadline, fetch=True)[0]
            return rows, None if used is None else Fraction(used, request.walltime_s)
        rows, ratio_key = self._run(TANG_PERCENTILE[form], (percentile_fraction(percentile),) + values + (oldest,),
                                    deadline, fetch=True)[0]
        if ratio_key is None:
            return rows, None
        if form.endswith("walltime"):
            return rows, Fraction(ratio_key, request.walltime_s)
        middle = Fraction(2 * int(ratio_key) + 1, 2 ** (RATIO_KEY_BITS + 1))
        return rows, middle.limit_denominator(MAX_INT32)

    def add(self, job, deadline=None):
        """Upsert one completed job (the same statement as the ingester's)."""
        self._run(UPSERT_ONE, job_values(job), deadline, fetch=False)

    def execute(self, sql, params=(), deadline=None, fetch=True):
        """Any statement on this store's connection (the admin checks use it)."""
        return self._run(sql, params, deadline, fetch)

    def close(self):
        """Close the cached connection, if any."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _run(self, sql, params, deadline, fetch):
        if deadline is None:
            deadline = time.monotonic() + self.timeout_s
        reused = self._conn is not None and not self._conn.closed  # a connection already known dead is not retried
        try:
            return self._attempt(sql, params, deadline, fetch)
        except DeadlineExceeded:
            self.close()
            raise
        except DatabaseError:
            dropped = self._conn is None or self._conn.closed
            if not (reused and dropped and time.monotonic() < deadline):
                raise
        return self._attempt(sql, params, deadline, fetch)

    def _attempt(self, sql, params, deadline, fetch):
        if self._conn is None or self._conn.closed:
            self._conn = driver.connect(self.params, deadline, self.read_only, self.timeout_s)
        return self._conn.execute(sql, params, deadline, fetch)


def _tang_values(key, request):
    """The ``TANG_PERCENTILE`` form for ``key`` and the job's values it takes (form None: no job can match)."""
    if key == "project":
        return ("project", (request.project,)) if request.project is not None else (None, ())
    form = key if request.project is not None else key.replace("project", "no project")
    values = (request.user,) + ((request.project,) if "+project" in form else ())
    return form, values + ((request.walltime_s,) if key.endswith("walltime") else ())
