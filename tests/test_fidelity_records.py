"""Accounting logs read for the fidelity check: jobs as the scheduler knew them, and when."""

from replay.fidelity.records import read_records

HEAD = "user=ana group=g1 project=_pbs_project_default jobname=STDIN queue=workq"
REQUEST = "Resource_List.ncpus=2 Resource_List.nodect=1 Resource_List.place=pack Resource_List.select=1:ncpus=2"


def line(clock, kind, job, body):
    return "11/26/2026 10:{};{};{};{}".format(clock, kind, job, body)


def q(clock, job, ctime, etime, extra=""):
    return line(clock, "Q", job, "{} ctime={} qtime={} etime={} {} Resource_List.walltime=00:10:00 {}".format(
        HEAD, ctime, ctime, etime, REQUEST, extra))


def s(clock, job, ctime, etime, start, vnode="(n1:ncpus=2)"):
    return line(clock, "S", job, "{} ctime={} qtime={} etime={} start={} exec_vnode={} {}".format(
        HEAD, ctime, ctime, etime, start, vnode, REQUEST))


def e(clock, job, ctime, etime, start, end, vnode="(n1:ncpus=2)"):
    return line(clock, "E", job, "{} ctime={} qtime={} etime={} start={} exec_vnode={} {} end={} Exit_status=0 "
                "resources_used.walltime=00:00:05".format(HEAD, ctime, ctime, etime, start, vnode, REQUEST, end))


def read(tmp_path, lines):
    path = tmp_path / "20261126"
    path.write_text("\n".join(lines) + "\n")
    rejected = []
    accounting = read_records([str(path)], lambda p, n, m: rejected.append((n, m)))
    return accounting, rejected


def test_a_job_queued_run_and_ended(tmp_path):
    """Q, S and E give the job's request, its eligible time, its run and its occupancy end - start."""
    acc, rejected = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:01", "1.s", 100, 100, 101),
                                    e("00:09", "1.s", 100, 100, 101, 109)])
    assert rejected == []
    (record,) = acc.jobs
    assert record.job.eligible_time == 100 and record.job.runtime_s == 8 and record.job.walltime_s == 600
    assert record.job.chunks[0].amount("ncpus") == 2 and record.job.place.arrangement == "pack"
    assert record.runs[0].allocation == (("n1", (("ncpus", 2),)),)
    assert [start.name for start in acc.starts] == ["1.s"]


def test_held_job_is_eligible_at_its_release(tmp_path):
    """A job submitted held (etime=0 in its Q) becomes eligible at the etime its S record states."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 0), s("00:30", "1.s", 100, 130, 131),
                             e("00:40", "1.s", 100, 130, 131, 140)])
    record = acc.jobs[0]
    assert record.job.eligible_time == 130
    assert not record.queued_at(record.runs[0].start_order, 129)
    assert record.queued_at(record.runs[0].start_order, 130)


def test_alteration_applies_from_its_record_on(tmp_path):
    """A manager's qalter of soft_walltime counts from its 'a' record; UNSET removes it."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 0),
                             line("00:01", "a", "1.s", "Resource_List.soft_walltime=00:05:00"),
                             line("00:02", "a", "1.s", "Resource_List.soft_walltime=UNSET"),
                             s("00:30", "1.s", 100, 130, 131)])
    record = acc.jobs[0]
    assert record.job_at(2).soft_walltime_s is None
    assert record.job_at(3).soft_walltime_s == 300
    assert record.job_at(3).resource("soft_walltime") == 300
    assert record.job_at(4).soft_walltime_s is None


def test_deleted_while_queued_leaves_the_queue(tmp_path):
    """A job deleted before it ran waits in the queue until its D record, and never runs."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), line("00:05", "D", "1.s", "requestor=ana@h"),
                             q("00:06", "2.s", 106, 106)])
    record = acc.jobs[0]
    assert record.queued_at(2, 105) and not record.queued_at(3, 106)
    assert record.runs == ()


def test_array_subjobs_queue_at_their_parents_place(tmp_path):
    """Subjobs have no Q record: they sort at the parent's Q, by index, before jobs queued after it."""
    acc, _ = read(tmp_path, [q("00:00", "7[].s", 100, 100, "array_indices=1-2"), q("00:00", "8.s", 100, 100),
                             s("00:01", "7[2].s", 100, 100, 101), s("00:01", "7[1].s", 100, 100, 101)])
    assert [record.job.name for record in acc.jobs] == ["7[1].s", "7[2].s", "8.s"]
    assert acc.jobs[0].queued_at(3, 101)


def test_job_running_before_the_logs(tmp_path):
    """A job whose E is its first record ran from before the logs: running until then, never queued."""
    acc, _ = read(tmp_path, [q("00:00", "2.s", 100, 100), e("00:09", "1.s", 50, 50, 60, 109)])
    record = acc.by_name()["1.s"]
    assert record.run_at(1) is not None and record.run_at(3) is None and not record.queued_at(1, 100)
    assert acc.starts == ()


def test_bad_line_is_reported_and_skipped(tmp_path):
    """A malformed line or request is reported with its line number; the rest is read."""
    acc, rejected = read(tmp_path, ["garbage", q("00:00", "1.s", 100, 100, "Resource_List.place=sideways"),
                                    q("00:01", "2.s", 101, 101)])
    assert [number for number, _ in rejected] == [1, 2]
    assert [record.job.name for record in acc.jobs] == ["2.s"]
    assert acc.stats.rejected == 2


def test_rerun_waits_between_its_runs(tmp_path):
    """A rerun job (R) is queued again until its next S."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:01", "1.s", 100, 100, 101),
                             line("00:05", "R", "1.s", "end=105 start=101"), s("00:08", "1.s", 100, 100, 108),
                             e("00:09", "1.s", 100, 100, 108, 109)])
    record = acc.jobs[0]
    assert len(record.runs) == 2 and record.queued_at(4, 106) and not record.queued_at(6, 109)


def test_account_and_project(tmp_path):
    """The account (Account_Name, quoted in the logs) and the project are the job's."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100, 'account="lab one"')])
    assert acc.jobs[0].job.account == "lab one" and acc.jobs[0].job.project == "_pbs_project_default"


def test_a_run_is_exiting_once_its_process_ended(tmp_path):
    """From start + resources_used.walltime until its E record, a job is exiting."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100),
                             e("00:07", "1.s", 100, 100, 100, 107)])
    run = acc.jobs[0].runs[0]
    assert run.used_s == 5 and not run.exiting_at(104) and run.exiting_at(105)


def test_held_job_whose_q_states_its_qtime(tmp_path):
    """A held job whose Q record gives etime = qtime is eligible at the later etime of its S record."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:30", "1.s", 100, 130, 131)])
    assert acc.jobs[0].job.eligible_time == 130


def test_cpu_load_from_the_e_record(tmp_path):
    """A job's CPU load is its E record's cput over ncpus * walltime: 2 ncpus busy 5 s with 5 s of cput is
    a load of 0.5; without cput it is taken as fully busy."""
    ended = e("00:10", "1.s", 100, 100, 100, 106).replace("resources_used.walltime", "resources_used.cput=00:00:05 "
                                                                                         "resources_used.walltime")
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100), ended,
                             q("00:00", "2.s", 100, 100), s("00:00", "2.s", 100, 100, 100),
                             e("00:10", "2.s", 100, 100, 100, 106)])
    assert [record.job.cpu_load for record in acc.jobs] == [0.5, 1.0]
