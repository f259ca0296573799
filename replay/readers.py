"""Loading a trace: PBS accounting logs or an SWF file, told apart by content.

``load_trace`` is the one entry point of the replay (accuracy and simulation).
Each malformed line goes to ``on_reject(path, line_no, message)`` and is
skipped; only a trace with no job that ran left is an error (``TraceError``).
Gzip-compressed files (``20240101.gz``, ``trace.swf.gz``) are read as they
are, since sites archive their accounting logs that way.
"""

import contextlib
import gzip
import itertools
import os
import re
import zlib
from typing import NamedTuple, Optional, Tuple

from .errors import TraceError

__all__ = ["Trace", "ReadStats", "load_trace", "detect_format", "accounting_files", "raw_lines", "FORMATS"]

FORMATS = ("pbs", "swf")
_GZIP_MAGIC = b"\x1f\x8b"
_PBS_LINE = re.compile(rb"[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2};")
_ACCOUNTING_NAME = re.compile(r"[0-9]{8}(\.gz)?")
_SNIFF_LINES = 50


class ReadStats:
    """Counters of one read. ``skipped`` counts jobs that never ran, by reason."""

    def __init__(self):
        self.files = 0
        self.lines = 0
        self.rejected = 0
        self.skipped = {}
        self.incomplete = 0
        self.reruns = 0
        self.array_subjobs = 0
        self.replaced = 0
        self.ignored_files = 0

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
        )
        return notes + ["{} {}".format(count, text) for count, text in optional if count]


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


def _open_binary(path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == _GZIP_MAGIC else open(path, "rb")


def raw_lines(path, on_reject):
    """Yield ``(line_no, bytes)`` without the line end; a damaged file ends early, reported."""
    line_no = 0
    try:
        with _open_binary(path) as stream:
            for line_no, raw in enumerate(stream, 1):
                yield line_no, raw.rstrip(b"\r\n")
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        on_reject(path, line_no + 1, "file unreadable from here on (damaged compression: {})".format(err))
    except OSError as err:
        raise TraceError("{}: cannot read: {}".format(path, err.strerror or err)) from err


def accounting_files(paths, stats):
    """Files as given; a directory gives its ``YYYYMMDD[.gz]`` files in name order."""
    files = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        names = sorted(os.listdir(path))
        chosen = [name for name in names if _ACCOUNTING_NAME.fullmatch(name)
                  and os.path.isfile(os.path.join(path, name))]
        stats.ignored_files += len([name for name in names if not name.startswith(".")]) - len(chosen)
        files.extend(os.path.join(path, name) for name in chosen)
    return files


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
            return "swf" if len(text.split()) == 18 else None
    return None


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


def load_trace(paths, fmt="auto", on_reject=None):
    """Read ``paths`` (PBS log files/directories, or one SWF file) into a ``Trace``."""
    from . import pbslog, swf

    paths = tuple(paths)
    source_format = _check_paths(paths, fmt)
    stats = ReadStats()
    on_reject = on_reject or (lambda path, line_no, message: None)
    if source_format == "swf":
        trace = swf.read_swf(paths[0], stats, on_reject)
    else:
        trace = pbslog.read_accounting(paths, stats, on_reject)
    if not trace.jobs:
        raise TraceError("no job that ran in {}: {}".format(", ".join(paths), "; ".join(stats.notes(0))))
    return trace
