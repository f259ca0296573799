"""Range queries over a numpy array, each answered for many ranges at once: the tools of the vectorised predictors.

* ``exact_ranks``: fractions ``numerator/denominator`` replaced by their rank
  in exact order, so that comparing ranks compares the fractions exactly;
* ``RangeMax``: the largest value of ``values[lo:hi]``, values below 2**31
  (a sparse table: maxima over every range of length 2**k, two of which
  cover any range);
* ``RangeOrder``: the k-th smallest value of ``values[lo:hi]`` (a wavelet
  matrix: one pass per bit of the values, each pass over all the ranges).

Every query is a handful of numpy operations over all the ranges together:
no Python loop runs per range.
"""

from fractions import Fraction

import numpy as np

__all__ = ["exact_ranks", "RangeMax", "RangeOrder"]


def exact_ranks(numerators, denominators):
    """``(ranks, rank_numerators, rank_denominators)`` of the fractions, ``denominators > 0``.

    Equal fractions share a rank; a smaller fraction has a smaller rank; the
    ranks are 0, 1, 2 ... (int32 below 2**31 fractions) and ``rank_numerators[r] / rank_denominators[r]``
    is one of the fractions of rank ``r``. Numerators and denominators must be
    below 2**31 in magnitude, so cross products are exact in int64.
    """
    if not numerators.size:
        return numerators.copy(), numerators.copy(), denominators.copy()
    # Division of integers below 2**53 is correctly rounded, and rounding keeps order: sorting the
    # floats sorts the fractions, except that distinct fractions may round to one float.
    approximate = numerators / denominators
    order = np.argsort(approximate)
    approximate = approximate[order]
    same_float = approximate[1:] == approximate[:-1]
    del approximate  # this runs over every job of a trace: each array is let go of once read
    sorted_numerators, sorted_denominators = numerators[order], denominators[order]
    new_value = _differ(sorted_numerators, sorted_denominators)
    if (same_float & new_value).any():
        _sort_float_ties_exactly(order, same_float, numerators, denominators)
        sorted_numerators, sorted_denominators = numerators[order], denominators[order]
        new_value = _differ(sorted_numerators, sorted_denominators)
    del same_float
    new_value = np.concatenate(([True], new_value))
    ranks = np.empty(order.size, dtype=np.int32 if order.size < 2 ** 31 else np.int64)
    ranks[order] = np.cumsum(new_value) - 1
    del order
    return ranks, sorted_numerators[new_value], sorted_denominators[new_value]


def _differ(numerators, denominators):
    """Whether each fraction differs from the one before it (exact cross products)."""
    return numerators[1:] * denominators[:-1] != numerators[:-1] * denominators[1:]


def _sort_float_ties_exactly(order, same_float, numerators, denominators):
    """Re-sort, in place and with Fractions, the runs of equal floats that hold distinct fractions (rare)."""
    unequal = same_float & _differ(numerators[order], denominators[order])
    run_starts = np.flatnonzero(np.concatenate(([True], ~same_float)))
    run_ends = np.append(run_starts[1:], order.size)
    runs = np.unique(np.searchsorted(run_starts, np.flatnonzero(unequal), side="right") - 1)
    for start, end in zip(run_starts[runs].tolist(), run_ends[runs].tolist()):
        order[start:end] = sorted(order[start:end].tolist(),
                                  key=lambda index: Fraction(int(numerators[index]), int(denominators[index])))


def _floor_log2(lengths):
    """``floor(log2(n))`` of positive integers below 2**53, exactly (``frexp`` gives the binary exponent)."""
    return np.frexp(lengths.astype(np.float64))[1].astype(np.int64) - 1


class RangeMax:
    """The largest of ``values[lo:hi]`` for ranges no longer than ``longest``."""

    def __init__(self, values, longest):
        size = values.size
        levels = 1
        while 2 ** levels <= min(longest, size):
            levels += 1
        # Row k holds the maxima of values[i:i + 2**k]; its last 2**k - 1 entries are never read.
        self._table = np.empty((levels, size), dtype=np.int32 if size < 2 ** 31 else np.int64)
        self._table[0] = values
        for level in range(1, levels):
            span, below, row = 2 ** (level - 1), self._table[level - 1], self._table[level]
            np.maximum(below[:size - span], below[span:], out=row[:size - span])
            row[size - span:] = below[size - span:]
        self._size = size

    def query(self, lo, hi):
        """The maximum over each range ``[lo, hi)``; every range must be non-empty."""
        level = _floor_log2(hi - lo)
        table = self._table.reshape(-1)
        base = level * self._size
        return np.maximum(table[base + lo], table[base + hi - (1 << level)]).astype(np.int64)


class RangeOrder:
    """The k-th smallest of ``values[lo:hi]``; values are integers in ``[0, 2**bits)``."""

    def __init__(self, values, bits):
        size = values.size
        self._bits = bits
        self._zeros_before = np.zeros((bits, size + 1), dtype=np.int32 if size < 2 ** 31 else np.int64)
        self._zero_counts = []
        current = values
        for row, bit in enumerate(range(bits - 1, -1, -1)):
            ones = (current >> bit) & 1 == 1
            np.cumsum(~ones, out=self._zeros_before[row, 1:])
            self._zero_counts.append(int(self._zeros_before[row, size]))
            current = np.concatenate((current[~ones], current[ones]))

    def kth_smallest(self, lo, hi, k):
        """The ``k``-th smallest (0 first) of each range ``[lo, hi)``; needs ``0 <= k < hi - lo``."""
        lo, hi, k = lo.astype(np.int64), hi.astype(np.int64), k.astype(np.int64)
        result = np.zeros(lo.size, dtype=np.int64)
        for row, bit in enumerate(range(self._bits - 1, -1, -1)):
            zeros_before = self._zeros_before[row]
            zeros_lo, zeros_hi = zeros_before[lo], zeros_before[hi]
            zeros = zeros_hi - zeros_lo
            one = k >= zeros
            k -= np.where(one, zeros, 0)
            lo = np.where(one, self._zero_counts[row] + lo - zeros_lo, zeros_lo)
            hi = np.where(one, self._zero_counts[row] + hi - zeros_hi, zeros_hi)
            result |= one.astype(np.int64) << bit
        return result
