"""Loading a trace: PBS accounting logs or an SWF file, told apart by content.

``load_trace`` is the one entry point of the replay (accuracy and simulation).
Each malformed line goes to ``on_reject(path, line_no, message)`` and is
skipped; only a trace with no job that ran left is an error (``TraceError``).
Gzip-compressed files (``20240101.gz``, ``trace.swf.gz``) are read as they
are, since sites archive their accounting logs that way. ``read_trace`` is
what the commands call: the trace their input options name, malformed lines
shown on stderr by the command lines' ``RejectPrinter``.
"""

import contextlib
import itertools
import os
import re

from predictor.cmdline.progress import ProgressBar
from predictor.cmdline.rejects import RejectPrinter

from ..shared.errors import TraceError
from . import swf
from .columns import JobColumns
from .files import give_back_freed_memory, raw_lines
from .trace import ReadStats

__all__ = ["load_trace", "detect_format", "FORMATS", "read_trace"]

FORMATS = ("pbs", "swf")
_PBS_LINE = re.compile(rb"[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2};")
_SNIFF_LINES = 50
_SWF_NUMBER = re.compile(rb"-?[0-9]+(\.[0-9]+)?")


def _sniff(path):
    """"pbs", "swf" or None from the first non-blank line of a file."""
    with contextlib.closing(raw_lines(path, lambda *_: None)) as lines:
        for _, raw in itertools.islice(lines, _SNIFF_LINES):
            text = raw.strip()
            if not text:
                continue
            if text.startswith(b";"):
                return "swf"
            if _PBS_LINE.match(text):
                return "pbs"
            return "swf" if _swf_fields(text.split()) else None
    return None


def _swf_fields(fields):
    """18 fields, or more whose first 18 are numbers (data sets that append fields after the standard ones)."""
    if len(fields) == 18:
        return True
    return len(fields) > 18 and all(_SWF_NUMBER.fullmatch(field) for field in fields[:18])


def detect_format(path):
    """The format of ``path``: a directory is a PBS accounting directory."""
    if os.path.isdir(path):
        return "pbs"
    found = _sniff(path)
    if found is None:
        raise TraceError("{}: neither a PBS accounting log nor an SWF trace (give --format)".format(path))
    return found


def _check_paths(paths, fmt):
    if not paths:
        raise TraceError("no trace given")
    for path in paths:
        if not os.path.exists(path):
            raise TraceError("{}: no such file or directory".format(path))
    formats = sorted({fmt if fmt != "auto" else detect_format(path) for path in paths})
    if len(formats) > 1:
        raise TraceError("mixed formats ({}): give PBS logs or one SWF file".format(", ".join(formats)))
    if formats[0] == "swf" and (len(paths) > 1 or os.path.isdir(paths[0])):
        raise TraceError("give one SWF file, not {}".format(", ".join(paths)))
    return formats[0]


def load_trace(paths, fmt="auto", on_reject=None, on_progress=None, as_columns=False):
    """Read ``paths`` (PBS log files/directories, or one SWF file) into a ``Trace``; ``on_progress(bytes done,
    bytes)`` as the reading goes.

    The trace's jobs are a list of ``Job``, or with ``as_columns`` a ``JobColumns`` (the same jobs, held as
    arrays: a few tens of bytes a job instead of hundreds), unless a value does not fit a column.
    """
    paths = tuple(paths)
    source_format = _check_paths(paths, fmt)
    stats = ReadStats()
    on_reject = on_reject or (lambda path, line_no, message: None)
    if source_format == "swf":
        trace = swf.read_swf(paths[0], stats, on_reject, on_progress)
    else:
        from . import pbslog  # its worker pool and the accounting parser are only needed for PBS logs
        trace = pbslog.read_accounting(paths, stats, on_reject, on_progress=on_progress)
    if not len(trace.jobs):
        raise TraceError("no job that ran in {}: {}".format(", ".join(paths), "; ".join(stats.notes(0))))
    trace = trace._replace(jobs=_held(trace.jobs, as_columns))
    give_back_freed_memory()
    return trace


def _held(jobs, as_columns):
    """``jobs`` as a list, or as ``JobColumns`` if asked and they fit."""
    if not as_columns:
        return jobs if isinstance(jobs, list) else list(jobs)
    if isinstance(jobs, JobColumns):
        return jobs
    return JobColumns.of_jobs(jobs) or jobs


def read_trace(paths, fmt="auto", max_errors=20, as_columns=False):
    """``(trace, rejects)`` of ``paths``: the first ``max_errors`` malformed lines shown on stderr by ``rejects``
    (a ``RejectPrinter``), which counts them all; ``as_columns``: as ``load_trace``."""
    rejects = RejectPrinter(max_errors)
    progress = ProgressBar("reading", unit="B", unit_scale=True)  # drawn on a terminal only
    try:
        trace = load_trace(paths, fmt, rejects, progress, as_columns)
    finally:
        progress.close()
        rejects.close()
    return trace, rejects
