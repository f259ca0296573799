"""Mutation check: do the tests catch small deliberate bugs? Not a test.

Each mutant is one text substitution in one source file. The script copies the
checkout to a temporary directory (the checkout itself is never edited), runs
the named test files once unmutated (they must pass), then for each mutant
writes the mutated file into the copy, runs ``pytest -x -q -p no:cacheprovider``
on its test files there, and puts the original back. A mutant whose tests fail
is *killed*; one whose tests pass *survived*: either the tests miss a bug, or
the mutant is equivalent (no input tells it apart), which ``equivalent`` then
explains. A pattern that is not in its file exactly once stops the script before
anything runs, so a stale mutant cannot pass for a survivor.

Usage:
    python benchmarks/mutants.py [--only TEXT ...] [--tests NODE ...] [--seed N] [--list]

``--only`` keeps the mutants whose name contains TEXT; ``--tests`` runs the given
test files or node ids instead of each mutant's own; ``--seed`` passes
``--hypothesis-seed``. The Hypothesis example database is deleted before every
run, so no mutant is killed by an example another one found, and the
``mutants`` profile (tests/conftest.py) skips shrinking: a failure is enough.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIMULATION_TESTS = ("tests/test_extension.py", "tests/test_calendar.py", "tests/test_scheduler.py",
                    "tests/test_engine.py")
ALGORITHM_TESTS = ("tests/test_algorithms.py",)
INGEST_TESTS = ("tests/test_chunks.py", "tests/test_ingest.py")
HOOK_TESTS = ("tests/test_server_runtime.py", "tests/test_hook_faults.py")
PLOT_TESTS = ("tests/test_plots.py", "tests/test_simulate.py")


class Mutant(NamedTuple):
    """Replace ``old`` (present exactly once in ``path``) by ``new``; ``tests`` should then fail."""

    name: str
    path: str
    old: str
    new: str
    tests: Tuple[str, ...]
    equivalent: Optional[str] = None  # why no test can kill it, for a mutant kept to document that


MUTANTS = [
    # predictor/algorithms.py
    Mutant("v3 window counts only rows with a walltime", "predictor/algorithms.py",
           "    best_runtime, best_walltime = 0, 0\n    for row in history[:window]:\n",
           "    best_runtime, best_walltime = 0, 0\n"
           "    for row in [row for row in history if row.walltime_s and row.walltime_s > 0][:window]:\n",
           ALGORITHM_TESTS),
    Mutant("v1/v2 mean rounded up", "predictor/algorithms.py",
           "mean = total // len(rows)", "mean = -(-total // len(rows))", ALGORITHM_TESTS),
    Mutant("v3 scaled walltime rounded up", "predictor/algorithms.py",
           "scaled = ratio[0] * walltime_s // ratio[1]",
           "scaled = -(-ratio[0] * walltime_s // ratio[1])", ALGORITHM_TESTS),
    Mutant("v1/v2 window one row too long", "predictor/algorithms.py",
           "rows = history[:window]", "rows = history[:window + 1]", ALGORITHM_TESTS),
    Mutant("clamp floor 0 instead of 1 s", "predictor/algorithms.py",
           "at_least_1s = max(seconds, 1)", "at_least_1s = max(seconds, 0)", ALGORITHM_TESTS),
    Mutant("walltime of 0 s counts as a walltime", "predictor/algorithms.py",
           "walltime_s is not None and walltime_s >= 1", "walltime_s is not None and walltime_s >= 0",
           ALGORITHM_TESTS),
    Mutant("v3 keeps the later row on a tied ratio", "predictor/algorithms.py",
           "row.runtime_s * best_walltime > best_runtime * past_walltime",
           "row.runtime_s * best_walltime >= best_runtime * past_walltime", ALGORITHM_TESTS,
           equivalent="rows with equal runtime/walltime ratios give the same floor(runtime * W / walltime)"),
    # replay/simulation/extension.py
    Mutant("pbs extension not capped at the walltime", "replay/simulation/extension.py",
           "return min(walltime_s, soft_s * (elapsed_s // soft_s + 1))",
           "return soft_s * (elapsed_s // soft_s + 1)", SIMULATION_TESTS),
    Mutant("pbs extension count off by one", "replay/simulation/extension.py",
           "return (ran - 1) // soft_s if ran > soft_s else 0", "return ran // soft_s if ran > soft_s else 0",
           SIMULATION_TESTS),
    Mutant("double extension doubles from 2S", "replay/simulation/extension.py",
           "soft_s << (elapsed_s // soft_s).bit_length()", "soft_s << (elapsed_s // soft_s + 1).bit_length()",
           SIMULATION_TESTS),
    # replay/simulation/engine.py
    Mutant("extended plan not capped at walltime", "replay/simulation/engine.py",
           "planned = self.extension.planned(soft, self.walltime_plan[index], elapsed)",
           "planned = self.extension.planned(soft, FIVE_YEARS_S, elapsed)", SIMULATION_TESTS),
    Mutant("re-plan skipped at the exact instant", "replay/simulation/engine.py",
           "if end_times and end_times[0] <= now:", "if end_times and end_times[0] < now:", SIMULATION_TESTS),
    Mutant("job not killed at its walltime", "replay/simulation/engine.py",
           "job.runtime_s if walltime is None else min(job.runtime_s, walltime)", "job.runtime_s",
           SIMULATION_TESTS),
    Mutant("history learns the uncut runtime", "replay/simulation/engine.py",
           "_history_row((now, job.job_id, self.runtime[index], self.walltime[index]))",
           "_history_row((now, job.job_id, job.runtime_s, self.walltime[index]))", SIMULATION_TESTS),
    Mutant("runjob keeps the queuejob soft walltime", "replay/simulation/engine.py",
           "soft_started[index] = soft_walltime(job, index) or 0",
           "soft_started[index] = self.soft_queued[index] or 0", SIMULATION_TESTS),
    Mutant("prediction above the walltime kept", "replay/simulation/engine.py",
           "else clamp(int(soft), self.walltime[index])", "else clamp(int(soft), None)", SIMULATION_TESTS),
    Mutant("history shared between simulations", "replay/simulation/engine.py",
           "self.history = MemoryHistory(max(predictor.window, 1))",
           'self.history = globals().setdefault("_history", MemoryHistory(max(predictor.window, 1)))',
           SIMULATION_TESTS),
    # replay/simulation/calendar.py
    Mutant("re-plan misses plans ending now (bisect_left)", "replay/simulation/calendar.py",
           "count = bisect_right(self.end_times, now)", "count = bisect_left(self.end_times, now)", SIMULATION_TESTS),
    Mutant("filler may not end as a reservation starts", "replay/simulation/calendar.py",
           "            if start >= end:\n                return True",
           "            if start > end:\n                return True", SIMULATION_TESTS),
    Mutant("min available takes the max", "replay/simulation/calendar.py",
           "and dip_available < available:", "and dip_available > available:", SIMULATION_TESTS),
    # replay/simulation/scheduler.py
    Mutant("job using every free core does not fit", "replay/simulation/scheduler.py",
           "if width <= calendar.free and (not dips", "if width < calendar.free and (not dips",
           SIMULATION_TESTS),
    Mutant("one top job too many", "replay/simulation/scheduler.py",
           "elif top_jobs < limit:", "elif top_jobs <= limit:", SIMULATION_TESTS),
    Mutant("selective and soft plans swapped", "replay/simulation/scheduler.py",
           "job.walltime_plan_s if selective else job.planned_s", "job.planned_s if selective else job.walltime_plan_s",
           SIMULATION_TESTS),
    Mutant("invaded reservation not re-planned", "replay/simulation/scheduler.py",
           "self.changed = True  # a reservation was invaded", "pass  # a reservation was invaded",
           SIMULATION_TESTS),
    # the figures
    Mutant("V curve sorted by |error|", "predictor/figures.py",
           "ordered = np.sort(np.asarray(errors, dtype=np.float64))",
           "ordered = np.sort(np.abs(np.asarray(errors, dtype=np.float64)))", PLOT_TESTS),
    Mutant("accuracy boxes ignore the runtime class", "replay/accuracy/plots.py",
           "error[has & mask]", "error[has]", PLOT_TESTS),
    Mutant("simulation wait boxes ignore the runtime class", "replay/simulation/simulation_plots.py",
           "cols.wait[mask] / _HOUR", "cols.wait / _HOUR", PLOT_TESTS),
    # predictor/ingest.py
    Mutant("ingester drops in-flight chunks on a read error", "predictor/ingest.py",
           "self._finish_all(log, head, in_flight)  # keep what was read before the damage",
           "in_flight.clear()  # keep what was read before the damage", INGEST_TESTS),
    Mutant("changed file resumed if only its head matches", "predictor/ingest.py",
           "if old_head != head or log.tail_sha1(offset) != old_tail:",
           "if old_head != head and log.tail_sha1(offset) != old_tail:", INGEST_TESTS),
    Mutant("progress line number one too high", "predictor/ingest.py",
           "chunk.first_line_no + parsed.lines - 1)", "chunk.first_line_no + parsed.lines)", INGEST_TESTS),
    # predictor/server/runtime.py and the hook file
    Mutant("runtime not pausing after a deadline", "predictor/server/runtime.py",
           "self._paused_until[key] = self.clock() + config.pause_after_timeout_s",
           "self._paused_until[key] = self.clock()", HOOK_TESTS),
    Mutant("runtime clamp of the prediction removed", "predictor/server/runtime.py",
           "soft_s = soft_s if predicted is None else clamp(predicted, view.walltime_s)",
           "soft_s = soft_s if predicted is None else predicted", HOOK_TESTS),
    Mutant("hook-file clamp removed", "hooks/softwalltime.py",
           'change["soft_walltime"] = pbs.duration(int(walltime))', "pass", HOOK_TESTS),
]


def _copy_checkout(target):
    ignored = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.pyc", ".hypothesis", ".pytest_cache",
                                     "*.egg-info", "build", "dist")
    shutil.copytree(ROOT, target, ignore=ignored)


def _check_patterns(mutants):
    """Every pattern must occur exactly once in its file; say which do not, then stop."""
    problems = []
    for mutant in mutants:
        with open(os.path.join(ROOT, mutant.path), encoding="utf-8") as source:
            found = source.read().count(mutant.old)
        if found != 1:
            problems.append("{}: {!r} occurs {} times in {} (must be once)".format(mutant.name, mutant.old, found,
                                                                                  mutant.path))
    if problems:
        raise SystemExit("stale mutants, nothing run:\n  " + "\n  ".join(problems))


def _pytest(copy, tests, seed, timeout_s):
    """``(exit status or None on timeout, seconds, output)`` of one pytest run in ``copy``."""
    shutil.rmtree(os.path.join(copy, ".hypothesis"), ignore_errors=True)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    if seed is not None:
        command.append("--hypothesis-seed={}".format(seed))
    # No bytecode: a mutant of the same size written in the same second could be run from a stale .pyc.
    env = dict(os.environ, PYTHONPATH=copy, PYTHONDONTWRITEBYTECODE="1", HYPOTHESIS_PROFILE="mutants")
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - started, "timed out"
    return done.returncode, time.monotonic() - started, done.stdout


def _verdict(status, mutant):
    if status is None:
        return "killed (timeout)"
    if status in (1, 2):  # 1: a test failed; 2: collection failed (the mutant broke an import)
        if mutant.equivalent:
            return "KILLED, not equivalent after all"
        return "killed" if status == 1 else "killed (error)"
    if status == 0:
        return "survived (equivalent)" if mutant.equivalent else "SURVIVED"
    raise SystemExit("{}: pytest exited {} (usage error or no tests?)".format(mutant.name, status))


def _run_mutant(copy, mutant, tests, seed, timeout_s):
    path = os.path.join(copy, mutant.path)
    with open(path, encoding="utf-8") as source:
        original = source.read()
    try:
        with open(path, "w", encoding="utf-8") as source:
            source.write(original.replace(mutant.old, mutant.new, 1))
        status, seconds, output = _pytest(copy, tests, seed, timeout_s)
    finally:
        with open(path, "w", encoding="utf-8") as source:
            source.write(original)
    return _verdict(status, mutant), _first_failure(output), seconds


def _first_failure(output):
    """The node id of the first test pytest's summary names as failed (as ``file.py::test``), or ''."""
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return os.path.basename(line.split(" ", 1)[1].split(" - ", 1)[0])
    return ""


def _table(rows):
    header = ("mutant", "file", "tests run", "result", "first failing test", "seconds")
    widths = [max(len(str(row[column])) for row in rows + [header]) for column in range(len(header))]
    lines = [" | ".join(str(cell).ljust(width) for cell, width in zip(row, widths)) for row in [header] + rows]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", default=[], help="mutants whose name contains this text")
    parser.add_argument("--tests", nargs="+", help="run these tests for every mutant instead of its own")
    parser.add_argument("--seed", type=int, help="--hypothesis-seed for every run")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a run counts as a kill")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    # A kill is an exit, so the temporary copy is removed and the running pytest stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    mutants = [mutant for mutant in MUTANTS if not args.only or any(text in mutant.name for text in args.only)]
    if not mutants:
        raise SystemExit("no mutant matches {}".format(args.only))
    _check_patterns(mutants)
    if args.list:
        for mutant in mutants:
            print("{}  ({})".format(mutant.name, mutant.path))
        return 0
    rows = _run_all(mutants, args)
    print(_table(rows))
    for mutant in mutants:
        if mutant.equivalent:
            print("equivalent: {}: {}".format(mutant.name, mutant.equivalent))
    return 1 if any(row[3].startswith(("SURVIVED", "KILLED")) for row in rows) else 0


def _run_all(mutants, args):
    """The table rows: the unmutated tests first (they must pass), then one run per mutant."""
    with tempfile.TemporaryDirectory(prefix="mutants-") as scratch:
        copy = os.path.join(scratch, "checkout")
        _copy_checkout(copy)
        every_test = sorted({test for mutant in mutants for test in (args.tests or mutant.tests)})
        status, seconds, output = _pytest(copy, every_test, args.seed, args.timeout)
        if status != 0:
            raise SystemExit("the unmutated tests do not pass (pytest exit {}):\n{}".format(status, output))
        print("unmutated: {} pass in {:.0f} s".format(" ".join(every_test), seconds), flush=True)
        rows = []
        for mutant in mutants:
            tests = tuple(args.tests or mutant.tests)
            verdict, failure, seconds = _run_mutant(copy, mutant, tests, args.seed, args.timeout)
            rows.append((mutant.name, mutant.path, " ".join(os.path.basename(test) for test in tests), verdict,
                         failure, "{:.1f}".format(seconds)))
            print("{}: {} ({:.1f} s)".format(mutant.name, verdict, seconds), file=sys.stderr, flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(main())
