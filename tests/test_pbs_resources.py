"""PBS resource values: sizes in kb, durations in seconds, select and place specs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.resources import Chunk, Place, parse_duration, parse_place, parse_select, parse_size


@pytest.mark.parametrize("text,kb", [("1gb", 1024 ** 2), ("512mb", 512 * 1024), ("1024kb", 1024), ("100", 1),
                                     ("2048b", 2), ("1w", 1), ("1tb", 1024 ** 3), ("3GB", 3 * 1024 ** 2)])
def test_sizes_are_kilobytes(text, kb):
    """A size is converted to whole kilobytes, rounded up, as PBS keeps it."""
    assert parse_size(text) == kb


@pytest.mark.parametrize("text", ["", "gb", "1.5gb", "-1kb", "1xb"])
def test_bad_sizes_are_refused(text):
    """Something that is not a PBS size raises ValueError."""
    with pytest.raises(ValueError):
        parse_size(text)


@given(st.integers(0, 10 ** 6), st.integers(0, 59), st.integers(0, 59))
def test_durations_read_hours_minutes_seconds(hours, minutes, seconds):
    """HH:MM:SS with unbounded hours is seconds."""
    text = "{:02d}:{:02d}:{:02d}".format(hours, minutes, seconds)
    assert parse_duration(text) == hours * 3600 + minutes * 60 + seconds


def test_short_durations():
    """MM:SS and bare seconds are durations too."""
    assert (parse_duration("05:00"), parse_duration("90")) == (300, 90)


def test_select_with_several_chunks():
    """Chunks keep their order and counts; sizes are kb; text values are requirements."""
    chunks = parse_select("2:ncpus=4:mem=2gb+1:ncpus=1:host=n1")
    assert chunks == (Chunk(2, (("mem", 2 * 1024 ** 2), ("ncpus", 4))), Chunk(1, (("ncpus", 1),), (("host", "n1"),)))
    assert chunks[0].amount("ngpus") == 0


@pytest.mark.parametrize("text", ["2:ncpus", "0:ncpus=1", "ncpus=1:=3"])
def test_bad_select_is_refused(text):
    """A chunk that is not count:name=value... raises ValueError."""
    with pytest.raises(ValueError):
        parse_select(text)


@pytest.mark.parametrize("text,place", [
    ("pack", Place("pack")), ("scatter:excl", Place("scatter", "excl")),
    ("excl", Place("free", "excl")), ("free:group=switch", Place("free", "", "switch"))])
def test_place(text, place):
    """A place spec gives arrangement, sharing and group; free and the vnodes' own sharing by default."""
    assert parse_place(text) == place


def test_bad_place_is_refused():
    """An unknown word in place raises ValueError."""
    with pytest.raises(ValueError):
        parse_place("scatter:wide")
