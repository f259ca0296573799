"""predictor.algorithms: v1, v2, v3 and their documented edge cases."""

from fractions import Fraction
from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from predictor.algorithms import ALGORITHMS, TANG_KEYS, make_algorithm, tang, v1, v2, v3, v3_deployed
from predictor.jobs import HistoryRow

user_tang = partial(tang, key="user")
"""tang with the key user: the mechanics tests below need no project."""


def rows(*pairs):
    """History rows newest first from (runtime, walltime) pairs."""
    return [HistoryRow(1000 - index, str(index), runtime, walltime) for index, (runtime, walltime) in enumerate(pairs)]


history_rows = st.lists(
    st.builds(HistoryRow, st.integers(0, 10 ** 6), st.text(max_size=3), st.integers(0, 10 ** 7),
              st.one_of(st.none(), st.integers(0, 10 ** 7))),
    max_size=20,
)

long_histories = st.lists(
    st.builds(HistoryRow, st.integers(0, 10 ** 6), st.text(max_size=3), st.integers(0, 10 ** 4),
              st.one_of(st.none(), st.just(0), st.integers(10 ** 4, 10 ** 6))),
    min_size=16, max_size=30,
)
"""Histories longer than v3's window of 15, often with rows lacking a walltime.

Ratios stay at most 1, so the walltime cap does not hide which rows were used."""


def legal(seconds, walltime):
    """The expected clamp, written out: at least 1 s, at most the walltime."""
    return walltime if seconds > walltime else max(seconds, 1)


def test_v1_averages_last_two_runtimes():
    """v1 is the mean of the two newest runtimes."""
    assert v1(rows((100, 1000), (300, 1000), (9999, 10000)), 7200) == 200


def test_v1_truncates_mean():
    """A fractional mean is truncated to whole seconds, as the paper's SQL AVG then whole seconds."""
    assert v1(rows((101, 1000), (100, 1000)), 7200) == 100


def test_v1_job_at_truncated_mean_is_not_underestimated():
    """After runtimes 100 and 101 (mean 100.5) the prediction 100 covers a 100 s job but not a 101 s one."""
    predicted = v1(rows((101, 1000), (100, 1000)), 7200)
    assert not predicted < 100 and predicted < 101


def test_v2_adds_reserve_to_truncated_mean():
    """v2 truncates the mean, then adds the reserve: 100.5 gives 100 + 900."""
    assert v2(rows((101, 1000), (100, 1000)), 7200) == 1000


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


def test_v3_truncates_scaled_value():
    """v3's scaled value is int(walltime x ratio): 10 x 1/3 gives 3, not 4."""
    assert v3(rows((1, 3)), 10, reserve_s=0) == 3


def test_v3_scaled_value_exact_when_whole():
    """A whole product is not truncated one second short by a rounded ratio (decimal 0.333..., float 0.7)."""
    assert v3(rows((1, 3)), 3, reserve_s=0) == 1
    assert v3(rows((7, 10)), 90, reserve_s=0) == 63


def test_v3_truncates_before_reserve():
    """The reserve is added to the truncated scaled value: int(10000 x 2/3) + 900."""
    assert v3(rows((2, 3)), 10000, reserve_s=900) == 6666 + 900


def test_v3_window_is_last_fifteen_jobs():
    """A job older than the 15 newest does not count."""
    history = rows(*([(10, 1000)] * 15 + [(1000, 1000)]))
    assert v3(history, 1000, reserve_s=0) == 10


def test_v3_window_counts_rows_without_walltime():
    """Rows without a walltime use up places in the 15: the older, higher ratio does not slip in."""
    history = rows(*([(10, 1000)] * 10 + [(500, None), (500, 0)] * 2 + [(10, 1000)] + [(1000, 1000)] * 5))
    assert v3(history, 1000, reserve_s=0) == 10


def test_v3_window_without_any_walltime_ignores_older_rows():
    """When none of the 15 newest has a walltime, older rows that have one are still not used."""
    history = rows(*([(500, None)] * 8 + [(500, 0)] * 7 + [(10, 1000)]))
    assert v3(history, 5000) == 5000


@given(long_histories, st.integers(1, 10 ** 7))
def test_v3_ignores_rows_older_than_the_window(history, walltime):
    """Only the 15 newest rows count, whatever they hold."""
    assert v3(history, walltime) == v3(history[:15], walltime)


@given(long_histories, st.integers(1, 10 ** 7))
def test_v3_is_the_truncated_exact_scaled_ratio(history, walltime):
    """v3 is int(max ratio of the 15 newest rows with a walltime x walltime) + 900, in [1, walltime]."""
    ratios = [Fraction(row.runtime_s, row.walltime_s) for row in history[:15] if row.walltime_s]
    expected = legal(int(max(ratios) * walltime) + 900, walltime) if ratios else walltime
    assert v3(history, walltime) == expected


@given(history_rows, st.integers(1, 10 ** 7))
def test_v1_v2_are_the_truncated_exact_mean(history, walltime):
    """v1 is int(exact mean of the two newest runtimes), v2 that plus 900, both in [1, walltime]."""
    runtimes = [row.runtime_s for row in history[:2]]
    mean = int(Fraction(sum(runtimes), len(runtimes))) if runtimes else None
    assert v1(history, walltime) == (walltime if mean is None else legal(mean, walltime))
    assert v2(history, walltime) == (walltime if mean is None else legal(mean + 900, walltime))


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


@pytest.mark.parametrize("name, reserve_s, expected", [
    ("v1", 0, 1),      # mean 0: PBS rejects soft_walltime 0, so 1 s
    ("v2", 0, 1),
    ("v3", 0, 1),      # ratio 0 x 600 = 0: 1 s
    ("v2", 60, 60),    # 0 + 60: the 1 s floor applies to the sum, not before the reserve
    ("v3", 60, 60),
    ("v2", 900, 600),  # 0 + 900 is above the walltime: capped at 600
])
def test_zero_runtimes_give_reserve_at_least_one_second(name, reserve_s, expected):
    """Zero runtimes predict the reserve, floored at 1 s and capped at the walltime."""
    algorithm = make_algorithm(name, reserve_s=reserve_s)
    assert algorithm.predict(rows((0, 1000), (0, 1000)), 600) == expected


@given(history_rows, st.integers(1, 10 ** 7), st.sampled_from(sorted(ALGORITHMS)))
def test_prediction_within_one_and_walltime(history, walltime, name):
    """Every prediction is an int in [1, walltime]; or none from v3-deployed, when the walltime scaled by every
    ratio of the window is under a second (the production hook sets none then)."""
    soft = ALGORITHMS[name](history, walltime)
    if soft is None:
        assert name == "v3-deployed"
        assert all(row.runtime_s * walltime // row.walltime_s == 0 for row in history[:15] if row.walltime_s)
        return
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


def test_v3_deployed_doubles_scaled_walltime_above_one_day():
    """Walltime 48 h after a 1/4 ratio: int(172800 x 1/4) = 43200, doubled 86400, + 900."""
    assert v3_deployed(rows((900, 3600)), 172800) == 86400 + 900


def test_v3_deployed_sets_nothing_when_the_scaled_walltime_is_zero():
    """Production tests int(walltime x ratio) for truth: ratio 1/7200 of a 3600 s walltime is 0.5, truncated to 0:
    no soft walltime (v3 gives the 900 s reserve); a scaled 1 s gets the reserve as v3 does."""
    history = rows((1, 7200))
    assert (v3_deployed(history, 3600), v3(history, 3600)) == (None, 900)
    assert v3_deployed(history, 7200) == v3(history, 7200) == 901


def test_v3_deployed_is_v3_up_to_one_day():
    """At exactly 24 h nothing is doubled: 86400 x 1/4 + 900, as v3."""
    history = rows((900, 3600))
    assert v3_deployed(history, 86400) == v3(history, 86400) == 21600 + 900


def test_v3_deployed_doubled_value_capped_at_walltime():
    """A ratio of 3/5 doubled exceeds the walltime: capped at it."""
    assert v3_deployed(rows((3000, 5000)), 100000) == 100000


@given(history_rows, st.integers(1, 10 ** 7))
def test_v3_deployed_never_below_v3(history, walltime):
    """Doubling can only raise v3's estimate; where v3-deployed sets one at all."""
    deployed = v3_deployed(history, walltime)
    assert deployed is None or deployed >= v3(history, walltime)


def ended(*triples):
    """History rows newest first from (end_time, runtime, walltime) triples."""
    return [HistoryRow(end, str(index), runtime, walltime) for index, (end, runtime, walltime) in enumerate(triples)]


TEN_RATIOS = rows(*[(100 * tenth, 1000) for tenth in range(1, 11)])
"""Ten past jobs using 0.1, 0.2, ..., 1.0 of their walltimes."""


def test_tang_nearest_rank_percentile():
    """85th percentile of ten ratios: the ceil(8.5) = 9th smallest, 0.9; x 7200 = 6480."""
    assert user_tang(TEN_RATIOS, 7200) == 6480


def test_tang_percentile_rank_rounds_up():
    """80th of ten is the 8th smallest (0.8), 81st the 9th (0.9)."""
    assert (user_tang(TEN_RATIOS, 1000, percentile=80), user_tang(TEN_RATIOS, 1000, percentile=81)) == (800, 900)


def test_tang_too_little_history_leaves_walltime():
    """Nine eligible jobs are fewer than the default ten: no adjustment."""
    assert user_tang(TEN_RATIOS[:9], 7200) == 7200
    assert user_tang(TEN_RATIOS[:9], 7200, min_history=9, percentile=100) == 6480


def test_tang_time_window_counts_back_from_submission():
    """Submitted at day 31, a 30-day window keeps jobs ended at day 1 or later, not day 0."""
    day = 86400
    history = ended((31 * day - 5, 500, 1000), (day, 250, 1000), (day - 1, 1000, 1000))
    assert user_tang(history, 4000, submit_time=31 * day, percentile=100, min_history=2) == 2000
    assert user_tang(history, 4000, submit_time=31 * day + 1, percentile=100, min_history=2) == 4000  # one left


def test_tang_ratio_above_one_counts_as_one():
    """A killed job that ran 1200 s of 1000 has R = 1: the walltime, not more."""
    assert user_tang(rows((1200, 1000), (100, 1000)), 3000, percentile=100, min_history=1) == 3000


def test_tang_key_user_walltime_keeps_same_walltime_only():
    """Key user+walltime: only past jobs that asked for 3600 s count (0.25), not the 7200 s one (0.75)."""
    history = rows((900, 3600), (5400, 7200), (900, 3600))
    assert tang(history, 3600, percentile=100, min_history=2, key="user+walltime") == 900
    assert user_tang(history, 3600, percentile=100, min_history=2) == 2700


def test_tang_skips_rows_without_walltime():
    """Rows with walltime 0 or unknown give no R and do not count towards the minimum."""
    assert user_tang(rows((500, 0), (500, None), (250, 1000)), 4000, percentile=50, min_history=2) == 4000
    assert user_tang(rows((500, 0), (500, None), (250, 1000)), 4000, percentile=50, min_history=1) == 1000


def test_tang_truncates_and_adds_reserve():
    """R = 1/3 of walltime 10 is 3 s (truncated), plus a reserve of 5."""
    assert user_tang(rows((1, 3)), 10, min_history=1, reserve_s=5) == 8


def keyed(*rows_):
    """History rows newest first from (runtime, walltime, project) triples."""
    return [HistoryRow(1000 - index, str(index), runtime, walltime, project)
            for index, (runtime, walltime, project) in enumerate(rows_)]


MIXED = keyed((100, 1000, "a"), (200, 1000, "b"), (300, 2000, "a"), (400, 1000, "a"), (900, 2000, "b"))
"""Five past jobs of one user: R 0.1 (a, 1000 s), 0.2 (b, 1000 s), 0.15 (a, 2000 s), 0.4 (a, 1000 s),
0.45 (b, 2000 s)."""


def test_tang_default_key_is_the_triple_key():
    """By default only jobs of the same project and walltime count: project a, 1000 s: R 0.1 and 0.4."""
    assert tang(MIXED, 1000, project="a", percentile=50, min_history=2) == 100
    assert tang(MIXED, 1000, project="a", percentile=100, min_history=2) == 400
    assert tang(MIXED, 1000, project="a", percentile=100, min_history=3) == 1000  # two similar jobs only


def test_tang_double_key_is_user_and_project():
    """Key user+project: project a's jobs whatever their walltime: R 0.1, 0.15, 0.4; the median is 0.15."""
    assert tang(MIXED, 1000, project="a", percentile=50, min_history=3, key="user+project") == 150


def test_tang_user_key_reads_every_project():
    """Key user: all five jobs; the 60th percentile is the 3rd smallest, 0.2."""
    assert tang(MIXED, 1000, project="a", percentile=60, min_history=5, key="user") == 200


def test_tang_project_key_ignores_the_walltime():
    """Key project (the history holds the project's jobs, every user's): project a's R 0.1, 0.15, 0.4."""
    assert tang(MIXED, 1000, project="a", percentile=100, min_history=3, key="project") == 400


def test_tang_job_without_project_matches_rows_without_one():
    """A job without a project is similar to past jobs without one, not to the others."""
    history = keyed((100, 1000, None), (500, 1000, "a"))
    assert tang(history, 1000, percentile=100, min_history=1) == 100


def test_tang_lower_bound_on_the_ratio():
    """min_ratio_pct=50 (the paper's threshold): A = 0.1 becomes 0.5; A above it is kept."""
    history = rows(*[(100, 1000)] * 10)
    assert tang(history, 7200, key="user") == 720
    assert tang(history, 7200, key="user", min_ratio_pct=50) == 3600
    assert tang(TEN_RATIOS, 7200, key="user", min_ratio_pct=50) == 6480


def test_tang_reads_every_job_in_the_window():
    """1,500 eligible jobs: the newest 1,000 used 0.1, the older 500 all of their walltime. The 85th
    percentile is the ceil(1275)-th smallest, 1.0: the walltime (the newest 1,000 alone would give 0.1)."""
    history = [HistoryRow(10 ** 6 - index, str(index), 100 if index < 1000 else 1000, 1000, "p")
               for index in range(1500)]
    assert tang(history, 1000, submit_time=10 ** 6 + 1, project="p") == 1000
    assert tang(history[:1000], 1000, submit_time=10 ** 6 + 1, project="p") == 100


def test_tang_refuses_a_row_limit():
    """tang has no row limit to set: it reads every job in its time window."""
    with pytest.raises(ValueError, match="window"):
        make_algorithm("tang", window=1000)


@given(history_rows, st.integers(1, 10 ** 7), st.integers(1, 100), st.integers(1, 100), st.integers(0, 3),
       st.sampled_from(TANG_KEYS))
def test_tang_within_walltime_and_monotone_in_percentile(history, walltime, low, high, min_history, key):
    """tang is in [1, walltime] and never decreases as the percentile rises."""
    low, high = sorted((low, high))
    lower = tang(history, walltime, percentile=low, min_history=min_history, key=key)
    higher = tang(history, walltime, percentile=high, min_history=min_history, key=key)
    assert 1 <= lower <= higher <= walltime


@given(history_rows, st.integers(1, 10 ** 7), st.integers(0, 10 ** 6))
def test_tang_object_reads_time_window(history, walltime, submit_time):
    """make_algorithm("tang").predict with a submission time is the function with it."""
    algorithm = make_algorithm("tang", min_history=1)
    assert algorithm.predict(history, walltime, submit_time) == tang(history, walltime, submit_time, min_history=1)
