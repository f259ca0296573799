"""Every job's history as a range of the trace's completions: what the vectorised predictors read.

The trace's jobs, sorted as the history store sorts a user's rows — by user,
then end time, then job id — are the *completions*. A user's completions are
one block of that order, oldest first. The history of a job at instant t (the
user's jobs that ended strictly before t, newest first, the tie rule of
accuracy.py) is then the end of the user's block up to the first completion at
or after t: positions ``[oldest, newest)``, newest last; its last ``window``
rows are ``[max(oldest, newest - window), newest)``. One ``searchsorted``
finds ``newest`` for every job at once.

This holds when a user's job ids are distinct: ``MemoryHistory`` replaces a
row whose job id comes again, which no range can show. ``TraceColumns.ranged``
says whether a trace can be served this way.
"""

import copy
import operator
from typing import NamedTuple

import numpy as np

from ..shared.predictors import history_project
from ..traces.columns import JobColumns

__all__ = ["TraceColumns", "Completions", "Histories", "field", "codes", "NO_PREDICTION"]

NO_PREDICTION = -1
"""Stands for None in the arrays: no soft walltime in predictions, no walltime in ``TraceColumns``."""

_EXACT_BELOW = 2 ** 31
"""Runtimes and walltimes below this keep every product of two of them exact in int64."""


def field(jobs, name, missing=None):
    """The jobs' ``name`` field as int64 seconds; ``missing`` stands for None (None: the field has no None)."""
    if isinstance(jobs, JobColumns):
        return jobs.numbers(name, missing)
    values = map(operator.attrgetter(name), jobs)
    if missing is not None:
        values = list(values)
        values = map({None: missing}.get, values, values)  # get(v, v): ``missing`` for None, v itself otherwise
    return np.fromiter(values, np.int64, len(jobs))


def codes(values):
    """``(codes, count)``: each distinct value numbered 0, 1, 2 ... in order of first appearance."""
    values = list(values)
    numbers = {value: number for number, value in enumerate(dict.fromkeys(values))}
    return np.fromiter(map(numbers.__getitem__, values), np.int64, len(values)), len(numbers)


def _first_appearance(keys):
    """``codes`` of int64 ``keys``: each distinct key numbered 0, 1, 2 ... in order of first appearance."""
    distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(distinct.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(distinct.size)
    return rank[inverse.reshape(-1)], int(distinct.size)


def _project_keys(jobs):
    """Per job of ``JobColumns``, a number per distinct ``history_project`` (its project, else its group), -1
    for none."""
    projects, project_names = jobs.name_codes("project")
    groups, group_names = jobs.name_codes("group")
    numbers = {name: number for number, name in enumerate(dict.fromkeys(project_names + group_names))}
    project_keys = np.array([numbers[name] for name in project_names] + [-1], dtype=np.int64)
    group_keys = np.array([numbers[name] for name in group_names] + [-1], dtype=np.int64)
    return np.where(projects >= 0, project_keys[projects], group_keys[groups])


def owner_codes(jobs, owner):
    """``codes`` of the jobs' users (``owner`` "user") or ``history_project`` ("project")."""
    if isinstance(jobs, JobColumns):
        return _first_appearance(jobs.name_codes("user")[0] if owner == "user" else _project_keys(jobs))
    return codes(map(operator.attrgetter("user") if owner == "user" else history_project, jobs))


def _job_id_at(jobs):
    """``job_id(index)`` of ``jobs``."""
    if isinstance(jobs, JobColumns):
        return jobs.job_id
    return lambda index: jobs[index].job_id


def _job_ids(jobs):
    return jobs.job_ids() if isinstance(jobs, JobColumns) else map(operator.attrgetter("job_id"), jobs)


def _distinct_numbers(users, numbers):
    """Whether the pairs ``(users[i], numbers[i])`` are distinct."""
    order = np.lexsort((numbers, users))
    users, numbers = users[order], numbers[order]
    return not ((users[1:] == users[:-1]) & (numbers[1:] == numbers[:-1])).any()


class TraceColumns:
    """The jobs' fields as arrays (no walltime: NO_PREDICTION), and the users as codes 0, 1, 2 ...

    A missing walltime and any walltime under 1 s give no soft walltime, read
    no history ratio and make no tang group that is ever asked for: the
    predictors treat them alike.
    """

    def __init__(self, jobs, times):
        self.jobs = jobs
        self.submit_time, self.start_time, self.end_time = (
            times[field] for field in ("submit_time", "start_time", "end_time"))
        self.runtime_s = field(jobs, "runtime_s")
        self.walltime_s = field(jobs, "walltime_s", missing=NO_PREDICTION)
        self.users, self.user_count = owner_codes(jobs, "user")
        self.has_owner = True
        self._project_codes = None

    def project_codes(self):
        """Each job's project (``history_project``) as a code 0, 1, 2 ...; no project is a code too."""
        if self._project_codes is None:
            self._project_codes = owner_codes(self.jobs, "project")[0]
        return self._project_codes

    def of_projects(self):
        """These columns with the projects as the histories' owners (tang's key ``project``): ``users`` holds the
        project codes; ``has_owner`` is False for the jobs without a project, whose histories are not read."""
        projects = copy.copy(self)
        projects.users = self.project_codes()
        projects.user_count = int(projects.users.max()) + 1 if projects.users.size else 0
        if isinstance(self.jobs, JobColumns):
            projects.has_owner = _project_keys(self.jobs) >= 0
        else:
            projects.has_owner = np.fromiter((history_project(job) is not None for job in self.jobs), bool,
                                             len(self.jobs))
        return projects

    def ranged(self):
        """Whether histories are ranges of completions (distinct job ids per user) and the arithmetic stays exact."""
        if not self.runtime_s.size:
            return True
        span = int(self.end_time.max()) - int(self.submit_time.min()) + 1
        if (self.user_count + 1) * span >= 2 ** 62 or max(np.abs(self.runtime_s).max(),
                                                           np.abs(self.walltime_s).max()) >= _EXACT_BELOW:
            return False
        numbers = self.jobs.job_numbers() if isinstance(self.jobs, JobColumns) else None
        if numbers is not None:  # a job id is its number written out: distinct numbers, distinct job ids
            return _distinct_numbers(self.users, numbers)
        hashes = np.sort(np.fromiter(map(hash, _job_ids(self.jobs)), np.int64, len(self.jobs)))
        if not (hashes[1:] == hashes[:-1]).any():
            return True  # distinct hashes: distinct job ids
        return len(set(zip(self.users.tolist(), _job_ids(self.jobs)))) == len(self.jobs)


class Completions:
    """The trace's jobs in history order: by user, then end time, then job id; and where each user's block starts."""

    def __init__(self, columns):
        self.columns = columns
        self.base = int(columns.submit_time.min()) if columns.submit_time.size else 0
        self.span = int(columns.end_time.max()) - self.base + 1 if columns.end_time.size else 1
        keys = columns.users * self.span + (columns.end_time - self.base)
        order = np.argsort(keys)  # ties (one user, one end time) are put in job id order below
        self.keys = keys[order]
        del keys
        if order.size < 2 ** 31:
            order = order.astype(np.int32)  # an index per job, held through the replay: half the bytes
        _order_ties_by_job_id(order, self.keys, columns.jobs)
        self.order = order
        self.first_of_user = np.concatenate(([0], np.cumsum(np.bincount(columns.users, minlength=columns.user_count))))
        self._shared = {}

    @property
    def runtime_s(self):
        """The completions' runtimes (made when asked: the tables built from them are kept, not they)."""
        return self.columns.runtime_s[self.order]

    @property
    def walltime_s(self):
        """The completions' walltimes (NO_PREDICTION: none), made when asked."""
        return self.columns.walltime_s[self.order]

    def count_before(self, users, times):
        """Per job, the position of the first of ``users``' completions at or after ``times``."""
        offsets = np.maximum(times - self.base, 0)  # nothing ends before the first submission
        wanted = users * self.span + offsets
        in_order = np.argsort(wanted)  # a binary search for keys in order is several times faster: fewer cache misses
        positions = np.empty(wanted.size, dtype=np.int64)
        positions[in_order] = np.searchsorted(self.keys, wanted[in_order], side="left")
        return positions

    def shared(self, key, build):
        """``build()``, computed once per key: tables several predictors or instants read."""
        if key not in self._shared:
            self._shared[key] = build()
        return self._shared[key]


def _order_ties_by_job_id(order, keys, jobs):
    """Completions of one user at one end time, in job id order (the store's order), in place."""
    tied = np.flatnonzero(keys[1:] == keys[:-1])
    if not tied.size:
        return
    gaps = np.diff(tied) > 1
    run_starts = tied[np.concatenate(([True], gaps))]
    run_ends = tied[np.concatenate((gaps, [True]))] + 2
    job_id = _job_id_at(jobs)
    for start, end in zip(run_starts.tolist(), run_ends.tolist()):
        order[start:end] = sorted(order[start:end].tolist(), key=job_id)


class Histories(NamedTuple):
    """At one instant, the ``j``-th job of the slice ``jobs`` of the trace has completions ``[oldest[j], newest[j])``
    as its history, newest last."""

    oldest: np.ndarray
    newest: np.ndarray
    jobs: slice = slice(None)

    @classmethod
    def at(cls, completions, times, jobs=slice(None)):
        """The histories of the trace's ``jobs``, each at its own instant ``times[j]`` (its submission or its start)."""
        users = completions.columns.users[jobs]
        return cls(completions.first_of_user[users], completions.count_before(users, times[jobs]), jobs)

    def last(self, window):
        """Where the last ``window`` rows of each history begin."""
        return np.maximum(self.oldest, self.newest - window)

    def of(self, values):
        """The part of a per-job array of the trace that these histories' jobs hold (anything else: itself)."""
        return values[self.jobs] if isinstance(values, np.ndarray) else values
