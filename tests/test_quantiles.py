"""replay.shared.quantiles: numpy's medians and 95th percentiles to the bit, without numpy.ma."""

import os
import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from replay.shared.quantiles import median, p95

ARRAYS = st.one_of(
    st.lists(st.integers(-10 ** 9, 10 ** 9), min_size=1, max_size=300).map(lambda values: np.array(values, np.int64)),
    st.lists(st.floats(0, 1e7), min_size=1, max_size=300).map(lambda values: np.array(values, dtype=np.float64)))
"""Waits and prediction errors (int64), bounded slowdowns and accuracies (float64)."""
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@given(ARRAYS)
def test_median_and_p95_are_numpys_to_the_bit(values):
    """The same floats as np.median and np.percentile(values, 95), and ``values`` left as it was."""
    before = values.copy()
    assert float(median(values)).hex() == float(np.median(values)).hex()
    assert float(p95(values)).hex() == float(np.percentile(values, 95)).hex()
    assert np.array_equal(values, before)


@given(ARRAYS)
def test_a_median_in_place_is_numpys_in_place(values):
    """``overwrite=True`` gives np.median's float with ``overwrite_input=True``, and leaves the array as numpy
    leaves it (the same values, partitioned)."""
    theirs = values.copy()
    assert float(median(values, overwrite=True)).hex() == float(np.median(theirs, overwrite_input=True)).hex()
    assert sorted(values.tolist()) == sorted(theirs.tolist())


def test_the_replay_does_not_import_numpy_ma():
    """What the module is for: its functions, on float arrays, run without numpy.ma (checked in a fresh
    interpreter)."""
    code = ("import sys, numpy as np; from replay.shared.quantiles import median, p95; "
            "median(np.arange(5.0)); median(np.arange(6.0), overwrite=True); p95(np.arange(7.0)); "
            "print('numpy.ma' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=REPO))
    assert done.stdout == "False\n"
