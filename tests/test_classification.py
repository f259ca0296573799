"""Online small/large classification (Zrigui et al.): divider, rule and weekly learning, by hand."""

from replay.simulation.classification import (WEEK_S, Completion, LoggedJob, Quality, SizeClassifier,
                                              classification_quality, divider_s, predict_small)

WEEK = 100  # a short week keeps the hand computations readable


def done(end, runtime, user="alice", walltime=1000, width=1):
    return Completion(end, user, walltime, width, runtime)


def test_divider_is_the_median_runtime():
    """Odd count: the middle runtime; even count: the mean of the two middle ones; none: no divider."""
    assert divider_s([30, 10, 20]) == 20
    assert divider_s([10, 20, 30, 1000]) == 25
    assert divider_s([]) is None


def test_everything_is_large_without_a_divider():
    """Before a divider exists (the first week) every job is large."""
    assert not predict_small(1, 1, 1, None)


def test_a_walltime_below_the_divider_is_small():
    """A job that cannot run past the divider is small, even with a large history."""
    assert predict_small(19, 500, 500, 20)
    assert not predict_small(20, None, None, 20)


def test_the_last_job_of_the_same_requested_runtime_decides_first():
    """The (user, requested runtime) category's last runtime wins over the (user, width) one."""
    assert predict_small(1000, 5, 500, 20)
    assert not predict_small(1000, 500, 5, 20)
    assert not predict_small(1000, 20, None, 20)  # runtime equal to the divider: large


def test_the_width_category_is_the_fallback():
    """Without a job of the same requested runtime, the last one of the same width decides."""
    assert predict_small(None, None, 5, 20)
    assert not predict_small(None, None, None, 20)


def test_first_week_is_large_and_the_divider_comes_from_the_previous_week():
    """Week 1 uses week 0's median (20); week 2 uses week 1's (150), not weeks 0 and 1 together."""
    classifier = SizeClassifier(0, WEEK)
    for end, runtime in [(10, 10), (20, 20), (30, 30)]:
        classifier.observe(done(end, runtime))
    assert not classifier.is_small("alice", 1000, 1, 50)  # week 0: nothing learned yet
    assert not classifier.is_small("alice", 1000, 1, 100)  # week 1: divider 20, the last alice job ran 30
    assert classifier.divider == 20
    assert classifier.is_small("alice", 15, 1, 100)
    classifier.observe(done(150, 100))
    classifier.observe(done(160, 200))
    assert classifier.divider == 20  # this week's completions wait for the next week
    assert not classifier.is_small("alice", 1000, 1, 250)
    assert classifier.divider == 150  # median of 100 and 200; the last alice job ran 200


def test_current_week_completions_are_not_used():
    """A completion of the current week changes nothing until the week ends."""
    classifier = SizeClassifier(0, WEEK)
    classifier.observe(done(10, 50, user="bob", walltime=500))
    assert not classifier.is_small("alice", 1000, 1, 110)  # divider 50, alice has no history
    classifier.observe(done(120, 1, user="alice", walltime=1000))
    classifier.observe(done(130, 100, user="bob", walltime=500))
    assert not classifier.is_small("alice", 1000, 1, 140)
    assert classifier.is_small("alice", 1000, 1, 200)  # week 2: divider 50.5, its last job ran 1 s


def test_a_quiet_week_keeps_the_last_divider():
    """With no completion in the previous week the divider stays as it was."""
    classifier = SizeClassifier(0, WEEK)
    classifier.observe(done(10, 40))
    classifier.is_small("alice", 1000, 1, 100)
    assert classifier.divider == 40
    classifier.is_small("alice", 1000, 1, 350)  # weeks 1 and 2 had no completion
    assert classifier.divider == 40


def test_same_instant_completions_learn_the_same_in_any_order():
    """Two jobs of a category ending together: the longer counts as the last, whatever the order."""
    decisions = []
    for runtimes in ([5, 500], [500, 5]):
        classifier = SizeClassifier(0, WEEK)
        classifier.observe(done(1, 100, user="bob"))
        for runtime in runtimes:
            classifier.observe(done(50, runtime))
        decisions.append(classifier.is_small("alice", 1000, 1, 100))
    assert decisions == [False, False]  # divider 100 (median of 5, 100, 500); last alice job 500


def test_weeks_are_seven_days():
    """The learning period is the paper's week."""
    assert WEEK_S == 7 * 86400


def logged(submit, end, runtime, user="alice", walltime=1000):
    return LoggedJob(submit, end, user, walltime, 1, runtime)


def test_quality_counts_each_class_against_the_divider_at_submission():
    """Week 0 (divider 20 from 10, 20, 30) is not counted; then one of each: TS, FS, TL, FL."""
    jobs = [logged(0, 10, 10, user="a"), logged(1, 21, 20, user="b"), logged(2, 32, 30, user="c"),
            logged(100, 105, 5, user="a"),    # a's last ran 10: small, runs 5: true small
            logged(101, 200, 99, user="b"),   # b's last ran 20 = divider: large, but requested 15 -> small
            logged(102, 200, 50, user="c"),   # c's last ran 30: large, runs 50: true large
            logged(103, 200, 5, user="c")]    # large again, runs 5: false large
    jobs[4] = jobs[4]._replace(walltime_s=15, runtime_s=25)  # small by request, ran past the divider: false small
    quality = classification_quality(jobs, WEEK)
    assert quality == Quality(true_small=1, false_small=1, true_large=1, false_large=1)
    assert quality.precision() == 0.5 and quality.recall() == 0.5
