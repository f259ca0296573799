"""Standard Workload Format (Parallel Workloads Archive): read and write.

One job a line, 18 whitespace-separated fields; ``-1`` means unknown; lines
starting with ``;`` are the header (``; MaxProcs: 100``). Only the fields the
replay uses are checked: a non-integer there rejects the line, a decimal in
another field (average CPU time often has one) does not matter.

Some published data sets append fields after the 18 (the allocated CPU ids
``{0,1,2}``, the queue name, the original PBS resource request). The 18 are
read, the lines carrying more are counted once in the read notes, and a queue
name found there names the job's queue (``_trailing_queue``).

Names: SWF numbers users, groups and queues; the replay names them ``u12``,
``g3``, ``q1`` (unknown: user ``unknown``, group and queue None), so an SWF
trace and its PBS conversion show the same names. Status 1 (completed) is
exit status 0, 0 (failed) is 1, 5 (cancelled) is 271 (SIGTERM, what qdel of a
running job gives); the writer maps back (any exit status >= 256, killed by a
signal, is written as 5).
"""

import copy
import functools
import re
import sys

import numpy as np

from predictor.jobs import MAX_EPOCH

from . import swfscan
from .columns import NONE, JobColumns, compact, integer_arrays, joined, name_columns, named, widened
from .files import Damaged, collection_paused, line_blocks, raw_lines
from .trace import Job, Trace

__all__ = ["read_swf", "read_swf_lines", "write_swf", "FIELD_NAMES"]

FIELD_NAMES = (
    "job number", "submit time", "wait time", "run time", "allocated processors", "average CPU time",
    "used memory", "requested processors", "requested time", "requested memory", "status", "user id",
    "group id", "executable number", "queue number", "partition number", "preceding job", "think time",
)
_USED = (0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 14)
_INTEGER = re.compile(r"-?[0-9]+")
_LINE = re.compile(r"\s+".join(r"(-?[0-9]{1,30})" if index in _USED else r"\S+" for index in range(18))
                   + r"(?:\s+(.*))?")
_HEADER = re.compile(r";\s*([A-Za-z]+)\s*:\s*(.*?)\s*")
_HEADER_INTEGERS = ("MaxProcs", "MaxNodes", "UnixStartTime")
_EXIT_OF_STATUS = {1: 0, 0: 1, 5: 271}
_NAMED = re.compile(r"([ugq])(-?[0-9]{1,30})")
_MAX_VALUE = MAX_EPOCH
"""Larger than any SWF time (seconds: year 5138), count or number: corruption, which would overflow later."""
_DIGITS = re.compile(r"[0-9]+")
_QUEUE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,14}")
"""What a PBS queue name looks like: a letter, then letters, digits, ``_`` or ``-``, 15 characters at most."""
_NOT_A_NAME = frozenset(("none", "null", "nan", "na", "unknown"))


def _values(text):
    """``(values, extra)``: the 18 fields, the used ones as integers (others 0), and the text after them.

    ValueError names the first bad field.
    """
    match = _LINE.fullmatch(text.strip())
    if match is None:
        return _check_fields(text.split())
    values = [0] * 18
    groups = match.groups()
    for index, value in zip(_USED, groups):
        values[index] = int(value)
    _check_range(values)
    return values, groups[-1] or ""


def _check_range(values):
    for index in _USED:
        if abs(values[index]) > _MAX_VALUE:
            raise ValueError("field {} ({}): out of range: {}".format(index + 1, FIELD_NAMES[index],
                                                                     str(values[index])[:20]))


def _check_fields(fields):
    """The slow path of ``_values``: say which field is wrong."""
    if len(fields) < 18:
        raise ValueError("expected 18 fields, got {}".format(len(fields)))
    values = [0] * 18
    for index in _USED:
        text = fields[index]
        if not _INTEGER.fullmatch(text):
            raise ValueError("field {} ({}): not an integer: {!r}".format(index + 1, FIELD_NAMES[index], text[:20]))
        if len(text) > 30:  # int() refuses over 4300 digits; anything this long is out of range anyway
            raise ValueError("field {} ({}): out of range: {}".format(index + 1, FIELD_NAMES[index], text[:20]))
        values[index] = int(text)
    _check_range(values)
    return values, " ".join(fields[18:])


def _trailing_queue(extra):
    """The queue name among the fields after the 18th, if exactly one token there looks like one.

    CPU id lists (``{0,1}``), numbers, resource requests (``nodes=1:ppn=4``)
    and unknown markers (``NULL``, ``None``) are not names; two candidates are
    ambiguous, and then SWF's own queue number is kept.
    """
    names = [token for token in extra.split() if _QUEUE_NAME.fullmatch(token) and token.lower() not in _NOT_A_NAME]
    return sys.intern(names[0]) if len(names) == 1 else None


_NO_SUBMIT = "submit time unknown"
_NO_RUN = "never ran, or start or run time unknown"
_NO_PROCESSORS = "processor count unknown"


def _skip_reason(values):
    if values[1] < 0:
        return _NO_SUBMIT
    if values[2] < 0 or values[3] < 0:
        return _NO_RUN
    if values[4] < 0 and values[7] < 0:
        return _NO_PROCESSORS
    return None


def _name(prefix, number):
    # Interned: a trace has few names and many jobs, each job would otherwise hold its own copies.
    return sys.intern("{}{}".format(prefix, number)) if number >= 0 else None


def _nodes(ncpus, procs_per_node):
    return -(-ncpus // procs_per_node) if procs_per_node else None


def _job(values, job_id, procs_per_node):
    submit, wait, runtime = values[1], values[2], values[3]
    ncpus = values[4] if values[4] >= 0 else values[7]
    return Job(
        job_id=job_id, user=_name("u", values[11]) or "unknown", submit_time=submit, runtime_s=runtime,
        walltime_s=values[8] if values[8] >= 0 else None, ncpus=ncpus, start_time=submit + wait,
        end_time=submit + wait + runtime, nodes=_nodes(ncpus, procs_per_node), queue=_name("q", values[14]),
        exit_status=_EXIT_OF_STATUS.get(values[10]), group=_name("g", values[12]),
        requested_ncpus=values[7] if values[7] >= 0 and values[7] != ncpus else None,
    )


def _skipped(columns, stats):
    """Which rows of ``columns`` (field -> values) are jobs that never ran (``_skip_reason``), counted."""
    no_submit = columns[1] < 0
    no_run = ~no_submit & ((columns[2] < 0) | (columns[3] < 0))
    no_processors = ~no_submit & ~no_run & (columns[4] < 0) & (columns[7] < 0)
    for reason, rows in ((_NO_SUBMIT, no_submit), (_NO_RUN, no_run), (_NO_PROCESSORS, no_processors)):
        count = int(rows.sum())
        if count:
            stats.skipped[reason] = stats.skipped.get(reason, 0) + count
    return no_submit | no_run | no_processors


def _node_counts(ncpus, line_indexes, node_sizes):
    """``_nodes`` of each job (None: ``NONE``), with the header's processors per node as it stood at the job's
    line."""
    if len(node_sizes) == 1 or (len(node_sizes) == 2 and not len(line_indexes[line_indexes < node_sizes[1][0]])):
        per_node = node_sizes[-1][1]  # the usual: the header, then the jobs
        return -(-ncpus // per_node) if per_node else np.full(len(ncpus), NONE, dtype=np.int64)
    changed_at = np.array([index for index, _ in node_sizes])
    sizes = np.array([size or 0 for _, size in node_sizes])
    per_node = sizes[np.searchsorted(changed_at, line_indexes, side="right") - 1]
    nodes = -(-ncpus // np.maximum(per_node, 1))
    return np.where(per_node != 0, nodes, NONE)


def _exit_statuses(statuses):
    exits = np.full(len(statuses), NONE, dtype=np.int64)
    for status, exit_status in _EXIT_OF_STATUS.items():
        exits[statuses == status] = exit_status
    return exits


def _known(values):
    return np.where(values >= 0, values, NONE)


def _ran_rows(scan, first_line, stats):
    """Field index (and "line") -> values of the lines of ``scan`` numpy read whose job ran, in file order, int32
    where they fit; the others counted in ``stats``."""
    ran = np.flatnonzero(~_skipped(dict(zip(_USED, scan.values.T)), stats))
    rows = {field: _small(scan.values[ran, index]) for index, field in enumerate(_USED)}
    rows["line"] = _small(scan.fast[ran] + first_line)
    return rows


def _small(values):
    if not values.size or (int(values.min()) >= np.iinfo(np.int32).min and int(values.max()) <= np.iinfo(np.int32).max):
        return values.astype(np.int32)
    return values


def _joined_rows(parts):
    """The ``_ran_rows`` of every block as one, the blocks' arrays let go as they are joined."""
    keys = list(parts[0]) if parts else list(_USED) + ["line"]
    rows = {}
    for key in keys:
        rows[key] = np.concatenate([part.pop(key) for part in parts] or [np.zeros(0, dtype=np.int32)])
    return rows


def _fast_columns(rows, node_sizes):
    """``(line indexes, job numbers, integer columns, name columns)`` of ``rows`` (``_joined_rows``, emptied
    here), as ``_job`` makes their jobs, in file order; ``node_sizes``: ``[(line index, processors per node from
    there on)]``."""
    def used(field):
        return rows.pop(field).astype(np.int64)

    lines, numbers = rows.pop("line"), rows.pop(0)
    submit, runtime, requested = used(1), used(3), used(7)
    ncpus = used(4)
    ncpus = np.where(ncpus >= 0, ncpus, requested)
    start = submit + used(2)
    integers = {"submit_time": compact(submit), "runtime_s": compact(runtime), "walltime_s": compact(_known(used(8))),
                "start_time": compact(start), "end_time": compact(start + runtime)}
    del start, runtime
    integers.update(nodes=compact(_node_counts(ncpus, lines, node_sizes)),
                    exit_status=compact(_exit_statuses(used(10))),
                    requested_ncpus=compact(np.where((requested >= 0) & (requested != ncpus), requested, NONE)),
                    ncpus=compact(ncpus), soft_walltime_s=None, occupancy_s=None)
    names = {"user": named(used(11), lambda number: _name("u", number) or "unknown"),
             "queue": named(used(14), functools.partial(_name, "q")), "project": None,
             "group": named(used(12), functools.partial(_name, "g"))}
    return lines, numbers, integers, names


def _columns(fast, careful):
    """The ``JobColumns`` of ``_fast_columns`` and of ``careful`` (``[(line index, Job)]``), by submit time,
    then line."""
    lines, numbers, integers, names = fast
    jobs = [job for _, job in careful]
    careful_integers = integer_arrays(jobs)
    careful_names = name_columns(jobs)
    fast_count = len(lines)
    order = np.lexsort((np.concatenate((lines.astype(np.int64), [index for index, _ in careful])).astype(np.int64),
                        np.concatenate((widened(integers["submit_time"], fast_count),
                                        careful_integers["submit_time"]))))
    del lines
    numbers = np.concatenate((numbers.astype(np.int64), [int(job.job_id) for job in jobs])).astype(np.int64)[order]
    for field in list(integers):
        joined_values = np.concatenate((widened(integers.pop(field), fast_count), careful_integers[field]))
        integers[field] = compact(joined_values[order])
        del joined_values
    names = {field: joined(((fast_count, coded), (len(jobs), careful_names[field])), order)
             for field, coded in names.items()}
    return JobColumns.of_arrays(numbers, integers, names)


def _read_header(text, header):
    match = _HEADER.fullmatch(text)
    if not match:
        return
    key, value = match.groups()
    if key in _HEADER_INTEGERS:
        if not _INTEGER.fullmatch(value) or len(value) > 30 or abs(int(value)) > _MAX_VALUE:
            raise ValueError("header {}: not an integer in range: {!r}".format(key, value[:20]))
        if int(value) > 0 or key == "UnixStartTime":  # SWF writes -1 (or 0) for a size it does not know
            header[key] = int(value)


def _procs_per_node(header):
    procs, nodes = header.get("MaxProcs"), header.get("MaxNodes")
    if procs and nodes and procs > 0 and nodes > 0 and procs % nodes == 0:
        return procs // nodes
    return None


def _take_line(text, header, stats):
    """The job of one line, or None (header, blank, skipped); ValueError names what is wrong."""
    if text.startswith(";"):
        _read_header(text, header)
        return None
    if not text or text.isspace():
        return None
    values, extra = _values(text)
    queue = None
    if extra:
        stats.extra_fields += 1
        queue = _trailing_queue(extra)
        stats.extra_queue_names += queue is not None
    reason = _skip_reason(values)
    if reason:
        stats.skip(reason)
        return None
    job = _job(values, str(values[0]), _procs_per_node(header))
    return job if queue is None else job._replace(queue=queue)


def _read_line(path, line_no, raw, header, stats, on_reject):
    """``_take_line`` of the bytes of one line, a bad line reported and counted."""
    try:
        return _take_line(raw.decode("utf-8"), header, stats)
    except UnicodeDecodeError as err:
        stats.rejected += 1
        on_reject(path, line_no, "not valid UTF-8 (byte {})".format(err.start))
    except ValueError as err:
        stats.rejected += 1
        on_reject(path, line_no, str(err))
    return None


def _trace(path, jobs, stats, header):
    return Trace(jobs, "swf", (path,), stats, header.get("MaxProcs"), header.get("MaxNodes"),
                 header.get("UnixStartTime"))


def read_swf_lines(path, stats, on_reject):
    """``read_swf`` one line at a time: for a file whose compression is damaged, and the benchmark."""
    header, jobs = {}, []
    stats.files += 1
    for line_no, raw in raw_lines(path, on_reject):
        stats.lines += 1
        job = _read_line(path, line_no, raw, header, stats, on_reject)
        if job is not None:
            jobs.append(job)
    jobs.sort(key=lambda job: job.submit_time)
    return _trace(path, jobs, stats, header)


_READ_SIZE = 1 << 20
"""Bytes read at a time: a block's bytes and numpy's temporaries stay small; the file is never held whole."""


class _Reading:
    """What reading the blocks of a file gathers: the header, the careful lines' jobs, the numpy-read rows."""

    def __init__(self):
        self.header, self.careful, self.node_sizes, self.parts, self.lines = {}, [], [(-1, None)], [], 0
        self.rejects = []

    def block(self, path, data, stats):
        """Read one block of whole lines: numpy the plain lines, the careful reader the others, in file order."""
        scan = swfscan.scan_lines(data, _USED, _MAX_VALUE)
        first, header = self.lines, self.header
        bounds = zip(scan.careful.tolist(), scan.starts[scan.careful].tolist(), scan.ends[scan.careful].tolist())
        for index, start, end in bounds:
            index += first
            job = _read_line(path, index + 1, data[start:end].rstrip(b"\r\n"), header, stats,
                             lambda *reject: self.rejects.append(reject))
            if job is not None:
                self.careful.append((index, job))
            if _procs_per_node(header) != self.node_sizes[-1][1]:
                self.node_sizes.append((index, _procs_per_node(header)))
        self.parts.append(_ran_rows(scan, first, stats))
        self.lines += len(scan.starts)


def read_swf(path, stats, on_reject, on_progress=None):
    """Read one SWF file into a ``Trace`` (jobs in submission order, as ``JobColumns``).

    The file is read a block of lines at a time (``_READ_SIZE``, decompressed
    as it goes): numpy reads the plainly well-formed job lines (``swfscan``),
    keeping only the fields used; the other lines are read one by one, as
    ``read_swf_lines`` reads them all, in file order, so headers, extra
    fields and errors come out the same. A file whose compression is damaged
    is read again by ``read_swf_lines``, which says where it breaks (the lines
    rejected before the damage are reported once, by it).
    ``on_progress(bytes done, bytes)`` before each block and at the end.
    """
    before = copy.deepcopy(vars(stats))
    reading = _Reading()
    try:
        with collection_paused():
            done = 0
            for data, read_to, total in line_blocks(path, _READ_SIZE):
                if on_progress is not None:
                    on_progress(done, total)  # before the block, as from 0 at the start
                reading.block(path, data, stats)
                done = read_to
            if on_progress is not None and done:
                on_progress(done, done)
    except Damaged:
        vars(stats).update(before)
        return read_swf_lines(path, stats, on_reject)
    stats.files += 1
    stats.lines += reading.lines
    for reject in reading.rejects:
        on_reject(*reject)
    with collection_paused():
        jobs = _columns(_fast_columns(_joined_rows(reading.parts), reading.node_sizes), reading.careful)
    return _trace(path, jobs, stats, reading.header)


class _Numbering:
    """Names to SWF numbers: ``u12`` is 12; other names get new numbers in order of appearance."""

    def __init__(self, prefix, names):
        self.prefix = prefix
        self.numbers = {}
        taken = [int(match.group(2)) for match in map(_NAMED.fullmatch, names)
                 if match and match.group(1) == prefix]
        self._next = max(taken + [0]) + 1

    def number(self, name):
        if name is None or name == "unknown":
            return -1
        match = _NAMED.fullmatch(name)
        if match and match.group(1) == self.prefix:
            return int(match.group(2))
        if name not in self.numbers:
            self.numbers[name] = self._next
            self._next += 1
        return self.numbers[name]


def _status(exit_status):
    if exit_status is None:
        return -1
    if exit_status == 0:
        return 1
    return 5 if exit_status >= 256 else 0


def _line(job, origin, users, groups, queues):
    fields = (
        job.job_id, job.submit_time - origin, job.start_time - job.submit_time, job.runtime_s, job.ncpus, -1, -1,
        job.ncpus if job.requested_ncpus is None else job.requested_ncpus,
        -1 if job.walltime_s is None else job.walltime_s, -1, _status(job.exit_status),
        users.number(job.user), groups.number(job.group), -1, queues.number(job.queue), -1, -1, -1,
    )
    return " ".join(str(value) for value in fields)


def _job_numbers(jobs):
    """The numeric part of ``N`` or ``N.server`` ids if they are unique; else 1, 2, 3..."""
    numbers = [job.job_id.split(".", 1)[0] for job in jobs]
    if all(_DIGITS.fullmatch(number) for number in numbers) and len(set(numbers)) == len(numbers):
        return numbers
    return [str(index) for index in range(1, len(jobs) + 1)]


def write_swf(trace, out, note="converted by pbs-softwalltime (python -m replay convert)"):
    """Write ``trace`` as SWF text to ``out``; times relative to the first submission."""
    jobs = trace.jobs
    origin = min(job.submit_time for job in jobs) if jobs else 0
    users = _Numbering("u", [job.user for job in jobs])
    groups = _Numbering("g", [job.group for job in jobs if job.group])
    queues = _Numbering("q", [job.queue for job in jobs if job.queue])
    lines = [_line(job._replace(job_id=number), origin, users, groups, queues)
             for job, number in zip(jobs, _job_numbers(jobs))]
    out.write("; Version: 2.2\n; Note: {}\n; UnixStartTime: {}\n".format(note, origin))
    for key, value in (("MaxNodes", trace.max_nodes), ("MaxProcs", trace.max_procs)):
        if value is not None:
            out.write("; {}: {}\n".format(key, value))
    for name, number in sorted(queues.numbers.items(), key=lambda item: item[1]):
        out.write("; Queue: {} {}\n".format(number, name))
    out.write(";\n")
    for line in lines:
        out.write(line + "\n")
