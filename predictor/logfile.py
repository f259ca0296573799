"""An accounting file as the ingester reads it: plain or gzip-compressed.

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
import hashlib
import os
import zlib

__all__ = ["LogFile", "READ_ERRORS", "tail_sha1_of_lines"]

READ_ERRORS = (OSError, EOFError, zlib.error)
"""What reading a damaged or vanished file can raise (gzip's BadGzipFile is an OSError)."""

_CHUNK = 1 << 20
_TAIL = 256
_HEAD_MAX = 4096


def _sha1(data):
    return hashlib.sha1(data).hexdigest()


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
        self._open = gzip.open if path.endswith(".gz") else open

    def read_at(self, offset, size, until=None):
        """Up to ``size`` bytes from ``offset`` (fewer at the end of the file), or up to ``until`` once read.

        Reads no further than needed, so damage after them raises nothing.
        """
        with self._open(self.path, "rb") as handle:
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
        with self._open(self.path, "rb") as handle:
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
