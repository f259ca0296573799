"""Medians and 95th percentiles of numpy arrays, the very floats ``np.median`` and ``np.percentile`` give.

``np.percentile``, and ``np.median`` of a float array, import numpy.ma on their first call,
which takes about 10 ms of a command's start. These give the same floats with numpy's own arithmetic
(``np.partition``, then numpy's formulas), for arrays without NaN, which is all the
replay measures: waits, slowdowns, prediction errors and accuracies.
"""

import math

import numpy as np

__all__ = ["median", "p95"]


def median(values, overwrite=False):
    """``np.median(values)``: the middle value, or the mean of the two middle ones. ``overwrite``: as numpy's
    ``overwrite_input``, ``values`` is partitioned in place rather than copied (for the replay's largest
    arrays)."""
    half = values.size // 2
    kth = half if values.size % 2 else (half - 1, half)
    if overwrite:
        values.partition(kth)
        ordered = values
    else:
        ordered = np.partition(values, kth)
    if values.size % 2:
        return float(ordered[half])
    return (float(ordered[half - 1]) + float(ordered[half])) / 2


def p95(values):
    """``np.percentile(values, 95)``: linear between the two nearest ranks."""
    count = values.size
    virtual = (count - 1) * 0.95
    below = math.floor(virtual)
    if below >= count - 1:
        return values.max()
    ordered = np.partition(values, (below, below + 1))
    low, high = ordered[below], ordered[below + 1]
    weight, step = virtual - below, high - low
    return high - step * (1 - weight) if weight >= 0.5 else low + step * weight
