"""The estimates the replay compares, by name: an explicit registry.

Each entry is a ``ReplayPredictor``: ``window`` is how many history rows it
reads (0: none) and ``estimate(history, job)`` returns the soft walltime in
seconds, or None when the job would get none. ``history`` is the job's user's
completed jobs, newest first (``HistoryRow``s), exactly what a hook would see.
v1-v3, v3-deployed are the hooks' own code (predictor.algorithms).

``reads`` names the Job fields ``estimate`` looks at (None: not declared).
With the history, they decide the estimate, so a replay may reuse one value
for jobs of a user that agree on them while the user's history is unchanged.

``algorithm`` is the ``predictor.algorithms.Algorithm`` that ``estimate``
calls, if any: knowing it, a replay may compute the same values for a whole
trace at once. ``description`` says what it is in plain words, with the
parameters it runs with, for the legends.

``learner``, if given, makes the predictor learn over a whole run instead
of reading a user's history: ``learner(jobs)``, with the run's jobs, gives an
object whose ``observe(job, end_time, runtime_s)`` is called at each
completion and whose ``estimate(job, now)`` gives the soft walltime at each
prediction (Rubio et al.'s AdaBoost, ``adaboost``; the performance-model tool,
``model``). Its ``estimate(history, job)`` is not used.

A command line's spec (``v3``, ``tang:percentile=70``) is resolved once, by
its option's type, into a ``ReplayPredictor``; that object is what the
replays, the simulation's worker processes and the legends receive. A sweep's
cells name their predictor by its spec, which is how it travels through the
sweep's files to PBS subjobs; ``resolve`` keeps what it resolved, so a
process parses each spec once.
"""

import functools
from fractions import Fraction
from operator import attrgetter
from typing import Callable, NamedTuple, Optional, Tuple

from predictor.algorithms import PARAMETERS, REGISTRY, Algorithm, clamp, make_algorithm
from predictor.errors import ConfigError, UsageError

from .adaboost import AdaBoostModel
from .performance_model import PerformanceModel

__all__ = ["ReplayPredictor", "PREDICTORS", "LEARNED", "ACCURACY_PREDICTORS", "history_capacity", "resolve",
           "predictor_list", "DESCRIPTIONS", "describe", "predictor_legend", "resolved", "history_project",
           "owner_of"]


class ReplayPredictor(NamedTuple):
    """A named estimate: ``estimate(history, job) -> seconds or None``.

    ``by_project``: ``history`` is the job's project's (every user's jobs, ``history_project``), not its user's.
    ``learner``: made once per run with the run's jobs, it learns from every completion (see the module).
    """

    name: str
    window: int
    estimate: Callable
    reads: Optional[Tuple[str, ...]] = None
    algorithm: Optional[Algorithm] = None
    description: str = ""
    by_project: bool = False
    learner: Optional[Callable] = None

    def __reduce__(self):
        """A resolved predictor travels to another process as its spec (its estimate is a closure)."""
        return resolve, (self.name,)


def _algorithm(name, label=None, **parameters):
    try:
        algorithm = make_algorithm(name, **parameters)
    except ConfigError as err:
        raise UsageError(str(err)) from None
    function = algorithm.bound()
    description = _described(algorithm)
    spec = REGISTRY[name]
    if spec.reads_project:
        return ReplayPredictor(label or name, algorithm.window, _with_project(function, algorithm.by_project),
                               ("walltime_s", "submit_time", "project", "group"), algorithm, description,
                               algorithm.by_project)
    if not spec.reads_submit_time:
        return ReplayPredictor(label or name, algorithm.window, lambda history, job: function(history, job.walltime_s),
                               ("walltime_s",), algorithm, description)
    # A time window counts back from the job's submission (the hooks: its ctime).
    return ReplayPredictor(label or name, algorithm.window,
                           lambda history, job: function(history, job.walltime_s, submit_time=job.submit_time),
                           ("walltime_s", "submit_time"), algorithm, description)


def history_project(job):
    """The project Tang et al.'s keys compare: the job's PBS project; for a trace without projects (SWF), its
    group, the Parallel Workloads Archive's nearest stand-in; None when it has neither."""
    return job.project if job.project is not None else job.group


def owner_of(predictor):
    """Whose history ``predictor`` reads, as a function of the job: its user's (a C attribute getter, asked for
    every job), or (``by_project``) its project's."""
    return history_project if predictor.by_project else attrgetter("user")


def _with_project(function, by_project):
    """tang's estimate: the job's project passed along; with key project, no history for a job without one."""
    def estimate(history, job):
        project = history_project(job)
        if by_project and project is None:
            history = ()
        return function(history, job.walltime_s, submit_time=job.submit_time, project=project)
    return estimate


def _described(algorithm):
    """The registry's description of ``algorithm``, with the parameters it runs with."""
    parameters = algorithm._asdict()
    return REGISTRY[algorithm.name].description.format(reserve_min="{:g}".format(parameters["reserve_s"] / 60),
                                                       **parameters)


def _clairvoyant(history, job):
    """The true runtime, as PBS could use it: within [1, walltime]."""
    return clamp(job.runtime_s, job.walltime_s if job.walltime_s and job.walltime_s >= 1 else None)


CORRECTION_ONLY_S = 600
"""Rubio et al.'s correction-only estimate: 10 minutes for every job."""


def _ten_minutes(history, job):
    """Rubio et al.'s correction-only start: 10 minutes, as PBS could use it (within [1, walltime])."""
    return clamp(CORRECTION_ONLY_S, job.walltime_s if job.walltime_s and job.walltime_s >= 1 else None)


DESCRIPTIONS = {
    "user": "the user's own walltime (Resource_List.walltime), no prediction",
    "ten-minutes": "Rubio et al.'s correction-only estimate: 10 minutes for every job (at most its walltime), "
                   "for the simulation's --extension simple or power to correct",
    "recorded": "the soft walltime the hooks set, as recorded in the accounting log",
    "clairvoyant": "the true runtime (within [1 s, walltime]), known in advance: the ideal to compare with",
    "adaboost": "Rubio et al.'s regression: scikit-learn's AdaBoost (defaults, random_state={seed}) on user, "
                "walltime and requested processors of every job completed before the prediction, refitted every "
                "{refit_hours} h (ours; 0: at each prediction), within [1 s, walltime]",
    "model": "performance-model estimates (each runtime class's longest runtime, error at most {error_pct:g} %) "
             "for {adoption_pct:g} % of the users drawn with seed={seed}; the others' own walltimes",
}
"""The replay's own predictors in plain words (the algorithms' are in ``predictor.algorithms.REGISTRY``)."""

def _unused(history, job):
    raise TypeError("a learning predictor estimates through its learner")


def _whole(text):
    return int(text)


def _fraction(text):
    value = Fraction(text)
    if value.denominator > 10 ** 6:
        raise ValueError(text)
    return value


LEARNED = {
    "adaboost": {"seed": (_whole, 0, "a whole number >= 0", lambda value: value >= 0),
                 "refit_hours": (_whole, 24, "a whole number of hours >= 0", lambda value: value >= 0)},
    "model": {"error": (_fraction, Fraction(1, 10), "a number >= 0 (0.1: 10 %)", lambda value: value >= 0),
              "adoption": (_fraction, Fraction(1, 5), "a number from 0 to 1 (0.2: 20 % of the users)",
                           lambda value: 0 <= value <= 1),
              "seed": (_whole, 0, "a whole number >= 0", lambda value: value >= 0)},
}
"""The learning predictors' parameters: ``name: (parse, default, what it must be, check)``."""


def _learned(name, label, parameters):
    values = {parameter: parameters.get(parameter, default) for parameter, (_, default, _, _) in LEARNED[name].items()}
    if name == "adaboost":
        learner = AdaBoostModel(values["seed"], values["refit_hours"] * 3600)
        description = DESCRIPTIONS[name].format(**values)
    else:
        learner = PerformanceModel(values["error"], values["adoption"], values["seed"])
        description = DESCRIPTIONS[name].format(error_pct=float(values["error"] * 100),
                                                adoption_pct=float(values["adoption"] * 100), seed=values["seed"])
    return ReplayPredictor(label, 0, _unused, description=description, learner=learner)


def _learned_parameters(spec, rest):
    """The ``param=value[:param=value...]`` of a learning predictor's ``spec`` as a dict."""
    known, parameters = LEARNED[spec.partition(":")[0]], {}
    for pair in rest.split(":"):
        parameter, equals, text = pair.partition("=")
        if parameter not in known or not equals or parameter in parameters:
            raise UsageError("{}: {!r} is not parameter=value with a distinct parameter among {}".format(
                spec, pair, ", ".join(known)))
        parse, _, wanted, check = known[parameter]
        try:
            value = parse(text)
        except (ValueError, ZeroDivisionError):
            value = None
        if value is None or not check(value):
            raise UsageError("{}: {} must be {}, not {!r}".format(spec, parameter, wanted, text))
        parameters[parameter] = value
    return parameters


PREDICTORS = dict(
    {"user": ReplayPredictor("user", 0, lambda history, job: job.walltime_s if job.walltime_s else None,
                             description=DESCRIPTIONS["user"])},
    **{name: _algorithm(name) for name in REGISTRY},
    recorded=ReplayPredictor("recorded", 0, lambda history, job: job.soft_walltime_s,
                             description=DESCRIPTIONS["recorded"]),
    **{"ten-minutes": ReplayPredictor("ten-minutes", 0, _ten_minutes, description=DESCRIPTIONS["ten-minutes"])},
    clairvoyant=ReplayPredictor("clairvoyant", 0, _clairvoyant, description=DESCRIPTIONS["clairvoyant"]))
"""Every predictor the replay knows: the hooks' algorithms (``predictor.algorithms.REGISTRY``) with the
replay's own yardsticks around them, and the learning predictors with their defaults."""
PREDICTORS.update((name, _learned(name, name, {})) for name in LEARNED)

ACCURACY_PREDICTORS = ("user", "v1", "v2", "v3", "recorded")
"""The accuracy replay's default set (clairvoyant would be trivially exact there)."""


def describe(spec):
    """``spec`` in plain words, with the parameters it runs with (``NAME:param=value`` or the defaults)."""
    return resolve(spec).description


def predictor_legend(predictors):
    """One legend line per resolved predictor: ``name: what it is``."""
    return tuple("{}: {}".format(predictor.name, predictor.description) for predictor in predictors)


def history_capacity(predictors):
    """Rows per user a MemoryHistory must keep to serve ``predictors``."""
    return max([p.window for p in predictors] + [1])


@functools.lru_cache(maxsize=None)
def resolve(spec):
    """The predictor a command line names: a registry name, or ``ALGORITHM:param=value[:param=value...]``.

    ``tang:percentile=70:window_days=14`` is tang with those parameters, named
    by the spec itself in the outputs. UsageError says what is wrong.
    """
    if spec in PREDICTORS:
        return PREDICTORS[spec]
    name, _, rest = spec.partition(":")
    if name in LEARNED and rest:
        return _learned(name, spec, _learned_parameters(spec, rest))
    if name not in REGISTRY or not rest:
        raise UsageError("unknown predictor {!r}: give one of {}, or ALGORITHM:parameter=value with ALGORITHM "
                         "one of {}".format(spec, ", ".join(PREDICTORS), ", ".join(REGISTRY)))
    return _algorithm(name, spec, **_parameters(spec, rest))


def _parameters(spec, rest):
    """The ``param=value[:param=value...]`` of ``spec`` as a dict."""
    parameters = {}
    for pair in rest.split(":"):
        parameter, equals, text = pair.partition("=")
        if parameter not in PARAMETERS or not equals or parameter in parameters:
            raise UsageError("{}: {!r} is not parameter=value with a distinct parameter among {}".format(
                spec, pair, ", ".join(PARAMETERS)))
        parameters[parameter] = _value(spec, parameter, text)
    return parameters


def _value(spec, parameter, text):
    if PARAMETERS[parameter].choices:
        return text
    try:
        return int(text)
    except ValueError:
        raise UsageError("{}: {} must be a whole number, not {!r}".format(spec, parameter, text)) from None


def predictor_list(text):
    """Comma-separated predictor specs, each resolved: a tuple of distinct ``ReplayPredictor``s."""
    specs = tuple(spec.strip() for spec in text.split(",") if spec.strip())
    if not specs or len(set(specs)) != len(specs):
        raise UsageError("give distinct names among {} (comma-separated), not {!r}".format(
            ", ".join(PREDICTORS), text))
    return tuple(resolve(spec) for spec in specs)


def resolved(specs):
    """The ``ReplayPredictor`` of each of ``specs``, in order."""
    return tuple(resolve(spec) for spec in specs)
