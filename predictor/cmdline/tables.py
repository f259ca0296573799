"""Reports as tables, and the writers that print them as text, JSON and CSV.

A ``Report`` is what a command prints: a title, notes, ``Table``s and a
legend (what the columns and rows mean, printed under the text tables only);
a table's ``Column``s say how each value is shown (``kind``). The replay's
accuracy, simulation and sweep reports and ``python -m predictor report``
print through the same writers, so that their tables look alike:

* ``write_text``: aligned tables for people (stdout);
* ``write_json``: ``{"title", "notes", "tables": [{"key", "title", "rows"}]}``;
* ``write_csv``: one row per table row, a ``table`` column first, then every
  column of every table (empty where a table has no such column);
* ``write_rows_csv``: any header and rows (one row per job);
* ``column_legend``: the legend lines for the columns a report's tables show.

``predictor.cmdline.outputs`` sends a Report to stdout and to the files a
command's options name. Every report breaks its jobs down by the same
runtime classes (``RUNTIME_CLASSES``, ``runtime_class_masks``).

Values are None (shown ``-``, JSON null, CSV empty), ints, floats or text.
Floats are rounded (``ROUND_DIGITS``) so the output does not change with the
last bit of a sum; same report, byte-identical output. Standard library only.
"""

import csv
import json
import math
import textwrap
from typing import NamedTuple, Tuple

from ..durations import format_duration

__all__ = ["Column", "Table", "Report", "KINDS", "write_text", "write_json", "write_csv", "write_rows_csv",
           "ROUND_DIGITS", "RUNTIME_CLASSES", "runtime_class_masks", "queue_masks", "column_legend"]

ROUND_DIGITS = 6

RUNTIME_CLASSES = (("<=2h", 0, 2 * 3600), ("2-24h", 2 * 3600, 24 * 3600), (">24h", 24 * 3600, None))
"""Chlumsky & Klusacek Fig. 5: (name, low, high) for runtime in (low, high]; the first class includes 0."""


class Column(NamedTuple):
    """``key`` names the value in JSON/CSV (with its unit: ``_s``); ``header`` in the text table. A ``wide``
    column is left out of the text table unless asked for (``--wide``): JSON and CSV always hold it."""

    key: str
    header: str
    kind: str = "text"
    wide: bool = False


class Table(NamedTuple):
    """Rows of values, one per column, under a title."""

    key: str
    title: str
    columns: Tuple[Column, ...]
    rows: list


class Report(NamedTuple):
    """What one run measured; ``legend`` lines explain the text tables (not in JSON or CSV). ``figures``
    are ``(key, value)`` pairs a command also gives at the top of its JSON document (values made of
    numbers, text, None, lists and dicts; not in the text or CSV, whose tables show them). ``summary``
    lines close the text: what the tables say, and what to try next."""

    title: str
    notes: Tuple[str, ...]
    tables: Tuple[Table, ...]
    legend: Tuple[str, ...] = ()
    figures: Tuple[Tuple[str, object], ...] = ()
    summary: Tuple[str, ...] = ()


def _duration(seconds):
    return format_duration(int(round(seconds)))


KINDS = {
    "text": str,
    "count": "{:,}".format,
    "share": lambda value: "{:.1f}%".format(100.0 * value),
    "duration_s": _duration,
    "ratio": "{:.3f}".format,
    "seconds": lambda value: "{:,}".format(int(value)),
    "percent": lambda value: "{:.1f}".format(100.0 * value),
    "hours_s": lambda value: "{:,.2f}".format(value / 3600.0),
}
"""Column kind -> how the text table shows a value (None is always ``-``).

``percent`` is a share shown as a percentage without the sign (the header
says %), ``hours_s`` seconds shown as hours; JSON and CSV keep the value.
"""


def _text(value, kind):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return KINDS[kind](value)


def _plain(value):
    """A JSON/CSV value: floats rounded, NaN as None."""
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, ROUND_DIGITS)
    return value


def _plain_tree(value):
    """``_plain`` through lists, tuples and dicts."""
    if isinstance(value, dict):
        return {key: _plain_tree(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_tree(item) for item in value]
    return _plain(value)


def _aligned(table):
    cells = [[column.header for column in table.columns]]
    cells += [[_text(value, column.kind) for value, column in zip(row, table.columns)] for row in table.rows]
    widths = [max(len(row[index]) for row in cells) for index in range(len(table.columns))]
    left = [column.kind == "text" for column in table.columns]
    return ["  ".join(cell.ljust(width) if is_left else cell.rjust(width)
                      for cell, width, is_left in zip(row, widths, left)).rstrip() for row in cells]


def column_legend(tables, meanings):
    """``"header, header: meaning"`` lines, for the ``meanings`` entries whose headers some table shows.

    ``meanings``: ``((headers, meaning), ...)`` in the order the legend lists
    them; a header no entry names is left out (tests check there is none).
    """
    shown = {column.header for table in tables for column in table.columns}
    return tuple("{}: {}".format(", ".join(headers), meaning) for headers, meaning in meanings
                 if shown.intersection(headers))


def runtime_class_masks(runtime):
    """``(name, mask)`` per runtime class."""
    masks = []
    for name, low, high in RUNTIME_CLASSES:
        mask = runtime > low if low else runtime >= 0
        masks.append((name, mask if high is None else mask & (runtime <= high)))
    return masks


def queue_masks(queues):
    """``(queue, mask)`` per queue name in ``queues`` (an object array), in name order."""
    return [(queue, queues == queue) for queue in sorted(set(queues.tolist()))]


def _shown(table, wide):
    """``(table with the columns the text shows, headers of those left out)``."""
    if wide or not any(column.wide for column in table.columns):
        return table, []
    keep = [index for index, column in enumerate(table.columns) if not column.wide]
    hidden = [column.header for column in table.columns if column.wide]
    return table._replace(columns=tuple(table.columns[index] for index in keep),
                          rows=[[row[index] for index in keep] for row in table.rows]), hidden


def write_text(report, out, wide=False):
    """The report as aligned text tables (``wide``: every column, else the essential ones), its legend, then
    its summary."""
    out.write(report.title + "\n")
    for note in report.notes:
        out.write("  " + note + "\n")
    hidden_any = []
    for table in report.tables:
        table, hidden = _shown(table, wide)
        hidden_any += [header for header in hidden if header not in hidden_any]
        out.write("\n" + table.title + "\n")
        lines = _aligned(table)
        out.write(lines[0] + "\n" + "-" * max(len(line) for line in lines) + "\n")
        for line in lines[1:]:
            out.write(line + "\n")
    legend = [line for line in report.legend if not _only_hidden(line, hidden_any)]
    if hidden_any:
        legend.append("not shown here: {} (--wide shows them; --csv and --json always hold them)".format(
            ", ".join(hidden_any)))
    if legend:
        out.write("\nLegend:\n" + "".join("  {}\n".format(line) for line in legend))
    if report.summary:
        out.write("\nIn short:\n" + "".join(_wrapped(line) for line in report.summary))


TEXT_WIDTH = 100
"""Columns the text of a report aims at: its tables' essential columns fit it (the others with --wide), and its
summary is wrapped to it (notes and legend stay one line each, for the tools that read them)."""


def _wrapped(line):
    """One line of prose indented by two spaces, wrapped at ``TEXT_WIDTH`` with its continuation indented."""
    return textwrap.fill(line, TEXT_WIDTH, initial_indent="  ", subsequent_indent="    ", break_long_words=False,
                         break_on_hyphens=False) + "\n"


def _only_hidden(line, hidden):
    """Whether a legend line (``"header, header: meaning"``) speaks only of hidden columns."""
    headers = line.split(": ", 1)[0].split(", ")
    return bool(hidden) and all(header in hidden for header in headers)


def write_json(report, out):
    """The report as one JSON document (keys in column order), its ``figures`` first."""
    document = {key: _plain_tree(value) for key, value in report.figures}
    document.update({
        "title": report.title,
        "notes": list(report.notes),
        "tables": [{"key": table.key, "title": table.title,
                    "rows": [{column.key: _plain(value) for column, value in zip(table.columns, row)}
                             for row in table.rows]} for table in report.tables],
    })
    json.dump(document, out, indent=2, allow_nan=False)
    out.write("\n")


def write_csv(report, out):
    """Every table's rows in one CSV, with a ``table`` column first."""
    keys = []
    for table in report.tables:
        keys.extend(column.key for column in table.columns if column.key not in keys)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["table"] + keys)
    for table in report.tables:
        for row in table.rows:
            values = {column.key: _plain(value) for column, value in zip(table.columns, row)}
            writer.writerow([table.key] + ["" if values.get(key) is None else values[key] for key in keys])


def write_rows_csv(header, rows, out):
    """A plain CSV: ``header`` then ``rows`` (None written empty)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if value is None else _plain(value) for value in row])
