"""The replay's outputs stay the same bytes: accuracy and simulate on the bundled traces and KTH-SP2."""

import json
import os

import pytest
from golden_outputs import COMMANDS, DIGESTS, TRACES, outputs, sha256

with open(DIGESTS) as stream:
    GOLDEN = json.load(stream)


def _trace(name):
    trace = TRACES[name]
    if not os.path.exists(trace):
        pytest.skip("{} not found (set SWT_TRACE_DATA to the folder holding it)".format(trace))
    assert sha256(trace) == GOLDEN[name]["input_sha256"], "{} is not the file the digests were made from".format(
        trace)
    return trace


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("name", sorted(TRACES))
def test_outputs_unchanged(name, command):
    """Every file the command writes for the trace has the digest recorded from the reference tree."""
    assert outputs(_trace(name), command) == GOLDEN[name]["outputs"][command]
