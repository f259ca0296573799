"""Benchmark: ``python -m replay simulate`` as an admin runs it, against a baseline commit and AccaSim. Not a test.

Three measures, each printed as a table (baseline, this tree, ratio):

* **KTH-SP2 end to end**: ``python -m replay simulate KTH-SP2 --predictors v3
  --json FILE`` run by this tree and by the baseline commit (its ``replay``
  and ``predictor`` packages taken from git), in turn, best wall time of
  ``--rounds``. The time this tree's reader takes to read the trace is
  measured apart, so the table also says what the command would take with a
  reader 5 times faster. Both trees run from bytecode compiled beforehand,
  as ``pip install`` leaves a package (AccaSim runs from its own).
* **AccaSim** (with ``--accasim-python PY``, a Python that has ``accasim``
  installed, e.g. a venv made for it): AccaSim's EASY backfilling with
  first-fit allocation on the same trace, 100 single-core nodes, best wall
  time of ``--rounds``, interleaved with ours. AccaSim 1.1.3 imports
  ``collections.Mapping``, gone since Python 3.10; the runner puts the
  ``collections.abc`` names back first.
* **A million jobs** (``--million``): a trace made by repeating KTH-SP2 back
  to back (each copy shifted past the previous one's last submission by a
  day, job numbers renumbered) to ``--jobs`` jobs; ``python -m replay
  simulate`` with the default predictors, with ``--workers 1`` and with the
  default workers, and the accuracy replay ``python -m replay``: wall and CPU
  time, the peak RSS of the largest process, and the peaks of the RSS sum and
  of the PSS sum over the command and its workers (sampled every 0.1 s from
  /proc; the PSS sum counts pages a worker still shares with the command
  once, the RSS sum once per process).

    python benchmarks/simulate_end_to_end.py [--baseline REV] [--rounds 3] [--accasim-python PY]
        [--million] [--jobs 1000000] [--kth PATH]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from replay_simulate import DEFAULT_BASELINE, DEFAULT_DATA, PACKAGES, ROOT, extract

KTH = os.path.join(DEFAULT_DATA, "KTH-SP2-1996-2.2.swf")
ACCASIM_RUNNER = '''
import collections, collections.abc, sys
for name in ("Mapping", "MutableMapping", "Sequence", "Iterable", "Callable"):
    setattr(collections, name, getattr(collections.abc, name))
from accasim.base.allocator_class import FirstFit
from accasim.base.scheduler_class import EASYBackfilling
from accasim.base.simulator_class import Simulator
Simulator(sys.argv[1], sys.argv[2], EASYBackfilling(FirstFit()), RESULTS_FOLDER_PATH=sys.argv[3],
          statistics_output=False, show_statistics=False).start_simulation(system_status=False, debug=False)
'''


class Measure:
    """One command's wall and CPU seconds (itself and its children), peak RSS of its largest process, peak sum
    of RSS over it and its descendants, and peak sum of their PSS, in MB.

    A worker forked from the command shares the pages it has not written to with it: the RSS sum counts those
    twice, the PSS (proportional set size: each shared page split among the processes sharing it) sum once,
    so the PSS sum is the memory the command holds. Memory is sampled every 0.1 s by a thread while this one
    waits for the command, so the wall time is the command's own, not rounded up to the next sample.
    """

    def __init__(self, argv, cwd, env=None):
        self.tree_peak_mb = self.tree_pss_peak_mb = self.peak_mb = 0.0
        with tempfile.TemporaryFile() as errors:
            started = time.perf_counter()
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
            done = threading.Event()
            sampler = threading.Thread(target=self._sample, args=(process.pid, done))
            sampler.start()
            try:
                _, status, usage = os.wait4(process.pid, 0)  # wait4: the child's own resource usage
                self.wall_s = time.perf_counter() - started
            finally:
                done.set()
                sampler.join()
            process.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_s = usage.ru_utime + usage.ru_stime
            if process.returncode:
                errors.seek(0)
                raise SystemExit("{} failed:\n{}".format(" ".join(argv), errors.read().decode()[-2000:]))

    def _sample(self, pid, done):
        while not done.is_set():
            rss, pss, largest = tree_memory_mb(pid)
            self.tree_peak_mb, self.tree_pss_peak_mb = max(self.tree_peak_mb, rss), max(self.tree_pss_peak_mb, pss)
            self.peak_mb = max(self.peak_mb, largest)
            done.wait(0.1)


def compile_packages(trees):
    """Bytecode for every tree's packages, next to their sources, as ``pip install`` leaves an installed package.
    Without it, a machine that sets PYTHONDONTWRITEBYTECODE compiles every module of ours again on each run
    (0.1-0.2 s on KTH-SP2), while AccaSim and numpy, installed by pip, run from their compiled files. (Not
    PYTHONPYCACHEPREFIX: it would send numpy's imports to the empty prefix too.)"""
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q"] + list(PACKAGES), cwd=tree, check=True,
                       stdout=subprocess.DEVNULL)


def tree_memory_mb(pid):
    """``(RSS, PSS, largest)`` in MB: RSS and PSS summed over ``pid`` and its descendants, and the largest of
    their peak RSS so far (``VmHWM``). Not ``wait4``'s ``ru_maxrss``: a child started by this process reports
    at least this process's own RSS when it was started (Linux keeps the peak across ``exec``), so a
    benchmark that holds a big trace in memory would see every command as big."""
    rss = pss = largest = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open("/proc/{0}/task/{0}/children".format(current)) as children:
                pending += [int(child) for child in children.read().split()]
            with open("/proc/{}/smaps_rollup".format(current)) as rollup:
                sizes = dict(line.split()[:2] for line in rollup if line.split()[0] in ("Rss:", "Pss:"))
            with open("/proc/{}/status".format(current)) as status:
                peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
            rss, pss, largest = rss + int(sizes["Rss:"]), pss + int(sizes["Pss:"]), max(largest, peak)
        except (OSError, ValueError, KeyError, StopIteration):
            continue  # the process ended meanwhile
    return rss / 1024, pss / 1024, largest / 1024


def best(measures):
    return min(measures, key=lambda measure: measure.wall_s)


def replay(tree, arguments, rounds):
    return best([Measure([sys.executable, "-m", "replay"] + arguments, tree) for _ in range(rounds)])


def read_seconds(path):
    """This tree's reader on ``path``, as ``simulate`` reads it (into columns): best of three."""
    sys.path.insert(0, ROOT)
    from replay.traces.readers import load_trace
    seconds = []
    for _ in range(3):
        started = time.perf_counter()
        load_trace([path], as_columns=True)
        seconds.append(time.perf_counter() - started)
    return min(seconds)


def end_to_end(trees, kth, rounds, accasim_python, folder):
    arguments = ["simulate", kth, "--predictors", "v3", "--json", os.path.join(folder, "out.json")]
    runs = {label: [] for label in trees}
    accasim = []
    if accasim_python:
        config = os.path.join(folder, "kth.config")
        with open(config, "w") as out:
            json.dump({"groups": {"g0": {"core": 1}}, "resources": {"g0": 100},
                       "equivalence": {"processor": {"core": 1}}}, out)
    for _ in range(rounds):
        for label, tree in trees.items():
            runs[label].append(replay(tree, arguments, 1))
        if accasim_python:
            accasim.append(Measure([accasim_python, "-c", ACCASIM_RUNNER, kth, config,
                                    os.path.join(folder, "accasim")], folder))
    reading = read_seconds(kth)
    old, new = best(runs["baseline"]), best(runs["this"])
    print("\nKTH-SP2 end to end, python -m replay simulate --predictors v3 (best wall of {}):".format(rounds))
    print("{:<44} {:>9} {:>9}".format("", "wall s", "CPU s"))
    print("{:<44} {:>9.2f} {:>9.2f}".format("baseline", old.wall_s, old.cpu_s))
    print("{:<44} {:>9.2f} {:>9.2f}   {:.1f}x faster".format("this tree", new.wall_s, new.cpu_s,
                                                            old.wall_s / new.wall_s))
    print("{:<44} {:>9.2f}".format("  of which reading the trace", reading))
    faster_reader = new.wall_s - reading + reading / 5
    print("{:<44} {:>9.2f}".format("this tree with a reader 5x faster", faster_reader))
    results = {"baseline_wall_s": old.wall_s, "wall_s": new.wall_s, "read_s": reading,
               "wall_with_5x_reader_s": faster_reader}
    if accasim:
        theirs = best(accasim)
        print("{:<44} {:>9.2f} {:>9.2f}".format("AccaSim 1.1.3, EASY + first fit", theirs.wall_s, theirs.cpu_s))
        print("AccaSim / baseline {:.1f}x;  AccaSim / this tree {:.1f}x;  with a 5x faster reader {:.1f}x".format(
            theirs.wall_s / old.wall_s, theirs.wall_s / new.wall_s, theirs.wall_s / faster_reader))
        results["accasim_wall_s"] = theirs.wall_s
    return results


def repeated_kth(kth, jobs, path):
    """Write KTH-SP2 repeated back to back up to ``jobs`` jobs."""
    with open(kth) as stream:
        lines = stream.read().splitlines()
    rows = [line.split() for line in lines if line.strip() and not line.startswith(";")]
    span = max(int(row[1]) for row in rows) + 86400
    with open(path, "w") as out:
        out.write("; KTH-SP2-1996-2.2 repeated back to back (benchmarks/simulate_end_to_end.py)\n; MaxProcs: 100\n")
        for number in range(jobs):
            copy, row = divmod(number, len(rows))
            fields = list(rows[row])
            fields[0], fields[1] = str(number + 1), str(int(fields[1]) + copy * span)
            out.write(" ".join(fields) + "\n")


def million(trees, kth, jobs, folder):
    path = os.path.join(folder, "million.swf")
    repeated_kth(kth, jobs, path)
    # The baseline has no --workers: its simulate is one process, compared with --workers 1.
    commands = (("simulate, 5 predictors, --workers 1", ["simulate", path], ["--workers", "1"], True),
                ("simulate, 5 predictors, default workers", ["simulate", path], [], False),
                ("accuracy replay (python -m replay)", [path], [], True))
    print("\n{:,} jobs (KTH-SP2 repeated):".format(jobs))
    print("{:<42} {:<9} {:>8} {:>8} {:>11} {:>13} {:>13}".format("command", "tree", "wall s", "CPU s", "largest MB",
                                                                 "all RSS MB", "all PSS MB"))
    results = []
    for label, arguments, ours_only, baseline_too in commands:
        for tree_label, tree in trees.items():
            if tree_label == "baseline" and not baseline_too:
                continue
            extra = ours_only if tree_label == "this" else []
            measure = replay(tree, arguments + extra + ["--json", os.path.join(folder, "m.json")], 1)
            print("{:<42} {:<9} {:>8.1f} {:>8.1f} {:>11,.0f} {:>13,.0f} {:>13,.0f}".format(
                label, tree_label, measure.wall_s, measure.cpu_s, measure.peak_mb, measure.tree_peak_mb,
                measure.tree_pss_peak_mb), flush=True)
            results.append({"command": label, "tree": tree_label, "wall_s": measure.wall_s, "cpu_s": measure.cpu_s,
                            "peak_mb": measure.peak_mb, "tree_peak_mb": measure.tree_peak_mb,
                            "tree_pss_peak_mb": measure.tree_pss_peak_mb})
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kth", default=KTH)
    parser.add_argument("--accasim-python", metavar="PY", help="a Python with accasim installed")
    parser.add_argument("--million", action="store_true", help="also the 1M-job time and memory runs")
    parser.add_argument("--jobs", type=int, default=1000000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    print("load average at start: {:.2f} {:.2f} {:.2f}; baseline {}".format(*os.getloadavg(), args.baseline))
    with tempfile.TemporaryDirectory() as folder:
        trees = {"baseline": extract(args.baseline, os.path.join(folder, "baseline")), "this": ROOT}
        compile_packages(trees.values())
        results = {"end_to_end": end_to_end(trees, args.kth, args.rounds, args.accasim_python, folder)}
        if args.million:
            results["million"] = million(trees, args.kth, args.jobs, folder)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
