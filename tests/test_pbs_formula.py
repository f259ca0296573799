"""job_sort_formula as OpenPBS 23.06's scheduler evaluates it (formula_evaluate)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.formula import (
    SPECIAL_NAMES,
    SchedulerCrash,
    as_printed,
    compile_formula,
    formula_values,
    job_value,
    stored,
    under_threshold,
)
from replay.pbs.jobs import PbsJob
from replay.pbs.policy import QueuePolicy, SchedulingPolicy
from replay.pbs.resources import Place, parse_select


def job(select="1:ncpus=4:mem=1048576kb", walltime=3600, eligible=100, priority=0, queue="workq", resources=()):
    return PbsJob(0, "1.svr", "u", "g", "p", queue, parse_select(select), Place(), walltime, None, 0, eligible,
                  priority=priority, resources=resources)


@pytest.mark.parametrize("text", ["__import__('os')", "a.b", "'x'", "lambda: 1", "a[0]", "open('f')", "True",
                                  "1 +", "[1]", "f(x=1)", "sqrt(x=1)", "(yield)"])
def test_rejects_what_a_formula_cannot_hold(text):
    """Attributes, strings, subscripts, unknown calls and bad syntax are a ValueError at compile time."""
    with pytest.raises(ValueError):
        compile_formula(text)


def test_python3_arithmetic():
    """/ is true division, // and % floor, ** power, as in the scheduler's Python 3."""
    values = {"ncpus": 3, "walltime": 7}
    assert compile_formula("ncpus/2")(values) == 1.5
    assert compile_formula("walltime//ncpus")(values) == 2
    assert compile_formula("-walltime % ncpus")(values) == 2
    assert compile_formula("ncpus**2 - 1")(values) == 8


def test_math_functions_and_builtins():
    """math's functions and constants and abs/min/max/round are available."""
    values = {"ncpus": 16, "mem": 3}
    assert compile_formula("sqrt(ncpus) + floor(log(8, 2))")(values) == 7
    assert compile_formula("max(ncpus, mem) - min(ncpus, mem) + abs(-1)")(values) == 14
    assert compile_formula("ceil(pi)")(values) == 4


def test_math_names_win_over_resources():
    """A resource named like a math constant gets math's value, as in the scheduler's interpreter."""
    assert compile_formula("e")({"e": 5}) == math.e


def test_unrequested_resource_is_zero():
    """A resource the job did not request counts 0."""
    assert compile_formula("ngpus * 10 + 1")({}) == 1


def test_errors_give_zero():
    """Division by zero, a math domain error or an overflow gives the job 0."""
    for text in ("1/ncpus", "sqrt(-1 - ncpus)", "exp(1000 + ncpus)", "sqrt + 1"):
        assert compile_formula(text)({"ncpus": 0}) == 0.0


def test_a_complex_result_is_a_scheduler_crash():
    """A complex result crashed a real 23.06 scheduler: SchedulerCrash, not a made-up value."""
    with pytest.raises(SchedulerCrash, match="not a real number"):
        compile_formula("(ncpus - 2) ** 0.5")({"ncpus": 1})


def test_comparisons_and_conditionals():
    """Comparisons and conditionals are Python's: True counts 1."""
    assert compile_formula("(queue_priority > 10) * 100 + (1 if ncpus >= 4 else 2)")(
        {"queue_priority": 20, "ncpus": 4}) == 101


def test_values_printed_as_pbs_prints_them():
    """Whole amounts are ints, others keep at most four decimals (fairshare values six)."""
    assert as_printed(4.0) == 4 and isinstance(as_printed(4.0), int)
    assert as_printed(1 / 3) == 0.3333
    assert as_printed(1 / 3, 6) == 0.333333


@given(st.floats(0, 1e6))
def test_printing_changes_a_value_by_at_most_a_thousandth(value):
    """The decimal text PBS builds is within 0.001 of the amount."""
    assert abs(as_printed(value) - value) <= 0.001 + value * 1e-12


def test_formula_values_names():
    """Every built-in resource and special name is offered; unrequested resources are 0."""
    policy = SchedulingPolicy(queues=(QueuePolicy("workq", priority=7),))
    values = formula_values(policy, job(priority=5), now=1000)
    assert set(SPECIAL_NAMES) <= set(values)
    assert values["ncpus"] == 4 and values["mem"] == 1048576 and values["walltime"] == 3600
    assert values["vmem"] == 0 and values["queue_priority"] == 7 and values["job_priority"] == 5
    assert values["eligible_time"] == 0 and values["fairshare_perc"] == 0


def test_eligible_time_when_enabled():
    """With eligible_time_enable, eligible_time is the time waited since etime and accrue_type 2."""
    policy = SchedulingPolicy(eligible_time_enable=True)
    values = formula_values(policy, job(eligible=100), now=1000)
    assert values["eligible_time"] == 900 and values["accrue_type"] == 2


def test_job_wide_resources_win_over_chunk_sums():
    """A custom numeric Resource_List amount is a formula name."""
    values = formula_values(SchedulingPolicy(), job(resources=(("ngpus", 2), ("ncpus", 8))), now=0)
    assert values["ngpus"] == 2 and values["ncpus"] == 8


def test_stored_in_single_precision():
    """Values closer than single precision can tell apart tie once stored."""
    formula = compile_formula("walltime")
    policy = SchedulingPolicy()
    first = job_value(policy, formula, job(walltime=100000001), now=0)
    second = job_value(policy, formula, job(walltime=100000002), now=0)
    assert first == second == stored(100000001.0)


@given(st.floats(allow_nan=False))
def test_stored_is_idempotent(value):
    """Rounding to single precision twice changes nothing."""
    assert stored(stored(value)) == stored(value)


def test_threshold():
    """Without a threshold every job may run; with one, values at or below it may not."""
    assert not under_threshold(SchedulingPolicy(), -1e30)
    policy = SchedulingPolicy(job_sort_formula_threshold=10.0)
    assert under_threshold(policy, 10.0) and not under_threshold(policy, 10.5)


_LEAVES = st.one_of(st.integers(-1000, 1000).map(str), st.floats(-1e3, 1e3).map(repr),
                    st.sampled_from(["ncpus", "mem", "walltime", "unset_resource", "pi"]))


def _combine(children):
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%"]), children).map(
        lambda t: "({} {} {})".format(*t))
    power = st.tuples(children, st.sampled_from(["0", "2", "0.5", "-1"])).map(lambda t: "({} ** {})".format(*t))
    calls = st.tuples(st.sampled_from(["sqrt", "log", "exp", "abs", "max", "floor"]), children).map(
        lambda t: "{}({})".format(*t) if t[0] != "max" else "max({1}, 0)".format(*t))
    return st.one_of(binary, power, calls, children.map("-{}".format))


@given(st.recursive(_LEAVES, _combine, max_leaves=6), st.integers(0, 64))
def test_evaluation_never_raises(text, ncpus):
    """Any allowed formula evaluates to a float, or is a SchedulerCrash (a complex result)."""
    try:
        result = compile_formula(text)({"ncpus": ncpus, "mem": 1024, "walltime": 60})
    except SchedulerCrash:
        return
    assert isinstance(result, float)
