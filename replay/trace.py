"""The replay's job record: one job of a trace, as read from a log."""

from typing import NamedTuple, Optional

__all__ = ["Job"]


class Job(NamedTuple):
    """A job that ran, with what the log recorded. Times are epoch (or trace) seconds.

    ``start_time``/``end_time`` are the recorded ones (the accuracy replay uses
    them; the simulation computes its own). ``soft_walltime_s`` is the soft
    walltime written in the log, if any. ``group`` is the Unix group (PBS
    ``group``, SWF group id).
    """

    job_id: str
    user: str
    submit_time: int
    runtime_s: int
    walltime_s: Optional[int]
    ncpus: int
    start_time: Optional[int] = None
    end_time: Optional[int] = None
    nodes: Optional[int] = None
    queue: Optional[str] = None
    project: Optional[str] = None
    soft_walltime_s: Optional[int] = None
    exit_status: Optional[int] = None
    group: Optional[str] = None
