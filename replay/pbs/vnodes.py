"""Vnodes as the scheduler sees them, and allocations as PBS writes them (``exec_vnode``).

An ``Allocation`` is a tuple of pieces ``(vnode, amounts)`` in the order of the job's chunks,
like ``(n1:ncpus=4)+(n2:ncpus=2:mem=1048576kb)``; amounts use ``resources`` units (kb for sizes).
"""

from typing import NamedTuple, Optional, Tuple

from .resources import parse_amount

__all__ = ["Vnode", "parse_exec_vnode", "allocated", "moms_of"]


class Vnode(NamedTuple):
    """One vnode: its ``name``, the ``host`` it is on, its ``resources_available`` amounts (sorted (name,
    value) pairs), its ``sharing`` (``default_shared``, ``default_excl``, ``force_excl``, ...), the
    ``queue`` it is tied to, if any, its ``priority`` (for node_sort_key), and whether its MoM reports
    several vnodes (``in_multivnode_host``: PBS then places chunks host by host and may spread one over
    vnodes of a host, even when each vnode has a host of its own), and that MoM's host (``Mom``; empty:
    ``host``; ``replay.pbs.mom_polls.MANY_HOSTS`` for a vnode that stands for a machine of many hosts)."""

    name: str
    host: str
    available: Tuple[Tuple[str, object], ...]
    sharing: str = "default_shared"
    queue: Optional[str] = None
    priority: int = 0
    in_multivnode_host: bool = False
    mom: str = ""

    def amount(self, name):
        """This vnode's ``resources_available`` value of ``name`` (0 if unset)."""
        for key, value in self.available:
            if key == name:
                return value
        return 0


def parse_exec_vnode(text):
    """The pieces of an ``exec_vnode`` value: ``((vnode, ((res, amount), ...)), ...)``; ValueError if malformed.

    A chunk spread over several vnodes, ``(n1:ncpus=2+n2:ncpus=2)``, gives one piece per vnode."""
    pieces = []
    for group in text.strip().split(")"):
        group = group.strip().lstrip("+").strip()
        if not group:
            continue
        if not group.startswith("("):
            raise ValueError("exec_vnode {!r}: expected (vnode:res=value...)".format(text))
        for piece in group[1:].split("+"):
            name, *fields = piece.split(":")
            amounts = []
            for field in fields:
                key, sep, value = field.partition("=")
                if not sep:
                    raise ValueError("exec_vnode {!r}: expected res=value, not {!r}".format(text, field))
                amounts.append((key, parse_amount(key, value)))
            if not name:
                raise ValueError("exec_vnode {!r}: a piece without a vnode name".format(text))
            pieces.append((name, tuple(sorted(amounts))))
    return tuple(pieces)


def allocated(allocation, name):
    """The total of resource ``name`` over an allocation's pieces."""
    return sum(dict(amounts).get(name, 0) for _, amounts in allocation)


def moms_of(vnodes):
    """Vnode name -> the host of the MoM that runs its jobs."""
    return {vnode.name: vnode.mom or vnode.host for vnode in vnodes}
