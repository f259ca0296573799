"""Online small/large job classification (Zrigui et al., "Improving the Performance of Batch
Schedulers Using Online Job Runtime Classification").

A job is *small* when its runtime is below the *divider*: the median runtime of the jobs that
completed in the previous week. As in the paper, the classifier is rebuilt at each week boundary
from completed jobs only, so a job is classified with what was known when its week began (the
jobs of the current week are not used), and every job of the first week is large.

The paper trains a random forest over job, temporal, lag and aggregation features; this is a
deterministic rule over its two strongest features instead (requested runtime, then the first
lag of the job's category): see docs/simulate.md.
"""

from statistics import median
from typing import NamedTuple, Optional

__all__ = ["WEEK_S", "Completion", "LoggedJob", "Quality", "divider_s", "predict_small", "SizeClassifier",
           "classification_quality"]

WEEK_S = 7 * 86400


class Completion(NamedTuple):
    """A finished job as the classifier learns from it."""

    end_time: int
    user: str
    walltime_s: Optional[int]
    width: int
    runtime_s: int


def divider_s(runtimes_s):
    """The small/large boundary: the median of ``runtimes_s``; None without runtimes."""
    return median(runtimes_s) if runtimes_s else None


def predict_small(walltime_s, last_by_walltime_s, last_by_width_s, divider):
    """Whether a job is predicted small.

    ``walltime_s``: its requested runtime (None: unlimited); ``last_by_walltime_s`` and
    ``last_by_width_s``: the runtime of the last completed job of its (user, requested runtime)
    and (user, requested width) categories, else None; ``divider``: None before any was measured.
    """
    if divider is None:
        return False
    if walltime_s is not None and walltime_s < divider:
        return True  # it cannot run past its walltime: small whatever the history says
    last = last_by_walltime_s if last_by_walltime_s is not None else last_by_width_s
    return last is not None and last < divider


class SizeClassifier:
    """Learns from completions (``observe``, in end-time order) and classifies submissions.

    Weeks start at ``origin`` (the first submission); ``week_s`` is there for tests.
    """

    def __init__(self, origin, week_s=WEEK_S):
        self.origin, self.week_s = origin, week_s
        self.divider = None
        self._completions = []
        self._learned = 0  # completions before the current week's start, folded into the categories
        self._week = 0
        self._last_by_walltime, self._last_by_width = {}, {}

    def observe(self, completion):
        """Record a ``Completion``; it is used from the week after it ends."""
        self._completions.append(completion)

    def is_small(self, job_user, walltime_s, width, now):
        """Whether a job submitted at ``now`` is predicted small."""
        self._advance((now - self.origin) // self.week_s)
        return predict_small(walltime_s, self._last_by_walltime.get((job_user, walltime_s)),
                             self._last_by_width.get((job_user, width)), self.divider)

    def _advance(self, week):
        if week <= self._week:
            return
        self._week = week
        week_start = self.origin + week * self.week_s
        previous = [done.runtime_s for done in self._completions[self._learned:]
                    if week_start - self.week_s <= done.end_time < week_start]
        self.divider = divider_s(previous) if previous else self.divider  # a quiet week keeps the last one
        first = self._learned
        while self._learned < len(self._completions) and self._completions[self._learned].end_time < week_start:
            self._learned += 1
        # Jobs ending at one instant may be observed in any order: the longest counts as the last.
        for done in sorted(self._completions[first:self._learned], key=lambda done: (done.end_time, done.runtime_s)):
            self._last_by_walltime[done.user, done.walltime_s] = done.runtime_s
            self._last_by_width[done.user, done.width] = done.runtime_s


class LoggedJob(NamedTuple):
    """A job of the log as ``classification_quality`` replays it; ``end_time`` None: never learned from."""

    submit_time: int
    end_time: Optional[int]
    user: str
    walltime_s: Optional[int]
    width: int
    runtime_s: int


class Quality(NamedTuple):
    """Counts of the "small" class: true/false small, true/false large (jobs with a divider only)."""

    true_small: int
    false_small: int
    true_large: int
    false_large: int

    def precision(self):
        predicted = self.true_small + self.false_small
        return self.true_small / predicted if predicted else None

    def recall(self):
        actual = self.true_small + self.false_large
        return self.true_small / actual if actual else None


def classification_quality(jobs, week_s=WEEK_S):
    """``Quality`` of the classifier over ``LoggedJob``s, learning from their logged completions (as the
    paper does, apart from any simulated schedule); a job is truly small when its runtime is below the
    divider in force at its submission. Jobs submitted before any divider (the first week) are not counted."""
    jobs = sorted(jobs, key=lambda job: job.submit_time)
    if not jobs:
        return Quality(0, 0, 0, 0)
    classifier = SizeClassifier(jobs[0].submit_time, week_s)
    ends = sorted((job for job in jobs if job.end_time is not None), key=lambda job: (job.end_time, job.runtime_s))
    counts, learned = [0, 0, 0, 0], 0
    for job in jobs:
        while learned < len(ends) and ends[learned].end_time <= job.submit_time:
            done = ends[learned]
            classifier.observe(Completion(done.end_time, done.user, done.walltime_s, done.width, done.runtime_s))
            learned += 1
        small = classifier.is_small(job.user, job.walltime_s, job.width, job.submit_time)
        if classifier.divider is not None:
            truly_small = job.runtime_s < classifier.divider
            counts[(0 if small else 2) + (0 if small == truly_small else 1)] += 1
    return Quality(*counts)
