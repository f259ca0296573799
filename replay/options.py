"""argparse types shared by the commands: each value checked where it enters, with its bounds in the message."""

import argparse
import re

__all__ = ["whole_number", "epoch_seconds", "server_name", "LATEST_EPOCH"]

LATEST_EPOCH = 253402300799
"""9999-12-31 23:59:59 UTC: the last second an accounting-log date (MM/DD/YYYY) can show."""

_SERVER_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_SERVER_NAME = re.compile(r"{0}(\.{0})*".format(_SERVER_LABEL))


def whole_number(low, high):
    """An argparse type: a whole number within ``low..high``."""
    def convert(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("not a whole number: {!r}".format(text)) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError("must be within {}..{}, not {}".format(low, high, text))
        return value
    return convert


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
