"""python -m predictor report: hand-computed figures over a small completed_jobs table, as the reader role.

The fixture, March 2026 (``--since 2026-03-01 --until 2026-03-31``), errors
are estimate - runtime in seconds:

    job  user   queue  runtime  walltime  soft    soft err  walltime err
    a1   alice  workq     3600     36000   5400     +1800       +32400   (<=2h; ends at the period's first second)
    a2   alice  workq    36000     86400  32400     -3600       +50400   (2-24h)
    b1   bob    short     7200      7200   3600     -3600            0   (<=2h: 2 h is the class's upper bound)
    c1   carol  workq   100000    108000 108000     +8000        +8000   (>24h; ends at the period's last second)
    d1   dave   workq      600      3600      -         -            -   (no soft walltime: before the hooks)
    e1   erin   workq     1800         -   2700      +900            -   (no walltime)

and two alice jobs just outside the period that would change every figure.
Per user (jobs with both estimates): alice's soft walltimes erred 2700 s per
job against 41400 s for her walltimes (a gain of 38700 s); bob's 3600 s
against 0 (a loss of 3600 s); carol's equally.
"""

import json
import subprocess
import sys
import time

import psycopg2
import pytest

from predictor.report.measure import connect, distributions, measure
from predictor.report.selection import parse_day, selection_for
from predictor.report.summary import build_report

MARCH = parse_day("2026-03-01")
APRIL = parse_day("2026-04-01")
PERIOD = ["--since", "2026-03-01", "--until", "2026-03-31"]
MARCH_ONLY = selection_for(MARCH, parse_day("2026-03-31"))
HOUR = 3600.0

JOBS = [  # job_id, user, queue, runtime, walltime, soft walltime, end time
    ("a1", "alice", "workq", 3600, 36000, 5400, MARCH),
    ("a2", "alice", "workq", 36000, 86400, 32400, MARCH + 5 * 86400),
    ("b1", "bob", "short", 7200, 7200, 3600, MARCH + 6 * 86400),
    ("c1", "carol", "workq", 100000, 108000, 108000, APRIL - 1),
    ("d1", "dave", "workq", 600, 3600, None, MARCH + 7 * 86400),
    ("e1", "erin", "workq", 1800, None, 2700, MARCH + 8 * 86400),
    ("x1", "alice", "workq", 60, 60000, 60, MARCH - 1),
    ("x2", "alice", "workq", 60, 60000, 60, APRIL),
]


def insert(db, jobs):
    conn = psycopg2.connect(db.dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO completed_jobs (job_id, user_name, queue, runtime_s, walltime_s, soft_walltime_s,"
                " end_time) VALUES (%s, %s, %s, %s, %s, %s, %s)", jobs)
    finally:
        conn.close()


@pytest.fixture
def march(db):
    """The run's database holding the fixture jobs."""
    insert(db, JOBS)
    return db


def predictor(*args):
    return subprocess.run([sys.executable, "-m", "predictor", "report"] + list(args), capture_output=True,
                          text=True, timeout=120)


def tables_of(stdout):
    return {table["key"]: table["rows"] for table in json.loads(stdout)["tables"]}


def reported(db, *args):
    result = predictor("--dsn", db.reader_dsn, "--json", "-", *args)
    assert result.returncode == 0, result.stderr
    return tables_of(result.stdout)


def test_jobs_without_soft_walltime_are_counted_apart(march):
    """Per runtime class: jobs that ended in March, those measured, dave's job apart; x1 and x2 are outside."""
    rows = reported(march, *PERIOD)["jobs"]
    assert [tuple(row.values()) for row in rows] == [
        ("all", 6, 5, 1), ("<=2h", 4, 3, 1), ("2-24h", 1, 1, 0), (">24h", 1, 1, 0)]


def test_accuracy_over_all_jobs_by_hand(march):
    """Soft walltime over a1 a2 b1 c1 e1, walltime over a1 a2 b1 c1 (e1 has none): shares, errors, accuracy."""
    rows = {(row["runtime_class"], row["estimate"]): row for row in reported(march, *PERIOD)["accuracy"]}
    soft, wall = rows["all", "soft walltime"], rows["all", "walltime"]
    ratios = [3600 / 5400, 36000 / 32400, 7200 / 3600, 100000 / 108000, 1800 / 2700]
    assert (soft["jobs"], soft["underestimated_share"], soft["overestimated_share"]) == (5, 0.4, 0.6)
    assert (soft["mean_abs_error_s"], soft["median_abs_error_s"]) == (17900 / 5, 3600)
    assert soft["runtime_ratio_mean"] == pytest.approx(sum(ratios) / 5) and soft["runtime_ratio_median"] == round(
        100000 / 108000, 6)
    assert (wall["jobs"], wall["underestimated_share"], wall["overestimated_share"]) == (4, 0.0, 0.75)
    assert (wall["mean_abs_error_s"], wall["median_abs_error_s"]) == (90800 / 4, (8000 + 32400) / 2)
    assert wall["runtime_ratio_median"] == pytest.approx((36000 / 86400 + 100000 / 108000) / 2, abs=1e-6)


def test_accuracy_by_runtime_class_by_hand(march):
    """<=2h holds a1, b1 (exactly 2 h) and e1; 2-24h a2, under-estimated by its soft walltime only."""
    rows = {(row["runtime_class"], row["estimate"]): row for row in reported(march, *PERIOD)["accuracy"]}
    short = rows["<=2h", "soft walltime"]
    assert (short["jobs"], short["underestimated_share"], short["mean_abs_error_s"], short["median_abs_error_s"]) \
        == (3, round(1 / 3, 6), 2100, 1800)
    assert [rows["2-24h", estimate]["underestimated_share"] for estimate in ("soft walltime", "walltime")] == [1, 0]
    assert rows[">24h", "soft walltime"]["mean_abs_error_s"] == rows[">24h", "walltime"]["mean_abs_error_s"] == 8000


def test_users_win_lose_and_tie(march):
    """alice gains, bob loses, carol ties; erin (no walltime) and dave (no soft walltime) are not compared."""
    tables = reported(march, *PERIOD)
    assert tables["users"] == [{"users_compared": 3, "soft_better": 1, "soft_better_share": round(1 / 3, 6),
                                "soft_equal": 1, "soft_worse": 1, "soft_worse_share": round(1 / 3, 6)}]
    assert tables["user_gains"] == [{"user": "alice", "jobs": 2, "walltime_mean_abs_error_s": 41400,
                                     "soft_walltime_mean_abs_error_s": 2700, "gain_s": 38700}]
    assert tables["user_losses"] == [{"user": "bob", "jobs": 1, "walltime_mean_abs_error_s": 0,
                                      "soft_walltime_mean_abs_error_s": 3600, "loss_s": 3600}]


def test_period_bounds(march):
    """--since is included from its first second, --until to its last: the day after takes in x2 (at 00:00)."""
    assert reported(march, *PERIOD)["jobs"][0]["jobs"] == 6
    assert reported(march, "--since", "2026-03-01", "--until", "2026-04-01")["jobs"][0]["jobs"] == 7
    assert reported(march, "--since", "2026-02-28", "--until", "2026-02-28")["jobs"][0]["jobs"] == 1


def test_user_and_queue_filters(march):
    """--user keeps alice's March jobs, --queue short only bob's."""
    alice = reported(march, *PERIOD, "--user", "alice")
    assert alice["jobs"][0]["jobs"] == 2 and [row["user"] for row in alice["user_gains"]] == ["alice"]
    short = reported(march, *PERIOD, "--queue", "short")
    assert short["jobs"][0]["jobs"] == 1 and [row["user"] for row in short["user_losses"]] == ["bob"]


def test_default_period_is_the_last_30_days(db):
    """Without --since and --until: a job that ended yesterday counts, one of 40 days ago does not."""
    now = int(time.time())
    insert(db, [("new", "alice", "workq", 60, 600, 120, now - 86400), ("old", "alice", "workq", 60, 600, 120,
                                                                         now - 40 * 86400)])
    assert reported(db)["jobs"][0]["jobs"] == 1


def test_text_table_with_units_and_legend(march):
    """The default output: the title names the period, columns carry units, a legend explains them."""
    result = predictor("--dsn", march.reader_dsn, *PERIOD)
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and result.stderr == ""
    assert lines[0] == "Soft walltime accuracy: jobs that ended from 2026-03-01 to before 2026-04-01 UTC"
    header = "runtime  estimate       jobs  under %  over %  mean |err| h:m:s  median |err| h:m:s  run/est median"
    assert header in lines
    rows = lines[lines.index(header) + 2:lines.index(header) + 4]
    assert rows == [
        "all      soft walltime     5     40.0    60.0          00:59:40            01:00:00           0.926",
        "all      walltime          4      0.0    75.0          06:18:20            05:36:40           0.671"]
    assert "alice     2                   11:30:00               00:45:00    10:45:00" in lines
    assert lines[lines.index("Legend:") + 1].startswith("  runtime: ")
    assert max(len(line) for line in lines[:lines.index("Legend:")] if not line.startswith("  ")) <= 100
    assert lines[lines.index("In short:") + 1] == (
        "  over all jobs, soft walltime: 40% under-estimated, median |err| 01:00:00; walltime: 0%")


def test_wide_shows_every_column(march):
    """--wide adds the columns the default view leaves out (run/est mean)."""
    result = predictor("--dsn", march.reader_dsn, *PERIOD, "--wide")
    assert result.returncode == 0 and "run/est mean  run/est median" in result.stdout
    assert "not shown here" not in result.stdout


def test_csv_to_stdout_replaces_the_table(march, tmp_path):
    """--csv - prints only CSV; --json PATH writes the same figures to a file."""
    result = predictor("--dsn", march.reader_dsn, *PERIOD, "--csv", "-", "--json", str(tmp_path / "r.json"))
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[0].startswith("table,runtime_class,jobs,measured,without_soft_walltime,")
    assert lines[1].startswith("jobs,all,6,5,1,") and "Legend:" not in result.stdout
    assert json.loads((tmp_path / "r.json").read_text())["tables"][0]["rows"][0]["measured"] == 5


def test_full_disk_is_one_line(march):
    """--json /dev/full: the write fails after the query; one line naming the option, exit 2."""
    assert_one_line_error(predictor("--dsn", march.reader_dsn, *PERIOD, "--json", "/dev/full"),
                          "--json /dev/full: cannot write: No space left on device")


def test_empty_period_draws_no_blank_figure(march, tmp_path):
    """--plot over a period with no job: no blank figure and no matplotlib warning, one line saying why."""
    result = predictor("--dsn", march.reader_dsn, "--since", "2020-01-01", "--until", "2020-01-31", "--plot",
                       str(tmp_path / "plots"))
    assert result.returncode == 0 and not (tmp_path / "plots").exists()
    assert result.stderr.splitlines() == ["--plot {}: no figure drawn: no job to draw among the jobs that ended "
                                          "from 2020-01-01 to before 2020-02-01 UTC".format(
                                              tmp_path / "plots")]


def test_empty_period_says_so(march):
    """No job in the period: zero counts, empty figures, a note, exit 0."""
    result = predictor("--dsn", march.reader_dsn, "--since", "2020-01-01", "--until", "2020-01-31")
    assert result.returncode == 0 and "no job with a soft walltime ended in the period" in result.stdout


def capture_figures(monkeypatch):
    from matplotlib.figure import Figure
    saved, real_savefig = {}, Figure.savefig

    def savefig(figure, path, *args, **kwargs):
        real_savefig(figure, path, *args, **kwargs)
        saved[str(path).rsplit("/", 1)[-1]] = figure
    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def plotted(db, tmp_path, monkeypatch):
    from predictor.report.command import run_report
    saved = capture_figures(monkeypatch)
    run_report(db.reader_dsn, MARCH_ONLY, json_path=str(tmp_path / "r.json"),
               plot_dir=str(tmp_path / "plots"))
    return saved


def test_plots_v_curve_draws_the_sorted_errors(march, tmp_path, monkeypatch):
    """The V curve: each error once, sorted, in hours (0 drawn at 1 s) labelled as durations people read (not
    10^-3); labels count the jobs."""
    axes = plotted(march, tmp_path, monkeypatch)["v_curve.png"].axes[0]
    lines = {line.get_label(): line.get_ydata().tolist() for line in axes.get_lines()}
    assert lines["soft walltime (5 jobs)"] == pytest.approx([1, 1, 0.25, 0.5, 8000 / HOUR])
    assert lines["walltime (4 jobs)"] == pytest.approx([1 / HOUR, 8000 / HOUR, 32400 / HOUR, 50400 / HOUR])
    assert [label.get_text() for label in axes.get_yticklabels()] == ["1 s", "1 min", "10 min", "1 h", "6 h", "1 d"]
    assert "%" in axes.get_xlabel()
    assert sorted(path.name for path in (tmp_path / "plots").iterdir()) == [
        "errors_by_runtime_class.png", "users.png", "v_curve.png"]


def test_plots_boxes_count_jobs_per_class(march, tmp_path, monkeypatch):
    """The box plot's ticks count each class's jobs; the users' plot counts who won and lost."""
    saved = plotted(march, tmp_path, monkeypatch)
    boxes = saved["errors_by_runtime_class.png"].axes[0]
    assert [label.get_text() for label in boxes.get_xticklabels()] == [
        "<=2h (3 jobs)", "2-24h (1 jobs)", ">24h (1 jobs)"]
    users = saved["users.png"].axes[0]
    assert [text.get_text() for text in users.get_legend().get_texts()] == [
        "soft walltime better: 1 users", "equal: 1 users", "soft walltime worse: 1 users", "equal errors"]


def test_session_is_one_read_only_snapshot(march):
    """The report's session reads one snapshot (REPEATABLE READ) and refuses writes, even where the role could."""
    conn = connect(march.dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SHOW transaction_isolation")
            assert cursor.fetchone() == ("repeatable read",)
        with pytest.raises(psycopg2.Error, match="read-only"):
            with conn.cursor() as cursor:
                cursor.execute("DELETE FROM completed_jobs")
    finally:
        conn.close()


def test_in_process_report_matches_cli(march):
    """measure + build_report give the tables the command prints (one code path)."""
    conn = connect(march.reader_dsn)
    try:
        measured = measure(conn, MARCH_ONLY)
        assert distributions(conn, MARCH_ONLY, {"soft walltime": 5})
    finally:
        conn.close()
    report = build_report(MARCH_ONLY, measured)
    assert [table.key for table in report.tables] == ["jobs", "accuracy", "users", "user_gains", "user_losses"]
    assert report.tables[0].rows[0] == ("all", 6, 5, 1)


def assert_one_line_error(result, fragment):
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--since", "2026-04-02", "--until", "2026-04-01"], "the period is empty: --since 2026-04-02 is after "
                                                          "--until 2026-04-01"),
    (["--csv", "-", "--json", "-"], "--json and --csv: only one output can go to stdout"),
    (["--csv", "/nonexistent/dir/r.csv"], "--csv /nonexistent/dir/r.csv: directory /nonexistent/dir does not exist"),
    (["--json", "/tmp"], "--json /tmp: is a directory"),
    (["--plot", "/dev/null"], "--plot /dev/null: exists and is not a directory"),
    (["--json", "/tmp/r", "--csv", "/tmp/r"], "--json and --csv both name /tmp/r: give each output its own file"),
])
def test_bad_input_is_one_line(database, args, fragment):
    """Bad options found by the command: one line on stderr, exit 2, nothing asked of the database."""
    assert_one_line_error(predictor("--dsn", database.reader_dsn, *args), fragment)


@pytest.mark.parametrize("args, fragment", [
    (["--since", "2026-13-01"], "argument --since: not a date YYYY-MM-DD: '2026-13-01'"),
    (["--until", "yesterday"], "argument --until: not a date YYYY-MM-DD"),
    (["--user", ""], "argument --user: must not be empty"),
])
def test_bad_option_values_exit_two(args, fragment):
    """Values argparse refuses: exit 2, the option named on the last line, no traceback."""
    result = predictor("--dsn", "host=127.0.0.1 port=1", *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert fragment in result.stderr.strip().splitlines()[-1]


def test_database_down_is_one_line():
    """No server: one line, exit 2."""
    assert_one_line_error(predictor("--dsn", "host=127.0.0.1 port=1 user=x"), "error: database: ")


def test_role_without_select_is_one_line(database):
    """A login outside softwalltime_reader: permission denied, one line."""
    from pgadmin import admin_execute, dsn_for
    admin_execute("DO $$ BEGIN CREATE ROLE softwalltime_test_nobody LOGIN; "
                  "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    result = predictor("--dsn", dsn_for(database.name, "softwalltime_test_nobody"))
    assert_one_line_error(result, "permission denied for table completed_jobs")


def test_help_ends_with_examples_that_parse():
    """-h ends with real examples, and each one parses."""
    from predictor.admin.cli import build_parser
    result = subprocess.run([sys.executable, "-m", "predictor", "report", "-h"], capture_output=True, text=True)
    examples = result.stdout.split("examples:\n")[1].strip().splitlines()
    assert result.returncode == 0 and len(examples) == 3
    for example in examples:
        args = build_parser().parse_args(example.split()[3:])
        assert args.command == "report"


def without(modules, *args):
    """The report run in an interpreter where ``modules`` cannot be imported."""
    code = ("import sys\nfor name in {!r}: sys.modules[name] = None\n"
            "from predictor.admin.cli import main\nsys.exit(main(['report'] + {!r}))").format(modules, list(args))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_text_report_needs_no_numpy(march):
    """Tables, CSV and JSON need psycopg2 only, as the other admin commands."""
    result = without(["numpy", "matplotlib", "pandas"], "--dsn", march.reader_dsn, *PERIOD)
    assert result.returncode == 0 and "soft walltime" in result.stdout, result.stderr


def test_plot_without_matplotlib_is_one_line(march, tmp_path):
    """--plot where matplotlib is missing: one line saying what to install, before the database is asked."""
    result = without(["matplotlib"], "--dsn", "host=127.0.0.1 port=1", "--plot", str(tmp_path))
    assert_one_line_error(result, "--plot needs numpy and matplotlib")
