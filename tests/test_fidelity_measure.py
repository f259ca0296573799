"""The server against itself: a second recording of the same workload measured as the model is."""

import pytest
from test_fidelity_records import e, q, read, s

from replay.fidelity.measure import repeat_outcomes
from replay.shared.errors import TraceError

QUEUED = "Job Queued at request of ana@pbshost, owner = ana@pbshost, job name = STDIN, queue = workq"
"""A server's log line: a job submitted (qsub)."""


def _recording(folder, first_id, shift, waits, runtime=10):
    """Jobs queued and eligible one second apart from ``shift``, each waiting ``waits[i]`` seconds."""
    folder.mkdir()
    lines = []
    for number, wait in enumerate(waits):
        job, eligible = "{}.s".format(first_id + number), shift + number
        lines += [q("00:00", job, eligible, eligible), s("00:01", job, eligible, eligible, eligible + wait),
                  e("00:02", job, eligible, eligible, eligible + wait, eligible + wait + runtime)]
    return read(folder, lines)[0]


def test_a_job_start_error_is_the_difference_of_its_waits(tmp_path):
    """Other job ids and another clock: each job is matched by its place, its error is its wait's change."""
    first = _recording(tmp_path / "one", 1, 100, [0, 4, 10])
    second = _recording(tmp_path / "two", 70, 5000, [1, 7, 10])
    out = repeat_outcomes(first, second)
    assert out.jobs == 3 and out.starts_within_2s == 2 and out.not_started_sim == 0
    assert out.mean_abs_start_error_s == (1 + 3 + 0) / 3.0
    assert out.wait_mean_real_s == 14 / 3.0 and out.wait_mean_sim_s == 18 / 3.0
    assert out.wait_median_real_s == 4 and out.wait_median_sim_s == 7


def test_a_recording_against_itself(tmp_path):
    """A recording compared with itself: every start within 2 s, no error, the same waits."""
    first = _recording(tmp_path / "one", 1, 100, [0, 4, 10, 3])
    out = repeat_outcomes(first, first)
    assert out.starts_within_2s == out.jobs == 4 and out.mean_abs_start_error_s == 0
    assert out.wait_mean_real_s == out.wait_mean_sim_s and out.wait_median_real_s == out.wait_median_sim_s


def test_another_workload_is_refused(tmp_path):
    """Another number of jobs, or a job asking for something else at the same place, is not a repeat."""
    first = _recording(tmp_path / "one", 1, 100, [0, 4])
    with pytest.raises(TraceError, match="2 jobs against 3"):
        repeat_outcomes(first, _recording(tmp_path / "two", 1, 100, [0, 4, 1]))
    other = tmp_path / "three"
    other.mkdir()
    lines = [q("00:00", "1.s", 100, 100), s("00:01", "1.s", 100, 100, 100), e("00:02", "1.s", 100, 100, 100, 110),
             q("00:00", "2.s", 101, 101).replace("user=ana", "user=bob"), s("00:01", "2.s", 101, 101, 101),
             e("00:02", "2.s", 101, 101, 101, 111)]
    with pytest.raises(TraceError, match="job 2 in submission order is 2.s .ana. against 2.s .bob."):
        repeat_outcomes(first, read(other, lines)[0])


def test_a_job_holds_its_vnodes_until_the_server_logged_its_finish(tmp_path):
    """Job 1.s's E record ends it at 110, but the server's log finishes it ("Exit_status") at 111, and the cycle
    that starts job 2.s on its cpus comes after that line: given the log, the whole-run replay starts 2.s at 111,
    as the server did; from the accounting log alone, at 110."""
    from test_fidelity_server_usage import server_line

    from replay.fidelity.machine import site_model
    from replay.fidelity.measure import replay_outcomes
    from replay.fidelity.server_log import read_server_log
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100),
                             q("00:01", "2.s", 101, 101), e("00:10", "1.s", 100, 100, 100, 110),
                             s("00:11", "2.s", 101, 101, 111), e("00:16", "2.s", 101, 101, 111, 116)])
    run = "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=2)"
    lines = [(100, None, "Scheduler sent command 1"), (100, "1.s", run), (101, None, "Scheduler sent command 1"),
             (111, "1.s", "Exit_status=0"), (111, None, "Scheduler sent command 2"), (111, "2.s", run),
             (116, "2.s", "Exit_status=0")]
    path = tmp_path / "server.log"
    path.write_text("".join(server_line(second, job, message, 3600) + "\n" for second, job, message in lines))
    log = read_server_log([str(path)], lambda *reject: None)
    site = site_model(None, acc)
    replayed = {job.name: start for job, _, start in replay_outcomes(acc, site)[2]}
    given_log = {job.name: start for job, _, start in replay_outcomes(acc, site, server_log=log)[2]}
    assert replayed["2.s"] == 110 and given_log["2.s"] == 111


def direct_second(tmp_path, submitted_first):
    """Job 1.s (2 cpus, n1's two) ends at 110; in that second 3.s (2 cpus) is submitted, not held, while 2.s
    (1 cpu, queued since 101) waits. The Q record of 3.s comes before or after the E record of 1.s, and the
    starts that followed are what the server did."""
    one = "(n1:ncpus=1)"
    ended = e("00:10", "1.s", 100, 100, 100, 110)
    queued = q("00:10", "3.s", 110, 110)
    lines = [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100),
             q("00:01", "2.s", 101, 101).replace("ncpus=2", "ncpus=1")]
    lines += [queued, ended] if submitted_first else [ended, queued]
    if submitted_first:
        lines += [s("00:10", "3.s", 110, 110, 110), e("00:15", "3.s", 110, 110, 110, 115),
                  s("00:15", "2.s", 101, 101, 115, one), e("00:20", "2.s", 101, 101, 115, 120, one)]
    else:
        lines += [s("00:10", "2.s", 101, 101, 110, one), e("00:15", "2.s", 101, 101, 110, 115, one),
                  s("00:15", "3.s", 110, 110, 115), e("00:20", "3.s", 110, 110, 115, 120)]
    return read(tmp_path, lines)[0]


@pytest.mark.parametrize("submitted_first", [True, False])
def test_a_submission_and_an_end_of_one_second_go_in_the_accounting_logs_order(tmp_path, submitted_first):
    """A job submitted without a hold becomes eligible at its Q record, which the server writes as it queues it,
    as it writes an E record as it finishes a job: their order says which it took first, and so whether the cycle
    that saw 1.s's cpus free had 3.s queued. The jobs sorted by ncpus (job_sort_formula), 3.s then goes first and
    takes both cpus; with the end first, that cycle starts 2.s alone and 3.s waits for it. The replay follows the
    records' order (a held job's release, which has no record, goes before the ends of its second)."""
    from replay.fidelity.machine import site_model
    from replay.fidelity.measure import replay_outcomes
    from replay.pbs.policy import SchedulingPolicy
    acc = direct_second(tmp_path, submitted_first)
    site = site_model(None, acc)._replace(policy=SchedulingPolicy(job_sort_formula="ncpus"))
    starts = {job.name: start for job, _, start in replay_outcomes(acc, site)[2]}
    assert starts == ({"1.s": 100, "2.s": 115, "3.s": 110} if submitted_first else
                      {"1.s": 100, "2.s": 110, "3.s": 115})


def test_given_the_servers_log_a_submission_is_eligible_at_its_queued_line(tmp_path):
    """Given the server's log, a job submitted without a hold becomes eligible at its "Job Queued" line: here after
    1.s's "Exit_status" line and the cycle it asked for, so 2.s takes the freed cpu first, as the server did. A log
    without that line leaves the submission before the end (as a release, which the accounting log cannot place)."""
    from test_fidelity_server_usage import server_line

    from replay.fidelity.machine import site_model
    from replay.fidelity.measure import replay_outcomes
    from replay.fidelity.server_log import read_server_log
    from replay.pbs.policy import SchedulingPolicy
    acc = direct_second(tmp_path, submitted_first=False)
    site = site_model(None, acc)._replace(policy=SchedulingPolicy(job_sort_formula="ncpus"))
    run = "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=2)"
    lines = [(100, "1.s", QUEUED),
             (100, None, "Scheduler sent command 1"), (100, "1.s", run),
             (110, "1.s", "Exit_status=0"), (110, None, "Scheduler sent command 2"), (110, "2.s", run),
             (110, "3.s", QUEUED),
             (110, None, "Scheduler sent command 1"), (115, "2.s", "Exit_status=0"),
             (115, None, "Scheduler sent command 2"), (115, "3.s", run), (120, "3.s", "Exit_status=0")]
    starts = {}
    for kept in (lines, [line for line in lines if not line[2].startswith("Job Queued")]):
        path = tmp_path / "server.log"
        path.write_text("".join(server_line(*line) + "\n" for line in kept))
        log = read_server_log([str(path)], lambda *reject: None)
        starts[len(kept)] = {job.name: start for job, _, start in replay_outcomes(acc, site, server_log=log)[2]}
    assert starts[len(lines)] == {"1.s": 100, "2.s": 110, "3.s": 115}
    assert starts[len(lines) - 2]["3.s"] == 110


def test_a_start_is_confirmed_from_the_first_submission_or_end_after_its_s_record(tmp_path):
    """The server writes a job's S record once its execution host confirmed the start; its own log has no line for
    that. The first Q or E record after the S record that the server's log has too ("Job Queued", "Exit_status")
    places the confirmation there: 1.s's before 2.s was queued, 2.s's before 1.s was finished; a job that never
    started has none."""
    from test_fidelity_server_usage import server_line

    from replay.fidelity.measure import _confirmations
    from replay.fidelity.server_log import read_server_log
    one = "(n1:ncpus=1)"
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100, one),
                             q("00:00", "2.s", 100, 100), q("00:00", "3.s", 100, 100),
                             s("00:00", "2.s", 100, 100, 100, one), e("00:05", "1.s", 100, 100, 100, 105, one)])
    lines = [(100, "1.s", QUEUED), (100, "2.s", QUEUED), (100, "3.s", QUEUED), (105, "1.s", "Exit_status=0")]
    path = tmp_path / "server.log"
    path.write_text("".join(server_line(*line) + "\n" for line in lines))
    log = read_server_log([str(path)], lambda *reject: None)
    assert _confirmations(acc, log) == {"1.s": log.queued["2.s"], "2.s": log.finished["1.s"]}
