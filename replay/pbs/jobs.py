"""A job as the PBS scheduler sees it, and the end the scheduler plans for it.

PBS plans every job with its soft walltime if set, else its walltime, else five years
(``set_job_times`` in OpenPBS's scheduler). A running job past that end is either
extended by whole soft walltimes, capped at its walltime (``extend_soft_walltime``), or,
with no soft walltime, expected to end one second from now.
"""

from typing import NamedTuple, Optional, Tuple

from .resources import Chunk, Place

__all__ = ["PbsJob", "JOB_INFINITY_S", "EXITING_TIME_S", "planned_duration", "planned_end", "total"]

JOB_INFINITY_S = 60 * 60 * 24 * 365 * 5
"""The duration PBS plans for a job with neither soft walltime nor walltime."""

EXITING_TIME_S = 1
"""How long after now PBS expects a job past its walltime (and one exiting) to end."""


class PbsJob(NamedTuple):
    """One job: who, where, what it asks for, and when it may run.

    ``index`` is its position in submission order (PBS's tie-break); ``name`` the PBS job id.
    ``chunks`` and ``place`` come from ``Resource_List.select`` and ``place``; ``resources``
    holds the job-wide ``Resource_List`` amounts (ncpus, mem in kb, walltime in seconds, ...)
    that sort formulas and limits read. ``eligible_time`` is when the job may first run (PBS
    ``etime``: a held job or one waiting on a dependency is not eligible before its release).
    ``runtime_s`` is how long it holds its resources once started, known only to a simulation.
    ``account`` is its ``Account_Name``, None when it has none (a fairshare entity). ``cpu_load`` is the
    share of its ncpus it keeps busy, which its ``cput`` grows by: from a log's ``resources_used.cput``
    where known (``sleep`` keeps none), else 1.
    """

    index: int
    name: str
    user: str
    group: str
    project: str
    queue: str
    chunks: Tuple[Chunk, ...]
    place: Place
    walltime_s: Optional[int]
    soft_walltime_s: Optional[int]
    submit_time: int
    eligible_time: int
    runtime_s: int = 0
    priority: int = 0
    resources: Tuple[Tuple[str, object], ...] = ()
    account: Optional[str] = None
    cpu_load: float = 1.0

    def resource(self, name, default=0):
        """The job-wide ``Resource_List`` value of ``name``, else the chunks' sum, else ``default``."""
        for key, value in self.resources:
            if key == name:
                return value
        summed = total(self, name)
        return summed if summed else default


def total(job, name):
    """The sum of ``name`` over the job's chunks (``ncpus`` of ``2:ncpus=4+1:ncpus=1`` is 9)."""
    return sum(chunk.count * chunk.amount(name) for chunk in job.chunks)


def planned_duration(job, elapsed_s=0):
    """The duration PBS plans for ``job`` after it ran ``elapsed_s``: soft walltime (extended by whole
    soft walltimes once passed, capped at walltime), else walltime, else five years."""
    soft = job.soft_walltime_s
    if soft:
        if elapsed_s <= soft:
            return soft
        extended = soft + (elapsed_s // soft) * soft
        return min(extended, job.walltime_s) if job.walltime_s is not None else extended
    if job.walltime_s is not None:
        if elapsed_s > job.walltime_s:
            return elapsed_s + EXITING_TIME_S
        return job.walltime_s
    return JOB_INFINITY_S


def planned_end(job, start, now):
    """When PBS, at ``now``, expects ``job`` (started at ``start``) to end, as ``set_job_times`` does."""
    return start + planned_duration(job, now - start)
