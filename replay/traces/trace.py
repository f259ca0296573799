"""A trace as the replay sees it: its jobs (``Job``), and what reading it counted (``ReadStats``)."""

import os
from typing import NamedTuple, Optional, Tuple

__all__ = ["Job", "Trace", "ReadStats"]


class Job(NamedTuple):
    """A job that ran, with what the log recorded. Times are epoch (or trace) seconds.

    ``start_time``/``end_time`` are the recorded ones (the accuracy replay uses
    them; the simulation computes its own). ``runtime_s`` is what the job used
    (PBS ``resources_used.walltime``): what the predictors learn from.
    ``occupancy_s`` is how long it held its cores, ``end - start``, which PBS
    can make far longer (a job that used 5 s held its core for 100 s): what
    the simulation occupies the machine for. None means the same as the
    runtime (SWF has one run time for both). ``soft_walltime_s`` is the soft walltime written
    in the log, if any. ``group`` is the Unix group (PBS ``group``, SWF group
    id). ``requested_ncpus`` is the processors the user asked for where the
    trace records them apart from the allocated ``ncpus`` (SWF field 8; None:
    the same as ``ncpus``, or unknown).
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
    occupancy_s: Optional[int] = None
    requested_ncpus: Optional[int] = None


class ReadStats:
    """Counters of one read. ``skipped`` counts jobs that never ran, by reason."""

    COUNTERS = ("files", "lines", "rejected", "incomplete", "reruns", "array_subjobs", "replaced", "ignored_files",
                "swf_files", "extra_fields", "extra_queue_names")

    def __init__(self):
        for name in self.COUNTERS:
            setattr(self, name, 0)
        self.skipped = {}

    def skip(self, reason):
        """Count one job left out of the trace because of ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def notes(self, jobs):
        """One line per non-zero counter, for reports."""
        notes = ["{} jobs read from {} file(s), {} lines".format(jobs, self.files, self.lines)]
        for reason in sorted(self.skipped):
            notes.append("{} jobs skipped: {}".format(self.skipped[reason], reason))
        optional = (
            (self.rejected, "malformed lines skipped"),
            (self.incomplete, "jobs still queued or running at the end of the logs (left out)"),
            (self.reruns, "jobs rerun (their last run is used)"),
            (self.array_subjobs, "job-array subjobs (each one a job)"),
            (self.replaced, "E records of a job id already ended (the later one is used)"),
            (self.ignored_files, "files in log directories not named YYYYMMDD (ignored)"),
            (self.swf_files, "SWF traces among the accounting logs (skipped; python -m replay reads an SWF trace "
                             "named alone)"),
        )
        notes += ["{} {}".format(count, text) for count, text in optional if count]
        if self.extra_fields:
            used = ", except a queue name on {} lines".format(self.extra_queue_names) if self.extra_queue_names else ""
            notes.append("{} lines had fields after the standard 18 (ignored{})".format(self.extra_fields, used))
        return notes


class Trace(NamedTuple):
    """Jobs that ran, in submission order, with what the source says of the machine."""

    jobs: list
    source_format: str
    paths: Tuple[str, ...]
    stats: ReadStats
    max_procs: Optional[int] = None
    max_nodes: Optional[int] = None
    unix_start_time: Optional[int] = None

    @property
    def name(self):
        """The trace's file or directory names, for titles."""
        return ", ".join(os.path.basename(os.path.normpath(path)) for path in self.paths)
