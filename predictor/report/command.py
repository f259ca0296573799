"""``python -m predictor report``: read the aggregates, print the tables, write the files and figures."""

import sys

from ..errors import PredictorError
from .measure import ALL, connect, distributions, measure
from .outputs import check_outputs, write_report
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


def run_report(dsn, selection, csv_path=None, json_path=None, plot_dir=None):
    """The whole command for ``selection``; returns the exit status."""
    if plot_dir:
        _check_plotting()
    check_outputs(csv_path, json_path, plot_dir)
    conn = connect(dsn)
    try:
        measured = measure(conn, selection)
        drawn = distributions(conn, selection, _jobs_per_estimate(measured)) if plot_dir else None
    finally:
        conn.close()
    write_report(build_report(selection, measured), csv_path, json_path)
    if plot_dir:
        from .plots import plot_report
        try:
            paths = plot_report(plot_dir, selection, drawn, _jobs_per_estimate(measured), measured.user_errors)
        except OSError as err:
            raise PredictorError("--plot {}: cannot write: {}".format(plot_dir, err.strerror or err)) from err
        print("figures: " + ", ".join(paths), file=sys.stderr)
    return 0
