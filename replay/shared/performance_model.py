"""A performance-model submission tool used by a random share of the users, as the Warwick study models it.

The study of an application-performance-modelling tool for job submission
(workloads of Francesca at the University of Warwick, Intrepid and Blue
Horizon; §3) gives some users runtime estimates from performance models
instead of their own walltimes, and generates those estimates from the
workload itself:

* the runtimes are clustered into non-overlapping classes, as few as satisfy
  the maximum error ε ("n is ... selected to satisfy our maximum error
  criterion");
* each class's estimate is its largest runtime ("conservative ... will always
  be greater than or equal to the runtime of any job within its class"), so
  every estimate is at least the runtime and, by the error bound, at most
  (1 + ε) × the runtime;
* a share of the user base, drawn at random, uses the tool for all its jobs;
  everyone else keeps their own walltime.

Classes, built greedily from the longest runtime down (the fewest classes
meeting the bound): a class starting at runtime ``top`` holds every runtime
``r`` with ``top - r <= ε r``. Users are drawn by a seeded permutation of the
trace's users (sorted by name); the first ``round(adoption × users)`` adopt, so
for one seed a larger adoption adds users to a smaller one's.
"""

import bisect
from fractions import Fraction

import numpy as np

from predictor.algorithms import clamp

__all__ = ["PerformanceModel", "runtime_classes", "drawn_users"]


def runtime_classes(runtimes, error):
    """``{runtime: its class's estimate}`` for the distinct ``runtimes`` (seconds >= 0), with maximum relative
    error ``error`` (a ``Fraction``): each estimate is the largest runtime of its class."""
    ordered = sorted(set(runtimes))
    estimates, index = {}, len(ordered) - 1
    while index >= 0:
        top = ordered[index]
        while index >= 0 and (top - ordered[index]) * error.denominator <= error.numerator * ordered[index]:
            estimates[ordered[index]] = top
            index -= 1
    return estimates


def drawn_users(users, adoption, seed):
    """The users of ``users`` who adopt the tool: the first ``round(adoption × count)`` (halves up) of a
    permutation drawn with ``seed``."""
    ordered = sorted(set(users))
    permutation = np.random.Generator(np.random.PCG64(seed)).permutation(len(ordered)).tolist()
    count = int(adoption * len(ordered) + Fraction(1, 2))
    return frozenset(ordered[index] for index in permutation[:count])


class PerformanceModel:
    """``model:error=E:adoption=A:seed=N``: one ``_ModelEstimates`` per run, from the run's jobs."""

    def __init__(self, error=Fraction(1, 10), adoption=Fraction(1, 5), seed=0):
        self.error, self.adoption, self.seed = error, adoption, seed

    def adopters(self, jobs):
        """The users of ``jobs`` who submit with the model's estimates."""
        return drawn_users([job.user for job in jobs], self.adoption, self.seed)

    def __call__(self, jobs):
        return _ModelEstimates(self.adopters(jobs), runtime_classes([job.runtime_s for job in jobs], self.error))


class _ModelEstimates:
    """The estimates of one run: an adopter's job gets its runtime class's, the others their walltimes."""

    def __init__(self, adopters, estimates):
        self.adopters, self.estimates = adopters, estimates
        self.known = sorted(estimates)

    def observe(self, job, end_time, runtime_s):
        """The model is workload-oblivious: completions teach it nothing."""

    def estimate(self, job, now):
        """``job``'s soft walltime: for an adopter its class's estimate, in [1, walltime]; for the others the
        walltime; None without a walltime."""
        walltime = job.walltime_s if job.walltime_s and job.walltime_s >= 1 else None
        if walltime is None or job.user not in self.adopters:
            return walltime
        return clamp(self._class_estimate(job.runtime_s), walltime)

    def _class_estimate(self, runtime_s):
        found = self.estimates.get(runtime_s)
        if found is not None:
            return found
        # A runtime not among the run's jobs (a job given alone): the estimate of the next longer class.
        index = bisect.bisect_left(self.known, runtime_s)
        return self.estimates[self.known[index]] if index < len(self.known) else runtime_s
