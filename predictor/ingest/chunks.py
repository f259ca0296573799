"""Turn a list of accounting-log lines into rows for ``completed_jobs``.

Pure functions of the lines, so the ingester can run them in worker
processes: ``parse_chunk`` returns the COPY text of the chunk's jobs (the
last E record of a job wins) with the rejected lines, ready for the one
process that talks to the database.
"""

import re
from typing import List, NamedTuple, Tuple

from ..accounting.records import completed_job, parse_fields, parse_record
from ..errors import AccountingError
from ..queries import job_values

__all__ = ["ParsedChunk", "chunk_rows", "parse_chunk", "copy_line"]


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
    return True, completed_job(record, parse_fields(record.body))


def chunk_rows(lines, first_line_no):
    """``(rows, rejections, end_records)``; rows: job id -> (values, line number)."""
    rows, rejections, end_records = {}, [], 0
    for line_no, raw in enumerate(lines, first_line_no):
        try:
            is_end, job = job_of_line(raw)
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
