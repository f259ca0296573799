"""Where the report goes: checked before any query, each file written whole or not at all."""

import os
import sys

from ..errors import ConfigError, PredictorError
from ..tables import write_csv, write_json, write_text

__all__ = ["STDOUT", "check_outputs", "write_report", "write_file"]

STDOUT = "-"


def _check_file(option, path):
    if path == STDOUT:
        return
    if os.path.isdir(path):
        raise ConfigError("{} {}: is a directory".format(option, path))
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError("{} {}: no such directory {}".format(option, path, folder))
    if not os.access(folder, os.W_OK):
        raise ConfigError("{} {}: cannot write in {}".format(option, path, folder))


def check_outputs(csv_path, json_path, plot_dir):
    """ConfigError naming the option if an output cannot be written (before the database is asked).

    Makes the ``plot_dir`` directory if missing.
    """
    if csv_path == STDOUT and json_path == STDOUT:
        raise ConfigError("--csv - and --json - would both write to stdout: send one to a file")
    if plot_dir:
        try:
            os.makedirs(plot_dir, exist_ok=True)
        except OSError as err:
            raise ConfigError("--plot {}: cannot make the directory: {}".format(
                plot_dir, err.strerror or err)) from None
        if not os.access(plot_dir, os.W_OK):
            raise ConfigError("--plot {}: cannot write in it".format(plot_dir))
    for option, path in (("--csv", csv_path), ("--json", json_path)):
        if path:
            _check_file(option, path)


def write_file(path, write):
    """Call ``write(stream)`` on ``path`` through a temporary file renamed at the end; stdout for ``-``."""
    if path == STDOUT:
        write(sys.stdout)
        return
    temporary = "{}.tmp{}".format(path, os.getpid())
    try:
        with open(temporary, "w", encoding="utf-8", newline="") as stream:
            write(stream)
        os.replace(temporary, path)
    except OSError as err:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise PredictorError("{}: cannot write: {}".format(path, err.strerror or err)) from err


def write_report(report, csv_path=None, json_path=None):
    """The text table and its legend on stdout unless a file option is ``-``, then the CSV and JSON files."""
    if STDOUT not in (csv_path, json_path):
        write_text(report, sys.stdout)
    for path, writer in ((csv_path, write_csv), (json_path, write_json)):
        if path:
            write_file(path, lambda stream: writer(report, stream))
