"""Options and argparse types the replay's commands share: each value checked where it enters, with its bounds
in the message. The general types (whole numbers, durations) are ``predictor.cmdline.arguments``, shared with
``python -m predictor``."""

import argparse
import re

from predictor.cmdline.arguments import checked, whole_number

from .predictors import predictor_list

__all__ = ["epoch_seconds", "add_wide_argument", "server_name", "predictor_names", "add_input_arguments",
           "LATEST_EPOCH", "FORMATS"]

LATEST_EPOCH = 253402300799
"""9999-12-31 23:59:59 UTC: the last second an accounting-log date (MM/DD/YYYY) can show."""

_SERVER_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_SERVER_NAME = re.compile(r"{0}(\.{0})*".format(_SERVER_LABEL))


def epoch_seconds(text):
    """Epoch seconds an accounting log can date: 1970..9999."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not whole epoch seconds: {!r}".format(text)) from None
    if not 0 <= value <= LATEST_EPOCH:
        raise argparse.ArgumentTypeError("must be within 0..{} (years 1970..9999), not {}".format(LATEST_EPOCH, text))
    return value


def server_name(text):
    """A PBS server name as it ends a job id (``123.pbsserver``): a host name, nothing a log line could split on."""
    if len(text) > 253 or not _SERVER_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError("not a PBS server (host) name: {!r}; use letters, digits, '-' and '.', "
                                         "as in 123.pbsserver".format(text))
    return text


predictor_names = checked(predictor_list)
"""An argparse type: comma-separated predictor specs (``v1,tang:percentile=70``), each one the replay knows,
resolved into the ``ReplayPredictor``s the commands run."""

FORMATS = ("auto", "pbs", "swf")
"""What ``--format`` may say a trace is."""


def add_input_arguments(parser, defaults=True):
    """--format and --max-errors, the options of reading a trace. ``defaults`` False: None when not given."""
    parser.add_argument("--format", choices=FORMATS, default="auto" if defaults else None,
                        help="input format (default: told from the content; a directory is PBS)")
    parser.add_argument("--max-errors", type=whole_number(0, 10 ** 9), default=20 if defaults else None, metavar="N",
                        help="malformed lines to show on stderr (default 20; all are counted)")


def add_wide_argument(parser):
    """--wide: every column of the text tables (None when not given, so that 'sweep collect' can tell)."""
    parser.add_argument("--wide", action="store_const", const=True,
                        help="show every column of the text tables (default: the essential ones, within 100 "
                             "columns; --csv and --json always hold them all)")
