"""The history-store interface, the in-memory store, and ``predict``.

A store answers one question: the newest ``limit`` completed jobs of a user (optionally
only those that ended at or after a time),
newest first (by end time, then job id); and the same of a project, across its
users (``project_recent``), for Tang et al.'s project key. ``MemoryHistory`` keeps only that
many rows per user (or per project), so its memory is bounded by owners x capacity, not by the
whole history. ``HookHistory`` (predictor.server.store) answers the same
question from PostgreSQL; a property test shows the two agree. ``HookHistory`` also
answers tang's own question, the number of eligible rows and their percentile
(``tang_percentile``), so that no row leaves the database; ``predict`` asks it that
when it can.
"""

import bisect
import itertools

from .algorithms import tang_adjusted

__all__ = ["MemoryHistory", "predict"]


class MemoryHistory:
    """Per user, the newest ``capacity`` completed jobs (re-adding a job id replaces it).

    ``owner="project"``: per project instead (the rows of every user of the project): a store for
    ``project_recent``.
    """

    def __init__(self, capacity=15, owner="user"):
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        if owner not in ("user", "project"):
            raise ValueError("owner must be user or project, not {!r}".format(owner))
        self.capacity = capacity
        self.owner = owner
        self._rows_by_user = {}  # user -> HistoryRows, oldest first
        self._ids_by_user = {}  # user -> the job ids of those rows: a job added again is found without a scan

    def add(self, job):
        """Record a completed job (a ``CompletedJob``); one without a project is not kept by a project store."""
        owner = getattr(job, self.owner)
        if owner is not None:
            self.add_row(owner, job.history_row())

    def add_row(self, user, row):
        """Record one ``HistoryRow`` of ``user``. True: what a prediction reads of the user's history may have
        changed (always here; a store keeping less may tell a row that changes nothing)."""
        rows = self._rows_by_user.get(user)
        if rows is None:
            self._rows_by_user[user], self._ids_by_user[user] = [row], {row.job_id}
            return True
        ids = self._ids_by_user[user]
        if row.job_id in ids:
            del rows[[old.job_id for old in rows].index(row.job_id)]
        else:
            ids.add(row.job_id)
        if not rows or row > rows[-1]:
            rows.append(row)
        else:
            bisect.insort(rows, row)
        if len(rows) > self.capacity:
            ids.discard(rows.pop(0).job_id)
        return True

    def recent(self, user, limit, deadline=None, since=None):
        """The user's newest ``limit`` rows, newest first; ``since``: only those ended then or later.

        ``deadline`` is ignored.
        """
        if limit > self.capacity:
            raise ValueError("limit {} exceeds this store's capacity {}".format(limit, self.capacity))
        rows = self._rows_by_user.get(user)
        if not rows:
            return []
        if since is None:
            return rows[:-limit - 1:-1]
        newest = itertools.takewhile(lambda row: row.end_time >= since, reversed(rows))
        return list(itertools.islice(newest, limit))

    def project_recent(self, project, limit, deadline=None, since=None):
        """The project's newest ``limit`` rows (every user's), newest first; a store with ``owner="project"``."""
        if self.owner != "project":
            raise ValueError("this store keeps users' histories; a project's needs MemoryHistory(owner='project')")
        return self.recent(project, limit, deadline, since)

    def close(self):
        """Nothing to release; here for the common interface."""


def predict(store, algorithm, request, deadline=None):
    """The soft walltime for ``request`` from ``store``'s history, or None.

    A request without a walltime never reaches the store. A predictor with a
    time window (tang) reads only the rows inside it, counted back from
    ``request.submit_time``; tang with key ``project`` reads the project's
    rows (none for a job without a project).
    """
    if request.walltime_s is None or request.walltime_s < 1:
        return None
    since = algorithm.since(request.submit_time)
    if algorithm.name == "tang" and hasattr(store, "tang_percentile"):
        eligible, ratio = store.tang_percentile(algorithm.key, request, since, algorithm.percentile, deadline)
        return tang_adjusted(eligible, ratio, request.walltime_s, algorithm.min_history, algorithm.min_ratio_pct,
                             algorithm.reserve_s)
    if algorithm.by_project:
        history = [] if request.project is None else store.project_recent(
            request.project, algorithm.window, deadline=deadline, since=since)
    elif since is None:
        history = store.recent(request.user, algorithm.window, deadline=deadline)
    else:
        history = store.recent(request.user, algorithm.window, deadline=deadline, since=since)
    return algorithm.predict(history, request.walltime_s, request.submit_time, request.project)
