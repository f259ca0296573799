"""The MoM's configuration file ``mom_priv/config``, for the two settings that shape fairshare usage.

Fairshare charges what the MoM last reported in a job's ``resources_used``. The MoM measures its jobs
``$min_check_poll`` seconds after its last job start, the interval growing toward ``$max_check_poll``
with each measurement (OpenPBS 23.06 ``mom_main.c``; 10 and 120 s by default; when the minimum exceeds
the maximum, the MoM uses both defaults). ``replay.pbs.mom_polls`` has the whole rule.

Lines are ``$name value`` settings; other lines define static host resources (``pbsnodes.json`` holds
their values), ``#`` starts a comment.
"""

from typing import NamedTuple, Tuple

from ..shared.errors import SiteError

__all__ = ["MomConfig", "read_mom_config", "DEFAULT_MIN_CHECK_POLL_S", "DEFAULT_MAX_CHECK_POLL_S"]

DEFAULT_MIN_CHECK_POLL_S = 10
DEFAULT_MAX_CHECK_POLL_S = 120


class MomConfig(NamedTuple):
    """The MoM's polling of its jobs, and every line read: ``(line, name, value)``, a static resource's
    name without ``$``."""

    min_check_poll_s: int = DEFAULT_MIN_CHECK_POLL_S
    max_check_poll_s: int = DEFAULT_MAX_CHECK_POLL_S
    lines: Tuple[Tuple[int, str, str], ...] = ()


def read_mom_config(text, filename="mom_config"):
    """The ``MomConfig`` of a MoM configuration text; SiteError naming file:line: setting on a bad value."""
    polls, lines = {}, []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split(None, 1)
        if not words or words[0].startswith("#"):
            continue
        name, value = words[0], (words[1].strip() if len(words) > 1 else "")
        lines.append((number, name, value))
        if name in ("$min_check_poll", "$max_check_poll"):
            polls[name] = _seconds(value, "{}:{}: {}".format(filename, number, name))
    low = polls.get("$min_check_poll", DEFAULT_MIN_CHECK_POLL_S)
    high = polls.get("$max_check_poll", DEFAULT_MAX_CHECK_POLL_S)
    if low > high:  # what the MoM does (mom_main.c): both back to their defaults
        low, high = DEFAULT_MIN_CHECK_POLL_S, DEFAULT_MAX_CHECK_POLL_S
    return MomConfig(low, high, tuple(lines))


def _seconds(value, where):
    try:
        seconds = int(value)
    except ValueError:
        raise SiteError("{}: expected a whole number of seconds, not {!r}".format(where, value)) from None
    if seconds < 1:
        raise SiteError("{}: must be at least 1 second".format(where))
    return seconds
