"""The PBS scheduler model's whole-run decisions on 300 busy jobs of the HPC2N log, under both example
sites, match the recorded ones byte for byte: a speed-up of ``replay.pbs`` must not change a decision."""

import os

import pytest

from replay.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "data", "pbs_golden")
SITES = os.path.join(os.path.dirname(HERE), "traces", "sites")


@pytest.mark.parametrize("site", ["strict", "fairshare"])
def test_site_run_matches_recorded_decisions(tmp_path, capsys, site):
    """Every job's start, end, soft walltimes, reservation and extensions equal the recorded run's."""
    out = tmp_path / "jobs.csv"
    status = main(["simulate", os.path.join(GOLDEN, "hpc2n-300.swf"), "--site", os.path.join(SITES, site),
                   "--cores", "120", "--predictors", "user,v3", "--jobs-csv", str(out)])
    capsys.readouterr()
    assert status == 0
    with open(os.path.join(GOLDEN, site + ".csv")) as recorded:
        assert out.read_text() == recorded.read()
