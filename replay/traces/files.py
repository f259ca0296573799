"""Reading trace files: lines of plain or gzip-compressed files, and the files of log directories.

Gzip-compressed files (``20240101.gz``, ``trace.swf.gz``) are read as they
are, since sites archive their accounting logs that way. A damaged compressed
file ends early, the rest of it reported through ``on_reject``. Which files
of a directory are accounting logs, and which files are compressed, is the
ingester's rule (``predictor.accounting.logfile``).
"""

import contextlib
import gc
import gzip
import os
import zlib

from predictor.accounting.logfile import LogFile, directory_logs, open_log
from predictor.ingest.paths import looks_like_swf

from ..shared.errors import TraceError

__all__ = ["raw_lines", "whole_file", "line_blocks", "Damaged", "accounting_files", "collection_paused",
           "give_back_freed_memory"]


_DAMAGED = (EOFError, zlib.error, gzip.BadGzipFile)
"""What reading a damaged compressed file raises (BadGzipFile is an OSError: catch it first)."""


_BOM = b"\xef\xbb\xbf"
"""The byte-order mark an editor on Windows puts before the first line: not part of it."""


def _unreadable(path, err):
    return TraceError("{}: cannot read: {}".format(path, err.strerror or err))


def raw_lines(path, on_reject):
    """Yield ``(line_no, bytes)`` without the line end; a damaged file ends early, reported."""
    line_no = 0
    try:
        with open_log(path) as stream:
            for line_no, raw in enumerate(stream, 1):
                yield line_no, (raw[len(_BOM):] if line_no == 1 and raw.startswith(_BOM) else raw).rstrip(b"\r\n")
    except _DAMAGED as err:
        on_reject(path, line_no + 1, "file unreadable from here on (damaged compression: {})".format(err))
    except OSError as err:
        raise _unreadable(path, err) from err


def whole_file(path):
    """The (decompressed) bytes of ``path``; None if its compression is damaged: ``raw_lines`` says where."""
    try:
        with open_log(path) as stream:
            data = stream.read()
            return data[len(_BOM):] if data.startswith(_BOM) else data
    except _DAMAGED:
        return None
    except OSError as err:
        raise _unreadable(path, err) from err


class Damaged(Exception):
    """A compressed file's compression is damaged (``raw_lines`` says where)."""


def line_blocks(path, size):
    """Yield ``(bytes, bytes read of the file, file size)``: the (decompressed) bytes of ``path`` in pieces of whole
    lines of about ``size`` bytes (the last may end without a newline), the byte-order mark dropped; ``Damaged``
    where the compression is. The whole file is never held at once, compressed or not."""
    try:
        with open_log(path) as stream:
            underlying = getattr(stream, "fileobj", stream)  # a gzip file's compressed bytes, for the progress
            total = os.fstat(underlying.fileno()).st_size
            rest, first = b"", True
            while True:
                chunk = stream.read(size)  # size bytes unless the file ends: a buffered read waits for them
                if not chunk:
                    break
                if first:
                    chunk, first = (chunk[len(_BOM):] if chunk.startswith(_BOM) else chunk), False
                data = rest + chunk
                cut = data.rfind(b"\n") + 1
                if cut:
                    yield data[:cut], underlying.tell(), total
                rest = data[cut:]
            if rest:
                yield rest, total, total
    except _DAMAGED as err:
        raise Damaged(str(err)) from err
    except OSError as err:
        raise _unreadable(path, err) from err


def accounting_files(paths, stats):
    """Files as given, a directory's ``YYYYMMDD[.gz]`` files in name order; those that are SWF traces are left
    out and counted in ``stats.swf_files`` (the ingester's rule: one note, not a rejected line per job)."""
    files = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        logs, ignored = directory_logs(path)
        stats.ignored_files += ignored
        files.extend(logs)
    swf = {path for path in files if os.path.isfile(path) and looks_like_swf(LogFile(path))}
    stats.swf_files += len(swf)
    return [path for path in files if path not in swf]


@contextlib.contextmanager
def collection_paused():
    """No garbage collection inside: a reader makes a tuple per job and keeps them all, and the
    collector would walk the growing list again and again for no cycle to find."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def give_back_freed_memory():
    """Return to the system the memory a read freed (glibc keeps it otherwise).

    Reading leaves the heap full of holes where the blocks' small arrays and
    the parsed records were; the replay's large arrays are mapped apart and
    never reuse them, so without this the holes would count in the command's
    memory to the end. Nothing happens where the C library has no
    ``malloc_trim`` (not glibc).
    """
    try:
        import ctypes
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
