"""The scheduling cycle: walk the queue in order, start what fits, reserve for top jobs.

One cycle, as PBS's scheduler does it with ``strict_ordering``: jobs are taken in
the policy's order. A job that fits now (in the free cores and in front of every
reservation, judged by its own planned duration) starts. A job that does not
fit becomes a *top job* and gets the earliest reservation on the calendar, while
fewer than ``backfill_depth`` top jobs exist; later jobs can then only start by
backfilling. ``backfill_depth`` 0 means nothing passes a blocked job. Without
strict ordering there are no top jobs: every job that fits starts.

Work avoided, never changing the result: the calendar only changes when a job
ends, when a running job outlives its plan, or when a started job's plan is
revised; until then a job that did not fit still does not (time only moves on),
so a cycle only looks at jobs queued since the last one (for orders that do not
depend on time). With --selective a started job may be planned past a reservation
it was judged to end before; the next cycle then walks the whole queue. A walk
stops once no core is free and no reservation is left to make.
"""

from bisect import bisect_right
from itertools import compress

__all__ = ["Scheduler"]


class Scheduler:
    """The queue and the cycle's decisions. ``reservations``: job index -> its first reservation."""

    def __init__(self, calendar, policy, strict_ordering=True, backfill_depth=1, selective=False):
        if backfill_depth < 0:
            raise ValueError("backfill_depth must be >= 0, not {}".format(backfill_depth))
        self.calendar = calendar
        self.policy = policy
        self.strict_ordering = strict_ordering
        self.backfill_depth = backfill_depth
        self.selective = selective
        self.queue = []  # (key, QueuedJob), in policy order
        self._widths = []  # the queued jobs' widths, in queue order: scanned in C to pass jobs too wide to start
        self.reservations = {}
        self._reservation_limit = backfill_depth if strict_ordering else 0
        self._top_jobs = 0
        self._stops_at_blocked = strict_ordering and backfill_depth == 0
        self._blocked = False  # backfill_depth 0: the walk stopped at a job that did not fit
        self._fresh = 0  # jobs at the queue's tail not yet walked
        self.changed = True  # set when a job ends or a running job's plan moves: walk the whole queue

    def submit(self, job, now):
        """Queue ``job`` (a ``QueuedJob``)."""
        key, queue = self.policy.key(job, now), self.queue
        if not self.policy.static or (queue and key < queue[-1][0]):
            position = bisect_right(queue, (key, job))
            queue.insert(position, (key, job))
            self._widths.insert(position, job.width)
            self.changed = True
        else:
            queue.append((key, job))
            self._widths.append(job.width)
            self._fresh += 1

    def cycle(self, now):
        """Run one cycle at ``now``; return the ``QueuedJob``s to start, in order."""
        if not self.queue:
            return []  # ``changed`` stays set: the next job queued gets a full walk
        calendar = self.calendar
        if self.changed or not self.policy.static:  # walk the whole queue, reservations made again
            calendar.begin_cycle(now)
            self._top_jobs, self._blocked, self._fresh, self.changed = 0, False, 0, False
            if not self.policy.static:
                key = self.policy.key
                self.queue = sorted((key(job, now), job) for _, job in self.queue)
                self._widths = [job.width for _, job in self.queue]
            return self._walk(0)
        if self._fresh:  # only the jobs queued since the last walk
            calendar.now = now
            first, self._fresh = len(self.queue) - self._fresh, 0
            return self._walk(first)
        return []

    def _walk(self, first):
        """Walk the queue from position ``first``; start what fits, reserve for top jobs."""
        calendar, queue, limit, top_jobs = self.calendar, self.queue, self._reservation_limit, self._top_jobs
        started, positions, selective, dips = [], [], self.selective, calendar.dips
        if self._blocked or (calendar.free == 0 and top_jobs >= limit):
            return started  # a job that did not fit stopped the last walk (depth 0), or nothing is left to do
        # Once no reservation is left to make, a job wider than the free cores is passed over without a
        # trace: those are skipped in one C-level scan (unless a blocked job stops the walk, depth 0).
        skips = not self._stops_at_blocked
        position, length = first, len(queue)
        while position < length:
            job = queue[position][1]
            width = job.width
            if width > calendar.free and skips and top_jobs >= limit:
                position = _next_narrow(self._widths, position + 1, length, calendar.free)
                if position is None:
                    break
                job = queue[position][1]
                width = job.width
            if width <= calendar.free and (not dips or calendar.fits(width, job.planned_s)):
                if calendar.start(job.index, width, job.walltime_plan_s if selective else job.planned_s):
                    self.changed = True  # a reservation was invaded: the next cycle re-plans them all
                started.append(job)
                positions.append(position)
                if calendar.free == 0 and top_jobs >= limit:
                    break  # nothing can start and no reservation is left to make
            elif top_jobs < limit:
                self.reservations.setdefault(job.index, calendar.reserve(width, job.planned_s))
                top_jobs += 1
                if calendar.free == 0 and top_jobs >= limit:
                    break
            elif not skips:
                self._blocked = True
                break
            position += 1
        self._top_jobs = top_jobs
        if positions:
            self._remove(positions)
        return started

    def _remove(self, positions):
        """Take the started jobs (at ``positions``, increasing) out of the queue."""
        queue, widths = self.queue, self._widths
        if positions and positions[0] == len(queue) - len(positions):
            del queue[positions[0]:], widths[positions[0]:]  # they were the queue's tail (new jobs that fit)
            return
        for position in reversed(positions):
            del queue[position], widths[position]


_LOOKED_AT_FIRST = 8
"""Jobs ``_next_narrow`` looks at one by one before it scans in C: the job it looks for is usually among the
next few (five on average over KTH-SP2), where making the C scan's iterators would cost more than it saves."""


def _next_narrow(widths, position, length, free):
    """The first position from ``position`` on whose job needs at most ``free`` units, or None."""
    near = position + _LOOKED_AT_FIRST
    if near > length:
        near = length
    while position < near:
        if widths[position] <= free:
            return position
        position += 1
    positions = range(position, length)
    return next(compress(positions, map(free.__ge__, map(widths.__getitem__, positions))), None)
