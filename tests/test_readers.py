"""replay.traces.readers: one entry point for PBS logs and SWF, errors that name the file."""

import gzip

import pytest

from replay.shared.errors import TraceError
from replay.traces.readers import detect_format, load_trace
from replay.traces.trace import ReadStats

SWF = "; MaxProcs: 8\n1 0 0 10 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
PBS = ("04/10/2026 12:00:10;E;1.s;user=alice ctime=100 start=100 end=110 Resource_List.ncpus=1 "
       "Resource_List.walltime=00:01:00\n")


def write(path, text):
    path.write_text(text)
    return str(path)


def test_swf_told_by_its_header(tmp_path):
    """A ';' first line is SWF, whatever the file name."""
    assert detect_format(write(tmp_path / "x.log", SWF)) == "swf"


def test_swf_without_header_told_by_its_18_fields(tmp_path):
    """A headerless SWF file is recognised by its field count."""
    assert detect_format(write(tmp_path / "x", SWF.split("\n", 1)[1])) == "swf"


def test_pbs_told_by_its_timestamp(tmp_path):
    """An accounting line starts with MM/DD/YYYY HH:MM:SS;."""
    assert detect_format(write(tmp_path / "20260410", PBS)) == "pbs"


def test_gzip_is_read_through(tmp_path):
    """A gzip-compressed SWF file is detected and read."""
    with gzip.open(str(tmp_path / "t.swf.gz"), "wt") as stream:
        stream.write(SWF)
    trace = load_trace([str(tmp_path / "t.swf.gz")])
    assert trace.source_format == "swf" and len(trace.jobs) == 1 and trace.max_procs == 8


def test_directory_is_pbs(tmp_path):
    """A directory is read as server_priv/accounting."""
    write(tmp_path / "20260410", PBS)
    trace = load_trace([str(tmp_path)])
    assert trace.source_format == "pbs" and [job.job_id for job in trace.jobs] == ["1.s"]


def test_unknown_format_names_the_file(tmp_path):
    """Text that is neither format is a one-line error naming the file."""
    path = write(tmp_path / "notes.txt", "hello world\n")
    with pytest.raises(TraceError, match="notes.txt: neither a PBS accounting log nor an SWF trace"):
        load_trace([path])


def test_missing_file_names_it(tmp_path):
    """A path that does not exist is an error naming it."""
    with pytest.raises(TraceError, match="nope: no such file or directory"):
        load_trace([str(tmp_path / "nope")])


def test_mixed_formats_refused(tmp_path):
    """PBS logs and SWF cannot be replayed together."""
    with pytest.raises(TraceError, match="mixed formats"):
        load_trace([write(tmp_path / "a.swf", SWF), write(tmp_path / "20260410", PBS)])


def test_only_malformed_lines_is_fatal_with_counts(tmp_path):
    """Nothing valid left: an error that says what was found."""
    path = write(tmp_path / "20260410", "04/10/2026 12:00:10;E;1.s;user=alice start=x\n")
    with pytest.raises(TraceError, match="no job that ran in .*1 malformed lines skipped"):
        load_trace([path])


def test_format_can_be_forced(tmp_path):
    """--format swf reads a file whose first line fooled the detection as SWF."""
    path = write(tmp_path / "odd", "x\n" + SWF)
    rejects = []
    trace = load_trace([path], "swf", lambda *reject: rejects.append(reject))
    assert len(trace.jobs) == 1 and rejects[0][1] == 1


def test_notes_list_nonzero_counters():
    """Read statistics become report notes, zero counters left out."""
    stats = ReadStats()
    stats.files, stats.lines, stats.rejected = 1, 10, 2
    stats.skip("never ran")
    assert stats.notes(7) == ["7 jobs read from 1 file(s), 10 lines", "1 jobs skipped: never ran",
                              "2 malformed lines skipped"]


def test_swf_with_extra_trailing_fields_is_told_and_read(tmp_path):
    """Fields after the standard 18 (CPU ids, queue name, PBS request) still make an SWF trace."""
    line = "0 0 0 10 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1 {0,1} workq nodes=1:ppn=2\n"
    path = write(tmp_path / "x", line)
    assert detect_format(path) == "swf"
    trace = load_trace([path])
    assert [(job.job_id, job.queue) for job in trace.jobs] == [("0", "workq")]


def test_extra_fields_note_without_queue_names():
    """Extra fields with no queue name among them: the note says they were ignored."""
    stats = ReadStats()
    stats.extra_fields = 4
    assert stats.notes(4)[-1] == "4 lines had fields after the standard 18 (ignored)"
