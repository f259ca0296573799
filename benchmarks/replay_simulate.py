"""Benchmark: jobs per second of ``replay simulate``'s engine, this tree against a baseline commit. Not a test.

The baseline's ``replay`` and ``predictor`` packages are taken from git
(``git archive REV``) into a temporary folder; both engines are imported into
this one process and called in turn on the same jobs, round after round, so
that load from other programs hits both alike. Each figure is the best CPU
time (``time.process_time``) over ``--rounds`` rounds; trace reading is not
timed. Every run's schedule is compared with the baseline's: the last column
says whether they are identical.

For each trace (default: KTH-SP2, 100 cores, and the CEA-Curie sample, 93,312
cores, from shared/data) and predictor, one line: baseline jobs/s, this tree's
jobs/s, and their ratio.

``--mypyc MYPYC`` adds a third engine: this tree with its engine, scheduler and
calendar modules compiled, unchanged, by mypyc (``MYPYC`` is its command, e.g.
from ``pip install mypy`` in a venv of its own) in a temporary copy; its jobs/s
and ratio to the baseline are added to each line. It measures what compiling
the engine would give; the project itself ships no compiled module.

Then two shape checks of this tree's engine on the first trace: linear in jobs
(the first 25 %, 50 % and 100 % of the jobs) and flat in machine size (the
machine and every job ``--scale`` times wider: the same schedule at about the
same speed).

    python benchmarks/replay_simulate.py [--baseline REV] [--rounds 5] [--predictors user,v3,v1]
        [--data DIR] [--traces A.swf,B.swf] [--scale 1000] [--mypyc MYPYC] [--json FILE]
"""

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
DEFAULT_TRACES = "KTH-SP2-1996-2.2.swf,CEA-Curie-2011-sample.swf"
DEFAULT_BASELINE = "c0898b6"
"""The last commit before the engine was made faster."""
PACKAGES = ("replay", "predictor")


def extract(rev, folder):
    """The ``replay`` and ``predictor`` packages of commit ``rev``, unpacked under ``folder``."""
    os.makedirs(folder, exist_ok=True)
    archive = os.path.join(folder, "baseline.tar")
    subprocess.run(["git", "-C", ROOT, "archive", "-o", archive, rev] + list(PACKAGES), check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder)
    return folder


COMPILED = ("replay/simulation/calendar.py", "replay/simulation/scheduler.py", "replay/simulation/engine.py")
"""The modules ``--mypyc`` compiles: the per-event code."""


def compiled_copy(mypyc, folder):
    """This tree's packages copied under ``folder`` with the ``COMPILED`` modules built there by ``mypyc``."""
    for package in PACKAGES:
        shutil.copytree(os.path.join(ROOT, package), os.path.join(folder, package),
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    subprocess.run([mypyc, "--ignore-missing-imports"] + list(COMPILED), cwd=folder, check=True,
                   stdout=subprocess.DEVNULL)
    return folder


def engine_of(tree):
    """``(simulate_jobs, resolve, Cluster)`` imported from ``tree``, apart from any other tree's modules."""
    for name in [name for name in sys.modules if name.split(".")[0] in PACKAGES]:
        del sys.modules[name]
    sys.path.insert(0, tree)
    try:
        from replay.shared.predictors import resolve
        from replay.simulation.cluster import Cluster
        from replay.simulation.engine import simulate_jobs
    finally:
        sys.path.remove(tree)
    return simulate_jobs, resolve, Cluster


def cpu_seconds(engine, jobs, name, cores):
    """``(CPU seconds, schedule as plain tuples)`` of one run."""
    simulate_jobs, resolve, Cluster = engine
    predictor, cluster = resolve(name), Cluster.of_cores(cores)
    gc.collect()
    started = time.process_time()
    schedule = simulate_jobs(jobs, predictor, cluster)
    return time.process_time() - started, [tuple(done[1:]) for done in schedule]


def compare(engines, jobs, name, cores, rounds):
    """Best CPU seconds of each engine over ``rounds`` interleaved rounds, and whether the schedules agree."""
    best, schedules = {}, {}
    for _ in range(rounds):
        for label, engine in engines.items():
            seconds, schedules[label] = cpu_seconds(engine, jobs, name, cores)
            best[label] = min(best.get(label, seconds), seconds)
    return best, len({repr(schedule) for schedule in schedules.values()}) == 1


def load(path):
    """The runnable jobs of an SWF trace and its machine size, read with this tree's reader."""
    sys.path.insert(0, ROOT)
    from replay.simulation.cluster import Cluster
    from replay.simulation.runs import runnable_jobs
    from replay.traces.readers import load_trace
    trace = load_trace([path])
    jobs, _ = runnable_jobs(trace.jobs, Cluster.of_cores(trace.max_procs))
    return jobs, trace.max_procs


def throughput(engines, loaded, names, rounds):
    compiled = "compiled" in engines
    print("{:<28} {:>7} {:<12} {:>7} {:>12} {:>12} {:>7}{}  {}".format(
        "trace", "cores", "predictor", "jobs", "baseline j/s", "this j/s", "ratio",
        " {:>12} {:>7}".format("compiled j/s", "ratio") if compiled else "", "same schedule"))
    rows = []
    for trace_name, (jobs, cores) in loaded:
        for name in names:
            best, same = compare(engines, jobs, name, cores, rounds)
            row = {"trace": trace_name, "cores": cores, "predictor": name, "jobs": len(jobs),
                   "baseline_jobs_per_s": int(len(jobs) / best["baseline"]),
                   "jobs_per_s": int(len(jobs) / best["this"]), "ratio": round(best["baseline"] / best["this"], 2),
                   "same_schedule": same}
            extra = ""
            if compiled:
                row.update(compiled_jobs_per_s=int(len(jobs) / best["compiled"]),
                           compiled_ratio=round(best["baseline"] / best["compiled"], 2))
                extra = " {compiled_jobs_per_s:>12,} {compiled_ratio:>6.2f}x".format(**row)
            rows.append(row)
            print("{trace:<28} {cores:>7} {predictor:<12} {jobs:>7} {baseline_jobs_per_s:>12,} {jobs_per_s:>12,} "
                  "{ratio:>6.2f}x{extra}  {same_schedule}".format(extra=extra, **row), flush=True)
    return rows


def linearity(engine, jobs, cores, name, rounds):
    rows = []
    for share in (0.25, 0.5, 1.0):
        part = jobs[:int(len(jobs) * share)]
        seconds = min(cpu_seconds(engine, part, name, cores)[0] for _ in range(rounds))
        rows.append({"share": share, "jobs": len(part), "jobs_per_s": int(len(part) / seconds)})
        print("  first {:>4.0%} of the jobs: {:>6} jobs, {:>8,} jobs/s".format(share, len(part),
                                                                             int(len(part) / seconds)), flush=True)
    return rows


def flatness(engine, jobs, cores, name, rounds, scale):
    wide = [job._replace(ncpus=job.ncpus * scale) for job in jobs]
    small = min((cpu_seconds(engine, jobs, name, cores) for _ in range(rounds)), key=lambda run: run[0])
    big = min((cpu_seconds(engine, wide, name, cores * scale) for _ in range(rounds)), key=lambda run: run[0])
    same = [done[:2] for done in small[1]] == [done[:2] for done in big[1]]
    print("  {:>9,} cores: {:>8,} jobs/s;  {:>11,} cores (jobs x{}): {:>8,} jobs/s;  same schedule: {}".format(
        cores, int(len(jobs) / small[0]), cores * scale, scale, int(len(jobs) / big[0]), same), flush=True)
    return {"cores": cores, "jobs_per_s": int(len(jobs) / small[0]), "scaled_cores": cores * scale,
            "scaled_jobs_per_s": int(len(jobs) / big[0]), "same_schedule": same}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git commit to compare with")
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--traces", default=DEFAULT_TRACES)
    parser.add_argument("--predictors", default="user,v3,v1")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scale", type=int, default=1000)
    parser.add_argument("--mypyc", metavar="MYPYC", help="also time this tree with its engine compiled by MYPYC")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    names = args.predictors.split(",")
    print("load average at start: {:.2f} {:.2f} {:.2f}; baseline {}".format(*os.getloadavg(), args.baseline),
          flush=True)
    loaded = [(name, load(os.path.join(args.data, name))) for name in args.traces.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        engines = {"baseline": engine_of(extract(args.baseline, os.path.join(folder, "baseline")))}
        if args.mypyc:
            engines["compiled"] = engine_of(compiled_copy(args.mypyc, os.path.join(folder, "compiled")))
        engines["this"] = engine_of(ROOT)
        results = {"baseline": args.baseline, "throughput": throughput(engines, loaded, names, args.rounds)}
    trace_name, (jobs, cores) = loaded[0]
    print("linear in jobs ({}, {}, this tree):".format(trace_name, names[0]))
    results["linearity"] = linearity(engines["this"], jobs, cores, names[0], args.rounds)
    print("flat in machine size ({}, {}, this tree):".format(trace_name, names[0]))
    results["flatness"] = flatness(engines["this"], jobs, cores, names[0], args.rounds, args.scale)
    results["load_average"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
