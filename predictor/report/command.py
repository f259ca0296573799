"""``python -m predictor report``: read the aggregates, print the tables, write the files and figures."""

import os
import sys

from ..cmdline.outputs import OutputPaths, check_outputs, publish
from ..errors import PredictorError
from .measure import ALL, connect, distributions, measure
from .summary import build_report

__all__ = ["run_report"]


def _jobs_per_estimate(measured):
    return {row[1]: row[2] for row in measured.accuracy if row[0] == ALL}


def _check_plotting():
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        raise PredictorError("--plot needs numpy and matplotlib: install them with your distribution "
                             "(python3-matplotlib) or pip install 'pbs-softwalltime[replay]'") from None


def _plot(directory, selection, drawn, measured):
    from .plots import plot_report
    plot_report(directory, selection, drawn, _jobs_per_estimate(measured), measured.user_errors)


def run_report(dsn, selection, csv_path=None, json_path=None, plot_dir=None, wide=False):
    """The whole command for ``selection``; returns the exit status."""
    if plot_dir:
        _check_plotting()
    outputs = check_outputs(OutputPaths(json=json_path, csv=csv_path, plot=plot_dir))
    conn = connect(dsn)
    try:
        measured = measure(conn, selection)
        drawn = distributions(conn, selection, _jobs_per_estimate(measured)) if plot_dir else None
    finally:
        conn.close()
    empty = plot_dir and not any(drawn.sorted_errors.values())
    publish(outputs, build_report(selection, measured), draw=None if empty else lambda directory: _plot(
        directory, selection, drawn, measured), wide=wide)
    if empty:  # blank axes and a matplotlib warning tell no one anything
        print("--plot {}: no figure drawn: no job to draw among the {}".format(plot_dir, selection.describe()),
              file=sys.stderr)
    elif plot_dir:
        from .plots import FILES
        print("figures: " + ", ".join(os.path.join(plot_dir, name) for name in FILES), file=sys.stderr)
    return 0
