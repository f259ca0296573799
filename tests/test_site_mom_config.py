"""The MoM's configuration: how often it reports its jobs' usage."""

import pytest

from replay.shared.errors import SiteError
from replay.site.mom_config import MomConfig, read_mom_config


def test_polling_read_with_every_line():
    """$min_check_poll and $max_check_poll are read; every line is kept for the report."""
    config = read_mom_config("$clienthost pbshost\n# a comment\n$min_check_poll 1\n$max_check_poll 2\n"
                             "scratch 100gb\n")
    assert (config.min_check_poll_s, config.max_check_poll_s) == (1, 2)
    assert [name for _, name, _ in config.lines] == ["$clienthost", "$min_check_poll", "$max_check_poll",
                                                    "scratch"]


def test_defaults_are_pbs_own():
    """An empty file (or none) means PBS's 10 and 120 s."""
    assert read_mom_config("") == MomConfig(10, 120, ())


def test_minimum_above_maximum_means_both_defaults():
    """As the MoM does: a minimum above the maximum puts both back to their defaults."""
    config = read_mom_config("$min_check_poll 30\n$max_check_poll 20\n")
    assert (config.min_check_poll_s, config.max_check_poll_s) == (10, 120)


@pytest.mark.parametrize("value", ["two", "0", "-3", ""])
def test_bad_value_names_file_line_and_setting(value):
    """A polling interval that is not a whole number of seconds, at least 1, is refused at its line."""
    with pytest.raises(SiteError, match=r"^mom_config:2: \$max_check_poll: "):
        read_mom_config("$min_check_poll 1\n$max_check_poll {}\n".format(value))
