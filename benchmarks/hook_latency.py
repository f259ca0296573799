"""Benchmark: queuejob hook handling time with 10M completed jobs of 10k users.

Not a test. Creates its own database (and a login role) on the server, loads
``--rows`` completed jobs server-side with generate_series, then times the
real hooks/queuejob.py under the PBS stand-in (the hook code and its query,
as ``HookResult.elapsed_s`` measures them) in three ways, in the same run:

* warm: pbs_server's interpreter is up and the connection is cached -- every
  event after the first.
* cold: the first event of a fresh interpreter (a new process per sample):
  importing the package and psycopg2, reading the config, connecting, querying.
* connection per event: a hook that opens a new connection for every event and
  closes it (the pattern of the existing public implementation), same query,
  same stand-in.

Usage:
    python benchmarks/hook_latency.py [--rows 10000000] [--users 10000]
        [--events 5000] [--cold-runs 30] [--dsn ADMIN_DSN] [--keep DBNAME]

``--keep DBNAME`` reuses (or creates and keeps) that database, to skip the
load on the next run. Goal: warm p99 <= 2 ms.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

import psycopg2
import psycopg2.extensions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import pbs_standin as pbs  # noqa: E402  (the PBS double lives with the tests)
from predictor import pbshook  # noqa: E402
from predictor.schema import init_schema  # noqa: E402

QUEUEJOB = os.path.join(ROOT, "hooks", "queuejob.py")

# Users user0..user<U-1>, each with rows/U jobs; walltimes 1..24 h, runtimes 0..100% of it.
LOAD_ROWS = textwrap.dedent("""
    INSERT INTO completed_jobs (job_id, user_name, group_name, queue, ncpus, walltime_s, runtime_s,
                                submit_time, start_time, end_time, exit_status)
    SELECT g || '.bench', 'user' || (g %% %(users)s), 'users', 'workq', 1 + g %% 64, w,
           w * ((g * 7919) %% 1001) / 1000, 1700000000 + g * 3, 1700000000 + g * 3 + 60,
           1700000000 + g * 3 + 60 + w * ((g * 7919) %% 1001) / 1000, 0
    FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS g,
         LATERAL (SELECT 3600 * (1 + g %% 24) AS w) AS walltimes
""")

# The pattern being compared against: a new connection per event, closed at the end.
CONNECTION_PER_EVENT_HOOK = textwrap.dedent("""
    import pbs
    import psycopg2
    from predictor.hookconfig import read_hook_config
    from predictor.jobs import HistoryRow
    from predictor.queries import RECENT_HISTORY

    e = pbs.event()
    config = read_hook_config(pbs.hook_config_filename)
    walltime = e.job.Resource_List["walltime"]
    conn = psycopg2.connect(config.reader_dsn, connect_timeout=2)
    try:
        with conn.cursor() as cursor:
            cursor.execute(RECENT_HISTORY, {"user": e.requestor, "limit": config.algorithm.window})
            history = [HistoryRow(*row) for row in cursor.fetchall()]
    finally:
        conn.close()
    e.job.Resource_List["soft_walltime"] = pbs.duration(config.algorithm.predict(history, int(walltime)))
    e.accept()
""")

COLD_RUN = textwrap.dedent("""
    import sys
    sys.path[:0] = [{root!r}, {tests!r}]
    import pbs_standin as pbs
    result = pbs.run_hook({hook!r}, pbs.queuejob_event({user!r}, {{"walltime": 7200}}), {config!r})
    assert result.accepted and "soft_walltime" in result.resources and not result.warnings, result
    print(result.elapsed_s)
""")


def dsn_with(dsn, **changes):
    params = psycopg2.extensions.parse_dsn(dsn)
    params.update(changes)
    return psycopg2.extensions.make_dsn(**params)


def admin(dsn, *statements):
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
    finally:
        conn.close()


def database_exists(dsn, name):
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            return cursor.fetchone() is not None
    finally:
        conn.close()


def load(dsn, rows, users):
    """Insert the rows in 1M chunks (one transaction each), then VACUUM ANALYZE for index-only scans."""
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM completed_jobs")
            present = cursor.fetchone()[0]
            cursor.execute("SET synchronous_commit = off")
            cursor.execute("SET maintenance_work_mem = '512MB'")
            started = time.monotonic()
            for first in range(present + 1, rows + 1, 1000000):
                cursor.execute(LOAD_ROWS, {"users": users, "first": first, "last": min(rows, first + 999999)})
                print("  loaded {:,} rows ({:.0f} s)".format(min(rows, first + 999999), time.monotonic() - started),
                      file=sys.stderr)
            cursor.execute("VACUUM ANALYZE completed_jobs")
    finally:
        conn.close()


def percentiles(samples_s):
    ordered = sorted(samples_s)

    def at(fraction):
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000
    return {"n": len(ordered), "p50_ms": round(at(0.50), 3), "p99_ms": round(at(0.99), 3),
            "max_ms": round(ordered[-1] * 1000, 3)}


def time_events(hook_path, config, users, count, rng):
    samples = []
    for _ in range(count):
        user = "user{}".format(rng.randrange(users))
        result = pbs.run_hook(hook_path, pbs.queuejob_event(user, {"walltime": 3600 * rng.randint(1, 48)}), config)
        if not result.accepted or "soft_walltime" not in result.resources or result.warnings:
            raise RuntimeError("the hook did not predict: {}".format(result))
        samples.append(result.elapsed_s)
    return samples


def time_cold(config, users, runs, rng):
    samples = []
    for _ in range(runs):
        code = COLD_RUN.format(root=ROOT, tests=os.path.join(ROOT, "tests"), hook=QUEUEJOB,
                               user="user{}".format(rng.randrange(users)), config=config)
        output = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True,
                                universal_newlines=True).stdout
        samples.append(float(output))
    return samples


def measure(config, per_event_hook, args):
    rng = random.Random(20260410)
    pbshook.reset()
    time_events(QUEUEJOB, config, args.users, 200, rng)            # warm-up: connect, caches
    warm = time_events(QUEUEJOB, config, args.users, args.events, rng)
    per_event = time_events(per_event_hook, config, args.users, args.events, rng)
    cold = time_cold(config, args.users, args.cold_runs, rng)
    pbshook.reset()
    results = {"warm": percentiles(warm), "cold": percentiles(cold), "connection_per_event": percentiles(per_event)}
    results["ratio_connection_per_event_to_warm"] = {
        key: round(results["connection_per_event"][key] / results["warm"][key], 1) for key in ("p50_ms", "p99_ms")}
    return results


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10000000)
    parser.add_argument("--users", type=int, default=10000)
    parser.add_argument("--events", type=int, default=5000, help="timed events per warm / per-event series")
    parser.add_argument("--cold-runs", type=int, default=30, help="fresh interpreters for the cold series")
    parser.add_argument("--dsn", default=os.environ.get("PBS_SOFTWALLTIME_TEST_DSN",
                                                        "host=127.0.0.1 port=5432 user=postgres dbname=postgres"))
    parser.add_argument("--keep", metavar="DBNAME", help="reuse or keep this database instead of a throwaway one")
    return parser.parse_args()


def main():
    args = parse_args()
    dbname = args.keep or "swt_bench_hook_{}".format(uuid.uuid4().hex[:8])
    reader = "swt_bench_reader_{}".format(uuid.uuid4().hex[:8])
    owner_dsn = dsn_with(args.dsn, dbname=dbname)
    if not database_exists(args.dsn, dbname):
        admin(args.dsn, "CREATE DATABASE " + dbname)
    workdir = tempfile.mkdtemp(prefix="swt_bench_")
    try:
        init_schema(owner_dsn)
        admin(args.dsn, "CREATE ROLE {} LOGIN IN ROLE softwalltime_reader".format(reader))
        load(owner_dsn, args.rows, args.users)
        config = os.path.join(workdir, "hook.json")
        with open(config, "w") as config_file:
            json.dump({"reader_dsn": dsn_with(args.dsn, dbname=dbname, user=reader)}, config_file)
        per_event_hook = os.path.join(workdir, "queuejob_connection_per_event.py")
        with open(per_event_hook, "w") as hook_file:
            hook_file.write(CONNECTION_PER_EVENT_HOOK)
        results = measure(config, per_event_hook, args)
        results["setup"] = {"rows": args.rows, "users": args.users, "algorithm": "v3 (window 15)",
                            "python": sys.version.split()[0]}
        print(json.dumps(results, indent=2))
    finally:
        pbshook.reset()
        if not args.keep:
            admin(args.dsn, "DROP DATABASE IF EXISTS {} WITH (FORCE)".format(dbname))
        admin(args.dsn, "DROP ROLE IF EXISTS {}".format(reader))


if __name__ == "__main__":
    main()
