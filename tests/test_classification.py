"""Online small/large classification (Zrigui et al.): divider, features, weekly learning, quality."""

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from predictor.cmdline.tables import Report, write_text
from replay.classification import (
    FEATURE_NAMES,
    WEEK_S,
    Classification,
    Completion,
    LoggedJob,
    Quality,
    SizeClassifier,
    Submission,
    classify_log,
    divider_s,
    quality_of,
    true_classes,
)
from replay.classification.features import CategoryHistory, job_features
from replay.classification.table import classification_table, logged_jobs, with_classification
from replay.traces.trace import Job

WEEK = 100  # a short week keeps the hand computations readable
DAY = 86400


def submission(key, submit, user="alice", walltime=1000, ncpus=1):
    return Submission(key, submit, user, walltime, ncpus)


def test_divider_is_the_median_runtime():
    """Odd count: the middle runtime; even count: the mean of the two middle ones; none: no divider."""
    assert divider_s([30, 10, 20]) == 20
    assert divider_s([10, 20, 30, 1000]) == 25
    assert divider_s([]) is None


def test_weeks_are_seven_days():
    """The learning period is the paper's week."""
    assert WEEK_S == 7 * 86400


def test_first_week_is_large_without_a_divider():
    """Before any week has ended every job is large, with no divider."""
    classifier = SizeClassifier(0, WEEK)
    assert classifier.classify(submission(0, 0)) == Classification(False, None)
    classifier.observe(Completion(0, 10, 5))
    assert classifier.classify(submission(1, 99)) == Classification(False, None)


def test_divider_is_the_median_of_the_previous_week_only():
    """Week 1 is judged against week 0's median (20); week 2 against week 1's (150), not weeks 0 and 1."""
    classifier = SizeClassifier(0, WEEK)
    for key, runtime in enumerate([10, 20, 30]):
        classifier.classify(submission(key, key))
        classifier.observe(Completion(key, 50 + key, runtime))
    assert classifier.classify(submission(3, 100)).divider_s == 20
    classifier.classify(submission(4, 101))
    classifier.observe(Completion(3, 150, 100))
    classifier.observe(Completion(4, 160, 200))
    assert classifier.classify(submission(5, 170)).divider_s == 20  # this week's completions wait for its end
    assert classifier.classify(submission(6, 250)).divider_s == 150


def test_a_quiet_week_keeps_the_last_divider():
    """With no completion in the previous week the divider stays as it was."""
    classifier = SizeClassifier(0, WEEK)
    classifier.classify(submission(0, 0))
    classifier.observe(Completion(0, 10, 40))
    assert classifier.classify(submission(1, 350)).divider_s == 40  # weeks 1 and 2 had no completion


def test_a_completion_at_the_week_boundary_belongs_to_the_next_week():
    """A job ending at the very instant a week starts is learned at the end of that week."""
    classifier = SizeClassifier(0, WEEK)
    classifier.classify(submission(0, 0))
    classifier.classify(submission(1, 1))
    classifier.observe(Completion(0, 50, 10))
    classifier.observe(Completion(1, 100, 99))
    assert classifier.classify(submission(2, 100)).divider_s == 10
    assert classifier.classify(submission(3, 200)).divider_s == 99


def test_the_forest_learns_the_requested_walltime_that_tells_small_from_large():
    """Week 0: 1000 s requests ran 10 s, 5000 s requests ran 900 s (divider 455): week 1 follows the request."""
    classifier = SizeClassifier(0, WEEK)
    for key in range(8):
        walltime, runtime = (1000, 10) if key % 2 else (5000, 900)
        classifier.classify(submission(key, 0, user="u{}".format(key), walltime=walltime))
        classifier.observe(Completion(key, 50, runtime))
    assert classifier.classify(submission(8, 100, user="new", walltime=1000)) == Classification(True, 455)
    assert classifier.classify(submission(9, 100, user="new", walltime=5000)) == Classification(False, 455)


def test_features_count_only_the_known_jobs_of_each_category():
    """Lags: the last three known classes of a category in submission order; share: small among them."""
    history = CategoryHistory()
    monday = 4 * DAY  # 1970-01-05 was a Monday
    for key, (submit, walltime, ncpus, small) in enumerate([(monday + 30, 1000, 4, True), (monday + 10, 1000, 2, False),
                                                            (monday + 20, 500, 4, True),
                                                            (monday + 40, 1000, 4, False)]):
        history.add(submission(key, submit, walltime=walltime, ncpus=ncpus), small)
    history.add(submission(9, monday, user="bob", walltime=1000, ncpus=4), True)
    row = dict(zip(FEATURE_NAMES, job_features(submission(10, monday + 7 * DAY + 3600, walltime=1000, ncpus=4),
                                                history)))
    assert (row["walltime_s"], row["ncpus"], row["hour"], row["weekday"]) == (1000, 4, 1, 0)
    # walltime 1000, by submission: 10 s large, 30 s small, 40 s large; last first:
    assert [row["walltime_lag_{}".format(lag)] for lag in (1, 2, 3)] == [0, 1, 0]
    assert [row["ncpus_lag_{}".format(lag)] for lag in (1, 2, 3)] == [0, 1, 1]  # 40 s, 30 s, 20 s
    assert [row["weekday_lag_{}".format(lag)] for lag in (1, 2, 3)] == [0, 1, 1]  # Monday: 40, 30, 20 s
    assert (row["walltime_small_share"], row["ncpus_small_share"], row["weekday_small_share"]) == (1 / 3, 2 / 3, 0.5)
    new_user = dict(zip(FEATURE_NAMES, job_features(submission(11, monday, user="carol"), history)))
    assert new_user["walltime_lag_1"] == -1 and new_user["ncpus_small_share"] == -1


def logged(submit, end, runtime, user="alice", walltime=1000, ncpus=1):
    return LoggedJob(submit, end, user, walltime, ncpus, runtime)


@st.composite
def logs(draw):
    """A few weeks of jobs (week = ``WEEK``), with a pivot instant inside."""
    jobs = []
    for _ in range(draw(st.integers(5, 40))):
        submit = draw(st.integers(0, 5 * WEEK))
        runtime = draw(st.integers(0, 3 * WEEK))
        jobs.append(logged(submit, submit + draw(st.integers(0, 20)) + runtime, runtime,
                           user=draw(st.sampled_from(["alice", "bob", "carol"])),
                           walltime=draw(st.sampled_from([None, 30, 100, 300])), ncpus=draw(st.integers(1, 4))))
    return jobs, draw(st.integers(0, 5 * WEEK))


@given(logs(), st.data())
@settings(max_examples=150, deadline=None)
def test_no_look_ahead(case, data):
    """Changing the runtime or end of a job that ends after an instant never changes a classification
    made at or before it (the weekly mechanics; the quick numpy forest learns)."""
    jobs, pivot = case
    changed = [job._replace(runtime_s=data.draw(st.integers(0, 3 * WEEK)),
                            end_time=data.draw(st.integers(max(pivot + 1, job.submit_time), 10 * WEEK)))
               if job.end_time > pivot else job for job in jobs]
    before, after = classify_log(jobs, WEEK, learner="ours"), classify_log(changed, WEEK, learner="ours")
    assert [verdict for job, verdict in zip(jobs, before) if job.submit_time <= pivot] == \
        [verdict for job, verdict in zip(jobs, after) if job.submit_time <= pivot]


@given(logs())
@settings(max_examples=50, deadline=None)
def test_deterministic(case):
    """The same log gives the same classifications, run after run (our forest)."""
    jobs, _ = case
    assert classify_log(jobs, WEEK, learner="ours") == classify_log(list(jobs), WEEK, learner="ours")


@given(logs())
@settings(max_examples=8, deadline=None)
def test_deterministic_with_scikit_learn(case):
    """The same log gives the same classifications, run after run, with scikit-learn's seeded forest."""
    jobs, _ = case
    assert classify_log(jobs, WEEK) == classify_log(list(jobs), WEEK)


def test_completions_at_one_instant_learn_the_same_in_any_order():
    """Jobs ending together are folded in the same way whatever order they are told in."""
    decisions = []
    for order in ([0, 1, 2, 3], [3, 1, 2, 0]):
        classifier = SizeClassifier(0, WEEK)
        for key in range(4):
            classifier.classify(submission(key, key, walltime=100 * (key + 1)))
        for key in order:
            classifier.observe(Completion(key, 50, [5, 500, 7, 700][key]))
        decisions.append([classifier.classify(submission(4 + key, 100, walltime=100 * (key + 1)))
                          for key in range(4)])
    assert decisions[0] == decisions[1]


def test_quality_counts_each_class_against_its_true_class():
    """TS, FS, TL, FL against each job's true class; jobs without a divider or a true class are left out."""
    verdicts = [Classification(False, None), Classification(True, 20), Classification(True, 20),
                Classification(False, 20), Classification(False, 50), Classification(True, 50),
                Classification(True, 50)]
    quality = quality_of(verdicts, [True, True, False, False, True, True, None])
    assert quality == Quality(true_small=2, false_small=1, true_large=1, false_large=1)
    assert (quality.precision(), quality.recall(), quality.accuracy()) == (2 / 3, 2 / 3, 3 / 5)
    assert Quality(0, 0, 0, 0).precision() is None and Quality(0, 0, 3, 0).recall() is None


def test_true_class_is_judged_by_the_median_of_the_week_the_job_completed_in():
    """As the paper labels a week's jobs: week 0's completions (runtimes 10, 30, 50: median 30) and week 1's (100,
    300: median 200) each against their own week's median, not the divider in force at submission."""
    jobs = [logged(0, 10, 10), logged(0, 30, 30), logged(0, 50, 50), logged(WEEK // 2, WEEK + 50, 100),
            logged(WEEK, WEEK + 80, 300), logged(WEEK, None, 5)]
    assert true_classes(jobs, WEEK) == [True, False, False, True, False, None]


def test_classify_log_learns_a_job_ending_at_a_submission_instant():
    """A job that ends at the very second another is submitted is known to it (ends come first)."""
    jobs = [logged(0, 10, 10, user="a"), logged(10, 20, 10, user="b"), logged(WEEK, WEEK + 5, 5)]
    assert classify_log(jobs, WEEK)[2].divider_s == 10  # both week-0 completions, the one at 10 included


def trace_job(number, submit, runtime, walltime):
    return Job(str(number), "u{}".format(number % 3), submit, runtime, walltime, 1, start_time=submit,
               end_time=submit + runtime)


def test_table_row_and_legend():
    """One row of counts and ratios; the legend explains every header; the first week is not counted."""
    jobs = [trace_job(number, number * 60, 30 if number % 2 else 3000, 600 if number % 2 else 7200)
            for number in range(20)]
    jobs += [trace_job(100 + number, WEEK_S + number * 60, 30 if number % 2 else 3000, 600 if number % 2 else 7200)
             for number in range(10)]
    table = classification_table(jobs)
    row = dict(zip([column.key for column in table.columns], table.rows[0]))
    assert row["classified"] == 10 and row["small"] == 0.5 and row["divider_median_s"] == 1515
    assert (row["true_small"], row["false_small"], row["true_large"], row["false_large"]) == (5, 0, 5, 0)
    assert (row["precision"], row["recall"], row["accuracy"]) == (1.0, 1.0, 1.0)
    report = with_classification(Report("t", (), ()), jobs)
    text = io.StringIO()
    write_text(report, text)
    legend = text.getvalue().split("\nLegend:\n", 1)[1]
    named = {name for line in legend.splitlines() for name in line.strip().split(": ", 1)[0].split(", ")}
    assert {column.header for column in table.columns} <= named


def test_the_requested_processors_are_the_feature():
    """The classifier reads the processors the user asked for (SWF field 8), not the allocated ones (field 5)."""
    job = Job("1", "alice", 0, 10, 100, 4, start_time=0, end_time=10, requested_ncpus=8)
    assert logged_jobs([job])[0].ncpus == 8
    assert logged_jobs([job._replace(requested_ncpus=None)])[0].ncpus == 4
