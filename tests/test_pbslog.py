"""replay.traces.pbslog: jobs from PBS accounting logs, and accounting records from jobs."""

import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

from predictor.accounting.records import completed_job, parse_fields, parse_record
from replay.traces.pbslog import _listed_jobs, _Runs, read_accounting, record_kinds, record_line
from replay.traces.trace import Job, ReadStats

# Written by an OpenPBS 23.06 server (../shared/pbs-facts.md).
REAL = """\
11/22/2026 10:35:16;Q;1.pbshost;user=pbsuser group=pbsuser project=_pbs_project_default jobname=STDIN queue=workq ctime=1795343716 qtime=1795343716 etime=1795343716 Resource_List.ncpus=1 Resource_List.nodect=1 Resource_List.place=pack Resource_List.select=1:ncpus=1 Resource_List.soft_walltime=00:05:00 Resource_List.walltime=00:10:00 
11/22/2026 10:35:16;S;1.pbshost;user=pbsuser group=pbsuser project=_pbs_project_default jobname=STDIN queue=workq ctime=1795343716 qtime=1795343716 etime=1795343716 start=1795343716 exec_host=pbshost/1 exec_vnode=(pbshost:ncpus=1) Resource_List.ncpus=1 Resource_List.nodect=1 Resource_List.place=pack Resource_List.select=1:ncpus=1 Resource_List.soft_walltime=00:05:00 Resource_List.walltime=00:10:00 resource_assigned.ncpus=1 
11/22/2026 10:35:23;E;1.pbshost;user=pbsuser group=pbsuser project=_pbs_project_default jobname=STDIN queue=workq ctime=1795343716 qtime=1795343716 etime=1795343716 start=1795343716 exec_host=pbshost/1 exec_vnode=(pbshost:ncpus=1) Resource_List.ncpus=1 Resource_List.nodect=1 Resource_List.place=pack Resource_List.select=1:ncpus=1 Resource_List.soft_walltime=00:05:00 Resource_List.walltime=00:10:00 session=8015 end=1795343723 Exit_status=0 resources_used.cpupercent=0 resources_used.cput=00:00:00 resources_used.mem=0kb resources_used.ncpus=1 resources_used.vmem=0kb resources_used.walltime=00:00:05 run_count=1
"""  # noqa: E501 (real lines)

T = 1775822400


def rec(kind, job_id, body=""):
    return "04/10/2026 12:00:00;{};{};{}".format(kind, job_id, body)


def ended(job_id, start, end, user="alice", ctime=T, walltime="01:00:00", extra=""):
    body = "user={} group=users queue=workq ctime={} start={} end={} Exit_status=0 Resource_List.ncpus=4 " \
           "Resource_List.nodect=1 Resource_List.walltime={} resources_used.walltime={}{}".format(
               user, ctime, start, end, walltime, _hms(end - start), extra)
    return rec("E", job_id, body)


def _hms(seconds):
    return "{:02d}:{:02d}:{:02d}".format(seconds // 3600, seconds // 60 % 60, seconds % 60)


def read(tmp_path, *lines, name="20260410"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    rejects = []
    trace = read_accounting([str(path)], ReadStats(), lambda *reject: rejects.append(reject))
    return trace, [(line_no, message) for _, line_no, message in rejects]


def test_real_openpbs_records_make_one_job(tmp_path):
    """The Q, S, E lines of a real OpenPBS server give the job they describe."""
    (tmp_path / "20261122").write_text(REAL)
    trace = read_accounting([str(tmp_path / "20261122")], ReadStats(), None)
    assert trace.jobs == [Job("1.pbshost", "pbsuser", 1795343716, 5, 600, 1, 1795343716, 1795343723, nodes=1,
                              queue="workq", project="_pbs_project_default", soft_walltime_s=300, exit_status=0,
                              group="pbsuser", occupancy_s=7)]


def test_queued_then_deleted_is_skipped(tmp_path):
    """Q then D (qdel while queued): the job never ran and is counted as skipped."""
    trace, _ = read(tmp_path, rec("Q", "7.s"), rec("D", "7.s", "requestor=alice@h"))
    assert trace.jobs == [] and trace.stats.skipped == {"deleted while queued (D record)": 1}


def test_deleted_while_running_is_a_job(tmp_path):
    """Q, S, D, E: qdel of a running job still ran."""
    trace, _ = read(tmp_path, rec("Q", "7.s"), rec("S", "7.s"), rec("D", "7.s"), ended("7.s", T, T + 60))
    assert [job.runtime_s for job in trace.jobs] == [60] and trace.stats.skipped == {}


def test_end_without_start_is_skipped(tmp_path):
    """An E record without start is a job that never ran."""
    trace, _ = read(tmp_path, rec("Q", "7.s"), rec("E", "7.s", "user=alice end={} Exit_status=-1".format(T)))
    assert trace.jobs == [] and trace.stats.skipped == {"ended without starting (E record without start)": 1}


def test_still_queued_or_running_at_the_end_is_incomplete(tmp_path):
    """Q or S with no E by the end of the logs: counted as incomplete, left out."""
    trace, _ = read(tmp_path, rec("Q", "7.s"), rec("Q", "8.s"), rec("S", "8.s"))
    assert trace.jobs == [] and trace.stats.incomplete == 2


def test_array_subjobs_are_jobs_and_parent_is_not(tmp_path):
    """Parent 5[].s: Q and E, not a run; subjobs 5[1].s and 5[2].s: S and E, each a job."""
    trace, _ = read(tmp_path, rec("Q", "5[].s", "array_indices=1-2"), rec("S", "5[1].s"),
                    ended("5[1].s", T, T + 10), rec("S", "5[2].s"), ended("5[2].s", T, T + 20),
                    rec("E", "5[].s", "user=alice end={}".format(T + 20)))
    assert [job.job_id for job in trace.jobs] == ["5[1].s", "5[2].s"]
    assert trace.stats.array_subjobs == 2 and trace.stats.skipped == {} and trace.stats.incomplete == 0


def test_subjobs_are_submitted_with_their_parent(tmp_path):
    """Subjobs have no Q record: they arrive at the parent's Q, before a job queued just after it."""
    later = T + 100  # the subjobs started, and their E records say they were created, then
    trace, _ = read(tmp_path, rec("Q", "5[].s", "user=alice queue=workq ctime={} array_indices=1-2".format(T)),
                    rec("Q", "6.s", "user=bob queue=workq ctime={}".format(T)), rec("S", "6.s"),
                    rec("S", "5[2].s"), rec("S", "5[1].s"), ended("6.s", T, T + 300, user="bob"),
                    ended("5[2].s", later, later + 20, ctime=later), ended("5[1].s", later, later + 10, ctime=later),
                    rec("E", "5[].s", "user=alice end={}".format(later + 20)))
    assert [(job.job_id, job.submit_time) for job in trace.jobs] == [("5[1].s", T), ("5[2].s", T), ("6.s", T)]


def test_subjob_of_a_parent_not_in_the_logs_keeps_its_own_ctime(tmp_path):
    """Logs that begin after the array was queued: the subjob's E record is all there is."""
    trace, _ = read(tmp_path, ended("5[1].s", T + 100, T + 110, ctime=T + 50))
    assert [job.submit_time for job in trace.jobs] == [T + 50] and trace.stats.array_subjobs == 1


def test_brackets_that_are_not_an_index_make_a_plain_job(tmp_path):
    """3073070.[hostname_1] is a job id with brackets in it, not a job-array subjob."""
    trace, _ = read(tmp_path, rec("Q", "3073070.[hostname_1]"), ended("3073070.[hostname_1]", T, T + 10))
    assert [job.job_id for job in trace.jobs] == ["3073070.[hostname_1]"] and trace.stats.array_subjobs == 0


def test_array_none_of_whose_subjobs_ran_is_skipped(tmp_path):
    """A deleted array that never started is skipped, once."""
    trace, _ = read(tmp_path, rec("Q", "5[].s"), rec("E", "5[].s", "user=alice end={}".format(T)))
    assert trace.stats.skipped == {"job array none of whose subjobs ran": 1}


def test_rerun_job_is_one_job_from_its_last_run(tmp_path):
    """Q, S, R, S, E: one job, counted as rerun, its times from the E record."""
    trace, _ = read(tmp_path, rec("Q", "7.s"), rec("S", "7.s"), rec("R", "7.s"), rec("S", "7.s"),
                    ended("7.s", T + 60, T + 100))
    assert [(job.start_time, job.runtime_s) for job in trace.jobs] == [(T + 60, 40)] and trace.stats.reruns == 1


def test_second_end_record_of_a_job_replaces_the_first(tmp_path):
    """The later E of one job id wins, as in the ingester; counted."""
    trace, _ = read(tmp_path, ended("7.s", T, T + 10), ended("7.s", T, T + 30))
    assert [job.runtime_s for job in trace.jobs] == [30] and trace.stats.replaced == 1


def test_job_without_q_record_still_counts(tmp_path):
    """A log that starts mid-run: the E record alone is enough."""
    trace, _ = read(tmp_path, ended("7.s", T, T + 10))
    assert len(trace.jobs) == 1 and trace.stats.incomplete == 0


def test_submit_falls_back_to_qtime(tmp_path):
    """No ctime: the qtime is the submission."""
    trace, _ = read(tmp_path, ended("7.s", T + 5, T + 10, ctime=T, extra=" qtime={}".format(T - 5)).replace(
        "ctime={} ".format(T), ""))
    assert trace.jobs[0].submit_time == T - 5


@pytest.mark.parametrize("line, message", [
    ("garbage", "expected 'MM/DD/YYYY HH:MM:SS;T;ID;key=value ...'"),
    (ended("7.s", T, T + 10).replace("end=", "end=x"), "field end: not an integer: 'x{}'".format(T + 10)),
    (ended("7.s", T, T + 10, ctime=T + 5), "field start: before ctime ({} < {})".format(T, T + 5)),
    (ended("7.s", T, T + 10).replace("ctime={} ".format(T), ""), "field ctime: missing (and no qtime)"),
    (ended("7.s", T, T + 10).replace("Resource_List.ncpus=4 ", ""),
     "field Resource_List.ncpus: no ncpus, select or nodes resource, and no exec_vnode or exec_host"),
])
def test_malformed_line_reported_and_others_kept(tmp_path, line, message):
    """A bad line is reported as line number and field; the next job is still read."""
    trace, rejects = read(tmp_path, line, ended("8.s", T, T + 10))
    assert rejects == [(1, message)] and [job.job_id for job in trace.jobs] == ["8.s"]


def test_invalid_utf8_reported(tmp_path):
    """Bytes that are not UTF-8 reject the line, not the file."""
    path = tmp_path / "20260410"
    path.write_bytes(b"\xff\xfe;E;1.s;user=a\n" + ended("8.s", T, T + 10).encode() + b"\n")
    rejects = []
    trace = read_accounting([str(path)], ReadStats(), lambda *reject: rejects.append(reject))
    assert rejects == [(str(path), 1, "not valid UTF-8 (byte 0)")] and len(trace.jobs) == 1


def test_directory_reads_yyyymmdd_files_in_order(tmp_path):
    """A directory gives its YYYYMMDD (and .gz) files by name; other files are ignored and counted."""
    (tmp_path / "20260411").write_text(ended("2.s", T + 10, T + 20, ctime=T + 5) + "\n")
    with gzip.open(str(tmp_path / "20260410.gz"), "wt") as stream:
        stream.write(rec("Q", "2.s") + "\n" + ended("1.s", T, T + 10) + "\n")
    (tmp_path / "README").write_text("not a log\n")
    stats = ReadStats()
    trace = read_accounting([str(tmp_path)], stats, None)
    assert [job.job_id for job in trace.jobs] == ["1.s", "2.s"]
    assert (stats.files, stats.ignored_files, stats.incomplete) == (2, 1, 0)


def test_damaged_gzip_reported_and_earlier_lines_kept(tmp_path):
    """A truncated .gz: the lines before the damage are used, the damage is reported."""
    data = gzip.compress(("\n".join(ended("{}.s".format(i), T, T + 10) for i in range(200)) + "\n").encode())
    (tmp_path / "20260410.gz").write_bytes(data[:len(data) // 2])
    rejects = []
    trace = read_accounting([str(tmp_path / "20260410.gz")], ReadStats(), lambda *reject: rejects.append(reject))
    assert len(rejects) == 1 and "damaged compression" in rejects[0][2] and 0 < len(trace.jobs) < 200


def sample_job(**changes):
    values = dict(job_id="3.svr", user="u1", submit_time=100, runtime_s=50, walltime_s=3600, ncpus=8,
                  start_time=110, end_time=160, nodes=2, queue="q1", exit_status=0, group="g1")
    values.update(changes)
    return Job(**values)


def parsed(line):
    record = parse_record(line)
    return record.record_type, completed_job(record, parse_fields(record.body)) if record.record_type == "E" else None


def test_written_records_follow_openpbs_layout():
    """Q, S, E carry the fields of a real server's records, in its order."""
    job = sample_job()
    keys = {kind: [field.split("=")[0] for field in record_line(job, kind).split(";")[3].split()]
            for kind in record_kinds(job)}
    common = ["user", "group", "project", "jobname", "queue", "ctime", "qtime", "etime"]
    request = ["Resource_List.ncpus", "Resource_List.nodect", "Resource_List.place", "Resource_List.select",
               "Resource_List.walltime"]
    assert keys["Q"] == common + request
    assert keys["S"] == common + ["start"] + request + ["resource_assigned.ncpus"]
    assert keys["E"] == common + ["start"] + request + ["end", "Exit_status", "resources_used.ncpus",
                                                         "resources_used.walltime", "run_count"]


def test_written_end_record_parses_back_to_the_job():
    """The project's accounting parser (the ingester's) reads a written E record as the same job."""
    job = sample_job(soft_walltime_s=600)
    kind, done = parsed(record_line(job, "E", epoch=1000))
    assert kind == "E" and (done.job_id, done.user, done.group, done.queue) == ("3.svr", "u1", "g1", "q1")
    assert (done.submit_time, done.start_time, done.end_time) == (1100, 1110, 1160)
    assert (done.runtime_s, done.walltime_s, done.soft_walltime_s, done.ncpus) == (50, 3600, 600, 8)


def test_select_spreads_cpus_over_nodes():
    """9 cpus on 2 nodes: one chunk of 5 and one of 4."""
    line = record_line(sample_job(ncpus=9, nodes=2), "Q")
    assert "Resource_List.select=1:ncpus=5+1:ncpus=4" in line and "Resource_List.place=scatter" in line


def test_cancelled_job_gets_a_delete_record_before_its_end():
    """Killed by a signal (qdel of a running job): Q, S, D, E."""
    assert record_kinds(sample_job(exit_status=271)) == "QSDE" and record_kinds(sample_job()) == "QSE"


def test_written_timestamp_is_utc():
    """Timestamps do not depend on the machine's time zone."""
    assert record_line(sample_job(submit_time=0, start_time=0, end_time=0, runtime_s=0), "Q").startswith(
        "01/01/1970 00:00:00;Q;")


def test_queue_order_survives_a_job_that_never_ran(tmp_path):
    """At one submit time, jobs keep the order the log first mentions them, a skipped job in between or not."""
    trace, _ = read(tmp_path, rec("Q", "1.s"), rec("Q", "2.s"), rec("E", "1.s", "user=alice end={}".format(T)),
                    rec("Q", "3.s"), ended("3.s", T, T + 10), ended("2.s", T, T + 20))
    assert [job.job_id for job in trace.jobs] == ["2.s", "3.s"]



@st.composite
def runs(draw):
    """``(order, Job)`` runs as the reader adds them: few job ids (some end again), tied submit times and
    orders."""
    job = st.builds(Job, job_id=st.sampled_from(["1.s", "2.s", "3[1].s", "Ωmega.s"]),
                    user=st.sampled_from(["alice", "bob"]), submit_time=st.integers(0, 3),
                    runtime_s=st.integers(0, 5), walltime_s=st.one_of(st.none(), st.integers(1, 9)),
                    ncpus=st.integers(1, 4), start_time=st.integers(0, 9), end_time=st.integers(0, 9),
                    queue=st.one_of(st.none(), st.just("workq")), occupancy_s=st.one_of(st.none(), st.integers(0, 9)))
    return draw(st.lists(st.tuples(st.tuples(st.integers(0, 5), st.integers(-1, 2)), job), max_size=12))


def _with_huge_walltime(entries, at):
    return [(order, job._replace(walltime_s=2 ** 70) if number == at else job)
            for number, (order, job) in enumerate(entries)]


def _held(entries):
    held, stats = _Runs(), ReadStats()
    for order, job in entries:
        held.add(order, job)
    return list(held.jobs(stats)), stats.replaced


def _listed(entries):
    stats = ReadStats()
    return _listed_jobs(entries, stats), stats.replaced


@given(runs(), st.integers(0, 12))
def test_runs_held_as_columns_come_out_as_a_list_gives_them(entries, huge_at):
    """The later run of a job id replaces the earlier, then submission and first-record order, as a dict and a
    sort of ``Job`` tuples give them; a value beyond int64 keeps the runs as a list from there on, to the same
    end."""
    assert _held(entries) == _listed(entries)
    huge = _with_huge_walltime(entries, huge_at)
    assert _held(huge) == _listed(huge)
