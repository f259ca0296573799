"""PBS accounting logs: jobs from Q/S/E records, and records from jobs.

Reading uses the project's one accounting parser (predictor.accounting): a
job is the run an E record describes (``completed_job``: submit from ctime,
else qtime; start, end, walltime, soft walltime, queue...). Q, S, D and R
records only say which jobs never ran:

* Q then D (qdel while queued), or an E without ``start``: skipped, never ran.
* Q or S with no E by the end of the logs: incomplete, left out.
* Job arrays: the parent (``123[].svr``) is not a run; its subjobs
  (``123[4].svr``, with S and E but no Q) are. A parent none of whose
  subjobs ran is skipped.
* Reruns (R, then another S): one job, its E describes the last run.
* Two E records for one job id: the later one is used, as the ingester does.

Writing produces Q, S, (D,) E lines in the format of a real OpenPBS 23.06
server, for fixtures built from SWF traces. Fields an SWF
trace does not know (exec_host, exec_vnode, session, cput, mem) are left out
rather than invented. Timestamps are written in UTC, so the output does not
depend on the machine's time zone (PBS writes local time; readers use the
epoch fields, never the timestamp).
"""

import re
import sys
import time

from predictor.accounting import completed_job, parse_fields, parse_record
from predictor.durations import format_duration
from predictor.errors import AccountingError

from .files import accounting_files, raw_lines
from .trace import Job, Trace

__all__ = ["read_accounting", "record_line", "record_kinds", "record_time", "RECORD_ORDER"]

_QUEUED, _RUNNING, _DELETED = "queued", "running", "deleted"
_DIGITS = re.compile(r"[0-9]{1,9}")


class _LogState:
    """What the records read so far say: runs found, jobs in flight."""

    def __init__(self, stats):
        self.stats = stats
        self.jobs = {}            # job id -> (order of its first record, Job)
        self.in_flight = {}       # job id -> _QUEUED / _RUNNING / _DELETED
        self.first_seen = {}      # job id in flight -> order of its first record
        self.arrays_with_runs = {}
        self.rerun_ids = {}


def _array_parent(job_id):
    """``123[].svr`` for a subjob ``123[4].svr``; None for other ids."""
    open_at = job_id.find("[")
    close_at = job_id.find("]", open_at)
    if open_at < 0 or close_at < 0 or close_at == open_at + 1:
        return None
    return job_id[:open_at + 1] + job_id[close_at:]


def _seen(state, job_id):
    state.first_seen.setdefault(job_id, len(state.first_seen) + len(state.jobs))


def _queued(state, record):
    _seen(state, record.job_id)
    state.in_flight[record.job_id] = _QUEUED


def _started(state, record):
    _seen(state, record.job_id)
    state.in_flight[record.job_id] = _RUNNING


def _deleted(state, record):
    if state.in_flight.get(record.job_id) == _QUEUED:
        state.in_flight[record.job_id] = _DELETED


def _rerun(state, record):
    state.in_flight[record.job_id] = _QUEUED
    if record.job_id not in state.rerun_ids:
        state.rerun_ids[record.job_id] = True
        state.stats.reruns += 1


def _interned(name):
    """One copy of each user, group, queue or project name for all jobs (few names, many jobs)."""
    return None if name is None else sys.intern(name)


def _replay_job(done):
    if done.submit_time is None:
        raise AccountingError("missing (and no qtime)", "ctime")
    if done.start_time < done.submit_time:
        raise AccountingError("before ctime ({} < {})".format(done.start_time, done.submit_time), "start")
    if done.ncpus is None:
        raise AccountingError("no ncpus, select or nodes resource", "Resource_List.ncpus")
    return Job(
        job_id=done.job_id, user=_interned(done.user), submit_time=done.submit_time, runtime_s=done.runtime_s,
        walltime_s=done.walltime_s, ncpus=done.ncpus, start_time=done.start_time, end_time=done.end_time,
        queue=_interned(done.queue), project=_interned(done.project), soft_walltime_s=done.soft_walltime_s,
        exit_status=done.exit_status, group=_interned(done.group),
    )


def _nodect(fields):
    text = fields.get("Resource_List.nodect", "")
    return int(text) if _DIGITS.fullmatch(text) else None


def _ended(state, record):
    fields = parse_fields(record.body)
    done = completed_job(record, fields)
    state.in_flight.pop(record.job_id, None)
    _seen(state, record.job_id)
    order = state.first_seen.pop(record.job_id)
    if done is None:
        if "[]" not in record.job_id:
            state.stats.skip("ended without starting (E record without start)")
        elif record.job_id not in state.arrays_with_runs:
            state.stats.skip("job array none of whose subjobs ran")
        return
    job = _replay_job(done)._replace(nodes=_nodect(fields))
    parent = _array_parent(record.job_id)
    if parent is not None:
        state.arrays_with_runs[parent] = True
        state.stats.array_subjobs += 1
    if state.jobs.pop(record.job_id, None) is not None:
        state.stats.replaced += 1
    state.jobs[record.job_id] = (order, job)


_HANDLERS = {"Q": _queued, "S": _started, "s": _started, "D": _deleted, "R": _rerun, "E": _ended}
"""Record type -> handler; the other types (A, M, a, z, r, L, reservations...) say nothing we use."""


def _take_line(state, raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise AccountingError("not valid UTF-8 (byte {})".format(err.start)) from None
    if not text.strip():
        return
    record = parse_record(text)
    handler = _HANDLERS.get(record.record_type)
    if handler is not None:
        handler(state, record)


def _read_file(state, path, on_reject):
    stats = state.stats
    stats.files += 1
    for line_no, raw in raw_lines(path, on_reject):
        stats.lines += 1
        try:
            _take_line(state, raw)
        except AccountingError as err:
            stats.rejected += 1
            on_reject(path, line_no, str(err))


def _count_left_in_flight(state):
    for job_id, status in state.in_flight.items():
        if status == _DELETED:
            state.stats.skip("deleted while queued (D record)")
        elif "[]" in job_id and job_id in state.arrays_with_runs:
            continue
        else:
            state.stats.incomplete += 1


def read_accounting(paths, stats, on_reject):
    """Read accounting files and ``YYYYMMDD`` directories into a ``Trace``."""
    state = _LogState(stats)
    files = accounting_files(paths, stats)
    for path in files:
        _read_file(state, path, on_reject)
    _count_left_in_flight(state)
    # Submission order; at one submit time, the order the log first mentions the jobs.
    ordered = sorted(state.jobs.values(), key=lambda entry: (entry[1].submit_time, entry[0]))
    return Trace([job for _, job in ordered], "pbs", tuple(paths), stats)


RECORD_ORDER = {"Q": 0, "S": 1, "D": 2, "E": 3}
"""Within one second, a job's records come in this order (a qdel'd running job: D then E)."""


def record_kinds(job):
    """The record types written for ``job``: Q, S, E, and D before E if it was killed by a signal."""
    return "QSDE" if job.exit_status is not None and job.exit_status >= 256 else "QSE"


def record_time(job, kind):
    """When the ``kind`` record of ``job`` is written (trace time)."""
    return job.submit_time if kind == "Q" else job.start_time if kind == "S" else job.end_time


def _select(ncpus, nodes):
    """``nodes`` chunks sharing ``ncpus`` as evenly as possible: ``2:ncpus=4+1:ncpus=3``."""
    per_chunk, extra = divmod(ncpus, nodes)
    chunks = [(extra, per_chunk + 1), (nodes - extra, per_chunk)]
    return "+".join("{}:ncpus={}".format(count, size) for count, size in chunks if count)


def _request_fields(job):
    nodes = job.nodes if job.nodes and job.nodes <= max(job.ncpus, 1) else 1
    fields = ["Resource_List.ncpus={}".format(job.ncpus), "Resource_List.nodect={}".format(nodes),
              "Resource_List.place={}".format("pack" if nodes == 1 else "scatter"),
              "Resource_List.select={}".format(_select(job.ncpus, nodes))]
    if job.soft_walltime_s is not None:
        fields.append("Resource_List.soft_walltime=" + format_duration(job.soft_walltime_s))
    if job.walltime_s is not None:
        fields.append("Resource_List.walltime=" + format_duration(job.walltime_s))
    return fields


def _job_fields(job, epoch):
    fields = ["user=" + job.user]
    if job.group is not None:
        fields.append("group=" + job.group)
    fields += ["project=" + (job.project or "_pbs_project_default"), "jobname=STDIN",
               "queue=" + (job.queue or "workq")]
    return fields + ["{}={}".format(key, job.submit_time + epoch) for key in ("ctime", "qtime", "etime")]


def _queued_fields(job, epoch):
    return _job_fields(job, epoch) + _request_fields(job)


def _started_fields(job, epoch):
    return _job_fields(job, epoch) + ["start={}".format(job.start_time + epoch)] + _request_fields(job)


def _assigned_fields(job, epoch):
    return _started_fields(job, epoch) + ["resource_assigned.ncpus={}".format(job.ncpus)]


def _deleted_fields(job, epoch):
    return ["requestor={}@pbsserver".format(job.user)]


def _ended_fields(job, epoch):
    fields = _started_fields(job, epoch) + ["end={}".format(job.end_time + epoch)]
    if job.exit_status is not None:
        fields.append("Exit_status={}".format(job.exit_status))
    return fields + ["resources_used.ncpus={}".format(job.ncpus),
                     "resources_used.walltime=" + format_duration(job.runtime_s), "run_count=1"]


_RECORD_FIELDS = {"Q": _queued_fields, "S": _assigned_fields, "D": _deleted_fields, "E": _ended_fields}


def record_line(job, kind, epoch=0):
    """The ``kind`` (Q, S, D, E) accounting line of ``job``, its trace times shifted by ``epoch``."""
    when = record_time(job, kind) + epoch
    timestamp = time.strftime("%m/%d/%Y %H:%M:%S", time.gmtime(when))
    return "{};{};{};{}".format(timestamp, kind, job.job_id, " ".join(_RECORD_FIELDS[kind](job, epoch)))
