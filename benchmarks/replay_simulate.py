"""Benchmark: simulated jobs per second of ``replay simulate``'s engine. Not a test.

For each trace (default: KTH-SP2, 100 cores, and the CEA-Curie sample, 93,312
cores, from shared/data), times ``simulate_jobs`` once per predictor, best of
``--repeat`` runs (CPU time of this process, so other load on the machine
counts less; wall time is shown too). Then two shape checks on the first trace:

* linear in jobs: jobs/s on the first 25 %, 50 % and 100 % of the jobs;
* flat in machine size: the same jobs on the machine as it is and on one
  ``--scale`` times larger with every job ``--scale`` times wider. The
  schedule must be the same (checked) and the jobs/s close.

Usage:
    python benchmarks/replay_simulate.py [--data DIR] [--traces A.swf,B.swf]
        [--predictors user,clairvoyant,v3] [--repeat 3] [--scale 1000] [--json FILE]

Goals (issue 5): >= 50,000 jobs/s on KTH-SP2 and >= 30,000 on the Curie sample
for one predictor; AccaSim, the best Python simulator measured here, does about
3,800 and 250.
"""

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT]

from replay.predictors import PREDICTORS  # noqa: E402
from replay.simulation.cluster import Cluster  # noqa: E402
from replay.simulation.engine import simulate_jobs  # noqa: E402
from replay.simulation.simulate import runnable_jobs  # noqa: E402
from replay.traces.readers import load_trace  # noqa: E402

DEFAULT_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
DEFAULT_TRACES = "KTH-SP2-1996-2.2.swf,CEA-Curie-2011-sample.swf"


def timed(jobs, predictor, cluster, repeat):
    """``(best CPU seconds, wall seconds of that run, schedule)``."""
    best = None
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        schedule = simulate_jobs(jobs, predictor, cluster)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if best is None or cpu < best[0]:
            best = (cpu, wall, schedule)
    return best


def load(path):
    trace = load_trace([path])
    cluster = Cluster.of_cores(trace.max_procs)
    jobs, _ = runnable_jobs(trace.jobs, cluster)
    return jobs, cluster


def throughput(trace_name, jobs, cluster, names, repeat):
    rows = []
    for name in names:
        cpu, wall, _ = timed(jobs, PREDICTORS[name], cluster, repeat)
        rows.append({"trace": trace_name, "cores": cluster.capacity, "predictor": name, "jobs": len(jobs),
                     "cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "jobs_per_s": int(len(jobs) / cpu)})
        print("{:<28} {:>7} cores  {:<12} {:>6} jobs  {:6.3f} s CPU ({:6.3f} s wall)  {:>8,} jobs/s".format(
            trace_name, cluster.capacity, name, len(jobs), cpu, wall, int(len(jobs) / cpu)), flush=True)
    return rows


def linearity(jobs, cluster, name, repeat):
    rows = []
    for share in (0.25, 0.5, 1.0):
        part = jobs[:int(len(jobs) * share)]
        cpu, _, _ = timed(part, PREDICTORS[name], cluster, repeat)
        rows.append({"share": share, "jobs": len(part), "jobs_per_s": int(len(part) / cpu)})
        print("  first {:>4.0%} of the jobs: {:>6} jobs, {:>8,} jobs/s".format(share, len(part),
                                                                             int(len(part) / cpu)), flush=True)
    return rows


def flatness(jobs, cluster, name, repeat, scale):
    wide = [job._replace(ncpus=job.ncpus * scale) for job in jobs]
    big = Cluster.of_cores(cluster.capacity * scale)
    small_cpu, _, small_schedule = timed(jobs, PREDICTORS[name], cluster, repeat)
    big_cpu, _, big_schedule = timed(wide, PREDICTORS[name], big, repeat)
    same = [(done.start_time, done.end_time) for done in small_schedule] == \
        [(done.start_time, done.end_time) for done in big_schedule]
    print("  {:>9,} cores: {:>8,} jobs/s;  {:>11,} cores (jobs x{}): {:>8,} jobs/s;  same schedule: {}".format(
        cluster.capacity, int(len(jobs) / small_cpu), big.capacity, scale, int(len(jobs) / big_cpu), same),
        flush=True)
    return {"cores": cluster.capacity, "jobs_per_s": int(len(jobs) / small_cpu), "scaled_cores": big.capacity,
            "scaled_jobs_per_s": int(len(jobs) / big_cpu), "same_schedule": same}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--traces", default=DEFAULT_TRACES)
    parser.add_argument("--predictors", default="user,clairvoyant,v3")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=int, default=1000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    names = args.predictors.split(",")
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    results = {"throughput": [], "load_average": os.getloadavg()}
    loaded = [(name, load(os.path.join(args.data, name))) for name in args.traces.split(",")]
    for trace_name, (jobs, cluster) in loaded:
        results["throughput"] += throughput(trace_name, jobs, cluster, names, args.repeat)
    trace_name, (jobs, cluster) = loaded[0]
    print("linear in jobs ({}, {}):".format(trace_name, names[0]))
    results["linearity"] = linearity(jobs, cluster, names[0], args.repeat)
    print("flat in machine size ({}, {}):".format(trace_name, names[0]))
    results["flatness"] = flatness(jobs, cluster, names[0], args.repeat, args.scale)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
