"""replay.accuracy.windows: exact fraction ranks, range maxima and range order statistics over numpy arrays."""

from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from replay.accuracy.windows import RangeMax, RangeOrder, exact_ranks

BIG = 2 ** 31 - 1
# Near 2**31 distinct fractions round to one float: the exact re-sort must run.
fractions = st.lists(st.tuples(st.one_of(st.integers(-5, 40), st.integers(BIG - 4, BIG)),
                               st.one_of(st.integers(1, 40), st.integers(BIG - 4, BIG))), max_size=40)


def ranges(size, longest):
    """``(lo, hi)`` pairs of non-empty ranges within ``size``, at most ``longest`` long."""
    return st.lists(st.integers(0, size - 1).flatmap(
        lambda lo: st.tuples(st.just(lo), st.integers(lo + 1, min(size, lo + longest)))), min_size=1, max_size=20)


@given(fractions)
def test_ranks_order_fractions_exactly(pairs):
    """Ranks are the dense ranks of the exact fractions, and each rank's fraction is one of them."""
    numerators = np.array([pair[0] for pair in pairs], dtype=np.int64)
    denominators = np.array([pair[1] for pair in pairs], dtype=np.int64)
    ranks, rank_numerators, rank_denominators = exact_ranks(numerators, denominators)
    distinct = sorted({Fraction(*pair) for pair in pairs})
    assert ranks.tolist() == [distinct.index(Fraction(*pair)) for pair in pairs]
    assert [Fraction(int(n), int(d)) for n, d in zip(rank_numerators, rank_denominators)] == distinct


def test_fractions_that_round_to_one_float_get_distinct_ranks():
    """(2**30 - 2)/(2**30 - 1) < (2**30 - 1)/2**30 although both divide to the same float."""
    base = 2 ** 30
    numerators, denominators = np.array([base - 1, base - 2, base - 1]), np.array([base, base - 1, base])
    assert numerators[0] / denominators[0] == numerators[1] / denominators[1]
    assert exact_ranks(numerators, denominators)[0].tolist() == [1, 0, 1]


@given(st.lists(st.integers(-50, 50), min_size=1, max_size=40), st.integers(1, 45), st.data())
def test_range_max_is_the_slice_maximum(values, longest, data):
    """Every range up to ``longest`` long: the maximum of its slice."""
    table = RangeMax(np.array(values, dtype=np.int64), longest)
    pairs = data.draw(ranges(len(values), longest))
    lo, hi = (np.array(side, dtype=np.int64) for side in zip(*pairs))
    assert table.query(lo, hi).tolist() == [max(values[a:b]) for a, b in pairs]


@given(st.lists(st.integers(0, 70), min_size=1, max_size=40), st.data())
def test_range_order_is_the_sorted_slice(values, data):
    """The k-th smallest of a range is the k-th of its sorted slice."""
    order = RangeOrder(np.array(values, dtype=np.int64), 7)
    pairs = data.draw(ranges(len(values), len(values)))
    ks = [data.draw(st.integers(0, b - a - 1)) for a, b in pairs]
    lo, hi = (np.array(side, dtype=np.int64) for side in zip(*pairs))
    assert order.kth_smallest(lo, hi, np.array(ks)).tolist() == [sorted(values[a:b])[k] for (a, b), k in zip(pairs, ks)]
