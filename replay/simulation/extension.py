"""How a running job's planned duration grows once it outlives its soft walltime.

Each entry of ``EXTENSIONS`` is an ``Extension``: ``planned(soft, walltime,
elapsed)`` is the duration the scheduler plans for a job that has run
``elapsed`` seconds (always more than ``elapsed`` while the job may still run),
and ``count(soft, walltime, runtime)`` is how many times that plan was pushed
back over a run of ``runtime`` seconds. The count is closed-form so that a
wildly underestimated job costs O(1), not one step per extension.
"""

from typing import Callable, NamedTuple

__all__ = ["Extension", "EXTENSIONS", "pbs_planned", "pbs_count", "double_planned", "double_count"]


class Extension(NamedTuple):
    """A soft-walltime extension rule: the planned duration and the extension count."""

    planned: Callable
    count: Callable


def pbs_planned(soft_s, walltime_s, elapsed_s):
    """OpenPBS's extend_soft_walltime: S, 2S, 3S ... capped at the walltime."""
    return min(walltime_s, soft_s * (elapsed_s // soft_s + 1))


def pbs_count(soft_s, walltime_s, runtime_s):
    """Extensions of a job that ran ``runtime_s``: one per S it outlived, until the cap."""
    ran = min(runtime_s, walltime_s)
    return (ran - 1) // soft_s if ran > soft_s else 0


def double_planned(soft_s, walltime_s, elapsed_s):
    """Doubling as Chlumsky & Klusacek word it ("Improving Accuracy of Walltime Estimates in PBS Professional
    using Soft Walltimes"): S, 2S, 4S ... capped at the walltime."""
    return min(walltime_s, soft_s << (elapsed_s // soft_s).bit_length())


def double_count(soft_s, walltime_s, runtime_s):
    """Extensions under doubling: the number of S * 2**k the job outlived."""
    ran = min(runtime_s, walltime_s)
    return ((ran - 1) // soft_s).bit_length() if ran > soft_s else 0


EXTENSIONS = {
    "pbs": Extension(pbs_planned, pbs_count),
    "double": Extension(double_planned, double_count),
}
"""The registry: ``--extension`` name -> rule. ``pbs`` is the default."""
