"""replay.cli: python -m replay, its commands, outputs and exit statuses."""

import argparse
import csv
import json
import os
import subprocess
import sys

import pytest

from replay.cli import build_parser, main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLED_PBS = os.path.join(REPO, "traces", "hpc2n-2002-accounting")
BUNDLED_SWF = os.path.join(REPO, "traces", "HPC2N-2002-subset.swf")
T = 1775822400


def end_line(job_id, user, submit, start, end, walltime, runtime=None):
    walltime_field = " Resource_List.walltime={}".format(walltime) if walltime else ""
    return ("04/10/2026 12:00:00;E;{};user={} queue=workq ctime={} start={} end={} Exit_status=0 "
            "Resource_List.ncpus=1{}".format(job_id, user, T + submit, T + start, T + end, walltime_field))


# The golden jobs of test_accuracy, as a PBS log with a job that never ran and a malformed line.
GOLDEN_LOG = "\n".join([
    "04/10/2026 12:00:00;Q;1.s;user=alice queue=workq ctime={}".format(T),
    end_line("1.s", "alice", 0, 0, 1000, "01:00:00"),
    end_line("4.s", "bob", 100, 100, 5000, None),
    end_line("2.s", "alice", 500, 1000, 1600, "01:00:00"),
    "04/10/2026 12:00:00;Q;9.s;user=carol queue=workq ctime={}".format(T),
    "04/10/2026 12:00:00;D;9.s;requestor=carol@h",
    end_line("3.s", "alice", 1200, 1700, 2000, "02:00:00").replace("end=", "end=x"),
    end_line("3.s", "alice", 1200, 1700, 2000, "02:00:00"),
    end_line("5.s", "bob", 5000, 5000, 5100, "00:10:00"),
]) + "\n"


@pytest.fixture
def golden_log(tmp_path):
    path = tmp_path / "20260410"
    path.write_text(GOLDEN_LOG)
    return str(path)


def job_rows(path):
    with open(path, newline="") as stream:
        return {row["job_id"]: row for row in csv.DictReader(stream)}


def test_golden_log_predictions_in_jobs_csv(golden_log, tmp_path, capsys):
    """Read from a PBS log, every job's hand-computed predictions reach the jobs CSV."""
    status = main([golden_log, "--predictors", "user,v1,v2,v3", "--jobs-csv", str(tmp_path / "jobs.csv")])
    rows = job_rows(str(tmp_path / "jobs.csv"))
    picked = {job_id: tuple(row[name] for name in ("v1_submit_s", "v2_submit_s", "v3_submit_s", "v1_start_s",
                                                    "v2_start_s", "v3_start_s")) for job_id, row in rows.items()}
    assert picked == {
        "1.s": ("3600",) * 6, "4.s": ("",) * 6, "2.s": ("3600",) * 6,
        "3.s": ("1000", "1900", "2900", "800", "1700", "2900"), "5.s": ("600",) * 6}
    assert status == 1  # one malformed line, reported, the rest used


def test_v3_deployed_selectable_in_accuracy_replay(golden_log, tmp_path):
    """--predictors v3-deployed: walltimes up to 24 h, so the golden jobs get v3's values."""
    main([golden_log, "--predictors", "v3,v3-deployed", "--jobs-csv", str(tmp_path / "jobs.csv")])
    rows = job_rows(str(tmp_path / "jobs.csv"))
    assert [row["v3-deployed_submit_s"] for row in rows.values()] == [row["v3_submit_s"] for row in rows.values()]
    assert rows["3.s"]["v3-deployed_submit_s"] == "2900"


def test_tang_with_parameters_in_accuracy_replay(golden_log, tmp_path):
    """tang:percentile=50:min_history=1:key=user for job 3.s (walltime 2 h).

    At submit only 1.s had ended (R = 1000/3600): 7200 x 1000/3600 = 2000. At
    start 2.s too (R = 600/3600); the 50th of two is the smaller: 1200.
    """
    spec = "tang:percentile=50:min_history=1:key=user"
    status = main([golden_log, "--predictors", "tang," + spec, "--jobs-csv", str(tmp_path / "jobs.csv")])
    row = job_rows(str(tmp_path / "jobs.csv"))["3.s"]
    assert (row[spec + "_submit_s"], row[spec + "_start_s"]) == ("2000", "1200")
    assert (row["tang_submit_s"], row["tang_start_s"]) == ("7200", "7200")  # fewer than 10 jobs: the walltime
    assert status == 1


@pytest.mark.parametrize("spec, fragment", [
    ("tang:percentile=x", "percentile must be a whole number"),
    ("tang:percentile=0", "percentile must be an integer >= 1"),
    ("tang:colour=red", "not parameter=value"),
    ("v3:percentile=80", "percentile does not apply to v3"),
    ("oracle", "unknown predictor"),
])
def test_bad_predictor_spec_is_a_usage_error(golden_log, spec, fragment, capsys):
    """A bad ALGORITHM:param=value is refused before reading the trace, naming what is wrong."""
    assert main([golden_log, "--predictors", spec]) == 2
    assert fragment in capsys.readouterr().err


def test_malformed_line_reported_with_file_line_and_field(golden_log, capsys):
    """stderr names file:line and the field; the table is still printed."""
    main([golden_log])
    captured = capsys.readouterr()
    assert "{}:7: field end: not an integer".format(golden_log) in captured.err
    assert "1 jobs skipped: deleted while queued (D record)" in captured.out


def test_default_command_is_accuracy(capsys):
    """``python -m replay LOGS`` and ``python -m replay accuracy LOGS`` print the same."""
    assert main([BUNDLED_SWF]) == 0
    implicit = capsys.readouterr().out
    assert main(["accuracy", BUNDLED_SWF]) == 0
    assert capsys.readouterr().out == implicit and "v3" in implicit


def test_bundled_accounting_directory_replays(capsys):
    """The README's command: the bundled PBS accounting directory, out of the box."""
    assert main([BUNDLED_PBS, "--at", "start"]) == 0
    out = capsys.readouterr().out
    assert "3145 jobs read from 58 file(s)" in out and "v3         start" in out


def run_outputs(folder, golden_log, hash_seed):
    """stdout and output files of ``python -m replay`` on the golden log, under this PYTHONHASHSEED."""
    folder.mkdir()
    args = [golden_log, "--json", str(folder / "m.json"), "--csv", str(folder / "m.csv"),
            "--jobs-csv", str(folder / "j.csv")]
    done = subprocess.run([sys.executable, "-m", "replay"] + args, cwd=REPO, stdout=subprocess.PIPE,
                          env=dict(os.environ, PYTHONHASHSEED=hash_seed))
    return done.stdout, {name: (folder / name).read_bytes() for name in ("m.json", "m.csv", "j.csv")}


def test_same_input_byte_identical_outputs(golden_log, tmp_path):
    """Two interpreters with different string hashing give the same stdout, JSON, CSV and jobs CSV, byte for
    byte (two runs in one process would share any set order and prove nothing)."""
    first = run_outputs(tmp_path / "one", golden_log, "1")
    assert first == run_outputs(tmp_path / "two", golden_log, "2")
    assert b"v3" in first[0] and first[1]["j.csv"].count(b"\n") > 1


def test_json_to_stdout_replaces_the_table(golden_log, capsys):
    """``--json -`` prints only the JSON document."""
    main([golden_log, "--json", "-"])
    document = json.loads(capsys.readouterr().out)
    assert document["tables"][0]["key"] == "summary"


def test_missing_input_is_one_line_and_status_2(tmp_path, capsys):
    """An error is one stderr line and exit status 2, no traceback."""
    assert main([str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file or directory" in err and "Traceback" not in err


def test_bad_option_is_one_line_and_status_2(capsys):
    """argparse errors are one line too."""
    assert main([BUNDLED_SWF, "--warmup", "2"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_convert_command_round_trip(tmp_path, capsys):
    """convert writes PBS logs from SWF that replay like the SWF itself."""
    assert main(["convert", BUNDLED_SWF, str(tmp_path / "log.gz")]) == 0
    main([str(tmp_path / "log.gz"), "--csv", str(tmp_path / "pbs.csv")])
    main([BUNDLED_SWF, "--csv", str(tmp_path / "swf.csv")])
    assert (tmp_path / "pbs.csv").read_text() == (tmp_path / "swf.csv").read_text()


def test_plot_option_writes_pngs(golden_log, tmp_path, capsys):
    """--plot DIR fills DIR with the figures."""
    main([golden_log, "--plot", str(tmp_path / "plots")])
    assert sorted(os.listdir(str(tmp_path / "plots"))) == [
        "errors_by_runtime_class_start.png", "errors_by_runtime_class_submit.png", "v_curve_start.png",
        "v_curve_submit.png"]


def commands():
    """``{name: parser}`` of the subcommands of python -m replay."""
    parser = build_parser()
    return next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction)).choices


def test_help_lists_the_commands(capsys):
    """-h names every command."""
    assert main(["-h"]) == 0
    out = capsys.readouterr().out
    assert sorted(commands()) == ["accuracy", "convert", "fidelity", "simulate", "sweep"]
    assert all(name in out for name in commands())


def test_every_command_has_a_summary_and_a_runner():
    """Each subcommand has a description and runs a function of its own."""
    parsers = commands()
    assert all(parser.description and callable(parser.get_default("func")) for parser in parsers.values())
    assert len({parser.get_default("func") for parser in parsers.values()}) == len(parsers)


def test_no_command_prints_the_usage_and_status_2(capsys):
    """python -m replay alone: the usage on stderr, status 2."""
    assert main([]) == 2
    assert "Without COMMAND: accuracy" in capsys.readouterr().err


def test_recorded_soft_walltimes_are_compared_when_present(tmp_path, capsys):
    """A log whose E records carry soft_walltime gets the 'recorded' predictor by default, with its values."""
    line = end_line("1.s", "alice", 0, 0, 1000, "01:00:00") + " Resource_List.soft_walltime=00:20:00"
    (tmp_path / "20260410").write_text(line + "\n")
    assert main([str(tmp_path / "20260410"), "--jobs-csv", str(tmp_path / "jobs.csv")]) == 0
    row = job_rows(str(tmp_path / "jobs.csv"))["1.s"]
    assert (row["recorded_submit_s"], row["recorded_start_s"], row["user_start_s"]) == ("1200", "1200", "3600")
    assert "recorded" in capsys.readouterr().out


def test_recorded_left_out_when_the_log_has_none(golden_log, capsys):
    """No soft walltime in the log: 'recorded' is not in the default set, and a note says so."""
    main([golden_log])
    out = capsys.readouterr().out
    assert "predictor 'recorded' left out" in out and "\nrecorded " not in out


def test_classify_adds_the_classification_table_to_text_json_and_csv(golden_log, tmp_path, capsys):
    """--classify: one more table, in the text (with its legend), the JSON and the CSV; without it, none."""
    json_path, csv_path = str(tmp_path / "m.json"), str(tmp_path / "m.csv")
    assert main([golden_log, "--predictors", "user", "--classify", "--json", json_path, "--csv", csv_path]) in (0, 1)
    text = capsys.readouterr().out
    assert "Small/large classification at submission" in text and "  TS, FS, TL, FL: " in text
    assert json.load(open(json_path))["tables"][-1]["key"] == "classification"
    assert "classification" in {row["table"] for row in csv.DictReader(open(csv_path))}
    main([golden_log, "--predictors", "user", "--json", json_path])
    assert "classification" not in [table["key"] for table in json.load(open(json_path))["tables"]]


@pytest.mark.parametrize("given, expected", [(None, 1), ("2", 2)])
def test_numpy_gets_one_openblas_thread_unless_the_admin_set_it(given, expected):
    """numpy, imported after replay.cli, runs OpenBLAS with one thread (the replay uses no BLAS); an admin's own
    OPENBLAS_NUM_THREADS is left as it is (threadpoolctl, which scikit-learn brings, reads what OpenBLAS uses)."""
    env = {name: value for name, value in os.environ.items() if name != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    script = ("import replay.cli, numpy, threadpoolctl; print([pool['num_threads'] "
              "for pool in threadpoolctl.threadpool_info() if pool['internal_api'] == 'openblas'])")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, stdout=subprocess.PIPE, check=True)
    threads = json.loads(done.stdout.decode())
    assert threads and set(threads) == {expected}


@pytest.mark.parametrize("argv0, prog", [("/usr/local/bin/pbs-replay", "pbs-replay"),
                                         (os.path.join(REPO, "replay", "__main__.py"), "python -m replay")])
def test_messages_name_the_replay_as_the_admin_started_it(argv0, prog):
    """The installed script's errors and usage say ``pbs-replay``; ``python -m replay``'s say that."""
    script = ("import sys; sys.argv = [{!r}, 'simulate', '/no/such/trace']; "
              "from replay.cli import entry_point; entry_point()".format(argv0))
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (2, "{}: error: /no/such/trace: no such file or directory\n".format(prog))
