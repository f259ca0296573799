"""The discrete-event loop: submissions, job ends and scheduling cycles on one clock.

A heap of ``(time, Kind, seq, payload)``: ``seq`` comes from ``itertools.count()``
so events at one instant run in ``Kind`` order and then in the order they were
made, and payloads are never compared. There is no ticking clock: time jumps to
the next event. The scheduler_iteration timer is armed only at the next grid
point where a cycle could change something (see ``_arm_timer``).

The engine owns the clock, the queue and the machine; what varies is passed in:
the predictor (``replay.predictors``), the job order (``replay.simulation.policies``)
and the soft-walltime extension rule (``replay.simulation.extension``).
"""

import heapq
import itertools
import math
from enum import IntEnum
from typing import NamedTuple, Optional

from predictor.algorithms import clamp
from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow
from ..classification import Completion, Submission
from .calendar import Calendar
from .extension import EXTENSIONS
from .policies import POLICIES, QueuedJob
from .scheduler import Scheduler

__all__ = ["Kind", "FIVE_YEARS_S", "SchedulerSettings", "ScheduledJob", "simulate_jobs", "held_s", "requested_s"]

FIVE_YEARS_S = 5 * 365 * 86400
"""What PBS plans for a job with neither soft walltime nor walltime."""


class Kind(IntEnum):
    """What happens at an instant; at equal times, lower kinds go first."""

    END = 0
    """A job ends (finished, or killed at its walltime): its cores are free for this instant's cycle."""
    SUBMIT = 1
    """Jobs are submitted (queuejob): they are queued before this instant's cycle."""
    CYCLE = 2
    """A scheduling cycle, after every end and submission at this instant."""


_END, _SUBMIT, _CYCLE = Kind.END, Kind.SUBMIT, Kind.CYCLE  # enum attribute lookups are slow in hot paths


class SchedulerSettings(NamedTuple):
    """How the simulated PBS is configured; defaults are PBS's own unless noted."""

    strict_ordering: bool = True
    backfill_depth: int = 1
    policy: str = "fifo"
    extension: str = "pbs"
    selective: bool = False
    cycle_interval_s: int = 600
    default_walltime_s: Optional[int] = None  # None: as PBS, planned 5 years and never killed


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


_PROGRESS_EVERY = 256
"""Submissions between two progress reports."""


def simulate_jobs(jobs, predictor, cluster, settings=SchedulerSettings(), on_progress=None):
    """Simulate ``jobs`` (``replay.traces.trace.Job``s fitting ``cluster``) once; ``ScheduledJob``s by submission.

    ``on_progress(submitted, total)``, if given, is called every few hundred submissions and at the end.
    """
    return _Engine(jobs, predictor, cluster, settings, on_progress).run()


def held_s(job, walltime_s):
    """How long ``job`` holds its cores: its occupancy (end - start; else its runtime), cut at the walltime
    if it is killed there (its runtime exceeds ``walltime_s``)."""
    held = job.runtime_s if job.occupancy_s is None else job.occupancy_s
    return held if walltime_s is None or job.runtime_s <= walltime_s else min(held, walltime_s)


def requested_s(job):
    """The walltime the user asked for (what queuejob sees), else None."""
    return job.walltime_s if job.walltime_s and job.walltime_s >= 1 else None


def _check_fits(job, cluster):
    if not cluster.can_run(job):
        raise ValueError("job {} cannot run here: it needs {} units (the machine has {}) for {} s".format(
            job.job_id, cluster.width(job), cluster.capacity, job.runtime_s))


class _Engine:
    def __init__(self, jobs, predictor, cluster, settings, on_progress=None):
        self.jobs = sorted(jobs, key=lambda job: job.submit_time)
        self.predictor = predictor
        self.settings = settings
        self.extension = EXTENSIONS[settings.extension]
        self.calendar = Calendar(cluster.capacity)
        self.scheduler = Scheduler(self.calendar, POLICIES[settings.policy], settings.strict_ordering,
                                   settings.backfill_depth, settings.selective)
        self.history = MemoryHistory(max(predictor.window, 1))
        policy = self.scheduler.policy
        self.classifier = policy.classifier(self.jobs[0].submit_time) if policy.classifies and self.jobs else None
        for job in self.jobs:
            _check_fits(job, cluster)
        self.width = [cluster.width(job) for job in self.jobs]
        self.walltime = [job.walltime_s if job.walltime_s and job.walltime_s >= 1 else settings.default_walltime_s
                         for job in self.jobs]
        self.walltime_plan = [walltime or FIVE_YEARS_S for walltime in self.walltime]
        self.runtime = [job.runtime_s if walltime is None else min(job.runtime_s, walltime)
                        for job, walltime in zip(self.jobs, self.walltime)]
        self.held = [held_s(job, walltime) for job, walltime in zip(self.jobs, self.walltime)]
        count = len(self.jobs)
        self.start, self.end = [None] * count, [None] * count
        self.soft_queued, self.soft_started = [None] * count, [None] * count
        self.rerun_after, self.reruns = [None] * count, [0] * count  # the small-first safeguard
        self._heap = []
        self._seq = itertools.count()
        self._cycle_pending = self._armed_tick = self._armed_for = self._last_cycle = None
        self._news = False  # an end or a submission since the last cycle
        self._on_progress, self._next_report = on_progress, 0
        # Indexed by Kind; the reporting submit handler only when asked, so that a plain run pays nothing.
        self._handlers = (self._on_end, self._on_submit if on_progress is None else self._on_submit_reporting,
                          self._on_cycle)

    def run(self):
        if self.jobs:
            self._push(self.jobs[0].submit_time, _SUBMIT, 0)
        heap, handlers, pop = self._heap, self._handlers, heapq.heappop
        while heap:
            time, kind, _, payload = pop(heap)
            handlers[kind](time, payload)
        if self._on_progress is not None:
            self._on_progress(len(self.jobs), len(self.jobs))
        return [self._outcome(index) for index in range(len(self.jobs))]

    def _on_submit_reporting(self, now, first):
        self._on_submit(now, first)
        if first >= self._next_report:  # jobs submitted at one instant come in one event: first jumps
            self._next_report = first + _PROGRESS_EVERY
            self._on_progress(first, len(self.jobs))

    def _push(self, time, kind, payload):
        heapq.heappush(self._heap, (time, kind, next(self._seq), payload))

    def _request_cycle(self, now):
        self._news = True
        if self._cycle_pending != now:
            self._cycle_pending = now
            heapq.heappush(self._heap, (now, _CYCLE, next(self._seq), None))

    def _on_submit(self, now, first):
        jobs, index = self.jobs, first
        while index < len(jobs) and jobs[index].submit_time == now:
            self._queue(index, now)
            index += 1
        if index < len(jobs):
            self._push(jobs[index].submit_time, _SUBMIT, index)
        self._request_cycle(now)

    def _queue(self, index, now):
        job = self.jobs[index]
        # queuejob sees only what the user sent: no default walltime yet.
        soft = self.soft_queued[index] = self._predict(job, index)
        walltime_plan, width = self.walltime_plan[index], self.width[index]
        small = self.classifier is not None and self._classify(index, job)
        self.scheduler.submit(QueuedJob(index, job.submit_time, soft or walltime_plan, width, walltime_plan, small),
                              now)

    def _on_end(self, now, index):
        self.calendar.remove(index)
        self.scheduler.changed = True
        if now - self.start[index] < self.held[index]:
            self._rerun(index, now)
            return
        self.end[index] = now
        job = self.jobs[index]
        if self.classifier is not None:
            self.classifier.observe(Completion(index, now, self.runtime[index]))
        if self.predictor.window:
            self.history.add_row(job.user, HistoryRow(now, job.job_id, self.runtime[index], self.walltime[index]))
        if self.scheduler.queue:
            self._request_cycle(now)  # with nothing waiting a cycle could not start anything

    def _on_cycle(self, now, _):
        self._cycle_pending = None
        if now == self._last_cycle and not self._news:
            return  # one cycle per instant unless something happened since (a timer met a submission)
        self._last_cycle, self._news = now, False
        end_times = self.calendar.end_times
        if end_times and end_times[0] <= now:
            self._extend(now)
        for job in self.scheduler.cycle(now):
            self._start(job.index, now)
        if self.scheduler.queue and self.settings.cycle_interval_s:
            self._arm_timer(now)

    def _extend(self, now):
        """Running jobs that outlived their plan get the next one (extend_soft_walltime)."""
        start, running_plan = self.start, self._running_plan
        self.calendar.replan_expired(now, lambda index: start[index] + running_plan(index, now - start[index]))
        self.scheduler.changed = True

    def _start(self, index, now):
        self.start[index] = now
        job = self.jobs[index]
        if self.walltime[index] != job.walltime_s:
            job = job._replace(walltime_s=self.walltime[index])  # runjob sees defaults applied
        self.soft_started[index] = self._predict(job, index)
        self._push(now + self._run_for(index), _END, index)
        planned_end = now + self._running_plan(index, 0)
        if planned_end != self.calendar.planned_end[index]:
            self.calendar.move(index, planned_end)
            self.scheduler.changed = True

    # The small/large classification and its safeguard (Zrigui et al.): a job predicted small that is
    # still running once it has run the divider (rounded up to a second) is killed there and queued
    # again as large, as qrerun would; it keeps its submission time and the runjob soft walltime.

    def _classify(self, index, job):
        verdict = self.classifier.classify(Submission(index, job.submit_time, job.user, requested_s(job), job.ncpus))
        if verdict.small and self.scheduler.policy.reruns_false_small:
            self.rerun_after[index] = math.ceil(verdict.divider_s)
        return verdict.small

    def _run_for(self, index):
        """How long the job runs this time: until its end, or until the safeguard kills it."""
        held, limit = self.held[index], self.rerun_after[index]
        return held if limit is None or held <= limit else limit

    def _rerun(self, index, now):
        self.rerun_after[index] = None
        self.reruns[index] += 1
        walltime_plan = self.walltime_plan[index]
        self.scheduler.submit(QueuedJob(index, self.jobs[index].submit_time, self.soft_started[index] or walltime_plan,
                                        self.width[index], walltime_plan), now)
        self._request_cycle(now)

    def _predict(self, job, index):
        window = self.predictor.window
        soft = self.predictor.estimate(self.history.recent(job.user, window) if window else (), job)
        if soft is None:
            return None
        return clamp(int(soft), self.walltime[index])

    def _running_plan(self, index, elapsed):
        soft = self.soft_started[index]
        if self.settings.selective or soft is None:
            planned = self.walltime_plan[index]
        else:
            planned = self.extension.planned(soft, self.walltime_plan[index], elapsed)
        # PBS expects a job past its plan with nothing left to extend to end at now + 1.
        return planned if planned > elapsed else elapsed + 1

    def _arm_timer(self, now):
        if self.scheduler.policy.static and not self.scheduler.changed:
            # Until a running job outlives its plan, a timed cycle could not change anything.
            earliest = self.calendar.next_end()
            if earliest is None or earliest == self._armed_for:
                return  # the tick armed for this planned end is still ahead
        else:
            earliest = now + 1
        self._armed_for = earliest
        origin, interval = self.jobs[0].submit_time, self.settings.cycle_interval_s
        tick = origin - (origin - max(earliest, now + 1)) // interval * interval
        if tick != self._armed_tick:
            self._armed_tick = tick
            self._push(tick, _CYCLE, None)

    def _outcome(self, index):
        job, start, end = self.jobs[index], self.start[index], self.end[index]
        walltime, soft = self.walltime[index], self.soft_started[index]
        killed = walltime is not None and job.runtime_s > walltime
        extensions = self.extension.count(soft, self.walltime_plan[index], end - start) if soft else 0
        return ScheduledJob(job, start, end, end - start, self.width[index], walltime, self.soft_queued[index],
                            soft, self.scheduler.reservations.get(index), extensions, killed, self.reruns[index])
