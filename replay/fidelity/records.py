"""PBS accounting logs read for the fidelity check: every job as the scheduler saw it, and when.

The project's one record parser (``predictor.accounting.records``) reads the lines; this module keeps
what the scheduler knew of each job and *when*, as positions in the logs (``order``: the record's place
among all records read, in file and line order), so that the state at any instant can be rebuilt:

* Q: the job enters the queue (its resources, place, user, group, project, queue, qtime).
* Its eligible time is the Q record's ``etime``; a job submitted held has ``etime=0`` (or its ``qtime``)
  there, and becomes eligible at its release: the later ``etime`` of its S (or E) record.
* a: the manager's ``qalter`` (``Resource_List.soft_walltime=...``, ``walltime``, ``Priority``),
  applied from that record on; ``=UNSET`` unsets.
* S: a run starts, on the vnodes its ``exec_vnode`` names; E (or R, a rerun) ends it.
* D while queued: the job leaves the queue without running.
* Job arrays: the parent (``123[].svr``) is not scheduled itself; its subjobs (``123[4].svr``) have no
  Q record: they were queued with the parent, at its place in the queue, then by index.

A malformed line or field is reported with file:line through ``on_reject`` and skipped; it never
stops the read.
"""

from typing import NamedTuple, Optional, Tuple

from predictor.accounting.records import array_subjob, is_array_parent, parse_fields, parse_record
from predictor.errors import AccountingError

from ..pbs.jobs import PbsJob
from ..pbs.resources import parse_amount, parse_place, parse_select
from ..pbs.vnodes import parse_exec_vnode
from ..traces.files import accounting_files, raw_lines
from ..traces.trace import ReadStats

__all__ = ["Run", "JobRecord", "StartRecord", "Accounting", "read_records"]

_RESOURCE = "Resource_List."
_UNSET = "UNSET"


class Run(NamedTuple):
    """One run of a job: its S record's ``start`` and position, its E (or R) record's ``end`` and position
    (None while still running when the logs end), the vnodes it held (``exec_vnode`` pieces), how long
    its process ran (``resources_used.walltime``; None if not recorded) and the CPU time it used
    (``resources_used.cput``; None if not recorded).

    Between the end of its process and its E record the job is *exiting*: the server is finishing it,
    and PBS's scheduler plans its end one second from now."""

    start: int
    start_order: int
    allocation: tuple
    end: Optional[int] = None
    end_order: Optional[int] = None
    used_s: Optional[int] = None
    cput_s: Optional[int] = None

    def exiting_at(self, now):
        """True if the job's process had ended by ``now`` while the job still held its vnodes."""
        return self.used_s is not None and self.start + self.used_s <= now


class JobRecord(NamedTuple):
    """A job as the logs tell it: the ``PbsJob`` as queued (``eligible_time`` its real eligible time,
    ``runtime_s`` its first run's ``end - start``), when it was queued (``queued_order``), its runs,
    the position of its D record if it was deleted while queued, and the ``qalter`` changes as
    ``(order, field, value)`` with field one of PbsJob's (``soft_walltime_s``, ``walltime_s``, ``priority``)
    or ``resource:<name>``."""

    job: PbsJob
    queued_order: int
    runs: Tuple[Run, ...] = ()
    deleted_order: Optional[int] = None
    alterations: Tuple[Tuple[int, str, object], ...] = ()

    def job_at(self, order):
        """The job as the scheduler knew it just before the record at ``order``: its alterations applied."""
        job = self.job
        for when, field, value in self.alterations:
            if when >= order:
                break
            if field.startswith("resource:"):
                name = field[len("resource:"):]
                kept = tuple(pair for pair in job.resources if pair[0] != name)
                job = job._replace(resources=tuple(sorted(kept + (() if value is None else ((name, value),)))))
            else:
                job = job._replace(**{field: value})
        return job

    def run_at(self, order):
        """The run going on just before the record at ``order``, or None."""
        for run in self.runs:
            if run.start_order < order and (run.end_order is None or run.end_order >= order):
                return run
        return None

    def queued_at(self, order, now):
        """True if the job waits in the queue, eligible, just before the record at ``order`` (at ``now``)."""
        if self.queued_order >= order or self.job.eligible_time > now:
            return False
        if self.deleted_order is not None and self.deleted_order < order:
            return False
        if self.run_at(order) is not None:
            return False
        return not self.runs or any(run.start_order >= order for run in self.runs)  # a rerun waits from R to S


class StartRecord(NamedTuple):
    """One S record: when, its position, the job id, and the job's eligible time it states."""

    time: int
    order: int
    name: str
    etime: int


class Accounting(NamedTuple):
    """What the logs hold: jobs in submission order, S records in log order, and read counters."""

    jobs: Tuple[JobRecord, ...]
    starts: Tuple[StartRecord, ...]
    stats: ReadStats
    first_time: Optional[int]
    last_time: Optional[int]

    def by_name(self):
        """Job id -> JobRecord."""
        return {record.job.name: record for record in self.jobs}


class _Draft:
    """A job being read: the fields of its first record, then what later records add."""

    def __init__(self, name, fields, order, sort_order):
        self.name, self.fields, self.order, self.sort_order = name, fields, order, sort_order
        self.etime = _int(fields, "etime", 0)
        try:
            self.request = parse_place(fields.get(_RESOURCE + "place", "free")), _chunks(fields), _resources(fields)
        except ValueError as err:
            raise AccountingError(str(err), "Resource_List") from None
        self.runs, self.deleted, self.alterations = [], None, []


def _int(fields, key, default=None):
    text = fields.get(key)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise AccountingError("not an integer: {!r}".format(text[:40]), key) from None


def _chunks(fields):
    select = fields.get(_RESOURCE + "select")
    if select:
        return parse_select(select)
    ncpus = fields.get(_RESOURCE + "ncpus", "1")
    spec = "1:ncpus=" + ncpus + "".join(":{}={}".format(name, fields[_RESOURCE + name])
                                         for name in ("mem", "ngpus") if _RESOURCE + name in fields)
    return parse_select(spec)


def _resources(fields):
    found = []
    for key in sorted(fields):
        if key.startswith(_RESOURCE) and key[len(_RESOURCE):] not in ("select", "place"):
            name = key[len(_RESOURCE):]
            found.append((name, parse_amount(name, fields[key])))
    return tuple(found)


def _duration(fields, name):
    text = fields.get(_RESOURCE + name)
    return None if text is None else parse_amount(name, text)


def _job(draft, index, eligible):
    fields = draft.fields
    place, chunks, resources = draft.request
    first = draft.runs[0] if draft.runs else None
    occupancy = first.end - first.start if first is not None and first.end is not None else 0
    return PbsJob(index, draft.name, fields.get("user", ""), fields.get("group", ""),
                  fields.get("project", ""), fields.get("queue", ""), chunks,
                  place, _duration(fields, "walltime"), _duration(fields, "soft_walltime"),
                  _int(fields, "qtime", 0), eligible, occupancy, _int(fields, "Priority", 0), resources,
                  fields.get("account"), _cpu_load(first, resources))


def _cpu_load(run, resources):
    """The share of its ncpus the run kept busy (``cput / (ncpus * walltime)``), 1 when the log does not say."""
    ncpus = dict(resources).get("ncpus", 1)
    if run is None or run.cput_s is None or not run.used_s or not isinstance(ncpus, int) or ncpus <= 0:
        return 1.0
    return run.cput_s / float(ncpus * run.used_s)


_ALTERED = {_RESOURCE + "soft_walltime": "soft_walltime_s", _RESOURCE + "walltime": "walltime_s",
            "Priority": "priority"}


def _alterations(order, fields):
    changes = []
    for key, value in sorted(fields.items()):
        if key in _ALTERED:
            field = _ALTERED[key]
            changes.append((order, field, None if value == _UNSET else
                            int(value) if field == "priority" else parse_amount(key[len(_RESOURCE):], value)))
        if key.startswith(_RESOURCE):
            name = key[len(_RESOURCE):]
            changes.append((order, "resource:" + name, None if value == _UNSET else parse_amount(name, value)))
    return changes


class _Reader:
    """Applies records in log order to drafts of jobs."""

    def __init__(self, on_reject):
        self.on_reject, self.drafts, self.starts, self.order = on_reject, {}, [], 0
        self.first_time = self.last_time = None
        self.array_queued = {}  # parent id -> its Q record's (order, fields)

    def line(self, path, line_no, raw):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            self.on_reject(path, line_no, "not valid UTF-8 (byte {})".format(err.start))
            return False
        if not text.strip():
            return True
        try:
            record = parse_record(text)
            handler = _HANDLERS.get(record.record_type)
            if handler is not None:
                self.order += 1
                handler(self, record, parse_fields(record.body))
        except (AccountingError, ValueError) as err:
            self.on_reject(path, line_no, str(err))
            return False
        return True

    def _time(self, fields, key):
        value = _int(fields, key)
        if value is None:
            raise AccountingError("missing", key)
        self.first_time = value if self.first_time is None else min(self.first_time, value)
        self.last_time = value if self.last_time is None else max(self.last_time, value)
        return value

    def queued(self, record, fields):
        self._time(fields, "qtime")
        if is_array_parent(record.job_id):
            self.array_queued.setdefault(record.job_id, (self.order, fields))
        elif record.job_id not in self.drafts:
            self.drafts[record.job_id] = _Draft(record.job_id, fields, self.order, (self.order, 0))

    def started(self, record, fields):
        start = self._time(fields, "start")
        draft = self._draft(record.job_id, fields)
        if draft is None:
            return
        if not draft.runs:
            draft.etime = _released(draft.etime, _int(fields, "etime", 0))
        allocation = parse_exec_vnode(fields.get("exec_vnode", ""))
        draft.runs.append(Run(start, self.order, allocation))
        self.starts.append(StartRecord(start, self.order, record.job_id, _int(fields, "etime", 0)))

    def _draft(self, job_id, fields):
        """The job's draft; a subjob's or one first seen running is made from this record."""
        if job_id in self.drafts:
            return self.drafts[job_id]
        if is_array_parent(job_id):
            return None
        subjob = array_subjob(job_id)
        order, sort_order = self.order, (self.order, 0)
        if subjob is not None and subjob[0] in self.array_queued:
            parent_order, parent_fields = self.array_queued[subjob[0]]
            order, sort_order = parent_order, (parent_order, subjob[1])
            fields = dict(fields, qtime=parent_fields.get("qtime", fields.get("qtime", "0")))
        draft = self.drafts[job_id] = _Draft(job_id, fields, order, sort_order)
        draft.etime = 0
        return draft

    def ended(self, record, fields):
        end = self._time(fields, "end") if "end" in fields else None
        draft = self.drafts.get(record.job_id)
        if draft is None and "start" in fields and not is_array_parent(record.job_id):
            draft = self._running_before_the_logs(record.job_id, fields)
        if draft is None:
            return
        if not draft.runs:
            draft.etime = _released(draft.etime, _int(fields, "etime", 0))
        if draft.runs and draft.runs[-1].end_order is None:
            used, cput = fields.get("resources_used.walltime"), fields.get("resources_used.cput")
            draft.runs[-1] = draft.runs[-1]._replace(end=end, end_order=self.order,
                                                     used_s=None if used is None else parse_amount("walltime", used),
                                                     cput_s=None if cput is None else parse_amount("walltime", cput))

    def _running_before_the_logs(self, job_id, fields):
        """A job whose E is its first record: it ran from before the first record read (position 0)."""
        draft = self.drafts[job_id] = _Draft(job_id, fields, 0, (0, 0))
        draft.runs.append(Run(self._time(fields, "start"), 0, parse_exec_vnode(fields.get("exec_vnode", ""))))
        return draft

    def deleted(self, record, fields):
        draft = self.drafts.get(record.job_id)
        if draft is not None and (not draft.runs or draft.runs[-1].end_order is not None):
            draft.deleted = self.order

    def altered(self, record, fields):
        draft = self.drafts.get(record.job_id)
        if draft is not None:
            draft.alterations.extend(_alterations(self.order, fields))

    def records(self):
        """JobRecords in submission order (queue position, then subjob index)."""
        drafts = sorted(self.drafts.values(), key=lambda draft: draft.sort_order)
        jobs = []
        for index, draft in enumerate(drafts):
            eligible = draft.etime or _never_eligible(draft)
            jobs.append(JobRecord(_job(draft, index, eligible), draft.order, tuple(draft.runs), draft.deleted,
                                  tuple(draft.alterations)))
        return tuple(jobs)


def _released(queued_etime, later_etime):
    """The eligible time: the Q record's ``etime``, unless a later record of the job, before its first run,
    states a later one (released from a hold after its Q record said ``etime=0`` or its ``qtime``)."""
    return later_etime if later_etime and later_etime > queued_etime else queued_etime


def _never_eligible(draft):
    """A held job deleted before its release was never eligible: its eligible time is far away."""
    return 2 ** 62


_HANDLERS = {"Q": _Reader.queued, "S": _Reader.started, "E": _Reader.ended, "R": _Reader.ended,
             "D": _Reader.deleted, "a": _Reader.altered}
"""Record type -> what it does to the jobs read so far (others say nothing the scheduler used)."""


def read_records(paths, on_reject):
    """Read accounting files and ``YYYYMMDD`` directories into an ``Accounting``; TraceError if a file
    cannot be read at all. Malformed lines go to ``on_reject(path, line_no, message)``."""
    stats = ReadStats()
    reader = _Reader(on_reject)
    for path in accounting_files(paths, stats):
        stats.files += 1
        for line_no, raw in raw_lines(path, on_reject):
            stats.lines += 1
            if not reader.line(path, line_no, raw):
                stats.rejected += 1
    return Accounting(reader.records(), tuple(reader.starts), stats, reader.first_time, reader.last_time)
