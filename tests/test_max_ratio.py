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


@given(histories(max_jobs=60), st.integers(1, 20), st.lists(st.integers(3600, 30 * 86400), min_size=1, max_size=4))
def test_an_end_said_not_to_change_the_row_leaves_v3s_answers(drawn, window, asked):
    """``add_row`` returns False only when v3 and v3-deployed answer, on the newest ``window`` rows, as before
    the job was added: the simulation keeps the user's cached soft walltimes then. Runtimes within the
    walltime and long walltimes asked, so that answers are seldom the walltime itself whatever the row."""
    _, jobs = drawn
    jobs = [job._replace(runtime_s=job.runtime_s % (job.walltime_s + 1)) if job.walltime_s else job for job in jobs]
    windows, memory = MaxRatioWindows(window), MemoryHistory(window)
    for job in jobs:
        before = [predictor(memory.recent(job.user, window), walltime, window=window)
                  for walltime in asked for predictor in (v3, v3_deployed)]
        changed = windows.add_row(job.user, job.history_row())
        memory.add_row(job.user, job.history_row())
        after = [predictor(memory.recent(job.user, window), walltime, window=window)
                 for walltime in asked for predictor in (v3, v3_deployed)]
        assert changed or after == before


def test_add_row_says_when_the_ratio_read_changes():
    """Window 2, ratios 0.5, 0.9, 0.1, 0.8, 0.8, 0.8: a higher row changes it, a lower one does not, until
    the highest leaves the window (0.1 and 0.8 are left: 0.8, lower than 0.9; then 0.8 for 0.8, the same)."""
    windows = MaxRatioWindows(2)
    said = [windows.add_row("alice", row(str(job_id), job_id, runtime, 100))
            for job_id, runtime in enumerate([50, 90, 10, 80, 80, 80])]
    assert said == [True, True, False, True, False, False]


def test_the_row_leaving_with_a_higher_one_coming_changes_it():
    """Window 1: each row replaces the last, the highest leaving each time; 0.5 then 0.9 then 0.9 again."""
    windows = MaxRatioWindows(1)
    said = [windows.add_row("alice", row(str(job_id), job_id, runtime, 100)) for job_id, runtime in
            enumerate([50, 90, 90])]
    assert said == [True, True, False]
