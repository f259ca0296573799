"""The scheduler's sched_config read as OpenPBS 23.06 reads it."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.policy import DEFAULT_RESOURCES_CHECKED, SortKey
from replay.shared.errors import SiteError
from replay.site.sched_config import SHIPPED, SchedConfig, read_sched_config, shipped_sched_config

DATA = os.path.join(os.path.dirname(__file__), "data", "site")


def read(folder):
    with open(os.path.join(DATA, folder, "sched_config")) as handle:
        return read_sched_config(handle.read())


def test_real_default_file_equals_the_shipped_settings():
    """The sched_config of a fresh server reads as the settings PBS installs (comments and all)."""
    assert read("neutral")._replace(lines=(), readings=()) == shipped_sched_config()


def test_shipped_settings():
    """PBS installs by_queue on, strict ordering and fairshare off, preemption on, its resources list."""
    shipped = shipped_sched_config()
    assert (shipped.by_queue, shipped.strict_ordering, shipped.fair_share, shipped.preemptive_sched) == (
        True, False, False, True)
    assert shipped.resources_checked == DEFAULT_RESOURCES_CHECKED
    assert shipped.node_sort_key == (SortKey("sort_priority", True),)


def test_unmentioned_settings_take_the_built_in_defaults():
    """A file that says nothing gives PBS's built-in defaults: by_queue off and every resource checked."""
    empty = read_sched_config("# nothing\n")
    assert empty._replace(lines=()) == SchedConfig()
    assert (empty.by_queue, empty.resources_checked, empty.backfill) == (False, (), True)


def test_configured_file():
    """Sort keys in order, ALL and no keyword alike, node keys with their measure, fairshare settings."""
    config = read("configured")
    assert config.strict_ordering and config.fair_share
    assert config.job_sort_key == (SortKey("ncpus", True), SortKey("walltime", False))
    assert config.node_sort_key == (SortKey("sort_priority", True), SortKey("ncpus", True, "unused"))
    assert config.resources_checked[-1] == "ngpus"
    assert (config.fairshare_usage_res, config.fairshare_decay_time_s, config.fairshare_decay_factor,
            config.unknown_shares) == ("ncpus*walltime", 12 * 3600, 0.7, 10)


def test_non_prime_values_are_used_and_a_different_prime_value_noted():
    """by_queue true in prime time, false otherwise: false is used and the difference noted."""
    config = read("configured")
    assert config.by_queue is False
    assert any("by_queue has a prime-time value" in reading for reading in config.readings)


def test_queue_name_prefixes():
    """The installed file names the dedicated, prime and non-prime queue prefixes; PBS's built-in ones are empty."""
    shipped, empty = shipped_sched_config(), read_sched_config("")
    assert (shipped.dedicated_prefix, shipped.primetime_prefix, shipped.nonprimetime_prefix) == ("ded", "p_", "np_")
    assert (empty.dedicated_prefix, empty.primetime_prefix, empty.nonprimetime_prefix) == ("", "", "")


def test_keyword_none_sets_nothing():
    """A line ending in none applies to neither period."""
    assert read_sched_config("strict_ordering: true none\n").strict_ordering is False


@pytest.mark.parametrize("value, expected", [
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False), ("1", True),
    ("0", False), ("00", False), ("2", True), ("yes", True), ("no", True), ("off", True)])
def test_switches_read_as_pbs_reads_them(value, expected):
    """false or 0 is false; any other word is true, as in PBS (no and off included)."""
    assert read_sched_config("strict_ordering: {}\n".format(value)).strict_ordering is expected


def test_a_word_read_as_true_is_noted():
    """strict_ordering: no is true in PBS; the reader says so."""
    readings = read_sched_config("strict_ordering: no ALL\n").readings
    assert readings == ("sched_config line 1: strict_ordering: 'no' is read as true, as PBS reads it",)


def test_resources_always_include_host_and_vnode():
    """PBS adds host and vnode to the resources list unless the text mentions them."""
    assert read_sched_config('resources: "ncpus, mem"\n').resources_checked == ("ncpus", "mem", "host", "vnode")


def test_obsolete_job_key_sort_priority_is_job_priority():
    """job_sort_key sort_priority is PBS's old name of job_priority."""
    assert read_sched_config('job_sort_key: "sort_priority HIGH"\n').job_sort_key == (SortKey("job_priority", True),)


def test_line_numbers_are_kept():
    """Each setting line keeps its number in the file."""
    lines = read_sched_config("# c\n\nfair_share: true\n").lines
    assert [(line.line, line.name, line.value) for line in lines] == [(3, "fair_share", "true")]


@pytest.mark.parametrize("text, message", [
    ("strict_ordering\n", "sched_config:1: strict_ordering: expected 'name: value"),
    ("strict_ordering : true\n", "sched_config:1: strict_ordering: expected"),
    ("strict_ordering: true sometimes\n", "sched_config:1: strict_ordering: 'sometimes' is not a prime keyword"),
    ("resources: ncpus, mem\n", "is not a prime keyword"),
    ("\njob_sort_key: ncpus HIGH\n", "sched_config:2: job_sort_key"),
    ('job_sort_key: "ncpus UP"\n', "sched_config:1: job_sort_key: 'ncpus UP'"),
    ('node_sort_key: "ncpus HIGH free"\n', "node_sort_key: 'ncpus HIGH free': unexpected 'free'"),
    ("fairshare_decay_factor: 1.5\n", "fairshare_decay_factor: 1.5: must be between 0 and 1"),
    ("fairshare_decay_time: soon\n", "sched_config:1: fairshare_decay_time: 'soon' is not a duration"),
    ("fairshare_decay_factor: half\n", "fairshare_decay_factor: 'half' is not a number"),
    ("prime_spill: 1:xx\n", "sched_config:1: prime_spill: '1:xx' is not a duration"),
    ("fairshare_entity: user\n", "fairshare_entity: 'user'"),
    ("smp_cluster_dist: spread\n", "smp_cluster_dist: 'spread'"),
    ("unknown_shares: many\n", "unknown_shares: 'many' is not a whole number of shares"),
    ('fair_share: true ALL extra\n', "unexpected 'extra'"),
])
def test_malformed_lines_name_file_line_and_setting(text, message):
    """A line PBS would log as an error gives one SiteError naming the file, the line and the setting."""
    with pytest.raises(SiteError, match=message):
        read_sched_config(text)


_keys = st.tuples(st.sampled_from(["ncpus", "mem", "walltime", "job_priority", "fair_share_perc"]),
                  st.sampled_from(["HIGH", "high", "High", "LOW", "low", "Low"]),
                  st.sampled_from(["", "\tALL", " all", " non_prime"]))


@given(st.lists(_keys, max_size=6))
def test_job_sort_keys_accumulate_in_order(keys):
    """Every job_sort_key line applying to non-prime time adds one key, in file order."""
    text = "".join('job_sort_key: "{} {}"{}\n'.format(name, order, keyword) for name, order, keyword in keys)
    assert read_sched_config(text).job_sort_key == tuple(SortKey(name, order.lower() == "high")
                                                         for name, order, _ in keys)


def test_shipped_text_is_the_real_files_settings():
    """SHIPPED holds exactly the setting lines of the real installed file."""
    assert read_sched_config(SHIPPED).lines == tuple(
        line._replace(line=number) for number, line in enumerate(read("neutral").lines, 1))
