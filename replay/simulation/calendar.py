"""The scheduler's calendar: when running jobs are planned to end, and this cycle's reservations.

Data structure. Running jobs live in three parallel lists sorted by planned end
(``end_times``, ``end_widths``, ``end_jobs``), kept up to date incrementally:
a start or an end is one ``bisect`` plus a list insert/delete (a memmove), and a
soft-walltime extension moves one entry. The free-core profile of the running
jobs is then ``free(t) = free + sum(widths of jobs planned to end by t)``; the
cumulative widths are rebuilt lazily with ``itertools.accumulate`` (a C loop) only
when a reservation needs them, and a bisect on them finds the first time enough
cores are free. Nothing is per core, so the cost does not grow with the machine.

Reservations are few (at most ``backfill_depth`` per cycle). Availability,
``avail(t) = free(t) - cores reserved at t``, only ever drops where a reservation
starts, so the calendar keeps one *dip* per reservation: its start and the cores
still available there. A job fits now iff it fits in the cores free now and under
every dip before its planned end: O(backfill_depth) per check.
"""

from bisect import bisect_left, bisect_right, insort
from itertools import accumulate

__all__ = ["Calendar"]


class Calendar:
    """Planned ends of running jobs (kept across cycles) and one cycle's top-job reservations."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.free = capacity
        self.now = 0
        self.end_times = []
        self.end_widths = []
        self.end_jobs = []
        self.planned_end = {}
        self.dips = []  # [start, cores available there], one per reservation, by start
        self.reservations = []  # (start, end, width)
        self._freed = None  # cumulative end_widths; None when stale

    def add(self, job, end, width):
        """A job starts: it holds ``width`` until its planned ``end``."""
        self._link(job, end, width)
        self.free -= width

    def remove(self, job):
        """A job ends: its cores are free now. Returns how many."""
        end_times, end_jobs = self.end_times, self.end_jobs
        index = bisect_left(end_times, self.planned_end.pop(job))
        if end_jobs[index] != job:  # jobs planned to end at the same time: find this one among them
            index = end_jobs.index(job, index)
        del end_times[index]
        del end_jobs[index]
        self._freed = None
        width = self.end_widths.pop(index)
        self.free += width
        return width

    def move(self, job, end):
        """A running job's planned end changes (runjob soft walltime, extension)."""
        self.add(job, end, self.remove(job))

    def replan_expired(self, now, plan_end):
        """Give every running job planned to have ended by ``now`` the end ``plan_end(job)``; how many."""
        jobs, widths = self.cut_expired(now)
        self.relink([plan_end(job) for job in jobs], widths, jobs)
        return len(jobs)

    def cut_expired(self, now):
        """Take out the running jobs planned to have ended by ``now`` (the head of the lists): ``(jobs, widths)``.

        They are out of the calendar until ``relink`` puts them back with their new ends.
        """
        count = bisect_right(self.end_times, now)
        jobs, widths = self.end_jobs[:count], self.end_widths[:count]
        del self.end_times[:count], self.end_jobs[:count], self.end_widths[:count]
        return jobs, widths

    def relink(self, ends, widths, jobs):
        """Put running jobs back, each at its planned end (after jobs already planned to end then)."""
        end_times, end_widths, end_jobs, planned_end = self.end_times, self.end_widths, self.end_jobs, self.planned_end
        for end, width, job in zip(ends, widths, jobs):
            planned_end[job] = end
            index = bisect_right(end_times, end)
            end_times.insert(index, end)
            end_widths.insert(index, width)
            end_jobs.insert(index, job)
        self._freed = None

    def next_end(self):
        """The earliest planned end of a running job, or None."""
        return self.end_times[0] if self.end_times else None

    def begin_cycle(self, now):
        """Start a cycle at ``now``: no reservations yet."""
        self.now = now
        self.dips = []
        self.reservations = []

    def fits(self, width, duration):
        """Whether a job could start now and run ``duration`` without touching any reservation."""
        if width > self.free:
            return False
        end = self.now + duration
        for start, available in self.dips:
            if start >= end:
                return True
            if width > available:
                return False
        return True

    def start(self, job, width, duration):
        """Start a job now for a planned ``duration``, taking its cores from every dip it spans.

        Return True if it took cores a reservation counted on (possible only when a job
        is planned longer than it was judged by, as with --selective): the reservations
        would then not be the earliest any more.
        """
        end = self.now + duration
        self._link(job, end, width)
        self.free -= width
        invaded = False
        for dip in self.dips:
            if dip[0] >= end:
                break
            dip[1] -= width
            if dip[1] < 0:
                invaded = True
        return invaded

    def reserve(self, width, duration):
        """Reserve the earliest slot for a top job; return its start."""
        if not self.reservations and width > self.free:
            return self._reserve_first(width, duration)
        start = self.earliest_start(width, duration)
        end = start + duration
        for dip in self.dips:
            if start <= dip[0] < end:
                dip[1] -= width
        self.reservations.append((start, end, width))
        insort(self.dips, [start, self.free_at(start) - self._reserved_at(start)])
        return start

    def _reserve_first(self, width, duration):
        # Only running jobs: free(t) grows with t, so the first t with enough is the start.
        freed, end_times = self._freed_prefix(), self.end_times
        start = end_times[bisect_left(freed, width - self.free)]
        available = self.free + freed[bisect_right(end_times, start) - 1] - width
        self.reservations.append((start, start + duration, width))
        self.dips.append([start, available])
        return start

    def earliest_start(self, width, duration):
        """The first time ``width`` units stay available for ``duration``."""
        for start in self._candidate_starts(width):
            if self._min_available(start, start + duration) >= width:
                return start
        raise AssertionError("no slot for width {} on {} units".format(width, self.capacity))

    def free_at(self, time):
        """Units not held by running jobs at ``time`` (>= now), ignoring reservations."""
        index = bisect_right(self.end_times, time)
        return self.free + (self._freed_prefix()[index - 1] if index else 0)

    def _candidate_starts(self, width):
        # A slot can only open now, when a running job ends, or when a reservation ends.
        first = bisect_left(self._freed_prefix(), width - self.free) if width > self.free else 0
        times = self.end_times[first:] + [end for _, end, _ in self.reservations if end > self.now]
        times.append(self.now)
        times.sort()
        return [time for index, time in enumerate(times) if index == 0 or time != times[index - 1]]

    def _min_available(self, start, end):
        available = self.free_at(start) - self._reserved_at(start)
        for dip_start, dip_available in self.dips:
            if start < dip_start < end and dip_available < available:
                available = dip_available
        return available

    def _reserved_at(self, time):
        return sum(width for start, end, width in self.reservations if start <= time < end)

    def _freed_prefix(self):
        if self._freed is None:
            self._freed = list(accumulate(self.end_widths))
        return self._freed

    def _link(self, job, end, width):
        end_times = self.end_times
        index = bisect_right(end_times, end)
        end_times.insert(index, end)
        self.end_widths.insert(index, width)
        self.end_jobs.insert(index, job)
        self.planned_end[job] = end
        self._freed = None
