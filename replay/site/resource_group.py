"""The fairshare tree's file ``sched_priv/resource_group``, read as OpenPBS 23.06 reads it (fairshare.cpp
parse_group): one group per line, ``name id parent shares`` separated by white space; ``#`` (or ``*``)
starts a comment line. A parent must be defined on an earlier line, or be ``root`` (the tree's top) or
``unknown`` (the group PBS adds for every entity the file does not name). Names must be unique; PBS's
documentation asks the same of ids, which the scheduler itself never checks.
"""

from ..pbs.policy import ShareGroup
from ..shared.errors import SiteError

__all__ = ["read_resource_group", "group_lines", "ROOT", "UNKNOWN"]

ROOT = "root"
UNKNOWN = "unknown"
"""The group PBS creates for entities the file does not name; its shares are sched_config's unknown_shares."""


def read_resource_group(text, filename="resource_group"):
    """The groups of a resource_group text, in file order; SiteError naming file:line: group on a bad line."""
    groups, names, ids = [], {ROOT, UNKNOWN}, {}
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split()
        if not words or words[0][0] in "#*":
            continue
        group = _group(words, "{}:{}".format(filename, number))
        where = "{}:{}: {}".format(filename, number, group.name)
        if group.name in names:
            raise SiteError("{}: the name is not unique".format(where))
        if group.parent not in names and group.parent != "TREEROOT":
            raise SiteError("{}: parent {} is not defined on an earlier line".format(where, group.parent))
        if group.id in ids:
            raise SiteError("{}: id {} is already {}'s".format(where, group.id, ids[group.id]))
        names.add(group.name)
        ids[group.id] = group.name
        groups.append(group)
    return tuple(groups)


def _group(words, where):
    """The ShareGroup of one line's words."""
    name = words[0]
    if len(words) != 4:
        raise SiteError("{}: {}: expected 'name id parent shares', not {} words".format(where, name, len(words)))
    try:
        group_id, shares = int(words[1]), int(words[3])
    except ValueError:
        raise SiteError("{}: {}: id and shares must be whole numbers".format(where, name)) from None
    if shares < 0:
        raise SiteError("{}: {}: shares must not be negative".format(where, name))
    parent = ROOT if words[2] == "TREEROOT" else words[2]
    return ShareGroup(name, group_id, parent, shares)


def group_lines(text):
    """{group name: the line defining it} of a resource_group text (read_resource_group checked it)."""
    lines = {}
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split()
        if words and words[0][0] not in "#*":
            lines.setdefault(words[0], number)
    return lines
