"""The future the PBS scheduler plans with in one cycle, and how it finds a top job's start time.

OpenPBS 23.06 (``create_events``, ``add_event``, ``simulate_events`` and ``calc_run_time`` in its
scheduler) keeps a calendar of timed events:

- each running job ends at its planned end: start + soft walltime, extended by whole soft walltimes
  once passed (capped at walltime), else start + walltime, else five years; a job past its walltime with
  no soft walltime one second from now;
- each job started in this cycle ends at now + its planned duration;
- each top job starts at its estimated start time, on the vnodes found for it, and ends a planned
  duration later.

At one instant, ends come before starts. To estimate a top job's start, PBS copies the whole state and
walks that calendar forward: it tries the job now, and while it does not fit, it takes the next event,
rounds its time up to the next multiple of the ``opt_backfill_fuzzy`` window (off: 1 s, low, the
default: 60 s, med: 600 s, high: 3600 s, or a number of seconds; at a multiple it goes to the next
one), carries out every event up to that boundary, and tries again only if some job ended in between.
The estimated start is the time of the last event carried out, not the boundary. When no event is left
and the job still does not fit, PBS finds no start and the job does not become a top job.
"""

from typing import Callable, Dict, List, NamedTuple, Optional, Set

from .jobs import EXITING_TIME_S, PbsJob, planned_duration, planned_end
from .placement import Allocation, FutureUse, Machine, hold, is_excl, release
from .room import copy_held

__all__ = ["Event", "Calendar", "Simulation", "estimate_start"]


class Event(NamedTuple):
    """A job starting (``starts``) or ending at ``time`` on ``allocation``; ``seq`` keeps insertion order."""

    time: int
    starts: bool
    job: PbsJob
    allocation: Allocation
    seq: int

    def order(self):
        """Calendar order: by time, ends before starts at one instant, then as added."""
        return (self.time, 1 if self.starts else 0, self.seq)


class Calendar:
    """Timed events in calendar order, and how far a simulation has carried them out (``done``)."""

    def __init__(self, events=(), done=0):
        self.events: List[Event] = sorted(events, key=Event.order)
        self.done = done
        self._seq = max((event.seq for event in self.events), default=-1) + 1
        self._future = (None, None)

    @classmethod
    def of_running(cls, running, now):
        """The ends PBS plans at ``now`` for ``running`` (each with ``job``, ``start``, ``allocation`` and
        ``exiting``): an exiting job's is one second from now (``set_job_times``), the others' ``planned_end``."""
        return cls(Event(now + EXITING_TIME_S if item.exiting else planned_end(item.job, item.start, now), False,
                         item.job, item.allocation, seq)
                   for seq, item in enumerate(running))

    def copy(self):
        """An independent calendar with the same events and progress."""
        return Calendar(self.events, self.done)

    def add(self, event_time, starts, job, allocation):
        """Insert an event (PBS's ``add_event``)."""
        event = Event(event_time, starts, job, allocation, self._seq)
        self._seq += 1
        keys = [existing.order() for existing in self.events]
        position = _bisect(keys, event.order())
        self.events.insert(max(position, self.done), event)

    def add_reservation(self, job, start, allocation):
        """A top job's start and planned end."""
        self.add(start, True, job, allocation)
        self.add(start + planned_duration(job), False, job, allocation)

    def pending(self):
        """The events not carried out yet, in order."""
        return self.events[self.done:]

    def future(self, machine: Machine) -> Dict[str, List[FutureUse]]:
        """Each vnode's pending changes, as the placement walks them (kept until the calendar changes)."""
        key = (id(machine), self.done, self._seq)
        if self._future[0] == key:
            return self._future[1]
        per_vnode: Dict[str, List[FutureUse]] = {}
        for event in self.pending():
            for vnode, amounts in event.allocation:
                node = machine.by_name.get(vnode)
                exclusive = is_excl(event.job.place, node.sharing) if node is not None else False
                per_vnode.setdefault(vnode, []).append(FutureUse(event.time, event.starts, exclusive, amounts))
        self._future = (key, per_vnode)
        return per_vnode


def _bisect(keys, key):
    low, high = 0, len(keys)
    while low < high:
        middle = (low + high) // 2
        if keys[middle] <= key:
            low = middle + 1
        else:
            high = middle
    return low


class Simulation:
    """A copy of the cycle's state walked forward in time: what is held where, by whom, and the calendar."""

    def __init__(self, machine, now, used, counts, exclusive, running_jobs, calendar, hosts_sorted_by=None):
        self.machine = machine
        self.time = now
        self.used: Dict[str, Dict[str, object]] = copy_held(used)
        self.counts: Dict[str, int] = dict(counts)
        self.exclusive: Set[str] = set(exclusive)
        self.running_jobs: List[PbsJob] = list(running_jobs)
        self.calendar = calendar.copy()
        # PBS sorts its vnodes again when a job runs, the simulated starts of top jobs too, not when one ends
        # (placement.py).
        self.sorted_by: Dict[str, Dict[str, object]] = self.used
        # Its host sets (the vnodes searched host by host) are sorted again at the first search after an end,
        # on what is held then, and not when a job runs.
        self.hosts_sorted_by = self.hosts_created_by = hosts_sorted_by
        self.hosts_stale = False

    def place(self, job):
        """Where ``job`` fits at the simulated time, given the pending calendar, or None."""
        end = self.time + planned_duration(job)
        if self.hosts_stale:
            self.hosts_sorted_by = copy_held(self.used)
            self.hosts_stale = False
        return self.machine.place(job, self.used, self.exclusive, self.calendar.future(self.machine),
                                  self.time, end, self.sorted_by, self.hosts_sorted_by, self.hosts_created_by)

    def next_window(self, fuzzy_s):
        """Carry out the events up to the next fuzzy boundary after the next event; whether any job ended
        (None when no event is left)."""
        pending = self.calendar.pending()
        if not pending:
            return None
        window = fuzzy_s if fuzzy_s > 0 else 1
        boundary = (pending[0].time + window) // window * window
        ended = False
        for event in pending:
            if event.time > boundary:
                break
            self._perform(event)
            ended = ended or not event.starts
        return ended

    def _perform(self, event):
        self.time = event.time
        self.calendar.done += 1
        if self.sorted_by is self.used and self.machine.sorts_on_use:
            self.sorted_by = copy_held(self.used)
        if event.starts:
            hold(self.used, self.counts, event.allocation)
            self.sorted_by = self.used
            self.exclusive.update(self._exclusive_vnodes(event))
            self.running_jobs.append(event.job)
        else:
            self.hosts_stale = self.hosts_sorted_by is not None
            release(self.used, self.counts, event.allocation)
            self.exclusive.difference_update(self._exclusive_vnodes(event))
            self.running_jobs = [job for job in self.running_jobs if job.name != event.job.name]

    def _exclusive_vnodes(self, event):
        return {vnode for vnode, _ in event.allocation
                if vnode in self.machine.by_name and is_excl(event.job.place, self.machine.by_name[vnode].sharing)}


Check = Callable[[Simulation, PbsJob], Optional[Allocation]]


def estimate_start(simulation: Simulation, job: PbsJob, fuzzy_s: int, check: Check):
    """PBS's ``calc_run_time``: (start, allocation) of ``job`` in ``simulation``, or None if it never fits.

    ``check`` says where the job may run at the simulation's time (limits, then placement)."""
    allocation = check(simulation, job)
    while allocation is None:
        ended = simulation.next_window(fuzzy_s)
        if ended is None:
            return None
        if ended:
            allocation = check(simulation, job)
    return simulation.time, allocation
