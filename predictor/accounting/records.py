"""PBS accounting-log records: the one parser of the project.

A line is ``MM/DD/YYYY HH:MM:SS;T;ID;key=value ...``. Values with spaces are
wrapped in double quotes, or single quotes if they contain a double quote;
there is no backslash escaping and field order is not guaranteed. Only E
(end) records become completed jobs; ``parse_record`` checks the header of
every line and ``parse_fields`` the body of the records a caller needs. What
an E record's fields say of the job (runtime, cores, times) is decided in
``predictor.accounting.job_attributes``, which reads the jobobit hook's job alike.

Every check raises ``AccountingError`` naming the field; callers add file:line.
"""

import re
from typing import NamedTuple

from ..errors import AccountingError
from . import job_attributes
from .job_attributes import array_subjob, is_array_parent, job_ncpus, submit_time

__all__ = ["AccountingRecord", "parse_record", "parse_fields", "completed_job", "job_ncpus", "submit_time",
           "array_subjob", "is_array_parent"]

_TIMESTAMP = re.compile(r"[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}")


class AccountingRecord(NamedTuple):
    """One line: its timestamp text, record type letter, job id and raw body."""

    timestamp: str
    record_type: str
    job_id: str
    body: str


def parse_record(line):
    """Split and check a line's header; the body stays raw for ``parse_fields``."""
    if "\x00" in line:
        raise AccountingError("NUL byte in line")
    parts = line.rstrip("\r\n").split(";", 3)
    if len(parts) < 3:
        raise AccountingError("expected 'MM/DD/YYYY HH:MM:SS;T;ID;key=value ...'")
    timestamp, record_type, job_id = parts[0], parts[1], parts[2]
    if not _TIMESTAMP.fullmatch(timestamp):
        raise AccountingError("expected MM/DD/YYYY HH:MM:SS, got {!r}".format(timestamp[:40]), "timestamp")
    if len(record_type) != 1 or not record_type.isalpha():
        raise AccountingError("expected one letter, got {!r}".format(record_type[:10]), "record type")
    if not job_id or job_id != job_id.strip() or " " in job_id:
        raise AccountingError("empty or contains spaces: {!r}".format(job_id[:60]), "job id")
    return AccountingRecord(timestamp, record_type, job_id, parts[3] if len(parts) == 4 else "")


def parse_fields(body):
    """The body's ``key=value`` pairs as a dict; a key given twice is an error.

    Fields are separated by ASCII spaces only, as pbs_server writes them: a
    tab or a non-ASCII space (NBSP, U+3000...) in a job or project name is part
    of the value, which PBS does not quote.
    """
    if '"' in body or "'" in body:
        return _parse_quoted(body)
    tokens = body.split(" ")
    if "" in tokens:  # the trailing space of Q and S records, or doubled spaces
        tokens = [token for token in tokens if token]
    try:
        fields = dict([token.split("=", 1) for token in tokens])
    except ValueError:  # a token without "="
        fields = {}
    if len(fields) != len(tokens) or "" in fields:
        fields = {}  # something is wrong: find it and name it
        for token in tokens:
            key, sep, value = token.partition("=")
            _store(fields, key, sep, value, token)
    return fields


def _store(fields, key, sep, value, token):
    if not sep or not key:
        raise AccountingError("expected key=value, got {!r}".format(token[:60]))
    if key in fields:
        raise AccountingError("appears twice", key)
    fields[key] = value


def _parse_quoted(body):
    fields, pos, size = {}, 0, len(body)
    while True:
        while pos < size and body[pos] == " ":
            pos += 1
        if pos >= size:
            return fields
        end = _token_end(body, pos)
        key, sep, value = body[pos:end].partition("=")
        quoted = _quoted_value(body, pos + len(key) + 1) if sep and value[:1] in ("'", '"') else None
        if quoted is not None:
            value, end = quoted
        _store(fields, key, sep, value, body[pos:end])
        pos = end


def _token_end(body, pos):
    end = body.find(" ", pos)
    return end if end >= 0 else len(body)


def _quoted_value(body, start):
    """``(value, end)`` of the quoted value at ``start``, or None if it is not one.

    pbs_server writes a value without spaces as it is, even one that starts
    with a quote (a job named ``"x``): such a value is the plain token.
    """
    quote = body[start]
    close = body.find(quote, start + 1)
    if close == -1 or (close + 1 < len(body) and body[close + 1] != " "):
        return None
    return body[start + 1:close], close + 1


def completed_job(record, fields):
    """The ``CompletedJob`` of an E record (its ``parse_fields``), or None for an E that is not a run.

    The rules are ``predictor.accounting.job_attributes.completed_job``'s, the jobobit hook's too.
    """
    return job_attributes.completed_job(record.job_id, fields)
