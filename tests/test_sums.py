"""replay.accuracy.sums: exact_sum is math.fsum, in numpy passes."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from replay.accuracy.sums import exact_sum

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@given(st.lists(st.one_of(finite, st.floats(0, 1), st.sampled_from([5e-324, -5e-324, 2.0 ** -1022, 1.0, 0.5, 1e16])),
                max_size=60))
def test_exact_sum_is_fsum(values):
    """Any finite floats, subnormals and cancellations included: the same float as math.fsum, sign of zero too."""
    expected = math.fsum(values)
    got = exact_sum(np.array(values, dtype=np.float64))
    assert got == expected and math.copysign(1, got) == math.copysign(1, expected)


def test_half_way_sums_round_to_even():
    """1 + 2**-53 is half-way between two floats: rounded to the even one, as fsum does."""
    values = [1.0, 2.0 ** -53]
    assert exact_sum(np.array(values)) == math.fsum(values) == 1.0
    assert exact_sum(np.array([1.0, 2.0 ** -53, 2.0 ** -106])) == math.fsum([1.0, 2.0 ** -53, 2.0 ** -106]) > 1.0


def test_a_million_accuracies():
    """The metrics' case: many ratios in [0, 1]."""
    values = np.random.default_rng(7).random(1_000_000) ** 3
    assert exact_sum(values) == math.fsum(values.tolist())
