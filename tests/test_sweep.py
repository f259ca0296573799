"""The ``sweep`` command: a grid of simulate runs, here in processes or as a PBS array collected afterwards."""

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import subprocess

import pytest
from sweepgrid import CELLS, GRID, REPO, write_tiny_trace

from replay.cli import main
from replay.sweep import command
from replay.sweep.grid import Cell, expand, grid_of, read_grid_file
from replay.sweep.table import COLUMNS


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return write_tiny_trace(tmp_path_factory.mktemp("sweep") / "tiny.swf")


def sweep(capsys, *argv):
    """``(exit status, stdout, stderr)`` of ``python -m replay sweep ARGV``."""
    status = main(["sweep"] + [str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def local_table(trace):
    """The grid's table from one process, the reference the other ways of running it must print."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sweep"] + GRID + ["--jobs", "1", "--wide", trace]) == 0
    return out.getvalue()


def test_one_and_two_processes_print_the_same_table(trace, local_table, capsys):
    """--jobs 2 prints, byte for byte, what --jobs 1 prints."""
    status, out, _ = sweep(capsys, *GRID, "--jobs", 2, "--wide", trace)
    assert status == 0 and out == local_table
    assert out.count("\n{}  ".format(trace)) == CELLS


def test_json_the_same_with_one_and_two_processes(trace, tmp_path, capsys):
    """The JSON document does not depend on --jobs either."""
    for jobs in (1, 2):
        assert sweep(capsys, *GRID, "--jobs", jobs, "--json", tmp_path / "{}.json".format(jobs), trace)[0] == 0
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()


def test_rows_in_grid_order_predictors_side_by_side(trace, capsys):
    """Rows follow the grid: policy, then backfill depth, then predictor, each in the order given."""
    _, out, _ = sweep(capsys, *GRID, "--jobs", 2, "--json", "-", trace)
    rows = json.loads(out)["tables"][0]["rows"]
    assert [(row["policy"], row["backfill_depth"], row["predictor"]) for row in rows] == [
        (policy, depth, name) for policy in ("fifo", "sjf") for depth in (1, 10) for name in ("v1", "v3")]


def test_a_cell_is_the_simulate_run_of_its_settings(trace, capsys):
    """A row's metrics are simulate's summary row for the same predictor and settings."""
    _, out, _ = sweep(capsys, *GRID, "--json", "-", trace)
    rows = [row for row in json.loads(out)["tables"][0]["rows"] if (row["policy"], row["backfill_depth"]) == (
        "sjf", 10)]
    assert main(["simulate", trace, "--predictors", "v1,v3", "--policy", "sjf", "--backfill-depth", "10",
                 "--json", "-"]) == 0
    expected = json.loads(capsys.readouterr().out)["tables"][0]["rows"]
    coordinates = ("trace", "policy", "backfill_depth", "extension")
    assert [{key: value for key, value in row.items() if key not in coordinates} for row in rows] == expected


def test_predictor_with_parameters_is_a_cell_as_in_simulate(trace, capsys):
    """ALGORITHM:param=value, which simulate takes, names a sweep cell too, whose row is simulate's."""
    spec = "tang:percentile=70:min_history=1"
    status, out, _ = sweep(capsys, "--predictors", spec, "--json", "-", trace)
    row = json.loads(out)["tables"][0]["rows"][0]
    assert status == 0 and main(["simulate", trace, "--predictors", spec, "--json", "-"]) == 0
    expected = json.loads(capsys.readouterr().out)["tables"][0]["rows"]
    coordinates = ("trace", "policy", "backfill_depth", "extension")
    assert [{key: value for key, value in row.items() if key not in coordinates}] == expected


def test_grid_file_json_and_lines_give_the_same_cells(tmp_path, trace):
    """Both grid-file forms name the same grid; trace paths are taken from the file's folder."""
    os.symlink(trace, str(tmp_path / "t.swf"))
    (tmp_path / "g.json").write_text(json.dumps({"predictors": ["v1", "v3"], "policy": ["fifo", "sjf"],
                                                 "backfill-depth": [1, 10], "traces": "t.swf"}))
    (tmp_path / "g.txt").write_text("# the test grid\npredictors: v1, v3\npolicy: fifo, sjf\n\n"
                                    "backfill_depth: 1, 10  # two depths\ntraces: t.swf\n")
    from_json, from_lines = read_grid_file(str(tmp_path / "g.json")), read_grid_file(str(tmp_path / "g.txt"))
    assert from_json == from_lines
    cells = expand(grid_of(from_lines, {}))
    assert len(cells) == CELLS and cells[0] == Cell(str(tmp_path / "t.swf"), "fifo", 1, "pbs", "v1")


def test_command_line_list_replaces_the_grid_file_list(tmp_path):
    """--policy on the command line wins over the file's policy; the file's other lists stay."""
    (tmp_path / "g.txt").write_text("policy: fifo, sjf\npredictors: v3\n")
    grid = grid_of(read_grid_file(str(tmp_path / "g.txt")), {"traces": ("t",), "policy": ("wfp",)})
    assert [(cell.policy, cell.predictor) for cell in expand(grid)] == [("wfp", "v3")]


def write_array(capsys, tmp_path, trace, *grid):
    """``--pbs``: the sweep directory and the script path its stdout names."""
    directory = tmp_path / "array"
    status, out, _ = sweep(capsys, "--pbs", directory, *(grid or GRID), trace)
    assert status == 0
    words = shlex.split(out)
    assert len(out.splitlines()) == 1 and words[0] == "qsub"
    return str(directory), words[1]


def test_pbs_script_is_one_array_subjob_per_cell(tmp_path, trace, capsys):
    """The script asks for subjobs 1-8 and runs cell $PBS_ARRAY_INDEX of its directory."""
    directory, script = write_array(capsys, tmp_path, trace)
    text = open(script).read()
    assert "#PBS -J 1-{}\n".format(CELLS) in text
    assert 'sweep cell {} "${{PBS_ARRAY_INDEX:-1}}"'.format(directory) in text
    assert len(json.load(open(os.path.join(directory, "manifest.json")))["cells"]) == CELLS


def test_pbs_script_runs_from_the_sweep_directory(tmp_path, trace, capsys):
    """A subjob starts in the user's home, and ``python -m`` puts its working directory first on its path: the
    script runs from the sweep's directory, so a ``numpy.py`` in the home does not replace numpy."""
    directory, script = write_array(capsys, tmp_path, trace, "--predictors", "v3")
    home = tmp_path / "home"
    home.mkdir()
    (home / "numpy.py").write_text("raise SystemExit('the home directory was searched first')\n")
    done = subprocess.run(["bash", script], cwd=str(home), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300)
    assert done.returncode == 0, done.stdout
    assert os.path.exists(os.path.join(directory, "results", "cell-00001.json"))


def test_one_cell_is_a_plain_job(tmp_path, trace, capsys):
    """PBS refuses a one-subjob array (-J 1-1): a one-cell grid is a plain job, cell 1."""
    _, script = write_array(capsys, tmp_path, trace, "--predictors", "v3")
    assert "#PBS -J" not in open(script).read()


def run_subjobs(capsys, directory, indexes):
    for index in indexes:
        assert sweep(capsys, "cell", directory, index)[0] == 0


def test_collected_array_prints_the_local_table(tmp_path, trace, local_table, capsys):
    """Every subjob's cell run, in any order, then collect: the table the local run prints."""
    directory, _ = write_array(capsys, tmp_path, trace)
    run_subjobs(capsys, directory, reversed(range(1, CELLS + 1)))
    status, out, err = sweep(capsys, "collect", directory, "--wide")
    assert (status, err) == (0, "") and out == local_table


def test_collect_names_missing_and_failed_cells(tmp_path, trace, capsys):
    """A cell without a result file is missing, one whose file says failed is failed; the rest is tabled."""
    directory, _ = write_array(capsys, tmp_path, trace)
    run_subjobs(capsys, directory, [1, 2, 4, 5, 6, 7, 8])
    result = os.path.join(directory, "results", "cell-00005.json")
    document = json.load(open(result))
    document.update(status="failed", error="no job fits the machine")
    json.dump(document, open(result, "w"))
    status, out, err = sweep(capsys, "collect", directory, "--wide")
    assert status == 1
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("cell 3 (trace={}, policy=fifo, backfill_depth=10, extension=pbs, predictor=v1): "
                               "missing: no results/cell-00003.json".format(trace))
    assert lines[1].endswith("predictor=v1): failed: no job fits the machine")
    assert "2 of 8 cells have no result: failed 5; missing 3" in out and out.count("\n{}  ".format(trace)) == 6


def test_collect_with_no_result_is_an_error(tmp_path, trace, capsys):
    """Nothing ran yet: one line, status 2, and each missing cell named."""
    directory, _ = write_array(capsys, tmp_path, trace)
    status, _, err = sweep(capsys, "collect", directory)
    assert status == 2 and err.splitlines()[-1].endswith("no cell has a result (0 of 8 failed, the others are missing)")


def test_plot_writes_the_two_figures(tmp_path, trace, capsys):
    """--plot DIR: mean wait and mean slowdown per scenario."""
    assert sweep(capsys, *GRID, "--plot", tmp_path / "figures", trace)[0] == 0
    assert sorted(os.listdir(str(tmp_path / "figures"))) == ["sweep_bsld_mean.png", "sweep_wait_mean.png"]


@pytest.mark.parametrize("argv, message", [
    (["--predictors", "v1,oracle", "{trace}"], "unknown predictor 'oracle'"),
    (["--backfill-depth", "1,deep", "{trace}"],
     "backfill depth must be an integer within 0..1000000 (as in simulate), not 'deep'"),
    (["--policy", "fifo,fifo", "{trace}"], "fifo given twice"),
    (["{tmp}/missing.swf"], "missing.swf: no such file or directory"),
    ([], "no trace given"),
    (["--grid", "{tmp}/grid.txt", "{trace}"], "grid.txt:2: unknown key 'colour'"),
    (["--pbs", "{tmp}", "{trace}"], "exists and is not an empty directory"),
    (["--pbs", "{tmp}/new", "--jobs", "2", "{trace}"], "--jobs: not with --pbs"),
    (["--walltime", "1:00:00", "{trace}"], "--walltime: only with --pbs DIR"),
    (["collect", "{tmp}"], "no sweep here"),
    (["collect", "{tmp}", "--policy", "sjf"], "'sweep collect' takes no --policy"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path, trace, capsys, argv, message):
    """Each mistake: exit 2, one stderr line that says what is wrong, no traceback."""
    (tmp_path / "grid.txt").write_text("policy: fifo\ncolour: blue\n")
    status, _, err = sweep(capsys, *[arg.format(trace=trace, tmp=tmp_path) for arg in argv])
    assert status == 2 and err.count("\n") == 1 and message in err and "Traceback" not in err


def test_help_ends_with_examples_that_parse():
    """-h closes on real examples, each a valid sweep command line."""
    parser = argparse.ArgumentParser(prog="python -m replay sweep")
    command.add_arguments(parser)
    help_text = parser.format_help().rstrip("\n")
    examples = help_text.rpartition("examples:\n")[2].splitlines()
    assert 2 <= len(examples) <= 4 and help_text.endswith(examples[-1])
    for line in examples:
        words = shlex.split(line, comments=True)
        assert words[:4] == ["python", "-m", "replay", "sweep"]
        parser.parse_args(words[4:])


def test_documented_grid_files_name_the_same_grid(tmp_path):
    """docs/sweep.md's JSON and line grid files parse, to the same grid."""
    doc = open(os.path.join(REPO, "docs", "sweep.md"), encoding="utf-8").read()
    blocks = re.findall(r"```(json)?\n(.*?)```", doc.partition("### Grid file")[2], re.S)[:2]
    for index, (_, text) in enumerate(blocks):
        (tmp_path / "{}.grid".format(index)).write_text(text)
    assert read_grid_file(str(tmp_path / "0.grid")) == read_grid_file(str(tmp_path / "1.grid"))


def test_relative_trace_found_by_a_subjob_started_elsewhere(tmp_path, trace, capsys, monkeypatch):
    """A trace named relative to where --pbs ran is read from there, and the table names it as given."""
    monkeypatch.chdir(os.path.dirname(trace))
    directory, _ = write_array(capsys, tmp_path, os.path.basename(trace))
    monkeypatch.chdir(str(tmp_path))
    run_subjobs(capsys, directory, range(1, CELLS + 1))
    status, out, _ = sweep(capsys, "collect", directory, "--wide")
    assert status == 0 and out.count("\n{}  ".format(os.path.basename(trace))) == CELLS


def test_default_table_fits_100_columns_and_says_what_it_means(trace, capsys):
    """Without --wide: the axes that vary and the essential figures, within 100 columns; the others are named
    as hidden; a closing summary names the cells that waited least and most."""
    status, out, _ = sweep(capsys, *GRID, "--jobs", 1, trace)
    table = out.split("\nLegend:\n", 1)[0].split("\nAll jobs, one row per cell\n", 1)[1]
    assert status == 0 and max(len(line) for line in table.splitlines()) <= 100
    assert table.startswith("policy  depth  predictor  wait mean h:m:s  bsld mean  past soft %\n")
    assert "not shown here: trace, extension, jobs, wait median h:m:s" in out
    assert out.split("\nIn short:\n", 1)[1].startswith("  the shortest mean wait is ")


def test_table_has_a_legend_for_every_header_and_predictor(local_table):
    """Under the sweep's table, each column header and each predictor of the grid has a legend line."""
    table, legend = local_table.split("\nIn short:\n", 1)[0].split("\nLegend:\n", 1)
    explained = {name for line in legend.splitlines() for name in line.strip().split(": ", 1)[0].split(", ")}
    header = next(line for line in table.splitlines() if line.startswith("trace "))
    assert {column.header for column in COLUMNS} - explained == set()
    assert {"v1", "v3"} <= explained and all(column.header in header for column in COLUMNS)


def test_collect_writes_beside_the_sweep_not_into_it(tmp_path, trace, capsys):
    """The sweep's directory is collect's input: figures inside it are refused before anything is read, figures
    beside it (as sweep's --help shows) are written."""
    directory, _ = write_array(capsys, tmp_path, trace)
    run_subjobs(capsys, directory, range(1, CELLS + 1))
    status, _, err = sweep(capsys, "collect", directory, "--plot", os.path.join(directory, "figures"))
    assert status == 2 and "lies inside the input directory" in err
    status, _, err = sweep(capsys, "collect", directory, "--plot", directory + "-figures")
    assert status == 0 and sorted(os.listdir(directory + "-figures")) == ["sweep_bsld_mean.png",
                                                                          "sweep_wait_mean.png"]
