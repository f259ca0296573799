"""The site the logs were recorded on: its policy, vnodes and scheduler timer, from ``--site DIR`` or,
without one, PBS's defaults with vnodes inferred from the logs' ``exec_vnode`` values."""

from typing import NamedTuple, Tuple

from ..pbs.mom_polls import natural_host
from ..pbs.policy import SchedulingPolicy
from ..pbs.vnodes import Vnode
from ..shared.errors import SiteError

__all__ = ["SiteModel", "inferred_vnodes", "site_model", "vnode_sort_key"]

_INFERRED = ("ncpus", "mem", "ngpus")
"""The amounts a vnode is inferred to have: the most the logs show in use on it at once."""


class SiteModel(NamedTuple):
    """What the check runs the scheduler model with, and what it says about where that came from."""

    policy: SchedulingPolicy
    vnodes: Tuple[Vnode, ...]
    scheduler_iteration_s: int
    notes: Tuple[str, ...]
    not_modelled: Tuple[str, ...]


def vnode_sort_key(name):
    """Vnode names in natural order: ``n2`` before ``n10``, ``host[2]`` before ``host[10]``."""
    key, digits = [], ""
    for char in name + "\0":
        if char.isdigit():
            digits += char
            continue
        if digits:
            key.append((1, int(digits), ""))
            digits = ""
        key.append((0, 0, char))
    return tuple(key)


def inferred_vnodes(accounting):
    """One Vnode per name the logs' ``exec_vnode`` values show, with the most ncpus, mem and ngpus found in
    use on it at once (a lower bound of what it has), in natural name order."""
    changes = []
    for record in accounting.jobs:
        for run in record.runs:
            changes.append((run.start_order, 1, run.allocation))
            if run.end_order is not None:
                changes.append((run.end_order, -1, run.allocation))
    used, peak = {}, {}
    for _, sign, allocation in sorted(changes, key=lambda change: (change[0], change[1])):
        for vnode, amounts in allocation:
            for name, amount in amounts:
                if name in _INFERRED and isinstance(amount, int):
                    used[vnode, name] = used.get((vnode, name), 0) + sign * amount
                    peak[vnode, name] = max(peak.get((vnode, name), 0), used[vnode, name])
    names = sorted({vnode for vnode, _ in peak}, key=vnode_sort_key)
    return tuple(Vnode(name, natural_host(name), tuple(sorted((resource, peak[vnode, resource])
                                                          for vnode, resource in peak if vnode == name)))
                 for name in names)


def _inferred_or_error(accounting, advice):
    vnodes = inferred_vnodes(accounting)
    if not vnodes:
        raise SiteError("the logs name no vnode (no exec_vnode in their S and E records): {}".format(advice))
    return vnodes


def _inferred_note(vnodes):
    shown = ", ".join("{} ({})".format(vnode.name, " ".join("{}={}".format(k, v) for k, v in vnode.available))
                      for vnode in vnodes[:6])
    more = " ..." if len(vnodes) > 6 else ""
    return ("no --site: PBS's default policy; vnodes inferred from exec_vnode, each with the most seen in use "
            "at once: {}{}".format(shown, more))


def _unknown_vnodes_note(accounting, vnodes):
    """A note naming the vnodes the logs' jobs ran on that the site folder does not hold, if any."""
    known = {vnode.name for vnode in vnodes}
    unknown = [vnode.name for vnode in inferred_vnodes(accounting) if vnode.name not in known]
    if not unknown:
        return ()
    shown = ", ".join(unknown[:6]) + (" ..." if len(unknown) > 6 else "")
    return ("the logs' jobs ran on vnodes the site folder does not hold (down, offline or gone since?): {}; "
            "the model neither counts nor uses them".format(shown),)


def site_model(site_dir, accounting):
    """The ``SiteModel`` of ``--site DIR`` (None: defaults and inferred vnodes); SiteError from the reader."""
    if site_dir is None:
        vnodes = _inferred_or_error(accounting, "give --site DIR")
        policy = SchedulingPolicy()
        return SiteModel(policy, vnodes, policy.scheduler_iteration_s, (_inferred_note(vnodes),), ())
    from ..site import read_site
    site = read_site(site_dir)
    notes = tuple(site.notes())
    vnodes = site.vnodes
    if not vnodes:
        vnodes = _inferred_or_error(accounting, "give the site's pbsnodes.json")
        notes += (_inferred_note(vnodes).replace("no --site: PBS's default policy; ", "no pbsnodes.json: "),)
    notes += _unknown_vnodes_note(accounting, vnodes)
    not_modelled = tuple("{} ({} line {})".format(setting.name, setting.file, setting.line)
                         for setting in site.settings if setting.category == "not modelled")
    return SiteModel(site.policy, tuple(vnodes), site.scheduler_iteration_s, notes, not_modelled)
