"""replay.traces.pbsscan and the parallel PBS reader: how a file is read never changes what is read."""

import gzip
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import accounting_logs

from replay.shared.errors import TraceError
from replay.traces import pbsscan
from replay.traces.files import raw_lines
from replay.traces.pbslog import read_accounting
from replay.traces.trace import ReadStats

T = 1775822400


def line(kind, job_id, body=""):
    return "04/10/2026 12:00:00;{};{};{}".format(kind, job_id, body)


def ended(job_id, start, end, ctime=T):
    body = ("user=alice queue=workq ctime={} start={} end={} Resource_List.ncpus=2 Resource_List.walltime=01:00:00 "
            "resources_used.walltime=00:00:10")
    return line("E", job_id, body.format(ctime, start, end))


def line_by_line(path):
    """The events of ``path`` read one line at a time, as the reader did before it read files whole."""
    damage = []
    events = pbsscan._events_line_by_line(raw_lines(path, lambda _, n, message: damage.append(("!", n, message))))
    return events + damage


def everything(paths, workers):
    """Jobs, reported lines (in order) and counters of one read."""
    rejects = []
    trace = read_accounting(paths, ReadStats(), lambda *reject: rejects.append(reject), workers=workers)
    return trace.jobs, rejects, vars(trace.stats)


@settings(max_examples=200)
@given(lines=accounting_logs(), ending=st.sampled_from([b"\n", b"\r\n", b"\n\n"]), last=st.booleans())
def test_whole_file_gives_the_events_of_its_lines(tmp_path_factory, lines, ending, last):
    """Decoding and splitting the file at once gives each line's event, line numbers included."""
    path = str(tmp_path_factory.mktemp("log") / "20260410")
    data = ending.join(lines) + (ending if last else b"")
    with open(path, "wb") as log:
        log.write(data)
    scan = pbsscan.scan_file(path)
    assert scan.events == line_by_line(path)
    assert scan.lines == sum(1 for _ in raw_lines(path, lambda *_: None))


def test_damaged_gzip_read_up_to_the_damage(tmp_path):
    """Lines before the damage give their events; the damage is the last event, on the line after them."""
    packed = gzip.compress("".join(ended("{}.s".format(n), T, T + 10) + "\n" for n in range(3000)).encode())
    path = tmp_path / "20260410.gz"
    path.write_bytes(packed[:len(packed) // 2])
    scan = pbsscan.scan_file(str(path))
    assert scan.events == line_by_line(str(path)) and scan.events[-1][0] == "!"
    assert scan.events[-1][1] == scan.lines + 1 and "damaged compression" in scan.events[-1][2]


@pytest.fixture
def days(tmp_path):
    """Three daily files whose jobs cross midnight, with an array, a rerun, a qdel and bad lines."""
    (tmp_path / "20260410").write_text("\n".join([
        line("Q", "1.s", "ctime={}".format(T)), line("Q", "2[].s", "ctime={} array_indices=1-2".format(T)),
        line("Q", "3.s", "ctime={}".format(T)), line("S", "1.s"), "junk", line("Q", "4.s")]) + "\n")
    (tmp_path / "20260411").write_text("\n".join([
        line("S", "2[1].s"), line("D", "3.s"), ended("1.s", T + 5, T + 50), line("R", "4.s"),
        ended("2[1].s", T + 60, T + 90, ctime=T + 60), "\xff not a record"]) + "\n")
    with gzip.open(str(tmp_path / "20260412.gz"), "wt") as day:
        day.write("\n".join([ended("2[2].s", T + 70, T + 95, ctime=T + 70), ended("2[].s", T + 60, T + 95),
                             ended("5.s", T + 10, T + 5), ended("4.s", T + 100, T + 200)]) + "\n")
    return str(tmp_path)


def test_workers_change_nothing(days):
    """Files scanned by worker processes: the same jobs, reports in the same order, the same counts."""
    alone = everything([days], 0)
    assert everything([days], 2) == alone
    assert [job.job_id for job in alone[0]] == ["1.s", "2[1].s", "2[2].s", "4.s"]
    assert [(os.path.basename(path), line_no) for path, line_no, _ in alone[1]] == [
        ("20260410", 5), ("20260411", 6), ("20260412.gz", 3)]


@settings(max_examples=15, deadline=None)
@given(st.lists(accounting_logs(max_lines=15), min_size=2, max_size=4))
def test_workers_change_nothing_on_generated_logs(tmp_path_factory, logs):
    """Any lines in several files: worker processes or not, the same read."""
    directory = tmp_path_factory.mktemp("days")
    for day, lines in enumerate(logs, 10):
        (directory / "202604{}".format(day)).write_bytes(b"".join(line + b"\n" for line in lines))
    assert everything([str(directory)], 3) == everything([str(directory)], 0)


def test_unreadable_file_stops_the_read_with_workers_too(days):
    """A file that cannot be read is the same one-line error, scanned here or by a worker."""
    missing = os.path.join(days, "20260413")
    os.symlink(os.path.join(days, "nowhere"), missing)
    messages = []
    for workers in (0, 2):
        with pytest.raises(TraceError) as failure:
            everything([os.path.join(days, "20260410"), missing], workers)
        messages.append(str(failure.value))
    assert messages[0] == messages[1] and messages[0].startswith(missing + ": cannot read")


def test_small_directories_are_read_in_this_process(days):
    """Worker processes cost more than they save on a few small files."""
    files = sorted(os.path.join(days, name) for name in os.listdir(days))
    assert pbsscan._workers(files, None) < 2 and pbsscan._workers(files, 2) == 2
