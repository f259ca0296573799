"""Running a sweep's cells on this machine, in worker processes.

Cells finish in any order; their results are put back in cell order, so the
table does not depend on ``--jobs`` nor on which cell was quickest.
"""

import concurrent.futures
import os

from predictor.cmdline.progress import ProgressBar

from ..shared.workers import worker_pool
from .cells import cell_result

__all__ = ["default_jobs", "run_cells"]


def default_jobs():
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _cell_result(work):
    index, cell, settings = work
    return cell_result(index, cell, settings)


def _here(work, progress):
    results = {}
    for item in work:
        results[item[0]] = _cell_result(item)
        progress(len(results), len(work))
    return results


def _in_processes(work, jobs, progress):
    results = {}
    with worker_pool(jobs) as pool:  # an interrupt or a bug kills the running cells at once
        futures = {pool.submit(_cell_result, item): item[0] for item in work}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
            progress(len(results), len(work))
    return results


def run_cells(cells, settings, jobs):
    """``{cell number: result JSON text}`` of every cell, run by ``jobs`` processes (1: in this one)."""
    work = [(index, cell, settings) for index, cell in enumerate(cells, 1)]
    progress = ProgressBar("simulating {} cells".format(len(work)), unit="cell")
    try:
        if jobs <= 1 or len(work) <= 1:
            return _here(work, progress)
        return _in_processes(work, min(jobs, len(work)), progress)
    finally:
        progress.close()
