"""The online small/large classifier: weekly divider, weekly random forest.

As Zrigui et al. describe it (§4.2, §5.2): at the end of every week the jobs
completed during the week are labelled, against the *divider*, the median
runtime of that week's completions, small (runtime below it) or large; they are
added to the training data, and a new forest, trained on every labelled job so
far, classifies the jobs submitted during the next week, with that divider.
Jobs of the first week are all large. A week with no completion keeps the
previous divider.

A job's features are taken when it is submitted, from the jobs known at the
start of its week (the paper, too, extracts the lag and aggregation features
from previous weeks only); that same row, with the job's label, is what the
forest learns from once the job has completed. Features at submission and
features learned from are therefore the same thing.

Weeks are counted from ``origin`` (the first submission). ``observe`` must be
told every completion of a classified job by the end of the week it ends in;
completions at one instant may come in any order.
"""

from statistics import median
from typing import NamedTuple, Optional

import numpy as np

from .features import CategoryHistory, job_features
from .forest import ForestSettings, grow_forest
from .sklearn_forest import fit_sklearn_forest, seed_of

__all__ = ["WEEK_S", "LEARNERS", "Completion", "Classification", "SizeClassifier", "divider_s"]

WEEK_S = 7 * 86400

LEARNERS = ("scikit-learn", "ours")
"""The forests the classifier can learn with: scikit-learn's (the paper's learner, the default), or ours."""


class Completion(NamedTuple):
    """A classified job (its ``Submission.key``) completed at ``end_time`` after running ``runtime_s``."""

    key: int
    end_time: int
    runtime_s: int


class Classification(NamedTuple):
    """The class given at submission, and the divider it was judged against (None in the first week)."""

    small: bool
    divider_s: Optional[float]


def divider_s(runtimes_s):
    """The small/large boundary: the median of ``runtimes_s``; None without runtimes."""
    return median(runtimes_s) if runtimes_s else None


class SizeClassifier:
    """Classifies ``Submission``s (``classify``) and learns from their ``Completion``s (``observe``).

    ``seed`` seeds the forests (each week's from the seed and the week number); ``week_s`` is there
    for tests. ``learner``: ``"scikit-learn"`` (the default: scikit-learn's random forest with its
    defaults, ``sklearn_forest``) or ``"ours"`` (the numpy forest of ``forest``, with ``forest``'s
    settings: faster, and a few points less accurate).
    """

    def __init__(self, origin, week_s=WEEK_S, seed=0, forest=ForestSettings(), learner="scikit-learn"):
        if learner not in LEARNERS:
            raise ValueError("learner must be one of {}, not {!r}".format(", ".join(LEARNERS), learner))
        self.origin, self.week_s, self.seed, self.forest_settings = origin, week_s, seed, forest
        self.learner = learner
        self.divider = None
        self._week = 0
        self._submitted = {}  # key -> (Submission, feature row), until it is folded in
        self._pending = []  # completions not folded in yet
        self._history = CategoryHistory()
        self._rows, self._labels = [], []
        self._forest, self._decisions = None, {}

    def classify(self, job):
        """The ``Classification`` of ``job`` (a ``Submission``), submitted now."""
        self._advance((job.submit_time - self.origin) // self.week_s)
        row = job_features(job, self._history)
        self._submitted[job.key] = (job, row)
        if self._forest is None:
            return Classification(False, self.divider)
        decision = tuple(row)
        small = self._decisions.get(decision)
        if small is None:
            small = self._decisions[decision] = self._forest.predict(row)
        return Classification(small, self.divider)

    def observe(self, completion):
        """Record a ``Completion``; it is learned from when its week ends."""
        self._pending.append(completion)

    def _advance(self, week):
        """Fold in, week by week, the completions of the weeks ended before ``week``; retrain if any."""
        if week <= self._week:
            return
        self._week = week
        ended, self._pending = self._split_pending(self.origin + week * self.week_s)
        if not ended:
            return
        by_week = {}
        for done in ended:
            by_week.setdefault((done.end_time - self.origin) // self.week_s, []).append(done)
        for number in sorted(by_week):
            self._fold_in(by_week[number])
        rows = np.array(self._rows, dtype=np.float64)
        if self.learner == "ours":
            self._forest = grow_forest(rows, self._labels, np.random.default_rng([self.seed, week]),
                                       self.forest_settings)
        else:
            self._forest = fit_sklearn_forest(rows, self._labels, seed_of(self.seed, week))
        self._decisions = {}

    def _split_pending(self, week_start):
        ended = [done for done in self._pending if done.end_time < week_start]
        return ended, [done for done in self._pending if done.end_time >= week_start]

    def _fold_in(self, completions):
        """One week's completions: the divider, their labels, their categories and training rows."""
        self.divider = divider_s([done.runtime_s for done in completions])
        for done in sorted(completions, key=lambda done: done.key):  # the forest's rows in a fixed order
            job, row = self._submitted.pop(done.key)
            small = done.runtime_s < self.divider
            self._history.add(job, small)
            self._rows.append(row)
            self._labels.append(int(small))
