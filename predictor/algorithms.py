"""The soft-walltime predictors v1, v2 and v3 of Chlumsky & Klusacek, "Improving Accuracy of
Walltime Estimates in PBS Professional using Soft Walltimes", and v3-deployed, the variant
their production hook runs (the scaled walltime doubled for walltimes over 24 h, none set
when it is 0); and the
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
  "when a job is submitted"); R above 1 counts as 1, as the paper does; every
  job in the window is read (no row limit); a job without a project matches
  past jobs without one.
"""

import functools
from fractions import Fraction
from typing import Callable, Dict, NamedTuple, Optional, Tuple

from .errors import ConfigError

__all__ = ["RESERVE_S", "LONG_WALLTIME_S", "EVERY_ROW", "v1", "v2", "v3", "v3_deployed", "tang", "TANG_KEYS",
           "nearest_rank", "tang_adjusted",
           "Parameter",
           "PARAMETERS", "AlgorithmSpec", "REGISTRY", "DEFAULT_ALGORITHM", "ALGORITHMS", "Algorithm", "make_algorithm"]

RESERVE_S = 900
"""The paper's fixed reserve: 15 minutes."""

DAY_S = 86400

LONG_WALLTIME_S = 86400
"""v3-deployed doubles the scaled walltime of jobs asking for more than this (24 h)."""


def clamp(seconds, walltime_s):
    """Bring a soft walltime into PBS's legal range ``[1, walltime]`` (just >= 1 s when ``walltime_s`` is None).

    The one clamp: the predictors, the hooks and the replay use it.
    """
    at_least_1s = seconds if seconds >= 1 else 1  # max() and min() would give the same, slower: a hot path
    return at_least_1s if walltime_s is None or at_least_1s <= walltime_s else walltime_s


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
    """v3 as the authors' production hook runs it: the scaled walltime doubled above 24 h, and no soft walltime
    at all (None) when the scaled walltime ``int(walltime x ratio)`` is 0."""
    return _scaled_by_max_ratio(history, walltime_s, window, reserve_s, double_long=True)


def _scaled_by_max_ratio(history, walltime_s, window, reserve_s, double_long):
    if not _has_walltime(walltime_s):
        return None
    ratio = _max_ratio(history, window)
    if ratio is None:
        return walltime_s
    scaled = ratio[0] * walltime_s // ratio[1]
    if double_long:
        if scaled == 0:
            return None  # the production hook tests the scaled walltime for truth: 0 sets nothing
        if walltime_s > LONG_WALLTIME_S:
            scaled *= 2
    return clamp(scaled + reserve_s, walltime_s)


EVERY_ROW = 2 ** 31 - 1
"""tang's window: it reads every eligible job (the paper sets no row limit), so its row limit is the largest
the history's integer columns can count."""

_PROJECT_KEYS = ("project", "user+project", "user+project+walltime")
_WALLTIME_KEYS = ("user+walltime", "user+project+walltime")


def _similar(row, walltime_s, project, key):
    """Whether the past job ``row`` shares the key's attributes with the job (the user: by the history's owner)."""
    if key in _PROJECT_KEYS and row.project != project:
        return False
    return key not in _WALLTIME_KEYS or row.walltime_s == walltime_s


def _usage_fractions(history, walltime_s, since, key, project):
    """Tang et al.'s R = runtime/walltime (at most 1) of the eligible rows, in history order."""
    ratios = []
    for row in history:
        if since is not None and row.end_time < since:
            break  # newest first: every row after this one is older still
        past_walltime = row.walltime_s
        if past_walltime and past_walltime > 0 and _similar(row, walltime_s, project, key):
            ratios.append(Fraction(min(row.runtime_s, past_walltime), past_walltime))
    return ratios


def tang(history, walltime_s, submit_time=None, project=None, percentile=85, window_days=30, min_history=10,
         key="user+project+walltime", min_ratio_pct=0, reserve_s=0, window=EVERY_ROW):
    """Tang et al.: walltime x A, A the ``percentile``-th percentile of R over the eligible past jobs.

    ``history``: the past jobs of the job's user, newest first (of its project for key ``project``).
    Eligible: those that ended at most ``window_days`` days before
    ``submit_time`` (None: no time bound) and share the ``key``'s attributes
    with the job (its ``project``, its walltime). Fewer than ``min_history``
    of them: the walltime (no adjustment). The percentile is the nearest
    rank, ``ceil(percentile/100 x n)``-th smallest, so it is one of the
    observed ratios and grows with ``percentile``. ``min_ratio_pct``: A is at
    least this many hundredths (the paper's optional threshold, 50; 0: none).
    """
    if not _has_walltime(walltime_s):
        return None
    since = None if submit_time is None else submit_time - window_days * DAY_S
    ratios = _usage_fractions(history[:window], walltime_s, since, key, project)
    ratios.sort()
    ratio = ratios[nearest_rank(percentile, len(ratios)) - 1] if ratios else None
    return tang_adjusted(len(ratios), ratio, walltime_s, min_history, min_ratio_pct, reserve_s)


def nearest_rank(percentile, count):
    """The rank (from 1, smallest first) of the nearest-rank ``percentile`` of ``count`` values:
    ``ceil(percentile/100 x count)``, in integers."""
    return -(-percentile * count // 100)


def tang_adjusted(eligible, ratio, walltime_s, min_history=10, min_ratio_pct=0, reserve_s=0):
    """tang's soft walltime from the number of eligible past jobs and their percentile R (a ``Fraction``; None
    when there is none): what a store that computes the percentile itself (the hooks' PostgreSQL) gives."""
    if not eligible or eligible < min_history:
        return walltime_s
    ratio = max(ratio, Fraction(min_ratio_pct, 100))
    scaled = ratio.numerator * walltime_s // ratio.denominator
    return clamp(scaled + reserve_s, walltime_s)


TANG_KEYS = ("user+project+walltime", "user+project", "user", "project", "user+walltime")
"""Tang et al.'s similarity keys: their triple key (recommended), double key, and the single keys user and project;
then ours, the user's jobs with the same walltime (the triple key without the project)."""


class Parameter(NamedTuple):
    """A predictor parameter: what it means, and its legal values (a whole-number range, or ``choices``)."""

    meaning: str
    low: int = 0
    high: int = 0
    choices: Tuple[str, ...] = ()


PARAMETERS = {
    "window": Parameter("history window: most past jobs read", 1, 10 ** 6),
    "reserve_s": Parameter("reserve in seconds, added to the estimate", 0, 10 ** 9),
    "percentile": Parameter("percentile of runtime/walltime", 1, 100),
    "window_days": Parameter("only jobs that ended this many days before submission", 1, 36500),
    "min_history": Parameter("fewer eligible jobs than this leave the walltime; at most the window", 0, 10 ** 6),
    "key": Parameter("which past jobs are similar: those sharing the user, project and/or walltime",
                     choices=TANG_KEYS),
    "min_ratio_pct": Parameter("the adjustment ratio A is at least this many hundredths (0: no lower bound)", 0, 100),
}
"""Every parameter any predictor takes, in ``Algorithm`` field order. Which predictor takes which, and its
default, is the predictor function's own signature."""

_JOB_INPUTS = ("history", "walltime_s", "submit_time", "project")
"""A predictor function's arguments that describe the job, not the predictor."""


class AlgorithmSpec(NamedTuple):
    """A registered predictor: its function, its parameters with their defaults, what it is in one line.

    ``fixed``: parameters the predictor has no use for, held at the one value that means "none"
    (v1's reserve is 0: v2 is v1 with a reserve; tang's row limit is EVERY_ROW). ``reads_submit_time``:
    it counts a time window back from the job's submission; ``reads_project``: it compares projects.
    ``reads_max_ratio_row``: it reads the history only through one row of highest runtime/walltime among the
    window's (any such row: equal ratios give equal estimates), so that row alone, as a one-row history, gives
    the same estimate as the window.
    """

    function: Callable
    defaults: Dict[str, object]
    description: str
    fixed: Dict[str, object]
    reads_submit_time: bool
    reads_project: bool = False
    reads_max_ratio_row: bool = False

    def settable(self, parameter):
        """True when ``parameter`` is one this predictor can be given another value of."""
        return parameter in self.defaults and parameter not in self.fixed


def _spec(function, description, reads_max_ratio_row=False, **fixed):
    """The registry entry of ``function``: its keyword defaults, read from the function itself (plain
    attributes: the hook side has no use for the inspect module), and the ``fixed`` ones."""
    code = function.__code__
    names = code.co_varnames[:code.co_argcount]
    defaults = dict(zip(names[len(names) - len(function.__defaults__):], function.__defaults__))
    defaults = {name: value for name, value in defaults.items() if name not in _JOB_INPUTS}
    defaults.update(fixed)
    return AlgorithmSpec(function, defaults, description, fixed, "submit_time" in names, "project" in names,
                         reads_max_ratio_row)


REGISTRY = {
    "v1": _spec(v1, "Chlumsky & Klusacek v1: mean runtime of the user's last {window} jobs, at most the walltime",
                reserve_s=0),
    "v2": _spec(v2, "Chlumsky & Klusacek v2: v1 over the last {window} jobs plus a {reserve_min} min reserve"),
    "v3": _spec(v3, "Chlumsky & Klusacek v3: the walltime scaled by the highest runtime/walltime of the user's "
                    "last {window} jobs, plus {reserve_min} min", reads_max_ratio_row=True),
    "v3-deployed": _spec(v3_deployed, "v3 as the authors' production hook runs it: the scaled walltime doubled for "
                                      "walltimes over 24 h", reads_max_ratio_row=True),
    "tang": _spec(tang, "Tang et al.: the walltime x the {percentile}th percentile of runtime/walltime of every "
                        "job of the same {key} that ended in the last {window_days} days (the walltime with fewer "
                        "than {min_history}; lower bound on the ratio {min_ratio_pct} %)", window=EVERY_ROW),
}
"""The registry: predictor name -> ``AlgorithmSpec``. The hooks' config, both command lines and the
documentation's tables read it; ``{...}`` in a description are the predictor's parameters."""

DEFAULT_ALGORITHM = "v3"
"""The predictor the hooks and ``python -m predictor predict`` use unless told otherwise."""

ALGORITHMS = {name: spec.function for name, spec in REGISTRY.items()}
"""Predictor name -> its function, with the function's default parameters."""


class Algorithm(NamedTuple):
    """A predictor with its parameters fixed; ``window`` is how many rows it reads at most.

    ``percentile``, ``window_days``, ``min_history``, ``key`` and ``min_ratio_pct`` are Tang's (None for the
    others).
    """

    name: str
    window: int
    reserve_s: int
    percentile: Optional[int] = None
    window_days: Optional[int] = None
    min_history: Optional[int] = None
    key: Optional[str] = None
    min_ratio_pct: Optional[int] = None

    def predict(self, history, walltime_s, submit_time=None, project=None):
        """The soft walltime in seconds, or None when none should be set (``submit_time``: epoch seconds;
        ``project``: the job's, for the keys that compare projects)."""
        spec = REGISTRY[self.name]
        if spec.reads_project:
            return self.bound()(history, walltime_s, submit_time=submit_time, project=project)
        if spec.reads_submit_time:
            return self.bound()(history, walltime_s, submit_time=submit_time)
        return self.bound()(history, walltime_s)

    @property
    def by_project(self):
        """True when the history to read is the job's project's (every user's), not its user's."""
        return self.key == "project"

    def bound(self):
        """The predictor's function with this algorithm's parameters fixed:
        ``function(history, walltime_s[, submit_time=...][, project=...])``, each only for those that read it.
        Made once, it spares a caller that predicts for many jobs the parameter lookups of ``predict``."""
        spec = REGISTRY[self.name]
        return functools.partial(spec.function, **{name: getattr(self, name) for name in spec.defaults
                                                   if name not in spec.fixed})

    def since(self, submit_time):
        """The oldest end time this predictor reads for a job submitted at ``submit_time`` (None: any)."""
        if self.window_days is None or submit_time is None:
            return None
        return submit_time - self.window_days * DAY_S


def make_algorithm(name, **parameters):
    """Validate parameters (None: the predictor's default) and return an ``Algorithm``.

    ConfigError (a ValueError) names the bad parameter.
    """
    if not isinstance(name, str) or name not in REGISTRY:
        raise ConfigError("unknown algorithm {!r}: choose one of {}".format(name, ", ".join(sorted(REGISTRY))))
    spec = REGISTRY[name]
    given = {parameter: value for parameter, value in parameters.items() if value is not None}
    for parameter, value in sorted(given.items()):
        _check_applies(name, spec, parameter, value)
    values = dict(spec.defaults, **given)
    for parameter, value in sorted(values.items()):
        if parameter not in spec.fixed:
            _check_value(parameter, value)
    if "min_history" in values and values["min_history"] > values["window"]:
        raise ConfigError("min_history must be <= window ({}), not {!r}".format(values["window"],
                                                                               values["min_history"]))
    return Algorithm(name, **values)


def _check_applies(name, spec, parameter, value):
    if parameter not in PARAMETERS:
        raise ConfigError("{} is not a predictor parameter (known: {})".format(parameter, ", ".join(PARAMETERS)))
    if parameter not in spec.defaults:
        raise ConfigError("{} does not apply to {} (it is a parameter of {})".format(
            parameter, name, ", ".join(sorted(n for n in REGISTRY if parameter in REGISTRY[n].defaults))))
    if not spec.settable(parameter) and value != spec.fixed[parameter]:
        raise ConfigError("{} has no {}: {} is always {!r} for it (predictors with one: {})".format(
            name, parameter.partition("_")[0], parameter, spec.fixed[parameter],
            ", ".join(sorted(n for n in REGISTRY if REGISTRY[n].settable(parameter)))))


def _check_value(parameter, value):
    allowed = PARAMETERS[parameter]
    if allowed.choices:
        if not isinstance(value, str) or value not in allowed.choices:
            raise ConfigError("{} must be one of {}, not {!r}".format(parameter, ", ".join(allowed.choices), value))
    elif isinstance(value, bool) or not isinstance(value, int) or not allowed.low <= value <= allowed.high:
        raise ConfigError("{} must be an integer >= {} and <= {}, not {!r}".format(
            parameter, allowed.low, allowed.high, value))
