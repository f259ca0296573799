"""The soft-walltime predictors v1, v2 and v3 of Chlumsky & Klusacek, "Improving Accuracy of
Walltime Estimates in PBS Professional using Soft Walltimes", and v3-deployed, the variant
their production hook runs (the scaled walltime doubled for walltimes over 24 h).

Each is a pure function of the user's most recent completed jobs (``HistoryRow``s,
newest first) and the requested walltime. Decisions the paper leaves open:

* No walltime (``None``) or a walltime under 1 s: no soft walltime (``None``).
* No usable history: the walltime itself.
* Rounding: the mean (v1, v2) and the scaled walltime (v3) are truncated to
  whole seconds before the reserve is added, as the paper's published
  implementation does (``int(walltime * ratio)``); then clamped to
  ``[1, walltime]`` because PBS rejects a soft walltime of 0 or above walltime.
* v3 ratios: the window is the last ``window`` completed jobs, as in the paper's
  query; rows among them without a positive walltime give no ratio (never a
  division). If none gives one, there is no usable history.
* Killed jobs whose runtime exceeds their walltime keep their true ratio (> 1);
  the final ``min(..., walltime)`` caps the prediction.
* Ratios are compared exactly (integer cross-multiplication), so the answer does
  not depend on floating point.
"""

from typing import NamedTuple

__all__ = ["RESERVE_S", "LONG_WALLTIME_S", "v1", "v2", "v3", "v3_deployed", "ALGORITHMS", "Algorithm", "make_algorithm"]

RESERVE_S = 900
"""The paper's fixed reserve: 15 minutes."""

LONG_WALLTIME_S = 86400
"""v3-deployed doubles the scaled walltime of jobs asking for more than this (24 h)."""


def clamp(seconds, walltime_s):
    """Bring a prediction into PBS's legal range ``[1, walltime]``."""
    return min(max(seconds, 1), walltime_s)


def _has_walltime(walltime_s):
    return walltime_s is not None and walltime_s >= 1


def _mean_runtime(history, walltime_s, window, reserve_s):
    if not _has_walltime(walltime_s):
        return None
    rows = history[:window]
    if not rows:
        return walltime_s
    total = sum(row.runtime_s for row in rows)
    mean = total // len(rows)
    return clamp(mean + reserve_s, walltime_s)


def v1(history, walltime_s, window=2):
    """Algorithm 1: mean runtime of the last ``window`` jobs, at most the walltime."""
    return _mean_runtime(history, walltime_s, window, 0)


def v2(history, walltime_s, window=2, reserve_s=RESERVE_S):
    """v1 plus a fixed reserve, at most the walltime."""
    return _mean_runtime(history, walltime_s, window, reserve_s)


def _max_ratio(history, window):
    """``(runtime, walltime)`` of the highest runtime/walltime among the last ``window`` rows, or None."""
    best_runtime, best_walltime = 0, 0
    for row in history[:window]:
        past_walltime = row.walltime_s
        if past_walltime and past_walltime > 0:
            if best_walltime == 0 or row.runtime_s * best_walltime > best_runtime * past_walltime:
                best_runtime, best_walltime = row.runtime_s, past_walltime
    return (best_runtime, best_walltime) if best_walltime else None


def v3(history, walltime_s, window=15, reserve_s=RESERVE_S):
    """Algorithm 2: highest runtime/walltime of the last ``window`` jobs, scaled."""
    if not _has_walltime(walltime_s):
        return None
    ratio = _max_ratio(history, window)
    if ratio is None:
        return walltime_s
    scaled = ratio[0] * walltime_s // ratio[1]
    return clamp(scaled + reserve_s, walltime_s)


def v3_deployed(history, walltime_s, window=15, reserve_s=RESERVE_S):
    """v3 as the authors' production hook runs it: the scaled walltime doubled above 24 h."""
    if not _has_walltime(walltime_s):
        return None
    ratio = _max_ratio(history, window)
    if ratio is None:
        return walltime_s
    scaled = ratio[0] * walltime_s // ratio[1]
    if walltime_s > LONG_WALLTIME_S:
        scaled *= 2
    return clamp(scaled + reserve_s, walltime_s)


ALGORITHMS = {"v1": v1, "v2": v2, "v3": v3, "v3-deployed": v3_deployed}
"""The registry: name -> predictor function."""

_DEFAULTS = {
    "v1": {"window": 2, "reserve_s": 0},
    "v2": {"window": 2, "reserve_s": RESERVE_S},
    "v3": {"window": 15, "reserve_s": RESERVE_S},
    "v3-deployed": {"window": 15, "reserve_s": RESERVE_S},
}


class Algorithm(NamedTuple):
    """A predictor with its parameters fixed; ``window`` is how many rows it reads."""

    name: str
    window: int
    reserve_s: int

    def predict(self, history, walltime_s):
        """The soft walltime in seconds, or None when none should be set."""
        if self.name == "v1":
            return v1(history, walltime_s, self.window)
        return ALGORITHMS[self.name](history, walltime_s, self.window, self.reserve_s)


def make_algorithm(name, window=None, reserve_s=None):
    """Validate parameters and return an ``Algorithm``; ValueError names the bad one."""
    if name not in _DEFAULTS:
        raise ValueError("unknown algorithm {!r}: choose one of {}".format(name, ", ".join(sorted(_DEFAULTS))))
    defaults = _DEFAULTS[name]
    window = defaults["window"] if window is None else window
    reserve_s = defaults["reserve_s"] if reserve_s is None else reserve_s
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be an integer >= 1, not {!r}".format(window))
    if isinstance(reserve_s, bool) or not isinstance(reserve_s, int) or reserve_s < 0:
        raise ValueError("reserve_s must be an integer >= 0, not {!r}".format(reserve_s))
    if name == "v1" and reserve_s != 0:
        raise ValueError("v1 has no reserve; use v2 for a reserve")
    return Algorithm(name, window, reserve_s)
