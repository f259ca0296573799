"""PBS accounting logs: jobs from Q/S/E records, and records from jobs.

Reading uses the project's one accounting parser (predictor.accounting.records): a
job is the run an E record describes (``completed_job``: submit from ctime,
else qtime; start, end, walltime, soft walltime, queue...). Its runtime is
``resources_used.walltime``, its occupancy ``end - start``. Q, S, D and R
records only say which jobs never ran:

* Q then D (qdel while queued), or an E without ``start``: skipped, never ran.
* Q or S with no E by the end of the logs: incomplete, left out.
* Job arrays: the parent (``123[].svr``) is not a run; its subjobs
  (``123[4].svr``, with S and E but no Q) are. They were submitted with the
  parent: their submit time and queue order are the parent's Q record's (then
  by index), when the logs hold it. A parent none of whose subjobs ran is
  skipped. Brackets that are not an index (``3073070.[hostname_1]``) make a
  plain job id.
* Reruns (R, then another S): one job, its E describes the last run.
* Two E records for one job id: the later one is used, as the ingester does.

Writing produces Q, S, (D,) E lines in the format of a real OpenPBS 23.06
server, for fixtures built from SWF traces. Fields an SWF
trace does not know (exec_host, exec_vnode, session, cput, mem) are left out
rather than invented. Timestamps are written in UTC, so the output does not
depend on the machine's time zone (PBS writes local time; readers use the
epoch fields, never the timestamp).
"""

import array
import functools
import itertools
import os
import sys
import time

import numpy as np

from predictor.accounting.records import array_subjob, is_array_parent
from predictor.durations import format_duration
from predictor.errors import AccountingError
from predictor.jobs import CompletedJob

from .columns import INTEGER_FIELDS, NAME_FIELDS, NONE, JobColumns, compact
from .files import accounting_files, collection_paused
from .pbsscan import scans
from .trace import Job, Trace

_INTEGER_INDEXES = [Job._fields.index(field) for field in INTEGER_FIELDS]
_NAME_INDEXES = [Job._fields.index(field) for field in NAME_FIELDS]

__all__ = ["read_accounting", "record_line", "record_kinds", "record_time", "RECORD_ORDER"]

_QUEUED, _RUNNING, _DELETED = "queued", "running", "deleted"


class _LogState:
    """What the records read so far say: runs found, jobs in flight."""

    def __init__(self, stats):
        self.stats = stats
        self.runs = _Runs()       # the runs found, a row per E record
        self.in_flight = {}       # job id -> _QUEUED / _RUNNING / _DELETED
        self.first_seen = {}      # job id in flight -> order of its first record
        self.array_queued = {}    # parent id -> (order of its Q record, submit time)
        self.arrays_with_runs = {}
        self.rerun_ids = {}
        self.counter = itertools.count()


def _seen(state, job_id):
    if job_id not in state.first_seen:
        state.first_seen[job_id] = next(state.counter)


def _queued(state, event):
    _, _, job_id, parent = event
    _seen(state, job_id)
    state.in_flight[job_id] = _QUEUED
    if parent is not None and job_id not in state.array_queued:
        submit, problem = parent
        if problem is not None:
            raise AccountingError(problem)
        if submit is not None:
            state.array_queued[job_id] = (state.first_seen[job_id], submit)


def _started(state, event):
    _seen(state, event[2])
    state.in_flight[event[2]] = _RUNNING


def _deleted(state, event):
    if state.in_flight.get(event[2]) == _QUEUED:
        state.in_flight[event[2]] = _DELETED


def _rerun(state, event):
    job_id = event[2]
    state.in_flight[job_id] = _QUEUED
    if job_id not in state.rerun_ids:
        state.rerun_ids[job_id] = True
        state.stats.reruns += 1


def _interned(name):
    """One copy of each user, group, queue or project name for all jobs (few names, many jobs)."""
    return None if name is None else sys.intern(name)


_NEW_JOB = functools.partial(tuple.__new__, Job)
"""``Job`` from a tuple of all its fields, without a Python call per job."""
_COMPLETED_JOB = functools.partial(tuple.__new__, CompletedJob)


def _replay_job(done, nodes):
    if done.submit_time is None:
        raise AccountingError("missing (and no qtime)", "ctime")
    if done.start_time < done.submit_time:
        raise AccountingError("before ctime ({} < {})".format(done.start_time, done.submit_time), "start")
    if done.ncpus is None:
        raise AccountingError("no ncpus, select or nodes resource, and no exec_vnode or exec_host",
                              "Resource_List.ncpus")
    return _NEW_JOB((
        done.job_id, _interned(done.user), done.submit_time, done.runtime_s, done.walltime_s, done.ncpus,
        done.start_time, done.end_time, nodes, _interned(done.queue), _interned(done.project),
        done.soft_walltime_s, done.exit_status, _interned(done.group), _occupancy(done), None,
    ))


def _occupancy(done):
    """end - start, or None when that is the runtime (so a job converted from SWF reads as it was)."""
    held = done.end_time - done.start_time
    return None if held == done.runtime_s else held


def _ended(state, event):
    _, _, job_id, done, nodes = event
    done = None if done is None else _COMPLETED_JOB(done)
    state.in_flight.pop(job_id, None)
    _seen(state, job_id)
    order = (state.first_seen.pop(job_id), -1)
    if done is None:
        if not is_array_parent(job_id):
            state.stats.skip("ended without starting (E record without start)")
        elif job_id not in state.arrays_with_runs:
            state.stats.skip("job array none of whose subjobs ran")
        return
    subjob = array_subjob(job_id)
    if subjob is not None:
        parent, index = subjob
        state.arrays_with_runs[parent] = True
        state.stats.array_subjobs += 1
        if parent in state.array_queued:  # no Q record of its own: it was queued with its parent
            parent_order, submit = state.array_queued[parent]
            order, done = (parent_order, index), done._replace(submit_time=submit)
    state.runs.add(order, _replay_job(done, nodes))


def _rejected(state, event):
    raise AccountingError(event[2])


class _Runs:
    """The runs of the E records read, as columns (``JobColumns``' arrays, growing): a ``Job`` tuple per run
    would be most of what reading a big site's logs holds.

    A job id that ends again (a second E record) is replaced by its later run,
    found at the end (``jobs``). Should a value not fit a column (beyond
    int64), the runs are kept as ``(order, Job)`` from then on, as a list.
    """

    def __init__(self):
        self.integers = [array.array("q") for _ in INTEGER_FIELDS]
        self.names = [(array.array("i"), {}) for _ in NAME_FIELDS]
        self.job_ids, self.job_id_ends = bytearray(), array.array("q", [0])
        self.first_seen, self.index = array.array("q"), array.array("q")
        self.listed = None

    def add(self, order, job):
        """One more run: ``order`` is (order of the first record of the job, subjob index or -1)."""
        if self.listed is not None:
            self.listed.append((order, job))
            return
        count = len(self.first_seen)
        try:
            for column, field in zip(self.integers, _INTEGER_INDEXES):
                value = job[field]
                if value is None:
                    value = NONE
                elif value == NONE:  # the one int64 that stands for None
                    raise OverflowError(value)
                column.append(value)
        except (OverflowError, TypeError):
            for column in self.integers:
                del column[count:]
            self.listed = self._entries() + [(order, job)]
            return
        for (codes, numbers), field in zip(self.names, _NAME_INDEXES):
            name = job[field]
            codes.append(-1 if name is None else numbers.setdefault(name, len(numbers)))
        self.job_ids += job.job_id.encode("utf-8")
        self.job_id_ends.append(len(self.job_ids))
        self.first_seen.append(order[0])
        self.index.append(order[1])

    def _columns(self):
        names = {field: (np.frombuffer(codes, dtype=np.int32), tuple(numbers)) if numbers else None
                 for field, (codes, numbers) in zip(NAME_FIELDS, self.names)}
        integers = {field: np.frombuffer(column, dtype=np.int64)
                    for field, column in zip(INTEGER_FIELDS, self.integers)}
        return integers, names

    def _text_ids(self, order=None):
        """``(text, starts, ends)`` of the job ids, rows in ``order`` (int32 offsets when the text is short enough,
        as it is below 2 GB of job ids)."""
        ends = np.frombuffer(self.job_id_ends, dtype=np.int64)
        starts, ends = ends[:-1], ends[1:]
        if order is None:
            return self.job_ids, starts, ends
        offset_type = np.int32 if len(self.job_ids) <= np.iinfo(np.int32).max else np.int64
        return self.job_ids, starts[order].astype(offset_type), ends[order].astype(offset_type)

    def _entries(self):
        """``[(order, Job)]`` of the rows so far."""
        integers, names = self._columns()
        jobs = list(JobColumns.of_arrays(self._text_ids(), integers, names))
        return list(zip(zip(self.first_seen.tolist(), self.index.tolist()), jobs))

    def jobs(self, stats):
        """The runs, the later of two of one job id kept (counted in ``stats.replaced``), in submission order
        (at one submit time, the order the log first mentions the jobs).

        The runs' columns are let go of one by one as their values are put in order: the runs and the jobs
        are never both held whole.
        """
        if self.listed is not None:
            return _listed_jobs(self.listed, stats)
        order = self._submission_order(stats)
        integers = {}
        for number, field in enumerate(INTEGER_FIELDS):
            column, self.integers[number] = self.integers[number], None
            integers[field] = compact(np.frombuffer(column, dtype=np.int64)[order])
            del column
        names = {}
        for number, field in enumerate(NAME_FIELDS):
            (codes, numbers), self.names[number] = self.names[number], None
            names[field] = (np.frombuffer(codes, dtype=np.int32)[order], tuple(numbers)) if numbers else None
            del codes
        return JobColumns.of_arrays(self._text_ids(order), integers, names)

    def _submission_order(self, stats):
        """The rows kept (the last of each job id), in submission order; ``first_seen`` and ``index`` let go of."""
        kept = _last_of_each(JobColumns.of_arrays(self._text_ids(), {}, {}))
        stats.replaced += len(self.first_seen) - int(kept.size)
        first_seen, index = np.frombuffer(self.first_seen, np.int64), np.frombuffer(self.index, np.int64)
        submit_time = np.frombuffer(self.integers[INTEGER_FIELDS.index("submit_time")], np.int64)
        order = kept[np.lexsort((index[kept], first_seen[kept], submit_time[kept]))]
        del first_seen, index, submit_time
        self.first_seen, self.index = array.array("q"), array.array("q")
        return order


def _last_of_each(jobs):
    """The rows of ``jobs`` (``JobColumns``) that are the last of their job id, in row order."""
    job_ids = jobs.job_id
    hashes = np.fromiter(map(hash, jobs.job_ids()), np.int64, len(jobs))
    by_hash = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[by_hash][1:] == hashes[by_hash][:-1])
    if not same.size:
        return np.arange(len(jobs))
    rows = set(by_hash[same].tolist()) | set(by_hash[same + 1].tolist())  # rows sharing a hash with another
    last = {}
    for row in sorted(rows):
        last[job_ids(row)] = row
    keep = np.ones(len(jobs), dtype=bool)
    keep[sorted(rows - set(last.values()))] = False
    return np.flatnonzero(keep)


def _listed_jobs(entries, stats):
    latest = {}
    for order, job in entries:
        if latest.pop(job.job_id, None) is not None:
            stats.replaced += 1
        latest[job.job_id] = (order, job)
    ordered = sorted(latest.values(), key=lambda entry: (entry[1].submit_time, entry[0]))
    return [job for _, job in ordered]


_HANDLERS = {"Q": _queued, "S": _started, "D": _deleted, "R": _rerun, "E": _ended, "!": _rejected}
"""Event (``pbsscan``) -> what it does to the state."""


def _replay_events(state, path, scan, on_reject):
    stats = state.stats
    stats.files += 1
    stats.lines += scan.lines
    for event in scan.events:
        try:
            _HANDLERS[event[0]](state, event)
        except AccountingError as err:
            stats.rejected += 1
            on_reject(path, event[1], str(err))


def _count_left_in_flight(state):
    for job_id, status in state.in_flight.items():
        if status == _DELETED:
            state.stats.skip("deleted while queued (D record)")
        elif job_id in state.arrays_with_runs:
            continue
        else:
            state.stats.incomplete += 1


def read_accounting(paths, stats, on_reject, workers=None, on_progress=None):
    """Read accounting files and ``YYYYMMDD`` directories into a ``Trace``.

    The files are scanned (``pbsscan``) by up to ``workers`` processes (None:
    one per CPU when there is enough to read, 0: in this process); their
    events are replayed here in file order, so the result and the order of
    the reports do not depend on ``workers``. ``on_progress(bytes done, bytes)`` after each file.
    """
    state = _LogState(stats)
    files = accounting_files(paths, stats)
    sizes = [_size(path) for path in files]
    with collection_paused():
        for number, (path, scan) in enumerate(zip(files, scans(files, workers))):
            _replay_events(state, path, scan, on_reject)
            if on_progress is not None:
                on_progress(sum(sizes[:number + 1]), sum(sizes))
    _count_left_in_flight(state)
    return Trace(state.runs.jobs(stats), "pbs", tuple(paths), stats)


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


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
