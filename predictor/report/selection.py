"""Which completed jobs a report covers: a period of end times (UTC days) and optional user and queue."""

import calendar
import datetime
import time
from typing import NamedTuple, Optional

from ..errors import ConfigError

__all__ = ["Selection", "parse_day", "selection_for", "DEFAULT_DAYS"]

DAY_S = 86400
DEFAULT_DAYS = 30
"""Without --since, the period is the 30 days before its end."""


def parse_day(text):
    """Epoch seconds of 00:00 UTC on the day ``YYYY-MM-DD``; ValueError otherwise."""
    try:
        day = datetime.datetime.strptime(text.strip(), "%Y-%m-%d")
    except ValueError:
        raise ValueError("not a date YYYY-MM-DD: {!r}".format(text)) from None
    return calendar.timegm(day.timetuple())


def _moment(epoch):
    stamp = time.gmtime(epoch)
    return time.strftime("%Y-%m-%d" if epoch % 60 == 0 and stamp.tm_hour == stamp.tm_min == 0
                         else "%Y-%m-%d %H:%M", stamp)


class Selection(NamedTuple):
    """Jobs with ``since <= end_time < until`` (epoch seconds), of ``user`` and in ``queue`` if given."""

    since: int
    until: int
    user: Optional[str] = None
    queue: Optional[str] = None

    def describe(self):
        """The selection in words, for titles."""
        words = "jobs that ended from {} to before {} UTC".format(_moment(self.since), _moment(self.until))
        return words + "".join(", {} {}".format(name, value) for name, value in
                               (("user", self.user), ("queue", self.queue)) if value is not None)


def selection_for(since_day=None, until_day=None, user=None, queue=None, now=None):
    """The Selection for the command line's days (epochs of 00:00 UTC; ``until_day`` is included).

    No ``until_day``: up to ``now``. No ``since_day``: the DEFAULT_DAYS days
    before the end. ConfigError (a ValueError) if the period is empty.
    """
    until = until_day + DAY_S if until_day is not None else int(now)
    since = since_day if since_day is not None else until - DEFAULT_DAYS * DAY_S
    if since >= until:
        raise ConfigError("the period is empty: --since {} is after --until {}".format(
            _moment(since), _moment(until - DAY_S) if until_day is not None else "now"))
    return Selection(since, until, user, queue)
