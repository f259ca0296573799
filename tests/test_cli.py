"""python -m predictor, run as a subprocess as an admin would."""

import gzip
import os
import subprocess
import sys

import pytest

E_LINE = ("04/10/2026 12:00:05;E;{id};user=alice queue=workq ctime=1 start=100 end={end} Exit_status=0 "
          "Resource_List.walltime=02:00:00 Resource_List.ncpus=1\n")


def predictor(*args, env=None):
    return subprocess.run([sys.executable, "-m", "predictor"] + list(args), capture_output=True, text=True,
                          timeout=60, env=env)


def assert_one_line_error(result, fragment):
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_db_init_reports_up_to_date(database):
    """db init on an initialised database says so and exits 0."""
    result = predictor("db", "init", "--dsn", database.dsn)
    assert result.returncode == 0 and "up to date" in result.stdout


def test_ingest_then_predict(db, tmp_path):
    """ingest loads the log; predict prints the soft walltime and the history used."""
    log = tmp_path / "20260410"
    log.write_text(E_LINE.format(id="1.svr", end=1900) + E_LINE.format(id="2.svr", end=3700))
    assert predictor("ingest", "--dsn", db.writer_dsn, str(log)).returncode == 0
    result = predictor("predict", "--dsn", db.reader_dsn, "--user", "alice", "--walltime", "04:00:00")
    assert result.returncode == 0
    # v3: max usage 3600/7200 = 0.5 -> 0.5 * 14400 + 900 = 8100 s
    assert result.stdout.startswith("soft_walltime 02:15:00 (8100 s) for user alice")
    assert "history: 2 completed job(s)" in result.stdout and "2.svr" in result.stdout


def test_predict_v3_deployed(db, tmp_path):
    """--algorithm v3-deployed doubles the scaled walltime above 24 h: 0.5 x 172800 x 2, capped at 172800."""
    log = tmp_path / "20260410"
    log.write_text(E_LINE.format(id="1.svr", end=1900) + E_LINE.format(id="2.svr", end=3700))
    assert predictor("ingest", "--dsn", db.writer_dsn, str(log)).returncode == 0
    result = predictor("predict", "--dsn", db.reader_dsn, "--user", "alice", "--walltime", "48:00:00",
                       "--algorithm", "v3-deployed", "--reserve", "0")
    assert result.returncode == 0 and result.stdout.startswith("soft_walltime 48:00:00 (172800 s) for user alice")


def test_predict_tang(db, tmp_path):
    """--algorithm tang: two jobs (R 0.25, 0.5) ended 3700 s after epoch; the 50th percentile is 0.25."""
    log = tmp_path / "20260410"
    log.write_text(E_LINE.format(id="1.svr", end=1900) + E_LINE.format(id="2.svr", end=3700))
    assert predictor("ingest", "--dsn", db.writer_dsn, str(log)).returncode == 0
    tang = ["predict", "--dsn", db.reader_dsn, "--user", "alice", "--walltime", "04:00:00", "--algorithm", "tang",
            "--percentile", "50", "--min-history", "2", "--window-days", "1", "--key", "user"]
    inside = predictor(*tang, "--submit-time", "86400")
    assert inside.returncode == 0 and inside.stdout.startswith("soft_walltime 01:00:00 (3600 s) for user alice")
    assert "percentile 50, window_days 1, min_history 2, key user," in inside.stdout
    # A day after 1.svr ended (1900 s) it is outside the window: one job left, fewer than 2: the walltime.
    later = predictor(*tang, "--submit-time", str(86400 + 1901))
    assert later.returncode == 0 and later.stdout.startswith("soft_walltime 04:00:00 (14400 s)")
    assert "history: 1 completed job(s)" in later.stdout


def test_predict_tang_triple_key_reads_the_project(db, tmp_path):
    """tang's default key: only the user's jobs of the same project and walltime count (R 0.25 and 0.5 in project
    climate, 2 h; 0.5 in project other): the 50th percentile of climate's is 0.25."""
    lines = [E_LINE.format(id=job_id, end=end).replace("queue=workq", "project={} queue=workq".format(project))
             for job_id, end, project in (("1.svr", 1900, "climate"), ("2.svr", 3700, "climate"),
                                          ("3.svr", 3700, "other"))]
    log = tmp_path / "20260410"
    log.write_text("".join(lines))
    assert predictor("ingest", "--dsn", db.writer_dsn, str(log)).returncode == 0
    tang = ["predict", "--dsn", db.reader_dsn, "--user", "alice", "--walltime", "02:00:00", "--algorithm", "tang",
            "--percentile", "50", "--min-history", "2", "--submit-time", "86400"]
    climate = predictor(*tang, "--project", "climate")
    assert climate.returncode == 0 and climate.stdout.startswith("soft_walltime 00:30:00 (1800 s)")
    assert "key user+project+walltime, min_ratio_pct 0" in climate.stdout
    assert predictor(*tang, "--project", "other").stdout.startswith("soft_walltime 02:00:00 (7200 s)")
    bounded = predictor(*tang, "--project", "climate", "--min-ratio-pct", "50")
    assert bounded.stdout.startswith("soft_walltime 01:00:00 (3600 s)")


def test_ingest_exit_status_flags_rejected_lines(db, tmp_path):
    """Rejected lines give exit 1 and file:line on stderr; the good lines load."""
    log = tmp_path / "20260410"
    log.write_text("junk\n" + E_LINE.format(id="1.svr", end=200))
    result = predictor("ingest", "--dsn", db.writer_dsn, str(log))
    assert result.returncode == 1 and "{}:1: ".format(log) in result.stderr and "1 jobs loaded" in result.stderr


def test_ingest_missing_path_exit_two(db, tmp_path):
    """A path that does not exist is named and gives exit 2."""
    result = predictor("ingest", "--dsn", db.writer_dsn, str(tmp_path / "missing"))
    assert result.returncode == 2 and "missing: no such file or directory" in result.stderr


def test_ingest_damaged_gzip_one_line_exit_two(db, tmp_path):
    """A .gz cut short: its whole lines load; one warning names the file and line; exit 2."""
    log = tmp_path / "20260410.gz"
    whole = E_LINE.format(id="1.svr", end=200) + E_LINE.format(id="2.svr", end=300)
    stored = gzip.compress((whole + E_LINE.format(id="3.svr", end=400)).encode(), compresslevel=0)
    log.write_bytes(stored[:15 + len(whole) + 10])  # header, stored-block header, two lines and a bit
    result = predictor("ingest", "--dsn", db.writer_dsn, "--workers", "2", str(log))
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert result.returncode == 2 and "Traceback" not in result.stderr and "2 jobs loaded" in result.stderr
    assert len(warnings) == 1 and warnings[0].startswith("warning: {}:3: cannot read ".format(log))


def test_predict_database_down_is_one_line():
    """No server: one line, exit 2, no traceback."""
    result = predictor("predict", "--dsn", "host=127.0.0.1 port=1 user=x", "--user", "a", "--walltime", "60")
    assert_one_line_error(result, "error: database: ")


def test_predict_bad_dsn_does_not_echo_password():
    """A malformed DSN is one error line (after the warning about a password on the command line) that does not
    repeat the password."""
    result = predictor("predict", "--dsn", "junk password=s3cret", "--user", "a", "--walltime", "60")
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and len(lines) == 2 and lines[0].startswith("warning: --dsn holds a password")
    assert "--dsn: not a valid connection string" in lines[1] and "s3cret" not in result.stderr


def test_predict_without_dsn_is_one_line():
    """No --dsn and no $PBS_SOFTWALLTIME_DSN: one line, exit 2."""
    result = predictor("predict", "--user", "a", "--walltime", "60", env={"PATH": "/usr/bin"})
    assert_one_line_error(result, "give --dsn or set $PBS_SOFTWALLTIME_DSN")


@pytest.mark.parametrize("args, fragment", [
    (["--walltime", "2h"], "argument --walltime"),
    (["--walltime", "60", "--window", "0"], "argument --window: must be within 1..1000000"),
    (["--walltime", "0"], "argument --walltime: must be at least 1 second"),
    (["--walltime", "60", "--timeout", "1e300"], "argument --timeout: must be within"),
    (["--walltime", "60", "--timeout", "nan"], "argument --timeout: must be within"),
    (["--walltime", "60", "--reserve", "-1"], "argument --reserve: must be within"),
    (["--walltime", "60", "--percentile", "101"], "argument --percentile: must be within"),
    (["--walltime", "60", "--key", "group"], "argument --key: invalid choice"),
])
def test_predict_bad_arguments(args, fragment):
    """Bad durations and parameters are refused with the argument named."""
    result = predictor("predict", "--dsn", "host=127.0.0.1 port=1", "--user", "a", *args)
    assert result.returncode == 2 and fragment in result.stderr and "Traceback" not in result.stderr


SECRET = "s3cret-on-the-command-line"


@pytest.mark.parametrize("dsn", ["host=127.0.0.1 port=1 user=x password=" + SECRET,
                                 "host=127.0.0.1 port=1 user=x  password = " + SECRET,
                                 "postgresql://x:{}@127.0.0.1:1/db".format(SECRET),
                                 "postgresql://x@127.0.0.1:1/db?password=" + SECRET])
def test_password_on_the_command_line_is_warned_about(dsn, tmp_path):
    """A --dsn carrying a password: one warning line pointing to a passfile, and the password never shown."""
    result = predictor("predict", "--dsn", dsn, "--user", "alice", "--walltime", "01:00:00")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "process table" in warnings[0] and "passfile" in warnings[0]
    assert result.returncode == 2 and SECRET not in result.stderr + result.stdout


@pytest.mark.parametrize("how", ["environment", "passfile"])
def test_no_warning_without_a_password_on_the_command_line(how, tmp_path):
    """The DSN in $PBS_SOFTWALLTIME_DSN (even with a password), or a passfile= in --dsn: no warning."""
    env_dsn = "host=127.0.0.1 port=1 user=x password=" + SECRET
    args = ["predict", "--user", "alice", "--walltime", "01:00:00"]
    if how == "passfile":
        args += ["--dsn", "host=127.0.0.1 port=1 user=x passfile={}".format(tmp_path / "pgpass")]
    result = subprocess.run([sys.executable, "-m", "predictor"] + args, capture_output=True, text=True,
                            env=dict(os.environ, PBS_SOFTWALLTIME_DSN=env_dsn), timeout=60)
    assert result.returncode == 2 and "warning:" not in result.stderr, result.stderr
