"""The order in which the scheduler considered its jobs, from its own log, against the model's.

Each cycle of pbs_sched writes "Starting Scheduling Cycle" to its log (``sched_logs/YYYYMMDD``), then, for
every job it takes from its sorted list (``next_job`` in OpenPBS's scheduler), "Considering job to run" before
it tries the job, and "Job run" for each job it runs. The default ``log_events`` (767) includes these lines
(128, debug). The decisions check asks the model for the same cycle (``decisions.check_decisions``), and the
cycle the model answered lists the jobs it considered in its order (``replay.pbs.cycle.Decision.considered``).
Where the two ran the same jobs, the orders are compared: a check of the job sort itself (formula, sort keys,
queue priorities, round robin, fairshare, top jobs), including the jobs that could not run, which the
decisions alone do not show.

A job eligible only in that second may have been eligible for the model and not yet seen by the scheduler:
the decisions check reads a second's releases as seen first. Such a job, considered by the model only, is
left out of the comparison; any other job considered by one side only makes the orders differ.
"""

from typing import List, NamedTuple, Tuple

from ..traces.files import raw_lines
from .server_log import log_files

__all__ = ["SchedulerCycle", "OrderCheck", "read_sched_log", "check_orders"]

STARTING = b"Starting Scheduling Cycle"
CONSIDERING = b"Considering job to run"
RUN = b"Job run"


class SchedulerCycle(NamedTuple):
    """One cycle of the scheduler's log: the jobs it considered and the jobs it ran, in its order."""

    considered: Tuple[str, ...]
    run: Tuple[str, ...]


class OrderCheck(NamedTuple):
    """A decision whose jobs one cycle of the scheduler's log ran: the jobs that cycle considered, the model's,
    whether they come in the same order (as the module's text says), and the jobs considered by one side only."""

    check: object
    real: Tuple[str, ...]
    model: Tuple[str, ...]
    in_order: bool
    real_only: Tuple[str, ...]
    model_only: Tuple[str, ...]


def read_sched_log(paths, on_reject, days=None):
    """The ``SchedulerCycle`` list of scheduler log files and directories of ``YYYYMMDD`` files, read in date
    order (``server_log.log_files``; with ``days``, only those days'); a damaged compressed file goes to
    ``on_reject(path, line_no, message)``. Lines of other kinds, and a job's lines before the first cycle, are
    left alone."""
    cycles: List[Tuple[list, list]] = []
    for path in log_files(paths, days):
        for _, raw in raw_lines(path, on_reject):
            fields = raw.split(b";", 5)
            if len(fields) < 6:
                continue
            message = fields[5]
            if message.startswith(STARTING):
                cycles.append(([], []))
            elif cycles and fields[3] == b"Job" and message in (CONSIDERING, RUN):
                cycles[-1][message == RUN].append(fields[4].decode("utf-8", "replace"))
    return [SchedulerCycle(tuple(considered), tuple(run)) for considered, run in cycles]


def check_orders(checks, cycles):
    """An ``OrderCheck`` for each agreeing ``DecisionCheck`` whose started jobs are those of exactly one cycle
    of ``cycles`` that ran jobs (a cycle whose jobs the server's log split between two decisions matches none)."""
    by_run = {}
    for cycle in cycles:
        if cycle.run:
            by_run.setdefault(frozenset(cycle.run), []).append(cycle)
    found = []
    for check in checks:
        matching = by_run.get(frozenset(check.group.started), []) if check.agrees else []
        if len(matching) != 1 or {job.name for job, _ in check.decision.started} != set(check.group.started):
            continue
        found.append(_order_check(check, matching[0].considered))
    return found


def _order_check(check, real):
    model = tuple(check.decision.considered)
    now = {job.name for job in check.state.queued if job.eligible_time == check.state.now}
    real_only = tuple(name for name in real if name not in model)
    model_only = tuple(name for name in model if name not in real)
    common = set(real) & set(model)
    in_order = not real_only and set(model_only) <= now and \
        [name for name in real if name in common] == [name for name in model if name in common]
    return OrderCheck(check, tuple(real), model, in_order, real_only, model_only)
