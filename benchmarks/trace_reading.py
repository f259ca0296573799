"""Benchmark: lines/s of the trace readers, a baseline revision's against this checkout's, in one run. Not a test.

Inputs: KTH-SP2 and the CEA-Curie sample (SWF, from shared/data), the bundled
HPC2N accounting directory (traces/), and a larger accounting directory made
here from KTH-SP2: converted to daily PBS logs (Q, S, E records, as
``python -m replay convert`` writes them), each S and E record then given the
fields a real OpenPBS server adds (exec_host, exec_vnode, session,
resources_used.cput/mem/vmem/cpupercent), so its lines are as long as real
ones (~600 characters for E).

Each reader runs in a fresh subprocess with its revision's packages first on
``sys.path`` (the baseline is extracted with ``git archive``), baseline and
this checkout in turn, ``--repeat`` rounds; the best round of each is kept.
Wall time counts (the PBS reader may scan files in worker processes) and CPU
time (reading process plus its workers) is shown too. Each run also prints a
digest of the jobs, reported lines and counters: the table says whether both
revisions read the same. For PBS directories this checkout is also timed
with its workers off (``1 process``), to tell the parallel gain from the rest.

    python benchmarks/trace_reading.py [--baseline REV] [--repeat 5] [--data DIR] [--synthetic JOBS]
        [--json FILE] [--profile]

``--synthetic JOBS`` adds the seeded synthetic SWF trace of
``benchmarks/replay_accuracy.py`` with that many jobs.

``--profile`` prints, for each revision, the functions taking most of the
time reading KTH-SP2 and the KTH-SP2 accounting directory (cProfile, one
process).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from replay_simulate import extract

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
DEFAULT_BASELINE = "c0898b6"
"""The last revision before the fast readers (line by line, one process)."""

_RUN = r'''
import hashlib, json, resource, sys, time
from replay.traces import pbslog, readers
from replay.traces.trace import ReadStats
path, workers = sys.argv[1], sys.argv[2]
rejects = []
def on_reject(*reject):
    rejects.append(reject)
def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
wall, cpu, children = time.perf_counter(), time.process_time(), children_cpu()
if workers == "auto":
    trace = readers.load_trace([path], on_reject=on_reject)
else:
    trace = pbslog.read_accounting([path], ReadStats(), on_reject, workers=int(workers))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu + children_cpu() - children
digest = hashlib.sha1(repr((trace.jobs, trace[4:], rejects, sorted(vars(trace.stats).items()))).encode())
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "lines": trace.stats.lines, "jobs": len(trace.jobs),
                  "digest": digest.hexdigest()}))
'''

_PROFILE = r'''
import cProfile, pstats, sys
from replay.traces import pbslog, readers
from replay.traces.trace import ReadStats
path, workers = sys.argv[1], sys.argv[4]
if workers == "auto":
    cProfile.run("readers.load_trace([path])", sys.argv[2])
else:
    cProfile.run("pbslog.read_accounting([path], ReadStats(), None, workers=int(workers))", sys.argv[2])
pstats.Stats(sys.argv[2]).sort_stats("tottime").print_stats(int(sys.argv[3]))
'''

_SERVER_FIELDS = {
    "S": " exec_host={host}/0*{ncpus} exec_vnode=({host}:ncpus={ncpus}) session={session}",
    "E": (" exec_host={host}/0*{ncpus} exec_vnode=({host}:ncpus={ncpus}) session={session}"
          " resources_used.cpupercent=99 resources_used.cput={cput} resources_used.mem=1048576kb"
          " resources_used.vmem=2097152kb"),
}


def _with_server_fields(line, number):
    """An S or E line with the fields a real server writes that a converted trace leaves out."""
    kind = line[20:21]
    if kind not in _SERVER_FIELDS:
        return line
    ncpus = line.split("Resource_List.ncpus=", 1)[1].split(" ", 1)[0]
    extra = _SERVER_FIELDS[kind].format(host="node{:04d}".format(number % 1000), ncpus=ncpus,
                                        session=10000 + number % 50000, cput="00:10:00")
    return line.rstrip(" ") + extra


def build_accounting(swf_path, directory):
    """KTH-SP2 as daily accounting files with real servers' fields; the number of lines."""
    sys.path.insert(0, ROOT)
    from predictor.cmdline.rejects import RejectPrinter
    from replay.traces.convert import convert
    converted = os.path.join(directory, "converted")
    convert([swf_path], converted + "/", "auto", RejectPrinter(0, open(os.devnull, "w")))
    os.makedirs(os.path.join(directory, "kth-accounting"))
    lines = 0
    for name in sorted(os.listdir(converted)):
        with open(os.path.join(converted, name)) as source, \
                open(os.path.join(directory, "kth-accounting", name), "w") as target:
            for line in source:
                target.write(_with_server_fields(line.rstrip("\n"), lines) + "\n")
                lines += 1
    return os.path.join(directory, "kth-accounting")


def run_reader(tree, path, workers):
    """One read of ``path`` by the packages in ``tree``: the measures as a dict."""
    done = subprocess.run([sys.executable, "-c", _RUN, path, workers], cwd=tree, check=True,
                          env=dict(os.environ, PYTHONPATH=tree), stdout=subprocess.PIPE, universal_newlines=True)
    return json.loads(done.stdout)


def measure(name, path, trees, repeat):
    """Best of ``repeat`` rounds for each ``(label, tree, workers)`` of ``trees``, in turn each round."""
    best = {}
    for _ in range(repeat):
        for label, tree, workers in trees:
            result = run_reader(tree, path, workers)
            if label not in best or result["wall_s"] < best[label]["wall_s"]:
                best[label] = result
    baseline = best[trees[0][0]]
    rows = []
    for label, _, _ in trees:
        result = best[label]
        rows.append(dict(result, trace=name, reader=label, lines_per_s=result["lines"] / result["wall_s"],
                         ratio=baseline["wall_s"] / result["wall_s"], same=result["digest"] == baseline["digest"]))
    return rows


def print_rows(rows):
    print("{:<32} {:<16} {:>9} {:>8} {:>8} {:>10} {:>7}  {}".format(
        "trace", "reader", "lines", "wall s", "CPU s", "lines/s", "ratio", "same jobs and reports"))
    for row in rows:
        print("{trace:<32} {reader:<16} {lines:>9,} {wall_s:>8.3f} {cpu_s:>8.3f} {lines_per_s:>10,.0f} "
              "{ratio:>6.2f}x  {same}".format(**row), flush=True)


def profile(runs, top):
    """cProfile's busiest functions for each ``(label, tree, path, workers)`` of ``runs``."""
    for label, tree, path, workers in runs:
        print("=== {}: {}".format(label, os.path.basename(path)), flush=True)
        with tempfile.NamedTemporaryFile() as stats:
            subprocess.run([sys.executable, "-c", _PROFILE, path, stats.name, str(top), workers], cwd=tree,
                           check=True, env=dict(os.environ, PYTHONPATH=tree))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision of the readers to compare with")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best of each reader is kept")
    parser.add_argument("--data", default=DEFAULT_DATA, help="directory holding the SWF traces")
    parser.add_argument("--synthetic", type=int, default=0, metavar="JOBS",
                        help="also a synthetic SWF trace of JOBS jobs (replay_accuracy.py's)")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--profile", action="store_true", help="print where each revision spends its time")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        old = extract(args.baseline, os.path.join(work, "baseline"))
        kth = os.path.join(args.data, "KTH-SP2-1996-2.2.swf")
        curie = os.path.join(args.data, "CEA-Curie-2011-sample.swf")
        inputs = [("KTH-SP2 (SWF)", kth), ("CEA-Curie sample (SWF)", curie),
                  ("HPC2N (PBS, 58 .gz files)", os.path.join(ROOT, "traces", "hpc2n-2002-accounting")),
                  ("KTH-SP2 (PBS, daily files)", build_accounting(kth, work))]
        if args.synthetic:
            from replay_accuracy import synthetic_swf  # same directory
            synthetic_swf(os.path.join(work, "synthetic.swf"), args.synthetic)
            inputs.insert(2, ("synthetic {:,} jobs (SWF)".format(args.synthetic), os.path.join(work, "synthetic.swf")))
        swf_readers = [("baseline " + args.baseline, old, "auto"), ("this checkout", ROOT, "auto")]
        pbs_readers = swf_readers + [("... 1 process", ROOT, "0")]
        rows = []
        for name, path in inputs:
            rows += measure(name, path, swf_readers if path.endswith(".swf") else pbs_readers, args.repeat)
        print_rows(rows)
        if args.json:
            with open(args.json, "w") as out:
                json.dump(rows, out, indent=1)
        if args.profile:
            (old_label, _, _), (new_label, _, _) = swf_readers
            accounting = inputs[-1][1]
            profile([(old_label, old, kth, "auto"), (new_label, ROOT, kth, "auto"),
                     (old_label, old, accounting, "auto"), (new_label + ", 1 process", ROOT, accounting, "0")], 14)


if __name__ == "__main__":
    main()
