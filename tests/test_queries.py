"""predictor.queries: the fraction tang gives PostgreSQL's percentile_disc."""

import math

from hypothesis import given
from hypothesis import strategies as st

from predictor.algorithms import nearest_rank
from predictor.queries import TANG_EXACT_ROWS, percentile_fraction


@given(st.integers(1, 100), st.integers(1, TANG_EXACT_ROWS - 1))
def test_percentile_fraction_lands_on_the_nearest_rank(percentile, rows):
    """percentile_disc's floating-point ceil(fraction x rows) is the integer nearest rank (IEEE doubles, as
    PostgreSQL's float8)."""
    assert math.ceil(percentile_fraction(percentile) * rows) == nearest_rank(percentile, rows)


def test_percentile_fraction_every_small_count():
    """The same for every percentile and every count up to 10,000 rows."""
    assert all(math.ceil(percentile_fraction(percentile) * rows) == nearest_rank(percentile, rows)
               for percentile in range(1, 101) for rows in range(1, 10001))
