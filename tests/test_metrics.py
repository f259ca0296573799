"""replay.accuracy.metrics: the accuracy figures of seeds 000, 001 and 003."""

import numpy as np
import pytest

from replay.accuracy.metrics import accuracy_report, eq3_accuracy, error_metrics, users_improved, warmup_count
from replay.accuracy.predictions import replay_accuracy
from replay.shared.predictors import PREDICTORS
from replay.traces.trace import Job


def arrays(*values):
    return [np.array(value, dtype=np.int64) for value in values]


@pytest.mark.parametrize("runtime, predicted, expected", [
    (50, 100, 0.5), (100, 50, 0.5), (70, 70, 1.0), (0, 0, 1.0), (0, 10, 0.0), (10, 0, 0.0)])
def test_eq3_accuracy(runtime, predicted, expected):
    """Seed 001 eq. 3: Tact/Test under, Test/Tact over, 1 when equal."""
    assert eq3_accuracy(*arrays([runtime], [predicted])).tolist() == [expected]


def test_error_metrics_hand_computed():
    """Four jobs, one without prediction: shares over the three predicted, errors and accuracy by hand."""
    runtime, predicted, walltime = arrays([100, 100, 5000, 10], [50, 200, 3000, -1], [400, 400, 9000, 20])
    jobs, none, under, not_adjusted, ue, be, mean_error, median_error, accuracy_mean, accuracy_median = \
        error_metrics(runtime, predicted, walltime)
    assert (jobs, none, under, not_adjusted, ue, be) == (4, 0.25, 2 / 3, 0.0, 1 / 3, 1 / 3)
    assert (mean_error, median_error) == (pytest.approx(2150 / 3), 100.0)
    assert (accuracy_mean, accuracy_median) == (pytest.approx((0.5 + 0.5 + 0.6) / 3), 0.5)


def test_exactly_thirty_minutes_under_is_not_bad():
    """Badly underestimated means more than 30 min under (seed 001 BE); exactly 30 min is UE."""
    assert error_metrics(*arrays([2000, 2000], [200, 199], [3600, 3600]))[4:6] == (0.5, 0.5)


def test_tang_categories_leave_unadjusted_overruns_apart():
    """Tang et al.'s categories: a job given its own walltime is NA even when it ran past it (it is under, not UE
    or BE); the adjusted ones are UE within 30 min under, BE beyond. Four jobs: NA over, NA, UE, BE."""
    runtime, predicted, walltime = arrays([5000, 100, 1000, 9000], [3600, 3600, 900, 1000], [3600, 3600, 3600, 9000])
    assert error_metrics(runtime, predicted, walltime)[2:6] == (0.75, 0.5, 0.25, 0.25)


def test_job_at_the_truncated_mean_is_not_underestimated():
    """After runtimes 100 and 101 (v1: 100.5 truncated to 100) a 100 s job is not under-estimated, a 101 s one is."""
    jobs = [Job(str(index), "alice", start, runtime, 1000, 1, start, start + runtime)
            for index, (start, runtime) in enumerate([(0, 100), (0, 101), (200, 100), (200, 101)])]
    predicted = replay_accuracy(jobs, [PREDICTORS["v1"]]).at("start", "v1")[2:]
    assert predicted.tolist() == [100, 100]
    assert error_metrics(*arrays([100, 101], predicted, [1000, 1000]))[2] == 0.5


def test_no_prediction_at_all_gives_none_statistics():
    """Without a single prediction every statistic is None, the none share 1."""
    assert error_metrics(*arrays([10, 20], [-1, -1], [5, 5])) == (2, 1.0) + (None,) * 8


def test_warmup_count_floors():
    """1 % of 1000 jobs is 10; of 50 jobs, none; fractions outside [0, 1) are refused."""
    assert (warmup_count(1000, 0.01), warmup_count(50, 0.01)) == (10, 0)
    with pytest.raises(ValueError):
        warmup_count(10, 1.0)


def test_users_better_and_worse_than_their_walltimes():
    """User 0 improves, user 1 is equal, user 2 is worse: one third each way (seed 003 Fig. 6)."""
    codes, runtime, predicted, walltime = arrays([0, 0, 1, 2], [10, 10, 10, 10], [11, 12, 50, 90], [20, 20, 50, 60])
    assert users_improved(codes, runtime, predicted, walltime) == (3, 1 / 3, 1 / 3)


def test_users_without_walltime_are_not_compared():
    """A job with no walltime has nothing to compare with."""
    codes, runtime, predicted, walltime = arrays([0, 1], [10, 10], [11, 12], [-1, 20])
    assert users_improved(codes, runtime, predicted, walltime)[0] == 1


def jobs_in(queues):
    return [Job(str(index), "alice", index, 100, 1000, 1, index, index + 100, queue=queue)
            for index, queue in enumerate(queues)]


def report_for(jobs, warmup=0.0):
    names = ("user", "v1")
    return accuracy_report("t", (), jobs, replay_accuracy(jobs, [PREDICTORS[name] for name in names]), warmup)


def test_report_tables_and_rows():
    """Summary, runtime classes and queues; a row per predictor and instant (and group)."""
    report = report_for(jobs_in(["a", "b", "a"]))
    tables = {table.key: table for table in report.tables}
    assert list(tables) == ["summary", "by_runtime_class", "by_queue"]
    assert [row[:2] for row in tables["summary"].rows] == [("user", "submit"), ("user", "start"),
                                                            ("v1", "submit"), ("v1", "start")]
    assert len(tables["by_runtime_class"].rows) == 4 * 3 and len(tables["by_queue"].rows) == 4 * 2


def test_single_queue_has_no_queue_table():
    """One queue only: the by-queue table would repeat the summary; a note says so."""
    report = report_for(jobs_in([None, None]))
    assert [table.key for table in report.tables] == ["summary", "by_runtime_class"]
    assert "one queue (-): no by-queue table" in report.notes


def test_warmup_jobs_left_out_of_counts():
    """With a 50 % warm-up, the first half of the jobs is not counted."""
    summary = report_for(jobs_in(["a"] * 4), warmup=0.5).tables[0]
    assert [row[2] for row in summary.rows] == [2, 2, 2, 2]


def test_user_predictor_not_compared_with_itself():
    """The per-user comparison of the walltime with itself is left empty."""
    summary = report_for(jobs_in(["a"] * 4)).tables[0]
    assert summary.rows[0][-3:] == (None, None, None)
