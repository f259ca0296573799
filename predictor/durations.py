"""PBS durations: ``[[HH:]MM:]SS`` text <-> integer seconds.

Hours are unbounded (``100:00:00`` is valid), as in accounting logs and qsub.
"""

import re

__all__ = ["parse_duration", "format_duration"]

_DURATION = re.compile(r"(?:(?:([0-9]+):)?([0-9]+):)?([0-9]+)")


def parse_duration(text):
    """Return the seconds in ``[[HH:]MM:]SS`` (or plain seconds); ValueError otherwise."""
    match = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError("not a duration [[HH:]MM:]SS: {!r}".format(text))
    hours, minutes, seconds = match.groups()
    hours, minutes, seconds = int(hours or 0), int(minutes or 0), int(seconds)
    if match.group(1) is not None and (minutes > 59 or seconds > 59):
        raise ValueError("minutes and seconds must be < 60: {!r}".format(text))
    return hours * 3600 + minutes * 60 + seconds


def format_duration(seconds):
    """Return ``HH:MM:SS`` for a non-negative number of seconds."""
    seconds = int(seconds)
    if seconds < 0:
        raise ValueError("negative duration: {}".format(seconds))
    return "{:02d}:{:02d}:{:02d}".format(seconds // 3600, seconds // 60 % 60, seconds % 60)
