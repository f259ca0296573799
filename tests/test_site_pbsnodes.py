"""Vnodes from pbsnodes -av -F json and from qmgr's node lines."""

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.vnodes import Vnode
from replay.shared.errors import SiteError
from replay.site.pbsnodes import nodes_from_qmgr, read_pbsnodes, vnodes_of
from replay.site.qmgr import parse_qmgr, qmgr_objects

DATA = os.path.join(os.path.dirname(__file__), "data", "site")


def read(folder):
    with open(os.path.join(DATA, folder, "pbsnodes.json")) as handle:
        return handle.read()


def document(**nodes):
    return json.dumps({"pbs_version": "23.06.06", "nodes": nodes}, indent=4)


def test_real_vnode():
    """The neutral server's one vnode: ncpus, mem in kb, host and the rest of resources_available."""
    vnodes, left_out = vnodes_of(read_pbsnodes(read("neutral")))
    assert vnodes == (Vnode("pbshost", "pbshost", (("arch", "linux"), ("host", "pbshost"), ("mem", 24684084),
                                                   ("ncpus", 2), ("vnode", "pbshost")), "default_shared", None, 0),)
    assert left_out == ()


def test_vnodes_of_a_mom_keep_its_host():
    """Vnodes a MoM reports with a host of their own (a recording's four vnodes on the one MoM) keep the MoM's
    host, which measures their jobs' usage; the natural vnode, named as its MoM, leaves it empty."""
    path = os.path.join(os.path.dirname(__file__), "data", "fidelity", "vnodes", "site", "pbsnodes.json")
    with open(path) as handle:
        vnodes, _ = vnodes_of(read_pbsnodes(handle.read()))
    assert [(vnode.name, vnode.host, vnode.mom) for vnode in vnodes] == [
        ("pbshost", "pbshost", ""), ("pbshost[0]", "pbshost-a", "pbshost"), ("pbshost[1]", "pbshost-b", "pbshost"),
        ("pbshost[2]", "pbshost-c", "pbshost"), ("pbshost[3]", "pbshost-d", "pbshost")]


def test_real_priority():
    """A vnode's Priority (set by qmgr on the configured server) is its priority."""
    vnodes, _ = vnodes_of(read_pbsnodes(read("configured")))
    assert vnodes[0].priority == 10


def test_entries_keep_their_lines_and_lower_case_names():
    """Each vnode entry knows the line it starts on; attribute names are in lower case."""
    text = read("neutral")
    entry = read_pbsnodes(text)[0]
    assert text.splitlines()[entry.line - 1].strip() == '"pbshost":{'
    assert entry.get("mom") == "pbshost" and entry.get("resources_available.ncpus") == 2


def test_sizes_counts_queue_and_sharing():
    """Sizes of any resource become kb, counts stay numbers; queue and sharing are read."""
    text = document(n1={"state": "job-busy", "sharing": "force_excl", "queue": "gpu", "Priority": 5,
                        "resources_available": {"ncpus": 8, "mem": "2gb", "ngpus": 2, "scratch": "1tb",
                                                "speed": 1.5, "host": "h1"}})
    (vnode,), _ = vnodes_of(read_pbsnodes(text))
    assert vnode == Vnode("n1", "h1", (("host", "h1"), ("mem", 2 * 1024 ** 2), ("ncpus", 8), ("ngpus", 2),
                                       ("scratch", 1024 ** 3), ("speed", 1.5)), "force_excl", "gpu", 5)


@pytest.mark.parametrize("state", ["down", "offline", "state-unknown,down", "down,offline", "stale",
                                   "unresolvable", "maintenance", "sleep"])
def test_unavailable_vnodes_are_left_out_and_said(state):
    """A vnode down, offline or otherwise out of service is left out, with its state."""
    text = document(n1={"state": state, "resources_available": {"ncpus": 1}},
                    n2={"state": "free", "resources_available": {"ncpus": 2}})
    vnodes, left_out = vnodes_of(read_pbsnodes(text))
    assert [vnode.name for vnode in vnodes] == ["n2"]
    assert left_out == (("n1", state),)


def test_host_falls_back_to_mom_then_name():
    """Without resources_available.host a vnode is on its Mom, else on a host of its own name."""
    text = document(a={"Mom": "m1", "resources_available": {}}, b={"resources_available": {}})
    vnodes, _ = vnodes_of(read_pbsnodes(text))
    assert [(vnode.name, vnode.host) for vnode in vnodes] == [("a", "m1"), ("b", "b")]


def test_vnodes_from_qmgr_node_lines():
    """print node's create/set node lines give the same vnodes."""
    text = ("create node n1 Mom=h1\nset node n1 resources_available.ncpus = 4\n"
            "set node n1 resources_available.mem = 1gb\nset node n1 Priority = 3\n"
            "create node n2\nset node n2 state = offline\n")
    vnodes, left_out = vnodes_of(nodes_from_qmgr(qmgr_objects(parse_qmgr(text))), "qmgr.txt")
    assert vnodes == (Vnode("n1", "h1", (("mem", 1024 ** 2), ("ncpus", 4)), "default_shared", None, 3),)
    assert left_out == (("n2", "offline"),)


@pytest.mark.parametrize("text, message", [
    ("not json", "pbsnodes.json:1: not JSON"),
    ('{"timestamp": 1}', "pbsnodes.json:1: nodes: expected the output of pbsnodes"),
    ('{"nodes": {"n1": 3}}', "n1: expected the vnode's attributes"),
    (document(n1={"resources_available": {"mem": "lots"}}),
     "pbsnodes.json:4: n1 resources_available.mem: not a PBS size"),
    (document(n1={"Priority": "high"}), "n1 priority: 'high' is not a whole number"),
    (document(n1={"sharing": "exclusive"}), "pbsnodes.json:4: n1 sharing: 'exclusive' is not one of default_shared"),
])
def test_malformed_files_name_file_line_and_vnode(text, message):
    """A file that is not pbsnodes' JSON, or a value that is not what PBS writes, is one SiteError."""
    with pytest.raises(SiteError, match=message):
        vnodes_of(read_pbsnodes(text))


@given(st.lists(st.tuples(st.integers(0, 512), st.integers(0, 10 ** 9), st.sampled_from(["kb", "mb", "gb"])),
                min_size=1, max_size=8))
def test_any_listed_vnodes_read_back(nodes):
    """Every vnode written by pbsnodes comes back, in order, with its ncpus and mem in kb."""
    text = document(**{"n{}".format(index): {"state": "free", "resources_available": {
        "ncpus": ncpus, "mem": "{}{}".format(mem, unit)}} for index, (ncpus, mem, unit) in enumerate(nodes)})
    vnodes, _ = vnodes_of(read_pbsnodes(text))
    scale = {"kb": 1, "mb": 1024, "gb": 1024 ** 2}
    assert [(vnode.name, vnode.amount("ncpus"), vnode.amount("mem")) for vnode in vnodes] == [
        ("n{}".format(index), ncpus, mem * scale[unit]) for index, (ncpus, mem, unit) in enumerate(nodes)]
