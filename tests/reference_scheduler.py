"""A slow, obviously-correct PBS scheduler to check the engine against.

It shares no code with replay.simulation.engine/scheduler/calendar: at every instant where
something happens (a submission, an end, every scheduler_iteration tick) it
recomputes every running job's plan from scratch, sorts the whole queue, and
checks availability at every breakpoint of the calendar. Only the definitions
it simulates (predictors, policy keys, extension rules, the Cluster's widths)
come from the package.
"""

import math

from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow
from replay.classification import Completion, Submission
from replay.simulation.engine import FIVE_YEARS_S, ScheduledJob, requested_s
from replay.simulation.extension import EXTENSIONS
from replay.simulation.policies import POLICIES, QueuedJob, with_starvation_threshold


def reference_schedule(jobs, predictor, cluster, settings):
    """The schedule of ``jobs`` as ``ScheduledJob``s, in submission order."""
    return _Reference(jobs, predictor, cluster, settings).run()


class _Reference:
    def __init__(self, jobs, predictor, cluster, settings):
        self.jobs = sorted(jobs, key=lambda job: job.submit_time)
        self.predictor, self.cluster, self.settings = predictor, cluster, settings
        self.policy = with_starvation_threshold(POLICIES[settings.policy], settings.starvation_threshold_s)
        self.extension = EXTENSIONS[settings.extension]
        self.history = MemoryHistory(max(predictor.window, 1))
        self.walltime = [job.walltime_s if job.walltime_s and job.walltime_s >= 1 else settings.default_walltime_s
                         for job in self.jobs]
        self.start, self.end, self.soft_queued, self.soft_started, self.reservation = {}, {}, {}, {}, {}
        self.soft_queued_again = {}  # a requeued job waits with the soft walltime runjob gave it
        self.waiting, self.running = [], []
        self.classifier = self.policy.classifier(self.jobs[0].submit_time) if self.policy.classifies and jobs else None
        self.small = {}
        self.rerun_after, self.reruns = {}, {}  # small-first safeguard: killed after that long, and how often

    def run(self):
        now, submitted = None, 0
        while True:
            now = self._next_time(now, submitted)
            if now is None:
                break
            self._end_jobs(now)
            while submitted < len(self.jobs) and self.jobs[submitted].submit_time == now:
                self._submit(submitted)
                submitted += 1
            self._cycle(now)
            while any(self._ends_at(index) == now for index in self.running):
                self._end_jobs(now)
                self._cycle(now)
        return [self._outcome(index) for index in range(len(self.jobs))]

    def _next_time(self, now, submitted):
        times = [self._ends_at(index) for index in self.running]
        if submitted < len(self.jobs):
            times.append(self.jobs[submitted].submit_time)
        interval = self.settings.cycle_interval_s
        if interval and self.waiting:
            origin = self.jobs[0].submit_time
            times.append(origin + ((now - origin) // interval + 1) * interval)
        return min(times) if times else None

    def _runtime(self, index):
        walltime = self.walltime[index]
        runtime = self.jobs[index].runtime_s
        return runtime if walltime is None else min(runtime, walltime)

    def _held(self, index):
        """Occupancy (else runtime), cut at the walltime only for a job killed there."""
        job, walltime = self.jobs[index], self.walltime[index]
        held = job.runtime_s if job.occupancy_s is None else job.occupancy_s
        return held if walltime is None or job.runtime_s <= walltime else min(held, walltime)

    def _ends_at(self, index):
        limit = self.rerun_after.get(index)
        return self.start[index] + (self._held(index) if limit is None else min(self._held(index), limit))

    def _end_jobs(self, now):
        for index in [index for index in self.running if self._ends_at(index) == now]:
            self.running.remove(index)
            if now - self.start[index] < self._held(index):  # the safeguard: back to the queue, as large
                del self.rerun_after[index]
                self.reruns[index] = self.reruns.get(index, 0) + 1
                self.small[index] = False
                self.soft_queued_again[index] = self.soft_started[index]
                self.waiting.append(index)
                continue
            self.end[index] = now
            job = self.jobs[index]
            self.history.add_row(job.user, HistoryRow(now, job.job_id, self._runtime(index), self.walltime[index]))
            if self.classifier is not None:
                self.classifier.observe(Completion(index, now, self._runtime(index)))

    def _predict(self, job, index):
        window = self.predictor.window
        soft = self.predictor.estimate(self.history.recent(job.user, window) if window else [], job)
        if soft is None:
            return None
        soft = max(1, int(soft))
        return soft if self.walltime[index] is None else min(soft, self.walltime[index])

    def _submit(self, index):
        job = self.jobs[index]
        self.soft_queued[index] = self._predict(job, index)
        self.small[index] = False
        if self.classifier is not None:
            requested_ncpus = job.ncpus if job.requested_ncpus is None else job.requested_ncpus
            verdict = self.classifier.classify(Submission(index, job.submit_time, job.user, requested_s(job),
                                                          requested_ncpus))
            self.small[index] = verdict.small
            if verdict.small and self.policy.reruns_false_small:
                self.rerun_after[index] = math.ceil(verdict.divider_s)
        self.waiting.append(index)

    def _walltime_plan(self, index):
        return self.walltime[index] or FIVE_YEARS_S

    def _queued_plan(self, index):
        if index in self.soft_queued_again:
            return self.soft_queued_again[index] or self._walltime_plan(index)
        return self.soft_queued[index] or self._walltime_plan(index)

    def _running_plan_end(self, index, now):
        elapsed = now - self.start[index]
        soft = self.soft_started[index]
        if self.settings.selective or soft is None:
            planned = self._walltime_plan(index)
        else:
            planned = self.extension.planned(soft, self._walltime_plan(index), elapsed)
        return self.start[index] + (planned if planned > elapsed else elapsed + 1)

    def _queued_job(self, index):
        job = self.jobs[index]
        return QueuedJob(index, job.submit_time, self._queued_plan(index), self.cluster.width(job),
                         self._walltime_plan(index), self.small[index])

    def _cycle(self, now):
        busy = [(self._running_plan_end(index, now), self.cluster.width(self.jobs[index])) for index in self.running]
        reservations = []
        top_jobs, started = 0, []
        for job in sorted((self._queued_job(index) for index in self.waiting),
                          key=lambda job: self.policy.key(job, now)):
            if _fits(now, job.planned_s, job.width, busy, reservations, self.cluster.capacity):
                busy.append((now + (job.walltime_plan_s if self.settings.selective else job.planned_s), job.width))
                started.append(job.index)
            elif self.settings.strict_ordering and top_jobs < self.settings.backfill_depth:
                start = _earliest(now, job.planned_s, job.width, busy, reservations, self.cluster.capacity)
                reservations.append((start, start + job.planned_s, job.width))
                self.reservation.setdefault(job.index, start)
                top_jobs += 1
            elif self.settings.strict_ordering and self.settings.backfill_depth == 0:
                break
        for index in started:
            self._run(index, now)

    def _run(self, index, now):
        self.waiting.remove(index)
        self.running.append(index)
        self.start[index] = now
        job = self.jobs[index]
        threshold = self.settings.runjob_after_queued_s
        if threshold is None or now - job.submit_time >= threshold:
            self.soft_started[index] = self._predict(job._replace(walltime_s=self.walltime[index]), index)
        else:  # runjob leaves the job alone: the soft walltime of its last run, else queuejob's
            self.soft_started[index] = self.soft_started.get(index, self.soft_queued[index])

    def _outcome(self, index):
        job, walltime, soft = self.jobs[index], self.walltime[index], self.soft_started[index]
        held = self._held(index)
        return ScheduledJob(job, self.start[index], self.end[index], held, self.cluster.width(job), walltime,
                            self.soft_queued[index], soft, self.reservation.get(index),
                            self._extensions(soft, walltime or FIVE_YEARS_S, held),
                            walltime is not None and job.runtime_s > walltime, self.reruns.get(index, 0))

    def _extensions(self, soft, walltime_plan, runtime):
        """Step through the plans one by one: how often the job outlived its plan."""
        if soft is None:
            return 0
        count, planned = 0, soft
        while planned < runtime and planned < walltime_plan:
            planned = self.extension.planned(soft, walltime_plan, planned)
            count += 1
        return count


def _available(time, busy, reservations, capacity):
    held = sum(width for end, width in busy if end > time)
    reserved = sum(width for start, end, width in reservations if start <= time < end)
    return capacity - held - reserved


def _breakpoints(busy, reservations):
    points = [end for end, _ in busy]
    for start, end, _ in reservations:
        points += [start, end]
    return points


def _fits(start, duration, width, busy, reservations, capacity):
    times = [start] + [time for time in _breakpoints(busy, reservations) if start < time < start + duration]
    return all(_available(time, busy, reservations, capacity) >= width for time in times)


def _earliest(now, duration, width, busy, reservations, capacity):
    for start in sorted({now} | {time for time in _breakpoints(busy, reservations) if time > now}):
        if _fits(start, duration, width, busy, reservations, capacity):
            return start
    raise AssertionError("no slot")
