"""Run limits: entity-limit lists and the old-style attributes mapped onto them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.policy import Limit
from replay.site.limits import is_run_limit, parse_entity_limits, run_limits


def test_generic_individual_and_overall_entries():
    """Each [t:name=value] entry is one Limit of its kind and entity."""
    assert run_limits("max_run", "[u:PBS_GENERIC=3],[u:ana=5], [o:PBS_ALL=10]") == (
        Limit("max_run", "u", "PBS_GENERIC", 3), Limit("max_run", "u", "ana", 5), Limit("max_run", "o", "PBS_ALL", 10))


def test_group_and_project_entries():
    """g: and p: entries name a group and a project."""
    assert run_limits("max_run", "[g:grp=4],[p:proj=2]") == (
        Limit("max_run", "g", "grp", 4), Limit("max_run", "p", "proj", 2))


def test_resource_limits_are_in_the_resources_units():
    """max_run_res.mem caps are kilobytes; ncpus caps counts."""
    assert run_limits("max_run_res.mem", "[u:PBS_GENERIC=10gb]") == (
        Limit("max_run_res.mem", "u", "PBS_GENERIC", 10 * 1024 * 1024),)
    assert run_limits("max_run_res.ncpus", "[o:PBS_ALL=8]") == (Limit("max_run_res.ncpus", "o", "PBS_ALL", 8),)


def test_spaces_and_quoted_names():
    """White space inside the brackets and a quoted entity name are allowed, as qmgr allows them."""
    assert run_limits("max_run", "[ u:\"ana\" = 2 ]") == (Limit("max_run", "u", "ana", 2),)


@pytest.mark.parametrize("attribute, value, expected", [
    ("max_running", "20", Limit("max_run", "o", "PBS_ALL", 20)),
    ("max_user_run", "4", Limit("max_run", "u", "PBS_GENERIC", 4)),
    ("max_group_run", "5", Limit("max_run", "g", "PBS_GENERIC", 5)),
    ("max_user_res.ncpus", "6", Limit("max_run_res.ncpus", "u", "PBS_GENERIC", 6)),
    ("max_group_res.mem", "8gb", Limit("max_run_res.mem", "g", "PBS_GENERIC", 8 * 1024 * 1024)),
])
def test_old_style_limits_map_onto_new_ones(attribute, value, expected):
    """Old-style limits become the entries PBS's scheduler turns them into (limits.cpp old2new)."""
    assert run_limits(attribute, value) == (expected,)


@pytest.mark.parametrize("attribute, expected", [
    ("max_run", True), ("max_run_res.ncpus", True), ("max_user_run", True), ("max_group_res.mem", True),
    ("max_run_soft", False), ("max_queued", False), ("max_user_run_soft", False), ("priority", False)])
def test_which_attributes_are_hard_run_limits(attribute, expected):
    """Hard run limits, new and old style; soft and queued limits are not."""
    assert is_run_limit(attribute) is expected


@pytest.mark.parametrize("attribute, value, message", [
    ("max_run", "u:PBS_GENERIC=3", "expected \\[t:name=value\\]"),
    ("max_run", "[x:bob=3]", "u:, g:, p: or o:"),
    ("max_run", "[u:bob]", "no value"),
    ("max_run", "[u:bob=-1]", "not negative"),
    ("max_run", "[o:bob=1]", "PBS_ALL only"),
    ("max_run", "[u:PBS_ALL=1]", "o: only"),
    ("max_run", "[u:a|b=1]", "not an entity name"),
    ("max_run", "[u:bob=many]", "not a number of jobs"),
    ("max_run_res.mem", "[u:bob=lots]", "not a PBS size"),
    ("max_run_res", "[u:bob=1]", "names its resource"),
    ("max_run", "[u:a=1],,[u:b=2]", "empty entry"),
])
def test_malformed_limits_say_why(attribute, value, message):
    """A malformed limit is a ValueError saying what is wrong."""
    with pytest.raises(ValueError, match=message):
        run_limits(attribute, value)


_names = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_-.@"),
                 min_size=1, max_size=10).filter(lambda name: name != "PBS_ALL")
_entries = st.one_of(
    st.tuples(st.sampled_from("ugp"), _names, st.integers(0, 10 ** 6)),
    st.tuples(st.just("o"), st.just("PBS_ALL"), st.integers(0, 10 ** 6)))


@given(st.lists(_entries, min_size=1, max_size=6), st.sampled_from(["", " "]))
def test_any_written_list_reads_back(entries, space):
    """A list written as PBS prints it, with or without spaces after commas, gives its entries back."""
    text = ("," + space).join("[{}:{}={}]".format(kind, name, value) for kind, name, value in entries)
    assert parse_entity_limits(text) == tuple((kind, name, str(value)) for kind, name, value in entries)
    assert run_limits("max_run", text) == tuple(Limit("max_run", *entry) for entry in entries)
