"""Eligible time as PBS accrues it: what ``eligible_time`` in ``job_sort_formula`` reads.

What PBS does (OpenPBS 23.06, server ``update_eligible_time`` and scheduler ``update_accruetype``), with
the server's ``eligible_time_enable`` on:

- Each job accrues time of one type at a time: *eligible*, *ineligible*, running or exiting. Its
  ``eligible_time`` is the eligible time accrued so far; the scheduler reads it at the start of a cycle
  (the server adds the time since the last change when the job is accruing eligible time).
- The scheduler sets the type of each queued job it could not run, at the end of the job's turn in the
  cycle: *ineligible* when the job is over a run limit per user, group or project (``max_run``,
  ``max_run_res`` with ``u:``, ``g:``, ``p:``), checked against the cycle's total counts
  (``limits.Totals``: the running jobs plus the jobs already considered in the cycle), or over such a
  limit for itself (checked only for a job that could fit in what the vnodes have left: ``cycle``);
  *ineligible* too when its formula value is at or below
  ``job_sort_formula_threshold``; *eligible* otherwise (no room, a limit for everyone, strict ordering,
  ...). So of a user's queued jobs under ``max_run = [u:PBS_GENERIC=2]``, only the first ones in sort
  order, as many as the limit leaves free, accrue eligible time; the others wait without it.
- A job released from a hold accrues ineligible time until a cycle sets its type; PBS runs a cycle when a
  job is released or queued, so a job starts accruing (or not) at its ``etime``.

Without limits per entity and without a threshold every queued job accrues eligible time from its
``etime``, and ``Accrual`` is not needed (``tracks_accrual``).

Not modelled: a job array accrues as one job while it has queued subjobs, and each subjob starts from the
array's eligible time (here each subjob accrues its own from its ``etime``); jobs over a soft limit
(``max_run_soft``), which PBS makes accrue ineligible time, and ``qsub -a`` start times.
"""

from typing import Dict, Tuple

from .limits import has_entity_limits

__all__ = ["Accrual", "tracks_accrual", "INELIGIBLE_KINDS"]

INELIGIBLE_KINDS = frozenset("ugp")
"""Kinds of run limit (user, group, project) a job over which accrues ineligible time."""


def tracks_accrual(policy):
    """True if some queued jobs may accrue ineligible time under ``policy``, so that their eligible time
    must be followed from cycle to cycle: ``eligible_time_enable`` on, a ``job_sort_formula``, and run
    limits per user, group or project, or a ``job_sort_formula_threshold``."""
    return bool(policy.eligible_time_enable and policy.job_sort_formula
                and (policy.job_sort_formula_threshold is not None or has_entity_limits(policy)))


class Accrual:
    """The eligible time of queued jobs across cycles: job name -> (eligible seconds accrued, since when,
    whether accruing eligible time since then). A job not yet seen by a cycle has accrued eligible time
    since its ``eligible_time``."""

    def __init__(self, jobs=None):
        self._jobs: Dict[str, Tuple[int, int, bool]] = dict(jobs or {})

    def copy(self):
        return Accrual(self._jobs)

    def eligible_s(self, job, now):
        """``job``'s ``eligible_time`` as the scheduler reads it at ``now``."""
        kept = self._jobs.get(job.name)
        if kept is None:
            return max(0, now - job.eligible_time)
        accrued, since, eligible = kept
        return accrued + (now - since if eligible else 0)

    def accruing(self, job):
        """True if ``job`` accrues eligible time now (``accrue_type`` 2), False if ineligible time (1)."""
        kept = self._jobs.get(job.name)
        return True if kept is None else kept[2]

    def after_cycle(self, now, queued, ineligible):
        """A cycle at ``now`` left ``queued`` jobs waiting; those named in ``ineligible`` accrue ineligible
        time from now on, the others eligible time."""
        for job in queued:
            eligible = job.name not in ineligible
            kept = self._jobs.get(job.name)
            if kept is None:
                if eligible:
                    continue  # still as unseen: eligible since its eligible_time
                kept = (0, job.eligible_time, True)
            accrued, since, was = kept
            if was != eligible:
                self._jobs[job.name] = (accrued + (now - since if was else 0), now, eligible)

    def forget(self, names):
        """Jobs that started or left: their accrual no longer matters."""
        for name in names:
            self._jobs.pop(name, None)
