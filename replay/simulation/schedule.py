"""A simulated schedule, kept compact: what a run decided, per job, in arrays.

A run's outcome is a ``ScheduledJob`` per job, but a million of them per
predictor would not fit the memory an admin's workstation offers. A
``ScheduledRun`` keeps what the run decided (start, end, the two soft
walltimes, the first reservations) in machine-integer arrays next to a
``RunFrame`` that every run of the same jobs shares (the jobs, their widths and
walltimes), and makes the ``ScheduledJob``s when they are iterated. Its columns
travel between processes as a few arrays (``RunColumns``), not as objects.
"""

from array import array
from functools import partial
from itertools import count
from typing import Callable, List, NamedTuple, Optional

import numpy as np

__all__ = ["ScheduledJob", "RunFrame", "RunColumns", "ScheduledRun", "NO_RESERVATION", "run_columns"]


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
    """What every run of the same jobs on the same machine shares; lists indexed like ``jobs`` (by submission).

    ``walltime``: the walltime a job runs with (``--default-walltime`` applied), else None;
    ``walltime_plan``: the same, else 5 years; ``count_extensions``: the extension rule's count;
    ``shared_arrays``: the metrics' arrays that are the same for every run, made once (see ``arrays``).
    """

    jobs: List
    width: List[int]
    walltime: List[Optional[int]]
    walltime_plan: List[int]
    count_extensions: Callable
    shared_arrays: dict


NO_RESERVATION = -2 ** 63
"""In ``RunColumns.reservation``: the job was never a top job."""


class RunColumns(NamedTuple):
    """What one run decided: int64 arrays by job. A soft walltime of 0 is none (a soft walltime is >= 1 s);
    ``reservation`` is the first reservation, ``NO_RESERVATION`` for none; ``reruns``: ``{job index: reruns}``
    for the few jobs the small-first safeguard ran again."""

    start: array
    end: array
    soft_queued: array
    soft_started: array
    reservation: array
    reruns: dict


def run_columns(start, end, soft_queued, soft_started, reservations, reruns):
    """``RunColumns`` from the engine's arrays, its ``{job index: first reservation}`` and its reruns."""
    reservation = array("q", [NO_RESERVATION]) * len(start)
    for index, time in reservations.items():
        reservation[index] = time
    return RunColumns(start, end, soft_queued, soft_started, reservation, reruns)


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
        rows = zip(frame.jobs, columns.start, columns.end, frame.width, frame.walltime, frame.walltime_plan,
                   columns.soft_queued, columns.soft_started, columns.reservation, count())
        for job, start, end, width, walltime, plan, queued, soft, reservation, index in rows:
            yield _scheduled((job, start, end, end - start, width, walltime, queued or None, soft or None,
                              None if reservation == NO_RESERVATION else reservation,
                              count_extensions(soft, plan, end - start) if soft else 0,
                              walltime is not None and job.runtime_s > walltime, reruns(index, 0)))

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError("job index {} out of range".format(index))
        index %= len(self)
        frame, columns = self.frame, self.columns
        job, start, end = frame.jobs[index], columns.start[index], columns.end[index]
        walltime, soft, reservation = frame.walltime[index], columns.soft_started[index], columns.reservation[index]
        return _scheduled((job, start, end, end - start, frame.width[index], walltime,
                           columns.soft_queued[index] or None, soft or None,
                           None if reservation == NO_RESERVATION else reservation,
                           frame.count_extensions(soft, frame.walltime_plan[index], end - start) if soft else 0,
                           walltime is not None and job.runtime_s > walltime, columns.reruns.get(index, 0)))

    def arrays(self):
        """The metrics' per-job numpy arrays without making a ``ScheduledJob`` per job: ``submit``, ``start``,
        ``end``, ``runtime`` (end - start), ``soft`` (the runjob soft walltime, 0 for none), ``reservation`` (-1
        for none), ``killed``, ``queues`` (objects, "-" for none), ``width`` (units held). Those that do not
        depend on the run are shared by all runs, and ``start``, ``end`` and ``soft`` are views on the run's own
        arrays: treat them all as read-only."""
        reservation = np.frombuffer(self.columns.reservation, dtype=np.int64).copy()
        reservation[reservation == NO_RESERVATION] = -1
        start, end = _view(self.columns.start), _view(self.columns.end)
        decided = {"start": start, "end": end, "runtime": end - start, "soft": _view(self.columns.soft_started),
                   "reservation": reservation}
        return dict(_shared_arrays(self.frame), **decided)


def _view(column):
    view = np.frombuffer(column, dtype=np.int64) if len(column) else np.zeros(0, dtype=np.int64)
    view.flags.writeable = False  # the run's own memory
    return view


def _shared_arrays(frame):
    shared = frame.shared_arrays
    if not shared:
        jobs, count_ = frame.jobs, len(frame.jobs)
        shared["submit"] = np.fromiter((job.submit_time for job in jobs), np.int64, count_)
        shared["killed"] = np.fromiter((walltime is not None and job.runtime_s > walltime
                                        for job, walltime in zip(jobs, frame.walltime)), np.bool_, count_)
        shared["queues"] = np.array([job.queue or "-" for job in jobs], dtype=object)
        shared["width"] = np.array(frame.width, dtype=np.int64)
        for array_ in shared.values():
            array_.flags.writeable = False
    return shared
