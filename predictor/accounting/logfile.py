"""Accounting files: which files of a directory are logs, and one file as the ingester reads it.

One rule for the ingester and the replay. A directory holds PBS's daily
``YYYYMMDD`` files (``server_priv/accounting``) and the ones sites archive as
``YYYYMMDD.gz``; every other name in it (an editor's ``20240101~`` or
``.20240101.swp``, a ``README``, a ``20240101.bak`` copy) is left alone, since
reading a backup would count its jobs twice. A file named on the command line
is read whatever its name. A file is decompressed when it starts with gzip's
magic bytes, whatever its name: a compressed file renamed without ``.gz``, or
a plain one given a ``.gz`` name, is still read as what it is.

Offsets are positions in the (decompressed) text. Every read opens its own
handle, so checking a checksum never moves the line reader. Sites keep old
accounting files gzip-compressed; those are read the same way (a resume
decompresses up to the saved offset again, which is cheap next to parsing).

A damaged file (a .gz cut short or corrupted, a disk error) gives every whole
line before the damage and then the read error. Reads go through ``read1``:
a buffered ``read(n)`` that fails part-way throws away what it had already
decompressed, up to ``n`` bytes of good lines.
"""

import gzip
import os
import re
import zlib

__all__ = ["LogFile", "READ_ERRORS", "tail_sha1_of_lines", "open_log", "directory_logs", "LOG_NAME"]

READ_ERRORS = (OSError, EOFError, zlib.error)
"""What reading a damaged or vanished file can raise (gzip's BadGzipFile is an OSError)."""

LOG_NAME = re.compile(r"[0-9]{8}(?:\.gz)?")
"""The name of an accounting file in a directory: ``YYYYMMDD`` or ``YYYYMMDD.gz``."""

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_TAIL = 256
_HEAD_MAX = 4096


def _sha1(data):
    import hashlib  # here: loading it (OpenSSL) would add to every command's start, most never fingerprint a log
    return hashlib.sha1(data).hexdigest()


def open_log(path):
    """``path`` opened to read bytes: decompressed if it starts with gzip's magic bytes, whatever its name."""
    with open(path, "rb") as probe:
        magic = probe.read(len(_GZIP_MAGIC))
    return gzip.open(path, "rb") if magic == _GZIP_MAGIC else open(path, "rb")


def directory_logs(directory):
    """``(logs, ignored)``: the paths of the accounting files in ``directory`` in name order, and the
    number of other entries there, hidden ones (``.name``) not counted.

    OSError if the directory cannot be listed.
    """
    names = sorted(os.listdir(directory))
    logs = [os.path.join(directory, name) for name in names
            if LOG_NAME.fullmatch(name) and os.path.isfile(os.path.join(directory, name))]
    return logs, len([name for name in names if not name.startswith(".")]) - len(logs)


def tail_sha1_of_lines(lines, offset):
    """``LogFile.tail_sha1(offset)`` from the complete lines just read up to ``offset``.

    None when they hold fewer bytes than the checksum covers and the file has
    more before them (then the file must be read).
    """
    tail = b""
    for line in reversed(lines):
        tail = line + b"\n" + tail
        if len(tail) >= _TAIL:
            return _sha1(tail[-_TAIL:])
    return _sha1(tail) if len(tail) == offset else None


class LogFile:
    """One accounting file: checksums of its head and of the bytes before an offset, and its lines."""

    def __init__(self, path):
        self.path = path

    def read_at(self, offset, size, until=None):
        """Up to ``size`` bytes from ``offset`` (fewer at the end of the file), or up to ``until`` once read.

        Reads no further than needed, so damage after them raises nothing.
        """
        with open_log(self.path) as handle:
            handle.seek(offset)
            data = b""
            while len(data) < size and not (until and until in data):
                piece = handle.read1(size - len(data))
                if not piece:
                    break
                data += piece
            return data

    def head_sha1(self):
        """Checksum of the first complete line, or None while there is none."""
        head = self.read_at(0, _HEAD_MAX, until=b"\n")
        end = head.find(b"\n")
        if end < 0 and len(head) < _HEAD_MAX:
            return None
        return _sha1(head[:end] if end >= 0 else head)

    def tail_sha1(self, offset):
        """Checksum of the bytes just before ``offset``: is what was read still there?"""
        start = max(0, offset - _TAIL)
        return _sha1(self.read_at(start, offset - start))

    def line_chunks(self, offset, lines_per_chunk):
        """Yield ``(lines, offset_after_them)``: complete lines from ``offset``, in lists.

        A read error is raised after the lines read before it are yielded.
        """
        lines = []
        try:
            for line, offset in self._complete_lines(offset):
                lines.append(line)
                if len(lines) >= lines_per_chunk:
                    yield lines, offset
                    lines = []
        except READ_ERRORS:
            if lines:
                yield lines, offset
            raise
        if lines:
            yield lines, offset

    def _complete_lines(self, offset):
        with open_log(self.path) as handle:
            handle.seek(offset)
            pending = b""
            while True:
                chunk = handle.read1(_CHUNK)
                if not chunk:
                    return
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                for line in lines:
                    offset += len(line) + 1
                    yield line, offset

    def signature(self):
        """What changes when the file does: (size, mtime, inode) of the file on disk."""
        stat = os.stat(self.path)
        return stat.st_size, stat.st_mtime_ns, stat.st_ino
