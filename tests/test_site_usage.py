"""The scheduler's fairshare usage file, as OpenPBS 23.06's write_usage writes it."""

import struct

import pytest

from replay.shared.errors import SiteError
from replay.site.usage import FairshareUsage, decode_usage


def usage_file_bytes(last_decay, entries):
    """A version 2 usage file laid out as OpenPBS 23.06's write_usage writes it on x86-64."""
    data = b"PBS_MAG!\0" + bytes(7) + struct.pack("=d", 2.0) + struct.pack("=q", last_decay)
    for name, usage in entries:
        data += name.encode().ljust(50, b"\0") + bytes(6) + struct.pack("=d", usage)
    return data


def test_usage_file_decoded_with_its_last_decay():
    """The last decay time and each entity's usage are read; names end at their first NUL."""
    data = usage_file_bytes(1795694703, [("fid_ben", 46.0), ("fid_ana", 96.5)])
    assert decode_usage(data) == FairshareUsage(1795694703, (("fid_ben", 46.0), ("fid_ana", 96.5)))


def test_usage_file_without_entities():
    """A scheduler with no usage yet writes the header and the last decay only."""
    assert decode_usage(usage_file_bytes(1000, [])) == FairshareUsage(1000, ())


@pytest.mark.parametrize("data, words", [(bytes(64), "not a version 2"), (b"PBS", "too short"),
                                         (usage_file_bytes(1, [("a", 2.0)])[:-3], "bytes left")])
def test_other_file_is_refused_naming_it(data, words):
    """A file that is not a whole version 2 usage file is refused in one line naming it, not misread."""
    with pytest.raises(SiteError, match="^usage: .*" + words):
        decode_usage(data)
