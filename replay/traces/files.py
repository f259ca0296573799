"""Reading trace files: lines of plain or gzip-compressed files, and the files of log directories.

Gzip-compressed files (``20240101.gz``, ``trace.swf.gz``) are read as they
are, since sites archive their accounting logs that way. A damaged compressed
file ends early, the rest of it reported through ``on_reject``.
"""

import gzip
import os
import re
import zlib

from ..errors import TraceError

__all__ = ["raw_lines", "accounting_files"]

_GZIP_MAGIC = b"\x1f\x8b"
_ACCOUNTING_NAME = re.compile(r"[0-9]{8}(\.gz)?")


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
