"""``job_sort_formula``: the expression PBS sorts queued jobs by, highest value first.

What PBS does (OpenPBS 23.06 scheduler, ``formula_evaluate``):

- The formula is a Python expression, evaluated by the scheduler's embedded Python once per job at the
  start of every cycle. Its names are every numeric resource the server defines (the job's
  ``Resource_List`` amount, **0 when the job did not request it**: sizes in kb, durations in seconds) and
  the special names ``eligible_time``, ``queue_priority``, ``job_priority``, ``fairshare_perc`` (also
  spelled ``fair_share_perc``), ``fairshare_tree_usage``, ``fairshare_factor`` and ``accrue_type``. The
  functions and constants of Python's ``math`` module (``sqrt``, ``log``, ``ceil``, ``floor``, ``pow``,
  ``e``, ``pi``...) are there too, and they win over a resource of the same name.
- Values reach the formula as decimal text: whole amounts are Python integers, others are rounded to at
  most four decimals; the fairshare values to six. Arithmetic is Python 3's: ``/`` is true division
  (``ncpus/3`` is 0.333...), ``//`` and ``%`` floor.
- Any error while evaluating a job (division by zero, a math domain error, an overflow) gives that job
  the value **0**, not an error. A result that is not a real number (a negative number to a fractional
  power is complex in Python) is different: the scheduler crashes on it (seen on a real 23.06.06
  server: ``received segv and restarting``, after which it did not come back), so this model raises
  ``SchedulerCrash`` rather than invent a value.
- The value is stored in single precision (a C ``float``) before jobs are compared: two values closer
  than single precision can tell apart (about 7 significant digits) tie, and the tie goes to the next
  sort key (seen on a real 23.06.06 server: with ``walltime`` as the formula, jobs asking 100000001 s
  and 100000002 s ran in submission order, after one asking 100000010 s).
- A job whose stored value is at or below ``job_sort_formula_threshold`` does not run in that cycle.

``qmgr`` rejects a formula naming anything else, so this model accepts exactly: numbers, names,
``+ - * / // % **``, unary ``+ -``, comparisons, ``and``/``or``/``not``, ``x if c else y``, and calls
of the ``math`` functions and ``abs``, ``min``, ``max``, ``round``, ``int``, ``float``. Anything else
(attributes, subscripts, strings, lambdas...) is a ValueError when the formula is compiled.
"""

import ast
import functools
import math
import struct

from .jobs import total

__all__ = ["Formula", "SchedulerCrash", "compile_formula", "formula_values", "stored", "job_value",
           "under_threshold", "as_printed", "float_digits", "resource_values", "BUILTIN_CONSUMABLE", "SPECIAL_NAMES"]

BUILTIN_CONSUMABLE = ("accelerator_memory", "cpupercent", "cput", "energy", "file", "hbmem", "hpm",
                      "max_walltime", "mem", "min_walltime", "mpiprocs", "naccelerators", "nchunk", "ncpus",
                      "nice", "nodect", "ompthreads", "pcap_accelerator", "pcap_node", "pcput", "pmem",
                      "pvmem", "soft_walltime", "ssinodes", "start_time", "vmem", "walltime")
"""PBS's built-in numeric resources: each is a formula name, 0 for a job that did not request it."""

SPECIAL_NAMES = ("eligible_time", "queue_priority", "job_priority", "fairshare_perc", "fair_share_perc",
                 "fairshare_tree_usage", "fairshare_factor", "accrue_type")
"""The names PBS adds to the resources for every job."""

_MATH = {name: getattr(math, name) for name in dir(math) if not name.startswith("_")}
_BUILTINS = {"abs": abs, "min": min, "max": max, "round": round, "int": int, "float": float}
_FUNCTIONS = frozenset(name for name, value in {**_BUILTINS, **_MATH}.items() if callable(value))

_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_UNARY = (ast.UAdd, ast.USub, ast.Not)
_STRUCTURE = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Load,
              ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE) + _BINARY + _UNARY
_FLOAT_DIGITS_ERROR_FACTOR = 1000.0


def _check_node(node):
    """ValueError unless ``node`` is one of the constructs a PBS formula may hold."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ValueError("only numbers are allowed, not {!r}".format(node.value))
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
            raise ValueError("unknown function call: {}".format(ast.dump(node.func)))
    elif not isinstance(node, _STRUCTURE + (ast.Name,)):
        raise ValueError("not allowed in a sort formula: {}".format(type(node).__name__))


class SchedulerCrash(ValueError):
    """The formula gives a job a value the real scheduler crashes on."""


class Formula:
    """A compiled formula; ``formula(values)`` evaluates it as the scheduler does (see the module)."""

    def __init__(self, text, code):
        self.text = text
        self._code = code

    def __repr__(self):
        return "Formula({!r})".format(self.text)

    def __call__(self, values):
        """The value PBS computes from ``values`` (name -> number; a missing name is 0): 0 on an error;
        ``SchedulerCrash`` when the result is not a real number."""
        try:
            result = eval(self._code, {"__builtins__": {}}, _Names(values))  # noqa: S307 - whitelisted AST
        except Exception:  # PBS logs the error and uses 0 for the job
            return 0.0
        try:
            return float(result)
        except (TypeError, OverflowError) as err:
            raise SchedulerCrash("job_sort_formula {!r} gives {!r}, not a real number: OpenPBS's scheduler "
                                 "crashes on that".format(self.text, result)) from err


class _Names(dict):
    """Name lookup as in the scheduler's interpreter: ``math`` first, then the job's values, then the
    builtins; any other name is a resource the job did not request: 0."""

    def __init__(self, values):
        super().__init__()
        self._values = values

    def __missing__(self, key):
        if key in _MATH:
            return _MATH[key]
        if key in self._values:
            return self._values[key]
        return _BUILTINS.get(key, 0)


def compile_formula(text):
    """The ``Formula`` for ``text``; ValueError naming what PBS's formula language does not allow."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise ValueError("not a formula: {}".format(err.msg)) from err
    for node in ast.walk(tree):
        _check_node(node)
    return Formula(text, compile(tree, "<job_sort_formula>", "eval"))


def float_digits(value, digits=4):
    """How many decimals PBS prints of ``value`` (``float_digits`` of its C library)."""
    value = abs(value)
    for i in range(digits):
        fraction = value - math.floor(value)
        scaled = math.floor(fraction * _FLOAT_DIGITS_ERROR_FACTOR)
        if scaled < 1 or scaled >= _FLOAT_DIGITS_ERROR_FACTOR - 1.0:
            return i
        value *= 10.0
    return digits


def as_printed(value, digits=None):
    """``value`` as the formula sees it after PBS prints it as text: an int if whole, else rounded."""
    if isinstance(value, int):
        return value
    places = float_digits(value) if digits is None else digits
    text = "%.*f" % (places, value)
    return float(text) if "." in text else int(text)


def stored(value):
    """``value`` as PBS keeps it for sorting: rounded to single precision."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def resource_values(job):
    """The job's numeric ``Resource_List`` amounts, built-in ones 0 when not requested (a new dict)."""
    return dict(_resource_values(job))


@functools.lru_cache(maxsize=1 << 16)
def _resource_values(job):
    """``resource_values``, kept for the jobs seen lately (a job is immutable; callers get a copy)."""
    values = dict.fromkeys(BUILTIN_CONSUMABLE, 0)
    for chunk in job.chunks:
        for name, _ in chunk.amounts:
            values[name] = total(job, name)
    for name, value in job.resources:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[name] = value
    if job.walltime_s is not None:
        values["walltime"] = job.walltime_s
    if job.soft_walltime_s is not None:
        values["soft_walltime"] = job.soft_walltime_s
    return {name: as_printed(value) for name, value in values.items()}


def formula_values(policy, job, now, fairshare=None, accrual=None):
    """Every name PBS offers a formula for ``job`` at ``now``: its resources and the special names.

    ``eligible_time`` is the time the job has waited eligible when the server's ``eligible_time_enable``
    is on, else 0, as is ``accrue_type`` (2 while accruing eligible time, 1 ineligible, when on): as
    ``accrual`` (an ``accrual.Accrual``) has followed it, else ``now`` - its ``etime``. Fairshare
    values come from ``fairshare`` (a ``fairshare.Fairshare``); without one they are 0.
    """
    values = resource_values(job)
    eligible = policy.eligible_time_enable
    if not eligible:
        values["eligible_time"] = values["accrue_type"] = 0
    elif accrual is None:
        values["eligible_time"], values["accrue_type"] = max(0, now - job.eligible_time), 2
    else:
        values["eligible_time"] = accrual.eligible_s(job, now)
        values["accrue_type"] = 2 if accrual.accruing(job) else 1
    values["queue_priority"] = policy.queue(job.queue).priority
    values["job_priority"] = job.priority
    factors = fairshare.factors(job) if fairshare is not None else {}
    for name in ("fairshare_perc", "fairshare_tree_usage", "fairshare_factor"):
        values[name] = as_printed(float(factors.get(name, 0.0)), 6)
    values["fair_share_perc"] = values["fairshare_perc"]
    return values


def job_value(policy, formula, job, now, fairshare=None, accrual=None):
    """The value PBS sorts ``job`` by under ``formula``, in the single precision it is stored in."""
    return stored(formula(formula_values(policy, job, now, fairshare, accrual)))


def under_threshold(policy, value):
    """True if a job with stored formula ``value`` may not run: at or below ``job_sort_formula_threshold``."""
    threshold = policy.job_sort_formula_threshold
    return threshold is not None and value <= threshold
