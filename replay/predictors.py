"""The estimates the replay compares, by name: an explicit registry.

Each entry is a ``ReplayPredictor``: ``window`` is how many history rows it
reads (0: none) and ``estimate(history, job)`` returns the soft walltime in
seconds, or None when the job would get none. ``history`` is the job's user's
completed jobs, newest first (``HistoryRow``s), exactly what a hook would see.
v1-v3, v3-deployed are the hooks' own code (predictor.algorithms).

``reads`` names the Job fields ``estimate`` looks at (None: not declared).
With the history, they decide the estimate, so a replay may reuse one value
for jobs of a user that agree on them while the user's history is unchanged.
"""

from typing import Callable, NamedTuple, Optional, Tuple

from predictor.algorithms import ALGORITHMS, make_algorithm

__all__ = ["ReplayPredictor", "PREDICTORS", "ACCURACY_PREDICTORS", "history_capacity", "resolve", "predictor_list",
           "DESCRIPTIONS", "describe", "predictor_legend"]


class ReplayPredictor(NamedTuple):
    """A named estimate: ``estimate(history, job) -> seconds or None``."""

    name: str
    window: int
    estimate: Callable
    reads: Optional[Tuple[str, ...]] = None


def _algorithm(name, label=None, **parameters):
    algorithm = make_algorithm(name, **parameters)
    if algorithm.window_days is None:
        return ReplayPredictor(label or name, algorithm.window,
                               lambda history, job: algorithm.predict(history, job.walltime_s), ("walltime_s",))
    # A time window counts back from the job's submission (the hooks: its ctime).
    return ReplayPredictor(label or name, algorithm.window,
                           lambda history, job: algorithm.predict(history, job.walltime_s, job.submit_time),
                           ("walltime_s", "submit_time"))


def _clairvoyant(history, job):
    """The true runtime, as PBS could use it: within [1, walltime]."""
    if job.walltime_s is None or job.walltime_s < 1:
        return max(job.runtime_s, 1)
    return min(max(job.runtime_s, 1), job.walltime_s)


PREDICTORS = {
    "user": ReplayPredictor("user", 0, lambda history, job: job.walltime_s if job.walltime_s else None),
    "v1": _algorithm("v1"),
    "v2": _algorithm("v2"),
    "v3": _algorithm("v3"),
    "v3-deployed": _algorithm("v3-deployed"),
    "tang": _algorithm("tang"),
    "recorded": ReplayPredictor("recorded", 0, lambda history, job: job.soft_walltime_s),
    "clairvoyant": ReplayPredictor("clairvoyant", 0, _clairvoyant),
}

ACCURACY_PREDICTORS = ("user", "v1", "v2", "v3", "recorded")
"""The accuracy replay's default set (clairvoyant would be trivially exact there)."""


DESCRIPTIONS = {
    "user": "the user's own walltime (Resource_List.walltime), no prediction",
    "v1": "Chlumsky & Klusacek v1: mean runtime of the user's last {window} jobs, at most the walltime",
    "v2": "Chlumsky & Klusacek v2: v1 over the last {window} jobs plus a {reserve_min} min reserve",
    "v3": "Chlumsky & Klusacek v3: the walltime scaled by the highest runtime/walltime of the user's last "
          "{window} jobs, plus {reserve_min} min",
    "v3-deployed": "v3 as the authors' production hook runs it: the scaled walltime doubled for walltimes over 24 h",
    "tang": "Tang et al.: the walltime x the {percentile}th percentile of runtime/walltime of the user's jobs that "
            "ended in the last {window_days} days (the walltime with fewer than {min_history})",
    "recorded": "the soft walltime the hooks set, as recorded in the accounting log",
    "clairvoyant": "the true runtime (within [1 s, walltime]), known in advance: the ideal to compare with",
}
"""Predictor name -> what it is in plain words; ``{...}`` fields are the algorithm's default parameters."""


def describe(spec):
    """``spec`` in plain words, with the parameters it runs with (``NAME:param=value`` or the defaults)."""
    name, _, rest = spec.partition(":")
    if name not in ALGORITHMS:
        return DESCRIPTIONS[name]
    parameters = make_algorithm(name, **_parameters(spec, rest) if rest else {})._asdict()
    return DESCRIPTIONS[name].format(reserve_min="{:g}".format(parameters["reserve_s"] / 60), **parameters)


def predictor_legend(specs):
    """One legend line per predictor spec: ``name: what it is``."""
    return tuple("{}: {}".format(spec, describe(spec)) for spec in specs)


def history_capacity(predictors):
    """Rows per user a MemoryHistory must keep to serve ``predictors``."""
    return max([p.window for p in predictors] + [1])


_PARAMETERS = {"window": int, "reserve_s": int, "percentile": int, "window_days": int, "min_history": int, "key": str}
"""What ``NAME:parameter=value`` may set, and how its value is read."""


def resolve(spec):
    """The predictor a command line names: a registry name, or ``ALGORITHM:param=value[:param=value...]``.

    ``tang:percentile=70:window_days=14`` is tang with those parameters, named
    by the spec itself in the outputs. ValueError says what is wrong.
    """
    if spec in PREDICTORS:
        return PREDICTORS[spec]
    name, _, rest = spec.partition(":")
    if name not in ALGORITHMS or not rest:
        raise ValueError("unknown predictor {!r}: give one of {}, or ALGORITHM:parameter=value with ALGORITHM "
                         "one of {}".format(spec, ", ".join(PREDICTORS), ", ".join(ALGORITHMS)))
    return _algorithm(name, spec, **_parameters(spec, rest))


def _parameters(spec, rest):
    """The ``param=value[:param=value...]`` of ``spec`` as a dict."""
    parameters = {}
    for pair in rest.split(":"):
        parameter, equals, text = pair.partition("=")
        if parameter not in _PARAMETERS or not equals or parameter in parameters:
            raise ValueError("{}: {!r} is not parameter=value with a distinct parameter among {}".format(
                spec, pair, ", ".join(_PARAMETERS)))
        parameters[parameter] = _value(spec, parameter, text)
    return parameters


def _value(spec, parameter, text):
    if _PARAMETERS[parameter] is str:
        return text
    try:
        return int(text)
    except ValueError:
        raise ValueError("{}: {} must be a whole number, not {!r}".format(spec, parameter, text)) from None


def predictor_list(text):
    """Comma-separated predictor specs, each checked by ``resolve``; a tuple of distinct specs."""
    specs = tuple(spec.strip() for spec in text.split(",") if spec.strip())
    if not specs or len(set(specs)) != len(specs):
        raise ValueError("give distinct names among {} (comma-separated), not {!r}".format(
            ", ".join(PREDICTORS), text))
    for spec in specs:
        resolve(spec)
    return specs
