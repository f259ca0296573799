"""One PBS scheduling cycle: which queued jobs start now, where, and which become top jobs.

OpenPBS 23.06's scheduler (``main_sched_loop``, ``next_job``, ``is_ok_to_run``,
``should_backfill_with_job``, ``add_job_to_calendar`` in ``fifo.cpp`` and ``check.cpp``) walks the queued
jobs in its sort order and, for each one:

1. If an identical job already failed in this cycle (same select, place and job-wide resources — walltime
   included, soft walltime not — plus the queue, user, group or project when limits make them matter),
   the job fails for the same reason without being looked at.
2. A job too big for the whole machine can never run; it is passed over and never becomes a top job.
3. A job for which all the vnodes together have too little left now (or no vnode is free) does not run
   now, without its run limits being checked (the job-wide test of ``resresv_can_fit_nodepart``).
   Otherwise a job that would exceed a server or queue run limit (``max_run``, ``max_run_res``...) does
   not run now.
4. Otherwise it runs if its chunks fit on vnodes now without taking room a top job has reserved on
   them before the job would end (its planned end: soft walltime first).
5. A job that does not run becomes a top job when ``strict_ordering`` is on, backfilling is on (server
   ``backfill_depth`` is not 0, or a queue has one above 0) and fewer than ``backfill_depth`` top jobs
   exist (counted per queue for a queue with its own ``backfill_depth``, else for the server): PBS
   simulates the calendar forward to find when it could start (``calendar.estimate_start``) and
   reserves those vnodes from then on. A job over a run limit can become one too (its start is when the
   limit frees), and so can a job skipped as identical to one that failed. A job for which no start is
   found does not take a top-job place.
6. With ``strict_ordering`` and backfilling off (server ``backfill_depth`` 0), the first job that does not
   run stops the cycle for itself and every job after it in the server's job list — sorted without the
   queue priority, so under ``by_queue`` a job of a lower-priority queue that sorts before it may still
   run; with backfilling on but the job's queue's ``backfill_depth`` set to 0, it stops its queue.

Before the walk, jobs whose ``job_sort_formula`` value is at or below ``job_sort_formula_threshold``, and
with fairshare and ``enforce_no_shares`` the jobs of entities without a share, are left out of the cycle.
With ``eligible_time_enable`` on, the cycle also says which of the jobs left waiting accrue ineligible
time from now on (``accrual``): those under the threshold, and those a run limit per user, group or
project holds back, counted against the cycle's total counts (``limits.Totals``).
Jobs started in this cycle count for the vnodes, the limits and the calendar (they end a planned
duration from now) of every later decision. With fairshare, a job's requested usage is charged to its
entity for the rest of the cycle when it starts or becomes a top job, and the remaining jobs are sorted
again.

Not modelled: reservations, preemption, express queues, dedicated and prime time, job arrays'
subjob limits, ``max_jobs_to_check``, the cycle-length limit, shrink-to-fit jobs, provisioning.
"""

from typing import Dict, List, Mapping, NamedTuple, Optional, Tuple

from .accrual import INELIGIBLE_KINDS, tracks_accrual
from .calendar import Calendar, Simulation, estimate_start
from .formula import under_threshold
from .jobs import PbsJob, planned_duration
from .limits import LimitEvent, Totals, limit_failure, normalise
from .order import Walk, job_order
from .placement import Allocation, Machine, hold, is_excl
from .room import copy_held

__all__ = ["Running", "State", "Decision", "decide"]


class Running(NamedTuple):
    """A running job: started at ``start`` on ``allocation`` (its ``exec_vnode``). ``exiting``: its process
    has ended and the server is finishing it (PBS state E); PBS then plans its end one second from now.
    ``process_s``: how long its process runs, when known (a log's ``resources_used.walltime``)."""

    job: PbsJob
    start: int
    allocation: Allocation
    exiting: bool = False
    process_s: Optional[int] = None


class State(NamedTuple):
    """What the scheduler sees at ``now``: running jobs, queued jobs eligible to run (released, in a
    started and enabled queue), the fairshare usage (None without fairshare) and the queued jobs' eligible
    time (an ``accrual.Accrual``; None: each has accrued eligible time since its ``etime``)."""

    now: int
    running: Tuple[Running, ...]
    queued: Tuple[PbsJob, ...]
    fairshare: object = None
    accrual: object = None


class Decision(NamedTuple):
    """What one cycle does: jobs started in order with their vnodes, top jobs with their estimated start
    and vnodes, for every job considered but not started, why; the names of the jobs left waiting
    that accrue ineligible time from now on (empty unless ``accrual.tracks_accrual``); and the names of the
    jobs the cycle considered, in its order (the scheduler's "Considering job to run" lines)."""

    started: Tuple[Tuple[PbsJob, Allocation], ...]
    top_jobs: Tuple[Tuple[PbsJob, int, Allocation], ...]
    reasons: Mapping[str, str]
    ineligible: frozenset = frozenset()
    considered: Tuple[str, ...] = ()


NEVER_RUN = "can never run: larger than the machine"
NO_ROOM = "not enough free resources on the vnodes"
STRICT_ORDERING = "strict ordering: an earlier job could not run"
NO_SHARES = "fairshare entity has no shares (enforce_no_shares)"
UNDER_THRESHOLD = "job_sort_formula value at or below job_sort_formula_threshold"


def decide(policy, machine: Machine, state: State) -> Decision:
    """The jobs PBS starts now, and its top jobs, under ``policy`` on ``machine`` (see the module text)."""
    cycle = _Cycle(policy, machine, state)
    cycle.run()
    return Decision(tuple(cycle.started), tuple(cycle.top_jobs), dict(cycle.reasons), frozenset(cycle.ineligible),
                    tuple(cycle.considered))


def placed(policy, machine: Machine, jobs, now):
    """``(job, allocation)`` for each of ``jobs``, in order, that still finds room once the ones before hold
    theirs, placed as PBS would place it at ``now`` on vnodes otherwise free; the others are left out. For
    jobs already running when a simulation starts, whose real vnodes are not known."""
    cycle = _Cycle(policy, machine, State(now, (), ()))
    found = []
    for job in jobs:
        allocation = machine.place(job, cycle.used, cycle.exclusive, None, now, now + planned_duration(job))
        if allocation is not None:
            cycle._hold(job, allocation)
            found.append((job, allocation))
    return found


class _Failure(NamedTuple):
    reason: str
    never: bool
    limit_kind: Optional[str] = None


class _Cycle:
    """The mutable state of one cycle (a copy: ``decide`` changes none of its arguments)."""

    def __init__(self, policy, machine, state):
        self.policy, self.machine, self.now = policy, machine, state.now
        self.used: Dict[str, Dict[str, object]] = {}
        self.counts: Dict[str, int] = {}
        self.exclusive = set()
        for item in state.running:
            self._hold(item.job, item.allocation)
        # PBS's host sets are sorted when the cycle begins, not again when a job runs (only after an end)
        self.hosts_sorted_by = copy_held(self.used) if machine.sorts_on_use else None
        # run limits count running jobs only: PBS leaves exiting ones out (server_info.cpp, check_run_job)
        self.running_jobs: List[PbsJob] = [item.job for item in state.running if not item.exiting]
        self.calendar = Calendar.of_running(state.running, state.now)
        self.fairshare = state.fairshare.copy() if state.fairshare is not None else None
        if self.fairshare is not None:
            everyone = [item.job for item in state.running] + list(state.queued)
            self.fairshare.add_entities(sorted(everyone, key=lambda job: job.index))
        # a queue that is not started is skipped whole: its jobs wait (queue_info.cpp, "Queue not started")
        self.queued = tuple(job for job in state.queued if policy.queue(job.queue).started)
        self.started: List[Tuple[PbsJob, Allocation]] = []
        self.top_jobs: List[Tuple[PbsJob, int, Allocation]] = []
        self.reasons: Dict[str, str] = {}
        self.walk = None
        self.considered: List[str] = []
        self.failed_classes: Dict[tuple, _Failure] = {}
        self.server_top_jobs = 0
        self.queue_top_jobs: Dict[str, int] = {}
        self.class_uses = _class_uses(policy, machine)
        self.backfill = _backfill(policy)
        self.accrual = state.accrual
        self.ineligible = set()
        self.totals = Totals(policy, self.running_jobs) if tracks_accrual(policy) else None

    def run(self):
        """Walk the jobs as ``next_job`` does (``order.Walk``), re-sorting when PBS would."""
        self.walk = Walk(self.policy, self.queued, self.now, self.fairshare, self.accrual)
        self._without_shares()
        self._under_threshold()
        while True:
            job = self.walk.next_job()
            if job is None:
                return
            self.considered.append(job.name)
            if self._consider(job):
                self.walk.resort(self.fairshare)

    def _without_shares(self):
        """With fairshare and ``enforce_no_shares``, jobs of an entity without a share never run
        (``query_jobs``): left out of the cycle."""
        if self.fairshare is None or self.policy.fairshare is None:
            return
        for job in self.queued:
            if self.fairshare.no_shares(job):
                self.walk.considered.add(job.name)
                self.reasons[job.name] = NO_SHARES

    def _under_threshold(self):
        """Jobs whose formula value is at or below ``job_sort_formula_threshold`` are not considered at all
        in this cycle (``init_scheduling_cycle``): they neither run nor become top jobs."""
        if not self.policy.job_sort_formula or self.policy.job_sort_formula_threshold is None:
            return
        for job in self.queued:
            if under_threshold(self.policy, self.walk.values[id(job)]):
                self.walk.considered.add(job.name)
                self.reasons[job.name] = UNDER_THRESHOLD
                if self.totals is not None:
                    self.ineligible.add(job.name)

    def _consider(self, job):
        """Try ``job`` now, else as a top job; whether the cycle's state changed (PBS may re-sort)."""
        outcome = self._is_ok_to_run(job)
        if isinstance(outcome, _Failure):
            self._accrue(job, outcome)
            added = self._try_top_job(job, outcome)
            self.reasons[job.name] = outcome.reason
            self.failed_classes.setdefault(self._class_of(job), outcome)
            self._strict_stop(job)
            return added
        self._start(job, outcome)
        return True

    def _is_ok_to_run(self, job):
        """An allocation where ``job`` runs now, or why not (PBS's ``is_ok_to_run``)."""
        failed = self.failed_classes.get(self._class_of(job))
        if failed is not None:
            return failed
        if not self.machine.fits_empty(job):
            return _Failure(NEVER_RUN, True)
        if not self.machine.fits_free(job, self.used, self.exclusive):
            return _Failure(NO_ROOM, False)  # PBS's quick test, before the run limits
        over = _limit_failure(self.policy, job, self.running_jobs, self.now, self.calendar)
        if over is not None:
            return _Failure(over.reason, False, over.kind)
        allocation = self.machine.place(job, self.used, self.exclusive, self.calendar.future(self.machine),
                                        self.now, self.now + planned_duration(job),
                                        hosts_sorted_by=self.hosts_sorted_by)
        return _Failure(NO_ROOM, False) if allocation is None else allocation

    def _accrue(self, job, failure):
        """Whether ``job``, not run, accrues ineligible time: the first limit it breaks against the cycle's
        total counts, else its own failure's limit, is per user, group or project (``fifo.cpp``, then
        ``update_accruetype``); it then counts in the totals."""
        if self.totals is None:
            return
        over = self.totals.failure(job)
        kind = over.kind if over is not None else failure.limit_kind
        if kind in INELIGIBLE_KINDS:
            self.ineligible.add(job.name)
        self.totals.considered(job)

    def _start(self, job, allocation):
        self.started.append((job, allocation))
        self._hold(job, allocation)
        self.running_jobs.append(job)
        if self.totals is not None:
            self.totals.started(job)
        self.calendar.add(self.now + planned_duration(job), False, job, allocation)
        self._charge(job)

    def _hold(self, job, allocation):
        hold(self.used, self.counts, allocation)
        for vnode, _ in allocation:
            node = self.machine.by_name.get(vnode)
            if node is not None and is_excl(job.place, node.sharing):
                self.exclusive.add(vnode)

    def _charge(self, job):
        if self.fairshare is not None:
            self.fairshare.charge_started(job)

    def _try_top_job(self, job, failure):
        """PBS's ``should_backfill_with_job`` and ``add_job_to_calendar``; whether ``job`` became a top job."""
        if failure.never or not self._may_add_top_job(job):
            return False
        simulation = Simulation(self.machine, self.now, self.used, self.counts, self.exclusive,
                                self.running_jobs, self.calendar, self.hosts_sorted_by)
        found = estimate_start(simulation, job, self.policy.backfill_fuzzy_s, self._check_in_simulation)
        if found is None:
            return False
        start, allocation = found
        self.calendar.add_reservation(job, start, allocation)
        self.top_jobs.append((job, start, allocation))
        if self.policy.queue(job.queue).backfill_depth is None:
            self.server_top_jobs += 1
        else:
            self.queue_top_jobs[job.queue] = self.queue_top_jobs.get(job.queue, 0) + 1
        self._charge(job)
        return True

    def _check_in_simulation(self, simulation, job):
        if _limit_failure(self.policy, job, simulation.running_jobs, simulation.time, simulation.calendar) is not None:
            return None
        return simulation.place(job)

    def _may_add_top_job(self, job):
        if not (self.policy.strict_ordering and self.backfill):
            return False
        own_depth = self.policy.queue(job.queue).backfill_depth
        if own_depth is None:
            return self.server_top_jobs < self.policy.backfill_depth
        return self.queue_top_jobs.get(job.queue, 0) < own_depth

    def _strict_stop(self, job):
        """Strict ordering without backfilling stops the jobs after this one in the server's job list
        (``update_jobs_cant_run`` on ``sinfo->jobs``); a queue's ``backfill_depth`` of 0 stops its queue."""
        if not self.policy.strict_ordering:
            return
        if not self.backfill:
            listed = self._server_job_list()
            stopped = listed[[other.name for other in listed].index(job.name):]
        elif self.policy.queue(job.queue).backfill_depth == 0:
            stopped = tuple(other for other in self.queued if other.queue == job.queue)
        else:
            return
        for other in stopped:
            if other.name not in self.walk.considered:
                self.walk.considered.add(other.name)
                self.reasons[other.name] = STRICT_ORDERING

    def _server_job_list(self):
        """PBS's ``sinfo->jobs`` as ``sort_jobs`` leaves it: with fairshare and by_queue or round_robin, the
        queues' lists one after another; with round_robin alone, unsorted (server order); else every job
        sorted together, queue priority left out."""
        if self.fairshare is not None and self.policy.fairshare is not None and \
                (self.policy.by_queue or self.policy.round_robin):
            return [job for jobs in self.walk.lists for job in jobs]
        if self.policy.round_robin:
            return sorted(self.queued, key=lambda job: job.index)
        flat = self.policy._replace(by_queue=False, round_robin=False)
        lists = job_order(flat, self.queued, self.now, self.fairshare, self.walk.values)
        return lists[0] if lists else []

    def _class_of(self, job):
        """PBS's equivalence class (``create_resresv_set_by_resresv``)."""
        return _kept_class_key(job, self.class_uses, self.machine)


def _backfill(policy):
    """PBS's ``policy->backfill``: off when the server's ``backfill_depth`` is 0 and no queue sets one above 0."""
    return policy.backfill_depth != 0 or any((queue.backfill_depth or 0) > 0 for queue in policy.queues)


_CLASS_RESOURCES = ("cput", "walltime", "max_walltime", "min_walltime")


_LAST_CLASS_USES = [None, None, None]


def _class_uses(policy, machine):
    """What equivalence classes include: the queue (when it has limits or its own vnodes), user, group,
    project (when some limit is per user, group, project) and the job-wide resources compared (kept for
    the last policy and machine: a run asks at every cycle)."""
    if _LAST_CLASS_USES[0] is policy and _LAST_CLASS_USES[1] is machine:
        return _LAST_CLASS_USES[2]
    uses = _new_class_uses(policy, machine)
    _LAST_CLASS_USES[:] = [policy, machine, uses]
    return uses


_KEPT_CLASS_KEYS = 1 << 16


def _kept_class_key(job, uses, machine):
    """``_class_key``, kept per job object (jobs are immutable; ``uses`` holds the keys of its policy and
    machine, forgotten when too many)."""
    kept = uses["keys"].get(id(job))
    if kept is None or kept[0] is not job:
        if len(uses["keys"]) >= _KEPT_CLASS_KEYS:
            uses["keys"].clear()
        kept = uses["keys"][id(job)] = (job, _class_key(job, uses, machine))
    return kept[1]


def _new_class_uses(policy, machine):
    limits = [normalise(limit) for limit in policy.server_limits]
    limits += [normalise(limit) for queue in policy.queues for limit in queue.limits]
    kinds = {limit.kind for limit in limits}
    limited_resources = {limit.attribute.split(".", 1)[1] for limit in limits if "." in limit.attribute}
    queues_with_own = {queue.name for queue in policy.queues if queue.limits}
    queues_with_own.update(vnode.queue for vnode in machine.vnodes if vnode.queue is not None)
    resources = set(machine.resources_checked) | set(_CLASS_RESOURCES) | limited_resources
    return {"kinds": kinds, "queues": queues_with_own, "resources": resources, "keys": {}}


def _class_key(job, uses, machine):
    """Jobs with equal keys are one class: select compared on the resources PBS checks, place, job-wide
    resources, and the queue, user, group, project when they matter."""
    kinds = uses["kinds"]
    return (
        job.queue if job.queue in uses["queues"] else None,
        job.user if "u" in kinds else None,
        job.group if "g" in kinds else None,
        job.project if "p" in kinds else None,
        tuple((chunk.count,) + machine.chunk_request(chunk) for chunk in job.chunks),
        job.place,
        job.walltime_s,
        tuple(sorted((name, value) for name, value in job.resources
                     if name in uses["resources"] and name != "walltime")),
    )


def _limit_failure(policy, job, running_jobs, now, calendar):
    """The run limit starting ``job`` at ``now`` would exceed, looking ahead over the calendar's pending
    starts and ends as PBS's ``check_limits`` does (a ``limits.LimitFailure``), or None."""
    if not policy.server_limits and not policy.queue(job.queue).limits:
        return None  # no limit to break: limit_failure would say so after building the events
    events = [LimitEvent(event.time, event.job, event.starts) for event in calendar.pending()]
    return limit_failure(policy, job, running_jobs, now, events)
