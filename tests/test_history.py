"""predictor.history: the in-memory store and predict()."""

import pytest
from hypothesis import given
from strategies import histories

from predictor.algorithms import EVERY_ROW, make_algorithm
from predictor.history import MemoryHistory, predict
from predictor.jobs import CompletedJob, JobRequest


def job(job_id, user="alice", end=0, runtime=10, walltime=100):
    return CompletedJob(job_id=job_id, user=user, runtime_s=runtime, end_time=end, walltime_s=walltime)


def test_recent_is_newest_first():
    """Rows come back newest first by end time."""
    store = MemoryHistory()
    for index, end in enumerate([5, 1, 9, 3]):
        store.add(job(str(index), end=end))
    assert [row.end_time for row in store.recent("alice", 15)] == [9, 5, 3, 1]


def test_ties_broken_by_job_id_descending():
    """Equal end times order by job id, larger first, as in SQL."""
    store = MemoryHistory()
    for job_id in ["b", "a", "c"]:
        store.add(job(job_id, end=7))
    assert [row.job_id for row in store.recent("alice", 3)] == ["c", "b", "a"]


def test_capacity_keeps_newest():
    """Only the newest ``capacity`` rows per user are kept."""
    store = MemoryHistory(capacity=2)
    for end in range(5):
        store.add(job(str(end), end=end))
    assert [row.end_time for row in store.recent("alice", 2)] == [4, 3]


def test_readding_job_replaces_it():
    """Adding the same job id again replaces the row, as the SQL upsert does."""
    store = MemoryHistory()
    store.add(job("1", end=1, runtime=10))
    store.add(job("1", end=2, runtime=20))
    assert [(row.end_time, row.runtime_s) for row in store.recent("alice", 15)] == [(2, 20)]


def test_every_row_added_may_change_a_prediction():
    """``add_row`` says True each time: every row changes what a prediction reads of the window (the
    simulation drops the user's cached soft walltimes on it)."""
    store = MemoryHistory(capacity=2)
    assert [store.add_row("alice", job(str(end), end=end).history_row()) for end in (1, 0, 2, 2)] == [True] * 4


def test_limit_above_capacity_refused():
    """Asking for more rows than kept is an error, not a silent short answer."""
    with pytest.raises(ValueError):
        MemoryHistory(capacity=2).recent("alice", 3)


def test_users_are_separate():
    """One user's jobs never appear in another's history."""
    store = MemoryHistory()
    store.add(job("1", user="alice"))
    assert store.recent("bob", 15) == []


def test_project_store_keeps_every_users_rows():
    """owner="project": a project's rows, every user's, newest first; a job without a project is not kept."""
    store = MemoryHistory(owner="project")
    for job_id, user, end, project in (("1", "alice", 5, "p"), ("2", "bob", 7, "p"), ("3", "bob", 9, None)):
        store.add(job(job_id, user=user, end=end)._replace(project=project))
    assert [row.job_id for row in store.project_recent("p", 15)] == ["2", "1"]
    with pytest.raises(ValueError, match="project"):
        MemoryHistory().project_recent("p", 15)


def test_predict_tang_project_key_reads_the_project():
    """tang with key project reads the project's store; a request without a project gets the walltime."""
    store = MemoryHistory(EVERY_ROW, owner="project")
    store.add(job("1", user="bob", end=5, runtime=25, walltime=100)._replace(project="p"))
    tang = make_algorithm("tang", key="project", min_history=1)
    assert predict(store, tang, JobRequest("alice", 1000, project="p", submit_time=10)) == 250
    assert predict(store, tang, JobRequest("alice", 1000, submit_time=10)) == 1000


def test_predict_without_walltime_returns_none():
    """No walltime requested: no soft walltime, whatever the history."""
    store = MemoryHistory()
    store.add(job("1"))
    assert predict(store, make_algorithm("v3"), JobRequest("alice", None)) is None


def test_predict_uses_history():
    """predict() feeds the store's rows to the algorithm."""
    store = MemoryHistory()
    store.add(job("1", runtime=50, walltime=100))
    assert predict(store, make_algorithm("v3", reserve_s=0), JobRequest("alice", 1000)) == 500


@given(histories(max_jobs=30))
def test_recent_equals_sorted_model(generated):
    """recent() equals sorting all of a user's jobs by (end, id) descending."""
    users, jobs = generated
    store = MemoryHistory(capacity=15)
    for completed in jobs:
        store.add(completed)
    for user in users:
        model = sorted((j.history_row() for j in jobs if j.user == user), reverse=True)
        assert store.recent(user, 15) == model[:15]
