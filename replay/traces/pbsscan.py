"""One accounting file's lines turned into the events the PBS reader replays: the parsing half of ``pbslog``.

``scan_file`` depends on nothing but the file, so the files of a directory
can be scanned in worker processes while ``pbslog`` replays their events in
file order. An event is a tuple naming its line:

* ``("Q", line_no, job_id, parent)``: ``parent`` is None, or for a job-array
  parent ``(submit time, None)`` or ``(None, message)`` if its body is bad
  (the reader reports that only if it needs the parent's submit time);
* ``("S", line_no, job_id)``, and ``"D"`` and ``"R"`` alike (``s`` is ``S``);
* ``("E", line_no, job_id, completed job or None, nodect or None)``, the
  completed job (``predictor.accounting.records.completed_job``) as a plain tuple;
* ``("!", line_no, message)``: a line the reader rejects, or where a
  damaged file stops.

Other record types say nothing the replay uses and give no event.

The file is read and decoded whole (a file that is not UTF-8 throughout is
decoded line by line, a damaged compressed one read line by line up to the
damage), and every line goes through ``predictor.accounting.records``, the
ingester's parser.
"""

import os
import re
import sys
from typing import List, NamedTuple

from predictor.accounting.records import completed_job, is_array_parent, parse_fields, parse_record, submit_time
from predictor.errors import AccountingError

from ..shared.workers import worker_pool
from .files import raw_lines, whole_file

__all__ = ["FileScan", "scan_file", "scans", "nodect"]

_DIGITS = re.compile(r"[0-9]{1,9}")
_MARKS = {"S": "S", "s": "S", "D": "D", "R": "R"}
"""Record types whose job id is all the reader needs, and the event each gives."""
_NAMES = ("user", "group", "queue", "project", "account")
"""Few names for many jobs: one copy of each (interned) is shared by all jobs and sent once by a worker."""
_BYTES_PER_WORKER = 4 << 20
"""Less to read than this per worker process is faster read here than spread over processes."""


class FileScan(NamedTuple):
    """What one file gave: its number of lines and its events in line order."""

    lines: int
    events: List[tuple]


def nodect(fields):
    """``Resource_List.nodect`` if it is a plain count, else None."""
    text = fields.get("Resource_List.nodect", "")
    return int(text) if _DIGITS.fullmatch(text) else None


def _record(line):
    """The ``AccountingRecord`` of a decoded line, None if it is blank; AccountingError if malformed."""
    if line[:1].isdigit() or line.strip():  # a record starts with its date: strip() only for the others
        return parse_record(line)
    return None


def _queued(line_no, record):
    if not is_array_parent(record.job_id):
        return "Q", line_no, record.job_id, None
    try:
        return "Q", line_no, record.job_id, (submit_time(parse_fields(record.body)), None)
    except AccountingError as err:
        return "Q", line_no, record.job_id, (None, str(err))


def _ended(line_no, record):
    fields = parse_fields(record.body)
    for key in _NAMES:
        if key in fields:
            fields[key] = sys.intern(fields[key])
    done = completed_job(record, fields)
    return "E", line_no, record.job_id, None if done is None else tuple(done), nodect(fields)


def _event(line_no, line):
    """The event of one decoded line, or None."""
    record = _record(line)
    if record is None:
        return None
    mark = _MARKS.get(record.record_type)
    if mark is not None:
        return mark, line_no, record.job_id
    if record.record_type == "Q":
        return _queued(line_no, record)
    return _ended(line_no, record) if record.record_type == "E" else None


def _events_of_text(numbered_lines):
    """Events of ``(line_no, text)``, a malformed line an ``!`` event."""
    events = []
    for line_no, line in numbered_lines:
        try:
            event = _event(line_no, line)
        except AccountingError as err:
            event = "!", line_no, str(err)
        if event is not None:
            events.append(event)
    return events


def _decoded(numbered_raw, rejects):
    """``(line_no, text)`` of ``(line_no, bytes)``; a line that is not UTF-8 goes to ``rejects``."""
    for line_no, raw in numbered_raw:
        try:
            yield line_no, raw.decode("utf-8")
        except UnicodeDecodeError as err:
            rejects.append((line_no, "not valid UTF-8 (byte {})".format(err.start)))


def _events_line_by_line(numbered_raw):
    """Events of ``(line_no, bytes)`` lines decoded one by one, in line order."""
    rejects = []
    events = _events_of_text(_decoded(numbered_raw, rejects))
    if not rejects:
        return events
    return sorted(events + [("!", line_no, message) for line_no, message in rejects], key=lambda event: event[1])


def _split(text, line_end):
    """``text`` split as iterating over the file splits it (a ``\\r`` before the newline is left to
    ``parse_record``, which drops it)."""
    lines = text.split(line_end)
    if not lines[-1]:
        lines.pop()
    return lines


def scan_file(path):
    """The ``FileScan`` of one accounting file; TraceError if it cannot be read at all."""
    data = whole_file(path)
    if data is None:  # damaged compression: read up to the damage, which raw_lines reports last
        damage = []
        events = _events_line_by_line(raw_lines(path, lambda _, line_no, message: damage.append(
            ("!", line_no, message))))
        return FileScan(damage[0][1] - 1, events + damage)
    try:
        lines = _split(data.decode("utf-8"), "\n")
    except UnicodeDecodeError:
        lines = _split(data, b"\n")
        return FileScan(len(lines), _events_line_by_line(enumerate(lines, 1)))
    return FileScan(len(lines), _events_of_text(enumerate(lines, 1)))


def _workers(files, workers):
    """How many processes to scan ``files`` with: ``workers``, else one per CPU with enough to read each."""
    if workers is not None:
        return min(workers, len(files))
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    size = sum(os.path.getsize(path) for path in files if os.path.isfile(path))
    return min(cpus, len(files), size // _BYTES_PER_WORKER)


def scans(files, workers=None):
    """The ``FileScan`` of each of ``files``, in order, scanned by ``workers`` processes (0: here)."""
    count = _workers(files, workers)
    if count < 2:
        yield from map(scan_file, files)
        return
    with worker_pool(count) as pool:
        yield from pool.map(scan_file, files)
