"""replay.traces.convert: SWF to PBS accounting logs and back."""

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predictor.accounting.records import completed_job, parse_fields, parse_record
from predictor.errors import UsageError
from replay.traces.convert import convert
from replay.traces.readers import load_trace

HEADER = "; UnixStartTime: 1700000000\n; MaxNodes: 10\n; MaxProcs: 40\n;\n"


@st.composite
def swf_traces(draw):
    """SWF text whose first job is submitted at 0, with known queues (unknown ones become workq)."""
    count = draw(st.integers(1, 12))
    submits = sorted(draw(st.lists(st.integers(0, 3 * 86400), min_size=count, max_size=count)))
    lines = []
    for number, submit in enumerate([0] + submits[1:], 1):
        procs = draw(st.integers(1, 40))
        lines.append(" ".join(str(value) for value in (
            number, submit, draw(st.integers(0, 50000)), draw(st.integers(0, 200000)), procs, -1, -1, procs,
            draw(st.sampled_from([-1, 60, 3600, 86400])), -1, draw(st.sampled_from([0, 1, 5])),
            draw(st.integers(-1, 5)), draw(st.integers(-1, 3)), -1, draw(st.integers(1, 3)), -1, -1, -1)))
    return HEADER + "\n".join(lines) + "\n"


def comparable(trace):
    """What survives the trip: everything but nodes (not in SWF without a header) and the id suffix."""
    return [job._replace(nodes=None, job_id=job.job_id.split(".")[0]) for job in trace.jobs]


@settings(max_examples=40)
@given(swf_traces())
def test_swf_to_pbs_to_swf_keeps_every_job(tmp_path_factory, text):
    """SWF -> PBS -> SWF gives back the same jobs."""
    folder = tmp_path_factory.mktemp("trip")
    original = folder / "in.swf"
    original.write_text(text)
    convert([str(original)], str(folder / "log"))
    convert([str(folder / "log")], str(folder / "back.swf"))
    assert comparable(load_trace([str(folder / "back.swf")])) == comparable(load_trace([str(original)]))


@settings(max_examples=40)
@given(swf_traces())
def test_pbs_records_read_like_the_swf_jobs(tmp_path_factory, text):
    """The PBS conversion read back gives the SWF's jobs, times shifted by UnixStartTime."""
    folder = tmp_path_factory.mktemp("pbs")
    (folder / "in.swf").write_text(text)
    convert([str(folder / "in.swf")], str(folder / "log"))
    epoch = 1700000000
    shifted = [job._replace(job_id=job.job_id + ".pbsserver", submit_time=job.submit_time + epoch,
                            start_time=job.start_time + epoch, end_time=job.end_time + epoch,
                            queue=job.queue, project="_pbs_project_default")
               for job in load_trace([str(folder / "in.swf")]).jobs]
    assert load_trace([str(folder / "log")]).jobs == shifted


def test_every_written_end_record_is_accepted_by_the_accounting_parser(tmp_path):
    """Each E line of a conversion parses with the ingester's parser into a completed job."""
    (tmp_path / "in.swf").write_text(HEADER + "1 0 5 100 4 -1 -1 4 3600 -1 5 1 1 -1 1 -1 -1 -1\n")
    convert([str(tmp_path / "in.swf")], str(tmp_path / "log"))
    records = [parse_record(line) for line in (tmp_path / "log").read_text().splitlines()]
    ends = [completed_job(record, parse_fields(record.body)) for record in records if record.record_type == "E"]
    assert [record.record_type for record in records] == ["Q", "S", "D", "E"]
    assert [(job.job_id, job.runtime_s, job.exit_status) for job in ends] == [("1.pbsserver", 100, 271)]


def test_unknown_swf_queue_becomes_workq(tmp_path):
    """PBS always has a queue: SWF queue -1 is written as workq."""
    (tmp_path / "in.swf").write_text("1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
    convert([str(tmp_path / "in.swf")], str(tmp_path / "log"))
    assert load_trace([str(tmp_path / "log")]).jobs[0].queue == "workq"


def test_directory_output_has_one_file_per_day(tmp_path):
    """A directory target gets YYYYMMDD files, one per UTC day of the records."""
    (tmp_path / "in.swf").write_text("; UnixStartTime: 0\n1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n"
                                     "2 86400 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n")
    convert([str(tmp_path / "in.swf")], str(tmp_path / "accounting") + os.sep)
    assert sorted(os.listdir(str(tmp_path / "accounting"))) == ["19700101", "19700102"]
    assert len(load_trace([str(tmp_path / "accounting")]).jobs) == 2


def test_gzip_output_is_byte_identical_between_runs(tmp_path):
    """Compressed output carries no time stamp: two runs give the same bytes."""
    (tmp_path / "in.swf").write_text(HEADER + "1 0 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n")
    convert([str(tmp_path / "in.swf")], str(tmp_path / "a.gz"))
    convert([str(tmp_path / "in.swf")], str(tmp_path / "b.gz"))
    assert (tmp_path / "a.gz").read_bytes() == (tmp_path / "b.gz").read_bytes()
    assert (tmp_path / "a.gz").read_bytes()[4:8] == bytes(4)  # gzip's MTIME: runs in one second would agree anyway
    assert len(load_trace([str(tmp_path / "a.gz")]).jobs) == 1


def test_output_over_input_refused(tmp_path):
    """Converting a file onto itself is an error, and the input is untouched."""
    path = tmp_path / "in.swf"
    path.write_text(HEADER + "1 0 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n")
    with pytest.raises(UsageError, match="overwrite the input"):
        convert([str(path)], str(path))
    assert path.read_text().startswith(HEADER)
