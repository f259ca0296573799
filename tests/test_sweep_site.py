"""``sweep --site DIR``: every cell through the site's PBS model, as ``simulate --site`` runs it."""

import json
import os
import shutil

import pytest
from sweepgrid import REPO, write_tiny_trace

import replay.site
from replay.cli import main
from replay.sweep import cells

FAIRSHARE_SITE = os.path.join(REPO, "traces", "sites", "fairshare")
RECORDED = os.path.join(REPO, "tests", "data", "fidelity", "fairshare")
NOT_MODELLED = "not modelled: server max_run_soft (qmgr.txt line 1)"


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return write_tiny_trace(tmp_path_factory.mktemp("sweep-site") / "tiny.swf")


@pytest.fixture
def site(tmp_path):
    """traces/sites/fairshare with one setting the model does not use, so that the report names it."""
    folder = tmp_path / "site"
    shutil.copytree(FAIRSHARE_SITE, str(folder))
    (folder / "qmgr.txt").write_text('set server max_run_soft = "[u:PBS_GENERIC=2]"\n')
    return str(folder)


def sweep(capsys, *argv):
    """``(exit status, stdout, stderr)`` of ``python -m replay sweep ARGV``."""
    status = main(["sweep"] + [str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_cell_is_the_simulate_site_run_of_its_predictor(trace, site, capsys):
    """Each row's figures are simulate --site's summary row for that predictor, on the same site."""
    status, out, _ = sweep(capsys, "--site", site, "--predictors", "user,v1,v3", "--jobs", 2, "--json", "-", trace)
    rows = json.loads(out)["tables"][0]["rows"]
    assert status == 0 and main(["simulate", trace, "--site", site, "--predictors", "user,v1,v3", "--json", "-"]) == 0
    expected = json.loads(capsys.readouterr().out)["tables"][0]["rows"]
    coordinates = ("trace", "policy", "backfill_depth", "extension")
    assert [{key: value for key, value in row.items() if key not in coordinates} for row in rows] == expected
    assert len({row["wait_mean_s"] for row in rows}) > 1  # the predictors do differ here
    assert {(row["policy"], row["backfill_depth"], row["extension"]) for row in rows} == {(None, None, None)}


def test_the_site_notes_appear_once_as_in_simulate(trace, site, capsys):
    """What the model does not use is named once in the sweep's notes, in simulate's words."""
    _, out, _ = sweep(capsys, "--site", site, "--predictors", "v1,v3", "--json", "-", trace)
    notes = json.loads(out)["notes"]
    main(["simulate", trace, "--site", site, "--predictors", "v1", "--json", "-"])
    simulated = json.loads(capsys.readouterr().out)["notes"]
    assert notes.count(NOT_MODELLED) == 1 and NOT_MODELLED in simulated
    assert "grid: traces 1 x predictors 2 = 2 cells" in notes


def test_the_site_is_read_once_before_any_cell(trace, site, capsys, monkeypatch):
    """However many cells, the site's folder is read one time."""
    reads = []
    read_site = replay.site.read_site
    monkeypatch.setattr(replay.site, "read_site", lambda folder: reads.append(folder) or read_site(folder))
    assert sweep(capsys, "--site", site, "--predictors", "user,v1,v3", "--jobs", 1, trace)[0] == 0
    assert reads == [site]


def test_a_malformed_site_file_stops_the_sweep_before_anything_is_written(trace, site, tmp_path, capsys):
    """One line naming the file, line and setting; status 2; neither the array directory nor --json written."""
    with open(os.path.join(site, "qmgr.txt"), "a") as stream:
        stream.write("set server backfill_depth = deep\n")
    for outputs in (["--json", tmp_path / "out.json"], ["--pbs", tmp_path / "array"]):
        status, out, err = sweep(capsys, "--site", site, *outputs, trace)
        assert (status, out, err.count("\n")) == (2, "", 1)
        assert "site/qmgr.txt:2: server backfill_depth: 'deep' is not a whole number" in err
    assert sorted(os.listdir(str(tmp_path))) == ["site"]


@pytest.mark.parametrize("options, refused", [
    (["--policy", "sjf"], "--policy"),
    (["--backfill-depth", "1,10"], "--backfill-depth"),
    (["--extension", "double"], "--extension"),
    (["--no-strict-ordering", "--selective", "--cycle-interval", "60"],
     "--no-strict-ordering --selective --cycle-interval"),
    (["--grid", "{tmp}/grid.txt"], "grid.txt: policy, backfill_depth"),
])
def test_what_the_site_decides_is_refused(trace, site, tmp_path, capsys, options, refused):
    """An option or grid list the site's configuration would override: one line, status 2."""
    (tmp_path / "grid.txt").write_text("policy: fifo, sjf\nbackfill_depth: 1\npredictors: v3\n")
    status, _, err = sweep(capsys, "--site", site, *[option.format(tmp=tmp_path) for option in options], trace)
    assert status == 2 and err.count("\n") == 1
    assert "{}: not with --site: the site's PBS decides them".format(refused) in err


def test_the_array_runs_on_its_own_copy_of_the_site(trace, site, tmp_path, capsys, monkeypatch):
    """--pbs copies the site into DIR/site: with the admin's folder gone, the subjobs started elsewhere give the
    table the local run prints."""
    grid = ("--site", site, "--predictors", "user,v3", "--wide")
    open(os.path.join(site, "notes.txt"), "w").write("a file the reader does not know travels too\n")
    os.mkdir(os.path.join(site, "old"))  # a folder does not
    status, local, _ = sweep(capsys, *grid, trace)
    assert status == 0
    directory = str(tmp_path / "array")
    assert sweep(capsys, "--pbs", directory, *grid[:-1], trace)[0] == 0
    assert sorted(os.listdir(os.path.join(directory, "site"))) == ["notes.txt", "qmgr.txt", "sched_config"]
    assert json.load(open(os.path.join(directory, "manifest.json")))["settings"]["site"] == "site"
    shutil.rmtree(site)
    cells._SITES.clear()  # a subjob is a new process: nothing read yet
    monkeypatch.chdir(str(tmp_path))
    for index in (2, 1):
        assert sweep(capsys, "cell", directory, index)[0] == 0
    status, collected, err = sweep(capsys, "collect", directory, "--wide")
    assert (status, err) == (0, "") and collected == local


def test_without_a_site_the_manifest_has_no_site_key(trace, tmp_path, capsys):
    """A sweep without --site writes the manifest it always did."""
    directory = str(tmp_path / "array")
    assert sweep(capsys, "--pbs", directory, "--predictors", "v3", trace)[0] == 0
    assert "site" not in json.load(open(os.path.join(directory, "manifest.json")))["settings"]


def test_collect_takes_no_site(tmp_path, capsys):
    """The site of a collected sweep is in its directory: --site with collect is refused."""
    status, _, err = sweep(capsys, "collect", tmp_path, "--site", tmp_path)
    assert status == 2 and "'sweep collect' takes no --site" in err


def test_a_warmed_up_cell_is_simulate_sites_warmed_up_run(trace, site, capsys):
    """With --fairshare-warm-up each cell is simulate --site --fairshare-warm-up's run of its predictor: the same
    summary row and the same warm-up line (here the first four days: eight jobs charged, three still running)."""
    warm = ("--fairshare-warm-up", "96:00:00")
    status, out, _ = sweep(capsys, "--site", site, "--predictors", "user,v3", "--jobs", 2, *warm, "--json", "-", trace)
    document = json.loads(out)
    assert status == 0 and main(["simulate", trace, "--site", site, "--predictors", "user,v3", *warm,
                                 "--json", "-"]) == 0
    simulated = json.loads(capsys.readouterr().out)
    coordinates = ("trace", "policy", "backfill_depth", "extension")
    rows = [{key: value for key, value in row.items() if key not in coordinates}
            for row in document["tables"][0]["rows"]]
    assert rows == simulated["tables"][0]["rows"]
    warm_notes = [note for note in simulated["notes"] if note.startswith("fairshare warm-up")]
    assert warm_notes and "fairshare warm-up: 8 jobs" in warm_notes[0]
    assert "{}: {}".format(trace, warm_notes[0]) in document["notes"]
    main(["simulate", trace, "--site", site, "--predictors", "user", "--json", "-"])
    cold = json.loads(capsys.readouterr().out)["tables"][0]["rows"][0]
    assert rows[0]["jobs"] < cold["jobs"]


@pytest.mark.parametrize("with_site", [False, True])
def test_fairshare_warm_up_needs_a_site_running_fairshare(trace, tmp_path, capsys, with_site):
    """Without --site, or with a site whose fair_share is off, --fairshare-warm-up is one line and status 2."""
    argv = ["--fairshare-warm-up", "01:00:00", "--json", tmp_path / "out.json", trace]
    if with_site:
        argv = ["--site", os.path.join(REPO, "traces", "sites", "strict")] + argv
    status, out, err = sweep(capsys, *argv)
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert ("fair_share off" if with_site else "only with --site") in err
    assert not (tmp_path / "out.json").exists()
