"""predictor.accounting.logfile: reading accounting files by offset, plain or gzip."""

import gzip
import os
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from predictor.accounting.logfile import LogFile, directory_logs, tail_sha1_of_lines

lines_strategy = st.lists(st.binary(max_size=120).map(lambda b: b.replace(b"\n", b"")), min_size=1, max_size=30).filter(
    lambda lines: not lines[0].startswith(b"\x1f\x8b"))  # that would be a gzip-compressed file


@given(lines_strategy, st.integers(1, 30))
def test_tail_from_lines_equals_tail_from_file(tmp_path_factory, lines, count):
    """The checksum taken from lines in memory is the file's, or None (read the file)."""
    path = tmp_path_factory.mktemp("log") / "20260410"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    log, offset = LogFile(str(path)), 0
    for chunk, offset in log.line_chunks(0, count):
        from_lines = tail_sha1_of_lines(chunk, offset)
        assert from_lines in (None, log.tail_sha1(offset))
        if sum(len(line) + 1 for line in chunk) >= 256:
            assert from_lines is not None


def test_chunks_leave_the_unfinished_line(tmp_path):
    """Complete lines come in lists of at most N; a last line without newline is not read."""
    path = tmp_path / "20260410"
    path.write_bytes(b"a\nbb\nccc\nunfinished")
    assert list(LogFile(str(path)).line_chunks(0, 2)) == [([b"a", b"bb"], 5), ([b"ccc"], 9)]


def test_gzip_offsets_are_in_the_decompressed_text(tmp_path):
    """A .gz file reads like the plain text it holds."""
    path = str(tmp_path / "20260410.gz")
    with gzip.open(path, "wb") as handle:
        handle.write(b"first\nsecond\n")
    log = LogFile(path)
    assert log.read_at(6, 6) == b"second" and list(log.line_chunks(6, 10)) == [([b"second"], 13)]


def test_no_head_until_a_line_is_complete(tmp_path):
    """A file without a complete first line has no identity yet."""
    path = tmp_path / "20260410"
    path.write_bytes(b"partial")
    assert LogFile(str(path)).head_sha1() is None


def test_read_error_comes_after_every_whole_line_before_it(tmp_path):
    """A .gz cut short: every whole line before the cut is yielded, then the read error is raised."""
    text = b"".join(b"%d some accounting text\n" % n for n in range(200000))
    packed = gzip.compress(text)[:-len(text) // 100]
    path = tmp_path / "20260410.gz"
    path.write_bytes(packed)
    readable = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(packed)
    got, chunks = [], LogFile(str(path)).line_chunks(0, 1000)
    with pytest.raises(EOFError):
        for lines, _ in chunks:
            got += lines
    assert got == readable.split(b"\n")[:-1]


@pytest.mark.parametrize("name, compress", [("20260410", True), ("20260410.gz", False)])
def test_compression_told_by_content_not_name(tmp_path, name, compress):
    """A compressed file without .gz, or a plain one named .gz, is read as what it holds."""
    path = tmp_path / name
    path.write_bytes(gzip.compress(b"first\nsecond\n") if compress else b"first\nsecond\n")
    assert list(LogFile(str(path)).line_chunks(0, 10)) == [([b"first", b"second"], 13)]


def test_directory_logs_are_the_daily_files_in_name_order(tmp_path):
    """YYYYMMDD and YYYYMMDD.gz files are logs; backups, other names and subdirectories are counted, hidden ones not."""
    for name in ["20260411", "20260410.gz", "20260410", "20260410~", "20260410.bak", "README", ".20260410.swp"]:
        (tmp_path / name).write_text("")
    (tmp_path / "20260412").mkdir()
    logs, ignored = directory_logs(str(tmp_path))
    assert [os.path.basename(path) for path in logs] == ["20260410", "20260410.gz", "20260411"]
    assert ignored == 4
