"""replay.traces.swfscan: the fast path of the SWF reader reads what the line-by-line reader reads."""

import gzip

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import swf_texts

from replay.traces import swf, swfscan
from replay.traces.swf import read_swf, read_swf_lines
from replay.traces.trace import ReadStats

USED = (0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 14)
PLAIN = " ".join(str(value) for value in range(1, 19))


def read(reader, path):
    """Everything a reader gives: jobs, machine, reported lines and counters."""
    rejects = []
    trace = reader(str(path), ReadStats(), lambda *reject: rejects.append(reject))
    return trace.jobs, trace.max_procs, trace.max_nodes, trace.unix_start_time, rejects, vars(trace.stats)


@settings(max_examples=400)
@given(data=swf_texts())
def test_fast_reader_reads_what_the_line_reader_reads(tmp_path_factory, data):
    """Same jobs in the same order, same header, same file:line messages, same counts."""
    path = tmp_path_factory.mktemp("swf") / "trace.swf"
    path.write_bytes(data)
    assert read(read_swf, path) == read(read_swf_lines, path)


@settings(max_examples=200)
@given(data=swf_texts(), read_size=st.integers(1, 200))
def test_a_file_read_a_few_bytes_at_a_time_reads_the_same(tmp_path_factory, monkeypatch, data, read_size):
    """Blocks of whole lines, however small: the jobs, header, messages and counts of the line reader."""
    path = tmp_path_factory.mktemp("swf") / "trace.swf"
    path.write_bytes(data)
    with monkeypatch.context() as patched:
        patched.setattr(swf, "_READ_SIZE", read_size)
        assert read(read_swf, path) == read(read_swf_lines, path)


def test_plain_job_lines_take_the_fast_path():
    """Header and blank lines aside, a usual file is read by numpy: a path that never runs is no speed-up."""
    data = "; MaxProcs: 4\n\n{}\n  {}\t-1\r\n{}".format(PLAIN, PLAIN[:-3], PLAIN).encode()
    scan = swfscan.scan_lines(data, USED, 10 ** 11)
    assert scan.fast.tolist() == [2, 3, 4] and scan.careful.tolist() == [0]
    assert scan.values[0].tolist() == [value + 1 for value in USED]


def test_odd_lines_go_to_the_careful_reader():
    """A decimal in a used field, an extra field, a long or huge number, a form feed, a lone CR: line by line."""
    odd = [PLAIN.replace(" 4 ", " 4.0 "), PLAIN + " q1", PLAIN.replace(" 2 ", " 2000000000000 "),
           PLAIN.replace(" 9 ", "\x0c9 "), PLAIN.replace(" 9 ", " 99999999999999999999 "),
           PLAIN.replace(" 9 ", " 0000000000000009 "), PLAIN.replace(" 9 ", " \r9 ")]
    scan = swfscan.scan_lines("\n".join(odd + [PLAIN.replace(" 6 ", " 6.5 ")]).encode(), USED, 10 ** 11)
    assert scan.careful.tolist() == list(range(len(odd))) and scan.fast.tolist() == [len(odd)]


def test_machine_size_changed_between_jobs(tmp_path):
    """Nodes follow the header as it stood at each job's line, as the line reader has it."""
    path = tmp_path / "trace.swf"
    path.write_text("\n".join([PLAIN, "; MaxProcs: 16", PLAIN, "; MaxNodes: 4", PLAIN, "; MaxNodes: 8", PLAIN]))
    jobs = read(read_swf, path)[0]
    assert read(read_swf, path) == read(read_swf_lines, path) and [job.nodes for job in jobs] == [None, None, 2, 3]


def test_compressed_and_damaged_files_read_alike(tmp_path):
    """A .gz is read whole; one cut short falls back to the line reader, which says where it breaks."""
    packed = gzip.compress(("; MaxProcs: 8\n" + (PLAIN + "\n") * 3000).encode())
    whole, cut = tmp_path / "whole.swf.gz", tmp_path / "cut.swf.gz"
    whole.write_bytes(packed)
    cut.write_bytes(packed[:len(packed) // 2])
    assert read(read_swf, whole) == read(read_swf_lines, whole) and len(read(read_swf, whole)[0]) == 3000
    assert read(read_swf, cut) == read(read_swf_lines, cut) and "damaged compression" in read(read_swf, cut)[4][-1][2]


def test_empty_file_has_no_lines():
    """No bytes, no lines."""
    scan = swfscan.scan_lines(b"", USED, 10 ** 11)
    assert len(scan.starts) == 0 and scan.values.shape == (0, len(USED)) and np.array_equal(scan.careful, [])


@settings(max_examples=200)
@given(data=swf_texts(), block_size=st.integers(1, 200))
def test_blocks_scan_like_the_whole(data, block_size):
    """Scanning a file a block at a time finds the lines, fields and values of one whole pass."""
    pieces = swfscan.scan_lines(data, USED, 10 ** 11, block_size)
    whole = swfscan.scan_lines(data, USED, 10 ** 11, 1 << 30)
    assert all(np.array_equal(piece, part) for piece, part in zip(pieces, whole))
