"""A whole run of jobs through the PBS scheduler model: the clock, the queue and the running jobs around
``cycle.decide``.

Each job becomes eligible at its ``eligible_time`` and, once started, holds its allocation for its
``runtime_s``. A scheduler cycle runs at every instant something happens, as PBS runs one when a job
is queued or released and when one ends, and on the ``scheduler_iteration`` timer (counted from the
first eligible time; it stops when nothing runs and nothing else is to come, since then no later
cycle could start anything). ``latency_s`` is the time between a job's end and the cycle that may
reuse its resources: the real server needs one to two seconds to process a job's end.

Events at one instant are handled in a fixed order (``Event``), then one cycle runs; or, with
``cycle_per_event``, one cycle per release and per job end, as PBS's server asks for them. Fairshare usage,
if given, is decayed and sampled at every cycle, as PBS does; so is the queued jobs' eligible time where
some of them may accrue ineligible time (``accrual``). Pure: no files, no clock.
"""

import bisect
import enum
import heapq
import itertools
import math
from typing import Mapping, NamedTuple, Sequence, Tuple

from .accrual import Accrual, tracks_accrual
from .cycle import Running, State

__all__ = ["Event", "SimulatedRun", "Hooks", "WithinSecond", "RealRuns", "simulate_run"]


class Event(enum.IntEnum):
    """What can happen at an instant, in the order handled when several happen at once."""

    END = 0
    """A job's resources come back (its end plus the latency)."""
    ELIGIBLE = 1
    """A job may run from now on."""
    ITERATION = 2
    """The scheduler_iteration timer."""


class WithinSecond(NamedTuple):
    """A real server's order of events within a second, from its log: job name -> position in that log of its
    release from hold, of the receipt of its end from its execution host (the obit) and of its finish (the E
    record); with the second each job really started and ended in (the server ran it, and finished it), since a
    position applies only where the replay's own event falls in that same second."""

    released: Mapping[str, int]
    obit: Mapping[str, int]
    finished: Mapping[str, int]
    start: Mapping[str, int]
    end: Mapping[str, int]
    cycles: Sequence[int] = ()
    """Positions of the server's requests for a scheduler cycle, sorted: events with none between them in the log
    share one cycle (none known: each event has its own)."""
    updates: Mapping[str, Sequence[Tuple[int, int, int]]] = {}
    """Job name -> ``(epoch second, position, walltime)`` of each update of its ``resources_used`` the server
    received from its MoM, in order, with the walltime it carried (a log kept at ``log_events`` 2047;
    ``replay.fidelity.server_usage``)."""
    confirmed: Mapping[str, int] = {}
    """Job name -> the position from which its start was confirmed by its execution host (its S record written):
    a later cycle of the second its start, asked for by an event at or after that position, plans the job from
    its start, not from one second later."""
    recorded_end: Mapping[str, Tuple[int, int]] = {}
    """Job name -> ``(second, position)`` of its E record, for every end, where only an accounting log orders the
    second (its positions those of ``confirmed``): which starts of the second were confirmed before the cycle that
    end asked for, where the end's place among the second's releases is not known."""


class SimulatedRun(NamedTuple):
    """Where and when the model ran a job."""

    start: int
    end: int
    allocation: tuple


class Hooks:
    """What PBS server hooks may do to a job, called by the run: ``queued`` when it becomes eligible
    (queuejob), ``started`` when a cycle starts it (runjob), each returning the job as it goes on (with a
    new soft walltime, say); ``ended`` when its resources come back. The default changes nothing."""

    def queued(self, job, now):
        """The job as queued at ``now``."""
        return job

    def started(self, job, now):
        """The job as started at ``now``."""
        return job

    def ended(self, job, now):
        """The job ended at ``now``."""

    def reserved(self, job, start, now):
        """A cycle at ``now`` made the job a top job, estimated to start at ``start``."""


class _Clock:
    """The event heap: ``(time, event, seq, job)``; ``seq`` keeps same-instant events in push order."""

    def __init__(self):
        self.heap, self.seq, self.waiting_events = [], itertools.count(), 0

    def push(self, when, event, job=None):
        heapq.heappush(self.heap, (when, event, next(self.seq), job))
        if event != Event.ITERATION:
            self.waiting_events += 1

    def pop_instant(self):
        """``(now, [(event, job), ...])``: every event of the next instant."""
        now, happened = self.heap[0][0], []
        while self.heap and self.heap[0][0] == now:
            _, event, _, job = heapq.heappop(self.heap)
            if event != Event.ITERATION:
                self.waiting_events -= 1
            happened.append((event, job))
        return now, happened


def simulate_run(policy, machine, jobs, scheduler_iteration_s=600, latency_s=0, fairshare=None, decide=None,
                 hooks=None, exiting_after_s=None, cycle_per_event=False, running_at_start=(), end_order=None,
                 within_second=None, obit_after_s=None, real_runs=None):
    """Run ``jobs`` (``PbsJob``s with their ``runtime_s``) under ``policy`` on ``machine``; a dict job name
    -> ``SimulatedRun`` for each job the model started (a job it never started is not in it).

    ``decide`` is the cycle (default ``cycle.decide``); ``fairshare`` a ``fairshare.Fairshare`` to charge;
    ``hooks`` a ``Hooks`` whose calls may change a job's soft walltime as PBS server hooks do;
    ``exiting_after_s`` maps a job's name to how long after its start its process ends: from then until
    its ``runtime_s`` is over the job is exiting (PBS plans its end one second from now). ``obit_after_s``, if
    given, maps a job's name to how long after its start the server hears of that end (its obit): the job is
    exiting from then instead, its process still ending at ``exiting_after_s``. ``real_runs`` (per event, without
    ``hooks``), if given, a ``RealRuns`` of how a real server ran the jobs: an instant where releases and ends, or
    several ends, share the second with no log to order them, or a job whose process has ended is still to be
    heard of, and the replay's state is the server's, is read the way under which its cycles start the jobs the
    server started then (``_as_started``).

    ``running_at_start``: ``Running`` items of jobs already running when the run starts (not simulated: they
    hold their vnodes until ``start + runtime_s`` and are left out of the result and of ``hooks``).

    ``cycle_per_event``: the cycles of an instant as the server asks for them (``_per_event``), the jobs
    an earlier cycle of the instant started seen as starting one second from now (their execution host
    has not confirmed them yet: PBS's scheduler then takes their start as now + 1). Otherwise one cycle
    after all the events of an instant. ``end_order`` (job name -> a rank, such as the position of its E
    record in an accounting log) orders, per event, the ends whose processes ended in the same second;
    without it they go in the order the jobs started. ``within_second`` (a ``WithinSecond``, per event only)
    puts an instant's releases and ends in the real server's order where its log has each of them in that
    second, those the server took in one cycle in one batch, and takes a job whose process ended as exiting
    from the cycle after its obit (where the job started at its real start) rather than from the second its
    process ended."""
    from .cycle import decide as pbs_decide
    decide = pbs_decide if decide is None else decide
    if real_runs is not None and hooks is not None:
        raise ValueError("real_runs: an instant read several ways would call the hooks once for each")
    hooks = Hooks() if hooks is None else hooks
    clock, queued, running, runs = _Clock(), {}, {}, {}
    accrual = Accrual() if tracks_accrual(policy) else None
    for item in running_at_start:
        running[item.job.name] = item
        clock.push(item.start + item.job.runtime_s + latency_s, Event.END, item.job)
    for job in jobs:
        clock.push(job.eligible_time, Event.ELIGIBLE, job)
    if scheduler_iteration_s and jobs:
        clock.push(min(job.eligible_time for job in jobs) + scheduler_iteration_s, Event.ITERATION)
    def instant(now, batches, queued, running, runs, fairshare, accrual, push, not_yet=(), started=None, early=()):
        """The events and cycles of one instant, in ``batches``; ``started``, if given, gets ``(name, vnodes)`` of
        each job its cycles start."""
        unconfirmed, reached = set(), None
        for batch in batches:
            for event, job in batch:
                if event == Event.END:
                    del running[job.name]
                    if job.name in runs:
                        hooks.ended(job, now)
                elif event == Event.ELIGIBLE:
                    queued[job.name] = hooks.queued(job, now)
                elif running or clock.waiting_events:
                    push(now + scheduler_iteration_s, Event.ITERATION)
            if queued:
                position = _position(now, batch, within_second) if cycle_per_event else None
                _mark_exiting(now, running, obit_after_s or exiting_after_s or {}, within_second, position, not_yet,
                              early)
                used = None if fairshare is None or not within_second or not within_second.updates else \
                    _reported(fairshare, within_second, now, position)
                confirming = position if position is not None else _recorded_end(now, batch, within_second)
                if confirming is not None:
                    reached = confirming if reached is None else max(reached, confirming)
                for job in _cycle(now, policy, machine, decide, queued, running, runs, fairshare, hooks,
                                  _unconfirmed(unconfirmed, running, within_second, reached),
                                  exiting_after_s or {}, accrual, used):
                    push(now + job.runtime_s + latency_s, Event.END, job)
                    unconfirmed.add(job.name)
                    if started is not None:
                        started.append((job.name, _vnodes(runs[job.name].allocation)))
        return started

    carried = set()  # jobs whose release the reading of the second before left to this one: taken first
    while clock.heap:
        now, happened = clock.pop_instant()
        if carried:
            happened.sort(key=lambda item: not (item[0] == Event.ELIGIBLE and item[1].name in carried))
            carried = set()
        if not cycle_per_event:
            instant(now, [happened], queued, running, runs, fairshare, accrual, clock.push)
            continue
        batches = _per_event(now, happened, running, exiting_after_s or {}, end_order or {}, within_second)
        if real_runs is not None and (within_second is None or
                                      None in [_position(now, batch, within_second) for batch in batches]):
            early = _heard_early(now, running, exiting_after_s or {}, obit_after_s or {})
            batches, not_yet, early, deferred = _as_started(now, batches, real_runs, queued, running, early,
                                                            lambda order, later=(), early=(): instant(
                now, order, dict(queued), dict(running), dict(runs), None if fairshare is None else fairshare.copy(),
                None if accrual is None else accrual.copy(), lambda *event: None, later, [], early))
            for batch in deferred:
                for event, job in batch:
                    clock.push(now + 1, event, job)
                    carried.add(job.name)
        else:
            not_yet = early = ()
        instant(now, batches, queued, running, runs, fairshare, accrual, clock.push, not_yet, early=early)
    return runs


def _heard_early(now, running, exiting_after_s, obit_after_s):
    """The running jobs not yet exiting whose process has ended by ``now`` while the server is taken to hear of
    it later (``obit_after_s``, from its E record): the server may have heard of them already."""
    return frozenset(name for name, item in running.items()
                     if not item.exiting and name in obit_after_s and name in exiting_after_s
                     and item.start + exiting_after_s[name] <= now < item.start + obit_after_s[name])


def _as_started(now, batches, real_runs, queued, running, early, trial):
    """``(batches, not_yet, early, deferred)``: how the replay reads an instant whose order, or whose exiting
    jobs, the accounting log leaves open, where the replay's state is the server's (``real_runs``, a ``RealRuns``:
    every running job, ``running``, started when it did and is one the server was running, and every queued job
    one the server had not started yet). Where releases and ends, or several ends, share the instant: ``batches``
    (each release's own first, then each end's), or the releases after the first few ends, or every end in one
    cycle after the releases, then before them; and the jobs whose process ended this second taken as exiting in
    the cycles before their own end (``not_yet`` empty: the server heard of them first, as it mostly does) or not
    (``not_yet`` those jobs). Where a release or an end asks for a cycle while jobs of ``early`` run (their process
    ended, their E record comes in a later second), each of those readings again with them exiting (the server
    heard of their ends before it wrote their E records). Where the server started a released job in the next
    second, each reading so far again with that release left to the next second (``deferred``: the cycle it asked
    for began once the second had turned), where it goes before that second's own events. The first reading, in
    that order, that makes the instant's cycles start the jobs the server started then among those the replay
    could start (``queued`` and the released), on the vnodes it started them on, else that starts those jobs; the
    first reading when none does. ``trial(batches, not_yet, early)``: ``(name, vnodes)`` of each job the instant's
    cycles would start so."""
    releases = [batch for batch in batches if all(event == Event.ELIGIBLE for event, _ in batch)]
    ends = [batch for batch in batches if all(event == Event.END for event, _ in batch)]
    runs = real_runs.runs
    opened = bool(ends) and bool(releases or len(ends) > 1)
    early = early if releases or ends else ()
    next_second = [batch for batch in releases if all(runs.get(job.name, (None,))[0] == now + 1 for _, job in batch)]
    if not (opened or early or next_second) or not _state_is_the_servers(now, real_runs, queued, running):
        return batches, (), (), ()
    real_runs.seconds += 1
    candidates = set(queued) | {job.name for batch in releases for _, job in batch}
    really = {name: _vnodes(runs[name][2]) for name in candidates if runs.get(name, (None,))[0] == now}

    def agreement(order, later=(), heard=()):
        started = dict(trial(order, later, heard))
        return 0 if set(started) != set(really) else 2 if started == really else 1

    readings = [(batches, (), ())]
    if opened:
        rest = [batch for batch in batches if batch not in releases and batch not in ends]
        orders = [batches] + ([ends[:after] + releases + ends[after:] + rest for after in range(1, len(ends) + 1)]
                              if releases else [])
        if len(ends) > 1:
            together = [[event for batch in ends for event in batch]]
            orders += [releases + together + rest] + ([together + releases + rest] if releases else [])
        ending = frozenset(job.name for batch in ends for _, job in batch)
        readings = [(order, (), ()) for order in orders] + [(order, ending, ()) for order in orders]
    if early:
        readings += [(order, later, early) for order, later, _ in list(readings)]
    if next_second:
        readings += [([batch for batch in order if batch not in next_second], later, heard)
                     for order, later, heard in list(readings)]
    best, chosen = agreement(batches), readings[0]
    for order, later, heard in readings[1:]:
        if best == 2:
            break
        score = agreement(order, later, heard)
        if score > best:
            best, chosen = score, (order, later, heard)
    deferred = [batch for batch in next_second if batch not in chosen[0]]
    if chosen[0] is not batches or chosen[1] or chosen[2]:
        real_runs.reordered += 1
    return chosen + (deferred,)


def _state_is_the_servers(now, real_runs, queued, running):
    """Whether the replay at ``now`` runs exactly the jobs the server was running (``real_runs.running_at``), each
    started when it did, and queues none the server had started."""
    runs = real_runs.runs
    for name, item in running.items():
        start, end, _ = runs.get(name, (None, None, None))
        if start != item.start or end < now:
            return False
    if any(name not in runs or runs[name][0] < now for name in queued):
        return False
    return real_runs.running_at(now) == len(running)


class RealRuns:
    """Job name -> ``(start, end, allocation)`` as a real server ran each job (end None: still running when the
    logs end), with how many it was running at an instant (started before it, ended at it or after) found by
    bisection."""

    def __init__(self, runs):
        self.runs = {name: (start, math.inf if end is None else end, allocation)  # None: still running
                     for name, (start, end, allocation) in runs.items()}
        self.seconds = self.reordered = 0  # the seconds a replay read with them, and those read otherwise
        self._starts = sorted(start for start, _, _ in self.runs.values())
        self._ends = sorted(end for _, end, _ in self.runs.values())

    def running_at(self, now):
        return bisect.bisect_left(self._starts, now) - bisect.bisect_left(self._ends, now)


def _vnodes(allocation):
    """The vnodes of an ``exec_vnode`` allocation, sorted, each once."""
    return tuple(sorted({vnode for vnode, _ in allocation}))


def _per_event(now, happened, running, exiting_after_s, end_order, within_second=None):
    """The events of an instant in the batches PBS's server asks a cycle for each: every release on its
    own, in order (each ``qrls`` asks for one); then every end on its own (the server asks for a cycle
    when it hears of each end, and on the recordings the ends of one second mostly reached the scheduler
    one by one), the earliest ended process first; among processes ended in one second, by ``end_order``,
    then in the order the jobs started; then the timer. The releases go first: a released job then waits
    in the queue for the ends' cycles of its second, whatever came first within the second. With
    ``within_second`` holding every release and end of the instant, they go in the server's order instead."""
    releases = [[item] for item in happened if item[0] == Event.ELIGIBLE]
    ends = [item for item in happened if item[0] == Event.END]
    ends.sort(key=lambda item: (running[item[1].name].start + exiting_after_s.get(item[1].name, item[1].runtime_s),
                                end_order.get(item[1].name, math.inf)))
    timer = [item for item in happened if item[0] == Event.ITERATION]
    batches = releases + [[item] for item in ends]
    if within_second is not None:
        positions = [_position(now, batch, within_second) for batch in batches]
        if None not in positions:
            batches = _server_cycles(sorted(zip(positions, batches), key=lambda pair: pair[0]), within_second.cycles)
    return batches + ([timer] if timer else [])


def _server_cycles(positioned, cycles):
    """``positioned`` ``(position, batch)`` pairs in the server's order, the ones with no request for a cycle
    between them in the server's log (``cycles``, sorted positions; none known: each its own) made one batch."""
    merged = []
    for position, batch in positioned:
        if merged and cycles and bisect.bisect_left(cycles, position) == bisect.bisect_left(cycles, merged[-1][0]):
            merged[-1] = (position, merged[-1][1] + batch)
        else:
            merged.append((position, batch))
    return [batch for _, batch in merged]


def _position(now, batch, within_second):
    """Where the real server's log puts the last event of ``batch`` at ``now`` (None: not known, or the replay's
    event is not in the second of the real one)."""
    if within_second is None:
        return None
    positions = []
    for event, job in batch:
        if event == Event.ELIGIBLE and job.eligible_time == now:
            positions.append(within_second.released.get(job.name))
        elif event == Event.END and within_second.end.get(job.name) == now:
            positions.append(within_second.finished.get(job.name))
        else:
            return None
    return None if not positions or None in positions else max(positions)


def _recorded_end(now, batch, within_second):
    """The position of the last E record of ``batch``, ends at ``now`` each in its E record's second
    (``WithinSecond.recorded_end``); None for any other batch."""
    if within_second is None or not within_second.recorded_end:
        return None
    positions = []
    for event, job in batch:
        if event != Event.END or within_second.recorded_end.get(job.name, (None,))[0] != now:
            return None
        positions.append(within_second.recorded_end[job.name][1])
    return max(positions) if positions else None


def _unconfirmed(names, running, within_second, position):
    """The jobs of ``names`` (started by an earlier cycle of this second) whose start the server had not had
    confirmed when it asked for this cycle (at ``position`` in its log, or among the accounting log's records, the
    latest this second has reached: a confirmation holds once come): all of them, but those started at their
    real start whose confirmation ``within_second`` places before ``position``."""
    if position is None or not within_second.confirmed:
        return names
    return {name for name in names if within_second.start.get(name) != running[name].start
            or within_second.confirmed.get(name, math.inf) > position}


def _mark_exiting(now, running, exiting_after_s, within_second=None, position=None, not_yet=(), early=()):
    """Running jobs whose process has ended by ``now`` are exiting, but those named in ``not_yet``; with
    ``within_second`` and the ``position`` in the server's log of the event this cycle follows, a job that started
    at its real start is exiting only once its obit comes before that position. Those named in ``early`` are
    exiting whatever ``exiting_after_s`` says."""
    for name, item in running.items():
        if name in early and not item.exiting:
            running[name] = item._replace(exiting=True)
            continue
        after = exiting_after_s.get(name)
        if item.exiting or after is None or item.start + after > now or name in not_yet:
            continue
        if position is not None and name in within_second.obit and within_second.start.get(name) == item.start:
            if within_second.obit[name] > position:
                continue
        running[name] = item._replace(exiting=True)


def _reported(fairshare, within_second, now, position):
    """``used(item, now)`` for ``Fairshare.sample``: a job that started at its real start is charged what its last
    update received before this cycle carried (before ``position`` in the server's log when known, else in an
    earlier second); any other job what the MoM model gives."""
    from .fairshare import simulated_resources_used

    def used(item, _now):
        name = item.job.name
        if within_second.start.get(name) != item.start or name not in within_second.updates:
            return simulated_resources_used(item.job, fairshare.polls.reported_walltime_s(item))
        updates = within_second.updates[name]
        last = bisect.bisect_left(updates, (now,) if position is None else (now, position)) - 1
        return simulated_resources_used(item.job, updates[last][2] if last >= 0 else 0)
    return used


def _cycle(now, policy, machine, decide, queued, running, runs, fairshare, hooks, unconfirmed=(), exiting_after_s=None,
           accrual=None, used=None):
    """One scheduler cycle at ``now``: the jobs ``decide`` starts move from ``queued`` to ``running``;
    returns them. The jobs named in ``unconfirmed`` are seen as starting one second from now; a job's
    process runs ``exiting_after_s`` (default: its whole ``runtime_s``); ``accrual``, if followed, is
    brought up to date with what the cycle says of the jobs left waiting."""
    current = tuple(sorted((item._replace(start=now + 1) if item.job.name in unconfirmed else item
                            for item in running.values()), key=lambda item: (item.start, item.job.index)))
    if fairshare is not None:
        fairshare.sample(now, current, used)  # accrues the running jobs' usage since the last cycle, then decays
    waiting = tuple(sorted(queued.values(), key=lambda job: job.index))
    decision = decide(policy, machine, State(now, current, waiting, fairshare, accrual))
    for job, start, _ in decision.top_jobs:
        hooks.reserved(job, start, now)
    started = []
    for job, allocation in decision.started:
        del queued[job.name]
        job = hooks.started(job, now)
        started.append((job, allocation))
        process_s = (exiting_after_s or {}).get(job.name, job.runtime_s)
        running[job.name] = Running(job, now, allocation, process_s=process_s)
        runs[job.name] = SimulatedRun(now, now + job.runtime_s, allocation)
    if fairshare is not None:
        fairshare.note_starts([running[job.name] for job, _ in started], now)  # each start resets its MoM's polls
    if accrual is not None:
        accrual.forget(job.name for job, _ in started)
        accrual.after_cycle(now, queued.values(), decision.ineligible)
    return [job for job, _ in started]

