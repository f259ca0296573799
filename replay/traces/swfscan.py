"""The fast path of the SWF reader: a whole file's plain job lines found by numpy and parsed by its C reader.

A line is taken here only when it is plainly well formed: ASCII digits,
``-``, ``.``, spaces and tabs (a ``\\r`` before the newline too), exactly 18
fields, and each field the replay uses an integer ``-?[0-9]+`` of at most 15
digits within the reader's range. numpy finds those lines with whole-array
operations on the file's bytes, and ``numpy.loadtxt`` (C code) turns their
used fields into integers. Every other non-blank line (the ``;`` header,
fields after the 18th, letters, a bad or huge number, a non-ASCII byte) is
left to the line-by-line reader in ``swf``, which reads and names it exactly
as before: this path only decides where a line is read, never what it means.
"""

import io
from typing import NamedTuple

import numpy as np

__all__ = ["Scan", "scan_lines"]

_FIELDS = 18
_MAX_DIGITS = 15
"""Longer numbers (zeros in front included) are left to the careful reader, well inside int64."""
_BLOCK_SIZE = 1 << 20
"""Bytes scanned at a time: numpy's temporaries of a block stay in the processor's cache."""
_NEWLINE, _SPACE, _TAB, _RETURN = 10, 32, 9, 13
_MINUS, _DOT, _ZERO, _NINE = 45, 46, 48, 57


class Scan(NamedTuple):
    """Where the lines of a file are, and which ones numpy read.

    ``starts``/``ends``: byte offsets of every line (line number = index + 1),
    the newline excluded. ``fast``: indexes of the lines read here, in file
    order; ``values[i]``: the used fields of line ``fast[i]``, in the order
    they were asked for. ``careful``: indexes of the other lines that are not
    blank, for the line-by-line reader.
    """

    starts: np.ndarray
    ends: np.ndarray
    fast: np.ndarray
    values: np.ndarray
    careful: np.ndarray


def _line_bounds(buf):
    """``(starts, ends)`` of the lines as iterating over the file gives them (none after a last newline)."""
    newlines = np.flatnonzero(buf == _NEWLINE)
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [len(buf)]))
    if starts[-1] == len(buf):
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


def _lines_of(positions, starts):
    """The index of the line holding each byte position."""
    return np.searchsorted(starts, positions, side="right") - 1


def _unusual_lines(buf, starts, digit):
    """True for the lines holding a byte the fast path does not read (a ``\\r`` not ending a line is one)."""
    line_end = np.concatenate((buf[1:] == _NEWLINE, [True]))
    usual = digit | (buf == _MINUS) | (buf == _DOT) | (buf == _SPACE) | (buf == _TAB) | (buf == _NEWLINE)
    usual |= (buf == _RETURN) & line_end
    unusual = np.zeros(len(starts), dtype=bool)
    unusual[_lines_of(np.flatnonzero(~usual), starts)] = True
    return unusual


def _fields(buf, digit):
    """``(starts, ends, plain)`` of the fields, runs of ``[0-9.-]``; plain: the field is ``-?[0-9]{1,15}``."""
    minus = buf == _MINUS
    inside = digit | minus | (buf == _DOT)
    before = np.concatenate(([False], inside[:-1]))
    after = np.concatenate((inside[1:], [False]))
    starts, ends = np.flatnonzero(inside & ~before), np.flatnonzero(inside & ~after) + 1
    # A dot anywhere, a minus after the first character, or a minus alone spoil a field.
    spoilt = np.flatnonzero((buf == _DOT) | (minus & before) | (minus & ~after))
    plain = ends - starts - minus[starts] <= _MAX_DIGITS
    plain[np.searchsorted(starts, spoilt, side="right") - 1] = False
    return starts, ends, plain


def _parsed(buf, starts, ends, lines, columns):
    """The ``columns`` of ``lines`` (line indexes) as integers, by numpy's C reader.

    Fields outside ``columns`` are split off but not converted, so a ``1.5`` there does not matter.
    """
    if not len(lines):
        return np.zeros((0, len(columns)), dtype=np.int64)
    first, last = int(lines[0]), int(lines[-1])
    if last - first + 1 == len(lines):  # one run of lines (a block past the header): their bytes as they are
        text = buf[starts[first]:ends[last] + 1].tobytes()
    else:
        chosen = np.zeros(len(starts), dtype=bool)
        chosen[lines] = True
        # Each line's bytes and the newline after it; the last line may have none.
        text = buf[np.repeat(chosen, ends - starts + 1)[:len(buf)]].tobytes()
    return np.loadtxt(io.BytesIO(text), dtype=np.int64, comments=None, usecols=columns, ndmin=2)


def _blocks(data, size):
    """``(begin, end)`` of pieces of about ``size`` bytes of ``data``, each ending after a newline (or at the end)."""
    begin = 0
    while begin < len(data):
        end = data.find(b"\n", begin + size)
        end = len(data) if end < 0 else end + 1
        yield begin, end
        begin = end


def _scan_block(data, begin, end, columns, max_value):
    """The ``Scan`` of the lines in ``data[begin:end]``, offsets and line indexes within it."""
    buf = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=begin)
    starts, ends = _line_bounds(buf)
    digit = (buf >= _ZERO) & (buf <= _NINE)
    field_starts, _, plain = _fields(buf, digit)
    first = np.searchsorted(field_starts, starts)
    per_line = np.searchsorted(field_starts, ends) - first
    unusual = _unusual_lines(buf, starts, digit)
    candidates = np.flatnonzero(~unusual & (per_line == _FIELDS))
    used = first[candidates][:, None] + np.asarray(columns, dtype=np.int64)[None, :]
    candidates = candidates[plain[used].all(axis=1)]
    values = _parsed(buf, starts, ends, candidates, columns)
    in_range = (np.abs(values) <= max_value).all(axis=1)
    careful = unusual | (per_line > 0)
    careful[candidates[in_range]] = False
    return Scan(starts, ends, candidates[in_range], values[in_range], np.flatnonzero(careful))


def scan_lines(data, columns, max_value, block_size=_BLOCK_SIZE, on_progress=None):
    """The ``Scan`` of SWF text ``data`` (bytes): ``columns`` (0-based fields) read as integers.

    A line with a value in those columns beyond ``max_value`` either way goes to the careful reader.
    ``on_progress(bytes done, bytes)`` after each block.
    """
    scans, lines = [], 0
    for begin, end in _blocks(data, block_size):
        if on_progress is not None:
            on_progress(begin, len(data))
        block = _scan_block(data, begin, end, columns, max_value)
        scans.append(block._replace(starts=block.starts + begin, ends=block.ends + begin, fast=block.fast + lines,
                                    careful=block.careful + lines))
        lines += len(block.starts)
    if on_progress is not None:
        on_progress(len(data), len(data))
    if not scans:
        empty = np.zeros(0, dtype=np.int64)
        return Scan(empty, empty, empty, np.zeros((0, len(columns)), dtype=np.int64), empty)
    return Scan(*(np.concatenate(parts) for parts in zip(*scans)))
