"""Decisions: at every instant the real server started jobs, would the model have started the same ones?

A decision is a group of S records: PBS's scheduler cycle takes milliseconds, and the server writes the
S record of each job it runs, so the starts of one cycle are S records in a row, within one second of
the first. A start belongs to the next cycle instead when the job became eligible after the group's
first start (its ``etime`` is later) or was queued after it (its Q record comes later), when an E record
of a later second comes between (that end asked for a new cycle), or when it needs resources the jobs
running before the group's first start still held (the scheduler cannot have given them away in that
cycle; a vnode a job held exclusively, ``place=excl`` or the vnode's own sharing, was held whole). Given the
server's own log, the groups are its cycles instead (``server_cycles``): the starts whose "Job Run" lines come
between two of its "Scheduler sent command" lines; a job an earlier cycle of the same second ran is then read
first as not yet confirmed by its execution host (PBS's scheduler plans it from one second from now), then as
starting when its S record says; and since the server may handle a cycle's last requests to run jobs after the
cycle's end and its next command, a decision whose model starts its jobs and the first ones of the next cycle of
its second agrees (``_run_late``).

The state of a decision is rebuilt from the records before the group's first S: the jobs running with
their recorded start, vnodes and soft walltime as known then (a job whose process had ended by then,
``start + resources_used.walltime``, is *exiting*: PBS plans its end one second from now); the queued
jobs eligible at that second; fairshare usage replayed from the logs up to it (sampled at every start,
end and submission, as PBS samples at every cycle); where queued jobs may accrue ineligible time
(``replay.pbs.accrual``), their eligible time as the model's own cycles set it, one cycle after every
submission, release and end and at every group of starts. The model's ``decide`` gives the jobs it would
start; the decision agrees when the two sets of jobs are equal.

Whole seconds leave things open. A job that became eligible in the same second as the cycle may have
been seen by PBS or not (the accounting log has no sub-second times and no record of a release from
hold); a job whose process ended in that second or the one before may already have been exiting or not
(the server hears of an end from the execution host up to two seconds later); a job whose E
record was written in that second before the group's first S, or in the second before with no S
record between, may have ended after the cycle began (the server writes S records when the execution
host confirms the start, after the cycle decided, up to a second later: a real scheduler's log showed
a cycle begun at :29, before an end logged at :29, whose starts the accounting log gives at :30).
Such a decision is *ambiguous*: the model is asked with the likeliest reading first (every such job
eligible, every such process end exiting, every such E processed), then with the others (the last
same-second jobs in submission order left out, one more each time; those process ends taken as
still running; same-second E records taken as jobs still exiting), and the decision agrees if one of
these readings gives PBS's set. When a reading gives part of PBS's set, the rest may have been started
by later cycles in the same second, one triggered by each end: it is checked as the next cycle, and so on
(for each reading giving another part, up to ``MAX_SPLITS`` for the group's first cycle and one for each
later cycle; a part that is the first of PBS's starts in log order first, since a later cycle's S records
come after the earlier one's).
When several E records of the second come before the group's first S, the model is also asked for one cycle
after each end, in the order of their E records, the ends not yet processed still holding their vnodes.
When an E record of the second before follows the last S record, the cycle that end asked for may have
begun in that second, and PBS plans from the time its cycle began: the same readings are asked one second
earlier, the ends and the jobs eligible in the group's own second not yet seen. And a start of the cycle
may be confirmed in the next second, after an end of that second: when the likeliest reading starts PBS's
set and more, and the more are the first S records of the next second's decision (split from this one by
an E record of that second), the decision agrees. The report counts ambiguous decisions and those that
agree only on a reading other than the first.

PBS cycles that started nothing leave no record, so only instants with starts are compared.
"""

import bisect
import itertools
import math
from typing import NamedTuple, Tuple

from ..pbs.accrual import tracks_accrual
from ..pbs.room import is_excl

__all__ = ["Group", "DecisionCheck", "check_decisions", "decision_groups", "DecisionSummary", "summarise",
           "machine_of", "new_fairshare", "server_cycles", "usage_at_end"]

GROUP_WINDOW_S = 1
"""S records at most this far after the first of a group may belong to the same cycle."""


class Group(NamedTuple):
    """The S records of one cycle: the second and log position of the first, the jobs started in log order."""

    time: int
    order: int
    started: Tuple[str, ...]


class DecisionCheck(NamedTuple):
    """One decision compared: PBS's starts, the model's, whether they agree, whether the state was
    ambiguous (jobs eligible, processes or jobs ended, in that very second) and how many changes from the
    likeliest reading it took to agree (``left_out``); ``state`` and ``decision`` are what the model was
    given and answered (the agreeing reading if any)."""

    group: Group
    model_started: Tuple[str, ...]
    agrees: bool
    ambiguous: bool
    left_out: int
    state: object
    decision: object


class DecisionSummary(NamedTuple):
    """Counts over all decisions."""

    decisions: int
    agreeing: int
    ambiguous: int
    agreeing_on_another_reading: int


def _capacity(vnodes):
    return {(vnode.name, name): value for vnode in vnodes for name, value in vnode.available
            if isinstance(value, (int, float))}


class _Sweep:
    """The jobs of the logs walked in log order: which are in the system at a given record."""

    def __init__(self, accounting):
        self.records = sorted(accounting.jobs, key=_begin)
        self.next, self.active = 0, {}

    def at(self, order):
        """The records queued or running just before the record at ``order``, in submission order."""
        while self.next < len(self.records) and _begin(self.records[self.next]) < order:
            record = self.records[self.next]
            self.active[record.job.name] = record
            self.next += 1
        for name in [name for name, record in self.active.items() if _finish(record) < order]:
            del self.active[name]
        return sorted(self.active.values(), key=lambda record: record.job.index)


def _begin(record):
    return min([record.queued_order] + [run.start_order for run in record.runs])


def _finish(record):
    """The position after which the job is gone (its last run's end, its deletion), or a far one."""
    ends = [run.end_order for run in record.runs]
    if record.deleted_order is not None and not record.runs:
        return record.deleted_order
    if ends and None not in ends:
        return max(ends)
    return float("inf")


def _running(records, order, now):
    """The jobs running just before the record at ``order`` (at ``now``), exiting ones marked."""
    from ..pbs.cycle import Running
    running = []
    for record in records:
        run = record.run_at(order)
        if run is not None:
            running.append(Running(record.job_at(order), run.start, run.allocation, run.exiting_at(now), run.used_s))
    return running


def _free(capacity, records, order, sharing):
    free = dict(capacity)
    for record in records:
        run = record.run_at(order)
        if run is not None:
            _take(free, run.allocation, _exclusive(record.job_at(order), run.allocation, sharing), capacity)
    return free


def _exclusive(job, allocation, sharing):
    """The vnodes of ``allocation`` that ``job`` holds exclusively (``place=excl``, or the vnode's sharing)."""
    return {vnode for vnode, _ in allocation if is_excl(job.place, sharing.get(vnode, ""))}


def _take(free, allocation, exclusive=(), capacity=None):
    """Subtract ``allocation`` from ``free``, and all that is left on the vnodes in ``exclusive`` (a job holding
    them exclusively needs them untouched, and leaves nothing on them); False if some vnode would go below
    zero, or one held exclusively was in use."""
    fits = True
    for vnode in exclusive:
        for key in [key for key in free if key[0] == vnode]:
            fits = fits and free[key] == capacity[key]
            free[key] = min(free[key], 0)
    for vnode, amounts in allocation:
        for name, amount in amounts:
            if (vnode, name) in free and isinstance(amount, (int, float)) and vnode not in exclusive:
                free[vnode, name] -= amount
                fits = fits and free[vnode, name] >= 0
    return fits


def decision_groups(accounting, vnodes, server_log=None):
    """The ``Group``s of the logs' S records (see the module's docstring for the rule); with ``server_log`` (a
    ``server_log.ServerLog``), two starts whose "Job Run" lines it has are in one group exactly when no
    "Scheduler sent command" line comes between those lines (``server_cycles``)."""
    records, capacity, sweep = accounting.by_name(), _capacity(vnodes), _Sweep(accounting)
    sharing = {vnode.name: vnode.sharing for vnode in vnodes}
    ends, cycle_of = _end_records(accounting), server_cycles(server_log)
    groups, current, current_cycle, free = [], None, None, None
    for start in accounting.starts:
        record = records.get(start.name)
        if record is None:
            continue
        run = next(run for run in record.runs if run.start_order == start.order)
        exclusive = _exclusive(record.job_at(start.order), run.allocation, sharing)
        cycle = cycle_of(start.name) if run is record.runs[0] else None  # the log's line is the first run's
        if current is not None and None not in (cycle, current_cycle):
            joins = cycle == current_cycle
            if joins:
                _take(free, run.allocation, exclusive, capacity)
        else:
            joins = (current is not None and start.time - current.time <= GROUP_WINDOW_S
                     and not _end_in_a_later_second(ends, current, start)
                     and record.queued_at(current.order, current.time)
                     and _take(free, run.allocation, exclusive, capacity))
        if joins:
            current = current._replace(started=current.started + (start.name,))
            continue
        if current is not None:
            groups.append(current)
        current, current_cycle = Group(start.time, start.order, (start.name,)), cycle
        free = _free(capacity, sweep.at(start.order), start.order, sharing)
        _take(free, run.allocation, exclusive, capacity)
    if current is not None:
        groups.append(current)
    return groups


def server_cycles(server_log):
    """Job name -> the scheduler cycle that ran it, as ``server_log`` tells: the number of "Scheduler sent
    command" lines before its "Job Run" line. None without a log, for a job whose "Job Run" line it lacks, and
    for one run before the log's first such line (a log that begins within a cycle, or a ``log_events`` without
    the scheduler's events, 64, has no line for that cycle). The server sends a command only to an idle
    scheduler and logs it as it does (``send_sched_cmd``, only while no cycle has started), so the jobs run
    between two such lines were run by one cycle; but for a cycle's last requests to run jobs, which the server
    may handle after the cycle's end and the next command (``_run_late``; in 7 of the 2,724 cycles that ran jobs in
    the scheduler's own logs of the recordings)."""
    if server_log is None or not server_log.runs or not server_log.cycles:
        return lambda name: None
    cycles, runs = server_log.cycles, server_log.runs

    def cycle_of(name):
        line = runs.get(name)
        return (bisect.bisect_left(cycles, line[0]) or None) if line is not None else None
    return cycle_of


def _end_records(accounting):
    """``(position, time)`` of every E record of the logs, in log order."""
    return sorted((run.end_order, run.end) for record in accounting.jobs for run in record.runs
                  if run.end_order is not None and run.end is not None)


def _end_in_a_later_second(ends, group, start):
    """True if an E record lies between the group's first S and ``start`` in a later second than the group's:
    that end asked for a new cycle, which ``start`` then belongs to."""
    position = bisect.bisect_right(ends, (group.order, float("inf")))
    while position < len(ends) and ends[position][0] < start.order:
        if ends[position][1] > group.time:
            return True
        position += 1
    return False


class _FairshareReplay:
    """Fairshare usage replayed from the logs: decayed and sampled at every cycle the logs imply, after
    each submission, start and end record and at each release (a job's eligible time, after the records
    of that second)."""

    def __init__(self, accounting, fairshare):
        self.fairshare, self.sweep, self.next = fairshare, _Sweep(accounting), 0
        records = _record_instants(accounting)
        self.instants = sorted(records + _releases(accounting, records), key=lambda instant: instant[::-1])

    def at(self, order):
        """The usage as the scheduler knew it just before the record at ``order``."""
        while self.next < len(self.instants) and self.instants[self.next][1] < order:
            when, position = self.instants[self.next]
            self.fairshare.sample(when, _running(self.sweep.at(position + 1), position + 1, when))
            self.next += 1
        return self.fairshare


def _record_instants(accounting, starts=True):
    """``(time, position)`` of every Q, S (unless ``starts`` is false) and E record of the logs, in log order."""
    records = []
    for record in accounting.jobs:
        if record.queued_order:
            records.append((record.job.submit_time, record.queued_order))
        for run in record.runs:
            if starts:
                records.append((run.start, run.start_order))
            if run.end_order is not None:
                records.append((run.end, run.end_order))
    return sorted(records, key=lambda instant: instant[1])


def _releases(accounting, records):
    """``(eligible time, position of the last record at or before it)`` of every job released after its
    submission: the release asked for a cycle, which the logs do not record."""
    times, releases = [time for time, _ in records], []
    for record in accounting.jobs:
        eligible = record.job.eligible_time
        position = bisect.bisect_right(times, eligible) - 1
        if eligible > record.job.submit_time and position >= 0:
            releases.append((eligible, records[position][1]))
    return releases


OBIT_DELAY_S = 1
"""How long after a job's process ends (``start + resources_used.walltime``) its server most likely knows it
is exiting: the execution host's obit came 0 s after for a third of the jobs of a recording whose server
logged it, 1 s after for the others."""


class _AccrualReplay:
    """The queued jobs' eligible time as the model's cycles set it: a cycle asked of the model after each
    submission, end and release (the server asks for one at each) and at each group of starts, on the
    state the logs give (a job exiting once its server most likely knows, ``OBIT_DELAY_S``), and the jobs
    it leaves waiting accrue eligible time or not from then on."""

    def __init__(self, accounting, model, groups, fairshare=None):
        from ..pbs.accrual import Accrual
        self.accrual, self.model, self.sweep, self.next = Accrual(), model, _Sweep(accounting), 0
        self.fairshare = None if fairshare is None else _FairshareReplay(accounting, fairshare)
        cycles = _record_instants(accounting, starts=False) + [(group.time, group.order - 1) for group in groups]
        releases = _releases(accounting, _record_instants(accounting))
        self.instants = sorted(set(cycles + releases), key=lambda instant: instant[::-1])

    def at(self, order):
        """The eligible time of the queued jobs as the scheduler read it just before the record at ``order``
        (a copy)."""
        while self.next < len(self.instants) and self.instants[self.next][1] < order:
            when, position = self.instants[self.next]
            records = self.sweep.at(position + 1)
            queued = tuple(record.job_at(position + 1) for record in records
                           if record.queued_at(position + 1, when))
            if queued:
                usage = None if self.fairshare is None else self.fairshare.at(position + 1)
                running = _running(records, position + 1, when - OBIT_DELAY_S)
                state = self.model.state(when, tuple(running), queued, usage, self.accrual)
                decision = self.model.decide(self.model.policy, self.model.machine, state)
                started = {job.name for job, _ in decision.started}
                self.accrual.after_cycle(when, [job for job in queued if job.name not in started],
                                         decision.ineligible)
            self.next += 1
        return self.accrual.copy()


def usage_at_end(accounting, fairshare, server_log=None):
    """``fairshare`` (a ``Fairshare``) charged and decayed as the scheduler did through the whole logs, up to
    the cycle of their last record (``check_decisions`` goes no further than the last start); at the server's
    cycles when ``server_log`` records the MoMs' updates (``server_usage``)."""
    _usage_replay(accounting, fairshare, server_log).at(math.inf)
    return fairshare


def _usage_replay(accounting, fairshare, server_log):
    from .server_usage import ServerCycleUsage, has_updates
    if has_updates(server_log):
        return ServerCycleUsage(accounting, fairshare, server_log)
    return _FairshareReplay(accounting, fairshare)


def new_fairshare(policy, vnodes=()):
    """A fresh ``Fairshare`` for ``policy`` on ``vnodes`` (whose MoMs report usage); None without fairshare."""
    if policy.fairshare is None:
        return None
    from ..pbs.fairshare import Fairshare
    from ..pbs.vnodes import moms_of
    return Fairshare(policy.fairshare, moms=moms_of(vnodes))


def machine_of(site):
    """The placement ``Machine`` of a ``SiteModel``."""
    from ..pbs.placement import Machine
    return Machine(site.vnodes, site.policy.resources_checked, node_sort_key=site.policy.node_sort_key)


def check_decisions(accounting, site, decide=None, machine=None, fairshare=None, server_log=None):
    """A ``DecisionCheck`` per decision of the logs, the model being ``decide`` (default: the PBS model's
    ``replay.pbs.cycle.decide``) with ``site`` (a ``SiteModel``) on ``machine`` (default: its vnodes); fairshare
    usage charged at the server's own cycles when ``server_log`` (a ``server_log.ServerLog``) records the MoMs'
    updates (``server_usage``)."""
    from ..pbs import cycle
    model = _Model(site.policy, machine_of(site) if machine is None else machine,
                   cycle.decide if decide is None else decide, cycle.State, cycle.Running)
    fairshare = new_fairshare(site.policy, site.vnodes) if fairshare is None else fairshare
    replay = None if fairshare is None else _usage_replay(accounting, fairshare, server_log)
    sweep, checks, ends = _Sweep(accounting), [], _ends_by_time(accounting)
    groups, cycle_of = decision_groups(accounting, site.vnodes, server_log), server_cycles(server_log)
    accrual = None
    if tracks_accrual(site.policy):
        accrual = _AccrualReplay(accounting, model, groups, None if fairshare is None else fairshare.copy())
    start_orders = [start.order for start in accounting.starts]
    end_orders = _end_records(accounting)
    for group, after in zip(groups, groups[1:] + [None]):
        records = sweep.at(group.order)
        runs = _group_runs(records, group)
        ended = _ended_before(ends, start_orders, group)
        situation = _Situation(
            group, tuple(_running(records, group.order, group.time)),
            tuple(record.job_at(group.order) for record in records if record.queued_at(group.order, group.time)),
            tuple(_unsure_exiting(records, group.order, group.time)),
            tuple(model.running(record.job_at(group.order), run.start, run.allocation, True)
                  for record, run in ended),
            None if replay is None else replay.at(group.order).copy(),
            {name: run.allocation for name, run in runs.items()}, _ended_within(records, group),
            {name: run.start for name, run in runs.items()}, None if accrual is None else accrual.at(group.order),
            tuple(record.job.name for record, run in ended if run.end < group.time),
            _confirmed_late(end_orders, group, after) or _run_late(group, after, cycle_of),
            tuple(record.job.name for record, run in sorted(ended, key=lambda pair: pair[1].end_order)),
            _run_by_an_earlier_cycle(records, group, cycle_of))
        checks.append(_compare(model, situation))
    return checks


class _Model(NamedTuple):
    """The scheduler model a check asks: the policy, the machine, the cycle and its state's types."""

    policy: object
    machine: object
    decide: object
    state: object
    running: object


class _Situation(NamedTuple):
    """What the logs say just before a group of starts, with what whole seconds leave open: the jobs
    whose process ended that second (exiting or not yet), the jobs whose E record came that second, or
    the second before with no S record after it (gone, or still exiting when the cycle began), the jobs
    eligible that second (seen or not);
    ``ended_within``: the running jobs whose E record comes between the group's starts, in its second
    (still there for the first cycle; for a later cycle of the second, gone or not); ``starts``: the
    start each of the group's jobs has in its S record; ``end_log_order``: the names of ``ended_now`` in
    the order of their E records."""

    group: Group
    running: tuple
    queued: tuple
    unsure_exiting: tuple
    ended_now: tuple
    usage: object
    allocations: dict
    ended_within: tuple = ()
    starts: dict = None
    accrual: object = None
    ended_second_before: tuple = ()
    confirmed_late: tuple = ()
    end_log_order: tuple = ()
    unconfirmed: tuple = ()


def _ends_by_time(accounting):
    """End time -> the runs ending then, with their records."""
    ends = {}
    for record in accounting.jobs:
        for run in record.runs:
            if run.end is not None and run.end_order is not None:
                ends.setdefault(run.end, []).append((record, run))
    return ends


def _ended_before(ends, start_orders, group):
    """``(record, run)`` of the runs whose E record came before the group's first S, in its second or in the
    second before with no S record between (the cycle may have begun before the server processed them);
    ``ends`` as ``_ends_by_time`` gives them, ``start_orders`` the positions of every S record."""
    first_start = bisect.bisect_left(start_orders, group.order)
    return [(record, run) for when in (group.time - 1, group.time) for record, run in ends.get(when, ())
            if run.end_order < group.order
            and (when == group.time or bisect.bisect_left(start_orders, run.end_order) == first_start)]


def _run_by_an_earlier_cycle(records, group, cycle_of):
    """Names of the running jobs an earlier cycle of the group's second ran, as the server's log tells
    (``cycle_of``, from ``server_cycles``): their S record, which the server writes once the execution host
    has the job, comes before the group's, but may have come after its cycle began."""
    cycle = cycle_of(group.started[0])
    if cycle is None:
        return ()
    return tuple(record.job.name for record in records for run in record.runs[:1]
                 if run.start == group.time and run.start_order < group.order
                 and cycle_of(record.job.name) not in (None, cycle))


def _run_late(group, after, cycle_of):
    """The starts of the group ``after`` in log order when the server's log puts them in the cycle right after
    ``group``'s, in its second: the server may handle a cycle's last requests to run jobs after the cycle's end
    and the next command it sent (``server_cycles``), so they may be ``group``'s."""
    cycle = cycle_of(group.started[0])
    if after is None or cycle is None or after.time != group.time or cycle_of(after.started[0]) != cycle + 1:
        return ()
    return after.started


def _confirmed_late(ends, group, after):
    """The starts of the group ``after`` in log order when it is a decision of the next second that an E record
    of that second set apart (its first S records may be starts of ``group``'s cycle, confirmed late)."""
    if after is None or after.time != group.time + 1:
        return ()
    position = bisect.bisect_right(ends, (group.order, float("inf")))
    if position < len(ends) and ends[position][0] < after.order and ends[position][1] == after.time:
        return after.started
    return ()


def _ended_within(records, group):
    """Names of the jobs running at the group's first start whose E record, in the group's second, comes
    before one of its later starts: an end that may have asked for a later cycle of that second."""
    last_start = max((run.start_order for record in records if record.job.name in group.started
                      for run in record.runs if run.start_order >= group.order), default=group.order)
    return tuple(record.job.name for record in records for run in record.runs
                 if run.start_order < group.order and run.end_order is not None
                 and group.order < run.end_order < last_start and run.end == group.time)


def _group_runs(records, group):
    """Job name -> its run that starts in ``group`` (its vnodes, and the start its S record states), as the logs
    say."""
    found = {}
    for record in records:
        for run in record.runs:
            if record.job.name in group.started and run.start_order >= group.order:
                found.setdefault(record.job.name, run)
    return found


MAX_ALTERNATIVES = 8
"""At most this many states are tried for the same-second jobs of an ambiguous decision (then all left out)."""

MAX_UNSURE = 5
"""Up to this many same-second ends are tried in every combination; more: all or none. (A real server ran
eleven cycles in one second with five ends, one after each end, each starting a job the ends before it had
made room for; another, with five ends logged in one second, had processed three of them when its cycle
placed a job.)"""

MAX_SPLITS = 4
"""At most this many different parts of PBS's set, given by readings of one second, are checked for a later cycle
of the same second starting the rest (the part that is the first of PBS's starts in log order first); that later
cycle's own rest is checked from its first such part only, as before (a bound on the work of a group of many
starts)."""

MAX_READINGS = 64
"""At most this many readings of one second are asked, likeliest first (a bound on the time one
decision takes on a busy log)."""


def _eligible_readings(now, group, queued):
    """``(left_out, queued jobs)`` to try: all, then without the last jobs eligible at ``now``, one more each
    time."""
    unsure = [job for job in queued if job.eligible_time == now and job.name not in group.started]
    counts = list(range(min(len(unsure), MAX_ALTERNATIVES) + 1))
    if len(unsure) not in counts:
        counts.append(len(unsure))
    for count in counts:
        dropped = {job.name for job in unsure[len(unsure) - count:]} if count else set()
        yield count, [job for job in queued if job.name not in dropped]


def _subsets(items):
    """Subsets of ``items``, fewest first; with more than ``MAX_UNSURE`` of them, none and all."""
    if len(items) <= MAX_UNSURE:
        return [combo for size in range(len(items) + 1) for combo in itertools.combinations(items, size)]
    return [(), tuple(items)]


def _readings(situation):
    """``(changes, now, running, queued, back)``: the likeliest reading of the second first (every same-second
    end processed, every same-second process end exiting, every same-second job eligible), then the
    others; ``back`` holds the same-second ends the reading takes as not yet processed. Then, when an E
    record of the second before comes after the last S record, the cycle begun in that second (which that
    end asked for): ``now`` one second earlier, the ends of the group's second not yet processed, the jobs
    eligible in it not yet seen. With jobs an earlier cycle of the second ran (``unconfirmed``), all these
    readings with those jobs not yet confirmed by their execution host first (PBS's scheduler takes such a
    job's start as one second from now), then with the start their S records state."""
    if situation.unconfirmed:
        later = situation.group.time + 1
        yield from _readings(situation._replace(unconfirmed=(), running=tuple(
            item._replace(start=later) if item.job.name in situation.unconfirmed else item
            for item in situation.running)))
        yield from ((changes + 1,) + tuple(rest) for changes, *rest in _readings(situation._replace(unconfirmed=())))
        return
    yield from itertools.islice(_readings_at(situation, situation.group.time, (), situation.queued), MAX_READINGS)
    if situation.ended_second_before:
        earlier = situation.group.time - 1
        later = tuple(item for item in situation.ended_now if item.job.name not in situation.ended_second_before)
        queued = tuple(job for job in situation.queued if job.eligible_time <= earlier)
        readings = _readings_at(situation._replace(ended_now=tuple(
            item for item in situation.ended_now if item.job.name in situation.ended_second_before)),
            earlier, later, queued)
        yield from ((changes + 1, now, running, kept, back) for changes, now, running, kept, back
                    in itertools.islice(readings, MAX_READINGS))


def _readings_at(situation, now, unprocessed, queued):
    for back in _subsets(situation.ended_now):
        for still in _subsets(situation.unsure_exiting):
            running = [item._replace(exiting=False) if item.job.name in still else item
                       for item in situation.running] + list(unprocessed) + list(back)
            for left_out, kept in _eligible_readings(now, situation.group, queued):
                yield len(back) + len(still) + left_out, now, running, kept, tuple(unprocessed) + back


def _unsure_exiting(records, order, now):
    """Names of the running jobs whose process ended in the second ``now`` or the one before: PBS may not
    know yet (its server hears of most ends a second after them)."""
    names = []
    for record in records:
        run = record.run_at(order)
        if run is not None and run.used_s is not None and now - 1 <= run.start + run.used_s <= now:
            names.append(record.job.name)
    return names


def _ask(model, situation, now, running, queued):
    state = model.state(now, tuple(running), tuple(queued), situation.usage, situation.accrual)
    decision = model.decide(model.policy, model.machine, state)
    return state, decision, tuple(job.name for job, _ in decision.started)


def _compare(model, situation, max_splits=MAX_SPLITS):
    """The ``DecisionCheck`` of one group: of the readings that give PBS's set, the one with the fewest changes
    from the likeliest (the first of those in ``_readings``' order), else the likeliest one;
    when a reading gives part of PBS's set and jobs ended or became eligible that second, the rest may be a
    later cycle of the same second, checked with the part started (and so on: each end or release of the
    second may ask for one, as it does on the server; up to ``max_splits`` parts here, one in each later
    cycle, so that the work stays linear in the group's starts); with several ends in the second, one cycle
    after each."""
    group, first, splits = situation.group, None, []
    released_now = any(job.eligible_time == group.time for job in situation.queued)
    ambiguous = bool(situation.unsure_exiting or situation.ended_now) or any(
        job.eligible_time == group.time and job.name not in group.started for job in situation.queued)
    for changes, now, running, queued, back in sorted(_readings(situation), key=lambda reading: reading[0]):
        state, decision, started = _ask(model, situation, now, running, queued)
        agrees = sorted(started) == sorted(group.started)
        check = DecisionCheck(group, started, agrees, ambiguous, changes, state, decision)
        if agrees:
            return check
        first = first or check
        if started and set(started) < set(group.started) and \
                (situation.ended_now or situation.ended_within or released_now) and \
                all(set(started) != set(split.model_started) for split, _ in splits):
            splits.append((check, back))
    # A later cycle writes its S records after the earlier cycle's: a part that is the first of PBS's starts in log
    # order is tried first, then the others, each reading's part once.
    splits.sort(key=lambda split: set(split[0].model_started) != set(group.started[:len(split[0].model_started)]))
    for split in splits[:max_splits]:
        rest = _next_cycle(model, situation, *split)
        if rest.agrees:
            return split[0]._replace(model_started=split[0].model_started + rest.model_started, agrees=True,
                                     left_out=split[0].left_out + rest.left_out + 1)
    if len(situation.ended_now) > 1:
        each = _cycle_per_end(model, situation)
        if sorted(each.model_started) == sorted(group.started):
            return each._replace(agrees=True, left_out=first.left_out + 1)
    extra = [name for name in first.model_started if name not in group.started]
    if extra and set(group.started) <= set(first.model_started) and \
            set(extra) == set(situation.confirmed_late[:len(extra)]):
        return first._replace(agrees=True, left_out=first.left_out + 1)
    return first


def _cycle_per_end(model, situation):
    """The model asked for one cycle after each end of the second, in the order of their E records: the server
    asks for a cycle at every end it processes, and when each end reaches it while the scheduler is idle each
    gets its own (seen in a real scheduler's log: three E records of one second, then three cycles, each
    starting the job the end before it had made room for, their S records all after the three E records).
    The ends not yet processed still hold their vnodes; a job started by an earlier of these cycles runs
    from one second from now (not yet confirmed). The check of the last cycle, with every start of the
    second in ``model_started``."""
    unconfirmed, started, check = situation.group.time + 1, [], None
    position = {name: number for number, name in enumerate(situation.end_log_order)}
    ends = sorted(situation.ended_now, key=lambda item: position.get(item.job.name, len(position)))
    for processed in range(1, len(ends) + 1):
        done = {item.job.name for item in started}
        queued = [job for job in situation.queued if job.name not in done]
        running = list(situation.running) + list(ends[processed:]) + started
        state, decision, _ = _ask(model, situation, situation.group.time, running, queued)
        started += [model.running(job, unconfirmed, situation.allocations.get(job.name, allocation))
                    for job, allocation in decision.started]
        check = DecisionCheck(situation.group, tuple(item.job.name for item in started), False, True, 0, state,
                              decision)
    return check


def _next_cycle(model, situation, part, unprocessed):
    """The check of the starts ``part`` left, as a cycle of the same second after it, the ends it took as
    not yet processed (``unprocessed``) and the ends logged between the group's starts still open:
    processed by then, or not.

    The jobs the first cycle started are most likely not yet confirmed by their execution host, so they
    have no start time yet: PBS's scheduler takes it as one second from now (``query_job``, throughput
    mode). Else (the other reading) the confirmation, which writes the S record and sets the start the
    record states, came before the later cycle began: the jobs run from their recorded start (seen on the
    real server: a cycle started a job whose S record came the next second, in which another cycle, asked
    for by an end, planned its top job from that recorded start)."""
    done, unconfirmed = set(part.model_started), situation.group.time + 1
    within = set(situation.ended_within)
    ended = tuple(item._replace(exiting=True) for item in situation.running if item.job.name in within)
    rest = situation._replace(
        group=situation.group._replace(started=tuple(name for name in situation.group.started if name not in done)),
        queued=tuple(job for job in situation.queued if job.name not in done),
        ended_now=tuple(unprocessed) + ended, ended_within=(), ended_second_before=())
    first = None
    for confirmed in (False, True):
        starts = {job.name: (situation.starts or {}).get(job.name, unconfirmed) if confirmed else unconfirmed
                  for job, _ in part.decision.started}
        if confirmed and all(start == unconfirmed for start in starts.values()):
            break
        started = tuple(model.running(job, starts[job.name], situation.allocations.get(job.name, allocation))
                        for job, allocation in part.decision.started)
        check = _compare(model, rest._replace(
            running=tuple(item for item in situation.running if item.job.name not in within) + started), 1)
        if check.agrees:
            return check._replace(left_out=check.left_out + confirmed)
        first = first or check
    return first


def summarise(checks):
    """The ``DecisionSummary`` of a list of ``DecisionCheck``."""
    return DecisionSummary(len(checks), sum(1 for check in checks if check.agrees),
                           sum(1 for check in checks if check.ambiguous),
                           sum(1 for check in checks if check.agrees and check.left_out))
