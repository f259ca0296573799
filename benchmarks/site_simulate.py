"""Benchmark: CPU seconds of ``replay simulate --site`` (the PBS scheduler model) against the built-in
scheduler, on the same trace in the same run. Not a test.

Each command runs as its own process, ``python -m replay simulate TRACE [--site DIR] --cores N
--predictors P --jobs-csv FILE``, and is timed by the CPU time it used (user + system, from
``getrusage``), so that load from other programs weighs less than on a wall clock. Runs: the built-in
engine, then each site folder (default: ``traces/sites/strict`` and ``traces/sites/fairshare``).

With ``--baseline REV`` the site runs are made again with the ``replay`` and ``predictor`` packages of
that commit (``git archive``): one more column gives the baseline's seconds and the speed-up, and the
last says whether the two trees wrote the same ``--jobs-csv`` bytes (the same decisions).

    python benchmarks/site_simulate.py [--trace traces/hpc2n-2002-accounting] [--cores 120]
        [--predictors v3] [--sites traces/sites/strict,traces/sites/fairshare] [--baseline REV] [--json FILE]
"""

import argparse
import filecmp
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("replay", "predictor")


def extract(rev, folder):
    """The packages of commit ``rev`` unpacked under ``folder``."""
    os.makedirs(folder)
    archive = os.path.join(folder, "baseline.tar")
    subprocess.run(["git", "-C", ROOT, "archive", "-o", archive, rev] + list(PACKAGES), check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder)
    return folder


def cpu_seconds(tree, arguments, jobs_csv):
    """CPU seconds (user + system) of one ``python -m replay simulate`` run with ``tree``'s packages."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    environment = dict(os.environ, PYTHONPATH=tree)
    subprocess.run([sys.executable, "-m", "replay", "simulate"] + arguments + ["--jobs-csv", jobs_csv],
                   cwd=tree, env=environment, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def runs(options, work):
    """One row per run: (label, this tree's seconds, baseline seconds or None, same decisions or None)."""
    common = ["--cores", str(options.cores), "--predictors", options.predictors]
    trace = os.path.abspath(options.trace)
    baseline = extract(options.baseline, os.path.join(work, "baseline")) if options.baseline else None
    rows = [("built-in engine", cpu_seconds(ROOT, [trace] + common, os.path.join(work, "builtin.csv")), None, None)]
    for site in options.sites.split(","):
        arguments = [trace, "--site", os.path.abspath(site)] + common
        name = os.path.basename(os.path.normpath(site))
        mine = os.path.join(work, name + ".csv")
        seconds = cpu_seconds(ROOT, arguments, mine)
        if baseline is None:
            rows.append(("--site " + name, seconds, None, None))
            continue
        theirs = os.path.join(work, name + ".baseline.csv")
        base_seconds = cpu_seconds(baseline, arguments, theirs)
        rows.append(("--site " + name, seconds, base_seconds, filecmp.cmp(mine, theirs, shallow=False)))
    return rows


def table(rows):
    """The rows as text: seconds, ratio to the built-in engine, and the baseline's figures when given."""
    builtin = rows[0][1]
    lines = ["{:<22} {:>9} {:>12} {:>12} {:>9} {:>15}".format(
        "run", "CPU s", "x built-in", "baseline s", "speed-up", "same decisions")]
    for label, seconds, base, same in rows:
        lines.append("{:<22} {:>9.2f} {:>12.1f} {:>12} {:>9} {:>15}".format(
            label, seconds, seconds / builtin if builtin else float("nan"),
            "" if base is None else "{:.2f}".format(base), "" if base is None else "{:.1f}x".format(base / seconds),
            "" if same is None else ("yes" if same else "NO")))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", default=os.path.join(ROOT, "traces", "hpc2n-2002-accounting"))
    parser.add_argument("--cores", type=int, default=120)
    parser.add_argument("--predictors", default="v3")
    parser.add_argument("--sites", default=",".join(os.path.join(ROOT, "traces", "sites", name)
                                                    for name in ("strict", "fairshare")))
    parser.add_argument("--baseline", help="a commit to compare with (its packages, from git)")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        rows = runs(options, work)
    print(table(rows))
    if options.json:
        with open(options.json, "w") as out:
            json.dump([{"run": label, "cpu_s": seconds, "baseline_cpu_s": base, "same_decisions": same}
                       for label, seconds, base, same in rows], out, indent=1)


if __name__ == "__main__":
    main()
