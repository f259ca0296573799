"""replay.traces.columns: jobs held as arrays are the same jobs, and the accuracy replay reads the same from them."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import algorithm_parameters, dated_replay_jobs, hostile_names, replay_jobs

from replay.accuracy.metrics import accuracy_report
from replay.accuracy.predictions import replay_accuracy
from replay.shared.predictors import ACCURACY_PREDICTORS, PREDICTORS, resolve
from replay.traces.columns import NONE, JobColumns, integer_arrays, name_columns, named
from replay.traces.readers import load_trace
from replay.traces.trace import Job


def numbered(jobs):
    """``jobs`` as columns whose job ids are numbers (as the SWF reader holds them)."""
    return JobColumns.of_arrays(np.array([int(job.job_id) for job in jobs], dtype=np.int64), integer_arrays(jobs),
                                name_columns(jobs))


def pbs_jobs():
    """Jobs with any names and job ids, big numbers and Nones."""
    big = st.one_of(st.none(), st.integers(-2 ** 63 + 1, 2 ** 63 - 1), st.integers(-5, 5))
    return st.lists(st.builds(Job, job_id=hostile_names, user=hostile_names, submit_time=big, runtime_s=big,
                              walltime_s=big, ncpus=big, start_time=big, end_time=big, nodes=big,
                              queue=st.one_of(st.none(), hostile_names), project=st.one_of(st.none(), hostile_names),
                              soft_walltime_s=big, exit_status=big, group=st.one_of(st.none(), hostile_names),
                              occupancy_s=big, requested_ncpus=big), max_size=20)


@given(pbs_jobs())
def test_columns_hold_the_very_jobs(jobs):
    """Iteration, indexing from either end and slicing give the jobs of the list, field for field."""
    columns = JobColumns.of_jobs(jobs)
    assert len(columns) == len(jobs) and list(columns) == jobs and columns == jobs
    assert [columns[index] for index in range(-len(jobs), len(jobs))] == jobs + jobs
    assert columns[2:5] == jobs[2:5] and columns[1:] == jobs[1:] and columns[::2] == jobs[::2]
    assert all(columns.job_id(index) == job.job_id for index, job in enumerate(jobs))


def test_a_value_beyond_int64_keeps_the_list():
    """A number a column cannot hold: no columns (the reader keeps its list)."""
    assert JobColumns.of_jobs([Job("1", "alice", 0, 2 ** 63, None, 1)]) is None
    assert JobColumns.of_jobs([Job("1", "alice", 0, 5, None, True)]) is None


def test_index_out_of_range():
    """Past the end is an IndexError, as for a list."""
    columns = JobColumns.of_jobs([Job("1", "alice", 0, 5, None, 1)])
    with pytest.raises(IndexError):
        columns[1]  # noqa: B018


def _same_replay(jobs, predictors):
    expected = replay_accuracy(jobs, predictors)
    for held in (JobColumns.of_jobs(jobs), numbered(jobs)):
        got = replay_accuracy(held, predictors)
        assert np.array_equal(got.values, expected.values)
        assert accuracy_report("t", (), held, got, 0.1) == accuracy_report("t", (), jobs, expected, 0.1)


@settings(max_examples=200)
@given(dated_replay_jobs(), algorithm_parameters())
def test_replay_of_columns_equals_replay_of_the_list(jobs, algorithm_parameters):
    """Every algorithm, repeated job ids and projects included: the same predictions and the same report."""
    name, parameters = algorithm_parameters
    spec = ":".join([name] + ["{}={}".format(parameter, value) for parameter, value in sorted(parameters.items())])
    _same_replay(jobs, [resolve(spec), PREDICTORS["recorded"]])


@given(replay_jobs())
def test_default_predictors_on_columns(jobs):
    """The registry's default predictors, queues and soft walltimes recorded: the same report."""
    _same_replay(jobs, [PREDICTORS[name] for name in ACCURACY_PREDICTORS])


def test_traces_read_as_columns_are_the_jobs_read_as_lists():
    """The bundled SWF trace and PBS logs: ``as_columns`` holds the jobs the list holds."""
    traces = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "traces")
    for name in ("HPC2N-2002-subset.swf", "hpc2n-2002-accounting"):
        path = os.path.join(traces, name)
        listed, columns = load_trace([path]), load_trace([path], as_columns=True)
        assert isinstance(listed.jobs, list) and isinstance(columns.jobs, JobColumns)
        assert columns.jobs == listed.jobs and columns.jobs.nbytes() < 100 * len(listed.jobs)


def test_numbers_of_an_int32_column_stand_in_a_missing_value_beyond_int32():
    """A missing value that int32 cannot hold (NONE) is written as it is, not wrapped into the column's type."""
    columns = JobColumns.of_jobs([Job("1", "u", 0, 5, None, 1, occupancy_s=7), Job("2", "u", 0, 5, None, 1)])
    assert columns.numbers("occupancy_s", NONE).tolist() == [7, NONE]


@given(st.lists(st.one_of(st.integers(-3, 40), st.integers(-2 ** 62, 2 ** 62)), max_size=60))
def test_named_numbers_get_the_codes_numpys_unique_gives(numbers):
    """``named`` numbers a few thousand user ids by a table over their span and any others by sorting: either
    way the names and codes of ``np.unique`` (the name made once per number, equal names one code)."""
    values = np.array(numbers, dtype=np.int64)
    distinct, inverse = np.unique(values, return_inverse=True)
    names = [str(number % 7) for number in distinct.tolist()]  # some equal names
    merged = {name: code for code, name in enumerate(dict.fromkeys(names))}
    expected = [merged[names[index]] for index in inverse.reshape(-1).tolist()]
    coded = named(values, lambda number: str(number % 7))
    assert (coded is None and not numbers) or (coded[0].tolist(), coded[1]) == (expected, tuple(merged))
