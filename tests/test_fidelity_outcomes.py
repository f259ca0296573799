"""Outcomes real against simulated: start errors, waits, and the logs' reuse latency."""

from hypothesis import given
from hypothesis import strategies as st
from test_fidelity_records import e, q, read, s

from replay.fidelity.outcomes import compare_outcomes, median, relative_difference, reuse_latency_s


def test_start_errors_and_waits():
    """Errors are simulated - real starts; waits count from the eligible time; 2 s is within."""
    jobs = [("1", 0, 10), ("2", 5, 20), ("3", 0, 30)]
    out = compare_outcomes(jobs, {"1": 12, "2": 15, "3": 30})
    assert out.jobs == 3 and out.starts_within_2s == 2
    assert out.mean_abs_start_error_s == (2 + 5 + 0) / 3.0
    assert out.wait_mean_real_s == (10 + 15 + 30) / 3.0 and out.wait_mean_sim_s == (12 + 10 + 30) / 3.0
    assert out.wait_median_real_s == 15 and out.wait_median_sim_s == 12


def test_a_job_the_replay_never_started():
    """A job without a simulated start is counted apart, not in the figures."""
    out = compare_outcomes([("1", 0, 10), ("2", 0, 20)], {"1": 10})
    assert out.jobs == 1 and out.not_started_sim == 1 and out.wait_mean_real_s == 10


def test_no_jobs():
    """No job: counts of zero and no mean."""
    out = compare_outcomes([], {})
    assert out.jobs == 0 and out.mean_abs_start_error_s is None and out.wait_median_sim_s is None


@given(st.lists(st.integers(-1000, 1000), min_size=1))
def test_median_splits_the_values(values):
    """As many values lie at or below the median as at or above it."""
    middle = median(values)
    assert sum(1 for v in values if v <= middle) >= len(values) / 2.0
    assert sum(1 for v in values if v >= middle) >= len(values) / 2.0


def test_relative_difference():
    """(sim - real) / real; None for a real value of zero."""
    assert relative_difference(105, 100) == 0.05 and relative_difference(1, 0) is None


def test_reuse_latency_from_the_logs(tmp_path):
    """The gap between an end and the next start on its vnode by a job waiting then; others do not count."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100),
                             q("00:01", "2.s", 101, 101), e("00:10", "1.s", 100, 100, 100, 110),
                             s("00:12", "2.s", 101, 101, 112), e("00:20", "2.s", 101, 101, 112, 120),
                             q("00:30", "3.s", 130, 130), s("00:30", "3.s", 130, 130, 130)])
    assert reuse_latency_s(acc) == 2
