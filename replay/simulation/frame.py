"""What every run of the same jobs on the same machine shares, held as numpy arrays: the ``RunFrame``.

The jobs are put in submission order (a stable sort: jobs submitted at the
same second keep their trace order) and each one's width, walltimes, runtime
and the time it holds its cores are computed once, for the whole trace at
once, into one array each. A trace read as columns (``JobColumns``) stays
columns: no ``Job`` is made here, and worker processes forked after the frame
is made read the arrays without copying a page (reading an element of a numpy
array writes no reference count, where reading a Python object does). The
engine reads them through ``memoryview``s, which give plain Python ints.
"""

import numpy as np

from ..traces.columns import NONE, JobColumns
from ..traces.files import give_back_freed_memory
from .extension import EXTENSIONS
from .schedule import NO_WALLTIME, RunFrame

__all__ = ["FIVE_YEARS_S", "run_frame", "widths", "fitting", "numbers"]

_INT32 = np.iinfo(np.int32)

FIVE_YEARS_S = 5 * 365 * 86400
"""What PBS plans for a job with neither soft walltime nor walltime."""


def numbers(jobs, field, missing=None):
    """Integer ``field`` of ``jobs`` (``JobColumns`` or a list of ``Job``) as an int64 array, ``missing`` for None
    (None: ValueError if a job has none)."""
    if isinstance(jobs, JobColumns):
        return jobs.numbers(field, missing)
    values = [getattr(job, field) for job in jobs]
    if missing is None and None in values:
        raise ValueError("{}: no value for job {}".format(field, jobs[values.index(None)].job_id))
    return np.array([missing if value is None else value for value in values], dtype=np.int64).reshape(-1)


def widths(jobs, cluster):
    """The units each of ``jobs`` occupies on ``cluster`` (``Cluster.width`` of every job at once), int64."""
    cores = numbers(jobs, "ncpus")
    if cluster.cores_per_node is None:
        return cores
    return np.maximum(numbers(jobs, "nodes", 0), -(-cores // cluster.cores_per_node))


def fitting(jobs, cluster):
    """A bool array: whether the machine can run each of ``jobs`` (``Cluster.can_run`` of every job at once)."""
    return _fits(widths(jobs, cluster), numbers(jobs, "runtime_s"), cluster)


def _fits(width, runtime, cluster):
    return (width >= 1) & (width <= cluster.capacity) & (runtime >= 0)


def run_frame(jobs, cluster, settings):
    """The ``RunFrame`` of ``jobs`` (``JobColumns``, or a list of ``Job``) on ``cluster``: sorted by submission,
    each one's width and walltimes.

    ValueError names a job the machine could never run.
    """
    jobs, submit = _by_submission(jobs)
    arrays = _arrays(jobs, cluster, settings)
    give_back_freed_memory()  # the whole-trace temporaries: worker processes forked next would inherit them
    return RunFrame(jobs, submit=submit, count_extensions=EXTENSIONS[settings.extension].count, shared_arrays={},
                    **arrays)


def _arrays(jobs, cluster, settings):
    """The frame's arrays but ``submit``, read-only, each the narrowest of int32 and int64 that holds it."""
    width, runtime = widths(jobs, cluster), numbers(jobs, "runtime_s")
    _check_fits(jobs, width, runtime, cluster)
    asked = numbers(jobs, "walltime_s", 0)
    walltime = np.where(asked >= 1, asked, NO_WALLTIME if settings.default_walltime_s is None
                        else settings.default_walltime_s)
    killed = (walltime != NO_WALLTIME) & (runtime > walltime)
    occupancy = numbers(jobs, "occupancy_s", NONE)
    runs_for = _narrow(np.where(killed, walltime, runtime))
    if (occupancy == NONE).all():
        held = runs_for  # it holds its cores while it runs (SWF): the same array
    else:
        held = np.where(occupancy == NONE, runtime, occupancy)
        held = _narrow(np.where(killed, np.minimum(held, walltime), held))
    arrays = {"width": _narrow(width), "walltime": _narrow(walltime),
              "walltime_plan": _narrow(np.where(walltime > 0, walltime, FIVE_YEARS_S)),  # none (or 0): 5 years
              "runtime": runs_for, "held": held, "killed": killed}
    for array_ in arrays.values():
        array_.flags.writeable = False
    return arrays


def _narrow(values):
    """int64 ``values`` as int32 when they all fit: half the memory, the same numbers."""
    if values.size and _INT32.min <= int(values.min()) and int(values.max()) <= _INT32.max:
        return values.astype(np.int32)
    return values


def _by_submission(jobs):
    """``(jobs in submission order, their submission times)``: a stable sort, as ``sorted`` by submit_time."""
    if not isinstance(jobs, JobColumns):
        jobs = sorted(jobs, key=lambda job: job.submit_time)
        return jobs, numbers(jobs, "submit_time")
    submit = jobs.numbers("submit_time")
    if len(submit) and (submit[1:] < submit[:-1]).any():
        order = np.argsort(submit, kind="stable")
        return jobs.taken(order), submit[order]
    return jobs, submit


def _check_fits(jobs, width, runtime, cluster):
    refused = np.flatnonzero(~_fits(width, runtime, cluster))
    if refused.size:
        index = int(refused[0])
        raise ValueError("job {} cannot run here: it needs {} units (the machine has {}) for {} s".format(
            jobs[index].job_id, int(width[index]), cluster.capacity, int(runtime[index])))
