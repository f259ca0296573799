"""The estimates the replay compares, by name: an explicit registry.

Each entry is a ``ReplayPredictor``: ``window`` is how many history rows it
reads (0: none) and ``estimate(history, job)`` returns the soft walltime in
seconds, or None when the job would get none. ``history`` is the job's user's
completed jobs, newest first (``HistoryRow``s), exactly what a hook would see.
v1-v3, v3-deployed are the hooks' own code (predictor.algorithms).

``reads`` names the Job fields ``estimate`` looks at (None: not declared).
With the history, they decide the estimate, so a replay may reuse one value
for jobs of a user that agree on them while the user's history is unchanged.
"""

from typing import Callable, NamedTuple, Optional, Tuple

from predictor.algorithms import make_algorithm

__all__ = ["ReplayPredictor", "PREDICTORS", "ACCURACY_PREDICTORS", "history_capacity"]


class ReplayPredictor(NamedTuple):
    """A named estimate: ``estimate(history, job) -> seconds or None``."""

    name: str
    window: int
    estimate: Callable
    reads: Optional[Tuple[str, ...]] = None


def _algorithm(name):
    algorithm = make_algorithm(name)
    return ReplayPredictor(name, algorithm.window, lambda history, job: algorithm.predict(history, job.walltime_s),
                           ("walltime_s",))


def _clairvoyant(history, job):
    """The true runtime, as PBS could use it: within [1, walltime]."""
    if job.walltime_s is None or job.walltime_s < 1:
        return max(job.runtime_s, 1)
    return min(max(job.runtime_s, 1), job.walltime_s)


PREDICTORS = {
    "user": ReplayPredictor("user", 0, lambda history, job: job.walltime_s if job.walltime_s else None),
    "v1": _algorithm("v1"),
    "v2": _algorithm("v2"),
    "v3": _algorithm("v3"),
    "v3-deployed": _algorithm("v3-deployed"),
    "recorded": ReplayPredictor("recorded", 0, lambda history, job: job.soft_walltime_s),
    "clairvoyant": ReplayPredictor("clairvoyant", 0, _clairvoyant),
}

ACCURACY_PREDICTORS = ("user", "v1", "v2", "v3", "recorded")
"""The accuracy replay's default set (clairvoyant would be trivially exact there)."""


def history_capacity(predictors):
    """Rows per user a MemoryHistory must keep to serve ``predictors``."""
    return max([p.window for p in predictors] + [1])
