"""Both command lines, as an admin runs them: every error is one line naming the option or file, exit status 2.

One table of bad command lines over ``python -m predictor`` and ``python -m
replay``: each must exit with its status, print exactly one stderr line
matching its pattern, no traceback, and leave no file behind (no output, no
temporary file). Then the closed pipe (``| head``), and the examples that end
every ``--help``.
"""

import argparse
import os
import re
import resource
import shlex
import signal
import subprocess
import sys

import pytest

from predictor.admin.cli import build_parser
from replay.cli import USAGE_EXAMPLES, with_command
from replay.cli import build_parser as build_replay_parser

E_LINE = ("04/10/2026 12:00:{sec:02d};E;{id}.svr;user=alice queue=workq ctime=1775822400 start={start} end={end} "
          "Exit_status=0 Resource_List.walltime=01:00:00 Resource_List.ncpus=1")
SWF = "; Version: 2.2\n; UnixStartTime: 1775822400\n" + "".join(
    "{} {} 0 {} 1 -1 -1 1 3600 -1 1 1 1 -1 1 -1 -1 -1\n".format(job, 100 * job, 600 + job) for job in range(1, 6))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NO_DB = "host=127.0.0.1 port=1 user=nobody"
"""A DSN nothing answers: an error must come before any connection."""


@pytest.fixture
def workdir(tmp_path):
    """A directory with a PBS log, an SWF trace, a plain file, an empty directory and nothing else."""
    (tmp_path / "20260410").write_text("".join(
        E_LINE.format(sec=job, id=job, start=1775822400 + 10 * job, end=1775822400 + 10 * job + 600) + "\n"
        for job in range(1, 8)))
    (tmp_path / "trace.swf").write_text(SWF)
    (tmp_path / "file.txt").write_text("not a directory\n")
    (tmp_path / "empty").mkdir()
    return tmp_path


def listing(root):
    """Every path under ``root``, hidden ones included."""
    return sorted(os.path.relpath(os.path.join(folder, name), str(root))
                  for folder, dirs, files in os.walk(str(root)) for name in dirs + files)


PREDICTOR, REPLAY = "predictor", "replay"

ERRORS = [
    # (CLI, argv ({dir}: the work directory), exit status, pattern of the one stderr line, max file size or None)
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 0", 2,
     r"predict: error: argument --walltime: must be at least 1 second, not '0'"),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 2h", 2, r"argument --walltime: "),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 60 --timeout 1e300", 2,
     r"argument --timeout: must be within 0\.001\.\.3600, not '1e300'"),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 60 --timeout nan", 2, r"argument --timeout: must be within"),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 60 --window 0", 2,
     r"argument --window: must be within 1\.\.1000000, not '0'"),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 60 --reserve -1", 2,
     r"argument --reserve: must be within 0\.\."),
    (PREDICTOR, "predict --dsn {nodb} --walltime 60", 2, r"the following arguments are required: --user"),
    (PREDICTOR, "db init --dsn {nodb} --sql-dir /nonexistent", 2,
     r"db init: error: argument --sql-dir: /nonexistent: no such directory"),
    (PREDICTOR, "db init --dsn {nodb} --sql-dir {dir}/empty", 2, r"argument --sql-dir: .*/empty: no schema files"),
    (PREDICTOR, "db prune --dsn {nodb} --older-than 0", 2, r"argument --older-than: must be within 1\.\."),
    (PREDICTOR, "ingest --dsn {nodb} --workers -1 {dir}/20260410", 2, r"argument --workers: must be within 0\.\.256"),
    (PREDICTOR, "ingest --dsn {nodb} --interval 0 --follow {dir}", 2,
     r"argument --interval: must be within 0\.1\.\.86400, not '0'"),
    (PREDICTOR, "ingest --dsn {nodb} --max-errors -1 {dir}/20260410", 2,
     r"argument --max-errors: must be within 0\.\."),
    (PREDICTOR, "ingest --dsn {nodb} {dir}/empty", 2, r"error: .*/empty: no accounting file in this directory$"),
    (PREDICTOR, "ingest --dsn {nodb} {dir}/missing", 2, r"error: .*/missing: no such file or directory$"),
    (PREDICTOR, "ingest --dsn {nodb} {dir}/trace.swf", 2,
     r"error: .*/trace\.swf: an SWF trace, not a PBS accounting log \(python -m replay convert"),
    (PREDICTOR, "hooks qmgr --no-jobobit --jobobit-config {dir}/j.json", 2,
     r"--no-jobobit and --jobobit-config contradict each other"),
    (PREDICTOR, "hooks qmgr --disable --order 5", 2, r"--order has no effect with --disable"),
    (PREDICTOR, "hooks qmgr --uninstall --config {dir}/c.json", 2, r"--config has no effect with --uninstall"),
    (PREDICTOR, "hooks qmgr --disable --uninstall", 2, r"argument --uninstall: not allowed with argument --disable"),
    (PREDICTOR, "hooks qmgr", 2, r"give --config FILE\.json"),
    (PREDICTOR, "hooks qmgr --prefix 'x;rm' --uninstall", 2, r"hook name prefix 'x;rm': letters, digits and _"),
    (REPLAY, "{dir}/20260410 --plot {dir}/file.txt", 2, r"--plot .*/file\.txt: exists and is not a directory"),
    (REPLAY, "{dir}/20260410 --json /dev/full", 2, r"--json /dev/full: cannot write: No space left on device"),
    (REPLAY, "{dir}/20260410 --jobs-csv /dev/full", 2, r"--jobs-csv /dev/full: cannot write: No space left"),
    (REPLAY, "{dir}/20260410 --csv - --json -", 2, r"--json and --csv: only one output can go to stdout"),
    (REPLAY, "{dir}/20260410 --jobs-csv - --json -", 2, r"--json and --jobs-csv: only one output can go to stdout"),
    (REPLAY, "{dir}/20260410 --json {dir}/out --csv {dir}/out", 2, r"--json and --csv both name .*/out"),
    (REPLAY, "{dir}/20260410 --json {dir}/empty", 2, r"--json .*/empty: is a directory; give a file name"),
    (REPLAY, "{dir}/20260410 --csv {dir}/nodir/m.csv", 2, r"--csv .*/nodir/m\.csv: directory .*/nodir does not exist"),
    (REPLAY, "{dir}/20260410 --json {dir}/20260410", 2, r"--json .*/20260410: the output would overwrite the input"),
    (REPLAY, "{dir}/20260410 --max-errors -1", 2, r"argument --max-errors: must be within 0\.\.1000000000, not '-1'"),
    (REPLAY, "{dir}/20260410 --warmup 2", 2, r"argument --warmup: must be in \[0, 1\)"),
    (REPLAY, "simulate {dir}/20260410 --backfill-depth -1", 2,
     r"argument --backfill-depth: must be within 0\.\.1000000, not '-1' \(see 'python -m replay simulate -h'\)"),
    (REPLAY, "simulate {dir}/20260410 --cycle-interval -5", 2, r"argument --cycle-interval: must be within 0\.\."),
    (REPLAY, "simulate {dir}/20260410 --bsld-tau 99999999999999999999", 2,
     r"argument --bsld-tau: must be within 1\.\."),
    (REPLAY, "simulate {dir}/20260410 --max-errors -1", 2, r"argument --max-errors: must be within 0\.\."),
    (REPLAY, "simulate {dir}/20260410 --default-walltime 0", 2,
     r"argument --default-walltime: must be at least 1 second, not '0'"),
    (REPLAY, "simulate {dir}/20260410 --predictors tang:percentile=0", 2,
     r"argument --predictors: percentile must be an integer >= 1"),
    (REPLAY, "{dir}/20260410 --bogus", 2, r"unrecognized arguments: --bogus \(see 'python -m replay accuracy -h'\)"),
    (REPLAY, "sweep --backfill-depth 1000001 {dir}/20260410", 2, r"argument --backfill-depth: backfill depth must be "),
    (REPLAY, "sweep --cycle-interval -1 {dir}/20260410", 2, r"argument --cycle-interval: must be within 0\.\."),
    (REPLAY, "sweep --default-walltime 0 {dir}/20260410", 2, r"argument --default-walltime: must be at least 1 "),
    (REPLAY, "simulate {dir}/20260410 --plot {dir}/file.txt", 2, r"--plot .*/file\.txt: exists and is not a directory"),
    (REPLAY, "simulate {dir}/20260410 --csv - --jobs-csv -", 2, r"--csv and --jobs-csv: only one output"),
    (REPLAY, "convert {dir}/trace.swf {dir}/out --epoch 99999999999999999999", 2,
     r"argument --epoch: must be within 0\.\.253402300799 \(years 1970\.\.9999\)"),
    (REPLAY, "convert {dir}/trace.swf {dir}/out --epoch 253402300000", 2,
     r"error: --epoch 253402300000: the records would fall outside the years 1970\.\.9999"),
    (REPLAY, "convert {dir}/trace.swf {dir}/out --server 'pbs;rm'", 2,
     r"argument --server: not a PBS server \(host\) name: 'pbs;rm'"),
    (REPLAY, "convert {dir}/trace.swf {dir}/out --server 'pbs 1'", 2, r"argument --server: not a PBS server"),
    (REPLAY, "convert {dir}/trace.swf {dir}/out --server 'pbs\"'", 2, r"argument --server: not a PBS server"),
    (REPLAY, "convert {dir}/trace.swf /dev/full", 2, r"OUT /dev/full: cannot write: No space left on device"),
    (REPLAY, "convert {dir}/trace.swf - --gzip", 2, r"--gzip compresses the daily files of a directory"),
    (REPLAY, "convert {dir}/trace.swf {dir}/file.txt/", 2, r"OUT .*/file\.txt/: exists and is not a directory"),
    (REPLAY, "convert {dir}/trace.swf {dir}/trace.swf", 2, r"OUT .*/trace\.swf: the output would overwrite the input"),
    (REPLAY, "convert {dir}/missing.swf {dir}/file.txt", 2, r"error: .*/missing\.swf: no such file or directory$"),
    (REPLAY, "{dir}/missing --json {dir}/file.txt", 2, r"error: .*/missing: no such file or directory$"),
]


def run_cli(cli, argv, cwd, file_size_limit=None):
    def limit():
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, resource.RLIM_INFINITY))
    return subprocess.run([sys.executable, "-m", cli] + argv, capture_output=True, text=True, timeout=120,
                          cwd=str(cwd), preexec_fn=limit, env=repo_env())


def repo_env():
    """The environment, with this checkout's packages first on the path whatever the working directory."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")])))


def assert_one_line_error(result, status, pattern, before, workdir):
    """Exit status, one stderr line matching ``pattern``, no traceback, no file left behind."""
    lines = result.stderr.splitlines()
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    assert re.search(pattern, lines[0]), lines[0]
    assert listing(workdir) == before


@pytest.mark.parametrize("cli, argv, status, pattern", ERRORS, ids=["{} {}".format(cli, argv.split(" --")[0][:40])
                                                                    for cli, argv, _, _ in ERRORS])
def test_error_is_one_line_with_status(workdir, cli, argv, status, pattern):
    """A bad command line or output: one stderr line naming the option or file, exit 2, nothing written."""
    before = listing(workdir)
    result = run_cli(cli, shlex.split(argv.format(dir=workdir, nodb=shlex.quote(NO_DB))), workdir)
    assert_one_line_error(result, status, pattern, before, workdir)


@pytest.mark.parametrize("argv, pattern", [
    ("{dir}/20260410 --json {dir}/m.json --jobs-csv {dir}/jobs.csv", r"--\S+ .*: cannot write: File too large"),
    ("simulate {dir}/20260410 --predictors v1 --jobs-csv {dir}/jobs.csv --plot {dir}/plots",
     r"--\S+ .*: cannot write: File too large"),
    ("convert {dir}/trace.swf {dir}/accounting/", r"OUT .*/accounting/: cannot write: File too large"),
])
def test_write_failing_midway_leaves_no_file(workdir, argv, pattern):
    """A write that fails part-way (the file size limit, as a full disk): one line, exit 2, no file, no temp file."""
    before = listing(workdir)
    result = run_cli(REPLAY, shlex.split(argv.format(dir=workdir)), workdir, file_size_limit=200)
    assert_one_line_error(result, 2, pattern, before, workdir)


@pytest.mark.parametrize("cli, argv", [
    (REPLAY, "{dir}/20260410 --jobs-csv -"),
    (REPLAY, "simulate {dir}/20260410 --predictors v1"),
    (REPLAY, "convert {dir}/trace.swf -"),
    (REPLAY, "-h"),
    (REPLAY, "simulate -h"),
    (PREDICTOR, "hooks qmgr --uninstall"),
    (PREDICTOR, "ingest --help"),
    (PREDICTOR, "--help"),
])
def test_closed_pipe_ends_quietly(workdir, cli, argv):
    """The reader went away (| head): no traceback, no message, the status of a tool killed by SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([sys.executable, "-m", cli] + shlex.split(argv.format(dir=workdir)),
                                stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, env=repo_env())
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (128 + signal.SIGPIPE, "")


# --- examples at the end of every --help --------------------------------------------------------

def all_parsers(parser, path=()):
    """``[(command words, parser)]`` of a command line and every subcommand, groups included."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += all_parsers(sub, path + (name,))
    return found


def example_lines(help_text):
    """The lines of the ``examples:`` section that ends a help text."""
    head, marker, examples = help_text.rpartition("\nexamples:\n")
    assert marker, "no examples section:\n" + help_text
    lines = examples.rstrip("\n").split("\n")
    assert all(line.startswith("  python -m ") for line in lines), examples
    return [line.strip() for line in lines]


def example_argv(line, program):
    """The argument list of an example command line, without its shell redirection or pipe."""
    words = shlex.split(line)
    for index, word in enumerate(words):
        if word in ("|", ">", ">>", ";", "&&"):
            words = words[:index]
            break
    assert words[:3] == ["python", "-m", program], line
    return words[3:]


def help_cases():
    return [(" ".join((program,) + words), parser.format_help()) for program, build in (
        ("predictor", build_parser), ("replay", build_replay_parser)) for words, parser in all_parsers(build())]


@pytest.mark.parametrize("name, help_text", help_cases(), ids=[name for name, _ in help_cases()])
def test_help_ends_with_examples_that_parse(name, help_text):
    """Every -h ends with two or three examples, and each one is a command line its parser accepts."""
    lines = example_lines(help_text)
    assert 2 <= len(lines) <= 3, lines
    program = name.split()[0]
    for line in lines:
        argv = example_argv(line, program)
        if program == "predictor":
            build_parser().parse_args(argv)
        else:
            parser = build_replay_parser()
            parser.parse_args(with_command(argv))


def test_usage_examples_are_the_ones_shown():
    """python -m replay -h shows USAGE_EXAMPLES."""
    assert example_lines(build_replay_parser().format_help()) == list(USAGE_EXAMPLES)


# --- what users read: no internal references ---------------------------------------------------

INTERNAL = re.compile(r"(?i)\bseed\s+\d|\.\./shared|/work/")
"""Internal paper numbers ("seed 003") and paths outside the repository."""


def user_facing_files():
    paths = [os.path.join(REPO, "README.md"), os.path.join(REPO, "traces", "README.md")]
    paths += [os.path.join(REPO, "docs", name) for name in sorted(os.listdir(os.path.join(REPO, "docs")))]
    for package in ("predictor", "replay", "hooks"):
        for folder, dirs, files in os.walk(os.path.join(REPO, package)):
            dirs[:] = sorted(name for name in dirs if name != "__pycache__")
            paths += [os.path.join(folder, name) for name in sorted(files) if name.endswith((".py", ".md"))]
    return paths


def test_docs_and_docstrings_cite_no_internal_reference():
    """README, docs/ and the packages' text cite papers by author and title and link nothing outside the repo."""
    found = []
    for path in user_facing_files():
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
        found += ["{}:{}: {}".format(os.path.relpath(path, REPO), text.count("\n", 0, match.start()) + 1,
                                     match.group(0)) for match in INTERNAL.finditer(text)]
    assert found == []


def test_help_texts_cite_no_internal_reference():
    """No --help of either command line names a seed paper or a path outside the repository."""
    assert [name for name, text in help_cases() if INTERNAL.search(text)] == []


# --- a bug is not a user error -----------------------------------------------------------------

def failing(*args, **kwargs):
    """Stands in for a function deep inside that has a bug: a plain ValueError, not one of the package's errors."""
    raise ValueError("a bug deep inside")


@pytest.mark.parametrize("cli, target, argv", [
    (PREDICTOR, "predictor.admin.qmgr._checked_prefix", ["hooks", "qmgr", "--uninstall"]),
    (REPLAY, "replay.accuracy.metrics.warmup_count", ["{dir}/20260410"]),
    (REPLAY, "replay.simulation.command.settings_of", ["simulate", "{dir}/20260410"]),
])
def test_internal_value_error_shows_its_traceback(workdir, monkeypatch, capsys, cli, target, argv):
    """A ValueError from a bug is not turned into the tidy one-line user error: the traceback, then a line
    asking to report it, status 1."""
    from predictor.admin.cli import main as predictor_main
    from replay.cli import main as replay_main
    monkeypatch.setattr(target, failing)
    status = (predictor_main if cli == PREDICTOR else replay_main)([arg.format(dir=workdir) for arg in argv])
    err = capsys.readouterr().err
    assert status == 1 and "Traceback (most recent call last)" in err and "ValueError: a bug deep inside" in err
    assert err.rstrip().splitlines()[-1].endswith("internal error (a bug): please report it with the traceback above")
    assert ": error: " not in err


@pytest.mark.parametrize("cli, argv, pattern", [
    (PREDICTOR, "report --since 2026-03-02 --until 2026-03-01", r"error: the period is empty"),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 60 --algorithm v1 --reserve 900",
     r"error: .*v1 has no reserve"),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 60 --algorithm tang --window 5 --min-history 6",
     r"error: .*tang has no window: "),
    (PREDICTOR, "predict --dsn {nodb} --user a --walltime 60 --algorithm tang --min-ratio-pct 101",
     r"argument --min-ratio-pct: must be within"),
])
def test_values_checked_where_they_enter_are_one_line(workdir, cli, argv, pattern):
    """Values refused by the package's own checks (not argparse's) are still one line and status 2."""
    result = run_cli(cli, shlex.split(argv.format(nodb=shlex.quote(NO_DB))), workdir)
    assert_one_line_error(result, 2, pattern, listing(workdir), workdir)


def test_machine_size_unknown_is_one_line(tmp_path):
    """A log whose jobs use no core leaves the machine's size unknown: one line naming --cores, status 2."""
    (tmp_path / "zero.swf").write_text("".join("{} {} 10 100 0 -1 -1 0 3600 -1 1 1 1 -1 1 -1 -1 -1\n".format(
        job, 5 * job) for job in range(1, 3)))
    result = run_cli(REPLAY, ["simulate", str(tmp_path / "zero.swf")], tmp_path)
    assert_one_line_error(result, 2, r"no job in the log uses a core.*give --cores", listing(tmp_path), tmp_path)
