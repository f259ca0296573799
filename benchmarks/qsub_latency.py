"""What the hooks cost a user's qsub on a real PBS server: no hooks, empty hooks, our hooks, in one run.

    python benchmarks/qsub_latency.py [--rounds 6] [--per-round 50]

Needs root on a PBS server host (or ``$SWT_PBS_RUN`` naming the command that
runs PBS commands, as in the test suite) and PostgreSQL reachable over its
Unix socket. Three configurations, measured in interleaved rounds so that
drift hits all three alike:

* ``none``: no hooks on queuejob, runjob, modifyjob or jobobit;
* ``empty``: two hooks on the same events whose file only accepts -- PBS's own
  cost of running a hook;
* ``ours``: the package installed with ``pip install --target`` and the hooks
  from ``hooks qmgr``, predicting from a user with 15 jobs of history.

Each qsub submits a held job (``-h``) as the job user and is timed from
process start to exit; the jobs are deleted after each round. Prints median
and p99 per configuration and our share: ours minus empty, and ours minus none.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

JOB_USER = "pbsuser"
HOOKS = ("softwalltime", "softwalltime_jobobit")
SYSTEM_PYTHON = "/usr/bin/python3"

TIMER = r"""
import json, subprocess, sys, time
durations, ids = [], []
for _ in range(int(sys.argv[1])):
    started = time.perf_counter()
    done = subprocess.run(["qsub", "-h", "-o", "/dev/null", "-e", "/dev/null", "-l", "walltime=02:00:00", "--",
                           "/bin/true"], stdout=subprocess.PIPE, universal_newlines=True, check=True)
    durations.append((time.perf_counter() - started) * 1000)
    ids.append(done.stdout.strip())
print(json.dumps({"ms": durations, "ids": ids}))
"""


def pbs_prefix():
    run = os.environ.get("SWT_PBS_RUN")
    return [run] if run else []


def pbs(*command, check=True):
    return subprocess.run(pbs_prefix() + list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=check, timeout=600)


def qmgr(command, check=True):
    return pbs("qmgr", "-c", command, check=check)


def remove_hooks():
    for hook in HOOKS:
        qmgr("delete hook " + hook, check=False)


def install_empty(directory):
    path = os.path.join(directory, "empty.py")
    with open(path, "w") as hook_file:
        hook_file.write("import pbs\npbs.event().accept()\n")
    for hook, events in zip(HOOKS, ("queuejob,runjob,modifyjob", "jobobit")):
        qmgr("create hook " + hook)
        qmgr("set hook {} event = '{}'".format(hook, events))
        qmgr("import hook {} application/x-python default {}".format(hook, path))


def install_ours(lines):
    for line in lines:
        if line.startswith("qmgr -c "):
            qmgr(line[len('qmgr -c "'):-1])


def prepare(directory):
    """The package in a --target directory, a database with history, a config; the qmgr lines for our hooks."""
    target = os.path.join(directory, "python")
    subprocess.run([SYSTEM_PYTHON, "-m", "pip", "install", "-q", "--target", target, REPO], check=True,
                   stdout=subprocess.DEVNULL)
    database = "swt_bench_qsub_{}".format(uuid.uuid4().hex[:8])
    from predictor.db.schema import init_schema
    from tests.pgadmin import admin_execute, dsn_for
    admin_execute("CREATE DATABASE " + database)
    init_schema(dsn_for(database))
    import psycopg2
    conn = psycopg2.connect(dsn_for(database))
    with conn, conn.cursor() as cursor:
        for index in range(15):
            cursor.execute("INSERT INTO completed_jobs (job_id, user_name, runtime_s, walltime_s, end_time) "
                           "VALUES (%s, %s, %s, 3600, %s)", ("h{}.bench".format(index), JOB_USER, 600 + index, index))
    conn.close()
    dsn = "host=/var/run/postgresql user=postgres dbname=" + database
    config = os.path.join(directory, "hooks.json")
    with open(config, "w") as config_file:
        json.dump({"reader_dsn": dsn, "writer_dsn": dsn, "package_path": target}, config_file)
    from predictor.admin.qmgr import install_commands
    hook_path = os.path.join(target, "predictor", "hooks", "softwalltime.py")
    return database, install_commands(config, hook_path=hook_path)


def time_qsubs(count):
    done = pbs("runuser", "-u", JOB_USER, "--", SYSTEM_PYTHON, "-c", "import os; os.chdir('/tmp'); " +
               "exec(compile({!r}, 'timer', 'exec'))".format(TIMER), str(count))
    result = json.loads(done.stdout)
    pbs("qdel", *result["ids"])
    return result["ms"]


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--per-round", type=int, default=50)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="swt_bench_qsub_")
    database, our_lines = prepare(directory)
    installers = {"none": lambda: None, "empty": lambda: install_empty(directory),
                  "ours": lambda: install_ours(our_lines)}
    samples = {name: [] for name in installers}
    try:
        remove_hooks()
        for _ in range(args.rounds):
            for name, install in installers.items():
                remove_hooks()
                install()
                time_qsubs(5)  # warm: compile the hook, import the package, connect
                samples[name].extend(time_qsubs(args.per_round))
    finally:
        remove_hooks()
        from tests.pgadmin import admin_execute
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(database))
    report(samples)


def report(samples):
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print("{:<7} {:>6} {:>11} {:>9}".format("hooks", "qsubs", "median ms", "p99 ms"))
    for name, values in samples.items():
        print("{:<7} {:>6} {:>11.1f} {:>9.1f}".format(name, len(values), medians[name], percentile(values, 0.99)))
    print("ours - empty: {:+.1f} ms median per qsub (our own work)".format(medians["ours"] - medians["empty"]))
    print("ours - none:  {:+.1f} ms median per qsub ({:.2f}x)".format(medians["ours"] - medians["none"],
                                                                     medians["ours"] / medians["none"]))


if __name__ == "__main__":
    main()
