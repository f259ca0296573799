"""Job orders for the scheduling cycle: which waiting job the scheduler looks at first.

Each entry of ``POLICIES`` is a ``Policy``: ``key(job, now)`` sorts the queue
ascending (``job`` is a ``QueuedJob``); ``static`` says the key ignores
``now``, so the engine may keep the queue sorted instead of re-sorting it every
cycle; ``classifier`` makes the engine classify each job small or large at
submission (``QueuedJob.small``, see ``replay.classification``), and
``reruns_false_small`` adds Zrigui et al.'s safeguard: a job predicted small
that runs past the divider is killed and queued again as large (what
``qrerun`` does in PBS). Every key ends with the job's index, so no two jobs tie.
"""

from typing import Callable, NamedTuple, Optional

from ..classification import SizeClassifier

__all__ = ["QueuedJob", "Policy", "POLICIES", "fifo", "shortest_soft_walltime_first", "wfp",
           "small_first", "STARVATION_THRESHOLD_S"]

STARVATION_THRESHOLD_S = 24 * 3600
"""small-first: a job waiting this long goes to the head of the queue (the paper gives no value)."""


class QueuedJob(NamedTuple):
    """A waiting job as the scheduler sees it.

    ``index`` is its position in the trace sorted by submission; ``planned_s`` the
    duration planned while it waits (soft walltime, else walltime, else 5 years);
    ``width`` the cores (or nodes) it occupies; ``walltime_plan_s`` its walltime, else 5 years;
    ``small`` whether it was predicted small at submission (only for a policy that ``classifies``).
    """

    index: int
    submit_time: int
    planned_s: int
    width: int
    walltime_plan_s: int
    small: bool = False


class Policy(NamedTuple):
    """A job order: ``key(job, now)``; ``static`` when the key does not depend on ``now``.

    ``classifier(origin)``, if given, makes the ``SizeClassifier`` that classifies each job when
    it is queued; ``reruns_false_small``: kill a job predicted small once it has run past the
    divider, and queue it again as large.
    """

    key: Callable
    static: bool
    classifier: Optional[Callable] = None
    reruns_false_small: bool = False

    @property
    def classifies(self):
        """Whether jobs are classified small or large when they are queued."""
        return self.classifier is not None


def fifo(job, now):
    """Arrival order (PBS's default within a queue): indexes follow submission times."""
    return job.index


def shortest_soft_walltime_first(job, now):
    """Shortest planned duration first (soft walltime when the job has one)."""
    return (job.planned_s, job.index)


def wfp(job, now):
    """Tang et al. eq. 5 (WFP), highest first: (t_queue / t_req)**3 * n, t_req the planned duration."""
    waited = now - job.submit_time
    return (-(waited / job.planned_s) ** 3 * job.width, job.index)


def small_first(job, now):
    """Zrigui et al.: jobs predicted small before large ones, each in arrival order; a job waiting
    ``STARVATION_THRESHOLD_S`` or longer goes to the head of the queue."""
    if now - job.submit_time >= STARVATION_THRESHOLD_S:
        return (0, job.index)
    return (1 if job.small else 2, job.index)


POLICIES = {
    "fifo": Policy(fifo, True),
    "sjf": Policy(shortest_soft_walltime_first, True),
    "wfp": Policy(wfp, False),
    "small-first": Policy(small_first, False, SizeClassifier, reruns_false_small=True),
    "small-first-no-rerun": Policy(small_first, False, SizeClassifier),
}
"""The registry: ``--policy`` name -> order. ``fifo`` is the default."""
