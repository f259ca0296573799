"""Benchmark: ``python -m replay`` against a straightforward one-pass script, end to end. Not a test.

The trace is KTH-SP2 repeated ``--copies`` (10) times back to back (as
``simulate_end_to_end.py`` repeats it). Both commands run as an admin runs
them, taking turns, ``--rounds`` times, best wall time kept; start-up, imports
and reading count. Our packages are compiled to bytecode first, as ``pip install``
leaves them (``simulate_end_to_end.compile_packages``); the script, run as a
file, is compiled by Python at each run as any script is:

* ``python -m replay TRACE --predictors user,v1,v2,v3 --json FILE``;
* ``ONE_PASS`` below, written as anyone would write it first: read the SWF
  line by line, sort the submit, start and end events, keep each user's last
  15 jobs in a deque, predict user, v1, v2 and v3 at submission and at start,
  and print each one's mean accuracy (min/max of prediction and runtime). It
  computes less than the replay (no exact ratios, no medians, no per-user
  tables, no underestimation counts) and checks nothing.

    python benchmarks/replay_one_pass.py [--copies 10] [--rounds 3] [--kth PATH]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from simulate_end_to_end import KTH, compile_packages, repeated_kth

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ONE_PASS = '''
import collections, sys
jobs = []
with open(sys.argv[1]) as trace:
    for line in trace:
        fields = line.split()
        if not fields or line.startswith(";"):
            continue
        submit, wait, runtime, procs = int(fields[1]), int(fields[2]), int(fields[3]), int(fields[4])
        if submit < 0 or wait < 0 or runtime < 0 or procs <= 0:
            continue
        walltime = int(fields[8])
        jobs.append((submit, submit + wait, runtime, walltime if walltime > 0 else None, fields[11]))
events = []
for index, (submit, start, runtime, walltime, user) in enumerate(jobs):
    events += [(submit, 0, index), (start, 1, index), (start + runtime, 2, index)]
events.sort()
last = collections.defaultdict(lambda: collections.deque(maxlen=15))
sums = collections.defaultdict(float)
counts = collections.defaultdict(int)
for _, kind, index in events:
    submit, start, runtime, walltime, user = jobs[index]
    if kind == 2:
        last[user].append((runtime, walltime))
        continue
    if walltime is None:
        continue
    history = last[user]
    predictions = {"user": walltime}
    if history:
        mean = sum(row[0] for row in history) // len(history)
        predictions["v1"] = min(max(mean, 1), walltime)
        predictions["v2"] = min(max(mean + 900, 1), walltime)
        ratios = [row[0] / row[1] for row in history if row[1]]
        predictions["v3"] = min(max(int(max(ratios) * walltime) + 900, 1), walltime) if ratios else walltime
    else:
        predictions.update(v1=walltime, v2=walltime, v3=walltime)
    for name, predicted in predictions.items():
        low, high = min(predicted, runtime), max(predicted, runtime)
        sums[name, kind] += low / high if high else 1.0
        counts[name, kind] += 1
for name, kind in sorted(sums):
    print(name, ("submit", "start")[kind], round(sums[name, kind] / counts[name, kind], 4))
'''


def wall_s(argv):
    """Wall seconds of one run of ``argv`` (from this tree's root, its output thrown away)."""
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kth", default=KTH)
    args = parser.parse_args()
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    compile_packages([ROOT])
    with tempfile.TemporaryDirectory() as folder:
        trace = os.path.join(folder, "kth-x{}.swf".format(args.copies))
        with open(args.kth) as stream:
            rows = sum(1 for line in stream if line.strip() and not line.startswith(";"))
        repeated_kth(args.kth, rows * args.copies, trace)
        script = os.path.join(folder, "one_pass.py")
        with open(script, "w") as out:
            out.write(ONE_PASS)
        ours = [sys.executable, "-m", "replay", trace, "--predictors", "user,v1,v2,v3", "--json",
                os.path.join(folder, "out.json")]
        theirs = [sys.executable, script, trace]
        replay_s, one_pass_s = [], []
        for _ in range(args.rounds):
            replay_s.append(wall_s(ours))
            one_pass_s.append(wall_s(theirs))
    print("KTH-SP2 x{} ({:,} jobs), best wall of {}:".format(args.copies, rows * args.copies, args.rounds))
    print("  python -m replay --predictors user,v1,v2,v3   {:>7.2f} s".format(min(replay_s)))
    print("  one-pass script                                {:>7.2f} s".format(min(one_pass_s)))
    print("  the replay is {:.2f}x as fast (every round: {})".format(
        min(one_pass_s) / min(replay_s), ", ".join("{:.2f}".format(b / a) for a, b in zip(replay_s, one_pass_s))))


if __name__ == "__main__":
    main()
