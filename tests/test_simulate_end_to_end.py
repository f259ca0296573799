"""benchmarks/simulate_end_to_end.py: a command's memory is its own, whatever the benchmark holds."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from simulate_end_to_end import Measure  # noqa: E402

HELD_MB = 256


def test_peak_rss_is_the_commands_not_the_benchmarks(tmp_path):
    """A benchmark holding a big trace starts a small command: the command's peak RSS is reported small
    (Linux's ``ru_maxrss`` would report at least what the benchmark held), and the command's own
    allocation shows."""
    held = bytearray(HELD_MB * 2 ** 20)
    held[::4096] = b"\x01" * len(held[::4096])  # touch every page: resident
    child = ("import time; block = bytearray(32 * 2 ** 20); block[::4096] = b'\\x01' * len(block[::4096]); "
             "time.sleep(0.4)")
    measure = Measure([sys.executable, "-c", child], str(tmp_path))
    assert 32 < measure.peak_mb < HELD_MB / 2
    assert measure.tree_pss_peak_mb < HELD_MB / 2
    del held
