"""The hooks' policy: whether a job event gets a prediction, and the safe fallback.

Pure functions of a ``JobView`` and the ``HookConfig``; ``runtime`` does the
rest. The rules:

* No walltime (requested or new), or a shrink-to-fit job (``min_walltime``,
  where PBS forbids soft_walltime): nothing to do.
* A soft_walltime given in the request itself -- a manager's ``qsub -l`` or
  ``qalter -l soft_walltime`` -- is kept when ``keep_admin_soft_walltime`` is
  true, and always in modifyjob (the manager is changing it right now).
* A skipped user or queue, and with ``keep_admin_soft_walltime`` a job that
  already has a soft_walltime (runjob cannot tell a manager's value from the
  queuejob hook's), get no prediction.
* With ``runjob_after_queued_s`` set, runjob predicts again only for a job
  submitted (its ``ctime``) at least that long ago, as CESNET's production
  hook does for jobs queued over an hour; a job that started sooner keeps the
  soft_walltime queuejob gave it.
* In every case an existing soft_walltime above the walltime is lowered to it
  (the fallback): PBS would reject the qalter that lowered the walltime, and
  does not check runjob values at all.
"""

from typing import NamedTuple, Optional

from ..algorithms import clamp

__all__ = ["Plan", "plan", "within_walltime"]


class Plan(NamedTuple):
    """``predict``: ask the history. ``fallback_s``: soft walltime to set otherwise (None: leave it)."""

    predict: bool
    fallback_s: Optional[int]


_NOTHING = Plan(False, None)


def within_walltime(soft_s, walltime_s):
    """``soft_s`` brought into PBS's legal ``[1, walltime]`` if it is outside, else None (no change needed)."""
    if soft_s is None or 1 <= soft_s <= walltime_s:
        return None
    return clamp(soft_s, walltime_s)


def plan(view, config, now=None):
    """The ``Plan`` for one queuejob, runjob or modifyjob event at ``now`` (epoch seconds; None: unknown)."""
    if view.walltime_s is None or view.walltime_s < 1 or view.shrink_to_fit:
        return _NOTHING
    if view.explicit_soft_s is not None and (config.keep_admin_soft_walltime or view.hook_event == "modifyjob"):
        return _NOTHING
    fallback = within_walltime(view.existing_soft_s, view.walltime_s)
    skipped = not view.user or view.user in config.skip_users or view.queue in config.skip_queues
    if skipped or (config.keep_admin_soft_walltime and view.existing_soft_s is not None):
        return Plan(False, fallback)
    if view.hook_event == "runjob" and _queued_briefly(view, config.runjob_after_queued_s, now):
        return Plan(False, fallback)
    return Plan(True, fallback)


def _queued_briefly(view, threshold_s, now):
    """Whether the job was submitted less than ``threshold_s`` before ``now`` (never, without all three)."""
    if threshold_s is None or now is None or view.submit_time is None:
        return False
    return now - view.submit_time < threshold_s
