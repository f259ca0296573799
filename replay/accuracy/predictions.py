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

Two ways give the same values:

* vectorised (vectorised.py): the registry's predictors, for every job at
  once, each job's history being a range of the trace's completions sorted as
  the history store sorts them. This is how the registry's entries and their
  ``ALGORITHM:param=value`` variants are computed, unless the trace has a job
  id twice for one user (the store would replace the first row) or numbers
  too large for exact int64 arithmetic;
* the event walk: the hooks' own in-memory store
  (predictor.history.MemoryHistory) fed with each completion, and each
  estimate the registry's function (replay/predictors.py) called with the
  user's newest rows, newest first. For every other predictor. Two shortcuts
  keep it exact and quicker:

  - a predictor with ``window == 0`` reads no history: it is called once per
    job (with an empty history), and that value stands for both instants;
  - between two completions of a user's jobs the user's history does not
    change, so a value computed for one of the user's jobs is reused for the
    user's other jobs that agree on the fields the predictors declare they
    read (``ReplayPredictor.reads``; a predictor without ``reads`` is
    recomputed per job). The cache of a user is dropped at each completion of
    theirs.
"""

import array
import gc
import operator
from typing import NamedTuple, Optional, Tuple

import numpy as np

from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow

from ..shared.predictors import history_capacity, history_project, owner_of, predictor_legend
from ..traces.columns import JobColumns
from .histories import NO_PREDICTION, TraceColumns
from .vectorised import VectorisedTrace

__all__ = ["Predictions", "replay_accuracy", "event_order", "job_table", "NO_PREDICTION", "INSTANTS", "SUBMIT",
           "START", "END"]

SUBMIT, START, END = 0, 1, 2
"""Event kinds, in their order at one instant (the tie rule)."""

INSTANTS = ("submit", "start")
"""Prediction instants, indexed by event kind: queuejob's view and runjob's."""

_CHUNK = 1 << 16  # events between two progress reports
_JOBS_AT_A_TIME = 1 << 18
"""Jobs whose vectorised values are computed together: their intermediate arrays take some 25 MB."""
_INT32 = np.iinfo(np.int32)


class Predictions(NamedTuple):
    """``values[instant, job, predictor]``: seconds, or NO_PREDICTION, for the ``instants`` computed (int32 when
    every value fits, else int64).

    ``columns``: the jobs' fields as arrays (``histories.TraceColumns``), as
    the replay read them, for the metrics to reuse (None: not read).
    ``legend``: a line per predictor saying what it is.
    """

    names: Tuple[str, ...]
    instants: Tuple[str, ...]
    values: np.ndarray
    columns: Optional[TraceColumns] = None
    legend: Tuple[str, ...] = ()

    def at(self, instant, name):
        """One predictor's values for every job at ``instant`` ("submit" or "start")."""
        return self.values[self.instants.index(instant), :, self.names.index(name)]


def _times(jobs, field):
    if isinstance(jobs, JobColumns):
        missing = jobs.first_missing(field)
        if missing is not None:
            raise ValueError("job {}: no {} (the accuracy replay needs recorded times)".format(
                jobs.job_id(missing), field))
        return jobs.numbers(field)
    try:
        return np.fromiter(map(operator.attrgetter(field), jobs), dtype=np.int64, count=len(jobs))
    except TypeError:
        index = next(index for index, job in enumerate(jobs) if getattr(job, field) is None)
        raise ValueError("job {}: no {} (the accuracy replay needs recorded times)".format(
            jobs[index].job_id, field)) from None


def _checked_times(jobs):
    submit, start, end = (_times(jobs, field) for field in ("submit_time", "start_time", "end_time"))
    disorder = np.flatnonzero((start < submit) | (end < start))
    if disorder.size:
        job = jobs[int(disorder[0])]
        raise ValueError("job {}: needs submit <= start <= end, got {}, {}, {}".format(
            job.job_id, job.submit_time, job.start_time, job.end_time))
    return {"submit_time": submit, "start_time": start, "end_time": end}


def event_order(jobs, instants=INSTANTS):
    """``(kinds, job indexes)`` arrays of the events in time order; ties: kind, then job index.

    The events are each job's END and its SUBMIT and/or START for ``instants``.
    """
    order, block_kinds = _ordered(_checked_times(jobs), instants)
    return _decoded(order, block_kinds, len(jobs))


def _ordered(times, instants):
    """The events as one sorted array of ``block * jobs + job``; ``block_kinds[block]`` is the kind."""
    block_kinds = np.array([INSTANTS.index(instant) for instant in INSTANTS if instant in instants] + [END])
    fields = {SUBMIT: "submit_time", START: "start_time", END: "end_time"}
    keys = np.concatenate([times[fields[kind]] * 3 + kind for kind in block_kinds.tolist()])
    return np.argsort(keys, kind="stable"), block_kinds


def _decoded(order, block_kinds, count):
    blocks, indexes = np.divmod(order, max(count, 1))
    return block_kinds[blocks], indexes


def _static_values(jobs, predictor):
    """A history-free predictor, once per job."""
    values = (predictor.estimate((), job) for job in jobs)
    return np.fromiter((NO_PREDICTION if value is None else value for value in values), np.int64, len(jobs))


def _cache_keys(jobs, predictors):
    """Per job, what decides the estimates besides the history (its index if undeclared)."""
    if any(predictor.reads is None for predictor in predictors):
        return range(len(jobs))
    fields = sorted({field for predictor in predictors for field in predictor.reads})
    return list(map(operator.attrgetter(*fields), jobs)) if fields else [None] * len(jobs)


class _HistoryReplay:
    """Walks the events; the history-reading predictors' values, with a per-user cache.

    A computed set of values gets an id; each (instant, job) records the id of
    its values, and the values themselves are packed into arrays chunk by
    chunk, so memory stays a few bytes a job.
    """

    def __init__(self, jobs, predictors):
        self.jobs = jobs
        self.estimates = [predictor.estimate for predictor in predictors]
        self.capacity = history_capacity(predictors)
        self.store = MemoryHistory(self.capacity)
        self.keys = _cache_keys(jobs, predictors)
        self.users = list(map(owner_of(predictors[0]), jobs))  # the walk's predictors share their owner
        self.projects = [history_project(job) for job in jobs]
        self.caches = {}
        self.value_ids = [array.array("q", bytes(8 * len(jobs))) for _ in (SUBMIT, START)]  # indexed by kind
        self.packed = []
        self.computed = 0

    def run(self, order, block_kinds, on_progress):
        total = len(order)
        for begin in range(0, total, _CHUNK):
            kinds, indexes = _decoded(order[begin:begin + _CHUNK], block_kinds, len(self.jobs))
            # Python ints for one chunk at a time: lists are faster to walk than arrays, and small.
            fresh = self._run_events(kinds.tolist(), indexes.tolist(), [])
            self.packed.append(_seconds_array(fresh, len(self.estimates)))
            self.computed += len(fresh)
            if on_progress is not None:
                on_progress(min(begin + _CHUNK, total), total)
        table = np.concatenate(self.packed)
        return [table[np.frombuffer(ids, dtype=np.int64)] for ids in self.value_ids]

    def _run_events(self, kinds, indexes, fresh):
        # One flat loop with local names, no calls of our own: it runs up to three times per job.
        jobs, users, keys, caches, value_ids, projects = (self.jobs, self.users, self.keys, self.caches, self.value_ids,
                                                          self.projects)
        add_row, recent, capacity, estimates = self.store.add_row, self.store.recent, self.capacity, self.estimates
        computed = self.computed
        for kind, index in zip(kinds, indexes):
            user = users[index]
            if kind == END:
                job = jobs[index]
                add_row(user, HistoryRow(job.end_time, job.job_id, job.runtime_s, job.walltime_s, projects[index]))
                caches.pop(user, None)
                continue
            cache = caches.get(user)
            if cache is None:
                cache = caches[user] = {}
            key = keys[index]
            found = cache.get(key)
            if found is None:
                history, job = recent(user, capacity), jobs[index]
                found = cache[key] = computed + len(fresh)
                fresh.append([estimate(history, job) for estimate in estimates])
            value_ids[kind][index] = found
        return fresh


def _history_values(jobs, predictors, times, instants, on_progress):
    order, block_kinds = _ordered(times, instants)
    collecting = gc.isenabled()
    gc.disable()  # the loop allocates many small objects and no cycles; collections would only cost time
    try:
        values = _HistoryReplay(jobs, predictors).run(order, block_kinds, on_progress)
    finally:
        if collecting:
            gc.enable()
    return [values[INSTANTS.index(instant)] for instant in instants]


def _learned_values(jobs, predictor, times, instants):
    """A learning predictor's value for every job at each of ``instants``: its learner sees each completion
    at its end time, after the predictions of that instant (the tie rule)."""
    order, block_kinds = _ordered(times, instants)
    kinds, indexes = _decoded(order, block_kinds, len(jobs))
    learner = predictor.learner(jobs)
    values = {kind: np.full(len(jobs), NO_PREDICTION, dtype=np.int64) for kind in (SUBMIT, START)}
    at = {SUBMIT: times["submit_time"], START: times["start_time"]}
    for kind, index in zip(kinds.tolist(), indexes.tolist()):
        job = jobs[index]
        if kind == END:
            learner.observe(job, job.end_time, job.runtime_s)
            continue
        value = learner.estimate(job, int(at[kind][index]))
        if value is not None:
            values[kind][index] = value
    return [values[INSTANTS.index(instant)] for instant in instants]


def _seconds_array(rows, columns):
    """Lists of seconds or None as an int64 array, None as NO_PREDICTION (via NaN: seconds < 2**53)."""
    values = np.array(rows, dtype=np.float64).reshape(len(rows), columns)
    values[np.isnan(values)] = NO_PREDICTION
    return values.astype(np.int64)


def replay_accuracy(jobs, predictors, on_progress=None, instants=INSTANTS, runjob_after_queued_s=None):
    """Every predictor's value for every job at the ``instants`` (``Predictions``).

    ``jobs`` need recorded start and end times; ``on_progress(done, total)``
    is called now and then while events are walked (for predictors without a
    vectorised form; the others take seconds for a million jobs). An instant
    not asked for is not computed, unless ``runjob_after_queued_s`` needs it:
    then a job that started less than that after its submission keeps, at its
    start, its value at submission (runjob left it alone).
    """
    wanted = tuple(instant for instant in INSTANTS if instant in instants)
    if runjob_after_queued_s is None or "start" not in wanted:
        return _replayed(jobs, predictors, on_progress, wanted)
    both = _replayed(jobs, predictors, on_progress, INSTANTS)
    times = _checked_times(jobs)
    kept = times["start_time"] - times["submit_time"] < runjob_after_queued_s
    values = both.values.copy()
    values[START][kept] = values[SUBMIT][kept]
    slots = [INSTANTS.index(instant) for instant in wanted]
    return both._replace(instants=wanted, values=values[slots])


def _replayed(jobs, predictors, on_progress, instants):
    times = _checked_times(jobs)  # first: it checks them
    trace = VectorisedTrace(jobs, times) if jobs and instants else None
    if trace:
        trace.build_tables(predictors)
    values = np.full((len(instants), len(jobs), len(predictors)), NO_PREDICTION, dtype=np.int32)
    values, walked = _vectorised_values(trace, predictors, instants, values) if trace else (values, [])
    for index in walked:
        if predictors[index].learner is not None:
            for slot, instant_values in enumerate(_learned_values(jobs, predictors[index], times, instants)):
                values = _stored(values, (slot, slice(None), index), instant_values)
        elif predictors[index].window == 0:
            values = _stored(values, (slice(None), slice(None), index), _static_values(jobs, predictors[index]))
    for by_project in (False, True):  # one walk per kind of history owner: users, projects
        history_based = [index for index in walked
                         if predictors[index].window > 0 and predictors[index].by_project == by_project]
        if history_based:
            chosen = [predictors[index] for index in history_based]
            computed = _history_values(jobs, chosen, times, instants, on_progress)
            for slot, instant_values in enumerate(computed):
                for column, index in enumerate(history_based):
                    values = _stored(values, (slot, slice(None), index), instant_values[:, column])
    return Predictions(tuple(predictor.name for predictor in predictors), instants, values,
                       trace.columns if trace else None, predictor_legend(predictors))


def _stored(values, where, seconds):
    """``values`` with ``seconds`` put at ``where``: int32 while every value fits (seconds are walltimes, at most
    int32's maximum in PBS), else widened to int64 first."""
    if values.dtype == np.int32 and seconds.size and (seconds.min() < _INT32.min or seconds.max() > _INT32.max):
        values = values.astype(np.int64)
    values[where] = seconds
    return values


def _vectorised_values(trace, predictors, instants, values):
    """``(values, walked)``: ``values`` with the predictors that have a vectorised form, and the indexes of the
    others.

    The history readers are computed for a slice of the jobs at a time, so that only one slice's histories
    and intermediate arrays are held besides the tables shared by all.
    """
    walked, by_slice = [], []
    for index, predictor in enumerate(predictors):
        if trace.reads_histories(predictor):
            by_slice.append(index)
            continue
        computed = trace.values(predictor, instants)
        if computed is None:
            walked.append(index)
        for slot, instant_values in enumerate(computed or ()):
            values = _stored(values, (slot, slice(None), index), instant_values)
    for begin in range(0, len(trace.columns.jobs) if by_slice else 0, _JOBS_AT_A_TIME):
        jobs = slice(begin, begin + _JOBS_AT_A_TIME)
        for slot, instant in enumerate(instants):
            for index in by_slice:
                values = _stored(values, (slot, jobs, index), trace.values(predictors[index], (instant,), jobs)[0])
            trace.forget_histories()
    return values, walked


def job_table(jobs, predictions, first=0):
    """``(header, rows)`` with one row per job: what it was and every prediction (None: no prediction).

    ``measured`` is 0 for the warm-up jobs (the first ``first``), left out of the metrics.
    """
    names = ["{}_{}_s".format(name, instant) for name in predictions.names for instant in predictions.instants]
    header = ["job_id", "user", "queue", "submit_time", "start_time", "end_time", "walltime_s", "runtime_s",
              "measured"] + names
    return header, _job_rows(jobs, predictions, first)


def _job_rows(jobs, predictions, first):
    # [job, predictor, instant] so each row's predictions come out in the header's order.
    per_job = predictions.values.transpose(1, 2, 0).reshape(len(jobs), -1)
    for index, (job, values) in enumerate(zip(jobs, per_job.tolist())):
        yield [job.job_id, job.user, job.queue, job.submit_time, job.start_time, job.end_time, job.walltime_s,
               job.runtime_s, int(index >= first)] + [None if value == NO_PREDICTION else value for value in values]
