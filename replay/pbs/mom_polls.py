"""When each MoM measures its jobs: the ``resources_used`` the scheduler sees, as OpenPBS 23.06 reports it.

Fairshare charges a running job what its MoM last reported in ``resources_used``. A MoM measures all its
running jobs at once, ``next_sample_time`` seconds after the later of its last measurement and its last job
start (``mom_main.c``, main loop; ``time_resc_updated``). Starting a job measures that job alone, sets
``next_sample_time`` back to ``$min_check_poll`` and counts as the last measurement (``start_exec.c``,
``finish_exec``); each measurement of all jobs then adds ``($max_check_poll - $min_check_poll + 19) // 20``
to it, up to ``$max_check_poll`` (10 and 120 s by default); a measurement due in the very second of a
start comes after it, and so is put off. So with PBS's defaults a MoM that starts a job at least once
every 10 s never measures the others, and one that runs a single job measures it 10, 26, 48, ... s
after its start. Each measurement goes to the server, and the scheduler sees it from
``REPORT_DELAY_S`` after it.

(Seen on a real 23.06.06 server with the defaults and jobs of 10 to 50 s: 29 of the 33 measurements
``qstat`` showed fell within a second of the instants this rule gives from the accounting log's starts,
and they showed in ``qstat`` 2 to 3 s after them; replaying fairshare with a delay of 2 s agreed with
more of the server's decisions than with 0, 1 or 3 s. With polls 1 to 2 s apart, 102 of 107 measurements
fell in the very second the rule gives, and ``benchmarks/mom_report_delay.py`` showed each 2.1 to 3.1 s
after the second it was made in. A server's log kept at ``log_events`` 2047 says when each update reached the
server: of the 387 updates of two such recordings, 375 received in second ``a`` carried the measurement ``qstat``
showed for second ``a - 2``, and ``replay.fidelity.server_usage`` charges fairshare from those lines.)

A job counts under the MoM of the first vnode it runs on (its mother superior); on a vnode that stands for
a whole machine known only by its size (``MANY_HOSTS``), each job under a MoM of its own. A job's measured
walltime is counted from its start in the logs, in whole seconds, and never past the end of its process.
"""

import heapq

__all__ = ["MomPolls", "REPORT_DELAY_S", "MANY_HOSTS", "natural_host", "ran_s"]

REPORT_DELAY_S = 2
"""Seconds from a MoM's measurement to the first scheduling cycle that sees it."""

MANY_HOSTS = "*"
"""The MoM of a vnode that stands for many hosts: each job it runs is measured by a MoM of its own."""


def natural_host(vnode):
    """The host of a vnode named PBS's way for a MoM's vnodes: ``pbshost`` for ``pbshost[2]``, else the name."""
    return vnode.split("[", 1)[0] if vnode.endswith("]") else vnode


def ran_s(item, now):
    """How long the process of running ``item`` has run at ``now``: its elapsed time, at most ``process_s``."""
    process_s = getattr(item, "process_s", None)
    elapsed = now - item.start
    return elapsed if process_s is None else min(elapsed, process_s)


class _Clock:
    """One MoM's polling: its last start or measurement (``anchor``), the interval to the next measurement,
    and the last measurement of all its jobs (None before the first)."""

    __slots__ = ("anchor", "interval", "measured")

    def __init__(self, anchor, interval):
        self.anchor, self.interval, self.measured = anchor, interval, None


class MomPolls:
    """The MoMs' measurements of their jobs, brought forward as the scheduler's cycles come (mutable).

    ``moms`` maps a vnode's name to its MoM's (``natural_host`` for a vnode it does not name)."""

    def __init__(self, min_check_poll_s=10, max_check_poll_s=120, moms=None, report_delay_s=REPORT_DELAY_S):
        self.low, self.high = min_check_poll_s, max_check_poll_s
        self.step = (max_check_poll_s - min_check_poll_s + 19) // 20
        self.report_delay_s = report_delay_s
        self.moms = moms or {}
        self._clocks = {}   # MoM -> _Clock
        self._pending = []  # heap of (start, order, MoM) of starts not yet brought forward
        self._mom_of = {}   # job name -> (start, MoM) of the starts noted
        self._until = None
        self._noted = 0     # starts noted so far, to keep the heap in noting order within a second

    def copy(self):
        """An independent copy (the mapping of vnodes to MoMs is shared; it never changes)."""
        clone = MomPolls.__new__(MomPolls)
        clone.low, clone.high, clone.step, clone.report_delay_s = self.low, self.high, self.step, self.report_delay_s
        clone.moms, clone._until, clone._noted = self.moms, self._until, self._noted
        clone._clocks = {}
        for mom, clock in self._clocks.items():
            copied = clone._clocks[mom] = _Clock(clock.anchor, clock.interval)
            copied.measured = clock.measured
        clone._pending, clone._mom_of = list(self._pending), dict(self._mom_of)
        return clone

    def note_starts(self, items, now):
        """Note the starts of ``items`` (running jobs with ``job``, ``start`` and ``allocation``) up to ``now``;
        a start already noted, or one later than ``now``, is left alone."""
        for item in items:
            name = item.job.name
            if item.start > now or self._mom_of.get(name, (None,))[0] == item.start:
                continue
            mom = self._mom(item)
            self._mom_of[name] = (item.start, mom)
            self._noted += 1
            heapq.heappush(self._pending, (item.start, self._noted, mom))

    def advance(self, now):
        """Bring every MoM's measurements forward to what the scheduler sees at ``now``."""
        until = now - self.report_delay_s
        if self._until is not None and until <= self._until:
            return
        self._until = until
        while self._pending and self._pending[0][0] <= until:
            start, _, mom = heapq.heappop(self._pending)
            clock = self._clocks.get(mom)
            if clock is None:
                self._clocks[mom] = _Clock(start, self.low)
                continue
            self._measure(clock, start - 1)  # a measurement due in the second of a start comes after it
            clock.anchor, clock.interval = max(clock.anchor, start), self.low
        for clock in self._clocks.values():
            self._measure(clock, until)

    def _measure(self, clock, until):
        while clock.interval < self.high and clock.anchor + clock.interval <= until:
            clock.anchor += clock.interval
            clock.measured = clock.anchor
            clock.interval = min(clock.interval + self.step, self.high)
        if clock.anchor + clock.interval <= until:  # every $max_check_poll from here on
            clock.anchor += (until - clock.anchor) // clock.interval * clock.interval
            clock.measured = clock.anchor

    def reported_walltime_s(self, item):
        """The walltime the scheduler sees in ``resources_used`` of running ``item`` (whose start was noted):
        at its MoM's last measurement seen, in whole seconds, at most its process's length; 0 if none came
        after its start."""
        noted = self._mom_of.get(item.job.name)
        clock = None if noted is None else self._clocks.get(noted[1])
        if clock is None or clock.measured is None or clock.measured <= item.start:
            return 0
        return int(ran_s(item, clock.measured))

    def keep_only(self, names):
        """Forget the jobs not in ``names`` (the ones still running), and the clocks of MoMs left without a
        job."""
        names = set(names)
        self._mom_of = {name: noted for name, noted in self._mom_of.items() if name in names}
        busy = {mom for _, mom in self._mom_of.values()}
        for mom in [mom for mom in self._clocks if mom not in busy]:
            del self._clocks[mom]  # no job left: its next start sets its clock afresh, as it does in PBS

    def _mom(self, item):
        vnode = item.allocation[0][0] if item.allocation else ""
        mom = self.moms.get(vnode) or natural_host(vnode)
        return (MANY_HOSTS, item.job.name) if mom == MANY_HOSTS else mom
