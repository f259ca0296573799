"""Predictors simulated in worker processes: the same outputs as one after the other."""

import argparse
import os

import pytest

from replay.simulation import command as simulate
from replay.simulation import runs
from replay.simulation.parallel import can_fork, default_workers, in_processes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HPC2N = os.path.join(ROOT, "traces", "HPC2N-2002-subset.swf")


def parse(*argv):
    parser = argparse.ArgumentParser()
    simulate.add_arguments(parser)
    return parser.parse_args(list(argv))


def outputs(folder, workers, capsys):
    """Every output of one ``simulate`` run with ``workers`` processes: ``{name: bytes}``, stdout included."""
    os.makedirs(folder)
    files = {name: os.path.join(folder, name) for name in ("m.json", "m.csv", "jobs.csv")}
    status = simulate.run(parse(HPC2N, "--predictors", "user,v1,v3,clairvoyant", "--policy", "sjf",
                                "--workers", str(workers), "--json", files["m.json"], "--csv", files["m.csv"],
                                "--jobs-csv", files["jobs.csv"], "--plot", os.path.join(folder, "plots")))
    found = {"status": str(status).encode(), "stdout": capsys.readouterr().out.encode()}
    for directory, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(directory, name), "rb") as stream:
                found[os.path.relpath(os.path.join(directory, name), folder)] = stream.read()
    return found


@pytest.mark.skipif(not can_fork(), reason="worker processes need the fork start method")
def test_parallel_run_writes_the_same_bytes_as_a_serial_one(tmp_path, capsys, monkeypatch):
    """--workers 3 and --workers 1: identical table, JSON, CSV, per-job CSV and figures."""
    pools = []
    monkeypatch.setattr(runs, "in_processes", lambda *args: pools.append(args[4]) or in_processes(*args))
    serial = outputs(str(tmp_path / "serial"), 1, capsys)
    parallel = outputs(str(tmp_path / "parallel"), 3, capsys)
    assert pools == [3]  # the second run, and only it, ran in worker processes
    assert sorted(serial) == sorted(parallel) and {"m.json", "m.csv", "jobs.csv", "stdout"} <= set(serial)
    assert any(name.endswith(".png") for name in serial)
    assert [name for name in serial if serial[name] != parallel[name]] == []


def test_default_workers_is_one_per_predictor_within_the_cpus():
    """Never more processes than predictors, nor than the CPUs this process may use; at least one."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert default_workers(1) == 1
    assert default_workers(100) == cpus
    assert default_workers(2) == min(2, cpus)


def test_workers_must_be_a_positive_whole_number():
    """--workers 0 is a usage error."""
    with pytest.raises(SystemExit):
        parse(HPC2N, "--workers", "0")
