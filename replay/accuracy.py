"""The accuracy replay: each predictor's soft walltime for every job, at submission and at start.

No scheduling is simulated: the jobs' recorded submit, start and end times
drive the clock. Events are sorted once (numpy); at one instant, predictions
come before completions:

    SUBMIT < START < END

so a prediction at instant t sees exactly the jobs that ended *strictly
before* t (a job ending at t is not yet in the history of a job starting at t:
the hook at runjob could not have seen its accounting record). That is the tie
rule. ``predict at submit`` is what the queuejob hook would have set,
``predict at start`` what the runjob hook would have set.

The history is the hooks' own in-memory store (predictor.history.MemoryHistory)
and each estimate the registry's function (replay/predictors.py), called with
the user's newest rows, newest first. Two shortcuts keep the values exact:

* a predictor with ``window == 0`` reads no history: it is called once per job
  (with an empty history), and that value stands for both instants;
* between two completions of a user's jobs the user's history does not
  change, so a value computed for one of the user's jobs is reused for the
  user's other jobs that agree on the fields the predictors declare they read
  (``ReplayPredictor.reads``; a predictor without ``reads`` is recomputed per
  job). The cache of a user is dropped at each completion of theirs.
"""

import gc
import operator
from typing import NamedTuple, Tuple

import numpy as np

from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow

from .predictors import history_capacity

__all__ = ["Predictions", "replay_accuracy", "event_order", "job_table", "NO_PREDICTION", "INSTANTS", "SUBMIT", "START", "END"]

SUBMIT, START, END = 0, 1, 2
"""Event kinds, in their order at one instant (the tie rule)."""

INSTANTS = ("submit", "start")
"""Prediction instants, indexed by event kind: queuejob's view and runjob's."""

NO_PREDICTION = -1
"""Stands for None (no soft walltime) in the prediction arrays."""

_CHUNK = 1 << 16  # events between two progress reports


class Predictions(NamedTuple):
    """``values[instant][job, predictor]``: seconds, or NO_PREDICTION."""

    names: Tuple[str, ...]
    values: np.ndarray

    def at(self, instant, name):
        """One predictor's values for every job at ``instant`` ("submit" or "start")."""
        return self.values[INSTANTS.index(instant), :, self.names.index(name)]


def _times(jobs, field):
    try:
        return np.fromiter((getattr(job, field) for job in jobs), dtype=np.int64, count=len(jobs))
    except TypeError:
        index = next(index for index, job in enumerate(jobs) if getattr(job, field) is None)
        raise ValueError("job {}: no {} (the accuracy replay needs recorded times)".format(
            jobs[index].job_id, field)) from None


def event_order(jobs):
    """``(kinds, job indexes)`` of all 3n events in time order; ties: kind, then job index."""
    count = len(jobs)
    submit, start, end = (_times(jobs, field) for field in ("submit_time", "start_time", "end_time"))
    disorder = np.flatnonzero((start < submit) | (end < start))
    if disorder.size:
        job = jobs[int(disorder[0])]
        raise ValueError("job {}: needs submit <= start <= end, got {}, {}, {}".format(
            job.job_id, job.submit_time, job.start_time, job.end_time))
    order = np.argsort(np.concatenate([submit * 3 + SUBMIT, start * 3 + START, end * 3 + END]), kind="stable")
    kinds, indexes = np.divmod(order, count) if count else (order, order)
    return kinds.tolist(), indexes.tolist()


def _static_values(jobs, predictor):
    """A history-free predictor, once per job."""
    return [predictor.estimate((), job) for job in jobs]


def _cache_keys(jobs, predictors):
    """Per job, what decides the estimates besides the history (its index if undeclared)."""
    if any(predictor.reads is None for predictor in predictors):
        return range(len(jobs))
    fields = sorted({field for predictor in predictors for field in predictor.reads})
    return list(map(operator.attrgetter(*fields), jobs)) if fields else [None] * len(jobs)


def _as_seconds(value):
    return NO_PREDICTION if value is None else value


class _HistoryReplay:
    """Walks the events; the history-reading predictors' values, with a per-user cache."""

    def __init__(self, jobs, predictors):
        self.jobs = jobs
        self.estimates = [predictor.estimate for predictor in predictors]
        self.capacity = history_capacity(predictors)
        self.store = MemoryHistory(self.capacity)
        self.keys = _cache_keys(jobs, predictors)
        self.users = [job.user for job in jobs]
        self.caches = {}
        self.values = ([None] * len(jobs), [None] * len(jobs))

    def run(self, kinds, indexes, on_progress):
        total = len(kinds)
        for begin in range(0, total, _CHUNK):
            self._run_events(kinds[begin:begin + _CHUNK], indexes[begin:begin + _CHUNK])
            if on_progress is not None:
                on_progress(min(begin + _CHUNK, total), total)
        return self.values

    def _run_events(self, kinds, indexes):
        # One flat loop with local names: it runs three times per job.
        jobs, users, keys, caches, values = self.jobs, self.users, self.keys, self.caches, self.values
        add_row, compute = self.store.add_row, self._compute
        for kind, index in zip(kinds, indexes):
            user = users[index]
            if kind == END:
                job = jobs[index]
                add_row(user, HistoryRow(job.end_time, job.job_id, job.runtime_s, job.walltime_s))
                caches.pop(user, None)
                continue
            cache = caches.get(user)
            if cache is None:
                cache = caches[user] = {}
            key = keys[index]
            found = cache.get(key)
            if found is None:
                found = cache[key] = compute(user, index)
            values[kind][index] = found

    def _compute(self, user, index):
        history = self.store.recent(user, self.capacity)
        job = self.jobs[index]
        return tuple([estimate(history, job) for estimate in self.estimates])


def _history_values(jobs, predictors, events, on_progress):
    kinds, indexes = events
    collecting = gc.isenabled()
    gc.disable()  # the loop allocates many small tuples and no cycles; collections would only cost time
    try:
        at_submit, at_start = _HistoryReplay(jobs, predictors).run(kinds, indexes, on_progress)
    finally:
        if collecting:
            gc.enable()
    return [_seconds_array(values, (len(jobs), len(predictors))) for values in (at_submit, at_start)]


def _seconds_array(rows, shape):
    """Tuples of seconds or None as an int64 array, None as NO_PREDICTION (via NaN: seconds < 2**53)."""
    values = np.array(rows, dtype=np.float64).reshape(shape)
    values[np.isnan(values)] = NO_PREDICTION
    return values.astype(np.int64)


def replay_accuracy(jobs, predictors, on_progress=None):
    """Every predictor's value for every job at submission and at start (``Predictions``).

    ``jobs`` need recorded start and end times; ``on_progress(done, total)``
    is called now and then while the events are walked.
    """
    events = event_order(jobs)  # first: it checks the recorded times
    values = np.full((len(INSTANTS), len(jobs), len(predictors)), NO_PREDICTION, dtype=np.int64)
    history_based = [index for index, predictor in enumerate(predictors) if predictor.window > 0]
    for index, predictor in enumerate(predictors):
        if predictor.window == 0:
            values[:, :, index] = [_as_seconds(value) for value in _static_values(jobs, predictor)]
    if history_based and jobs:
        computed = _history_values(jobs, [predictors[index] for index in history_based], events, on_progress)
        for instant, instant_values in enumerate(computed):
            values[instant][:, history_based] = instant_values
    return Predictions(tuple(predictor.name for predictor in predictors), values)


def job_table(jobs, predictions, first=0):
    """``(header, rows)`` with one row per job: what it was and every prediction (None: no prediction).

    ``measured`` is 0 for the warm-up jobs (the first ``first``), left out of the metrics.
    """
    names = ["{}_{}_s".format(name, instant) for name in predictions.names for instant in INSTANTS]
    header = ["job_id", "user", "queue", "submit_time", "start_time", "end_time", "walltime_s", "runtime_s",
              "measured"] + names
    return header, _job_rows(jobs, predictions, first)


def _job_rows(jobs, predictions, first):
    # [job, predictor, instant] so each row's predictions come out in the header's order.
    per_job = predictions.values.transpose(1, 2, 0).reshape(len(jobs), -1)
    for index, (job, values) in enumerate(zip(jobs, per_job.tolist())):
        yield [job.job_id, job.user, job.queue, job.submit_time, job.start_time, job.end_time, job.walltime_s,
               job.runtime_s, int(index >= first)] + [None if value == NO_PREDICTION else value for value in values]
