"""The sweep's grid: which scenarios to simulate, from command-line lists or a grid file.

A *cell* is one simulate run: one trace, one predictor, one ordering policy,
one backfill depth and one extension rule. The grid is the product of five
lists (``AXES``), expanded in one fixed order -- trace, policy, backfill depth,
extension, predictor: the predictors of one scenario side by side -- so a
cell's number means the same thing in the table, in the manifest and in
``$PBS_ARRAY_INDEX``.

A grid file is either JSON, an object of lists::

    {"predictors": ["v1", "v3"], "policy": ["fifo", "sjf"], "backfill_depth": [1, 10],
     "traces": ["HPC2N-2002-subset.swf"]}

or lines ``key: value, value``, with ``#`` comments and blank lines::

    predictors: v1, v3
    policy: fifo, sjf
    backfill_depth: 1, 10
    traces: HPC2N-2002-subset.swf

A key may be spelt with ``-`` (``backfill-depth``); a single value may stand
without a list. Trace paths in a grid file are relative to the file's folder.
"""

import json
import os
from typing import NamedTuple

from ..shared.errors import ReplayError
from ..shared.predictors import resolve
from ..simulation.extension import EXTENSIONS
from ..simulation.policies import POLICIES
from ..simulation.runs import DEFAULT_PREDICTORS, MAX_BACKFILL_DEPTH

__all__ = ["AXES", "DEFAULTS", "BUILT_IN_AXES", "Cell", "GridError", "parse_values", "read_grid_file", "grid_of",
           "expand"]

AXES = ("traces", "policy", "backfill_depth", "extension", "predictors")
"""The grid's dimensions, outermost first: the order cells are numbered in."""

DEFAULTS = {"policy": ("fifo",), "backfill_depth": (1,), "extension": ("pbs",), "predictors": DEFAULT_PREDICTORS}
"""Values of an axis neither the command line nor the grid file gives (simulate's own defaults)."""

BUILT_IN_AXES = ("policy", "backfill_depth", "extension")
"""The built-in scheduler's axes: with a site (``--site``) its own configuration decides them, and a cell has
None there."""


class GridError(ReplayError, ValueError):
    """A grid that cannot be run: an unknown name, a bad number, a malformed grid file."""


class Cell(NamedTuple):
    """One simulate run of the sweep."""

    trace: str
    policy: str
    backfill_depth: int
    extension: str
    predictor: str

    def label(self):
        """``trace=..., policy=..., ...``: how messages name the cell (an axis a site decides left out)."""
        return ", ".join("{}={}".format(field, value) for field, value in zip(self._fields, self)
                         if value is not None)


def _choice(registry):
    def parse(value):
        if value not in registry:
            raise ValueError("{!r} is not one of {}".format(value, ", ".join(sorted(registry))))
        return value
    return parse


def _depth(value):
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_BACKFILL_DEPTH:
        return value
    raise ValueError("backfill depth must be an integer within 0..{} (as in simulate), not {!r}".format(
        MAX_BACKFILL_DEPTH, value))


def _predictor(value):
    """A predictor spec simulate takes: a name, or ``ALGORITHM:param=value...``."""
    if not isinstance(value, str):
        raise ValueError("a predictor is a name, not {!r}".format(value))
    resolve(value)
    return value


def _trace(value):
    if not isinstance(value, str) or not value:
        raise ValueError("a trace is a path, not {!r}".format(value))
    return value


_PARSERS = {"traces": _trace, "policy": _choice(POLICIES), "backfill_depth": _depth,
            "extension": _choice(EXTENSIONS), "predictors": _predictor}


def parse_values(axis, values):
    """``values`` (strings or JSON values) of ``axis``, checked: a tuple of distinct values; ValueError."""
    parsed = tuple(_PARSERS[axis](value.strip() if isinstance(value, str) else value) for value in values)
    if not parsed:
        raise ValueError("give at least one value")
    repeated = sorted({str(value) for value in parsed if parsed.count(value) > 1})
    if repeated:
        raise ValueError("{} given twice".format(", ".join(repeated)))
    return parsed


def _axis(key):
    axis = key.strip().replace("-", "_")
    if axis not in _PARSERS:
        raise ValueError("unknown key {!r} (known: {})".format(key.strip(), ", ".join(AXES)))
    return axis


def _json_grid(text):
    try:
        document = json.loads(text)
    except ValueError as err:
        raise ValueError("not valid JSON: {}".format(err)) from None
    if not isinstance(document, dict):
        raise ValueError("a JSON grid is an object of lists, e.g. {\"policy\": [\"fifo\", \"sjf\"]}")
    grid = {}
    for key, values in document.items():
        axis = _axis(key)
        try:
            grid[axis] = parse_values(axis, values if isinstance(values, list) else [values])
        except ValueError as err:
            raise ValueError("{}: {}".format(key, err)) from None
    return grid


def _line_grid(path, text):
    grid = {}
    for line_no, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        key, colon, values = content.partition(":")
        try:
            if not colon:
                raise ValueError("expected 'key: value, value', got {!r}".format(content))
            axis = _axis(key)
            if axis in grid:
                raise ValueError("{} given twice".format(axis))
            grid[axis] = parse_values(axis, [value for value in values.split(",") if value.strip()])
        except ValueError as err:
            raise GridError("{}:{}: {}".format(path, line_no, err)) from None
    return grid


def read_grid_file(path):
    """``{axis: values}`` of a grid file (JSON or ``key: list`` lines); trace paths made relative to it."""
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError) as err:
        raise GridError("{}: cannot read the grid file: {}".format(path, getattr(err, "strerror", None) or err)) \
            from err
    if text.lstrip().startswith("{"):
        try:
            grid = _json_grid(text)
        except ValueError as err:
            raise GridError("{}: {}".format(path, err)) from None
    else:
        grid = _line_grid(path, text)
    if "traces" in grid:
        folder = os.path.dirname(path)
        grid["traces"] = tuple(os.path.join(folder, trace) for trace in grid["traces"])
    return grid


def grid_of(from_file, from_command_line, site=False):
    """The full grid: the command line's lists over the grid file's, over ``DEFAULTS``; with a ``site``, None on
    ``BUILT_IN_AXES`` (the caller has refused them)."""
    grid = dict(DEFAULTS, **({axis: (None,) for axis in BUILT_IN_AXES} if site else {}))
    grid.update(from_file)
    grid.update({axis: values for axis, values in from_command_line.items() if values is not None})
    if not grid.get("traces"):
        raise GridError("no trace given: name one or more after the options, or 'traces:' in the grid file")
    return grid


def expand(grid):
    """The cells of ``grid``, numbered from 1 in list order: traces outermost, predictors innermost."""
    cells = [()]
    for axis in AXES:
        cells = [cell + (value,) for cell in cells for value in grid[axis]]
    return [Cell(*cell) for cell in cells]
