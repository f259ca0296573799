"""The scheduler's fairshare usage file ``sched_priv/usage`` (version 2, OpenPBS 23.06 ``fairshare.cpp``
``write_usage``): a header, the time of the last decay, then each entity whose usage is not 1, as a
50-byte name and a double.

The last decay time fixes when PBS decays usage: every ``fairshare_decay_time`` after it, at the first
cycle past each period, the scheduler keeping the time on that grid, across restarts too (it is read back
from this file). A log does not hold it; with this file in the site folder the replay decays on the
site's own grid. The entities' usage is the state at the time the file was copied.
"""

import struct
from typing import NamedTuple, Tuple

from ..shared.errors import SiteError

__all__ = ["FairshareUsage", "decode_usage"]

_HEADER = struct.Struct("=9s7xd")
_LAST_DECAY = struct.Struct("=q")
_ENTRY = struct.Struct("=50s6xd")
_MAGIC = b"PBS_MAG!"


class FairshareUsage(NamedTuple):
    """A usage file's last decay time (epoch seconds) and ``(entity, usage)`` pairs in file order."""

    last_decay: int
    usage: Tuple[Tuple[str, float], ...] = ()


def decode_usage(data, filename="usage"):
    """The ``FairshareUsage`` of a usage file's bytes; SiteError naming the file when it is not version 2."""
    if len(data) < _HEADER.size + _LAST_DECAY.size:
        raise SiteError("{}: too short for a fairshare usage file ({} bytes)".format(filename, len(data)))
    tag, version = _HEADER.unpack_from(data)
    if tag.rstrip(b"\0") != _MAGIC or version != 2:
        raise SiteError("{}: not a version 2 fairshare usage file (the format OpenPBS 23.06 writes)".format(
            filename))
    last_decay = _LAST_DECAY.unpack_from(data, _HEADER.size)[0]
    offset, usage = _HEADER.size + _LAST_DECAY.size, []
    while offset + _ENTRY.size <= len(data):
        name, amount = _ENTRY.unpack_from(data, offset)
        try:
            usage.append((name.split(b"\0")[0].decode("utf-8"), amount))
        except UnicodeDecodeError:
            raise SiteError("{}: entity name at byte {} is not UTF-8".format(filename, offset)) from None
        offset += _ENTRY.size
    if offset != len(data):
        raise SiteError("{}: {} bytes left after the last entry".format(filename, len(data) - offset))
    return FairshareUsage(last_decay, tuple(usage))
