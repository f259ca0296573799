"""The legends under the accuracy and simulation text tables: every column header and predictor explained."""

import io
import json

import pytest

from predictor.cmdline.tables import write_csv, write_json, write_text
from replay.accuracy.metrics import accuracy_report
from replay.accuracy.predictions import replay_accuracy
from replay.shared.predictors import PREDICTORS, resolve, resolved
from replay.simulation.cluster import Cluster
from replay.simulation.engine import simulate_jobs
from replay.simulation.runs import simulation_report
from replay.traces.readers import load_trace

T = 1775822400
SPECS = tuple(PREDICTORS) + ("tang:percentile=70:window_days=14",)


def end_line(job_id, user, queue, submit, start, end, walltime):
    return ("04/10/2026 12:00:00;E;{};user={} queue={} ctime={} start={} end={} Exit_status=0 "
            "Resource_List.ncpus=1 Resource_List.walltime={} resources_used.soft_walltime=00:10:00".format(
                job_id, user, queue, T + submit, T + start, T + end, walltime))


@pytest.fixture
def jobs(tmp_path):
    """Jobs in two queues, so that every table (by queue too) is there."""
    lines = [end_line("{}.s".format(number), user, queue, 100 * number, 100 * number + 10, 100 * number + 5000,
                      "02:00:00") for number, (user, queue) in enumerate(
                          [("alice", "workq"), ("bob", "long"), ("alice", "long"), ("bob", "workq")] * 3)]
    path = tmp_path / "20260410"
    path.write_text("\n".join(lines) + "\n")
    return load_trace([str(path)]).jobs


def accuracy(jobs):
    predictions = replay_accuracy(jobs, [resolve(spec) for spec in SPECS], None, ("submit", "start"))
    return accuracy_report("Accuracy", (), jobs, predictions)


def simulation(jobs, tau_s=600):
    runs = {spec: simulate_jobs(jobs, resolve(spec), Cluster.of_cores(2)) for spec in SPECS}
    return simulation_report("Simulation", (), runs, Cluster.of_cores(2), tau_s, resolved(SPECS))[0]


def legend_of(report, wide=False):
    """The legend lines as printed in the text output (``wide``: with every column)."""
    text = io.StringIO()
    write_text(report, text, wide)
    return text.getvalue().split("\nLegend:\n", 1)[1].split("\nIn short:\n", 1)[0].splitlines()


def explained(lines):
    """What the legend lines explain: the names before each line's first ': '."""
    return {name for line in lines for name in line.strip().split(": ", 1)[0].split(", ")}


@pytest.mark.parametrize("build", [accuracy, simulation])
@pytest.mark.parametrize("wide", [False, True])
def test_legend_names_every_column_header(jobs, build, wide):
    """Each header each text table shows has a legend line (the default view's, and --wide's)."""
    report = build(jobs)
    headers = {column.header for table in report.tables for column in table.columns if wide or not column.wide}
    assert len(report.tables) == 3
    assert headers - explained(legend_of(report, wide)) == set()


@pytest.mark.parametrize("build", [accuracy, simulation])
def test_legend_names_every_predictor_of_the_run(jobs, build):
    """Each predictor shown, a parameterised one too, has a line saying what it is."""
    lines = legend_of(build(jobs))
    assert set(SPECS) - explained(lines) == set()
    assert "  tang:percentile=70:window_days=14: Tang et al.: the walltime x the 70th percentile" in "\n".join(
        "  " + line for line in lines)

def test_simulation_legend_gives_this_runs_tau(jobs):
    """The bounded slowdown's threshold in the legend is the run's own."""
    assert any("tau = 600 s in this run" in line for line in legend_of(simulation(jobs, 600)))


@pytest.mark.parametrize("build", [accuracy, simulation])
def test_json_and_csv_carry_no_legend(jobs, build):
    """The legend is for people: JSON keeps its keys, CSV its rows."""
    report = build(jobs)
    as_json, as_csv = io.StringIO(), io.StringIO()
    write_json(report, as_json)
    write_csv(report, as_csv)
    assert set(json.loads(as_json.getvalue())) == {"title", "notes", "tables"}
    assert "Legend" not in as_csv.getvalue() and report.legend[0] not in as_json.getvalue()
