"""How well the online classifier does over a log: precision, recall and accuracy of the "small" class.

``classify_log`` replays a log through a ``SizeClassifier``: each job is
classified when it was submitted, after the classifier was told of every job
the log shows completed by then (a job ending at the instant of a submission
counts as completed, as in the simulation). As the paper does, learning follows
the log, not any simulated schedule.

A job is *truly small* when its runtime is below the median runtime of the
jobs that completed in the same week as it (``true_classes``): the class it is
labelled with when the classifier learns from it at the end of that week, as
the paper labels each week's jobs with that week's median (§4.2, §5.2). Jobs of
the first week, which have no divider, and jobs that never ended are not
counted.
"""

from typing import NamedTuple, Optional

from .classifier import WEEK_S, Completion, SizeClassifier, divider_s
from .features import Submission

__all__ = ["LoggedJob", "Quality", "classify_log", "true_classes", "quality_of"]


class LoggedJob(NamedTuple):
    """A job of the log as ``classify_log`` reads it; ``end_time`` None: never learned from."""

    submit_time: int
    end_time: Optional[int]
    user: str
    walltime_s: Optional[int]
    ncpus: int
    runtime_s: int


class Quality(NamedTuple):
    """Counts of the "small" class (Zrigui et al. eqs. 1-3): true/false small, true/false large."""

    true_small: int
    false_small: int
    true_large: int
    false_large: int

    def precision(self):
        """Of the jobs predicted small, the share that were small; None when none was predicted small."""
        predicted = self.true_small + self.false_small
        return self.true_small / predicted if predicted else None

    def recall(self):
        """Of the small jobs, the share predicted small; None when none was small."""
        actual = self.true_small + self.false_large
        return self.true_small / actual if actual else None

    def accuracy(self):
        """Of all the jobs counted, the share classified right; None when none was counted."""
        counted = sum(self)
        return (self.true_small + self.true_large) / counted if counted else None


def classify_log(jobs, week_s=WEEK_S, seed=0, on_progress=None, learner="scikit-learn"):
    """Each ``LoggedJob``'s ``Classification``, in the order given; ``on_progress(jobs done, jobs)`` every
    thousand jobs; ``learner``: ``SizeClassifier``'s."""
    order = sorted(range(len(jobs)), key=lambda index: (jobs[index].submit_time, index))
    if not order:
        return []
    rank = [0] * len(jobs)  # the job's key: its place in submission order
    for key, index in enumerate(order):
        rank[index] = key
    # A job is learned from once it has ended, and never before it was submitted (a log may say otherwise).
    learned_at = [None if job.end_time is None else max(job.end_time, job.submit_time) for job in jobs]
    ends = sorted((index for index in order if learned_at[index] is not None),
                  key=lambda index: (learned_at[index], index))
    classifier = SizeClassifier(jobs[order[0]].submit_time, week_s, seed, learner=learner)
    results, learned = [None] * len(jobs), 0
    for done, index in enumerate(order):
        if on_progress is not None and done % 1000 == 0:
            on_progress(done, len(order))
        job = jobs[index]
        while learned < len(ends) and learned_at[ends[learned]] <= job.submit_time:
            done = ends[learned]
            classifier.observe(Completion(rank[done], learned_at[done], jobs[done].runtime_s))
            learned += 1
        results[index] = classifier.classify(Submission(rank[index], job.submit_time, job.user, job.walltime_s,
                                                        job.ncpus))
    return results


def true_classes(jobs, week_s=WEEK_S):
    """Per ``LoggedJob``, whether it is small against the median runtime of its week's completions (weeks counted
    from the first submission, as ``classify_log`` does); None for a job that never ended."""
    if not jobs:
        return []
    origin = min(job.submit_time for job in jobs)
    weeks = [None if job.end_time is None else (max(job.end_time, job.submit_time) - origin) // week_s
             for job in jobs]
    runtimes_by_week = {}
    for week, job in zip(weeks, jobs):
        if week is not None:
            runtimes_by_week.setdefault(week, []).append(job.runtime_s)
    medians = {week: divider_s(runtimes) for week, runtimes in runtimes_by_week.items()}
    return [None if week is None else job.runtime_s < medians[week] for week, job in zip(weeks, jobs)]


def quality_of(classifications, truly_small):
    """The ``Quality`` of ``classifications`` against the true classes (``true_classes``); jobs without a divider
    or a true class are left out."""
    counts = [0, 0, 0, 0]
    for classification, small in zip(classifications, truly_small):
        if classification is None or classification.divider_s is None or small is None:
            continue
        counts[(0 if classification.small else 2) + (classification.small != small)] += 1
    return Quality(*counts)
