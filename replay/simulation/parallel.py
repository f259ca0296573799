"""Several predictors' simulations side by side: one worker process per run.

The workers are forked once the jobs and the resolved predictors are in
memory, so they inherit them instead of receiving a pickled copy (the jobs'
columns and the ``RunFrame``'s arrays are numpy arrays: reading them writes
no page, so no worker copies them). Each worker writes what its run decides
(``RunColumns``) into a shared mapping the parent made for that run before
forking, and sends back only its few reservations and reruns: nothing is pickled
or copied per job. The parent, which makes its own share of the runs meanwhile, joins
them to its own ``RunFrame``. The runs are deterministic, so the outputs do not depend on how
many processes ran them. Where processes cannot be forked, the runs are made
one after the other in this process.

Progress: each worker writes how many jobs it has submitted into a shared
array, which the parent reads while it waits.
"""

import gc
import os

from ..shared.workers import worker_pool
from .engine import simulate_run
from .schedule import COLUMN_BYTES, ScheduledRun, is_wide, new_columns

__all__ = ["default_workers", "can_fork", "in_processes"]

_POLL_S = 0.5
"""How often the parent redraws the progress bar while the workers run."""

_INHERITED = None
"""``(frame, predictors, cluster, settings, submitted counts, {run number: shared RunColumns})``: set by the
parent just before it forks the workers."""


def default_workers(predictors):
    """One process per predictor, at most as many as the CPUs this process may run on (its cpuset, as PBS
    gives a job)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, predictors))


def can_fork():
    """Whether worker processes can inherit the jobs (the ``fork`` start method exists here)."""
    import multiprocessing  # here, as the other process machinery: a run by one process never needs it
    return "fork" in multiprocessing.get_all_start_methods()


def in_processes(frame, predictors, cluster, settings, workers, progress):
    """``{name: ScheduledRun}`` for ``predictors``, simulated by this process and ``workers - 1`` forked ones.

    This process takes every ``workers``-th run (the first, then ``workers`` on) while the forked processes
    share the others: an idle parent would take one more worker process, and its memory, for the same time.
    """
    import mmap
    import multiprocessing
    global _INHERITED
    context = multiprocessing.get_context("fork")
    submitted = context.RawArray("q", len(predictors))
    total = len(frame.jobs) * len(predictors)
    own = range(0, len(predictors), workers)
    shared = {number: mmap.mmap(-1, max(COLUMN_BYTES * len(frame.jobs), 1))
              for number in range(len(predictors)) if number not in own}
    _INHERITED = (frame, predictors, cluster, settings, submitted, shared)
    gc.freeze()  # the workers' collector then leaves the inherited objects alone: fewer pages copied
    try:
        with worker_pool(workers - 1, context) as pool:  # an interrupt or a failed run kills the others at once
            # All workers are forked at the first submission, before the progress bar starts its thread.
            futures = {number: pool.submit(_run, number) for number in range(len(predictors)) if number not in own}
            columns = {number: _run_here(number, total, progress) for number in own}
            _wait(list(futures.values()), submitted, total, progress)
            columns.update((number, _joined(len(frame.jobs), shared[number], future.result()))
                           for number, future in futures.items())
            return {predictor.name: ScheduledRun(frame, columns[number])
                    for number, predictor in enumerate(predictors)}
    finally:
        _INHERITED = None
        gc.unfreeze()


def _joined(count, memory, sent):
    """The ``RunColumns`` a worker wrote into ``memory``, with the parts it ``sent``."""
    sent = dict(sent)
    return new_columns(count, memory, sent.pop("wide"))._replace(**sent)


def _run_here(number, total, progress):
    """Run ``number`` in this process, the progress bar showing every run's count; its ``RunColumns``."""
    frame, predictors, cluster, settings, submitted, _ = _INHERITED

    def on_progress(count, _):
        submitted[number] = count
        progress(sum(submitted), total)
    return simulate_run(frame, predictors[number], cluster, settings, on_progress).columns


def _wait(futures, submitted, total, progress):
    import concurrent.futures
    pending = set(futures)
    while pending:
        done, pending = concurrent.futures.wait(pending, timeout=_POLL_S,
                                                return_when=concurrent.futures.FIRST_EXCEPTION)
        for future in done:
            future.result()  # a failed run fails the command now, with its own error
        progress(sum(submitted), total)


def _run(number):
    """In a worker: run the inherited predictor ``number`` over the inherited jobs into its shared
    ``RunColumns``; the parts not shared (the reservations and the reruns, a few jobs' each) by field name, and
    whether its soft walltimes are int64 (``wide``)."""
    frame, predictors, cluster, settings, submitted, shared = _INHERITED

    def on_progress(count, _):
        submitted[number] = count
    columns = simulate_run(frame, predictors[number], cluster, settings, on_progress, shared[number]).columns
    return {"wide": is_wide(columns), "reserved": columns.reserved, "reservation": columns.reservation,
            "reruns": columns.reruns}
