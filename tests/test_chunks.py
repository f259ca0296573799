"""predictor.ingest.chunks: lines to COPY rows."""

from predictor.ingest.chunks import chunk_rows, copy_line, parse_chunk

E = ("04/10/2026 12:00:05;E;{};user=alice queue=workq start=100 end={} Resource_List.walltime=01:00:00 "
     "Resource_List.ncpus=1").format


def test_last_record_of_a_job_wins():
    """A job ending twice in a chunk gives one row, from its later line."""
    rows, _, end_records = chunk_rows([E("1.s", 200).encode(), E("1.s", 300).encode()], 10)
    assert end_records == 2 and [(values[7], line_no) for values, line_no in rows.values()] == [(200, 11)]


def test_rejections_carry_line_numbers():
    """Bad lines are numbered from the chunk's first line number."""
    parsed = parse_chunk([b"junk", E("1.s", 200).encode(), b"\xff"], 41)
    assert [line_no for line_no, _ in parsed.rejections] == [41, 43] and parsed.jobs == 1


def test_copy_line_escapes_and_nulls():
    """COPY text: tabs, newlines and backslashes escaped; None as \\N."""
    assert copy_line(("a\tb", None, "c\\d", 5, "x\ny")) == "a\\tb\t\\N\tc\\\\d\t5\tx\\ny\n"


def test_crlf_lines_accepted():
    """A line ending in CRLF parses like one ending in LF."""
    assert parse_chunk([E("1.s", 200).encode() + b"\r"], 1).jobs == 1


def test_copy_line_plain_values_unchanged():
    """Without special characters, values are written as they are (fast path)."""
    assert copy_line(("1.svr", "alice", None, 0, -29)) == "1.svr\talice\t\\N\t0\t-29\n"
