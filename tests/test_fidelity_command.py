"""python -m replay fidelity: the table, the JSON figures, and one line with exit 2 on bad input."""

import csv
import json
import os

import pytest
from test_fidelity_decisions import busy_log
from test_fidelity_records import e, q

from replay.cli import main
from replay.fidelity.measure import Fidelity
from replay.fidelity.report import JOB_HEADER, _share_percent, job_table
from replay.pbs.jobs import PbsJob
from replay.pbs.resources import Chunk, Place

RECORDINGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fidelity")

KEYS = ("decisions", "decisions_agreeing", "jobs", "starts_within_2s", "mean_abs_start_error_s", "wait_mean_real_s",
        "wait_mean_sim_s", "wait_median_real_s", "wait_median_sim_s", "disagreements", "not_modelled")


def log(tmp_path, lines):
    path = tmp_path / "20261126"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_table_and_json(tmp_path, capsys):
    """Figures in the table and at the top of the JSON; a disagreement with its state in both."""
    out = tmp_path / "out.json"
    lines = busy_log(third_started=False)
    assert main(["fidelity", log(tmp_path, lines), "--json", str(out), "--show", "1"]) == 0
    text = capsys.readouterr().out
    assert "decisions agreeing      1 / 2" in text and "PBS started 2.s; the model started 2.s 3.s" in text
    document = json.loads(out.read_text())
    assert all(key in document for key in KEYS)
    assert document["decisions"] == 2 and document["decisions_agreeing"] == 1 and document["not_modelled"] == []
    (item,) = document["disagreements"]
    assert [job["job"] for job in item["queued"]] == ["2.s", "3.s"] and item["model_started"] == ["2.s", "3.s"]


def test_whole_run_figures(tmp_path, capsys):
    """The replay starts every job at its real start here: all within 2 s, waits equal."""
    out = tmp_path / "out.json"
    ends = [e("00:15", name, submit, submit, 110, 115, "(n1:ncpus=1)") for name, submit in (("2.s", 101), ("3.s", 102))]
    assert main(["fidelity", log(tmp_path, busy_log() + ends), "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["jobs"] == 3 and document["starts_within_2s"] == 3
    assert document["wait_mean_real_s"] == document["wait_mean_sim_s"] == round((0 + 9 + 8) / 3.0, 6)
    assert document["log_reuse_latency_median_s"] == 0


def test_jobs_csv_holds_each_replayed_job(tmp_path, capsys):
    """--jobs-csv: one row per replayed job in submission order, real and replayed starts and waits, which
    give the figures of the JSON."""
    out, jobs = tmp_path / "out.json", tmp_path / "jobs.csv"
    folder = os.path.join(RECORDINGS, "fairshare-light-seed3")
    assert main(["fidelity", os.path.join(folder, "accounting"), "--site", os.path.join(folder, "site"),
                 "--json", str(out), "--jobs-csv", str(jobs)]) == 0
    document = json.loads(out.read_text())
    with open(str(jobs), newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == JOB_HEADER and len(rows) == document["jobs"] == 60
    assert [row["job_id"] for row in rows] == sorted((row["job_id"] for row in rows), key=lambda name: int(
        name.split(".")[0]))
    for row in rows:
        eligible, real, replayed = (int(row[key]) for key in ("eligible_time", "start_real", "start_replayed"))
        assert (int(row["start_error_s"]), int(row["wait_real_s"]), int(row["wait_replayed_s"])) == (
            replayed - real, real - eligible, replayed - eligible)
    assert sum(abs(int(row["start_error_s"])) <= 2 for row in rows) == document["starts_within_2s"]
    assert sum(int(row["wait_replayed_s"]) for row in rows) / 60.0 == pytest.approx(document["wait_mean_sim_s"])
    assert sum(int(row["wait_real_s"]) for row in rows) / 60.0 == pytest.approx(document["wait_mean_real_s"])


def test_job_never_started_by_the_model_has_empty_replayed_fields():
    """A job the whole-run replay never started: its real start and wait, the replayed ones empty."""
    job = PbsJob(0, "7.s", "ana", "ana", "", "workq", (Chunk(1, (("ncpus", 2),)),), Place(), 60, None, 100, 110)
    header, rows = job_table(Fidelity((), None, None, None, 0, (), ((job, 130, None),)))
    assert dict(zip(header, next(rows))) == {
        "job_id": "7.s", "user": "ana", "queue": "workq", "ncpus": 2, "eligible_time": 110, "start_real": 130,
        "start_replayed": None, "start_error_s": None, "wait_real_s": 20, "wait_replayed_s": None}


def test_malformed_line_is_reported_and_skipped(tmp_path, capsys):
    """A malformed line: file:line on stderr, the rest checked, exit 1."""
    path = log(tmp_path, ["not a record"] + busy_log())
    assert main(["fidelity", path]) == 1
    assert "20261126:1:" in capsys.readouterr().err


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    """A missing file or logs without any start: one line on stderr, exit 2, no traceback."""
    assert main(["fidelity", str(tmp_path / "missing")]) == 2
    assert main(["fidelity", log(tmp_path, [q("00:00", "1.s", 100, 100)])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "Traceback" not in "".join(err) and "no job started" in err[1]


def test_the_servers_log_orders_the_whole_run_and_is_named_in_the_report(tmp_path, capsys):
    """--server-log reads the server's log of the same days: the report says so, and the whole-run replay of a
    recording whose releases and ends shared seconds starts every job at its real start; a missing or empty log
    is one line and exit 2."""
    folder = os.path.join(RECORDINGS, "vnodes-light-seed7-again")
    argv = ["fidelity", os.path.join(folder, "accounting"), "--site", os.path.join(folder, "site"), "--json", "-"]
    assert main(argv) == 0
    without = json.loads(capsys.readouterr().out)
    assert main(argv + ["--server-log", os.path.join(folder, "server.log")]) == 0
    document = json.loads(capsys.readouterr().out)
    assert without["starts_within_2s"] < document["starts_within_2s"] == document["jobs"] == 60
    assert "order within a second from the server's log (1 file(s): 60 releases, 60 ends)" in document["notes"]
    assert not any("server's log" in note for note in without["notes"])
    assert main(argv[:4] + ["--server-log", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "--server-log" in err[0] and "missing" in err[0] and "Traceback" not in err[0]


def test_the_schedulers_log_compares_the_orders(tmp_path, capsys):
    """--sched-log reads the scheduler's log of the same days: the figures give how many agreeing decisions'
    cycles considered the jobs in its order, the text shows each differing order from where it differs, with the
    users, and the JSON holds them whole; without it the order figures are null; a missing log is one line and
    exit 2."""
    folder = os.path.join(RECORDINGS, "fairshare-seed6-mom-updates")
    argv = ["fidelity", os.path.join(folder, "accounting"), "--site", os.path.join(folder, "site"),
            "--server-log", os.path.join(folder, "server.log")]
    assert main(argv + ["--json", "-"]) == 0
    without = json.loads(capsys.readouterr().out)
    assert (without["orders_compared"], without["orders_agreeing"], without["orders_differing"]) == (None, None, None)
    assert main(argv + ["--sched-log", os.path.join(folder, "sched.log"), "--show", "1"]) == 0
    text = capsys.readouterr().out
    assert "orders as the scheduler's  54 / 55" in text
    assert "Order 1 at 2026-11-28 22:20:12 UTC: PBS started 278.pbshost" in text
    assert " 1  244.pbshost  fid_cai  238.pbshost  fid_ben" in text
    assert main(argv + ["--sched-log", os.path.join(folder, "sched.log"), "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["orders_compared"], document["orders_agreeing"]) == (55, 54)
    (item,) = document["orders_differing"]
    assert item["pbs_considered"][:2] == ["244.pbshost", "238.pbshost"] and item["pbs_only"] == []
    assert sorted(item["pbs_considered"]) == sorted(item["model_considered"])
    assert main(argv + ["--sched-log", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "--sched-log" in err[0] and "missing" in err[0]


def test_json_to_an_input_is_refused(tmp_path, capsys):
    """--json naming one of the logs is refused before any work."""
    path = log(tmp_path, busy_log())
    assert main(["fidelity", path, "--json", path]) == 2
    assert "overwrite the input" in capsys.readouterr().err


def test_site_settings_not_modelled_are_named(tmp_path, capsys):
    """A site folder's setting the model does not reproduce is named once in the table and listed in the JSON."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "qmgr.txt").write_text("set server max_run_soft = [u:PBS_GENERIC=1]\n")
    out = tmp_path / "out.json"
    assert main(["fidelity", log(tmp_path, busy_log()), "--site", str(site), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("not modelled: server max_run_soft (qmgr.txt line 1)") == 1
    document = json.loads(out.read_text())
    assert document["not_modelled"] == ["server max_run_soft (qmgr.txt line 1)"]


def test_bad_site_is_one_line_and_exit_2(tmp_path, capsys):
    """A site folder that is not one: one line naming it, exit 2."""
    assert main(["fidelity", log(tmp_path, busy_log()), "--site", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere" in err[0]


def test_fairshare_factor_as_sort_value(tmp_path, capsys):
    """With fairshare and no formula, a disagreement shows each queued job's fairshare_factor."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sched_config").write_text("fair_share: true ALL\nfairshare_usage_res: ncpus*walltime\n"
                                       "unknown_shares: 10\n")
    out = tmp_path / "out.json"
    main(["fidelity", log(tmp_path, busy_log(third_started=False)), "--site", str(site), "--json", str(out)])
    capsys.readouterr()
    (item,) = json.loads(out.read_text())["disagreements"]
    assert all(0 < job["sort_value"] <= 1 for job in item["queued"])


def test_fairshare_disagreements_say_where_the_entities_part(capsys):
    """On a real fairshare recording, a disagreement between two entities names where they part in the share
    tree, with the usage per tree share the model ordered them by: the model's side is the lower; without
    fairshare there is nothing to name."""
    folder = os.path.join(RECORDINGS, "fairshare-seed6")
    argv = ["fidelity", os.path.join(folder, "accounting"), "--site", os.path.join(folder, "site")]
    assert main(argv + ["--json", "-"]) == 0
    partings = [item["fairshare"] for item in json.loads(capsys.readouterr().out)["disagreements"]]
    named = [parting for parting in partings if parting is not None]
    assert len(named) >= 8
    assert all(parting["model_usage_per_tree_share"] < parting["pbs_usage_per_tree_share"] for parting in named)
    assert {(parting["pbs_side"], parting["model_side"]) for parting in named} >= {("fid_ben", "fid_ana"),
                                                                                   ("fid_blue", "fid_red")}
    assert main(argv + ["--show", "2"]) == 0
    assert "fairshare: fid_red 128.7 against fid_green 60.5 usage per tree share (112.7 % apart)" in \
        capsys.readouterr().out
    folder = os.path.join(RECORDINGS, "vnodes-seed2")
    assert main(["fidelity", os.path.join(folder, "accounting"), "--json", "-"]) == 0
    assert all(item["fairshare"] is None for item in json.loads(capsys.readouterr().out)["disagreements"])


def test_tables_fit_100_columns_and_wide_shows_the_rest(capsys):
    """On a real recording's disagreements, every text table fits 100 columns; --wide adds the queue, walltime,
    planned end and sort value columns; --json keeps each reason whole."""
    import os
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fidelity", "fairshare-seed2")
    argv = ["fidelity", os.path.join(folder, "accounting"), "--site", os.path.join(folder, "site"), "--show", "3"]
    assert main(argv) == 0
    narrow = capsys.readouterr().out
    rules = [line for line in narrow.splitlines() if line and set(line) == {"-"}]
    assert len(rules) == 4 and max(len(line) for line in rules) <= 100
    headers = [line for line in narrow.splitlines() if line.startswith("job ")]
    assert "no room" in narrow and headers and not any("planned end" in line for line in headers)
    assert main(argv + ["--wide"]) == 0
    assert any(line.startswith("job ") and "planned end" in line for line in capsys.readouterr().out.splitlines())
    assert main(argv + ["--json", "-"]) == 0
    reasons = {job["reason"] for item in json.loads(capsys.readouterr().out)["disagreements"] for job in item["queued"]}
    assert "not enough free resources on the vnodes" in reasons


def test_shares_are_cut_not_rounded_up():
    """48 of 49 decisions (97.96 %) read 97.9%, under a 98 % goal, not 98.0%; whole shares stay whole."""
    assert _share_percent(48, 49) == "97.9%"
    assert _share_percent(49, 49) == "100.0%" and _share_percent(1, 3) == "33.3%" and _share_percent(2, 3) == "66.6%"
    assert _share_percent(19, 20) == "95.0%" and _share_percent(0, 7) == "0.0%" and _share_percent(0, 0) == "-"
