"""Job orders for the scheduling cycle: which waiting job the scheduler looks at first.

Each entry of ``POLICIES`` is a ``Policy``: ``key(job, now)`` sorts the queue
ascending (``job`` is a ``QueuedJob``); ``static`` says the key ignores
``now``, so the engine may keep the queue sorted instead of re-sorting it every
cycle; ``classifier`` makes the engine classify each job small or large at
submission (``QueuedJob.small``, see ``replay.classification``), and
``reruns_false_small`` adds Zrigui et al.'s safeguard: a job predicted small
that runs past the divider is killed and queued again as large (what
``qrerun`` does in PBS). Every key ends with the job's index, so no two jobs tie.

Zrigui et al. put the jobs predicted small first over each of four base
orders: FCFS (``small-first``), SPF (``small-first-sjf``), SAF
(``small-first-saf``) and WFP (``small-first-wfp``), each also without the
safeguard (``-no-rerun``). ``with_starvation_threshold`` is ours, an option
that is off by default: the paper mentions a waiting-time threshold but gives
no value.
"""

from typing import Callable, NamedTuple, Optional

__all__ = ["QueuedJob", "Policy", "POLICIES", "fifo", "shortest_soft_walltime_first", "smallest_area_first", "wfp",
           "small_first", "with_starvation_threshold", "SMALL_FIRST_BASES"]


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


def smallest_area_first(job, now):
    """SAF (Zrigui et al.): the smallest planned area first, planned duration x cores."""
    return (job.planned_s * job.width, job.index)


def wfp(job, now):
    """Tang et al. eq. 5 (WFP), highest first: (t_queue / t_req)**3 * n, t_req the planned duration."""
    waited = now - job.submit_time
    return (-(waited / job.planned_s) ** 3 * job.width, job.index)


def small_first(base):
    """Zrigui et al. (Algorithm 1): the jobs predicted small before the large ones, each class in ``base``'s
    order."""
    def key(job, now):
        return (0 if job.small else 1, base(job, now))
    key.__doc__ = "small-first over {}".format(base.__name__)
    return key


def with_starvation_threshold(policy, threshold_s):
    """Ours, off by default: ``policy`` with a job waiting ``threshold_s`` or longer moved to the head of the
    queue (in arrival order); ``policy`` itself when ``threshold_s`` is None."""
    if threshold_s is None:
        return policy
    base = policy.key

    def key(job, now):
        if now - job.submit_time >= threshold_s:
            return (0, job.index)
        return (1, base(job, now))
    return policy._replace(key=key, static=False)


def _size_classifier(origin):
    """The ``SizeClassifier`` of a small-first run (the classifier's modules imported only for those)."""
    from ..classification import SizeClassifier
    return SizeClassifier(origin)


SMALL_FIRST_BASES = {"": fifo, "-sjf": shortest_soft_walltime_first, "-saf": smallest_area_first, "-wfp": wfp}
"""Zrigui et al.'s four base orders under small-first, by the suffix of the policy's name: FCFS, SPF, SAF, WFP."""

_SMALL_FIRST = {suffix: small_first(base) for suffix, base in SMALL_FIRST_BASES.items()}

POLICIES = dict(
    {"fifo": Policy(fifo, True),
     "sjf": Policy(shortest_soft_walltime_first, True),
     "saf": Policy(smallest_area_first, True),
     "wfp": Policy(wfp, False)},
    **{"small-first" + suffix: Policy(key, False, _size_classifier, reruns_false_small=True)
       for suffix, key in _SMALL_FIRST.items()},
    **{"small-first" + suffix + "-no-rerun": Policy(key, False, _size_classifier)
       for suffix, key in _SMALL_FIRST.items()})
"""The registry: ``--policy`` name -> order. ``fifo`` is the default."""
