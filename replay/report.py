"""Reports: named tables of metrics, and the writers that print them.

A ``Report`` is a title, notes and ``Table``s; a table's ``Column``s say how
each value is shown (``kind``). The accuracy replay and the scheduling
simulation build Reports and print them through the same writers, defined in
``predictor.tables`` (``python -m predictor report`` prints through them too)
and re-exported here:

* ``write_text``: aligned tables for people (stdout);
* ``write_json``: ``{"title", "notes", "tables": [{"key", "title", "rows"}]}``;
* ``write_csv``: one row per table row, a ``table`` column first, then every
  column of every table (empty where a table has no such column);
* ``write_rows_csv``: any header and rows (one row per job);
* ``write_outputs``: a command's Report on stdout and in the files its
  ``--json``, ``--csv`` and ``--jobs-csv`` options name, each written whole
  or not at all (``outputs.OutputFiles``);
* ``column_legend``: the legend lines for the columns a report's tables show.

Both reports break their jobs down by the same runtime classes
(``RUNTIME_CLASSES``, ``runtime_class_masks``).

Values are None (shown ``-``, JSON null, CSV empty), ints, floats or text.
Floats are rounded (``ROUND_DIGITS``) so the output does not change with the
last bit of a sum; same report, byte-identical output.
"""

import contextlib
import sys

from predictor.tables import (KINDS, ROUND_DIGITS, RUNTIME_CLASSES, Column, Report, Table, queue_masks,
                              runtime_class_masks, write_csv, write_json, write_rows_csv, write_text)

from .errors import ReplayError
from .outputs import STDOUT, OutputFiles

__all__ = ["Column", "Table", "Report", "KINDS", "write_text", "write_json", "write_csv", "write_rows_csv",
           "ROUND_DIGITS", "RUNTIME_CLASSES", "runtime_class_masks", "queue_masks", "output_stream", "write_outputs",
           "column_legend"]


def column_legend(tables, meanings):
    """``"header, header: meaning"`` lines, for the ``meanings`` entries whose headers some table shows.

    ``meanings``: ``((headers, meaning), ...)`` in the order the legend lists
    them; a header no entry names is left out (tests check there is none).
    """
    shown = {column.header for table in tables for column in table.columns}
    return tuple("{}: {}".format(", ".join(headers), meaning) for headers, meaning in meanings
                 if shown.intersection(headers))


@contextlib.contextmanager
def output_stream(path, files=None, label=None):
    """A text stream to ``path``, or stdout for ``-``; through ``files`` (an ``OutputFiles``) if given."""
    if path == STDOUT:
        yield sys.stdout
        return
    target = path if files is None else files.file(path, label)
    try:
        stream = open(target, "w", encoding="utf-8", newline="")
    except OSError as err:
        raise ReplayError("{}: cannot write: {}".format(path if label is None else "{} {}".format(label, path),
                                                          err.strerror or err)) from err
    with stream:
        yield stream


def write_outputs(args, report, job_table=None, files=None):
    """The report on stdout (unless a file option is ``-``) and in every file ``args`` asks for.

    ``job_table`` is ``(header, rows)`` for ``--jobs-csv``. The files are
    written through ``files`` (an ``OutputFiles``, committed by the caller),
    else through one of their own. The simulation prints its own Report
    through this too.
    """
    if files is None:
        with OutputFiles() as own:
            write_outputs(args, report, job_table, own)
        return
    targets = [(getattr(args, "json", None), "--json", lambda out: write_json(report, out)),
               (getattr(args, "csv", None), "--csv", lambda out: write_csv(report, out))]
    if job_table is not None:
        targets.append((getattr(args, "jobs_csv", None), "--jobs-csv",
                        lambda out: write_rows_csv(job_table[0], job_table[1], out)))
    if STDOUT not in [path for path, _, _ in targets] + [getattr(args, "jobs_csv", None)]:
        write_text(report, sys.stdout)
    for path, label, writer in targets:
        if path:
            with output_stream(path, files, label) as stream:
                writer(stream)
