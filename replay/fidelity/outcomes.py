"""Outcomes of a whole run, real against simulated: each job's start error, and the waits.

A job's wait is its start minus its eligible time (PBS's ``etime``: the release of a held job), real
from the logs, simulated from the replay. ``reuse_latency_s`` measures, from the logs alone, how long
the real server took to give a freed vnode to a job that was waiting for it.
"""

import bisect
from typing import NamedTuple, Optional

__all__ = ["Outcomes", "compare_outcomes", "reuse_latency_s", "median", "relative_difference", "WITHIN_S"]

WITHIN_S = 2
"""A simulated start this close to the real one counts as the same start."""


class Outcomes(NamedTuple):
    """Whole-run figures over the jobs both the logs and the replay started."""

    jobs: int
    starts_within_2s: int
    mean_abs_start_error_s: Optional[float]
    wait_mean_real_s: Optional[float]
    wait_mean_sim_s: Optional[float]
    wait_median_real_s: Optional[float]
    wait_median_sim_s: Optional[float]
    not_started_sim: int = 0


def median(values):
    """The median of ``values`` (the mean of the two middle ones for an even count); None if empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    middle = len(ordered) // 2
    return float(ordered[middle]) if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def _mean(values):
    return sum(values) / float(len(values)) if values else None


def relative_difference(simulated, real):
    """(simulated - real) / real, or None when it means nothing (no value, or a real value of 0)."""
    if simulated is None or real is None or real == 0:
        return None
    return (simulated - real) / float(real)


def compare_outcomes(jobs, simulated_starts):
    """``Outcomes`` of ``jobs`` (``(name, eligible_time, real_start)``) against ``simulated_starts``
    (job name -> simulated start); a job the replay never started counts in ``not_started_sim`` only."""
    errors, real_waits, sim_waits, missing = [], [], [], 0
    for name, eligible, real_start in jobs:
        simulated = simulated_starts.get(name)
        if simulated is None:
            missing += 1
            continue
        errors.append(simulated - real_start)
        real_waits.append(real_start - eligible)
        sim_waits.append(simulated - eligible)
    within = sum(1 for error in errors if abs(error) <= WITHIN_S)
    return Outcomes(len(errors), within, _mean([abs(error) for error in errors]), _mean(real_waits),
                    _mean(sim_waits), median(real_waits), median(sim_waits), missing)


def reuse_latency_s(accounting):
    """The median gap between a run's end (E) and the next start (S) on one of its vnodes, counted only
    when the job started there had been waiting, eligible, at that end; None if the logs show none."""
    records = accounting.by_name()
    starts_on = {}  # vnode -> sorted start positions
    for start in accounting.starts:
        for vnode in _vnodes(_run_of(records[start.name], start)):
            starts_on.setdefault(vnode, []).append(start)
    starts_on = {vnode: ([start.order for start in starts], starts) for vnode, starts in starts_on.items()}
    gaps = []
    for record in accounting.jobs:
        for run in record.runs:
            if run.end_order is None or run.end is None:
                continue
            following = _next_start(starts_on, run)
            if following is not None and _was_waiting(records[following.name], run):
                gaps.append(following.time - run.end)
    return median(gaps)


def _run_of(record, start):
    return next((run for run in record.runs if run.start_order == start.order), None)


def _vnodes(run):
    return [] if run is None else sorted({vnode for vnode, _ in run.allocation})


def _next_start(starts_on, run):
    """The first S record after ``run``'s end on any of its vnodes."""
    found = None
    for vnode in _vnodes(run):
        orders, starts = starts_on.get(vnode, ((), ()))
        position = bisect.bisect_right(orders, run.end_order)
        if position < len(starts) and (found is None or starts[position].order < found.order):
            found = starts[position]
    return found


def _was_waiting(record, run):
    return record.queued_order < run.end_order and record.job.eligible_time <= run.end
