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
