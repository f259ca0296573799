"""Benchmark: a big site's years of jobs through ``python -m replay`` and ``simulate``, time and memory. Not a test.

A synthetic site is made from KTH-SP2's distributions: ``--partitions`` (32)
machines like KTH-SP2's (100 cores each, 3,200 cores in all), each with
KTH-SP2's jobs resampled (a real job's user, size, requested and used
time, wait, drawn at random with a seeded generator) arriving with KTH-SP2's
gaps between submissions, so that the site runs about a million jobs a
year: 1 M jobs are about a year of it, 10 M about ten. A user of the trace
is a new user in each partition and each 11-month span of the trace (as
many jobs a user as in KTH-SP2). The same jobs are written as an SWF file
and as a directory of gzip'ed daily PBS accounting files (Q, S and E
records, as ``python -m replay convert`` writes them), in a temporary
directory removed at the end: nothing is committed.

For each size (``--sizes``, default 1M, 3M and 10M, in one run), each input
and each command:

* ``python -m replay INPUT --json FILE`` (the accuracy replay, its default predictors);
* ``python -m replay simulate INPUT --predictors user,v3 --json FILE`` (the default workers);
* with ``--sweep``, ``python -m replay sweep SWF --predictors user,v3 --backfill-depth 1,3 --jobs 2``
  (four cells, two worker processes), on the SWF file only;

with ``--baseline REV``, each command runs first with revision REV's
``predictor`` and ``replay`` packages (extracted with ``git archive``), then
with this checkout's, on the same inputs, so the two are compared in one run
(the last column: the baseline's PSS over this checkout's);

it prints the wall and CPU seconds (the command's and its workers'), jobs per
second of wall time and of CPU time (the latter less moved by a busy machine), the peak
RSS of the largest process and the peak PSS sum over the command and its
workers (sampled every 0.1 s from /proc: the memory the command holds), in MB
and in bytes per job. A command whose PSS sum goes over ``--max-gb`` is
stopped (its row says so), so that a run never takes a shared machine's memory.

    nice -n 19 python benchmarks/scale.py [--sizes 1000000,3000000,10000000] [--inputs swf,pbs]
        [--commands replay,simulate] [--sweep] [--max-gb 8] [--kth PATH] [--json FILE] [--keep DIR]
        [--baseline REV]
"""

import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT]

from replay_simulate import extract  # noqa: E402
from simulate_end_to_end import tree_memory_mb  # noqa: E402

from replay.traces.pbslog import record_line  # noqa: E402
from replay.traces.trace import Job  # noqa: E402

DEFAULT_KTH = os.path.join(os.path.dirname(ROOT), "shared", "data", "KTH-SP2-1996-2.2.swf")
SEED = 20261126
EPOCH = 820454400
"""1996-01-01 00:00 UTC: the synthetic site's SWF time 0 (and its UnixStartTime)."""
CHUNK = 200000
"""Jobs (or records) formatted at a time, so that writing 10 M jobs holds little."""


def kth_rows(path):
    """KTH-SP2's data lines as an int64 array (18 columns), in file order."""
    rows = np.loadtxt(path, comments=";", dtype=np.float64, ndmin=2)
    return rows.astype(np.int64)


def synthetic_jobs(rows, jobs, partitions, seed=SEED):
    """The columns of ``jobs`` synthetic jobs (dict of int64 arrays), sorted by submission."""
    rng = np.random.default_rng(seed)
    picked = rng.integers(0, len(rows), size=jobs)
    gaps = np.diff(rows[:, 1])
    gaps = gaps[gaps >= 0]
    submit = np.cumsum(rng.choice(gaps, size=jobs) // partitions)
    span = int(rows[:, 1].max() - rows[:, 1].min()) + 1
    partition = rng.integers(0, partitions, size=jobs)
    users = int(rows[:, 11].max()) + 1
    user = rows[picked, 11] + users * (partition + partitions * (submit // span))
    columns = {"submit": submit, "wait": np.maximum(rows[picked, 2], 0), "runtime": np.maximum(rows[picked, 3], 0),
               "procs": np.maximum(rows[picked, 4], 1), "walltime": rows[picked, 8], "status": rows[picked, 10],
               "user": user + 1, "group": rows[picked, 12]}
    return columns


def write_swf(path, columns, max_procs):
    """The jobs as an SWF file (18 fields, -1 where KTH-SP2 has none)."""
    jobs = len(columns["submit"])
    with open(path, "w") as out:
        out.write("; Synthetic site from KTH-SP2's distributions (benchmarks/scale.py, seed {})\n"
                  "; UnixStartTime: {}\n; MaxProcs: {}\n".format(SEED, EPOCH, max_procs))
        for first in range(0, jobs, CHUNK):
            part = slice(first, first + CHUNK)
            table = np.column_stack((
                np.arange(first + 1, first + 1 + len(columns["submit"][part])), columns["submit"][part],
                columns["wait"][part], columns["runtime"][part], columns["procs"][part],
                columns["procs"][part], columns["walltime"][part], columns["status"][part],
                columns["user"][part], columns["group"][part]))
            out.writelines("{} {} {} {} {} -1 -1 {} {} -1 {} {} {} -1 -1 -1 -1 -1\n".format(*row)
                           for row in table.tolist())


def _record_order(columns):
    """Every Q, S and E record as ``(kind 0-2, job index)``, in time order (Q < S < E within a second)."""
    submit = columns["submit"]
    start = submit + columns["wait"]
    end = start + columns["runtime"]
    keys = np.concatenate((submit * 4, start * 4 + 1, end * 4 + 3))
    order = np.argsort(keys, kind="stable")
    jobs = len(submit)
    return order // jobs, order % jobs, start, end


def _hms(seconds):
    return "{:02d}:{:02d}:{:02d}".format(seconds // 3600, seconds // 60 % 60, seconds % 60)


def _job_text(number, columns, start, end, index):
    """The fields every record of job ``index`` shares, and those of its S and E records after them."""
    user, group = columns["user"][index], columns["group"][index]
    submit, ncpus, walltime = columns["submit"][index] + EPOCH, columns["procs"][index], columns["walltime"][index]
    head = ("{}.pbsserver;user=u{} group=g{} project=_pbs_project_default jobname=STDIN queue=workq ctime={} "
            "qtime={} etime={}").format(number, user, group, submit, submit, submit)
    request = ("Resource_List.ncpus={} Resource_List.nodect=1 Resource_List.place=pack "
               "Resource_List.select=1:ncpus={}").format(ncpus, ncpus)
    if walltime > 0:
        request += " Resource_List.walltime=" + _hms(walltime)
    started = " start={} ".format(start[index] + EPOCH)
    ended = " end={} Exit_status=0 resources_used.ncpus={} resources_used.walltime={} run_count=1".format(
        end[index] + EPOCH, ncpus, _hms(columns["runtime"][index]))
    return (head + " " + request, head + started + request + " resource_assigned.ncpus={}".format(ncpus),
            head + started + request + ended)


def write_accounting(folder, columns):
    """The jobs as gzip'ed daily PBS accounting files (``YYYYMMDD.gz``) in ``folder``, each line as
    ``python -m replay convert`` writes it (``check_lines`` compares)."""
    kinds, indexes, start, end = _record_order(columns)
    lists = {name: column.tolist() for name, column in columns.items()}
    start, end = start.tolist(), end.tolist()
    letters = (";Q;", ";S;", ";E;")
    stream, day, pending = None, None, {}  # pending: the texts of the jobs queued and not yet ended
    try:
        for first in range(0, len(kinds), CHUNK):
            lines = []
            for kind, index in zip(kinds[first:first + CHUNK].tolist(), indexes[first:first + CHUNK].tolist()):
                when = (lists["submit"][index], start[index], end[index])[kind] + EPOCH
                midnight = when - when % 86400
                if midnight != day:
                    if lines:
                        stream.writelines(lines)
                        lines = []
                    if stream is not None:
                        stream.close()
                    today = time.strftime("%Y%m%d", time.gmtime(when))
                    stream = gzip.open(os.path.join(folder, today + ".gz"), "wt", compresslevel=1)
                    day = midnight
                    prefix = time.strftime("%m/%d/%Y ", time.gmtime(when))
                stamp = prefix + _hms(when - midnight)
                texts = pending.pop(index) if kind == 2 else pending.get(index)
                if texts is None:
                    texts = pending[index] = _job_text(index + 1, lists, start, end, index)
                lines.append(stamp + letters[kind] + texts[kind] + "\n")
            stream.writelines(lines)
    finally:
        if stream is not None:
            stream.close()


def check_lines(columns, jobs=50):
    """Stop unless the first ``jobs`` jobs' lines are those ``python -m replay convert`` writes."""
    kinds, indexes, start, end = _record_order({name: column[:jobs] for name, column in columns.items()})
    lists = {name: column.tolist() for name, column in columns.items()}
    for kind, index in zip(kinds.tolist(), indexes.tolist()):
        job = Job("{}.pbsserver".format(index + 1), "u{}".format(lists["user"][index]), lists["submit"][index],
                  lists["runtime"][index], lists["walltime"][index] if lists["walltime"][index] > 0 else None,
                  lists["procs"][index], int(start[index]), int(end[index]), exit_status=0,
                  group="g{}".format(lists["group"][index]))
        when = (job.submit_time, job.start_time, job.end_time)[kind] + EPOCH
        ours = time.strftime("%m/%d/%Y %H:%M:%S", time.gmtime(when)) + (";Q;", ";S;", ";E;")[kind] + _job_text(
            index + 1, lists, start.tolist(), end.tolist(), index)[kind]
        if ours != record_line(job, "QSE"[kind], EPOCH):
            raise SystemExit("synthetic PBS line differs from convert's:\n{}\n{}".format(
                ours, record_line(job, "QSE"[kind], EPOCH)))


class Measure:
    """One command's wall and CPU seconds (itself and its children), peak RSS of its largest process and peak
    PSS sum over it and its descendants (MB); ``stopped``: it went over ``max_mb`` of PSS and was killed."""

    def __init__(self, argv, max_mb, cwd=ROOT):
        started = time.perf_counter()
        self.pss_peak_mb = self.peak_mb = 0.0
        self.stopped = False
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors,
                                       start_new_session=True)
            while True:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                _, pss, largest = tree_memory_mb(process.pid)
                self.pss_peak_mb, self.peak_mb = max(self.pss_peak_mb, pss), max(self.peak_mb, largest)
                if self.pss_peak_mb > max_mb and not self.stopped:
                    self.stopped = True
                    os.killpg(process.pid, signal.SIGKILL)
                time.sleep(0.1)
            self.wall_s = time.perf_counter() - started
            self.cpu_s = usage.ru_utime + usage.ru_stime
            if os.waitstatus_to_exitcode(status) and not self.stopped:
                errors.seek(0)
                raise SystemExit("{} failed:\n{}".format(" ".join(argv), errors.read().decode()[-2000:]))


def commands(swf, accounting, folder, args):
    """``(label, input label, argv after python -m replay)`` of every measured command ``args`` asks for."""
    out = os.path.join(folder, "out.json")
    listed = []
    for label, path in (("SWF", swf), ("PBS .gz", accounting)):
        if label.split()[0].lower() not in args.inputs:
            continue
        if "replay" in args.commands:
            listed.append(("python -m replay", label, [path, "--json", out]))
        if "simulate" in args.commands:
            listed.append(("simulate --predictors user,v3", label, ["simulate", path, "--predictors", "user,v3",
                                                                     "--json", out]))
    if args.sweep:
        listed.append(("sweep, 4 cells, --jobs 2", "SWF", ["sweep", swf, "--predictors", "user,v3",
                                                           "--backfill-depth", "1,3", "--jobs", "2", "--json", out]))
    return listed


def make_inputs(rows, jobs, args, swf, accounting):
    """The SWF file and (if ``args.inputs`` has pbs) the accounting directory of ``jobs`` jobs; their years."""
    columns = synthetic_jobs(rows, jobs, args.partitions)
    os.makedirs(accounting, exist_ok=True)
    write_swf(swf, columns, 100 * args.partitions)
    if "pbs" in args.inputs:
        check_lines(columns)
        write_accounting(accounting, columns)
    return (columns["submit"][-1] - columns["submit"][0]) / (365.25 * 86400)


def measure_size(rows, jobs, args, folder):
    """Make the inputs of ``jobs`` jobs, run every command on them; one result dict per command."""
    started = time.perf_counter()
    swf = os.path.join(folder, "site.swf")
    accounting = os.path.join(folder, "accounting")
    made = os.path.join(folder, "made-" + "-".join(sorted(args.inputs)))
    if os.path.exists(made):
        years, how = float(open(made).read()), "kept from an earlier run"
    else:
        years = make_inputs(rows, jobs, args, swf, accounting)
        how = "made in {:.0f} s".format(time.perf_counter() - started)
        with open(made, "w") as out:
            out.write(repr(float(years)))
    print("\n{:,} jobs, {:.1f} years, {} (SWF {:,.0f} MB, PBS {} files {:,.0f} MB gzip'ed)".format(
        jobs, years, how, os.path.getsize(swf) / 1e6, len(os.listdir(accounting)),
        sum(os.path.getsize(os.path.join(accounting, name)) for name in os.listdir(accounting)) / 1e6), flush=True)
    print("{:<30} {:<8} {:<10} {:>8} {:>8} {:>9} {:>11} {:>11} {:>11} {:>10} {:>6}".format(
        "command", "input", "tree", "wall s", "CPU s", "jobs/s", "jobs/CPU s", "largest MB", "all PSS MB", "PSS B/job",
        "ratio"))
    results = []
    for label, source, argv in commands(swf, accounting, folder, args):
        baseline_pss = None
        for tree, cwd in args.trees:
            measure = Measure([sys.executable, "-m", "replay"] + argv, args.max_gb * 1024, cwd)
            note = "  (stopped: over {} GB)".format(args.max_gb) if measure.stopped else ""
            ratio = "{:.2f}".format(baseline_pss / measure.pss_peak_mb) if baseline_pss else ""
            baseline_pss = baseline_pss or measure.pss_peak_mb
            print("{:<30} {:<8} {:<10} {:>8.1f} {:>8.1f} {:>9,.0f} {:>11,.0f} {:>11,.0f} {:>11,.0f} {:>10,.0f} {:>6}{}"
                  .format(label, source, tree, measure.wall_s, measure.cpu_s, jobs / measure.wall_s,
                          jobs / measure.cpu_s, measure.peak_mb, measure.pss_peak_mb,
                          measure.pss_peak_mb * 2 ** 20 / jobs, ratio, note), flush=True)
            results.append({"jobs": jobs, "command": label, "input": source, "tree": tree, "wall_s": measure.wall_s,
                            "cpu_s": measure.cpu_s, "peak_mb": measure.peak_mb, "pss_peak_mb": measure.pss_peak_mb,
                            "stopped": measure.stopped})
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,3000000,10000000",
                        type=lambda text: [int(size) for size in text.split(",")])
    parser.add_argument("--partitions", type=int, default=32, help="KTH-SP2-like machines in the site (default 32)")
    parser.add_argument("--inputs", default="swf,pbs", type=lambda text: text.split(","),
                        help="which inputs to make and read: swf, pbs (default both)")
    parser.add_argument("--commands", default="replay,simulate", type=lambda text: text.split(","),
                        help="replay, simulate (default both)")
    parser.add_argument("--sweep", action="store_true", help="also sweep 4 cells with 2 workers")
    parser.add_argument("--max-gb", type=float, default=8.0, help="stop a command whose PSS sum goes over this")
    parser.add_argument("--kth", default=DEFAULT_KTH)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--keep", metavar="DIR",
                        help="make the inputs in DIR and keep them; inputs an earlier run kept there are read again")
    parser.add_argument("--baseline", metavar="REV", help="also run each command with this git revision's packages")
    args = parser.parse_args()
    args.trees = [("this", ROOT)]
    work = tempfile.mkdtemp(prefix="scale-baseline-")
    try:
        if args.baseline:
            args.trees.insert(0, (args.baseline[:10], extract(args.baseline, os.path.join(work, "tree"))))
        run(args)
    finally:
        shutil.rmtree(work)


def run(args):
    """Every size of ``args``: inputs made, commands measured, the results written to ``--json``."""
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    rows = kth_rows(args.kth)
    results = []
    for jobs in args.sizes:
        folder = args.keep and os.path.join(args.keep, str(jobs))
        if folder:
            os.makedirs(folder, exist_ok=True)
        else:
            folder = tempfile.mkdtemp(prefix="scale-")
        try:
            results += measure_size(rows, jobs, args, folder)
        finally:
            if not args.keep:
                shutil.rmtree(folder)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
