"""How a running job's planned duration grows once it outlives its soft walltime.

Each entry of ``EXTENSIONS`` is an ``Extension``: ``planned(soft, walltime,
elapsed)`` is the duration the scheduler plans for a job that has run
``elapsed`` seconds (always more than ``elapsed`` while the job may still run),
and ``count(soft, walltime, runtime)`` is how many times that plan was pushed
back over a run of ``runtime`` seconds. The count is closed-form so that a
wildly underestimated job costs O(1), not one step per extension. A job that
has not run yet is planned its soft walltime, at most its walltime, under every
rule: the engine plans a job's start so without calling the rule.
"""

from typing import Callable, NamedTuple

__all__ = ["Extension", "EXTENSIONS", "pbs_planned", "pbs_count", "double_planned", "double_count", "simple_planned",
           "simple_count", "power_planned", "power_count"]


class Extension(NamedTuple):
    """A soft-walltime extension rule: the planned duration and the extension count."""

    planned: Callable
    count: Callable


def pbs_planned(soft_s, walltime_s, elapsed_s):
    """OpenPBS's extend_soft_walltime: S, 2S, 3S ... capped at the walltime."""
    planned = soft_s * (elapsed_s // soft_s + 1)
    return walltime_s if walltime_s <= planned else planned


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


SIMPLE_STEP_S = 3600
"""Rubio et al.'s ``simple`` correction: one hour more each time."""

POWER_FIRST_STEP_S = 15 * 60
"""Rubio et al.'s (and Tsafrir et al.'s EASY++) ``power`` correction: 15 min at the first, doubling after."""


def simple_planned(soft_s, walltime_s, elapsed_s):
    """Rubio, Villapando, Matira & Aborot, "Correcting Job Walltime in a Resource-Constrained Environment",
    Algorithm 2 (``simple``): a job still running at its limit gets one hour more, S, S + 1 h, S + 2 h ...
    capped at the walltime. (The paper corrects 60 s before the limit; the simulation revises a plan once it
    has passed, so the same value takes effect at the limit.)"""
    if elapsed_s < soft_s:
        return min(walltime_s, soft_s)
    return min(walltime_s, soft_s + SIMPLE_STEP_S * ((elapsed_s - soft_s) // SIMPLE_STEP_S + 1))


def simple_count(soft_s, walltime_s, runtime_s):
    """Corrections under ``simple`` over a run of ``runtime_s``: one per limit outlived, until the walltime."""
    ran = min(runtime_s, walltime_s)
    return (ran - soft_s - 1) // SIMPLE_STEP_S + 1 if ran > soft_s else 0


def _power_limit(soft_s, corrections):
    """The limit after ``corrections`` power corrections: S + 15 min x (1 + 2 + ... + 2**(k-1))."""
    return soft_s + POWER_FIRST_STEP_S * ((1 << corrections) - 1)


def _power_corrections(soft_s, elapsed_s):
    """Corrections of a job that has run ``elapsed_s``: one each time it reaches its limit."""
    if elapsed_s < soft_s:
        return 0
    return (((elapsed_s - soft_s) // POWER_FIRST_STEP_S) + 1).bit_length()


def power_planned(soft_s, walltime_s, elapsed_s):
    """Rubio et al.'s ``power`` correction (after Tsafrir et al.'s EASY++): at the i-th correction (i = 2, 3 ...)
    the limit grows by 15 x 2**(i-2) minutes, each time the job reaches it; capped at the walltime."""
    return min(walltime_s, _power_limit(soft_s, _power_corrections(soft_s, elapsed_s)))


def power_count(soft_s, walltime_s, runtime_s):
    """Corrections under ``power`` over a run of ``runtime_s``, until the limit reaches the walltime."""
    ran = min(runtime_s, walltime_s)
    count = _power_corrections(soft_s, ran - 1) if ran > 0 else 0
    while count and _power_limit(soft_s, count - 1) >= walltime_s:
        count -= 1  # the limit stopped at the walltime before this correction
    return count


EXTENSIONS = {
    "pbs": Extension(pbs_planned, pbs_count),
    "double": Extension(double_planned, double_count),
    "simple": Extension(simple_planned, simple_count),
    "power": Extension(power_planned, power_count),
}
"""The registry: ``--extension`` name -> rule. ``pbs`` is the default."""
