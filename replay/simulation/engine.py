"""The discrete-event loop: submissions, job ends and scheduling cycles on one clock.

A heap of ``(time, Kind, seq, payload)``: ``seq`` comes from ``itertools.count()``
so events at one instant run in ``Kind`` order and then in the order they were
made, and payloads are never compared. Only job ends and timer ticks go through
the heap: submissions come from the job list, sorted by submission time, and a
cycle due at an instant is a flag, which gives the same order (ends, then
submissions, then the cycle). There is no ticking clock: time jumps to the next
event. The scheduler_iteration timer is armed only at the next grid point where
a cycle could change something (see ``_arm_timer``).

The engine owns the clock, the queue and the machine; what varies is passed in:
the predictor (``replay.shared.predictors``), the job order (``replay.simulation.policies``)
and the soft-walltime extension rule (``replay.simulation.extension``).
"""

import functools
import gc
import heapq
import itertools
import math
from enum import IntEnum
from operator import attrgetter
from typing import NamedTuple, Optional

import numpy as np

from predictor.algorithms import REGISTRY, clamp
from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow

from ..shared.predictors import history_project, owner_of
from ..traces.columns import JobColumns
from .calendar import Calendar
from .extension import EXTENSIONS
from .frame import FIVE_YEARS_S, run_frame
from .max_ratio import MaxRatioWindows
from .policies import POLICIES, QueuedJob, with_starvation_threshold
from .schedule import (
    NO_WALLTIME,
    SOFT_WALLTIME_MAX,
    ScheduledJob,
    ScheduledRun,
    is_wide,
    new_columns,
    with_reservations,
)
from .scheduler import Scheduler

__all__ = ["Kind", "FIVE_YEARS_S", "SchedulerSettings", "ScheduledJob", "simulate_jobs", "simulate_run", "run_frame",
           "held_s", "requested_s"]


class Kind(IntEnum):
    """What happens at an instant; at equal times, lower kinds go first."""

    END = 0
    """A job ends (finished, or killed at its walltime): its cores are free for this instant's cycle."""
    SUBMIT = 1
    """Jobs are submitted (queuejob): they are queued before this instant's cycle."""
    CYCLE = 2
    """A scheduling cycle, after every end and submission at this instant."""


_END, _CYCLE = int(Kind.END), int(Kind.CYCLE)  # plain ints: enum lookups and comparisons are slow in hot paths


class SchedulerSettings(NamedTuple):
    """How the simulated PBS is configured; defaults are PBS's own unless noted."""

    strict_ordering: bool = True
    backfill_depth: int = 1
    policy: str = "fifo"
    extension: str = "pbs"
    selective: bool = False
    cycle_interval_s: int = 600
    default_walltime_s: Optional[int] = None  # None: as PBS, planned 5 years and never killed
    starvation_threshold_s: Optional[int] = None  # ours: a job waiting this long goes first (None: off)
    runjob_after_queued_s: Optional[int] = None  # runjob predicts again only for jobs waiting this long (None: all)


# A NamedTuple's own constructor is a Python function; tuple.__new__ builds the same tuple in C.
_queued = functools.partial(tuple.__new__, QueuedJob)
_history_row = functools.partial(tuple.__new__, HistoryRow)
_UNKNOWN = object()  # no estimate cached (None is an estimate: no soft walltime)

_MADE_AT_ONCE = 1024
"""Jobs made from the columns at a time, as the submissions reach them; progress is reported as often."""


def _made(jobs, begin, end):
    """The ``Job``s ``begin`` to ``end`` of ``jobs`` (``JobColumns`` or a list), as a list."""
    return jobs.made(begin, end) if isinstance(jobs, JobColumns) else jobs[begin:end]


def simulate_jobs(jobs, predictor, cluster, settings=SchedulerSettings(), on_progress=None):
    """Simulate ``jobs`` (``replay.traces.trace.Job``s fitting ``cluster``) once; ``ScheduledJob``s by submission.

    ``on_progress(submitted, total)``, if given, is called every thousand submissions or so and at the end.
    """
    return list(simulate_run(run_frame(jobs, cluster, settings), predictor, cluster, settings, on_progress))


def simulate_run(frame, predictor, cluster, settings=SchedulerSettings(), on_progress=None, memory=None):
    """Simulate the jobs of ``frame`` (a ``run_frame``) once: a compact ``ScheduledRun``. ``memory``: a zeroed
    buffer to write what the run decides into (``new_columns``), else arrays of its own.

    The soft walltimes are kept as int32; a run that gives one longer than that (68 years) is made again with
    int64 columns (a run is deterministic: the same run).
    """
    try:
        return ScheduledRun(frame, _Engine(frame, predictor, cluster, settings, on_progress,
                                           new_columns(len(frame.jobs), memory)).run())
    except _WideSoftWalltime:
        if memory is not None:
            np.frombuffer(memory, dtype=np.uint8)[:] = 0
        return ScheduledRun(frame, _Engine(frame, predictor, cluster, settings, on_progress,
                                           new_columns(len(frame.jobs), memory, wide=True)).run())


class _WideSoftWalltime(Exception):
    """A soft walltime the run's int32 columns cannot hold."""


def _history_store(predictor):
    """``(add_row, history_of)``: how a run keeps its completed jobs and how a prediction reads an owner's
    history. ``add_row(owner, row)`` records a job as it ends and says whether a prediction from the owner's
    history may now differ.

    v3 and v3-deployed read it only through a row of highest runtime/walltime, which ``MaxRatioWindows`` keeps
    as jobs end: their predictions change only when that row's ratio does (at about one end in seven on
    KTH-SP2). Any other predictor reads its window of newest rows, which every end changes."""
    window = predictor.window
    algorithm = predictor.algorithm
    if window and algorithm is not None and REGISTRY[algorithm.name].reads_max_ratio_row:
        store = MaxRatioWindows(window)
        return store.add_row, store.view
    store = MemoryHistory(max(window, 1))
    recent = store.recent
    return store.add_row, lambda owner: recent(owner, window)


def held_s(job, walltime_s):
    """How long ``job`` holds its cores: its occupancy (end - start; else its runtime), cut at the walltime
    if it is killed there (its runtime exceeds ``walltime_s``)."""
    held = job.runtime_s if job.occupancy_s is None else job.occupancy_s
    return held if walltime_s is None or job.runtime_s <= walltime_s else min(held, walltime_s)


def requested_s(job):
    """The walltime the user asked for (what queuejob sees), else None."""
    return job.walltime_s if job.walltime_s and job.walltime_s >= 1 else None


class _Engine:
    def __init__(self, frame, predictor, cluster, settings, on_progress, decided):
        self.jobs = frame.jobs
        # The frame's arrays through memoryviews: plain Python ints, and no page of them written, so forked
        # workers keep sharing them.
        self.submit_times, self.width, self.walltime, self.walltime_plan, self.runtime, self.held = (
            memoryview(values) for values in (frame.submit, frame.width, frame.walltime, frame.walltime_plan,
                                              frame.runtime, frame.held))
        self.predictor = predictor
        self.settings = settings
        self.extension = EXTENSIONS[settings.extension]
        self.calendar = Calendar(cluster.capacity)
        policy = with_starvation_threshold(POLICIES[settings.policy], settings.starvation_threshold_s)
        self.scheduler = Scheduler(self.calendar, policy, settings.strict_ordering,
                                   settings.backfill_depth, settings.selective)
        self._add_row, self._history_of = _history_store(predictor)
        self._owner = owner_of(predictor)  # whose history a job's prediction reads
        self.learner = predictor.learner(self.jobs) if predictor.learner is not None else None
        # A predictor that declares what it reads gives the same value for a user's jobs agreeing on those
        # fields while what it reads of their history is unchanged: one estimate per (owner, fields) until an end
        # changes that (``_history_store``).
        # The walltime among the fields read decides the walltime the job runs with, so the cached value can be
        # the soft walltime as PBS takes it, not only the estimate.
        self._reads = (attrgetter(*predictor.reads) if predictor.window and predictor.reads
                       and "walltime_s" in predictor.reads and predictor.learner is None else None)
        self._estimates = {}  # owner -> {fields read: soft walltime}, dropped when an end may change them
        self._window, self._estimate = predictor.window, predictor.estimate
        count = len(self.jobs)
        policy = self.scheduler.policy
        self.classifier = policy.classifier(self.submit_times[0]) if policy.classifies and count else None
        if self.classifier is not None:
            from ..classification import Completion, Submission, requested_cores  # only for small-first
            self._completion, self._submission, self._requested_cores = Completion, Submission, requested_cores
        # What the run decides, in arrays of machine integers: no int object per value stays alive.
        self.decided = decided
        self._soft_max = math.inf if is_wide(decided) else SOFT_WALLTIME_MAX
        self.start, self.soft_queued, self.soft_started = self.decided[:3]
        self.rerun_after, self.reruns = {}, self.decided.reruns  # the small-first safeguard, by job index
        # A Job is made (a slice of the columns at a time) when it is submitted and dropped when it ends.
        self._live, self._made, self._made_from = {}, [], 0
        self._heap = []
        self._seq = itertools.count()
        self._armed_tick = self._armed_for = self._last_cycle = None
        self._news = False  # an end or a submission since the last cycle: a cycle is due at this instant
        self._on_progress, self._count = on_progress, count

    def run(self):
        collecting = gc.isenabled()
        gc.disable()  # many small objects, no reference cycles: collections would only cost time
        try:
            return self._run()
        finally:
            if collecting:
                gc.enable()

    def _run(self):
        # Submissions come from the sorted job list and a cycle asked for at this instant is a flag: only job
        # ends and timer ticks go through the heap. Each pass of the loop is one instant, or one more round at
        # it when a job started by its cycle ended at once (zero runtime).
        heap, pop, on_end = self._heap, heapq.heappop, self._on_end
        submit_times, count, next_job = self.submit_times, self._count, 0
        next_submit = submit_times[0] if count else math.inf  # the next job's submission; inf: none left
        on_submit, scheduler, end_times = self._on_submit, self.scheduler, self.calendar.end_times
        cycle, start, arm_timer = scheduler.cycle, self._start, self._arm_timer
        timed = bool(self.settings.cycle_interval_s)
        while heap or next_job < count:
            if heap and heap[0][0] <= next_submit:
                now = heap[0][0]
                while heap and heap[0][0] == now and heap[0][1] == _END:
                    on_end(now, pop(heap)[3])
            else:
                now = next_submit
            if next_submit == now:
                next_job = on_submit(now, next_job)
                next_submit = submit_times[next_job] if next_job < count else math.inf
            timer = False
            while heap and heap[0][0] == now:  # only ticks are left at this instant
                pop(heap)
                timer = True
            if not self._news and (not timer or now == self._last_cycle):
                continue  # one cycle per instant unless something happened since (a timer met a submission)
            # The scheduling cycle.
            self._last_cycle, self._news = now, False
            if end_times and end_times[0] <= now:
                self._extend(now)
            started = cycle(now)
            if started:
                start(started, now)
            if timed and scheduler.queue:
                arm_timer(now)
        if self._on_progress is not None:
            self._on_progress(count, count)
        return with_reservations(self.decided, self.scheduler.reservations)

    def _on_submit(self, now, first):
        """Queue every job submitted at ``now`` (queuejob); the index of the next one to come."""
        submit_times, count, index = self.submit_times, self._count, first
        walltime_plan, width, soft_queued = self.walltime_plan, self.width, self.soft_queued
        submit = self.scheduler.submit
        classifier, soft_walltime = self.classifier, self._soft_walltime
        live, made, made_from = self._live, self._made, self._made_from
        while index < count and submit_times[index] == now:
            if index - made_from >= len(made):
                made, made_from = self._make_from(index)
            job = live[index] = made[index - made_from]  # kept until it ends
            # queuejob sees only what the user sent: no default walltime yet.
            soft = soft_walltime(job, index, now)
            soft_queued[index] = soft or 0  # a soft walltime is >= 1 s: 0 is none
            small = classifier is not None and self._classify(index, job)
            submit(_queued((index, now, soft or walltime_plan[index], width[index], walltime_plan[index], small)), now)
            index += 1
        self._news = True
        return index

    def _on_end(self, now, index):
        self.calendar.remove(index)
        self.scheduler.changed = True
        if now - self.start[index] < self.held[index]:
            self._rerun(index, now)
            return
        job = self._live.pop(index)  # it ends at start + held: RunColumns keeps no end
        if self.classifier is not None:
            self.classifier.observe(self._completion(index, now, self.runtime[index]))
        if self.learner is not None:
            self.learner.observe(job, now, self.runtime[index])
        if self._window:
            owner = self._owner(job)
            walltime = self.walltime[index]
            if self._add_row(owner, _history_row((now, job.job_id, self.runtime[index],
                                                  None if walltime == NO_WALLTIME else walltime,
                                                  history_project(job)))):
                self._estimates.pop(owner, None)
        if self.scheduler.queue:
            self._news = True  # with nothing waiting a cycle could not start anything

    def _extend(self, now):
        """Running jobs that outlived their plan get the next one (extend_soft_walltime)."""
        jobs, widths = self.calendar.cut_expired(now)
        plan_end = self._plan_end
        self.calendar.relink([plan_end(index, now) for index in jobs], widths, jobs)
        self.scheduler.changed = True

    def _start(self, started, now):
        """The jobs this cycle starts (runjob): predict again, plan them, and schedule their ends."""
        live, start, soft_started = self._live, self.start, self.soft_started
        heap, seq, planned_end, soft_walltime = self._heap, self._seq, self.calendar.planned_end, self._soft_walltime
        runjob_after, submit_times = self.settings.runjob_after_queued_s, self.submit_times
        walltimes, held, rerun_after = self.walltime, self.held, self.rerun_after
        walltime_plans, selective = self.walltime_plan, self.settings.selective
        for queued in started:
            index = queued.index
            start[index] = now
            job, walltime = live[index], walltimes[index]
            if walltime == NO_WALLTIME:
                walltime = None
            if walltime != job.walltime_s:
                job = job._replace(walltime_s=walltime)  # runjob sees defaults applied
            if runjob_after is None or now - submit_times[index] >= runjob_after:  # runjob predicts again
                soft_started[index] = soft_walltime(job, index, now) or 0
            elif index not in self.reruns:  # started before: it keeps the soft walltime it ran with
                soft_started[index] = self.soft_queued[index]
            run_for = held[index]  # until its end, or until the safeguard kills it
            if rerun_after and index in rerun_after and run_for > rerun_after[index]:
                run_for = rerun_after[index]
            heapq.heappush(heap, (now + run_for, _END, next(seq), index))
            # _plan_end at the start, written out: every extension rule plans a job that has not run yet its soft
            # walltime capped at the walltime (replay.simulation.extension).
            soft, plan = soft_started[index], walltime_plans[index]
            planned = plan if selective or not soft or soft > plan else soft
            end = now + (planned if planned > 0 else 1)
            if end != planned_end[index]:
                self.calendar.move(index, end)
                self.scheduler.changed = True

    # The small/large classification and its safeguard (Zrigui et al.): a job predicted small that is
    # still running once it has run the divider (rounded up to a second) is killed there and queued
    # again as large, as qrerun would; it keeps its submission time and the runjob soft walltime.

    def _classify(self, index, job):
        verdict = self.classifier.classify(self._submission(index, job.submit_time, job.user, requested_s(job),
                                                            self._requested_cores(job)))
        if verdict.small and self.scheduler.policy.reruns_false_small:
            self.rerun_after[index] = math.ceil(verdict.divider_s)
        return verdict.small

    def _rerun(self, index, now):
        del self.rerun_after[index]
        self.reruns[index] = self.reruns.get(index, 0) + 1
        walltime_plan = self.walltime_plan[index]
        self.scheduler.submit(QueuedJob(index, self.submit_times[index], self.soft_started[index] or walltime_plan,
                                        self.width[index], walltime_plan), now)
        self._news = True

    def _soft_walltime(self, job, index, now):
        """The predictor's soft walltime for ``job`` at ``now``, as PBS takes it: whole seconds in [1, walltime];
        or None."""
        reads = self._reads
        if reads is None:
            if self.learner is not None:
                soft = self.learner.estimate(job, now)
            else:
                soft = self._estimate(self._history_of(self._owner(job)) if self._window else (),
                                      job)
            return None if soft is None else self._held_soft(soft, index)
        owner = self._owner(job)
        known = self._estimates.get(owner)
        if known is None:
            known = self._estimates[owner] = {}
        fields = reads(job)
        soft = known.get(fields, _UNKNOWN)
        if soft is _UNKNOWN:
            soft = self._estimate(self._history_of(owner), job)
            soft = known[fields] = None if soft is None else self._held_soft(soft, index)
        return soft

    def _held_soft(self, soft, index):
        """``soft`` clamped as PBS takes it: whole seconds in [1, walltime]."""
        soft = clamp(int(soft), self._walltime_s(index))
        if soft > self._soft_max:
            raise _WideSoftWalltime(soft)
        return soft

    def _walltime_s(self, index):
        """The walltime job ``index`` runs with, else None."""
        walltime = self.walltime[index]
        return None if walltime == NO_WALLTIME else walltime

    def _make_from(self, index):
        """``(Jobs, index of the first)``: the ``Job``s from ``index`` on, the next few hundred, made as their
        submissions come."""
        if self._on_progress is not None:
            self._on_progress(index, self._count)
        self._made_from, self._made = index, _made(self.jobs, index, min(index + _MADE_AT_ONCE, self._count))
        return self._made, index

    def _plan_end(self, index, now):
        """When the running job ``index`` is planned to end, seen at ``now``."""
        start, soft = self.start[index], self.soft_started[index]
        elapsed = now - start
        if self.settings.selective or not soft:
            planned = self.walltime_plan[index]
        else:
            planned = self.extension.planned(soft, self.walltime_plan[index], elapsed)
        # PBS expects a job past its plan with nothing left to extend to end at now + 1.
        return start + (planned if planned > elapsed else elapsed + 1)

    def _arm_timer(self, now):
        if self.scheduler.policy.static and not self.scheduler.changed:
            # Until a running job outlives its plan, a timed cycle could not change anything.
            end_times = self.calendar.end_times
            earliest = end_times[0] if end_times else None  # the earliest planned end
            if earliest is None or earliest == self._armed_for:
                return  # the tick armed for this planned end is still ahead
        else:
            earliest = now + 1
        self._armed_for = earliest
        origin, interval = self.submit_times[0], self.settings.cycle_interval_s
        due = earliest if earliest > now else now + 1
        tick = origin - (origin - due) // interval * interval
        if tick != self._armed_tick:
            self._armed_tick = tick
            heapq.heappush(self._heap, (tick, _CYCLE, next(self._seq), None))
