"""Both command lines driven with generated arguments and generated SWF headers: never a traceback.

Each command's options are read from its own argparse parser, and Hypothesis
gives them values a careless user could type (huge, negative, not numbers,
not UTF-8, paths to devices, missing files, directories). The commands run in
this process (``main(argv)``), against a tiny trace and a database address
where nothing listens, so a case takes milliseconds. Whatever happens, no
traceback; a refusal is one line and exit status 2. Then the cases found by
hand, each as a plain test.
"""

import argparse
import contextlib
import io
import os
import re
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from predictor.admin.cli import build_parser as build_predictor_parser
from predictor.admin.cli import main as predictor_main
from replay.cli import build_parser as build_replay_parser
from replay.cli import main as replay_main

NO_DB = "host=127.0.0.1 port=1 user=nobody connect_timeout=2"
JOB = "{} {} 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n"
JOBS = "".join(JOB.format(job, 10 * job) for job in range(1, 6))
SWF = "; Version: 2.2\n; MaxProcs: 8\n" + JOBS
PBS = "".join("04/10/2026 12:00:0{0};E;{0}.svr;user=alice queue=workq ctime=1775822400 start={1} end={2} "
              "Exit_status=0 Resource_List.walltime=01:00:00 Resource_List.ncpus=1\n".format(
                  job, 1775822400 + job, 1775823000 + job) for job in range(1, 6))
REPORTED = re.compile(r"\S.*:[0-9]+: |\.\.\. and [0-9]+ more malformed lines|warning: ")
"""A line of stderr that reports one rejected input line, their count, or a warning."""
SKIPPED = {"--follow", "--help", "-h", "--pbs", "--python"}
"""Options left out: --follow never ends by design, --help only prints, --pbs/--python write a job array."""


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """A directory with an SWF trace, an accounting directory, a plain file and an empty directory."""
    root = tmp_path_factory.mktemp("cli")
    (root / "trace.swf").write_text(SWF)
    (root / "logs").mkdir()
    (root / "logs" / "20260410").write_text(PBS)
    (root / "file.txt").write_text("text\n")
    (root / "empty").mkdir()
    return root


def options(parser, path=()):
    """``{command words: [(option, takes a value)]}`` of a parser and its subcommands."""
    found = {}
    own = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(options(sub, path + (name,)))
        elif action.option_strings and not set(action.option_strings) & SKIPPED:
            own.append((action.option_strings[-1], action.nargs != 0))
    if not any(isinstance(action, argparse._SubParsersAction) for action in parser._actions):
        found[path] = own
    return found


PREDICTOR = {words: opts for words, opts in options(build_predictor_parser()).items() if words != ("doctor",)}
REPLAY = options(build_replay_parser())

VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1", "2", "nan", "inf", "-inf", "1e300", "99999999999999999999", "00:00:00",
                     "24:00:00", "1:2:3:4", "v1", "v3", "tang:percentile=0", "user,v1", "fifo,sjf", "1,1", "",
                     " ", "-", "/dev/full", "/dev/null", "/dev/stdout", "{d}/file.txt", "{d}/empty", "{d}/missing",
                     "{d}/out", "{d}/trace.swf", "{d}/logs", "2026-02-30", "2026-03-01", "a\udcff"]),
    st.integers(min_value=-10 ** 20, max_value=10 ** 20).map(str),
    st.text(max_size=8),
)
"""What a careless user types as an option's value."""

INPUTS = st.sampled_from(["{d}/trace.swf", "{d}/logs", "{d}/logs/20260410", "{d}/file.txt", "{d}/empty",
                          "{d}/missing", "/dev/null", "a\udcff"])


@st.composite
def command_lines(draw, table, inputs=True):
    """A command, some of its options with drawn values, and input paths."""
    words = draw(st.sampled_from(sorted(table)))
    argv = list(words)
    for option, takes_value in draw(st.lists(st.sampled_from(table[words]), max_size=4)) if table[words] else []:
        argv += [option, draw(VALUES)] if takes_value else [option]
    if inputs:
        argv += draw(st.lists(INPUTS, min_size=0, max_size=2))
    return argv


def outcome(main, argv, place, capsys=None):
    """Run ``main`` in this process; ``(status, stderr)``, asserting no traceback and, on 2, one line."""
    argv = [arg.replace("{d}", str(place)) for arg in argv]
    os.chdir(str(place))
    out, errors = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="") for _ in range(2))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errors):  # bytes, as a terminal gets them
        status = main(argv)
        errors.flush()
    err = errors.buffer.getvalue().decode("utf-8", "replace")
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if status == 2:  # one error line, last; before it only the input's rejected lines (FILE:LINE: why)
        lines = err.strip().splitlines()
        assert ": error: " in lines[-1] and not [line for line in lines[:-1] if not REPORTED.match(line)], (
            argv, err)
    assert status in (0, 1, 2), (argv, status, err)
    return status, err


QUICK = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@QUICK
@given(argv=command_lines(REPLAY))
@example(argv=["simulate", "{d}/trace.swf", "--default-walltime", "99999999999999999999"])
@example(argv=["sweep", "{d}/trace.swf", "{d}/trace.swf"])
@example(argv=["{d}/logs", "--json", "{d}/logs/20260410"])
def test_replay_never_shows_a_traceback(place, capsys, argv):
    """python -m replay, any command, any options and inputs: no traceback; a refusal is one line, status 2."""
    outcome(replay_main, argv, place, capsys)


@QUICK
@given(argv=command_lines(PREDICTOR, inputs=False))
@example(argv=["report", "--user", "a\udcff"])
@example(argv=["predict", "--user", "a\udcff", "--walltime", "60"])
def test_predictor_never_shows_a_traceback(place, capsys, argv, monkeypatch):
    """python -m predictor, any command and options, against no database: no traceback; a refusal is one line."""
    monkeypatch.setenv("PBS_SOFTWALLTIME_DSN", NO_DB)
    if argv[:1] == ["ingest"]:
        argv = argv + ["{d}/logs"]
    outcome(predictor_main, argv, place, capsys)


HEADER_KEYS = st.sampled_from(["MaxProcs", "MaxNodes", "UnixStartTime", "Version", "Computer", "MaxJobs",
                               "TimeZoneString", "Queues", "Note", "maxprocs", "Max Procs", "", "X" * 40])
HEADER_VALUES = st.one_of(st.integers(min_value=-10 ** 40, max_value=10 ** 40).map(str),
                          st.sampled_from(["", "-1", "0", "1.5", "nan", "abc", "\ufeff8", "8 8", "0x10"]),
                          st.text(max_size=12))


@st.composite
def swf_texts(draw):
    """An SWF file: drawn header lines (maybe a byte-order mark first), then a few good job lines."""
    lines = ["; {}: {}\n".format(draw(HEADER_KEYS), draw(HEADER_VALUES)).replace("\r", " ")
             for _ in range(draw(st.integers(0, 4)))]
    text = "".join(line.replace("\n", " ").rstrip() + "\n" for line in lines) + SWF
    return ("\ufeff" if draw(st.booleans()) else "") + text


@QUICK
@given(text=swf_texts(), command=st.sampled_from([[], ["simulate", "--predictors", "v1"], ["convert"],
                                                  ["sweep", "--predictors", "v1", "--jobs", "1"]]))
@example(text="; MaxProcs: -5\n" + SWF, command=["simulate", "--predictors", "v1"])
@example(text="\ufeff" + SWF, command=[])
def test_generated_swf_headers_never_show_a_traceback(place, capsys, tmp_path, text, command):
    """Any SWF header a trace can hold: no traceback in any command that reads it."""
    path = tmp_path / "h.swf"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    argv = command[:1] + [str(path)] + command[1:] + ([str(tmp_path / "out.log")] if command == ["convert"] else [])
    outcome(replay_main, argv, place, capsys)


# --- the cases found by hand -------------------------------------------------------------------

def test_negative_max_procs_is_unknown(tmp_path, capsys):
    """'; MaxProcs: -5' is SWF's unknown size: the machine is the log's widest moment, not a crash."""
    (tmp_path / "t.swf").write_text("; MaxProcs: -5\n" + JOBS)
    assert replay_main(["simulate", str(tmp_path / "t.swf"), "--predictors", "v1", "--workers", "1"]) == 0
    assert "most in use at once in the log" in capsys.readouterr().out


def test_byte_order_mark_is_not_part_of_the_trace(tmp_path, capsys):
    """An SWF saved with a byte-order mark is read as SWF."""
    (tmp_path / "t.swf").write_bytes(b"\xef\xbb\xbf" + SWF.encode())
    assert replay_main([str(tmp_path / "t.swf")]) == 0
    assert "(SWF format, 5 jobs)" in capsys.readouterr().out


def test_swf_inside_an_accounting_directory_is_one_note(place, tmp_path, capsys):
    """An SWF trace among a directory's daily files: skipped with one note, as ingest does, not a rejected
    line per job."""
    (tmp_path / "20260410").write_text(PBS)
    (tmp_path / "20260411").write_text(SWF)
    assert replay_main([str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "1 SWF traces among the accounting logs (skipped" in captured.out


def test_twenty_digit_walltime_is_one_line(place, capsys):
    """--default-walltime 99999999999999999999: refused by its option, one line."""
    status, err = outcome(replay_main, ["simulate", "{d}/trace.swf", "--default-walltime",
                                        "99999999999999999999"], place, capsys)
    assert status == 2 and "argument --default-walltime: must be at most 2147483647 s" in err


def test_same_trace_twice_in_sweep_is_one_line(place, capsys):
    """sweep TRACE TRACE: one line saying so."""
    status, err = outcome(replay_main, ["sweep", "{d}/trace.swf", "{d}/trace.swf"], place, capsys)
    assert status == 2 and "TRACE: {}/trace.swf given twice".format(place) in err


def test_user_name_not_utf8_is_one_line(place, capsys):
    """report --user with bytes that are not UTF-8: the option refuses it, before any database."""
    status, err = outcome(predictor_main, ["report", "--dsn", NO_DB, "--user", "a\udcff"], place, capsys)
    assert status == 2 and "argument --user: b'a\\xff': not valid UTF-8" in err


def test_missing_replay_extra_names_it(place, capsys, monkeypatch):
    """Without numpy (installed without the replay extra): one line naming the extra, no ModuleNotFoundError."""
    for name in [name for name in sys.modules if name == "replay" or name.startswith("replay.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "numpy", None)
    from replay.cli import main
    status, err = outcome(main, ["{d}/trace.swf"], place, capsys)
    assert status == 2 and "this command needs numpy, which is not installed: pip install " \
                           "'pbs-softwalltime[replay]'" in err
