"""A simulated schedule, kept compact: what a run decided, per job, in arrays.

A run's outcome is a ``ScheduledJob`` per job, but a million of them per
predictor would not fit the memory an admin's workstation offers. A
``ScheduledRun`` keeps what the run decided (start, the two soft walltimes,
the first reservations of the few top jobs) in machine-integer arrays next to
a ``RunFrame`` that every run of the same jobs shares (the jobs, their widths
and walltimes), and makes the ``ScheduledJob``s when they are iterated. A
worker process writes its columns (``RunColumns``) into memory it shares with
its parent: nothing per job travels between them.
"""

from array import array
from functools import partial
from itertools import count
from typing import Callable, NamedTuple, Optional, Sequence

import numpy as np

from ..traces.columns import JobColumns

__all__ = ["ScheduledJob", "RunFrame", "RunColumns", "ScheduledRun", "NO_WALLTIME", "COLUMN_BYTES",
           "SOFT_WALLTIME_MAX", "new_columns", "is_wide", "with_reservations"]


class ScheduledJob(NamedTuple):
    """One job's simulated fate. ``runtime_s`` is end - start: how long it held its cores (cut at the walltime
    if killed)."""

    job: object
    start_time: int
    end_time: int
    runtime_s: int
    width: int
    walltime_s: Optional[int]
    soft_walltime_queued_s: Optional[int]
    soft_walltime_started_s: Optional[int]
    reservation_time: Optional[int]
    extensions: int
    killed: bool
    reruns: int = 0
    """Times the small-first safeguard killed the job and queued it again (the runs before its last)."""


# A NamedTuple's own constructor is a Python function; tuple.__new__ builds the same tuple in C.
_scheduled = partial(tuple.__new__, ScheduledJob)


class RunFrame(NamedTuple):
    """What every run of the same jobs on the same machine shares (see ``frame.py``); numpy arrays indexed like
    ``jobs`` (by submission), read-only.

    ``walltime``: the walltime a job runs with (``--default-walltime`` applied), else ``NO_WALLTIME``;
    ``walltime_plan``: the same, else 5 years; ``runtime``: how long it runs (cut at the walltime);
    ``held``: how long it holds its cores (its occupancy, cut at the walltime); ``killed``: whether it outlives
    its walltime; ``count_extensions``: the extension rule's count; ``shared_arrays``: the metrics' arrays that
    are the same for every run, made once (see ``arrays``).
    """

    jobs: Sequence
    submit: np.ndarray
    width: np.ndarray
    walltime: np.ndarray
    walltime_plan: np.ndarray
    runtime: np.ndarray
    held: np.ndarray
    killed: np.ndarray
    count_extensions: Callable
    shared_arrays: dict


NO_WALLTIME = -1
"""In ``RunFrame.walltime``: the job has no walltime (it is planned 5 years and never killed); a walltime is
>= 0."""


class RunColumns(NamedTuple):
    """What one run decided, arrays by job: ``start`` int64, the soft walltimes int32 (int64 in a run where one
    does not fit: ``new_columns``). A soft walltime of 0 is none (a soft walltime is >= 1 s).
    A job's end is not kept: it is its (last) start plus the time it holds its cores (``RunFrame.held``), the
    engine's rule for every job. ``reserved``: the indexes of the jobs that were ever a top job, ascending, and
    ``reservation`` their first reservations (numpy arrays: few jobs are top jobs); ``reruns``: ``{job index:
    reruns}`` for the few jobs the small-first safeguard ran again."""

    start: array
    soft_queued: array
    soft_started: array
    reserved: np.ndarray
    reservation: np.ndarray
    reruns: dict


COLUMN_BYTES = 8 * 3
"""Bytes a job may take in a run's ``RunColumns`` (start and the two soft walltimes, all wide)."""

SOFT_WALLTIME_MAX = np.iinfo(np.int32).max
"""The longest soft walltime the int32 columns hold."""

_NONE_RESERVED = np.zeros(0, dtype=np.int64)


def new_columns(count, memory=None, wide=False):
    """``RunColumns`` for ``count`` jobs: zeros, no reservation, no rerun; the soft walltimes int32 unless
    ``wide``. ``memory``: a zeroed writable buffer of ``COLUMN_BYTES * count`` bytes to hold them (a shared
    mapping a worker process writes into and its parent reads, nothing copied between them; the part int32
    columns leave unused is never touched), else arrays of their own."""
    soft = "q" if wide else "i"
    if memory is None:
        columns = [array("q", bytes(8 * count))] + [array(soft, bytes(8 * count if wide else 4 * count))
                                                    for _ in range(2)]
    else:
        whole = memoryview(memory).cast("B")
        columns = [whole[8 * count * number:8 * count * number + (8 if number == 0 or wide else 4) * count]
                   .cast("q" if number == 0 else soft) for number in range(3)]
    return RunColumns(*columns, reserved=_NONE_RESERVED, reservation=_NONE_RESERVED, reruns={})


def is_wide(columns):
    """Whether ``columns`` holds its soft walltimes as int64."""
    return columns.soft_queued.itemsize == 8


def with_reservations(columns, reservations):
    """``columns`` with ``{job index: first reservation}`` as its ``reserved`` and ``reservation``."""
    reserved = np.fromiter(sorted(reservations), np.int64, len(reservations))
    reservation = np.fromiter(map(reservations.__getitem__, reserved.tolist()), np.int64, len(reservations))
    return columns._replace(reserved=reserved, reservation=reservation)


class ScheduledRun:
    """One run's ``ScheduledJob``s, by submission, made on demand from its ``RunFrame`` and ``RunColumns``."""

    def __init__(self, frame, columns):
        self.frame = frame
        self.columns = columns

    def __len__(self):
        return len(self.frame.jobs)

    def __iter__(self):
        frame, columns = self.frame, self.columns
        count_extensions, reruns = frame.count_extensions, columns.reruns.get
        reservation = dict(zip(columns.reserved.tolist(), columns.reservation.tolist())).get
        rows = zip(frame.jobs, columns.start, memoryview(frame.held), memoryview(frame.width),
                   memoryview(frame.walltime), memoryview(frame.walltime_plan), memoryview(frame.killed),
                   columns.soft_queued, columns.soft_started, count())
        for job, start, held, width, walltime, plan, killed, queued, soft, index in rows:
            yield _scheduled((job, start, start + held, held, width, None if walltime == NO_WALLTIME else walltime,
                              queued or None, soft or None, reservation(index),
                              count_extensions(soft, plan, held) if soft else 0, killed, reruns(index, 0)))

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError("job index {} out of range".format(index))
        index %= len(self)
        frame, columns = self.frame, self.columns
        start, held, soft = columns.start[index], int(frame.held[index]), columns.soft_started[index]
        walltime, top = int(frame.walltime[index]), int(np.searchsorted(columns.reserved, index))
        reserved = top < len(columns.reserved) and int(columns.reserved[top]) == index
        return _scheduled((frame.jobs[index], start, start + held, held, int(frame.width[index]),
                           None if walltime == NO_WALLTIME else walltime, columns.soft_queued[index] or None,
                           soft or None, int(columns.reservation[top]) if reserved else None,
                           frame.count_extensions(soft, int(frame.walltime_plan[index]), held) if soft else 0,
                           bool(frame.killed[index]), columns.reruns.get(index, 0)))

    def arrays(self):
        """The metrics' per-job numpy arrays without making a ``ScheduledJob`` per job: ``submit``, ``start``,
        ``end`` (int64), ``runtime`` (end - start; int32 or int64, as ``soft`` and ``width``), ``soft`` (the
        runjob soft walltime, 0 for none), ``reservation`` (-1 for none), ``killed``, ``queues`` (objects, "-"
        for none), ``width`` (units held). Those that do not depend on the run are shared by all runs, and
        ``start``, ``runtime`` and ``soft`` are views on arrays the run holds: treat them all as read-only."""
        reservation = np.full(len(self), -1, dtype=np.int64)
        reservation[self.columns.reserved] = self.columns.reservation
        start, runtime = _view(self.columns.start), self.frame.held.view()
        runtime.flags.writeable = False
        decided = {"start": start, "end": start + runtime, "runtime": runtime, "soft": _view(self.columns.soft_started),
                   "reservation": reservation}
        return dict(_shared_arrays(self.frame), **decided)


def _view(column):
    dtype = np.int64 if column.itemsize == 8 else np.int32
    view = np.frombuffer(column, dtype=dtype) if len(column) else np.zeros(0, dtype=dtype)
    view.flags.writeable = False  # the run's own memory
    return view


def _shared_arrays(frame):
    shared = frame.shared_arrays
    if not shared:
        shared.update(submit=frame.submit.view(), killed=frame.killed.view(), queues=_queues(frame.jobs),
                      width=frame.width.view())  # views: read-only here, whoever else holds the arrays
        for array_ in shared.values():
            array_.flags.writeable = False
    return shared


def _queues(jobs):
    """Each job's queue as an object array, "-" for none."""
    if not isinstance(jobs, JobColumns):
        return np.array([job.queue or "-" for job in jobs], dtype=object)
    codes, names = jobs.name_codes("queue")
    lookup = np.array([name or "-" for name in names] + ["-"], dtype=object)  # code -1 (none): the last
    return lookup[codes]
