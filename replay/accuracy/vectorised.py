"""The registry's predictors for a whole trace at once, with numpy: a second implementation for the replay.

``predictor.algorithms`` stays the reference (the hooks run it, job by job);
the functions here give the same value for every job, to the second, from
each job's history as a range of the trace's completions (histories.py):

* v1, v2: the mean of the last ``window`` runtimes is a difference of two
  cumulative sums, divided with ``//`` (the reference truncates);
* v3, v3-deployed: the highest runtime/walltime of the last ``window`` rows
  is a range maximum over the ratios' exact ranks (windows.py), then
  ``runtime * walltime // past walltime`` in integers, as the reference;
* tang: the eligible rows (ended at most ``window_days`` before the
  submission, sharing the key's project and/or walltime) are one range — of
  the completions, of the completions grouped by the key's attributes, or, for
  key ``project``, of the completions sorted by project instead of user — and
  the nearest-rank percentile is the k-th smallest of that range;
* user, recorded, clairvoyant (the registry's own entries): read no history.

A predictor outside the registry, or any history-reading one on a trace whose
histories are not ranges (a user's job id seen twice) or whose numbers are too
large for exact int64 products, gets None here and is walked job by job.
"""

from functools import partial

import numpy as np

from predictor.algorithms import DAY_S, LONG_WALLTIME_S

from ..shared.predictors import PREDICTORS
from .histories import NO_PREDICTION, Completions, Histories, TraceColumns, field
from .windows import RangeMax, RangeOrder, exact_ranks

__all__ = ["VectorisedTrace"]


def _legal(seconds, walltime, usable):
    """Where ``usable``, the seconds within PBS's ``[1, walltime]``; else the walltime; none without a walltime."""
    values = np.where(usable, np.minimum(np.maximum(seconds, 1), walltime), walltime)
    return np.where(walltime >= 1, values, NO_PREDICTION)


def _mean_runtime(algorithm, completions, histories):
    sums = completions.shared("runtime sums", lambda: np.concatenate(([0], np.cumsum(completions.runtime_s))))
    oldest = histories.last(algorithm.window)
    rows = histories.newest - oldest
    mean = (sums[histories.newest] - sums[oldest]) // np.maximum(rows, 1)
    return _legal(mean + algorithm.reserve_s, histories.of(completions.columns.walltime_s), rows > 0)


def _ranked(completions, numerators):
    """Exact ranks of ``numerators / walltime`` over the completions with a walltime (-1 for the others)."""
    walltime = completions.walltime_s
    valid = walltime > 0
    if valid.all():  # the arrays themselves, not copies: this runs over every job of a trace
        return exact_ranks(numerators, walltime)
    valid_ranks, rank_numerators, rank_denominators = exact_ranks(numerators[valid], walltime[valid])
    ranks = np.full(valid.size, -1, dtype=valid_ranks.dtype)
    ranks[valid] = valid_ranks
    return ranks, rank_numerators, rank_denominators


def _scaled(rank_numerators, rank_denominators, ranks, walltime):
    """``walltime x`` the fraction of each rank, truncated (0 where ``ranks`` is -1: unused)."""
    if not rank_numerators.size:
        return np.zeros(walltime.size, dtype=np.int64)
    picked = np.maximum(ranks, 0)
    return rank_numerators[picked] * walltime // rank_denominators[picked]


def _scaled_by_max_ratio(algorithm, completions, histories, double_long):
    ranks, numerators, denominators = completions.shared("ratios", lambda: _ranked(completions, completions.runtime_s))
    table = completions.shared(("highest ratio", algorithm.window), lambda: RangeMax(ranks, algorithm.window))
    oldest, newest = histories.last(algorithm.window), histories.newest
    best = np.full(newest.size, -1, dtype=np.int64)
    some = newest > oldest
    best[some] = table.query(oldest[some], newest[some])
    walltime = histories.of(completions.columns.walltime_s)
    scaled = _scaled(numerators, denominators, best, walltime)
    if not double_long:
        return _legal(scaled + algorithm.reserve_s, walltime, best >= 0)
    values = _legal(np.where(walltime > LONG_WALLTIME_S, scaled * 2, scaled) + algorithm.reserve_s, walltime,
                    best >= 0)
    return np.where((best >= 0) & (scaled == 0), NO_PREDICTION, values)  # production sets none for a scaled 0


def _usage_ranks(completions):
    """Tang's R = min(runtime, walltime) / walltime, ranked; rows without a walltime rank above all."""
    ranks, numerators, denominators = _ranked(
        completions, np.minimum(completions.runtime_s, completions.walltime_s))
    ranks[ranks < 0] = numerators.size
    return ranks, numerators, denominators


def _user_rows(completions, oldest, newest):
    """Key ``user``: the eligible rows are the range itself, less the rows without a walltime (ranked last)."""
    def build():
        ranks, numerators, denominators = completions.shared("usage", lambda: _usage_ranks(completions))
        with_walltime = np.concatenate(([0], np.cumsum(completions.walltime_s > 0)))
        return with_walltime, RangeOrder(ranks, max(int(numerators.size).bit_length(), 1))
    with_walltime, order = completions.shared("usage by user", build)
    return oldest, newest, with_walltime[newest] - with_walltime[oldest], order


def _key_groups(completions, key):
    """The completions grouped by the user and the key's other attributes (walltime, project), in history order
    within a group; a search key per row."""
    users = completions.columns.users[completions.order]
    positions = np.arange(users.size)
    attributes = [_KEY_ATTRIBUTES[name](completions) for name in key.split("+")[1:]]
    grouped = np.lexsort([positions] + attributes[::-1] + [users])
    changes = np.diff(users[grouped]) != 0
    for values in attributes:
        changes |= np.diff(values[grouped]) != 0
    group = np.cumsum(np.concatenate(([False], changes)))
    group_of_position = np.empty(users.size, dtype=np.int64)
    group_of_position[grouped] = group
    group_of_job = np.empty(users.size, dtype=np.int64)
    group_of_job[completions.order] = group_of_position
    ranks, numerators, _ = completions.shared("usage", lambda: _usage_ranks(completions))
    order = RangeOrder(ranks[grouped], max(int(numerators.size).bit_length(), 1))
    with_walltime = np.concatenate(([0], np.cumsum(completions.walltime_s[grouped] > 0)))
    return group * (users.size + 1) + grouped, group_of_job, order, with_walltime


_KEY_ATTRIBUTES = {
    "walltime": lambda completions: completions.walltime_s,
    "project": lambda completions: completions.columns.project_codes()[completions.order],
}
"""A key's attribute other than the user -> its value per completion, in completions order."""


def _same_key_rows(completions, histories, oldest, key):
    """Keys user+...: the rows of the job's own group (same user, walltime and/or project) within the range, less
    the rows without a walltime (ranked last)."""
    keys, group_of_job, order, with_walltime = completions.shared(("usage by", key),
                                                                  lambda: _key_groups(completions, key))
    newest = histories.newest
    group_start = histories.of(group_of_job) * (group_of_job.size + 1)
    low = np.searchsorted(keys, group_start + oldest, side="left")
    high = np.searchsorted(keys, group_start + newest, side="left")
    return low, high, with_walltime[high] - with_walltime[low], order


def _eligible_rows(algorithm, completions, histories):
    """``(low, high, count, order)``: each job's eligible rows, the k-th smallest R of a range by ``order``."""
    columns = completions.columns
    since = histories.of(columns.submit_time) - algorithm.window_days * DAY_S  # from the submission at both instants
    oldest = np.maximum(histories.last(algorithm.window), completions.count_before(histories.of(columns.users), since))
    if algorithm.key in ("user", "project"):  # project: ``completions`` are the projects' own
        return _user_rows(completions, oldest, histories.newest)
    return _same_key_rows(completions, histories, oldest, algorithm.key)


def _tang(algorithm, completions, histories):
    """walltime x max(the nearest-rank percentile of the eligible R, the lower bound)."""
    low, high, count, order = _eligible_rows(algorithm, completions, histories)
    walltime = histories.of(completions.columns.walltime_s)
    enough = (walltime >= 1) & (count >= max(algorithm.min_history, 1)) & histories.of(completions.columns.has_owner)
    rank = np.full(walltime.size, -1, dtype=np.int64)
    nearest_rank = -(-algorithm.percentile * count[enough] // 100) - 1
    rank[enough] = order.kth_smallest(low[enough], high[enough], nearest_rank)
    _, numerators, denominators = completions.shared("usage", lambda: _usage_ranks(completions))
    scaled = np.maximum(_scaled(numerators, denominators, rank, walltime), algorithm.min_ratio_pct * walltime // 100)
    return _legal(scaled + algorithm.reserve_s, walltime, enough)


_ALGORITHM_FORMS = {
    "v1": _mean_runtime,
    "v2": _mean_runtime,
    "v3": partial(_scaled_by_max_ratio, double_long=False),
    "v3-deployed": partial(_scaled_by_max_ratio, double_long=True),
    "tang": _tang,
}
"""Algorithm name -> ``form(algorithm, completions, histories)``: every job's value at one instant."""


def _clairvoyant(columns):
    runtime = np.maximum(columns.runtime_s, 1)
    return np.where(columns.walltime_s >= 1, np.minimum(runtime, columns.walltime_s), runtime)


_STATIC_FORMS = {
    "user": lambda columns: np.where(columns.walltime_s != 0, columns.walltime_s, NO_PREDICTION),
    "recorded": lambda columns: field(columns.jobs, "soft_walltime_s", missing=NO_PREDICTION),
    "clairvoyant": _clairvoyant,
}
"""Registry name -> ``form(columns)``, for the registry's history-free entries themselves."""


_INSTANT_TIMES = {"submit": "submit_time", "start": "start_time"}


class _Owners:
    """The histories of one kind of owner (the users, or the projects), as ranges of their completions."""

    def __init__(self, columns):
        self.columns = columns
        self.ranged = columns.ranged()
        self.completions = Completions(columns) if self.ranged else None
        self.histories = {}

    def histories_at(self, instant, jobs):
        if (instant, jobs.start, jobs.stop) not in self.histories:
            times = getattr(self.columns, _INSTANT_TIMES[instant])
            self.histories[instant, jobs.start, jobs.stop] = Histories.at(self.completions, times, jobs)
        return self.histories[instant, jobs.start, jobs.stop]


class VectorisedTrace:
    """One trace's arrays, shared by the predictors computed on it."""

    def __init__(self, jobs, times):
        self.columns = TraceColumns(jobs, times)
        self._owners = {}

    def values(self, predictor, instants, jobs=slice(None)):
        """``predictor``'s value for each of the trace's ``jobs`` (a slice) at each of the ``instants`` (an array
        each), or None.

        None: the predictor has no vectorised form, or it reads histories that
        are not ranges of this trace (see the module's docstring).
        """
        if self.reads_histories(predictor):
            algorithm = predictor.algorithm
            owners = self._owners_of(algorithm.by_project)
            form = _ALGORITHM_FORMS[algorithm.name]
            return [form(algorithm, owners.completions, owners.histories_at(instant, jobs)) for instant in instants]
        if PREDICTORS.get(predictor.name) is predictor and predictor.name in _STATIC_FORMS:
            static = _STATIC_FORMS[predictor.name](self.columns)[jobs]
            return [static] * len(instants)
        return None

    def build_tables(self, predictors):
        """Build the tables that ``predictors``' history readers share (ranks, range maxima, sums over the
        completions), once: before the per-job arrays of a replay are made, so that the intermediate arrays of
        their building and those are not held at once."""
        for predictor in predictors:
            if self.reads_histories(predictor):
                self.values(predictor, ("submit",), slice(0, 0))
        self.forget_histories()

    def reads_histories(self, predictor):
        """Whether ``predictor`` has a vectorised form that reads histories, and they are ranges of this trace: its
        values for a slice of the jobs are computed from that slice's histories (and tables shared by all)."""
        algorithm = predictor.algorithm
        return (algorithm is not None and algorithm.name in _ALGORITHM_FORMS
                and self._owners_of(algorithm.by_project).ranged)

    def forget_histories(self):
        """Let go of the histories computed so far (those of a slice and instant are not read again once its values
        are made)."""
        for owners in self._owners.values():
            owners.histories.clear()

    def _owners_of(self, by_project):
        if by_project not in self._owners:
            self._owners[by_project] = _Owners(self.columns.of_projects() if by_project else self.columns)
        return self._owners[by_project]
