"""The site of a fidelity check: without --site, PBS's defaults and vnodes inferred from exec_vnode."""

import pytest
from test_fidelity_records import e, q, read, s

from replay.fidelity.machine import inferred_vnodes, site_model, vnode_sort_key
from replay.pbs.policy import SchedulingPolicy
from replay.shared.errors import SiteError


def test_vnodes_have_the_most_seen_in_use_at_once(tmp_path):
    """Two jobs overlapping on n1 give it 4 cpus; one after the other on n2 gives 2; names in natural order."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), q("00:00", "2.s", 100, 100), q("00:00", "3.s", 100, 100),
                             s("00:00", "1.s", 100, 100, 100, "(n1:ncpus=2)"),
                             s("00:00", "2.s", 100, 100, 100, "(n1:ncpus=2:mem=1gb)+(n10:ncpus=1)"),
                             e("00:05", "1.s", 100, 100, 100, 105, "(n1:ncpus=2)"),
                             s("00:06", "3.s", 100, 100, 106, "(n1:ncpus=2)")])
    vnodes = inferred_vnodes(acc)
    assert [vnode.name for vnode in vnodes] == ["n1", "n10"]
    assert vnodes[0].amount("ncpus") == 4 and vnodes[0].amount("mem") == 1024 ** 2 and vnodes[1].amount("ncpus") == 1


def test_natural_order_of_names():
    """host[2] before host[10], n9 before n10."""
    assert sorted(["h[10]", "h[2]", "n10", "n9"], key=vnode_sort_key) == ["h[2]", "h[10]", "n9", "n10"]


def test_without_site_the_defaults(tmp_path):
    """No --site: PBS's default policy, the inferred vnodes, and a note saying they are inferred."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100, "(pbshost[1]:ncpus=2)")])
    site = site_model(None, acc)
    assert site.policy == SchedulingPolicy() and site.vnodes[0].host == "pbshost"
    assert "inferred" in site.notes[0] and site.not_modelled == ()


def test_logs_without_exec_vnode_need_a_site(tmp_path):
    """Logs naming no vnode (converted from SWF, Torque): a SiteError asking for the site's folder."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100, "(n1:ncpus=2)")
                             .replace("exec_vnode=(n1:ncpus=2) ", "")])
    with pytest.raises(SiteError, match="no exec_vnode"):
        site_model(None, acc)


def test_vnodes_the_site_does_not_hold_are_noted(tmp_path):
    """Jobs that ran on a vnode the site folder does not list: a note names it."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100, "(n9:ncpus=2)")])
    site = tmp_path / "site"
    site.mkdir()
    (site / "qmgr.txt").write_text("create node n1\nset node n1 resources_available.ncpus = 8\n")
    notes = site_model(str(site), acc).notes
    assert any("does not hold" in note and "n9" in note for note in notes)
