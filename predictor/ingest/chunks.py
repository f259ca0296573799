"""Turn a list of accounting-log lines into rows for ``completed_jobs``.

Pure functions of the lines, so the ingester can run them in worker
processes: ``parse_chunk`` returns the COPY text of the chunk's jobs (the
last E record of a job wins) with the rejected lines, ready for the one
process that talks to the database.

Two things are checked here that the accounting format allows but the
history cannot hold: a name longer than ``MAX_NAME_BYTES`` (the database
would refuse its index entry), and a line on which a record was cut short by
a pbs_server that died mid-write and the next record was appended after it
(the cut record is reported, the one after it is loaded if it parses whole).
"""

import re
from typing import List, NamedTuple, Tuple

from ..accounting.records import completed_job, parse_fields, parse_record
from ..errors import AccountingError
from ..queries import job_values

__all__ = ["ParsedChunk", "chunk_rows", "parse_chunk", "copy_line", "MAX_NAME_BYTES"]

MAX_NAME_BYTES = 1024
"""The longest job id, user, group, project or queue name stored, in UTF-8 bytes. PostgreSQL refuses an
index entry over about 2.7 kB, and completed_jobs indexes job_id and user_name together: a longer value
would be refused by the database; PBS's own names are far shorter."""

_RECORD_HEADER = re.compile(rb"[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2};[A-Za-z];")


class ParsedChunk(NamedTuple):
    """What a chunk of lines gave: COPY text of its jobs and what was wrong."""

    copy_text: str
    jobs: int
    lines: int
    end_records: int
    rejections: List[Tuple[int, str]]


def job_of_line(raw):
    """``(is_end_record, job_or_None)`` for one line; AccountingError if malformed."""
    try:
        text = raw.rstrip(b"\r").decode("utf-8")
    except UnicodeDecodeError as err:
        raise AccountingError("not valid UTF-8 (byte {})".format(err.start)) from None
    if not text or text.isspace():
        return False, None
    record = parse_record(text)
    if record.record_type != "E":
        return False, None
    job = completed_job(record, parse_fields(record.body))
    if job is not None:
        _check_lengths(job)
    return True, job


def _check_lengths(job):
    for field, value in (("job id", job.job_id), ("user", job.user), ("group", job.group),
                         ("project", job.project), ("queue", job.queue)):
        if value is not None and len(value) * 4 > MAX_NAME_BYTES and len(value.encode("utf-8")) > MAX_NAME_BYTES:
            raise AccountingError("{} bytes, longer than the {} the history stores".format(
                len(value.encode("utf-8")), MAX_NAME_BYTES), field)


def _cut_at(raw):
    """Where a second record starts on the line (outside quotes), or None: most lines have only their
    header's three semicolons and are not searched."""
    if raw.count(b";") <= 3:
        return None
    for match in _RECORD_HEADER.finditer(raw, 1):
        before = raw[:match.start()]
        if before.count(b'"') % 2 == 0 and before.count(b"'") % 2 == 0:
            return match.start()
    return None


def _after_cut_record(raw, start):
    """``(is_end_record, job)`` of the whole record from ``start`` on, else None."""
    try:
        return job_of_line(raw[start:])
    except AccountingError:
        return None


_CUT = "record cut short (pbs_server stopped while writing it) and the next record written on the same line: "


def _line_or_salvage(raw, line_no, rejections):
    """``job_of_line``; for a line holding a cut record and the next one, the next one's, the cut one reported."""
    cut = _cut_at(raw)
    if cut is None:
        return job_of_line(raw)
    salvaged = _after_cut_record(raw, cut)
    if salvaged is None:
        raise AccountingError(_CUT + "neither is whole")
    rejections.append((line_no, _CUT + "the cut one is skipped, the next one read"))
    return salvaged


def chunk_rows(lines, first_line_no):
    """``(rows, rejections, end_records)``; rows: job id -> (values, line number)."""
    rows, rejections, end_records = {}, [], 0
    for line_no, raw in enumerate(lines, first_line_no):
        try:
            is_end, job = _line_or_salvage(raw, line_no, rejections)
        except AccountingError as err:
            rejections.append((line_no, str(err)))
            continue
        end_records += is_end
        if job is not None:
            rows.pop(job.job_id, None)  # a later record of the same job wins
            rows[job.job_id] = (job_values(job), line_no)
    return rows, rejections, end_records


def _copy_value(value):
    if value is None:
        return "\\N"
    if value.__class__ is str:
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return str(value)


_SPECIAL = re.compile(r"[\\\t\n\r]")


def copy_line(values):
    """One row in PostgreSQL's COPY text format."""
    if _SPECIAL.search("".join([value for value in values if value.__class__ is str])) is None:
        return "\t".join(["\\N" if value is None else str(value) for value in values]) + "\n"
    return "\t".join(map(_copy_value, values)) + "\n"


def parse_chunk(lines, first_line_no):
    """The ``ParsedChunk`` of ``lines``, the first being line ``first_line_no``."""
    rows, rejections, end_records = chunk_rows(lines, first_line_no)
    copy_text = "".join(copy_line(values) for values, _ in rows.values())
    return ParsedChunk(copy_text, len(rows), len(lines), end_records, rejections)
