"""PBS resource values as the scheduler reads them: sizes, durations, ``select`` and ``place``.

Sizes are kept in kilobytes, as PBS keeps them (``1gb`` = 1,048,576 kb; a bare number is bytes,
``w`` a word of 8 bytes, rounded up to whole kb). Durations are seconds. A ``select`` is chunks
``N:res=value:...`` joined by ``+``; ``place`` is ``arrangement[:sharing][:group=res]``.
"""

import re
from typing import NamedTuple, Optional, Tuple

__all__ = ["parse_size", "parse_duration", "parse_amount", "Chunk", "parse_select", "Place", "parse_place",
           "SIZE_RESOURCES", "ARRANGEMENTS", "SHARINGS"]

SIZE_RESOURCES = frozenset(("mem", "vmem", "pmem", "pvmem", "file", "mpiprocs_mem"))
"""Built-in resources whose values are sizes; other numeric resources are counts (ncpus, ngpus, mpiprocs)."""

_SIZE = re.compile(r"^(\d+)([kmgtp]?)(b|w)?$", re.IGNORECASE)
_UNIT_KB = {"": 1 / 1024, "k": 1, "m": 1024, "g": 1024 ** 2, "t": 1024 ** 3, "p": 1024 ** 4}

ARRANGEMENTS = ("free", "pack", "scatter", "vscatter")
SHARINGS = ("excl", "shared", "exclhost")


def parse_size(text):
    """Kilobytes in a PBS size (``4gb``, ``512mb``, ``100``); ValueError if it is not one."""
    match = _SIZE.match(text.strip())
    if not match:
        raise ValueError("not a PBS size: {!r}".format(text))
    number, scale, unit = int(match.group(1)), match.group(2).lower(), (match.group(3) or "b").lower()
    word = 8 if unit == "w" else 1
    kb = number * word * _UNIT_KB[scale]
    return int(-(-kb // 1))


def parse_duration(text):
    """Seconds in a PBS duration (``HH:MM:SS``, ``MM:SS`` or seconds, hours unbounded); ValueError if not one."""
    parts = text.strip().split(":")
    if len(parts) > 3 or not all(part.isdigit() for part in parts):
        seconds = float(text)  # PBS also accepts plain (fractional) seconds
        if seconds < 0:
            raise ValueError("negative duration: {!r}".format(text))
        return int(seconds)
    total = 0
    for part in parts:
        total = total * 60 + int(part)
    return total


def parse_amount(name, text):
    """The value of resource ``name`` as the scheduler compares it: kb for sizes, an int for counts,
    seconds for ``walltime``-like durations; the text itself when it is not a number (``host``, ``arch``)."""
    if name in SIZE_RESOURCES:
        return parse_size(text)
    if name in ("walltime", "soft_walltime", "cput", "min_walltime", "max_walltime"):
        return parse_duration(text)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


class Chunk(NamedTuple):
    """``count`` identical chunks; ``amounts`` the numeric resources of one chunk and ``requirements`` the
    others (``host=n1``, ``arch=linux``), each a tuple of (name, value) sorted by name."""

    count: int
    amounts: Tuple[Tuple[str, int], ...]
    requirements: Tuple[Tuple[str, str], ...] = ()

    def amount(self, name):
        """This chunk's amount of ``name`` (0 if it asks for none)."""
        for key, value in self.amounts:
            if key == name:
                return value
        return 0


def parse_select(text):
    """The chunks of a ``select`` spec, in order; ValueError naming the bad part."""
    chunks = []
    for part in text.strip().split("+"):
        fields = part.split(":")
        count = 1
        if fields and fields[0].isdigit():
            count = int(fields.pop(0))
        amounts, requirements = {}, {}
        for field in fields:
            name, sep, value = field.partition("=")
            if not sep or not name:
                raise ValueError("chunk {!r}: expected name=value, not {!r}".format(part, field))
            parsed = parse_amount(name.strip(), value.strip())
            (requirements if isinstance(parsed, str) else amounts)[name.strip()] = parsed
        if count < 1:
            raise ValueError("chunk {!r}: a chunk count must be >= 1".format(part))
        chunks.append(Chunk(count, tuple(sorted(amounts.items())), tuple(sorted(requirements.items()))))
    return tuple(chunks)


class Place(NamedTuple):
    """How chunks are laid on vnodes: ``arrangement`` free, pack, scatter or vscatter; ``sharing`` ''
    (the vnodes' own sharing), excl, shared or exclhost; ``group`` a resource to group vnodes by."""

    arrangement: str = "free"
    sharing: str = ""
    group: Optional[str] = None


def parse_place(text):
    """A ``place`` spec (``scatter:excl``, ``pack``, ``free:group=switch``); ValueError if malformed."""
    arrangement, sharing, group = "free", "", None
    for word in (part.strip() for part in text.strip().split(":") if part.strip()):
        if word in ARRANGEMENTS:
            arrangement = word
        elif word in SHARINGS:
            sharing = word
        elif word.startswith("group="):
            group = word[len("group="):]
        else:
            raise ValueError("place {!r}: unknown word {!r}".format(text, word))
    return Place(arrangement, sharing, group)
