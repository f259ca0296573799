"""The soft-walltime predictors v1, v2 and v3 of Chlumsky & Klusacek, "Improving Accuracy of
Walltime Estimates in PBS Professional using Soft Walltimes", and v3-deployed, the variant
their production hook runs (the scaled walltime doubled for walltimes over 24 h); and the
walltime adjustment of Tang, Desai, Buettner & Lan, "Job Scheduling with Adjusted Runtime
Estimates on Production Supercomputers" (``tang``).

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
* Ratios are compared exactly (integer cross-multiplication, ``Fraction``), so the
  answer does not depend on floating point.
* tang: the time window is counted back from the job's submission (the paper's
  "when a job is submitted"); R above 1 counts as 1, as the paper does.
"""

from fractions import Fraction
from typing import NamedTuple, Optional

__all__ = ["RESERVE_S", "LONG_WALLTIME_S", "v1", "v2", "v3", "v3_deployed", "tang", "TANG_KEYS", "ALGORITHMS", "Algorithm", "make_algorithm"]

RESERVE_S = 900
"""The paper's fixed reserve: 15 minutes."""

DAY_S = 86400

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
    return _scaled_by_max_ratio(history, walltime_s, window, reserve_s, double_long=False)


def v3_deployed(history, walltime_s, window=15, reserve_s=RESERVE_S):
    """v3 as the authors' production hook runs it: the scaled walltime doubled above 24 h."""
    return _scaled_by_max_ratio(history, walltime_s, window, reserve_s, double_long=True)


def _scaled_by_max_ratio(history, walltime_s, window, reserve_s, double_long):
    if not _has_walltime(walltime_s):
        return None
    ratio = _max_ratio(history, window)
    if ratio is None:
        return walltime_s
    scaled = ratio[0] * walltime_s // ratio[1]
    if double_long and walltime_s > LONG_WALLTIME_S:
        scaled *= 2
    return clamp(scaled + reserve_s, walltime_s)


def _usage_fractions(history, walltime_s, since, key, window):
    """Tang et al.'s R = runtime/walltime (at most 1) of the eligible rows, in history order."""
    ratios = []
    for row in history[:window]:
        if since is not None and row.end_time < since:
            break  # newest first: every row after this one is older still
        past_walltime = row.walltime_s
        if past_walltime and past_walltime > 0 and (key == "user" or past_walltime == walltime_s):
            ratios.append(Fraction(min(row.runtime_s, past_walltime), past_walltime))
    return ratios


def tang(history, walltime_s, submit_time=None, percentile=85, window_days=30, min_history=10, key="user",
         reserve_s=0, window=1000):
    """Tang et al.: walltime x the ``percentile``-th percentile of R over the eligible past jobs.

    Eligible: among the newest ``window`` rows, those that ended at most
    ``window_days`` days before ``submit_time`` (None: no time bound) and, for
    key ``user+walltime``, asked for the same walltime. Fewer than
    ``min_history`` of them: the walltime (no adjustment). The percentile is
    the nearest rank, ``ceil(percentile/100 x n)``-th smallest, so it is one of
    the observed ratios and grows with ``percentile``.
    """
    if not _has_walltime(walltime_s):
        return None
    since = None if submit_time is None else submit_time - window_days * DAY_S
    ratios = _usage_fractions(history, walltime_s, since, key, window)
    if not ratios or len(ratios) < min_history:
        return walltime_s
    ratios.sort()
    ratio = ratios[-(-percentile * len(ratios) // 100) - 1]
    scaled = ratio.numerator * walltime_s // ratio.denominator
    return clamp(scaled + reserve_s, walltime_s)


ALGORITHMS = {"v1": v1, "v2": v2, "v3": v3, "v3-deployed": v3_deployed, "tang": tang}
"""The registry: name -> predictor function."""

_DEFAULTS = {
    "v1": {"window": 2, "reserve_s": 0},
    "v2": {"window": 2, "reserve_s": RESERVE_S},
    "v3": {"window": 15, "reserve_s": RESERVE_S},
    "v3-deployed": {"window": 15, "reserve_s": RESERVE_S},
    "tang": {"window": 1000, "reserve_s": 0, "percentile": 85, "window_days": 30, "min_history": 10, "key": "user"},
}
"""Each algorithm's parameters and their defaults; a parameter not listed does not apply to it."""

TANG_KEYS = ("user", "user+walltime")
"""Tang et al.'s similarity keys the history rows can serve: the user's jobs, or those with the same walltime too."""

_TANG_PARAMETERS = ("percentile", "window_days", "min_history", "key")

_PREDICT = {
    "v1": lambda algorithm, history, walltime_s, submit_time: v1(history, walltime_s, algorithm.window),
    "v2": lambda algorithm, history, walltime_s, submit_time: v2(history, walltime_s, algorithm.window,
                                                                 algorithm.reserve_s),
    "v3": lambda algorithm, history, walltime_s, submit_time: v3(history, walltime_s, algorithm.window,
                                                                 algorithm.reserve_s),
    "v3-deployed": lambda algorithm, history, walltime_s, submit_time: v3_deployed(
        history, walltime_s, algorithm.window, algorithm.reserve_s),
    "tang": lambda algorithm, history, walltime_s, submit_time: tang(
        history, walltime_s, submit_time, algorithm.percentile, algorithm.window_days, algorithm.min_history,
        algorithm.key, algorithm.reserve_s, algorithm.window),
}


class Algorithm(NamedTuple):
    """A predictor with its parameters fixed; ``window`` is how many rows it reads at most.

    ``percentile``, ``window_days``, ``min_history`` and ``key`` are Tang's (None for the others).
    """

    name: str
    window: int
    reserve_s: int
    percentile: Optional[int] = None
    window_days: Optional[int] = None
    min_history: Optional[int] = None
    key: Optional[str] = None

    def predict(self, history, walltime_s, submit_time=None):
        """The soft walltime in seconds, or None when none should be set (``submit_time``: epoch seconds)."""
        return _PREDICT[self.name](self, history, walltime_s, submit_time)

    def since(self, submit_time):
        """The oldest end time this predictor reads for a job submitted at ``submit_time`` (None: any)."""
        if self.window_days is None or submit_time is None:
            return None
        return submit_time - self.window_days * DAY_S


def make_algorithm(name, window=None, reserve_s=None, percentile=None, window_days=None, min_history=None,
                   key=None):
    """Validate parameters and return an ``Algorithm``; ValueError names the bad one."""
    if name not in _DEFAULTS:
        raise ValueError("unknown algorithm {!r}: choose one of {}".format(name, ", ".join(sorted(_DEFAULTS))))
    given = {"window": window, "reserve_s": reserve_s, "percentile": percentile, "window_days": window_days,
             "min_history": min_history, "key": key}
    defaults = _DEFAULTS[name]
    for parameter, value in sorted(given.items()):
        if value is not None and parameter not in defaults:
            raise ValueError("{} does not apply to {} (it is a parameter of {})".format(
                parameter, name, ", ".join(sorted(n for n in _DEFAULTS if parameter in _DEFAULTS[n]))))
    values = {parameter: defaults.get(parameter) if value is None else value for parameter, value in given.items()}
    _check_whole(values["window"], "window", 1, 10 ** 6)
    _check_whole(values["reserve_s"], "reserve_s", 0, 10 ** 9)
    if name == "v1" and values["reserve_s"] != 0:
        raise ValueError("v1 has no reserve; use v2 for a reserve")
    if name == "tang":
        _check_tang(values)
    return Algorithm(name, **values)


def _check_whole(value, parameter, low, high):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError("{} must be an integer >= {}{}, not {!r}".format(
            parameter, low, "" if high is None else " and <= {}".format(high), value))


def _check_tang(values):
    _check_whole(values["percentile"], "percentile", 1, 100)
    _check_whole(values["window_days"], "window_days", 1, 36500)
    _check_whole(values["min_history"], "min_history", 0, values["window"])
    if values["key"] not in TANG_KEYS:
        raise ValueError("key must be one of {}, not {!r}".format(", ".join(TANG_KEYS), values["key"]))
