"""The ``simulate`` command: options, machine size, outputs."""

import argparse
import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from figures import boxes, legend_labels, png_size, saved_figures  # noqa: F401 (saved_figures: fixture)

from predictor.errors import UsageError
from replay.shared.predictors import PREDICTORS
from replay.simulation import command as simulate
from replay.simulation import runs
from replay.simulation.cluster import Cluster
from replay.simulation.engine import simulate_jobs
from replay.traces.readers import load_trace
from replay.traces.trace import Job, ReadStats, Trace

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
            settings.cycle_interval_s, settings.selective, args.bsld_tau_s) == ("fifo", True, 1, "pbs", 600, False, 10)
    assert tuple(predictor.name for predictor in args.predictors) == ("user", "v1", "v2", "v3", "clairvoyant")


def test_unknown_predictor_is_a_usage_error():
    """--predictors names must be in the registry."""
    with pytest.raises(SystemExit):
        parse("x.swf", "--predictors", "user,oracle")


def test_machine_from_swf_header_cores_or_nodes():
    """MaxProcs by default; --cores overrides; --nodes needs --cores-per-node."""
    trace = Trace([Job("1", "u", 0, 1, 1, 1)], "swf", ("x",), ReadStats(), max_procs=64)
    assert runs.machine_of(trace)[0] == Cluster.of_cores(64)
    assert runs.machine_of(trace, cores=8)[0] == Cluster.of_cores(8)
    assert runs.machine_of(trace, nodes=4, cores_per_node=16)[0] == Cluster(4, 16)
    with pytest.raises(UsageError):
        runs.machine_of(trace, nodes=4)


def test_machine_of_a_pbs_log_is_its_busiest_moment():
    """Without a header: the most cores the recorded schedule used at once."""
    jobs = [Job("1", "u", 0, 10, 10, 3, start_time=0, end_time=10), Job("2", "u", 0, 10, 10, 4, start_time=5,
                                                                       end_time=15), Job("3", "u", 0, 5, 10, 6,
                                                                                         start_time=10, end_time=15)]
    trace = Trace(jobs, "pbs", ("x",), ReadStats())
    assert runs.machine_of(trace)[0] == Cluster.of_cores(10)  # jobs 2 and 3 at 10..15


def test_jobs_wider_than_the_machine_are_left_out_with_a_note():
    """A 5-core job on 4 cores cannot run: it is left out and counted."""
    jobs, notes = runs.runnable_jobs([Job("1", "u", 0, 1, 1, 5), Job("2", "u", 0, 1, 1, 4)], Cluster(4))
    assert [job.job_id for job in jobs] == ["2"] and "1 jobs left out" in notes[0]


def test_simulation_and_its_job_filter_agree_on_what_runs():
    """runnable_jobs keeps exactly the jobs the engine accepts; the engine refuses the others by id."""
    cluster = Cluster.of_cores(8)
    jobs = [Job(str(index), "u", index, runtime, 60, ncpus) for index, (ncpus, runtime) in
            enumerate([(1, 5), (8, 5), (9, 5), (0, 5), (2, -1)])]
    kept, notes = runs.runnable_jobs(jobs, cluster)
    assert [done.job.job_id for done in simulate_jobs(kept, PREDICTORS["user"], cluster)] == ["0", "1"]
    assert notes and "3 jobs left out" in notes[0]
    for refused in jobs[2:]:
        with pytest.raises(ValueError, match="job {} cannot run here".format(refused.job_id)):
            simulate_jobs([refused], PREDICTORS["user"], cluster)


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
    assert [label.get_text() for label in wait.get_xticklabels()] == ["<=2h (3 jobs)", "2-24h (0 jobs)",
                                                                       ">24h (0 jobs)"]
    means = [line.get_ydata()[0] for line in wait.get_lines() if line.get_marker() == "D" and len(line.get_ydata())]
    assert means[:1] == pytest.approx([33 / 3600])  # (0 + 99 + 0) / 3 s
    assert legend_labels(wait) == ["user"] and "wait time" in wait.get_title()
    short, *empty = boxes(wait)
    assert short == pytest.approx((0, 0, 0, 49.5 / 3600)) and all(np.isnan(box[1:]).all() for box in empty)
    assert boxes(slowdown)[0] == pytest.approx((0, 1, 1, (1 + 2.98) / 2))
    assert png_size(out / "wait_by_class.png") == (600, 500)


def accounting_line(job_id, start, end, used):
    return ("04/10/2026 12:00:00;E;{};user=alice queue=workq ctime=1000 start={} end={} Exit_status=0 "
            "Resource_List.ncpus=1 Resource_List.walltime=00:10:00 resources_used.walltime={}\n").format(
                job_id, start, end, used)


def test_cores_are_held_from_start_to_end_not_for_the_walltime_used(tmp_path):
    """A job that used 5 s of walltime but held its core for 100 s (seen on OpenPBS) blocks the next for 100 s."""
    log = tmp_path / "20260410"
    log.write_text(accounting_line("1.s", 1000, 1100, "00:00:05") + accounting_line("2.s", 1100, 1110, "00:00:10"))
    trace = load_trace([str(log)])
    assert [(job.runtime_s, job.occupancy_s) for job in trace.jobs] == [(5, 100), (10, None)]
    scheduled = simulate_jobs(trace.jobs, PREDICTORS["user"], Cluster.of_cores(1), simulate.settings_of(parse("x")))
    assert [(done.start_time, done.end_time) for done in scheduled] == [(1000, 1100), (1100, 1110)]


def test_history_keeps_the_walltime_used_as_the_runtime(tmp_path):
    """Predictions learn from resources_used.walltime (what the hooks store), not from the time cores were held."""
    log = tmp_path / "20260410"
    log.write_text(accounting_line("1.s", 1000, 1100, "00:00:05") + accounting_line("2.s", 1100, 1110, "00:00:10"))
    jobs = load_trace([str(log)]).jobs
    seen = []
    spy = PREDICTORS["v1"]._replace(estimate=lambda history, job: seen.append(list(history)) or None)
    simulate_jobs(jobs, spy, Cluster.of_cores(1), simulate.settings_of(parse("x")))
    assert [row.runtime_s for row in seen[-1]] == [5]


def test_recorded_without_soft_walltimes_in_the_log_is_said_once(swf, tmp_path, capsys):
    """'recorded' on a log with no soft walltime plans as 'user' does: one line on stderr, one note in the report."""
    json_path = str(tmp_path / "m.json")
    simulate.run(parse(swf, "--predictors", "user,recorded", "--json", json_path))
    err = capsys.readouterr().err
    said = "no soft walltime recorded in the log: predictor 'recorded' plans every job with its walltime, as 'user'"
    assert err.count(said) == 1
    assert [note for note in json.load(open(json_path))["notes"] if said in note] != []


def test_recorded_with_soft_walltimes_in_the_log_says_nothing(tmp_path, capsys):
    """A log with soft walltimes: no such warning."""
    log = tmp_path / "20260410"
    log.write_text(accounting_line("1.s", 1000, 1100, "00:01:40").replace("Exit_status=0", "Exit_status=0 "
                                                                         "Resource_List.soft_walltime=00:02:00"))
    simulate.run(parse(str(log), "--predictors", "recorded"))
    assert "no soft walltime" not in capsys.readouterr().err


def test_new_predictors_selectable():
    """v3-deployed is in the registry the simulation picks from."""
    assert [predictor.name for predictor in parse("x.swf", "--predictors", "user,v3-deployed").predictors] == [
        "user", "v3-deployed"]


def test_tang_with_parameters_selectable():
    """tang and tang with parameters are accepted by simulate's --predictors."""
    assert [predictor.name for predictor in parse("x.swf", "--predictors", "tang,tang:percentile=70").predictors] == [
        "tang", "tang:percentile=70"]


def test_small_first_adds_the_classification_table_and_rerun_notes(swf, tmp_path):
    """small-first: the classification table in JSON, a safeguard note per predictor, reruns in the jobs CSV;
    small-first-no-rerun: no safeguard note; fifo: neither."""
    def outputs(policy):
        json_path, jobs_path = str(tmp_path / "{}.json".format(policy)), str(tmp_path / "{}.csv".format(policy))
        simulate.run(parse(swf, "--predictors", "user,v1", "--policy", policy, "--json", json_path, "--jobs-csv",
                           jobs_path))
        report = json.load(open(json_path))
        return report, list(csv.DictReader(open(jobs_path)))
    report, rows = outputs("small-first")
    assert [table["key"] for table in report["tables"]][-1] == "classification"
    assert [note for note in report["notes"] if note.startswith("small-first safeguard")] == [
        "small-first safeguard, predictor {}: 0 jobs predicted small ran past the divider and were killed there "
        "and queued again as large (0.0% of the jobs)".format(name) for name in ("user", "v1")]
    assert {row["reruns"] for row in rows} == {"0"}
    report, _ = outputs("small-first-no-rerun")
    assert report["tables"][-1]["key"] == "classification"
    assert not [note for note in report["notes"] if note.startswith("small-first safeguard")]
    report, _ = outputs("fifo")
    assert "classification" not in [table["key"] for table in report["tables"]]


def test_runjob_after_queued_keeps_the_queuejob_soft_walltime_of_a_job_started_soon():
    """--runjob-after-queued 3600: a job that waited less keeps the soft walltime queuejob gave it; one that waited
    longer is predicted again at its start (v1: the mean of the last two runtimes, 50 and 500)."""
    from replay.shared.predictors import PREDICTORS
    from replay.simulation.cluster import Cluster
    from replay.simulation.engine import SchedulerSettings, simulate_jobs
    from replay.traces.trace import Job
    jobs = [Job("1", "alice", 0, 100, 1000, 1), Job("2", "alice", 0, 500, 1000, 1), Job("3", "alice", 0, 50, 1000, 1),
            Job("4", "alice", 1, 300, 1000, 1)]
    # One core: 1 runs 0-100, then 2 runs 100-600, 3 600-650, 4 650-950.
    settings = SchedulerSettings(cycle_interval_s=0)
    always = simulate_jobs(jobs, PREDICTORS["v1"], Cluster.of_cores(1), settings)
    soon = simulate_jobs(jobs, PREDICTORS["v1"], Cluster.of_cores(1), settings._replace(runjob_after_queued_s=620))
    assert [done.soft_walltime_started_s for done in always] == [1000, 100, 300, 275]
    assert [done.soft_walltime_started_s for done in soon] == [1000, 1000, 1000, 275]


@pytest.mark.parametrize("options", [["--policy", "fifo"], ["--backfill-depth", "2"], ["--extension", "double"],
                                     ["--no-strict-ordering"], ["--selective"], ["--cycle-interval", "60"],
                                     ["--starvation-threshold", "1:00:00"], ["--runjob-after-queued", "1:00:00"]])
def test_what_the_site_decides_is_refused_with_site(swf, options, capsys):
    """With --site, an option of the built-in scheduler would be ignored: one line naming it, status 2."""
    from replay.cli import main
    status = main(["simulate", swf, "--site", os.path.join(ROOT, "traces", "sites", "strict")] + options)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "{}: not with --site: the site's PBS decides them".format(options[0]) in err


def test_given_settings_replace_only_their_defaults():
    """settings_of takes what the command line gave and PBS's defaults for the rest."""
    settings = simulate.settings_of(parse("x.swf", "--policy", "sjf", "--no-strict-ordering"))
    assert (settings.policy, settings.strict_ordering, settings.backfill_depth, settings.cycle_interval_s) == (
        "sjf", False, 1, 600)
