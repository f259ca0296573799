"""The private clusters' port reservation (tests/pgcluster.py)."""

import glob
import os
import socket

import pytest
from pgcluster import reserved_port


def test_a_reserved_port_is_held_until_its_holder_closes_and_leaves_no_file(tmp_path):
    """A second reservation of the same name fails while the first holds it and succeeds once it is closed;
    nothing is written under the system's temporary directory."""
    before = set(glob.glob(os.path.join("/tmp", "swt_pgcluster_port_*")))
    port, holder = reserved_port()
    name = "\0swt_pgcluster_port_{}".format(port)
    with socket.socket(socket.AF_UNIX) as other:
        with pytest.raises(OSError):
            other.bind(name)
    holder.close()
    with socket.socket(socket.AF_UNIX) as other:
        other.bind(name)
    assert set(glob.glob(os.path.join("/tmp", "swt_pgcluster_port_*"))) == before
