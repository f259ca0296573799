"""Accuracy-replay throughput and memory: KTH-SP2 and a synthetic trace of 1M jobs.

Not a test. For each trace it reports, separately, the time to read the trace
(SWF parsing), to replay it (replay.accuracy.accuracy with the five predictors
user, v1, v2, v3, recorded at both instants: the events, the history store, the
predictor calls) and to compute the metrics, as jobs per second, best of
``--repeat`` runs. Memory is measured in a separate run under tracemalloc
(which slows Python down): the peak allocated while replaying, on top of the
trace already loaded; and the process's peak RSS at the end.

    python benchmarks/replay_accuracy.py [--jobs 1000000] [--repeat 3] [--kth PATH]

The synthetic trace is made with a seeded numpy generator: users of Zipf-like
activity submit batches of jobs sharing a walltime, runtimes a Beta fraction
of it (3 % run into it and are killed), exponential waits. It is written as
SWF and read back, so the read time is a real parse.
"""

import argparse
import gc
import os
import resource
import sys
import tempfile
import time
import tracemalloc

import numpy as np

from replay.accuracy.accuracy import replay_accuracy
from replay.accuracy.metrics import accuracy_report
from replay.predictors import ACCURACY_PREDICTORS, PREDICTORS, history_capacity
from replay.traces.readers import load_trace

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_KTH = os.path.join(HERE, "..", "..", "shared", "data", "KTH-SP2-1996-2.2.swf")
WALLTIMES = np.array([1800, 3600, 7200, 14400, 43200, 86400, 172800])
WALLTIME_WEIGHTS = np.array([0.15, 0.25, 0.2, 0.15, 0.1, 0.1, 0.05])


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


def best_of(repeat, function):
    """``(best seconds, last result)`` of ``repeat`` calls."""
    best, result = None, None
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        result = function()
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def replay_memory(jobs, predictors):
    """Peak bytes allocated while replaying (tracemalloc), the trace being already in memory."""
    gc.collect()
    tracemalloc.start()
    try:
        replay_accuracy(jobs, predictors)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(name, path, repeat):
    predictors = [PREDICTORS[predictor] for predictor in ACCURACY_PREDICTORS]
    read_s, trace = best_of(1, lambda: load_trace([path]))
    jobs = trace.jobs
    replay_s, predictions = best_of(repeat, lambda: replay_accuracy(jobs, predictors))
    metrics_s, _ = best_of(repeat, lambda: accuracy_report(name, (), jobs, predictions, 0.01))
    users = len({job.user for job in jobs})
    return {
        "trace": name, "jobs": len(jobs), "users": users, "read_s": read_s, "replay_s": replay_s,
        "metrics_s": metrics_s, "replay_jobs_per_s": len(jobs) / replay_s,
        "replay_metrics_jobs_per_s": len(jobs) / (replay_s + metrics_s),
        "all_jobs_per_s": len(jobs) / (read_s + replay_s + metrics_s),
        "replay_peak_mb": replay_memory(jobs, predictors) / 1e6,
        "store_rows_bound": users * history_capacity(predictors),
    }


def print_rows(rows):
    print("{:<14} {:>9} {:>6} {:>8} {:>9} {:>10} {:>11} {:>14} {:>11} {:>12} {:>13}".format(
        "trace", "jobs", "users", "read s", "replay s", "metrics s", "replay j/s", "+metrics j/s", "all j/s",
        "replay MB", "store rows <="))
    for row in rows:
        print("{trace:<14} {jobs:>9,} {users:>6,} {read_s:>8.2f} {replay_s:>9.2f} {metrics_s:>10.2f} "
              "{replay_jobs_per_s:>11,.0f} {replay_metrics_jobs_per_s:>14,.0f} {all_jobs_per_s:>11,.0f} "
              "{replay_peak_mb:>12.1f} {store_rows_bound:>13,}".format(**row))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000000, help="synthetic trace size (default 1000000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure, the best is kept")
    parser.add_argument("--kth", default=DEFAULT_KTH, help="KTH-SP2 SWF file (skipped if missing)")
    args = parser.parse_args(argv)
    rows = []
    if os.path.exists(args.kth):
        rows.append(measure("KTH-SP2", args.kth, args.repeat))
    else:
        print("KTH-SP2 not found at {}: skipped".format(args.kth), file=sys.stderr)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "synthetic.swf")
        synthetic_swf(path, args.jobs)
        rows.append(measure("synthetic-{}".format(args.jobs), path, args.repeat))
    print_rows(rows)
    print("peak RSS of the process: {:.0f} MB; CPU: {} ({} cores), Python {}".format(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, _cpu(), os.cpu_count(), sys.version.split()[0]))


def _cpu():
    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


if __name__ == "__main__":
    main()
