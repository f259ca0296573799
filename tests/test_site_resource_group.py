"""The fairshare tree's resource_group file."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.policy import ShareGroup
from replay.shared.errors import SiteError
from replay.site.resource_group import read_resource_group

DATA = os.path.join(os.path.dirname(__file__), "data", "site")


def read(folder):
    with open(os.path.join(DATA, folder, "resource_group")) as handle:
        return read_resource_group(handle.read())


def test_installed_file_has_no_groups():
    """The resource_group PBS installs is all comments: no group."""
    assert read("neutral") == ()


def test_groups_in_file_order():
    """Each line is one group with its id, parent and shares."""
    assert read("configured") == (
        ShareGroup("physics", 50, "root", 60), ShareGroup("chem", 51, "root", 40),
        ShareGroup("ana", 60, "physics", 10), ShareGroup("bob", 61, "physics", 30), ShareGroup("carol", 62, "chem", 1))


def test_tabs_spaces_and_unknown_parent():
    """Words may be separated by any white space; the unknown group may be a parent."""
    assert read_resource_group("a \t1  unknown\t5\n") == (ShareGroup("a", 1, "unknown", 5),)


@pytest.mark.parametrize("text, message", [
    ("a 1 root\n", "resource_group:1: a: expected 'name id parent shares'"),
    ("a 1 root 2 3\n", "not 5 words"),
    ("a x root 2\n", "resource_group:1: a: id and shares must be whole numbers"),
    ("a 1 root -2\n", "must not be negative"),
    ("a 1 root 2\na 2 root 3\n", "resource_group:2: a: the name is not unique"),
    ("unknown 5 root 2\n", "resource_group:1: unknown: the name is not unique"),
    ("a 1 root 2\nb 1 root 3\n", "resource_group:2: b: id 1 is already a's"),
    ("b 2 a 3\na 1 root 2\n", "resource_group:1: b: parent a is not defined on an earlier line"),
])
def test_malformed_lines_name_file_line_and_group(text, message):
    """A line PBS would refuse (or its documentation forbids) gives one SiteError naming file, line, group."""
    with pytest.raises(SiteError, match=message):
        read_resource_group(text)


@st.composite
def trees(draw):
    """A valid share tree: each group's parent is root or an earlier group."""
    count = draw(st.integers(0, 12))
    groups = []
    for index in range(count):
        parent = draw(st.sampled_from(["root"] + [group.name for group in groups]))
        groups.append(ShareGroup("g{}".format(index), 100 + index, parent, draw(st.integers(0, 1000))))
    return tuple(groups)


@given(trees(), st.sampled_from([" ", "\t", " \t "]))
def test_any_written_tree_reads_back(tree, separator):
    """A tree written one group a line, with comments between, reads back the same."""
    text = "".join("# g\n" + separator.join(str(field) for field in group) + "\n" for group in tree)
    assert read_resource_group(text) == tree
