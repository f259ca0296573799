"""Accuracy-replay throughput, old code against new, and the peak memory of ``python -m replay``. Not a test.

For each trace (KTH-SP2, the CEA-Curie sample, a synthetic trace of 1M jobs)
the trace is read once, then the replay (``replay_accuracy``, both instants)
and its metrics (``accuracy_report``) run ``--repeat`` times with the code of
``--baseline`` (a git revision: by default the one before the vectorised
replay) and with the code of this checkout, taking turns, so a busy machine
slows both alike. Times are CPU seconds of this process, the best run kept
(wall seconds are shown too). Old and new must give the same predictions and
the same report rows: the benchmark stops if they differ.

"jobs/s" is jobs / (replay + metrics): the accuracy replay end to end after
reading the trace. Then ``python -m replay`` runs once on the synthetic trace
with each code, as a command: its wall time (reading included) and its peak
RSS.

    python benchmarks/replay_accuracy.py [--jobs 1000000] [--repeat 3] [--predictors NAMES] [--baseline REV]

The synthetic trace is made with a seeded numpy generator: users of Zipf-like
activity submit batches of jobs sharing a walltime, runtimes a Beta fraction
of it (3 % run into it and are killed), exponential waits. It is written as
SWF, so the read and the command parse a real file.
"""

import argparse
import gc
import importlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT]

from replay.traces.readers import load_trace  # noqa: E402

DEFAULT_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
TRACES = (("KTH-SP2", "KTH-SP2-1996-2.2.swf"), ("CEA-Curie", "CEA-Curie-2011-sample.swf"))
WALLTIMES = np.array([1800, 3600, 7200, 14400, 43200, 86400, 172800])
WALLTIME_WEIGHTS = np.array([0.15, 0.25, 0.2, 0.15, 0.1, 0.1, 0.05])
FIRST_VECTORISED = "replay/accuracy/vectorised.py"


def synthetic_swf(path, jobs, users=5000, seed=20261122):
    """Write ``jobs`` synthetic jobs as an SWF file (18 fields, -1 where unknown)."""
    rng = np.random.default_rng(seed)
    sizes = rng.geometric(0.25, size=jobs)
    batches = int(np.searchsorted(np.cumsum(sizes), jobs)) + 1
    batch_of_job = np.repeat(np.arange(batches), sizes[:batches])[:jobs]
    weights = 1.0 / np.arange(1, users + 1) ** 1.1
    batch_user = rng.choice(users, size=batches, p=weights / weights.sum())
    batch_walltime = rng.choice(WALLTIMES, size=batches, p=WALLTIME_WEIGHTS)
    batch_submit = np.cumsum(rng.exponential(2 * 365 * 86400 / batches, size=batches)).astype(np.int64)
    walltime = batch_walltime[batch_of_job]
    submit = batch_submit[batch_of_job] + rng.integers(0, 60, size=jobs)
    runtime = (walltime * rng.beta(0.7, 2.0, size=jobs)).astype(np.int64)
    killed = rng.random(jobs) < 0.03
    runtime[killed] = walltime[killed] + rng.integers(0, 120, size=int(killed.sum()))
    wait = rng.exponential(1800, size=jobs).astype(np.int64)
    procs = rng.choice([1, 2, 4, 8, 16, 32, 64], size=jobs)
    order = np.argsort(submit, kind="stable")
    with open(path, "w") as out:
        out.write("; Synthetic trace for benchmarks/replay_accuracy.py (seed {})\n; MaxProcs: 4096\n;\n".format(seed))
        for number, index in enumerate(order.tolist(), 1):
            out.write("{} {} {} {} {} -1 -1 {} {} -1 1 {} 1 -1 1 -1 -1 -1\n".format(
                number, submit[index], wait[index], runtime[index], procs[index], procs[index], walltime[index],
                batch_user[batch_of_job[index]] + 1))


def baseline_revision():
    """The parent of the commit that added the vectorised replay: the code before it."""
    added = subprocess.run(["git", "-C", ROOT, "log", "--diff-filter=A", "--format=%H", "--", FIRST_VECTORISED],
                           capture_output=True, text=True, check=True).stdout.split()
    if not added:
        raise SystemExit("no commit adds {}: give --baseline".format(FIRST_VECTORISED))
    return added[-1] + "^"


def export_replay(revision, folder):
    """The ``replay`` package of ``revision`` written to ``folder/replay``."""
    archive = os.path.join(folder, "replay.tar")
    subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", "-o", archive, revision, "replay"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder)
    return os.path.join(folder, "replay")


class Code:
    """One version of the accuracy replay: ``replay(jobs)`` and ``report(jobs, predictions)``."""

    def __init__(self, label, package, names):
        self.label = label
        accuracy = importlib.import_module(package + ".accuracy.accuracy")
        metrics = importlib.import_module(package + ".accuracy.metrics")
        predictors = importlib.import_module(package + ".predictors")
        self.predictors = [predictors.resolve(name) for name in names]
        self.replay = lambda jobs: accuracy.replay_accuracy(jobs, self.predictors)
        self.report = lambda jobs, predictions: metrics.accuracy_report("benchmark", (), jobs, predictions, 0.01)


def timed(function, *arguments):
    """``(CPU seconds, wall seconds, result)`` of one call."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    result = function(*arguments)
    return time.process_time() - cpu, time.perf_counter() - wall, result


def compare(name, codes, jobs, repeat):
    """Each code's best replay and metrics times, taking turns; stops if the codes disagree."""
    best = {code.label: {} for code in codes}
    for _ in range(repeat):
        outputs = []
        for code in codes:
            replay_cpu, replay_wall, predictions = timed(code.replay, jobs)
            metrics_cpu, metrics_wall, report = timed(code.report, jobs, predictions)
            outputs.append((predictions.values, [table.rows for table in report.tables]))
            for key, value in (("replay", replay_cpu), ("metrics", metrics_cpu),
                               ("wall", replay_wall + metrics_wall)):
                best[code.label][key] = min(best[code.label].get(key, value), value)
        if not all(np.array_equal(outputs[0][0], values) and outputs[0][1] == rows for values, rows in outputs):
            raise SystemExit("{}: the codes' predictions or report rows differ".format(name))
    return best


def command_run(replay_parent, trace_path):
    """``(wall seconds, peak RSS MB)`` of ``python -m replay TRACE``, the ``replay`` package from ``replay_parent``."""
    from simulate_end_to_end import Measure  # its peak RSS is the command's own, not this process's
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([replay_parent, ROOT]))
    measure = Measure([sys.executable, "-m", "replay", trace_path], replay_parent, environment)
    return measure.wall_s, measure.peak_mb


def print_rows(rows, labels):
    old, new = labels
    print("{:<18} {:>9} {:>7} | {:>9} {:>9} | {:>9} {:>9} | {:>10} {:>10} {:>7}".format(
        "trace", "jobs", "read s", old + " rpl", new + " rpl", old + " met", new + " met", old + " j/s",
        new + " j/s", "ratio"))
    for name, jobs, read_s, best in rows:
        speeds = [jobs / (best[label]["replay"] + best[label]["metrics"]) for label in labels]
        print("{:<18} {:>9,} {:>7.2f} | {:>9.3f} {:>9.3f} | {:>9.3f} {:>9.3f} | {:>10,.0f} {:>10,.0f} {:>6.1f}x".format(
            name, jobs, read_s, best[old]["replay"], best[new]["replay"], best[old]["metrics"], best[new]["metrics"],
            speeds[0], speeds[1], speeds[1] / speeds[0]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000000, help="synthetic trace size (default 1000000; 0: none)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each code per trace, the best is kept")
    parser.add_argument("--predictors", default="user,v1,v2,v3,recorded",
                        help="comma-separated predictor names (default: the accuracy replay's default set)")
    parser.add_argument("--data", default=DEFAULT_DATA, help="folder of the KTH-SP2 and Curie SWF files")
    parser.add_argument("--baseline", help="git revision of the old code (default: before the vectorised replay)")
    parser.add_argument("--no-command", action="store_true", help="skip the python -m replay runs")
    args = parser.parse_args(argv)
    names = args.predictors.split(",")
    revision = args.baseline or baseline_revision()
    with tempfile.TemporaryDirectory() as folder:
        old_parent = os.path.join(folder, "old")
        os.makedirs(old_parent)
        shutil.move(export_replay(revision, folder), os.path.join(old_parent, "replay"))
        shutil.copytree(os.path.join(old_parent, "replay"), os.path.join(folder, "replay_baseline"))
        sys.path.insert(0, folder)
        codes = [Code("old", "replay_baseline", names), Code("new", "replay", names)]
        paths = [(name, os.path.join(args.data, file)) for name, file in TRACES
                 if os.path.exists(os.path.join(args.data, file))]
        if args.jobs:
            paths.append(("synthetic-{}".format(args.jobs), os.path.join(folder, "synthetic.swf")))
            synthetic_swf(paths[-1][1], args.jobs)
        rows = []
        for name, path in paths:
            read_s, _, trace = timed(load_trace, [path])
            rows.append((name, len(trace.jobs), read_s, compare(name, codes, trace.jobs, args.repeat)))
            del trace
        print("predictors: {}; old code: {}; CPU seconds, best of {}".format(
            ",".join(names), revision, args.repeat))
        print_rows(rows, ("old", "new"))
        if args.jobs and not args.no_command:
            for label, parent in (("old", old_parent), ("new", ROOT)):
                wall_s, rss_mb = command_run(parent, paths[-1][1])
                print("python -m replay {} ({} code): {:.1f} s wall, peak RSS {:.0f} MB".format(
                    paths[-1][0], label, wall_s, rss_mb))
    print("CPU: {} ({} cores), Python {}".format(_cpu(), os.cpu_count(), sys.version.split()[0]))


def _cpu():
    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


if __name__ == "__main__":
    main()
