"""Job orders for the scheduling cycle: which waiting job the scheduler looks at first.

Each entry of ``POLICIES`` is a ``Policy``: ``key(job, now)`` sorts the queue
ascending (``job`` is a ``QueuedJob``); ``static`` says the key ignores
``now``, so the engine may keep the queue sorted instead of re-sorting it every
cycle. Every key ends with the job's index, so no two jobs tie.
"""

from typing import Callable, NamedTuple

__all__ = ["QueuedJob", "Policy", "POLICIES", "fifo", "shortest_soft_walltime_first", "wfp"]


class QueuedJob(NamedTuple):
    """A waiting job as the scheduler sees it.

    ``index`` is its position in the trace sorted by submission; ``planned_s`` the
    duration planned while it waits (soft walltime, else walltime, else 5 years);
    ``width`` the cores (or nodes) it occupies; ``walltime_plan_s`` its walltime, else 5 years.
    """

    index: int
    submit_time: int
    planned_s: int
    width: int
    walltime_plan_s: int


class Policy(NamedTuple):
    """A job order: ``key(job, now)``; ``static`` when the key does not depend on ``now``."""

    key: Callable
    static: bool


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


POLICIES = {
    "fifo": Policy(fifo, True),
    "sjf": Policy(shortest_soft_walltime_first, True),
    "wfp": Policy(wfp, False),
}
"""The registry: ``--policy`` name -> order. ``fifo`` is the default."""
