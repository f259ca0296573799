"""predictor.report.selection: the period a report covers, in UTC days of job end times."""

import pytest

from predictor.report.selection import DAY_S, Selection, parse_day, selection_for

MARCH_1 = 1772323200
"""2026-03-01 00:00 UTC."""


def test_parse_day_is_midnight_utc():
    """A date is its first second, UTC; anything else is refused with the text quoted."""
    assert parse_day("2026-03-01") == MARCH_1 and parse_day(" 2026-03-02 ") == MARCH_1 + DAY_S
    for text in ("2026-02-30", "2026-3-1x", "01/03/2026", ""):
        with pytest.raises(ValueError, match="not a date YYYY-MM-DD"):
            parse_day(text)


def test_until_day_is_included():
    """--until D ends at the next midnight; --since alone runs up to now."""
    assert selection_for(MARCH_1, MARCH_1) == Selection(MARCH_1, MARCH_1 + DAY_S)
    assert selection_for(MARCH_1, now=MARCH_1 + 5.5).until == MARCH_1 + 5


def test_default_is_the_30_days_before_the_end():
    """No --since: 30 days before now, or before the end of --until's day."""
    assert selection_for(now=MARCH_1) == Selection(MARCH_1 - 30 * DAY_S, MARCH_1)
    assert selection_for(until_day=MARCH_1, now=0).since == MARCH_1 + DAY_S - 30 * DAY_S


def test_empty_period_is_refused():
    """--since after --until (or after now) names both ends."""
    with pytest.raises(ValueError, match="--since 2026-03-02 is after --until 2026-03-01"):
        selection_for(MARCH_1 + DAY_S, MARCH_1)
    with pytest.raises(ValueError, match="is after --until now"):
        selection_for(MARCH_1, now=MARCH_1 - 1)


def test_describe_names_period_and_filters():
    """Whole days print as dates, other instants with the time; user and queue follow."""
    assert Selection(MARCH_1, MARCH_1 + DAY_S + 90, "alice", "workq").describe() == (
        "jobs that ended from 2026-03-01 to before 2026-03-02 00:01 UTC, user alice, queue workq")
