"""replay.shared.predictors: the estimates the replay compares."""

import pytest

from replay.shared.predictors import PREDICTORS
from replay.traces.trace import Job


@pytest.mark.parametrize("runtime, walltime, expected", [(0, None, 1), (500, None, 500), (500, 0, 500),
                                                         (500, 100, 100), (0, 100, 1), (50, 100, 50)])
def test_clairvoyant_is_the_runtime_within_one_second_and_the_walltime(runtime, walltime, expected):
    """clairvoyant: the true runtime brought into [1, walltime]; a missing or 0 s walltime caps nothing."""
    job = Job("1.svr", "alice", 0, runtime, walltime, 1)
    assert PREDICTORS["clairvoyant"].estimate((), job) == expected


@pytest.mark.parametrize("walltime, expected", [(None, 600), (3600, 600), (300, 300)])
def test_ten_minutes_is_rubio_et_als_correction_only_start(walltime, expected):
    """ten-minutes: 10 minutes for every job, at most its walltime, whatever the history."""
    job = Job("1.svr", "alice", 0, 5000, walltime, 1)
    assert PREDICTORS["ten-minutes"].estimate((), job) == expected
    assert PREDICTORS["ten-minutes"].window == 0


def test_tang_reads_the_project_or_the_swf_group():
    """tang's replay estimate compares the job's project, or its SWF group where it has none."""
    from predictor.jobs import HistoryRow
    history = [HistoryRow(100 - index, str(index), 250, 1000, "g1") for index in range(10)]
    swf_job = Job("1", "alice", 200, 100, 1000, 1, group="g1")
    assert PREDICTORS["tang"].estimate(history, swf_job) == 250
    assert PREDICTORS["tang"].estimate(history, swf_job._replace(group="g2")) == 1000
    assert PREDICTORS["tang"].estimate(history, swf_job._replace(project="g1", group="g2")) == 250
