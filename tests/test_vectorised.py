"""replay.accuracy.vectorised: the whole-trace predictors give the reference functions' values, job by job."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import algorithm_parameters, dated_replay_jobs, replay_jobs

from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow
from replay.accuracy.predictions import INSTANTS, NO_PREDICTION, replay_accuracy
from replay.accuracy.vectorised import VectorisedTrace
from replay.shared.predictors import PREDICTORS, ReplayPredictor, history_project, resolve
from replay.traces.trace import Job

FIELDS = {"submit": "submit_time", "start": "start_time"}


def spec(name, parameters):
    """The command-line spec of an algorithm with these parameters (the bare name for the defaults)."""
    return ":".join([name] + ["{}={}".format(parameter, value) for parameter, value in sorted(parameters.items())])


def columns(jobs):
    return {field: np.array([getattr(job, field) for job in jobs], dtype=np.int64)
            for field in ("submit_time", "start_time", "end_time")}


def owner(job, by_project):
    """Whose history a job reads: its user's, or its project's (the SWF group standing in)."""
    return history_project(job) if by_project else job.user


def reference(jobs, algorithm, field):
    """Per job, ``algorithm.predict`` on its user's (project's) jobs ended strictly before the instant, newest
    first; with key project, none for a job without a project."""
    values = []
    for job in jobs:
        mine = owner(job, algorithm.by_project)
        rows = sorted((HistoryRow(other.end_time, other.job_id, other.runtime_s, other.walltime_s,
                                  history_project(other)) for other in jobs
                       if owner(other, algorithm.by_project) == mine and other.end_time < getattr(job, field)),
                      reverse=True)
        if mine is None:
            rows = []
        value = algorithm.predict(rows[:algorithm.window], job.walltime_s, job.submit_time, history_project(job))
        values.append(NO_PREDICTION if value is None else value)
    return values


def store_reference(jobs, predictor, field):
    """Per job, the registry estimate on a fresh MemoryHistory fed, in end-time order, the jobs ended before."""
    values = []
    in_end_order = sorted(jobs, key=lambda job: job.end_time)  # stable: the replay's order at one end time
    for job in jobs:
        store = MemoryHistory(max(predictor.window, 1))
        mine = owner(job, predictor.by_project)
        for other in in_end_order:
            if owner(other, predictor.by_project) == mine and other.end_time < getattr(job, field):
                store.add_row(mine, HistoryRow(other.end_time, other.job_id, other.runtime_s, other.walltime_s,
                                               history_project(other)))
        value = predictor.estimate(store.recent(mine, predictor.window) if predictor.window else (), job)
        values.append(NO_PREDICTION if value is None else value)
    return values


def repeats_a_job_id(jobs, by_project=False):
    return len({(owner(job, by_project), job.job_id) for job in jobs}) < len(jobs)


@settings(max_examples=300)
@given(dated_replay_jobs(), algorithm_parameters())
def test_vectorised_algorithms_equal_the_reference_functions(jobs, algorithm_parameters):
    """v1, v2, v3, v3-deployed, tang with any parameters: the same value as predictor.algorithms for every job."""
    predictor = resolve(spec(*algorithm_parameters))
    values = VectorisedTrace(jobs, columns(jobs)).values(predictor, INSTANTS)
    if repeats_a_job_id(jobs, predictor.by_project):
        assert values is None
        return
    for instant, instant_values in zip(INSTANTS, values):
        assert instant_values.tolist() == reference(jobs, predictor.algorithm, FIELDS[instant])


@given(dated_replay_jobs(), algorithm_parameters(), st.integers(1, 4))
def test_values_of_slices_of_the_jobs_are_those_of_the_whole_trace(jobs, algorithm_parameters, slice_jobs):
    """The replay computes a slice of the jobs at a time: the slices' values, one after the other, are the whole's."""
    predictor = resolve(spec(*algorithm_parameters))
    trace = VectorisedTrace(jobs, columns(jobs))
    whole = trace.values(predictor, INSTANTS)
    if whole is None:
        return
    parts = [trace.values(predictor, INSTANTS, slice(begin, begin + slice_jobs))
             for begin in range(0, len(jobs), slice_jobs)]
    for slot, instant_values in enumerate(whole):
        assert [value for part in parts for value in part[slot].tolist()] == instant_values.tolist()


@given(dated_replay_jobs(), algorithm_parameters())
def test_replay_equals_the_store_when_a_job_id_repeats(jobs, algorithm_parameters):
    """Vectorised or walked (a user's job id seen twice), the replay gives what a fresh store gives."""
    predictor = resolve(spec(*algorithm_parameters))
    predictions = replay_accuracy(jobs, [predictor])
    for instant in INSTANTS:
        assert predictions.at(instant, predictor.name).tolist() == store_reference(jobs, predictor, FIELDS[instant])


@given(replay_jobs())
def test_history_free_entries_equal_their_estimates(jobs):
    """user, recorded and clairvoyant: the registry's own estimate for every job."""
    names = ("user", "recorded", "clairvoyant")
    values = VectorisedTrace(jobs, columns(jobs)).values
    for name in names:
        expected = [NO_PREDICTION if value is None else value
                    for value in (PREDICTORS[name].estimate((), job) for job in jobs)]
        assert all(instant_values.tolist() == expected for instant_values in values(PREDICTORS[name], INSTANTS))


def test_a_predictor_outside_the_registry_is_not_vectorised():
    """A predictor named like a registry entry but not that entry keeps its own estimate."""
    own = ReplayPredictor("user", 0, lambda history, job: 5)
    jobs = [Job("1", "alice", 0, 10, 100, 1, 0, 10)]
    assert VectorisedTrace(jobs, columns(jobs)).values(own, INSTANTS) is None
    assert replay_accuracy(jobs, [own]).values.tolist() == [[[5]], [[5]]]


@given(replay_jobs())
def test_vectorised_and_walked_predictors_in_one_replay(jobs):
    """A walked predictor next to vectorised ones: each gets its own values."""
    spy = ReplayPredictor("spy", 3, lambda history, job: len(history))
    predictors = [PREDICTORS["v3"], spy, PREDICTORS["user"], PREDICTORS["v1"]]
    predictions = replay_accuracy(jobs, predictors)
    for predictor in predictors:
        for instant in INSTANTS:
            assert predictions.at(instant, predictor.name).tolist() == store_reference(
                jobs, predictor, FIELDS[instant])


def test_completions_at_one_end_time_follow_the_job_id_text():
    """Two jobs ending together: the newer row is the one whose job id sorts last as text ("9" after "10")."""
    jobs = [Job("9", "alice", 0, 10, 100, 1, 0, 10), Job("10", "alice", 0, 5, 100, 1, 5, 10),
            Job("11", "alice", 20, 5, 100, 1, 20, 25)]
    predictions = replay_accuracy(jobs, [resolve("v1:window=1"), resolve("v3:window=1:reserve_s=0")])
    assert predictions.at("submit", "v1:window=1").tolist() == [100, 100, 10]
    assert predictions.at("start", "v3:window=1:reserve_s=0").tolist() == [100, 100, 10]


EDGES = [
    Job("1", "alice", 0, 3600, 86400, 1, 0, 3600),          # ends exactly one day before job 3's submission
    Job("2", "alice", 0, 7200, 86401, 1, 1, 7201),          # one second later
    Job("3", "alice", 90000, 100, 86400, 1, 90000, 90100),  # 24 h exactly: v3-deployed does not double
    Job("4", "alice", 90001, 100, 86401, 1, 90001, 90101),  # over 24 h: doubled
    Job("5", "bob", 90002, 100, None, 1, 90002, 90102),
]


@pytest.mark.parametrize("name", ["v3-deployed", "v3-deployed:reserve_s=0", "tang:window_days=1:min_history=1",
                                  "tang:window_days=1:min_history=2",
                                  "tang:window_days=1:min_history=1:key=user+walltime"])
def test_edges_of_the_day_window_and_the_long_walltime(name):
    """Ended exactly ``window_days`` before the submission counts; exactly 24 h is not over 24 h."""
    predictor = resolve(name)
    for instant in INSTANTS:
        assert replay_accuracy(EDGES, [predictor]).at(instant, name).tolist() == reference(
            EDGES, predictor.algorithm, FIELDS[instant])
