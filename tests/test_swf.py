"""replay.traces.swf: Standard Workload Format traces, read and written."""

import io

import pytest

from replay.traces.swf import read_swf, write_swf
from replay.traces.trace import Job, ReadStats, Trace

HEADER = "; Version: 2.2\n; Computer: test\n; UnixStartTime: 1000000\n; MaxNodes: 50\n; MaxProcs: 100\n;\n"


def swf_line(*values):
    """18 fields: the given ones first, -1 for the rest."""
    return " ".join(str(value) for value in list(values) + [-1] * (18 - len(values)))


#                    job sub wait run procs cpu mem req reqtime reqmem status user group exe queue
RAN = swf_line(1, 10, 5, 100, 4, -1, -1, 4, 3600, -1, 1, 7, 3, -1, 2)


def read(tmp_path, text):
    path = tmp_path / "trace.swf"
    path.write_text(text)
    rejects = []
    trace = read_swf(str(path), ReadStats(), lambda *reject: rejects.append(reject))
    return trace, [(line_no, message) for _, line_no, message in rejects]


def test_job_fields_from_a_line(tmp_path):
    """Submit, start = submit + wait, end, walltime, names of user, group and queue."""
    trace, _ = read(tmp_path, HEADER + RAN + "\n")
    assert trace.jobs == [Job("1", "u7", 10, 100, 3600, 4, 15, 115, nodes=2, queue="q2", exit_status=0, group="g3")]


def test_requested_processors_are_field_8_apart_from_the_allocated_field_5(tmp_path):
    """Field 5 (allocated) sizes the job; field 8 (requested) is what the user asked for, the classifier's
    feature; -1 there, or the allocated count again, leaves it None (as ncpus)."""
    fields = RAN.split()
    asked = " ".join(fields[:7] + ["8"] + fields[8:])
    unknown = " ".join(fields[:7] + ["-1"] + fields[8:])
    jobs = read(tmp_path, HEADER + asked + "\n" + unknown.replace("1 10", "2 10", 1) + "\n")[0].jobs
    assert [(job.ncpus, job.requested_ncpus) for job in jobs] == [(4, 8), (4, None)]


def test_header_machine_size_and_start_time(tmp_path):
    """MaxProcs, MaxNodes and UnixStartTime come from the header."""
    trace, _ = read(tmp_path, HEADER + RAN + "\n")
    assert (trace.max_procs, trace.max_nodes, trace.unix_start_time) == (100, 50, 1000000)


def test_unknown_values_are_none(tmp_path):
    """-1 requested time, group and queue become None; user -1 is 'unknown'."""
    trace, _ = read(tmp_path, swf_line(1, 0, 0, 10, 2) + "\n")
    found = trace.jobs[0]
    assert (found.walltime_s, found.group, found.queue, found.user, found.nodes) == (None, None, None, "unknown", None)


def test_requested_processors_when_allocated_unknown(tmp_path):
    """Field 8 stands in for an unknown field 5."""
    trace, _ = read(tmp_path, swf_line(1, 0, 0, 10, -1, -1, -1, 6) + "\n")
    assert trace.jobs[0].ncpus == 6


@pytest.mark.parametrize("line, reason", [
    (swf_line(1, 0, -1, 10, 2), "never ran, or start or run time unknown"),
    (swf_line(1, 0, 5, -1, 2), "never ran, or start or run time unknown"),
    (swf_line(1, -1, 5, 10, 2), "submit time unknown"),
    (swf_line(1, 0, 5, 10, -1), "processor count unknown"),
])
def test_jobs_that_did_not_run_are_skipped_with_reason(tmp_path, line, reason):
    """Jobs without a known run are counted by reason, not rejected."""
    trace, rejects = read(tmp_path, line + "\n")
    assert trace.jobs == [] and trace.stats.skipped == {reason: 1} and rejects == []


@pytest.mark.parametrize("line, message", [
    ("1 2 3", "expected 18 fields, got 3"),
    (swf_line(1, "x", 0, 10, 2), "field 2 (submit time): not an integer: 'x'"),
    (swf_line(1, 0, 0, "1.5", 2), "field 4 (run time): not an integer: '1.5'"),
    (swf_line(1, 10 ** 15, 0, 10, 2), "field 2 (submit time): out of range: 1000000000000000"),
    (swf_line(1, 0, 0, 10, 2, 1.5, -1, 2, -10 ** 12), "field 9 (requested time): out of range: -1000000000000"),
    (swf_line(1, "9" * 5000, 0, 10, 2), "field 2 (submit time): out of range: " + "9" * 20),
])
def test_malformed_line_named_and_skipped(tmp_path, line, message):
    """A bad line is reported with its number and field; the next line is still read."""
    trace, rejects = read(tmp_path, line + "\n" + RAN + "\n")
    assert rejects == [(1, message)] and len(trace.jobs) == 1 and trace.stats.rejected == 1


def test_decimal_in_an_unused_field_is_fine(tmp_path):
    """Average CPU time often has decimals; the replay does not use it."""
    trace, rejects = read(tmp_path, swf_line(1, 0, 0, 10, 2, "552.21") + "\n")
    assert rejects == [] and len(trace.jobs) == 1


def test_header_number_too_long_for_int_rejected(tmp_path):
    """A header number of thousands of digits is reported like any out-of-range value."""
    trace, rejects = read(tmp_path, "; MaxProcs: " + "9" * 5000 + "\n" + RAN + "\n")
    assert rejects == [(1, "header MaxProcs: not an integer in range: '" + "9" * 20 + "'")] and len(trace.jobs) == 1


def test_bad_header_value_rejected(tmp_path):
    """A header number that is not one is reported, the trace still read."""
    trace, rejects = read(tmp_path, "; MaxProcs: lots\n" + RAN + "\n")
    assert rejects == [(1, "header MaxProcs: not an integer in range: 'lots'")] and trace.max_procs is None


def test_blank_lines_ignored(tmp_path):
    """Empty and whitespace-only lines are neither jobs nor errors."""
    trace, rejects = read(tmp_path, "\n   \n" + RAN + "\n")
    assert rejects == [] and len(trace.jobs) == 1


def test_status_maps_to_exit_status(tmp_path):
    """1 completed -> 0, 0 failed -> 1, 5 cancelled -> 271 (SIGTERM), others unknown."""
    lines = [swf_line(number, 0, 0, 10, 1, -1, -1, 1, 60, -1, status) for number, status in
             ((1, 1), (2, 0), (3, 5), (4, 3))]
    trace, _ = read(tmp_path, "\n".join(lines) + "\n")
    assert [found.exit_status for found in trace.jobs] == [0, 1, 271, None]


def test_jobs_sorted_by_submission(tmp_path):
    """Jobs come out in submission order even if the file is not."""
    trace, _ = read(tmp_path, swf_line(1, 50, 0, 10, 1) + "\n" + swf_line(2, 5, 0, 10, 1) + "\n")
    assert [found.job_id for found in trace.jobs] == ["2", "1"]


def written(jobs, **machine):
    out = io.StringIO()
    write_swf(Trace(jobs, "pbs", ("x",), ReadStats(), **machine), out)
    return out.getvalue()


def test_writer_relative_times_and_names_back_to_numbers():
    """Times relative to the first submission; u7/g3/q2 become 7/3/2; ids lose the server."""
    text = written([Job("12.svr", "u7", 1000, 100, 3600, 4, 1005, 1105, queue="q2", exit_status=0, group="g3")])
    assert text.splitlines()[-1] == "12 0 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 2 -1 -1 -1"
    assert "; UnixStartTime: 1000" in text


def test_writer_numbers_other_names_in_order_of_appearance():
    """PBS user and queue names get numbers, queues listed in the header."""
    text = written([Job("1.s", "bob", 0, 1, None, 1, 0, 1, queue="workq"),
                    Job("2.s", "alice", 0, 1, None, 1, 0, 1, queue="long")])
    lines = text.splitlines()
    assert "; Queue: 1 workq" in lines and "; Queue: 2 long" in lines
    assert [line.split()[11] for line in lines[-2:]] == ["1", "2"]


def test_writer_renumbers_ids_that_are_not_numbers():
    """Job-array subjobs have no single number: every job is renumbered 1, 2, ..."""
    text = written([Job("7[1].s", "u1", 0, 1, None, 1, 0, 1), Job("7[2].s", "u1", 0, 1, None, 1, 0, 1)])
    assert [line.split()[0] for line in text.splitlines()[-2:]] == ["1", "2"]


# Published data sets that append fields after the standard 18: allocated CPU ids, the queue name, the
# original PBS resource request.
EXTENDED = [swf_line(0, 10, 5, 100, 3, -1, -1, 3, 3600, -1, 1, 7, 3, -1, 2) + " {0,1,2} batch nodes=1:ppn=3",
            swf_line(1, 20, 0, 50, 1, -1, -1, 1, 600, -1, 1, 7, 3, -1, -1) + " {4} short walltime=00:10:00",
            swf_line(2, 30, 0, 50, 1, -1, -1, 1, 600, -1, 1, 7, 3, -1, 2) + " {5} 17"]


def test_extra_trailing_fields_are_read_past_and_counted_once(tmp_path):
    """Lines with fields after the 18th are jobs; one note says how many there were."""
    trace, rejects = read(tmp_path, HEADER + "\n".join(EXTENDED) + "\n")
    assert rejects == [] and [found.job_id for found in trace.jobs] == ["0", "1", "2"]
    assert trace.jobs[0] == Job("0", "u7", 10, 100, 3600, 3, 15, 115, nodes=2, queue="batch", exit_status=0,
                                group="g3")
    notes = [note for note in trace.stats.notes(3) if "after the standard 18" in note]
    assert notes == ["3 lines had fields after the standard 18 (ignored, except a queue name on 2 lines)"]


def test_trailing_queue_name_names_the_queue(tmp_path):
    """A queue name among the extra fields wins over SWF's queue number; a number there is not a name."""
    trace, _ = read(tmp_path, "\n".join(EXTENDED) + "\n")
    assert [found.queue for found in trace.jobs] == ["batch", "short", "q2"]


@pytest.mark.parametrize("extra", ["{0,1} batch long", "{0, 1, 2}", "NULL", "nodes=2:ppn=4 -q", "9batch"])
def test_no_queue_name_unless_one_is_clearly_there(tmp_path, extra):
    """Two candidate names, none, an unknown marker or a token not shaped like a queue name: the SWF queue stays."""
    trace, rejects = read(tmp_path, RAN + " " + extra + "\n")
    assert rejects == [] and trace.jobs[0].queue == "q2"
