"""replay.shared.performance_model: runtime classes of bounded error, and the users drawn to adopt the tool."""

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from replay.shared.performance_model import PerformanceModel, drawn_users, runtime_classes
from replay.shared.predictors import resolve
from replay.traces.trace import Job

TEN_PCT = Fraction(1, 10)


def test_classes_by_hand():
    """10 %: from the top down, 100 alone; 20 and 21 (1 <= 2); 11 and 12 (1 <= 1.1); 10 alone (2 > 1)."""
    assert runtime_classes([10, 11, 12, 20, 21, 100], TEN_PCT) == {100: 100, 21: 21, 20: 21, 12: 12, 11: 12, 10: 10}


def test_zero_error_is_the_runtime_and_zero_runtime_its_own_class():
    """No error: every runtime is its own estimate; a 0 s runtime is never put with longer ones."""
    assert runtime_classes([0, 5, 7], Fraction(0)) == {0: 0, 5: 5, 7: 7}
    assert runtime_classes([0, 1], Fraction(100)) == {0: 0, 1: 1}


@given(st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=60),
       st.fractions(min_value=0, max_value=3, max_denominator=100))
def test_estimates_are_never_short_and_within_the_error(runtimes, error):
    """Each estimate is a runtime of the trace, at least the job's, at most (1 + error) times it."""
    estimates = runtime_classes(runtimes, error)
    for runtime in runtimes:
        assert estimates[runtime] in runtimes
        assert runtime <= estimates[runtime] <= runtime + error * runtime


@given(st.integers(0, 2 ** 32), st.integers(1, 40))
def test_larger_adoption_adds_users_to_a_smaller_one(seed, count):
    """For one seed, the users drawn at 20 % are among those drawn at 50 %, and the count is rounded."""
    users = ["u{}".format(number) for number in range(count)]
    fifth, half = (drawn_users(users, share, seed) for share in (Fraction(1, 5), Fraction(1, 2)))
    assert fifth <= half
    assert len(fifth) == int(count / 5 + 0.5)


def test_drawn_users_do_not_depend_on_the_order_of_the_jobs():
    """The trace's users are sorted before the draw: the same set of users, the same adopters."""
    users = ["u{}".format(number) for number in range(30)]
    assert drawn_users(users, TEN_PCT, 7) == drawn_users(users[::-1], TEN_PCT, 7)


def test_adopters_get_the_class_estimate_others_their_walltime():
    """An adopter's job: its class's estimate, capped at its walltime; the others': their walltime; no walltime:
    none."""
    jobs = [Job("1", "alice", 0, 100, 1000, 1), Job("2", "alice", 0, 105, 100, 1), Job("3", "bob", 0, 100, 1000, 1),
            Job("4", "alice", 0, 100, None, 1)]
    estimates = PerformanceModel(TEN_PCT, Fraction(1, 2), seed=0)(jobs)
    adopter = next(iter(estimates.adopters))
    other = ({"alice", "bob"} - {adopter}).pop()
    mine = [job._replace(user=adopter) for job in jobs]
    assert [estimates.estimate(job, 0) for job in mine] == [105, 100, 105, None]
    assert estimates.estimate(jobs[0]._replace(user=other), 0) == 1000


def test_spec_parameters():
    """``model:error=E:adoption=A:seed=N`` sets the three; bad values are refused by name."""
    model = resolve("model:error=0.25:adoption=0.5:seed=3").learner
    assert (model.error, model.adoption, model.seed) == (Fraction(1, 4), Fraction(1, 2), 3)
    defaults = resolve("model").learner
    assert (defaults.error, defaults.adoption, defaults.seed) == (TEN_PCT, Fraction(1, 5), 0)
