"""The ``simulate`` command: options, machine size, outputs."""

import argparse
import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from replay.errors import ReplayError
from replay.simulation import simulate
from replay.simulation.cluster import Cluster
from replay.traces.trace import Job, ReadStats, Trace
from figures import boxes, legend_labels, png_size, saved_figures  # noqa: F401 (saved_figures: fixture)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SWF = """; MaxProcs: 4
1 0 0 100 2 -1 -1 2 200 -1 1 1 1 -1 -1 -1 -1 -1
2 1 0 50 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1
3 2 0 10 2 -1 -1 2 60 -1 1 2 1 -1 -1 -1 -1 -1
"""


def parse(*argv):
    parser = argparse.ArgumentParser()
    simulate.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def swf(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(SWF)
    return str(path)


def test_defaults_are_pbs_defaults():
    """FIFO, strict ordering, depth 1, pbs extension, 600 s iteration, tau 10 s."""
    args = parse("x.swf")
    settings = simulate.settings_of(args)
    assert (settings.policy, settings.strict_ordering, settings.backfill_depth, settings.extension,
            settings.cycle_interval_s, settings.selective, args.bsld_tau) == ("fifo", True, 1, "pbs", 600, False, 10)
    assert args.predictors == ("user", "v1", "v2", "v3", "clairvoyant")


def test_unknown_predictor_is_a_usage_error():
    """--predictors names must be in the registry."""
    with pytest.raises(SystemExit):
        parse("x.swf", "--predictors", "user,oracle")


def test_machine_from_swf_header_cores_or_nodes():
    """MaxProcs by default; --cores overrides; --nodes needs --cores-per-node."""
    trace = Trace([Job("1", "u", 0, 1, 1, 1)], "swf", ("x",), ReadStats(), max_procs=64)
    assert simulate.machine_of(parse("x"), trace)[0] == Cluster.of_cores(64)
    assert simulate.machine_of(parse("x", "--cores", "8"), trace)[0] == Cluster.of_cores(8)
    assert simulate.machine_of(parse("x", "--nodes", "4", "--cores-per-node", "16"), trace)[0] == Cluster(4, 16)
    with pytest.raises(ReplayError):
        simulate.machine_of(parse("x", "--nodes", "4"), trace)


def test_machine_of_a_pbs_log_is_its_busiest_moment():
    """Without a header: the most cores the recorded schedule used at once."""
    jobs = [Job("1", "u", 0, 10, 10, 3, start_time=0, end_time=10), Job("2", "u", 0, 10, 10, 4, start_time=5,
                                                                       end_time=15), Job("3", "u", 0, 5, 10, 6,
                                                                                         start_time=10, end_time=15)]
    trace = Trace(jobs, "pbs", ("x",), ReadStats())
    assert simulate.machine_of(parse("x"), trace)[0] == Cluster.of_cores(10)  # jobs 2 and 3 at 10..15


def test_jobs_wider_than_the_machine_are_left_out_with_a_note():
    """A 5-core job on 4 cores cannot run: it is left out and counted."""
    jobs, notes = simulate.runnable_jobs([Job("1", "u", 0, 1, 1, 5), Job("2", "u", 0, 1, 1, 4)], Cluster(4))
    assert [job.job_id for job in jobs] == ["2"] and "1 jobs left out" in notes[0]


def test_run_writes_table_json_and_jobs_csv(swf, tmp_path, capsys):
    """One run: text table on stdout, the JSON tables, one CSV row per job and predictor."""
    json_path, jobs_path = str(tmp_path / "m.json"), str(tmp_path / "jobs.csv")
    status = simulate.run(parse(swf, "--predictors", "user,clairvoyant", "--json", json_path, "--jobs-csv", jobs_path))
    assert status == 0
    assert "PBS scheduling simulation" in capsys.readouterr().out
    summary = json.load(open(json_path))["tables"][0]
    assert [row["predictor"] for row in summary["rows"]] == ["user", "clairvoyant"]
    rows = list(csv.DictReader(open(jobs_path)))
    assert len(rows) == 6
    # user: job 2 is the top job, reserved at job 1's walltime (200), started when job 1 ended (100);
    # job 3 (2 cores, walltime 60) backfilled at its submission.
    user_rows = {row["job_id"]: row for row in rows if row["predictor"] == "user"}
    assert (user_rows["2"]["start_time"], user_rows["2"]["reservation_time"]) == ("100", "200")
    assert user_rows["3"]["start_time"] == "2"


def test_run_does_not_depend_on_string_hashing(swf, tmp_path):
    """Byte-identical JSON and jobs CSV from interpreters with different PYTHONHASHSEEDs: nothing follows a
    set's or a hash's order (two runs in one process would share the order and prove nothing)."""
    outputs = []
    for seed in ("1", "2"):
        json_path, jobs_path = str(tmp_path / "m{}.json".format(seed)), str(tmp_path / "j{}.csv".format(seed))
        subprocess.run([sys.executable, "-m", "replay", "simulate", swf, "--json", json_path, "--jobs-csv", jobs_path],
                       cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED=seed), stdout=subprocess.DEVNULL, check=True)
        outputs.append((open(json_path, "rb").read(), open(jobs_path, "rb").read()))
    assert outputs[0] == outputs[1]
    assert outputs[0][1].count(b"\n") == 1 + 3 * 5  # a header, then 3 jobs x the 5 default predictors


def test_plot_writes_wait_and_slowdown_figures(swf, tmp_path, saved_figures):
    """--plot DIR gives the two PNGs, boxes of each class's waits (hours) and bounded slowdowns.

    With user: jobs 1 and 3 start at submission, job 2 waits 99 s for job 1, so the waits are 0, 99, 0 s
    (quartiles 0, 0, 49.5 s) and the slowdowns 1, (99 + 50) / 50 = 2.98, 1; the other classes are empty.
    """
    out = tmp_path / "plots"
    simulate.run(parse(swf, "--predictors", "user", "--plot", str(out), "--json", str(tmp_path / "m.json")))
    assert sorted(path.name for path in out.iterdir()) == ["bsld_by_class.png", "wait_by_class.png"]
    wait, slowdown = saved_figures["wait_by_class.png"].axes[0], saved_figures["bsld_by_class.png"].axes[0]
    assert [label.get_text() for label in wait.get_xticklabels()] == ["<=2h", "2-24h", ">24h"]
    assert legend_labels(wait) == ["user"] and "wait time" in wait.get_title()
    short, *empty = boxes(wait)
    assert short == pytest.approx((0, 0, 0, 49.5 / 3600)) and all(np.isnan(box[1:]).all() for box in empty)
    assert boxes(slowdown)[0] == pytest.approx((0, 1, 1, (1 + 2.98) / 2))
    assert png_size(out / "wait_by_class.png") == (600, 500)
