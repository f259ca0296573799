"""Vnodes and exec_vnode allocations."""

import pytest

from replay.pbs.vnodes import Vnode, allocated, parse_exec_vnode


def test_exec_vnode_pieces():
    """Each (vnode:res=value) is a piece; a chunk over two vnodes gives two; sizes are kb."""
    pieces = parse_exec_vnode("(n1:ncpus=4)+(n2:ncpus=2:mem=1gb+n3:ncpus=2)")
    assert pieces == (("n1", (("ncpus", 4),)), ("n2", (("mem", 1024 ** 2), ("ncpus", 2))), ("n3", (("ncpus", 2),)))
    assert allocated(pieces, "ncpus") == 8


@pytest.mark.parametrize("text", ["n1:ncpus=4", "(n1:ncpus)", "(:ncpus=1)"])
def test_bad_exec_vnode(text):
    """Anything but (vnode:res=value...) pieces raises ValueError."""
    with pytest.raises(ValueError):
        parse_exec_vnode(text)


def test_vnode_amounts():
    """A vnode answers its resources_available amounts, 0 for what it does not have."""
    vnode = Vnode("n1", "h1", (("mem", 1024), ("ncpus", 8)))
    assert (vnode.amount("ncpus"), vnode.amount("ngpus")) == (8, 0)
