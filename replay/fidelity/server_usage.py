"""Fairshare usage as the scheduler charged it, read from a server's log that records each MoM update.

From the accounting log alone, the decisions check charges fairshare usage at the cycles the records imply,
with what each MoM most likely had reported by then (``replay.pbs.mom_polls``): when, within a second or two,
a measurement reached the scheduler is the one thing no accounting log says, and on busy fairshare runs it
decides which of two users goes first. A server whose ``log_events`` includes 1024 (PBSEVENT_DEBUG3, as 2047
has) writes a line each time a running job's ``resources_used`` arrives from its MoM ("Received session ID for
job" with the first update, "Received the same SID as before" with each later one; ``node_manager.c``,
``stat_update``). Given those lines, the usage is charged as the scheduler charged it:

- a cycle is each "Scheduler sent command" line, at its second;
- the running jobs at a cycle (PBS state R) are those whose "Job Run" line came before it and whose obit
  ("Obit received") did not: a job is charged from zero at the first cycle after the one that ran it, and
  nothing once the server knows its process ended;
- a running job's ``resources_used.walltime`` at a cycle is the MoM's measurement carried by its last update
  before the cycle's line: the update received in second ``a`` carries what the MoM measured in second
  ``a - REPORT_DELAY_S`` (on three recordings on a real 23.06.06 server, 536 of 555 updates, against the
  instants ``qstat`` showed when read every second), counted from the job's start in the accounting log, never
  past the end of its process;
- a decision saw the usage charged up to the cycle that ran its first job: the last cycle line before that
  job's "Job Run" line.

A server writes its log in local time; the offset to the accounting log's epoch seconds is the most common
difference between a job's S record ``start`` and its "Job Run" line.
"""

import bisect
from collections import Counter

from ..pbs.fairshare import simulated_resources_used
from ..pbs.mom_polls import REPORT_DELAY_S

__all__ = ["has_updates", "log_offset_s", "reported_walltimes", "ServerCycleUsage"]


def has_updates(server_log):
    """Whether ``server_log`` (a ``server_log.ServerLog``, or None) records the MoMs' updates."""
    return server_log is not None and bool(server_log.updates)


def log_offset_s(accounting, server_log):
    """Seconds to add to a line's second (its local time read as UTC) to get epoch seconds."""
    differences = Counter()
    for record in accounting.jobs:
        run = record.runs[0] if record.runs else None
        line = server_log.runs.get(record.job.name)
        if run is not None and line is not None:
            differences[run.start - line[1]] += 1
    return differences.most_common(1)[0][0] if differences else 0


def reported_walltimes(accounting, server_log, offset):
    """Job name -> ``(epoch second, position, walltime)`` of each update of its ``resources_used`` in
    ``server_log`` (``offset``: ``log_offset_s``), in log order: when it arrived, where the line is, and the
    walltime it carried (the MoM's measurement of ``REPORT_DELAY_S`` before, counted from the job's S record,
    never past the end of its process). A log is written in time order, so a job's updates are in the order of
    ``(second, position)`` too."""
    if not server_log.updates:
        return {}
    runs = {record.job.name: record.runs[0] for record in accounting.jobs if record.runs}
    reported = {}
    for name, lines in server_log.updates.items():
        run = runs.get(name)
        if run is None:
            continue
        carried = []
        for position, second in lines:
            walltime = max(0, second + offset - REPORT_DELAY_S - run.start)
            carried.append((second + offset, position,
                            walltime if run.used_s is None else min(walltime, run.used_s)))
        reported[name] = carried
    return reported


class ServerCycleUsage:
    """A ``Fairshare`` charged at the server's cycles, with the MoMs' updates of its log: ``at(order)`` as
    ``decisions`` asks it, the usage just before the cycle of the S record at ``order``."""

    def __init__(self, accounting, fairshare, server_log):
        self.fairshare, self.log = fairshare, server_log
        offset = log_offset_s(accounting, server_log)
        self.cycle_seconds = [second + offset for second in server_log.cycle_seconds]
        self.reported = reported_walltimes(accounting, server_log, offset)
        self.starter = {}   # accounting position of a job's first S record -> its "Job Run" line, else its start
        events = []         # (line position, +1 the job turns R / -1 it leaves R, job name)
        self.runs = {}      # job name -> (PbsJob, start, allocation, process length or None)
        for record in accounting.jobs:
            if not record.runs:
                continue
            run = record.runs[0]
            if record.job.name not in server_log.runs:
                self.starter[run.start_order] = self._first_cycle_after(run.start)
                continue
            line = server_log.runs[record.job.name][0]
            self.starter[run.start_order] = line
            self.runs[record.job.name] = (record.job_at(run.start_order), run.start, run.allocation, run.used_s)
            events.append((line, 1, record.job.name))
            obit = server_log.obit.get(record.job.name)
            if obit is not None:
                events.append((obit, -1, record.job.name))
        self.events = sorted(events)
        self.next_event, self.next_cycle, self.running = 0, 0, {}

    def _first_cycle_after(self, second):
        """The position of the first cycle line of a later second than ``second`` (past the last line if none)."""
        later = bisect.bisect_right(self.cycle_seconds, second)
        return self.log.cycles[later] if later < len(self.log.cycles) else float("inf")

    def at(self, order):
        """The usage as the scheduler knew it at the cycle that ran the job whose S record is at ``order``: the
        last cycle line before its "Job Run" line, or, for a job the server's log does not have (a log of fewer
        days), the last of its start's second; at the end of the log for any other ``order``."""
        from ..pbs.cycle import Running
        line = self.starter.get(order, float("inf"))
        cycles = self.log.cycles
        while self.next_cycle < len(cycles) and cycles[self.next_cycle] < line:
            position, now = cycles[self.next_cycle], self.cycle_seconds[self.next_cycle]
            while self.next_event < len(self.events) and self.events[self.next_event][0] < position:
                _, change, name = self.events[self.next_event]
                if change > 0:
                    self.running[name] = Running(*self.runs[name][:3], False, self.runs[name][3])
                else:
                    self.running.pop(name, None)
                self.next_event += 1
            self.fairshare.sample(now, list(self.running.values()), self._used(now, position))
            self.next_cycle += 1
        return self.fairshare

    def _used(self, now, position):
        def used(item, _now):
            updates = self.reported.get(item.job.name, ())
            last = bisect.bisect_left(updates, (now, position)) - 1  # its last update before the cycle's line
            return simulated_resources_used(item.job, updates[last][2] if last >= 0 else 0)
        return used
