"""``simulate --site``'s predictors side by side: one run per predictor, in forked worker processes.

The site's model is plain Python and far slower than the built-in engine (seconds of CPU per thousand
jobs), so its runs, one per predictor and independent of each other, are shared among ``--workers``
processes as the built-in runs are (``parallel.py``): the workers are forked once the jobs, the
predictors and the site are in memory and inherit them; each sends back its run's ``ScheduledJob``s. A
run is deterministic, so the output is the same bytes for any number of workers. Where processes
cannot be forked, or one worker is asked for, the runs are made one after the other in this process.
"""

import concurrent.futures
import multiprocessing

from ..shared.workers import worker_pool
from .parallel import can_fork
from .site import simulate_warmed

__all__ = ["simulate_site_all"]

_INHERITED = None
"""``(jobs, predictors, site machine, default walltime, warm-up)``: set by the parent just before it forks
the workers."""


def simulate_site_all(jobs, predictors, site_machine, default_walltime_s=None, warmed=None, workers=1,
                      on_run=None):
    """``{predictor name: [ScheduledJob]}``: ``simulate_site`` once per predictor, in ``workers`` processes,
    each from the ``WarmUp`` ``warmed`` if given. ``on_run(done, total)``, if given, is called as each run
    ends (in this process)."""
    global _INHERITED
    total = len(predictors)
    if workers <= 1 or total <= 1 or not can_fork():
        runs = {}
        for number, predictor in enumerate(predictors):
            runs[predictor.name] = simulate_warmed(jobs, predictor, site_machine, default_walltime_s, warmed)
            if on_run is not None:
                on_run(number + 1, total)
        return runs
    _INHERITED = (jobs, predictors, site_machine, default_walltime_s, warmed)
    try:
        with worker_pool(min(workers, total), multiprocessing.get_context("fork")) as pool:
            futures = {pool.submit(_run, number): number for number in range(total)}
            done = {}
            for future in concurrent.futures.as_completed(futures):
                done[futures[future]] = future.result()  # a failed run fails the command now, with its error
                if on_run is not None:
                    on_run(len(done), total)
            return {predictor.name: done[number] for number, predictor in enumerate(predictors)}
    finally:
        _INHERITED = None


def _run(number):
    """In a worker: the inherited predictor ``number``'s run."""
    jobs, predictors, site_machine, default_walltime_s, warmed = _INHERITED
    return simulate_warmed(jobs, predictors[number], site_machine, default_walltime_s, warmed)
