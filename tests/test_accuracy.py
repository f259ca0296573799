"""replay.accuracy.predictions: predictions at submission and start from the history completed before."""

import numpy as np
import pytest
from hypothesis import given
from strategies import replay_jobs

from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow
from replay.accuracy.predictions import NO_PREDICTION, event_order, job_table, replay_accuracy
from replay.shared.predictors import PREDICTORS, ReplayPredictor
from replay.traces.trace import Job

NAMES = ("user", "v1", "v2", "v3", "recorded")
REGISTRY = [PREDICTORS[name] for name in NAMES]


def job(job_id, user, submit, start, runtime, walltime, **extra):
    return Job(job_id, user, submit, runtime, walltime, 1, start, start + runtime, **extra)


# Hand-computed: see the expectations below.
GOLDEN = [
    job("1", "alice", 0, 0, 1000, 3600),
    job("4", "bob", 100, 100, 4900, None),
    job("2", "alice", 500, 1000, 600, 3600),
    job("3", "alice", 1200, 1700, 300, 7200),
    job("5", "bob", 5000, 5000, 100, 600),
]
N = None
GOLDEN_SUBMIT = [  # user, v1, v2, v3, recorded
    (3600, 3600, 3600, 3600, N),   # alice has no history yet: the walltime
    (N, N, N, N, N),               # no walltime, no soft walltime
    (3600, 3600, 3600, 3600, N),   # job 1 still running at 500
    (7200, 1000, 1900, 2900, N),   # history [1]: v1 1000, v2 +900, v3 int(1000/3600*7200)+900
    (600, 600, 600, 600, N),       # bob's job 4 ends at 5000: not *before* 5000, so no history
]
GOLDEN_START = [
    (3600, 3600, 3600, 3600, N),
    (N, N, N, N, N),
    (3600, 3600, 3600, 3600, N),   # starts at 1000 when job 1 ends at 1000: tie rule, not seen
    (7200, 800, 1700, 2900, N),    # history [2, 1]: v1 int(1600/2), v2 +900, v3 max ratio 1000/3600
    (600, 600, 600, 600, N),
]


def as_tuples(values):
    return [tuple(None if value == NO_PREDICTION else value for value in row) for row in values.tolist()]


def test_golden_predictions_at_submit():
    """Hand-computed queuejob-time predictions of every predictor."""
    predictions = replay_accuracy(GOLDEN, REGISTRY)
    assert as_tuples(predictions.values[0]) == GOLDEN_SUBMIT


def test_golden_predictions_at_start():
    """Hand-computed runjob-time predictions of every predictor."""
    predictions = replay_accuracy(GOLDEN, REGISTRY)
    assert as_tuples(predictions.values[1]) == GOLDEN_START


def test_tie_rule_job_ending_at_the_instant_is_not_seen():
    """A job ending at t is in the history of a job starting at t + 1, not of one starting at t."""
    first = job("1", "alice", 0, 0, 100, 1000)
    at_end = replay_accuracy([first, job("2", "alice", 0, 100, 5, 1000)], [PREDICTORS["v1"]])
    after_end = replay_accuracy([first, job("2", "alice", 0, 101, 5, 1000)], [PREDICTORS["v1"]])
    assert at_end.at("start", "v1")[1] == 1000 and after_end.at("start", "v1")[1] == 100


def test_recorded_soft_walltime_is_reported():
    """The ``recorded`` predictor gives the soft walltime written in the log."""
    predictions = replay_accuracy([job("1", "alice", 0, 0, 10, 100, soft_walltime_s=42)], [PREDICTORS["recorded"]])
    assert predictions.at("submit", "recorded").tolist() == [42]


def test_history_free_predictor_gets_no_history():
    """A window-0 predictor is called with an empty history, once per job."""
    calls = []
    spy = ReplayPredictor("spy", 0, lambda history, job: calls.append(list(history)) or 7)
    replay_accuracy(GOLDEN, [spy])
    assert calls == [[]] * len(GOLDEN)


def test_times_out_of_order_are_refused():
    """A job starting before its submission is a ValueError naming the job."""
    with pytest.raises(ValueError, match="job 9"):
        replay_accuracy([Job("9", "alice", 10, 5, 100, 1, 5, 10)], REGISTRY)


def test_job_without_recorded_times_is_refused():
    """The accuracy replay needs recorded start and end times."""
    with pytest.raises(ValueError, match="start_time"):
        replay_accuracy([Job("9", "alice", 10, 5, 100, 1)], REGISTRY)


def test_events_sorted_with_predictions_before_completions():
    """At one instant: submissions, then starts, then ends; then by job."""
    jobs = [job("1", "a", 0, 5, 5, 10), job("2", "a", 10, 10, 0, 10)]
    kinds, indexes = event_order(jobs)
    assert list(zip(kinds.tolist(), indexes.tolist())) == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]


def _newest_end_spy():
    """Encodes what it was given: (1 + newest end) * 100 + rows; checks every row is the job's user's."""
    def estimate(history, job):
        assert all(row.job_id.startswith(job.user + ":") for row in history)
        return (1 + max((row.end_time for row in history), default=-1)) * 100 + len(history)
    return ReplayPredictor("spy", 15, estimate)


def _with_user_ids(jobs):
    return [j._replace(job_id="{}:{}".format(j.user, j.job_id)) for j in jobs]


@given(replay_jobs())
def test_never_given_a_job_completed_after_the_instant(jobs):
    """Each prediction sees exactly the user's jobs ended strictly before its instant, never later ones."""
    jobs = _with_user_ids(jobs)
    predictions = replay_accuracy(jobs, [_newest_end_spy()])
    for instant, field in (("submit", "submit_time"), ("start", "start_time")):
        for value, current in zip(predictions.at(instant, "spy").tolist(), jobs):
            ended = [other.end_time for other in jobs
                     if other.user == current.user and other.end_time < getattr(current, field)]
            assert value == (1 + max(ended, default=-1)) * 100 + min(len(ended), 15)


def _reference(jobs, predictor, instant_field):
    """Without events or caches: a fresh store of the jobs ended before each instant."""
    values = []
    for current in jobs:
        store = MemoryHistory(15)
        for other in jobs:
            if other.user == current.user and other.end_time < getattr(current, instant_field):
                store.add_row(other.user, HistoryRow(other.end_time, other.job_id, other.runtime_s, other.walltime_s))
        value = predictor.estimate(store.recent(current.user, 15) if predictor.window else (), current)
        values.append(NO_PREDICTION if value is None else value)
    return values


@given(replay_jobs())
def test_cached_replay_equals_the_plain_computation(jobs):
    """The event walk with its per-user cache gives exactly the registry functions' values."""
    predictions = replay_accuracy(jobs, REGISTRY)
    for predictor in REGISTRY:
        assert predictions.at("submit", predictor.name).tolist() == _reference(jobs, predictor, "submit_time")
        assert predictions.at("start", predictor.name).tolist() == _reference(jobs, predictor, "start_time")


def test_empty_trace_gives_empty_predictions():
    """No jobs: arrays of zero rows, no error."""
    assert replay_accuracy([], REGISTRY).values.shape == (2, 0, len(REGISTRY))


def test_job_table_has_one_row_per_job_with_warmup_flag():
    """Rows follow the jobs; the warm-up jobs are marked measured=0; None for no prediction."""
    header, rows = job_table(GOLDEN, replay_accuracy(GOLDEN, REGISTRY), first=1)
    rows = list(rows)
    assert header[:9] == ["job_id", "user", "queue", "submit_time", "start_time", "end_time", "walltime_s",
                          "runtime_s", "measured"]
    assert [row[8] for row in rows] == [0, 1, 1, 1, 1]
    assert dict(zip(header, rows[3]))["v1_start_s"] == 800
    assert dict(zip(header, rows[1]))["v3_submit_s"] is None


def test_values_are_plain_seconds():
    """Predictions come out as int32 seconds, with -1 for none: half the memory of int64 (PBS durations fit)."""
    values = replay_accuracy(GOLDEN, REGISTRY).values
    assert values.dtype == np.int32 and values.min() == NO_PREDICTION


def test_values_beyond_int32_widen_to_int64():
    """A walltime beyond int32 (an SWF file may hold one) comes out whole: the values are int64 then."""
    walltime = 2 ** 40
    values = replay_accuracy([job("1", "alice", 0, 0, 10, walltime), job("2", "alice", 20, 20, 10, walltime)],
                             [PREDICTORS["user"], PREDICTORS["v1"]]).values
    assert values.dtype == np.int64 and values[:, :, 0].tolist() == [[walltime, walltime]] * 2
    assert values[:, 1, 1].tolist() == [10, 10]


def test_one_instant_only():
    """Asking for start only computes and returns the start values, the same as with both."""
    both = replay_accuracy(GOLDEN, REGISTRY)
    start_only = replay_accuracy(GOLDEN, REGISTRY, instants=("start",))
    assert start_only.instants == ("start",) and start_only.values.shape == (1, len(GOLDEN), len(REGISTRY))
    assert (start_only.at("start", "v3") == both.at("start", "v3")).all()


def test_runjob_after_queued_keeps_the_submit_value_of_a_job_started_soon():
    """runjob_after_queued_s 600: job 3 (waited 100 s) keeps its submit value at start, job 4 (waited 900 s) gets
    runjob's, from the history grown while it waited (v1: the mean of the last two runtimes, 300 and 10)."""
    jobs = [Job("1", "alice", 0, 100, 1000, 1, 0, 100), Job("2", "alice", 0, 300, 1000, 1, 0, 300),
            Job("3", "alice", 50, 10, 1000, 1, 150, 160), Job("4", "alice", 50, 10, 1000, 1, 950, 960)]
    always = replay_accuracy(jobs, [PREDICTORS["v1"]])
    hourly = replay_accuracy(jobs, [PREDICTORS["v1"]], runjob_after_queued_s=600)
    assert always.at("start", "v1").tolist()[2:] == [100, 155] and always.at("submit", "v1").tolist()[2:] == [1000] * 2
    assert hourly.at("start", "v1").tolist()[2:] == [1000, 155]
    only_start = replay_accuracy(jobs, [PREDICTORS["v1"]], instants=("start",), runjob_after_queued_s=600)
    assert only_start.instants == ("start",)
    assert only_start.at("start", "v1").tolist() == hourly.at("start", "v1").tolist()
