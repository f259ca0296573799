"""Records: a completed job, a job being predicted, and one history row.

Times are epoch seconds, durations integer seconds (``_s``). Field names follow
the accounting log (``user``, ``group``, ``queue``); SQL spells the first two
``user_name`` and ``group_name`` because ``user`` is reserved there.
"""

from typing import NamedTuple, Optional

__all__ = ["CompletedJob", "JobRequest", "HistoryRow", "MAX_EPOCH", "MAX_INT32"]

MAX_EPOCH = 10 ** 11
"""The latest time a record may hold (year ~5138): anything later is corruption."""

MAX_INT32 = 2 ** 31 - 1
"""The largest duration, core count or exit status: the integer columns of ``completed_jobs``."""


class CompletedJob(NamedTuple):
    """A job that ran and ended: one row of ``completed_jobs``."""

    job_id: str
    user: str
    runtime_s: int
    end_time: int
    walltime_s: Optional[int] = None
    soft_walltime_s: Optional[int] = None
    group: Optional[str] = None
    project: Optional[str] = None
    queue: Optional[str] = None
    ncpus: Optional[int] = None
    submit_time: Optional[int] = None
    start_time: Optional[int] = None
    exit_status: Optional[int] = None

    def history_row(self):
        """This job as the predictors see it."""
        return HistoryRow(self.end_time, self.job_id, self.runtime_s, self.walltime_s, self.project)


class JobRequest(NamedTuple):
    """A job whose soft walltime is wanted: what queuejob/runjob know of it (``submit_time``: epoch seconds)."""

    user: str
    walltime_s: Optional[int]
    queue: Optional[str] = None
    project: Optional[str] = None
    ncpus: Optional[int] = None
    submit_time: Optional[int] = None


class HistoryRow(NamedTuple):
    """One past job of a user. Tuples order by (end_time, job_id): newest is largest.

    ``project``: the PBS project (or account) it ran under, for Tang et al.'s project keys.
    """

    end_time: int
    job_id: str
    runtime_s: int
    walltime_s: Optional[int]
    project: Optional[str] = None
