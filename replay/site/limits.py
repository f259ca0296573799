"""Run limits as the server stores them: entity-limit lists such as ``[u:PBS_GENERIC=3], [o:PBS_ALL=10]``
(``max_run``, ``max_run_res.<resource>``), and the old-style attributes the scheduler maps onto them
(OpenPBS 23.06 limits.cpp: ``max_running`` is ``[o:PBS_ALL=N]``, ``max_user_run`` ``[u:PBS_GENERIC=N]``,
``max_group_run`` ``[g:PBS_GENERIC=N]``, ``max_user_res.R`` and ``max_group_res.R`` the same for
``max_run_res.R``).

An entry is ``[t:name=value]``: ``t`` is ``u`` (user), ``g`` (group), ``p`` (project) or ``o`` (overall,
whose name must be ``PBS_ALL``); the name may be quoted, is ``PBS_GENERIC`` for "each one", and holds none of
``/[]";:|<>+,?*``; the value is not negative (PBS's entlim_parse_one).
"""

from ..pbs.policy import Limit
from ..pbs.resources import parse_amount

__all__ = ["parse_entity_limits", "run_limits", "is_run_limit", "OLD_STYLE", "RUN_LIMITS"]

RUN_LIMITS = ("max_run", "max_run_res")
"""The new-style hard run limits the scheduler enforces when it decides which job runs."""
OLD_STYLE = {"max_running": ("max_run", "o", "PBS_ALL"), "max_user_run": ("max_run", "u", "PBS_GENERIC"),
             "max_group_run": ("max_run", "g", "PBS_GENERIC"), "max_user_res": ("max_run_res", "u", "PBS_GENERIC"),
             "max_group_res": ("max_run_res", "g", "PBS_GENERIC")}
"""Old-style hard limits: the new attribute, kind and entity each stands for."""
KINDS = ("u", "g", "p", "o")
INVALID_NAME_CHARACTERS = '/[]";:|<>+,?*'


def parse_entity_limits(text):
    """((kind, entity, value text), ...) of an entity-limit list; ValueError saying what is wrong."""
    entries = []
    for part in text.split(","):
        if not part.strip():
            raise ValueError("an empty entry in {!r}".format(text))
        entries.append(_entry(part.strip()))
    return tuple(entries)


def _entry(text):
    """(kind, entity, value text) of one ``[t:name=value]``."""
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError("{!r}: expected [t:name=value]".format(text))
    kind, colon, rest = text[1:-1].strip().partition(":")
    if kind not in KINDS or not colon:
        raise ValueError("{!r}: expected u:, g:, p: or o: after [".format(text))
    entity, equals, value = rest.partition("=")
    entity, value = _unquoted(entity.strip()), value.strip()
    if not equals or not value:
        raise ValueError("{!r}: no value".format(text))
    if value.startswith("-") or any(char.isspace() for char in value):
        raise ValueError("{!r}: the value must be one amount, not negative".format(text))
    _check_entity(kind, entity, text)
    return kind, entity, value


def _unquoted(name):
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "\"'":
        return name[1:-1]
    return name


def _check_entity(kind, entity, text):
    """ValueError unless ``entity`` may follow ``kind`` (PBS's etlim_validate_name)."""
    if kind == "o" and entity != "PBS_ALL":
        raise ValueError("{!r}: an overall (o:) limit is for PBS_ALL only".format(text))
    if kind != "o" and entity == "PBS_ALL":
        raise ValueError("{!r}: PBS_ALL goes with o: only".format(text))
    if not entity or any(char.isspace() or char in INVALID_NAME_CHARACTERS for char in entity):
        raise ValueError("{!r}: {!r} is not an entity name".format(text, entity))


def is_run_limit(attribute):
    """Whether ``attribute`` (``max_run``, ``max_run_res.ncpus``, ``max_user_run``, ...) is a hard run limit."""
    base = attribute.split(".")[0]
    return base in RUN_LIMITS or base in OLD_STYLE


def run_limits(attribute, value):
    """The ``Limit`` entries of a hard run-limit attribute and its value; ValueError if the value is malformed."""
    base, _, resource = attribute.partition(".")
    if (base in ("max_run_res", "max_user_res", "max_group_res")) != bool(resource):
        raise ValueError("{}: a resource limit names its resource (max_run_res.ncpus), others do not".format(
            attribute))
    if base in OLD_STYLE:
        new, kind, entity = OLD_STYLE[base]
        entries = ((kind, entity, value.strip()),)
    elif base in RUN_LIMITS:
        new, entries = base, parse_entity_limits(value)
    else:
        raise ValueError("{}: not a run limit".format(attribute))
    name = new + ("." + resource if resource else "")
    return tuple(Limit(name, kind, entity, _amount(resource, amount)) for kind, entity, amount in entries)


def _amount(resource, text):
    """The limit's cap: a count of jobs, or an amount of ``resource`` (kb for sizes)."""
    amount = parse_amount(resource, text) if resource else _count(text)
    if isinstance(amount, str) or amount < 0:
        raise ValueError("{!r} is not an amount{}".format(text, " of " + resource if resource else ""))
    return amount


def _count(text):
    try:
        return int(text)
    except ValueError:
        raise ValueError("{!r} is not a number of jobs".format(text)) from None

