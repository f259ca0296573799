"""Vnodes from ``pbsnodes -av -F json`` (or from ``create node``/``set node`` lines of qmgr's ``print node``).

Each vnode gives its ``resources_available`` (``mem`` and other sizes in kb, counts as numbers, ``host``,
``arch`` and other strings as text), ``sharing``, ``queue``, ``Priority`` and ``state``. A vnode that was
down, offline or otherwise out of service when the file was written is left out of the replay: which ones
and why is returned with the vnodes for the site's notes. Attribute names are kept in lower case.
"""

import json
import re
from typing import NamedTuple, Tuple

from ..pbs.resources import parse_amount, parse_size
from ..pbs.vnodes import Vnode
from ..shared.errors import SiteError

__all__ = ["NodeEntry", "read_pbsnodes", "nodes_from_qmgr", "vnodes_of", "UNAVAILABLE_STATES", "SHARINGS"]

UNAVAILABLE_STATES = ("down", "offline", "state-unknown", "unresolvable", "stale", "maintenance", "sleep")
"""Vnode states in which the scheduler places no job."""
SHARINGS = ("default_shared", "default_excl", "default_exclhost", "ignore_excl", "force_excl", "force_exclhost")
"""A vnode's sharing values (pbs_internal.h)."""
_SIZE_TEXT = re.compile(r"^\d+[kmgtp]?[bw]$", re.IGNORECASE)


class NodeEntry(NamedTuple):
    """One vnode as the file lists it: its ``name``, the ``line`` it starts on, and its attributes as
    (lower-case name, value) pairs, ``resources_available.<res>`` flattened."""

    name: str
    line: int
    attributes: Tuple[Tuple[str, object], ...]

    def get(self, name, default=None):
        """The value of attribute ``name``, or ``default``."""
        for key, value in self.attributes:
            if key == name:
                return value
        return default


def read_pbsnodes(text, filename="pbsnodes.json"):
    """The vnodes of a ``pbsnodes -av -F json`` text, in its order; SiteError if it is not that."""
    try:
        document = json.loads(text)
    except ValueError as err:
        raise SiteError("{}:{}: not JSON: {}".format(filename, getattr(err, "lineno", 1), err.msg)) from None
    nodes = document.get("nodes") if isinstance(document, dict) else None
    if not isinstance(nodes, dict):
        raise SiteError("{}:1: nodes: expected the output of pbsnodes -av -F json".format(filename))
    entries, position = [], 0
    for name, node in nodes.items():
        match = re.compile(re.escape(json.dumps(name)) + r"\s*:\s*\{").search(text, position)
        position = match.end() if match else position
        line = text.count("\n", 0, match.start()) + 1 if match else 1
        if not isinstance(node, dict):
            raise SiteError("{}:{}: {}: expected the vnode's attributes".format(filename, line, name))
        entries.append(NodeEntry(name, line, tuple(_flattened(node))))
    return tuple(entries)


def _flattened(node):
    """(attribute, value) pairs, nested objects such as resources_available flattened with a dot."""
    for key, value in node.items():
        if isinstance(value, dict):
            for resource, amount in value.items():
                yield "{}.{}".format(key.lower(), resource.lower()), amount
        else:
            yield key.lower(), value


def nodes_from_qmgr(objects):
    """NodeEntry for each ``node`` object of qmgr's print node (its ``create node`` line)."""
    return tuple(NodeEntry(item.name, item.line, tuple((attribute.name, attribute.value)
                                                      for attribute in item.attributes))
                 for item in objects if item.kind == "node")


def vnodes_of(entries, filename="pbsnodes.json"):
    """(vnodes in service, ((name, state), ...) left out); SiteError naming file:line: vnode attribute."""
    vnodes, left_out = [], []
    for entry in entries:
        state = str(entry.get("state", "free"))
        if any(word.strip() in UNAVAILABLE_STATES for word in state.split(",")):
            left_out.append((entry.name, state))
        else:
            vnodes.append(_vnode(entry, filename))
    return tuple(vnodes), tuple(left_out)


def _vnode(entry, filename):
    """The Vnode of one entry."""
    available = []
    for key, value in entry.attributes:
        if key.startswith("resources_available."):
            resource = key.split(".", 1)[1]
            available.append((resource, _amount(resource, value, "{}:{}: {} {}".format(
                filename, entry.line, entry.name, key))))
    amounts = dict(available)
    host = str(amounts.get("host") or entry.get("mom") or entry.name)
    queue = entry.get("queue")
    multivnode = str(entry.get("in_multivnode_host", "0")).strip() not in ("", "0", "None")
    sharing = str(entry.get("sharing", "default_shared"))
    if sharing not in SHARINGS:
        raise SiteError("{}:{}: {} sharing: {!r} is not one of {}".format(
            filename, entry.line, entry.name, sharing, ", ".join(SHARINGS)))
    mom = str(entry.get("mom") or host)
    return Vnode(entry.name, host, tuple(sorted(available)), sharing, str(queue) if queue else None,
                 _priority(entry, filename), multivnode, "" if mom == host else mom)


def _amount(resource, value, where):
    """A resource amount as the scheduler compares it: sizes in kb, numbers as numbers, other text as is."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = repr(value) if isinstance(value, float) else str(value)
    try:
        amount = parse_amount(resource, value)
    except ValueError as err:
        raise SiteError("{}: {}".format(where, err)) from None
    if isinstance(amount, str) and _SIZE_TEXT.match(amount):
        return parse_size(amount)
    return amount


def _priority(entry, filename):
    value = entry.get("priority", 0)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SiteError("{}:{}: {} priority: {!r} is not a whole number".format(
            filename, entry.line, entry.name, value)) from None
