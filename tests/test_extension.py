"""Soft-walltime extension rules: the plan sequences and their closed-form counts."""

from hypothesis import given
from hypothesis import strategies as st

from replay.simulation.extension import EXTENSIONS, double_planned, pbs_planned


def plans(rule, soft, walltime, runtime):
    """Every plan a job running ``runtime`` seconds goes through, stepping one extension at a time."""
    seen = [rule.planned(soft, walltime, 0)]
    while seen[-1] < min(runtime, walltime):
        seen.append(rule.planned(soft, walltime, seen[-1]))
    return seen


def test_pbs_grows_by_the_original_soft_walltime_up_to_the_walltime():
    """pbs: S, 2S, 3S ... then the walltime."""
    assert plans(EXTENSIONS["pbs"], 70, 300, 1000) == [70, 140, 210, 280, 300]


def test_double_doubles_up_to_the_walltime():
    """double: S, 2S, 4S ... then the walltime."""
    assert plans(EXTENSIONS["double"], 70, 300, 1000) == [70, 140, 280, 300]


def test_plan_before_the_soft_walltime_is_the_soft_walltime():
    """A job that has not outlived S is planned S."""
    assert pbs_planned(100, 500, 99) == 100 and double_planned(100, 500, 99) == 100


def test_plan_at_exactly_the_soft_walltime_is_extended():
    """At elapsed == S the job has outlived its plan: the next one is 2S."""
    assert pbs_planned(100, 500, 100) == 200 and double_planned(100, 500, 100) == 200


@given(st.sampled_from(sorted(EXTENSIONS)), st.integers(1, 500), st.integers(1, 5000), st.integers(0, 6000))
def test_count_is_the_number_of_plans_outlived(name, soft, walltime, runtime):
    """The closed-form count equals the extensions made stepping through the plans."""
    soft = min(soft, walltime)
    rule = EXTENSIONS[name]
    assert rule.count(soft, walltime, runtime) == len(plans(rule, soft, walltime, runtime)) - 1


def test_simple_adds_an_hour_at_each_limit():
    """Rubio et al.'s simple: S, S + 1 h, S + 2 h ... then the walltime."""
    simple = EXTENSIONS["simple"]
    assert [simple.planned(600, 9000, elapsed) for elapsed in (599, 600, 4199, 4200, 7800)] == [
        600, 4200, 4200, 7800, 9000]
    assert simple.count(600, 9000, 10000) == 3 and simple.count(600, 9000, 600) == 0


def test_power_adds_fifteen_minutes_doubling():
    """Rubio et al.'s power: at the i-th correction 15 x 2**(i-2) minutes more: S, S + 15 min, S + 45 min,
    S + 105 min ... each time the job reaches its limit."""
    power = EXTENSIONS["power"]
    assert [power.planned(600, 10 ** 6, elapsed) for elapsed in (599, 600, 1499, 1500, 3300, 6900)] == [
        600, 1500, 1500, 3300, 6900, 14100]
    assert power.count(600, 10 ** 6, 3301) == 3


@given(st.sampled_from(sorted(EXTENSIONS)), st.integers(1, 5000), st.integers(1, 5000))
def test_plan_at_the_start_is_the_soft_walltime_capped_at_the_walltime(name, soft, walltime):
    """Every rule plans a job that has not run yet its soft walltime, at most its walltime (the engine's start
    relies on it)."""
    assert EXTENSIONS[name].planned(soft, walltime, 0) == min(soft, walltime)


@given(st.sampled_from(sorted(EXTENSIONS)), st.integers(1, 500), st.integers(1, 5000), st.integers(0, 4999))
def test_plan_is_beyond_elapsed_until_the_walltime(name, soft, walltime, elapsed):
    """While a job may still run (elapsed < walltime), its plan lies ahead of it and within the walltime."""
    soft = min(soft, walltime)
    elapsed = min(elapsed, walltime - 1)
    assert elapsed < EXTENSIONS[name].planned(soft, walltime, elapsed) <= walltime
