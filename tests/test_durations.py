"""predictor.durations: PBS [[HH:]MM:]SS text."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from predictor.durations import format_duration, parse_duration


@pytest.mark.parametrize("text, seconds", [
    ("02:00:00", 7200), ("100:00:00", 360000), ("05:30", 330), ("45", 45), ("0", 0), (" 01:00:00 ", 3600),
])
def test_parse_accepts_pbs_forms(text, seconds):
    """HH:MM:SS with unbounded hours, MM:SS and plain seconds."""
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1:2:3:4", "-5", "01:60:00", "01:00:61", "1h", "1.5", "๑๒", None])
def test_parse_rejects_other_text(text):
    """Anything else is a ValueError."""
    with pytest.raises(ValueError):
        parse_duration(text)


@given(st.integers(0, 10 ** 8))
def test_format_parse_round_trip(seconds):
    """format then parse gives the seconds back."""
    assert parse_duration(format_duration(seconds)) == seconds


def test_format_rejects_negative():
    """A negative duration cannot be formatted."""
    with pytest.raises(ValueError):
        format_duration(-1)
