"""``exact_sum``: what ``math.fsum`` gives (the exact sum, rounded once), in a few numpy passes.

The metrics sum a million per-job accuracies; ``math.fsum`` over a Python list
of them costs more than everything else in a metric. Here each float is split
exactly into ``integer x 2**exponent`` (``frexp``, 53-bit integers cut in two
halves of at most 27 bits), the halves are summed per exponent — sums of
integers below 2**53, exact even in float64 — and the few per-exponent totals
are added as Python integers and divided once, which CPython rounds correctly.
"""

import math

import numpy as np

__all__ = ["exact_sum"]

_HALF_BITS = 26
_SLICE = 1 << 16
_MOST_VALUES = 2 ** (53 - 27)
"""More values than this could carry a per-exponent sum of 27-bit halves past 2**53."""


def exact_sum(values):
    """The correctly rounded sum of the float64 ``values``, equal to ``math.fsum(values)``."""
    values = np.asarray(values, dtype=np.float64)
    if not values.size or values.size > _MOST_VALUES or not np.isfinite(values).all():
        return math.fsum(values.tolist())
    # A slice at a time, so that the intermediate arrays stay small whatever the number of values.
    parts = [_scaled_total(values[begin:begin + _SLICE]) for begin in range(0, values.size, _SLICE)]
    lowest = min(part_lowest for _, part_lowest in parts)
    total = sum(part << (part_lowest - lowest) for part, part_lowest in parts)
    if not total:
        return math.fsum(values.tolist())  # the sign of a zero sum is fsum's business
    scale = lowest - 53  # values = integers x 2**(exponents - 53)
    return float(total << scale) if scale >= 0 else total / (1 << -scale)


def _scaled_total(values):
    """``(total, lowest)``: the exact sum of ``values`` is the integer ``total`` x 2**(lowest - 53)."""
    mantissas, exponents = np.frexp(values)
    integers = (mantissas * 2.0 ** 53).astype(np.int64)  # exact: a mantissa has 53 bits
    lowest = int(exponents.min())
    offsets = exponents - lowest
    high = np.bincount(offsets, weights=integers >> _HALF_BITS)
    low = np.bincount(offsets, weights=integers & ((1 << _HALF_BITS) - 1))
    total = 0
    for offset in np.flatnonzero((high != 0) | (low != 0)).tolist():
        total += ((int(high[offset]) << _HALF_BITS) + int(low[offset])) << offset
    return total, lowest
