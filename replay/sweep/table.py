"""The sweep's one table: a row per cell that has a result, in cell order; and what the others lack.

Built from the cells' JSON documents (``cells.cell_result``), so a local run and
a collected PBS array give the same table, whatever order the cells finished in.
"""

import json
from typing import NamedTuple, Optional

from predictor.cmdline.tables import Column, Report, Table, column_legend

from ..shared.errors import ReplayError
from ..shared.predictors import predictor_legend, resolved
from ..simulation.metrics import SUMMARY_COLUMNS, legend_meanings
from ..simulation.runs import schedule_summary
from .cells import settings_note
from .grid import AXES, Cell

__all__ = ["COLUMNS", "Outcome", "outcome_of", "missing", "sweep_report", "problem_lines"]

_ESSENTIAL = ("wait_mean_s", "bsld_mean", "past_soft_walltime")
"""What the text table of a sweep shows of each cell's figures (all of them with --wide)."""
_AXIS_KEYS = ("trace", "policy", "backfill_depth", "extension", "predictor")
_NEXT_STEP = ("--wide shows every figure of each cell, --csv FILE writes them all; --plot DIR draws mean wait and "
              "slowdown side by side; a larger grid runs as a PBS job array with --pbs DIR.")
COLUMNS = (Column("trace", "trace"), Column("policy", "policy"), Column("backfill_depth", "depth", "count"),
           Column("extension", "extension"), Column("predictor", "predictor")) + tuple(
               column._replace(wide=column.key not in _ESSENTIAL) for column in SUMMARY_COLUMNS)
"""The cell's coordinates, then simulate's summary row."""

_CELL_MEANINGS = (
    (("trace",), "the trace the cell simulated"),
    (("policy",), "the order of the queued jobs (--policy; docs/simulate.md, Policies)"),
    (("depth",), "backfill depth (--backfill-depth): top jobs with a reservation at once; 0: no backfilling"),
    (("extension",), "how a soft walltime is extended once a job outlives it (--extension): pbs S, 2S, 3S ...; "
                     "double S, 2S, 4S ...; simple, power: Rubio et al.'s corrections; capped at the walltime"),
)


class Outcome(NamedTuple):
    """What became of one cell: ``status`` ok (``values``, ``notes``), failed (``error``) or missing (``error``)."""

    index: int
    cell: Cell
    status: str
    values: tuple = ()
    notes: tuple = ()
    error: Optional[str] = None


def outcome_of(index, cell, text):
    """The Outcome a cell's JSON text tells; a document that does not fit the cell is a failure."""
    try:
        document = json.loads(text)
        told = (document["index"], Cell(**document["cell"]), document["status"])
    except (ValueError, TypeError, KeyError) as err:
        return Outcome(index, cell, "failed", error="unreadable result: {}".format(err))
    if told[:2] != (index, cell):
        return Outcome(index, cell, "failed", error="the result is for another cell: {}".format(told[1].label()))
    if told[2] != "ok":
        return Outcome(index, cell, "failed", error=document.get("error") or "no reason given")
    return Outcome(index, cell, "ok", tuple(document["values"]), tuple(document["notes"]))


def missing(index, cell, reason):
    return Outcome(index, cell, "missing", error=reason)


def _grid_note(cells):
    sizes = ["{} {}".format(axis, len({getattr(cell, field) for cell in cells}))
             for axis, field in zip(AXES, Cell._fields) if any(getattr(cell, field) is not None for cell in cells)]
    return "grid: {} = {} cells".format(" x ".join(sizes), len(cells))


def _unique(items):
    seen = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


def _without_result_note(outcomes):
    """``("2 of 8 cells have no result: failed 5; missing 3",)``, or nothing when every cell has one."""
    numbers = {status: [str(outcome.index) for outcome in outcomes if outcome.status == status]
               for status in ("failed", "missing")}
    count = sum(len(indexes) for indexes in numbers.values())
    if not count:
        return ()
    return ("{} of {} cells have no result: {}".format(count, len(outcomes), "; ".join(
        "{} {}".format(status, ", ".join(indexes)) for status, indexes in numbers.items() if indexes)),)


def sweep_report(outcomes, settings):
    """The Report of a sweep from its cells' outcomes (in cell order, every cell of the grid)."""
    outcomes = sorted(outcomes, key=lambda outcome: outcome.index)
    done = [outcome for outcome in outcomes if outcome.status == "ok"]
    if not done:
        raise ReplayError("no cell has a result ({} of {} failed, the others are missing)".format(
            sum(outcome.status == "failed" for outcome in outcomes), len(outcomes)))
    notes = (_grid_note([outcome.cell for outcome in outcomes]), settings_note(settings))
    notes += _unique(note for outcome in done for note in outcome.notes) + _without_result_note(outcomes)
    rows = [tuple(outcome.cell) + outcome.values for outcome in done]
    title = "PBS scheduling sweep: {} cells".format(len(outcomes))
    varying = [axis for axis in _AXIS_KEYS if len({row[_AXIS_KEYS.index(axis)] for row in rows}) > 1]
    columns = tuple(column._replace(wide=True) if column.key in _AXIS_KEYS and column.key not in varying
                    else column for column in COLUMNS)  # an axis with one value is in the grid note above
    tables = (Table("sweep", "All jobs, one row per cell", columns, rows),)
    legend = column_legend(tables, _CELL_MEANINGS + legend_meanings(settings.bsld_tau_s))
    predictors = resolved(_unique(outcome.cell.predictor for outcome in done))
    summary = schedule_summary(tables[0], tuple(varying) or ("predictor",), _NEXT_STEP)
    return Report(title, notes, tables, legend + predictor_legend(predictors), summary=summary)


def problem_lines(outcomes):
    """One line per cell without a result, for stderr."""
    return ["cell {} ({}): {}: {}".format(outcome.index, outcome.cell.label(), outcome.status, outcome.error)
            for outcome in sorted(outcomes, key=lambda outcome: outcome.index) if outcome.status != "ok"]
