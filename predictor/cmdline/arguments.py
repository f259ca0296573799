"""argparse types both command lines share (``python -m predictor``, ``python -m replay``).

Each checks a value where it enters and says what is wrong with the option
named: argparse prints ``argument --window: must be within 1..1000000, not '0'``
as the one line of a bad command line.
"""

import argparse
import math

from ..durations import parse_duration
from ..jobs import MAX_INT32

__all__ = ["checked", "bounded", "whole_number", "duration"]


def checked(parse):
    """An argparse type from ``parse(text)``: the ValueError it raises for bad text becomes the option's error."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return convert


def _number(value):
    return str(int(value)) if value == int(value) else "{:g}".format(value)


def bounded(kind, low, high, what):
    """An argparse type: ``kind(text)`` (int or float) within ``low..high``; ``what`` names the kind in errors."""
    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError("not {}: {!r}".format(what, text)) from None
        if not (isinstance(value, int) or math.isfinite(value)) or not low <= value <= high:
            raise argparse.ArgumentTypeError("must be within {}..{}, not {!r}".format(
                _number(low), _number(high), text))
        return value
    return convert


def whole_number(low, high, what="a whole number"):
    """An argparse type: a whole number within ``low..high``."""
    return bounded(int, low, high, what)


def _positive_duration(text):
    seconds = parse_duration(text)
    if seconds < 1:
        raise ValueError("must be at least 1 second, not {!r}".format(text))
    if seconds > MAX_INT32:
        raise ValueError("must be at most {} s (68 years, the largest duration PBS records), not {!r}".format(
            MAX_INT32, text[:30]))
    return seconds


duration = checked(_positive_duration)
"""An argparse type: a PBS duration ``[[HH:]MM:]SS`` of 1 s (a walltime of 0 means nothing to PBS) to 2^31 - 1 s."""

