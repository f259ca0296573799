"""predictor.algorithms: v1, v2, v3 and their documented edge cases."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from predictor.algorithms import ALGORITHMS, make_algorithm, v1, v2, v3
from predictor.jobs import HistoryRow


def rows(*pairs):
    """History rows newest first from (runtime, walltime) pairs."""
    return [HistoryRow(1000 - index, str(index), runtime, walltime) for index, (runtime, walltime) in enumerate(pairs)]


history_rows = st.lists(
    st.builds(HistoryRow, st.integers(0, 10 ** 6), st.text(max_size=3), st.integers(0, 10 ** 7),
              st.one_of(st.none(), st.integers(0, 10 ** 7))),
    max_size=20,
)


def test_v1_averages_last_two_runtimes():
    """v1 is the mean of the two newest runtimes."""
    assert v1(rows((100, 1000), (300, 1000), (9999, 10000)), 7200) == 200


def test_v1_rounds_mean_up():
    """A fractional mean is rounded up, never down."""
    assert v1(rows((100, 1000), (101, 1000)), 7200) == 101


def test_v1_capped_by_walltime():
    """v1 never exceeds the requested walltime."""
    assert v1(rows((5000, 9000), (7000, 9000)), 3600) == 3600


def test_v2_adds_reserve():
    """v2 is v1 plus 900 s."""
    assert v2(rows((100, 1000), (300, 1000)), 7200) == 1100


def test_v3_scales_max_usage():
    """v3 is max(runtime/walltime) x walltime + 900."""
    history = rows((600, 3600), (1800, 3600), (100, 7200))
    assert v3(history, 7200) == 3600 + 900


def test_v3_rounds_scaled_value_up():
    """v3's scaled value is rounded up to whole seconds."""
    assert v3(rows((1, 3)), 10, reserve_s=0) == 4


def test_v3_window_is_last_fifteen_jobs():
    """A job older than the 15 newest does not count."""
    history = rows(*([(10, 1000)] * 15 + [(1000, 1000)]))
    assert v3(history, 1000, reserve_s=0) == 10


def test_v3_skips_rows_without_walltime():
    """Rows with walltime 0 or None give no ratio and no division error."""
    assert v3(rows((500, 0), (500, None), (100, 1000)), 2000, reserve_s=0) == 200


def test_v3_without_any_ratio_gives_walltime():
    """When no row in the window has a walltime, there is no usable history."""
    assert v3(rows((500, 0), (500, None)), 2000) == 2000


def test_v3_killed_job_ratio_above_one_is_capped():
    """A job that ran past its walltime yields at most the walltime."""
    assert v3(rows((1100, 1000)), 5000) == 5000


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_no_history_gives_walltime(name):
    """Every algorithm returns the walltime when the user has no history."""
    assert ALGORITHMS[name]([], 5400) == 5400


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@pytest.mark.parametrize("walltime", [None, 0, -5])
def test_no_walltime_gives_no_soft_walltime(name, walltime):
    """A job without a (positive) walltime gets no soft walltime."""
    assert ALGORITHMS[name](rows((100, 1000)), walltime) is None


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_zero_runtimes_give_one_second(name):
    """PBS rejects soft_walltime 0: the floor is 1 s."""
    assert make_algorithm(name, reserve_s=0 if name == "v1" else 0).predict(rows((0, 1000), (0, 1000)), 600) == 1


@given(history_rows, st.integers(1, 10 ** 7), st.sampled_from(sorted(ALGORITHMS)))
def test_prediction_within_one_and_walltime(history, walltime, name):
    """Every prediction is an int in [1, walltime]."""
    soft = ALGORITHMS[name](history, walltime)
    assert isinstance(soft, int) and 1 <= soft <= walltime


@given(history_rows, st.integers(1, 10 ** 7))
def test_v2_never_below_v1(history, walltime):
    """The reserve can only raise the estimate."""
    assert v2(history, walltime) >= v1(history, walltime)


@given(history_rows, st.integers(1, 10 ** 7), st.sampled_from(sorted(ALGORITHMS)))
def test_algorithm_object_matches_function(history, walltime, name):
    """make_algorithm with defaults predicts like the bare function."""
    assert make_algorithm(name).predict(history, walltime) == ALGORITHMS[name](history, walltime)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"name": "v9"}, "unknown algorithm"),
    ({"name": "v3", "window": 0}, "window"),
    ({"name": "v3", "window": True}, "window"),
    ({"name": "v2", "reserve_s": -1}, "reserve_s"),
    ({"name": "v1", "reserve_s": 900}, "v1 has no reserve"),
])
def test_make_algorithm_rejects_bad_parameters(kwargs, fragment):
    """Bad parameters are refused with a message naming them."""
    with pytest.raises(ValueError, match=fragment):
        make_algorithm(**kwargs)
