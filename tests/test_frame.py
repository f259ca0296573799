"""The simulation's jobs held as columns (replay.simulation.frame): the same schedules as from a list of Jobs."""

import argparse
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import scheduler_settings, simulated_predictors, small_traces

from replay.shared.predictors import PREDICTORS
from replay.simulation import command as simulate
from replay.simulation import runs
from replay.simulation.cluster import Cluster
from replay.simulation.engine import SchedulerSettings, run_frame, simulate_jobs
from replay.simulation.parallel import can_fork
from replay.traces.columns import JobColumns
from replay.traces.trace import Job


def columns_of(jobs):
    columns = JobColumns.of_jobs(jobs)
    assert columns is not None
    return columns


@given(small_traces(max_jobs=25), scheduler_settings(), simulated_predictors)
@settings(max_examples=300, deadline=None)
def test_columns_give_the_schedule_of_the_list(trace, scheduler, predictor):
    """The engine fed a JobColumns makes the very ScheduledJobs it makes from the same jobs as a list."""
    cores, jobs = trace
    cluster = Cluster.of_cores(cores)
    assert simulate_jobs(columns_of(jobs), PREDICTORS[predictor], cluster, scheduler) == \
        simulate_jobs(jobs, PREDICTORS[predictor], cluster, scheduler)


@given(small_traces(max_jobs=25), st.integers(1, 4), scheduler_settings(), simulated_predictors)
@settings(max_examples=100, deadline=None)
def test_columns_in_node_mode_give_the_schedule_of_the_list(trace, cores_per_node, scheduler, predictor):
    """Node mode (whole nodes per job) too: the widths computed for all jobs at once are Cluster.width's."""
    cores, jobs = trace
    cluster = Cluster.of_nodes(cores, cores_per_node)
    assert simulate_jobs(columns_of(jobs), PREDICTORS[predictor], cluster, scheduler) == \
        simulate_jobs(jobs, PREDICTORS[predictor], cluster, scheduler)


@given(small_traces(max_jobs=25))
def test_frame_sorts_columns_as_sorted_sorts_the_list(trace):
    """Jobs submitted at the same second keep their trace order (a stable sort), as sorted() keeps them."""
    _, jobs = trace
    frame = run_frame(columns_of(jobs), Cluster.of_cores(10 ** 6), SchedulerSettings())
    assert list(frame.jobs) == sorted(jobs, key=lambda job: job.submit_time)
    assert frame.submit.tolist() == sorted(job.submit_time for job in jobs)


@given(small_traces(max_jobs=25), st.one_of(st.none(), st.integers(0, 300)))
def test_frame_arrays_are_each_jobs_values(trace, default_walltime_s):
    """Width, walltime (None as NO_WALLTIME), plan, runtime, held and killed: what each job gives alone."""
    cores, jobs = trace
    settings_ = SchedulerSettings(default_walltime_s=default_walltime_s)
    frame = run_frame(columns_of(jobs), Cluster.of_cores(cores), settings_)
    for index, job in enumerate(frame.jobs):
        walltime = job.walltime_s if job.walltime_s and job.walltime_s >= 1 else default_walltime_s
        killed = walltime is not None and job.runtime_s > walltime
        held = job.runtime_s if job.occupancy_s is None else job.occupancy_s
        assert int(frame.width[index]) == job.ncpus
        assert int(frame.walltime[index]) == (-1 if walltime is None else walltime)
        assert int(frame.walltime_plan[index]) == (walltime or 5 * 365 * 86400)
        assert int(frame.runtime[index]) == (walltime if killed else job.runtime_s)
        assert int(frame.held[index]) == (min(held, walltime) if killed else held)
        assert bool(frame.killed[index]) == killed


@given(small_traces(max_jobs=25), st.integers(1, 12))
def test_runnable_columns_keep_the_jobs_the_list_keeps(trace, capacity):
    """runnable_jobs leaves out the same jobs from columns as from a list, and keeps columns as columns."""
    _, jobs = trace
    kept, notes = runs.runnable_jobs(columns_of(jobs), Cluster.of_cores(capacity))
    listed, listed_notes = runs.runnable_jobs(jobs, Cluster.of_cores(capacity))
    assert isinstance(kept, JobColumns) and list(kept) == listed and notes == listed_notes


def _old_observed_cores(jobs):
    events = sorted([(job.end_time, -job.ncpus) for job in jobs if job.start_time is not None and job.end_time]
                    + [(job.start_time, job.ncpus) for job in jobs if job.start_time is not None and job.end_time])
    if not events:
        return max(job.ncpus for job in jobs)
    return max(int(np.cumsum([change for _, change in events]).max()), max(job.ncpus for job in jobs))


@given(st.lists(st.tuples(st.integers(1, 8), st.one_of(st.none(), st.integers(0, 50)), st.integers(0, 50)),
                min_size=1, max_size=20))
def test_observed_cores_of_columns_is_the_sweep_over_starts_and_ends(rows):
    """The most cores in use at once, ends before starts at one instant, as the list of events sorted gives."""
    jobs = [Job(str(number), "u", 0, duration, None, ncpus, start, None if start is None else start + duration)
            for number, (ncpus, start, duration) in enumerate(rows)]
    assert runs.observed_cores(columns_of(jobs)) == runs.observed_cores(jobs) == _old_observed_cores(jobs)


# The command end to end: an SWF trace read as columns and simulated by two processes writes what the same
# trace read as a list of Jobs and simulated by one process writes, --jobs-csv included.

_swf_jobs = st.lists(st.tuples(st.integers(0, 300), st.integers(0, 40), st.integers(0, 300), st.integers(1, 6),
                               st.one_of(st.just(-1), st.integers(1, 300)), st.integers(1, 3), st.integers(1, 2),
                               st.integers(1, 2)), min_size=1, max_size=30)


def _write_swf(path, rows):
    with open(path, "w") as out:
        out.write("; MaxProcs: 6\n")
        for number, (submit, wait, runtime, procs, requested, user, group, queue) in enumerate(rows, 1):
            out.write("{} {} {} {} {} -1 -1 {} {} -1 1 {} {} -1 {} -1 -1 -1\n".format(
                number, submit, wait, runtime, procs, procs, requested, user, group, queue))


def _outputs(folder, trace, policy, workers, monkeypatch, as_columns):
    os.makedirs(folder)
    files = {name: os.path.join(folder, name) for name in ("m.json", "m.csv", "jobs.csv")}
    read = simulate.read_trace
    monkeypatch.setattr(simulate, "read_trace", lambda *args, **kwargs: read(*args[:3], as_columns=as_columns))
    parser = argparse.ArgumentParser()
    simulate.add_arguments(parser)
    simulate.run(parser.parse_args([trace, "--predictors", "user,v3,clairvoyant", "--policy", policy, "--workers",
                                    str(workers), "--json", files["m.json"], "--csv", files["m.csv"],
                                    "--jobs-csv", files["jobs.csv"]]))
    found = {}
    for name, path in files.items():
        with open(path, "rb") as stream:
            found[name] = stream.read()
    return found


@pytest.mark.skipif(not can_fork(), reason="worker processes need the fork start method")
@given(_swf_jobs, st.sampled_from(["fifo", "sjf", "small-first"]))
@settings(max_examples=12, deadline=None)
def test_columns_in_two_processes_write_what_a_list_in_one_writes(tmp_path_factory, rows, policy):
    """Read as columns, two worker processes: the same JSON, CSV and per-job CSV as read as a list, one process."""
    folder = tmp_path_factory.mktemp("swf")
    trace = str(folder / "trace.swf")
    _write_swf(trace, rows)
    with pytest.MonkeyPatch.context() as monkeypatch:
        listed = _outputs(str(folder / "list"), trace, policy, 1, monkeypatch, as_columns=False)
    with pytest.MonkeyPatch.context() as monkeypatch:
        columns = _outputs(str(folder / "columns"), trace, policy, 2, monkeypatch, as_columns=True)
    assert columns == listed


def _long_soft_walltime_jobs():
    """A job whose recorded soft walltime (no walltime to clamp it) does not fit int32, among ordinary ones."""
    return [Job("1", "u", 0, 50, 100, 1, soft_walltime_s=2 ** 40), Job("2", "v", 5, 20, 60, 2, soft_walltime_s=30),
            Job("3", "u", 9, 10, None, 2, soft_walltime_s=2 ** 40)]


def test_a_soft_walltime_beyond_int32_is_kept_whole():
    """A run whose soft walltimes do not fit int32 is made again with int64 columns: the same schedule."""
    jobs = _long_soft_walltime_jobs()
    done = simulate_jobs(columns_of(jobs), PREDICTORS["recorded"], Cluster.of_cores(2), SchedulerSettings())
    assert done == simulate_jobs(jobs, PREDICTORS["recorded"], Cluster.of_cores(2), SchedulerSettings())
    assert [job.soft_walltime_queued_s for job in done] == [100, 30, 2 ** 40]


@pytest.mark.skipif(not can_fork(), reason="worker processes need the fork start method")
def test_a_worker_whose_soft_walltimes_do_not_fit_int32_sends_its_wide_columns():
    """The worker's run made again with int64 columns in its shared memory: the parent reads them as such."""
    jobs, predictors = columns_of(_long_soft_walltime_jobs()), [PREDICTORS["user"], PREDICTORS["recorded"]]
    serial = runs.simulate_all(jobs, predictors, Cluster.of_cores(2), SchedulerSettings(), workers=1)
    parallel = runs.simulate_all(jobs, predictors, Cluster.of_cores(2), SchedulerSettings(), workers=2)
    assert {name: list(run) for name, run in parallel.items()} == {name: list(run) for name, run in serial.items()}
    assert parallel["recorded"][2].soft_walltime_started_s == 2 ** 40
