"""The output of ``qmgr -c 'print server'`` (and of ``print sched`` or ``print node @default`` appended to it),
read the way qmgr reads its own input.

One command per line: ``;`` separates more, a trailing ``\\`` continues a line, ``#`` at the start or after
white space begins a comment. Commands and object types may be abbreviated (``s q workq ...``). A command
holds several ``attribute[.resource] = value`` pairs separated by commas; ``+=`` adds to a list and ``-=``
takes from it. A value is quoted with ``"`` or ``'`` when it holds a space or a comma; the values of the
entity-limit attributes (``max_run``, ``max_queued``, ...) may hold spaces unquoted. ``print server``
writes a list one element per line, the first with ``=`` and the others with ``+=``; ``print hook`` follows
``import hook NAME ... base64 -`` with the file's content and a blank line, which are skipped here.
Attribute names are kept in lower case (``Priority`` is ``priority``).
"""

import re
from typing import NamedTuple, Tuple

from ..shared.errors import SiteError

__all__ = ["Statement", "Attribute", "QmgrObject", "parse_qmgr", "qmgr_objects", "ENTITY_LIMIT_ATTRIBUTES"]

COMMANDS = ("create", "delete", "set", "unset", "list", "print", "active", "import", "export")
"""qmgr's commands in the order it matches an abbreviation against them."""
CONFIG_COMMANDS = ("create", "delete", "set", "unset", "import")
"""The commands that can appear in a site's configuration; the others only show or select."""
KINDS = (("server", "server"), ("queue", "queue"), ("queues", "queue"), ("node", "node"), ("nodes", "node"),
         ("resource", "resource"), ("sched", "sched"), ("hook", "hook"), ("pbshook", "pbshook"))
"""qmgr's object types, in the order it matches an abbreviation against them, and the kind each names."""
NAMED_KINDS = ("queue", "node", "resource", "hook", "pbshook")
"""Object types a ``set`` must name; the server and the default scheduler need no name."""
ENTITY_LIMIT_ATTRIBUTES = ("max_run", "max_run_res", "max_run_soft", "max_run_res_soft", "max_queued",
                           "max_queued_res", "queued_jobs_threshold", "queued_jobs_threshold_res")
"""Attributes whose values are entity limits such as ``[u:PBS_GENERIC=3]``: spaces allowed unquoted."""
DEFAULT_SCHED = "default"
WHITE = " \t\n\r\x0b\x0c"
"""White space as qmgr (C's isspace) sees it: a no-break space is part of a word."""

_WHITE_RUN = re.compile("[{}]+".format(re.escape(WHITE)))
_ATTRIBUTE_START = re.compile(r"[^ \t=+\-.,#]+(\.[^ \t=+,]+)?[ \t]*(=|\+=|-=)")
_ASSIGNMENT = re.compile(r"([^ \t=+\-.,]+(?:\.[^ \t=+,]+)?)[ \t]*(=|\+=|-=)[ \t]*")
_UNSET_NAME = re.compile(r"([^ \t=+\-.,]+(?:\.[^ \t=+,]+)?)[ \t]*")


class Statement(NamedTuple):
    """One ``attribute = value`` of one command (or a bare ``create``, whose attribute is empty)."""

    line: int
    command: str
    kind: str
    name: str
    attribute: str = ""
    operator: str = ""
    value: str = ""
    file: str = "qmgr.txt"


class Attribute(NamedTuple):
    """An object's attribute as the commands leave it: list elements joined by commas; ``file`` and
    ``line`` where it was set."""

    name: str
    value: str
    line: int
    file: str = "qmgr.txt"


class QmgrObject(NamedTuple):
    """A server, queue, scheduler, node, resource or hook, its attributes in the order first set."""

    kind: str
    name: str
    line: int
    attributes: Tuple[Attribute, ...] = ()

    def get(self, name, default=None):
        """The value of attribute ``name`` (lower case), or ``default``."""
        for attribute in self.attributes:
            if attribute.name == name:
                return attribute.value
        return default


def parse_qmgr(text, filename="qmgr.txt"):
    """The statements of a qmgr command file, in order; SiteError naming file:line on a malformed one."""
    statements = []
    for line, command in _commands(text, filename):
        statements.extend(statement._replace(file=filename) for statement in _statements(command, line, filename))
    return tuple(statements)


def _commands(text, filename):
    """(first line, text) of each command, comments, continuations and hook file bodies removed."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        first = index + 1
        joined = lines[index]
        while joined.endswith("\\") and index + 1 < len(lines):
            index += 1
            joined = joined[:-1] + " " + lines[index]
        index += 1
        for command in _split_commands(joined, first, filename):
            yield first, command
            if _starts_inline_file(command):
                while index < len(lines) and lines[index].strip(WHITE):
                    index += 1


def _split_commands(line, number, filename):
    """The commands on one line: split at ``;`` and cut at a comment, both outside quotes."""
    commands, current, quote = [], [], None
    for position, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == ";":
            commands.append("".join(current))
            current = []
            continue
        elif char == "#" and (position == 0 or line[position - 1] in WHITE):
            break
        current.append(char)
    if quote:
        raise SiteError("{}:{}: unclosed quote {}".format(filename, number, quote))
    commands.append("".join(current))
    return [command.strip(WHITE) for command in commands if command.strip(WHITE)]


def _words(text, splits=-1):
    """``text`` split at runs of white space (qmgr's, not Unicode's), at most ``splits`` times."""
    stripped = text.strip(WHITE)
    return _WHITE_RUN.split(stripped, maxsplit=max(splits, 0)) if stripped else []


def _starts_inline_file(command):
    """Whether an ``import`` reads its file from the lines that follow (its last word is ``-``)."""
    words = _words(command)
    return len(words) > 2 and _command(words[0]) == "import" and words[-1] == "-"


def _command(word):
    """The qmgr command ``word`` abbreviates, or None."""
    for command in COMMANDS:
        if command.startswith(word.lower()):
            return command
    return None


def _kind(word):
    """The object kind ``word`` abbreviates, or None."""
    for spelling, kind in KINDS:
        if spelling.startswith(word.lower()):
            return kind
    return None


def _statements(command_text, line, filename):
    """The statements of one command."""
    where = "{}:{}".format(filename, line)
    words = _words(command_text, 2)
    command = _command(words[0])
    if command is None:
        raise SiteError("{}: {}: not a qmgr command (expected the output of qmgr -c 'print server')".format(
            where, words[0]))
    if command not in CONFIG_COMMANDS:
        raise SiteError("{}: {}: not a command that configures PBS".format(where, words[0]))
    if len(words) < 2 or _kind(words[1]) is None:
        raise SiteError("{}: {}: expected an object type (server, queue, sched, node, resource, hook)".format(
            where, command_text))
    kind = _kind(words[1])
    name, rest = _name_and_rest(words[2] if len(words) > 2 else "", kind)
    if command == "import":
        return [Statement(line, command, kind, name, "", "", rest)]
    if kind in NAMED_KINDS and not name:
        raise SiteError("{}: {} {}: which {}? (a configuration file cannot rely on qmgr's active objects)".format(
            where, command, kind, kind))
    pairs = _names(rest, where) if command == "unset" else _attributes(rest, where)
    if not pairs and command in ("set", "unset"):
        raise SiteError("{}: {} {} {}: no attribute".format(where, command, kind, name).replace("  ", " "))
    return [Statement(line, command, kind, name, *pair) for pair in pairs] or [Statement(line, command, kind, name)]


def _name_and_rest(text, kind):
    """The object's name (``default`` for an unnamed scheduler, empty for the server) and the attribute list
    after it. A word followed by an operator is an attribute, not a name, as qmgr decides with its attribute
    tables."""
    if not text or _ATTRIBUTE_START.match(text):
        name, rest = "", text
    else:
        parts = _words(text, 1)
        name, rest = parts[0], parts[1] if len(parts) > 1 else ""
    if kind == "sched" and not name:
        name = DEFAULT_SCHED
    if kind == "server":
        name = ""  # a configuration has one server, whatever qmgr was told to call it
    return name, rest


def _attributes(text, where):
    """[(attribute, operator, value)] of an attribute list ``a = v, b.r += w``, as qmgr's attributes()."""
    pairs, position = [], _skip_white(text, 0)
    while position < len(text):
        match = _ASSIGNMENT.match(text, position)
        if not match:
            raise SiteError("{}: {!r}: expected attribute = value".format(where, text[position:]))
        attribute, operator = match.group(1).lower(), match.group(2)
        entity_limit = attribute.split(".")[0] in ENTITY_LIMIT_ATTRIBUTES
        value, position = _quoted_value(text, match.end(), entity_limit, "{}: {}".format(where, attribute))
        pairs.append((attribute, operator, value))
        position = _skip_white(text, position)
        if position < len(text):
            if text[position] != ",":
                raise SiteError("{}: {}: unexpected {!r} after the value".format(where, attribute, text[position:]))
            position = _skip_white(text, position + 1)
    return pairs


def _names(text, where):
    """[(attribute, '', '')] of an ``unset`` list ``a, b.r``."""
    pairs = []
    for part in text.split(","):
        match = _UNSET_NAME.fullmatch(part.strip(WHITE) + " ")
        if not match:
            raise SiteError("{}: {!r}: expected an attribute name".format(where, part.strip(WHITE)))
        pairs.append((match.group(1).lower(), "", ""))
    return pairs


def _skip_white(text, position):
    while position < len(text) and text[position] in WHITE:
        position += 1
    return position


def _quoted_value(text, position, allow_white, where):
    """(value, end) as PBS's pbs_quote_parse: quotes removed, up to an unquoted comma (or white space)."""
    out, quote, start = [], None, position
    while position < len(text):
        char = text[position]
        if quote:
            if char == quote:
                quote = None
            else:
                out.append(char)
        elif char in "\"'" and (not allow_white or position == start):
            quote = char
        elif char == "," or (char in WHITE and not allow_white):
            break
        else:
            out.append(char)
        position += 1
    value = "".join(out).rstrip(WHITE) if allow_white else "".join(out)
    if quote:
        raise SiteError("{}: unclosed quote {}".format(where, quote))
    if not value and position == start:
        raise SiteError("{}: no value".format(where))
    return value, position


def qmgr_objects(statements):
    """The objects the statements leave, in order of creation: ``=`` replaces a value, ``+=`` adds a list
    element, ``-=`` takes one away, ``unset`` removes an attribute and ``delete`` an object."""
    objects = {}
    for statement in statements:
        key = (statement.kind, statement.name)
        if statement.command == "delete":
            objects.pop(key, None)
            continue
        if key not in objects:
            objects[key] = (statement.line, {})
        if statement.attribute and statement.command != "import":
            _apply(objects[key][1], statement)
    return tuple(QmgrObject(kind, name, line, tuple(Attribute(attribute, ",".join(values), *where)
                                                  for attribute, (values, where) in attributes.items()))
                 for (kind, name), (line, attributes) in objects.items())


def _apply(attributes, statement):
    """One statement's change to an object's {attribute: ([elements], line)}."""
    name = statement.attribute
    if statement.command == "unset":
        attributes.pop(name, None)
    elif statement.operator == "=" or name not in attributes:
        if statement.operator != "-=":
            attributes[name] = ([statement.value], (statement.line, statement.file))
    elif statement.operator == "+=":
        attributes[name][0].append(statement.value)
    else:
        elements = attributes[name][0]
        attributes[name] = ([element for element in elements if element != statement.value], attributes[name][1])
