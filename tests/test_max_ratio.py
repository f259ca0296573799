"""replay.simulation.max_ratio: the one row v3 reads, kept as jobs end, gives v3's answer on the whole window."""

from hypothesis import given
from hypothesis import strategies as st
from strategies import histories, walltimes

from predictor.algorithms import REGISTRY, v3, v3_deployed
from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow
from replay.simulation.max_ratio import MaxRatioWindows


def row(job_id, end, runtime, walltime):
    return HistoryRow(end, job_id, runtime, walltime)


def test_the_row_of_highest_ratio_stays_until_it_leaves_the_window():
    """Ratios 0.5, 0.9, 0.1, 0.2 in a window of 2: 0.9 is kept while it is among the last two, then 0.2."""
    windows = MaxRatioWindows(2)
    seen = []
    for job_id, (runtime, walltime) in enumerate([(50, 100), (90, 100), (10, 100), (20, 100)]):
        windows.add_row("alice", row(str(job_id), job_id, runtime, walltime))
        seen.append(windows.view("alice")[0].runtime_s)
    assert seen == [50, 90, 90, 20]


def test_rows_without_a_walltime_give_no_ratio():
    """v3 skips rows without a positive walltime: with only those, there is no row to read."""
    windows = MaxRatioWindows(3)
    windows.add_row("alice", row("1", 1, 50, None))
    windows.add_row("alice", row("2", 2, 50, 0))
    assert windows.view("alice") == ()
    assert windows.view("bob") == ()


def test_v3_and_v3_deployed_declare_it():
    """Only the predictors that read the history through one row of highest ratio say so."""
    assert {name for name, spec in REGISTRY.items() if spec.reads_max_ratio_row} == {"v3", "v3-deployed"}


@given(histories(max_jobs=60), st.integers(1, 20), st.lists(walltimes, min_size=1, max_size=4))
def test_v3_on_the_kept_row_is_v3_on_the_window(drawn, window, asked):
    """After every job added (any order of end times, ties included), for every user and walltime: v3 and
    v3-deployed given the kept row alone answer as given the newest ``window`` rows."""
    _, jobs = drawn
    windows, memory = MaxRatioWindows(window), MemoryHistory(window)
    for job in jobs:
        windows.add_row(job.user, job.history_row())
        memory.add_row(job.user, job.history_row())
        recent, view = memory.recent(job.user, window), windows.view(job.user)
        assert len(view) <= 1
        for walltime in asked:
            for predictor in (v3, v3_deployed):
                assert predictor(view, walltime, window=window) == predictor(recent, walltime, window=window)
