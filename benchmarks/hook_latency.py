"""Benchmark: the hook's own prediction time against the bare indexed query, on --rows completed jobs.

Not a test. Creates its own database (and a login role) on the server, loads
``--rows`` completed jobs of ``--users`` users server-side with
generate_series, then measures in one run, with the hooks' own driver
(predictor.server.driver, pg8000) throughout:

* hook, warm: the real hooks/softwalltime.py for queuejob under the PBS
  stand-in, pbs_server's interpreter up and the connection cached (every event
  after the warm-up). ``HookResult.elapsed_s``: the whole hook file -- config
  check, policy, the query, the prediction, setting soft_walltime, the log line.
* tang, warm and bare: the same two with the hook configured for ``tang`` (every
  job of the user's key that ended in the last 30 days, its percentile computed
  by PostgreSQL from the key's checkpoints, ``TANG_PERCENTILE_CHECKPOINTED``,
  schema versions 7 to 9), interleaved with the v3 series;
* tang, scan query: the straightforward statement for the same key
  (``TANG_PERCENTILE``: count and percentile over every job of the window), the
  same answer read from every row;
* tang, rows to Python: what the hooks did before PostgreSQL took the
  percentile: every row of the window fetched, tang computed in Python;
* a heavy user: ``--heavy-jobs`` (100,000) jobs of one user, project and
  walltime, all in the month: each series above for that user;
* bare query: the same indexed query (``RECENT_HISTORY``, newest 15 jobs) alone,
  on one open connection of the same driver, timed around ``execute``: the
  floor any hook pays. Hook events and bare queries alternate, each for its own
  random user, so that both meet the same machine and the same cache.
* bare query, psycopg2: the same query through libpq (C), interleaved with the
  two above: what the pure-Python driver costs over a C one.
* ratio of the two at p50 and p99, and whether the goal holds: warm p99 <= 1 ms
  and within 4x the bare query's p99 (the goal is stated for 10M rows).
* cold: the first event of a fresh interpreter (a new process per sample):
  importing the package and pg8000, reading the config, connecting, querying.
* connection per event: a hook that opens a new connection for every event and
  closes it (the pattern of the existing public implementation), same driver,
  same query, same stand-in.

Usage:
    python benchmarks/hook_latency.py [--rows 200000] [--users 10000] [--heavy-jobs 100000]
        [--events 2000] [--cold-runs 10] [--dsn ADMIN_DSN] [--keep DBNAME]

The loaded jobs end up to a day before the run, 3 s apart (10 M rows: about a
year, 30 days of it in tang's window).

The goal is for ``--rows 10000000``; the default is smaller so that a run takes
a minute. ``--keep DBNAME`` reuses (or creates and keeps) that database, to
skip the load on the next run.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

import pg8000
import psycopg2
import psycopg2.extensions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import pbs_standin as pbs  # noqa: E402  (the PBS double lives with the tests)

from predictor.algorithms import EVERY_ROW, tang  # noqa: E402
from predictor.db.schema import init_schema  # noqa: E402
from predictor.jobs import HistoryRow  # noqa: E402
from predictor.queries import (  # noqa: E402
    RECENT_HISTORY,
    RECENT_HISTORY_SINCE,
    TANG_PERCENTILE,
    TANG_PERCENTILE_CHECKPOINTED,
    percentile_fraction,
)
from predictor.server import driver, runtime  # noqa: E402
from predictor.server.dsn import connect_params  # noqa: E402
from predictor.server.events import DEFAULT_PROJECT  # noqa: E402

HOOK_FILE = os.path.join(ROOT, "hooks", "softwalltime.py")
WINDOW = 15
"""v3's window: the number of jobs the hook's query asks for."""
GOAL_P99_MS = 1.0
GOAL_RATIO = 4.0
GOAL_TANG_P99_MS = 2.0
TANG_WINDOW_S = 30 * 86400
HEAVY_USER = "heavy"
DEFAULT_ADMIN_DSN = os.environ.get("PBS_SOFTWALLTIME_TEST_DSN",
                                   "host=127.0.0.1 port=5432 user=postgres dbname=postgres")
"""The goal: warm hook p99 <= 1 ms and <= 4x the bare query's p99 (at 10M rows)."""

# Users user0..user<U-1>, each with rows/U jobs; walltimes 1..24 h, runtimes 0..100% of it; PBS's default project.
LOAD_ROWS = textwrap.dedent("""
    INSERT INTO completed_jobs (job_id, user_name, group_name, project, queue, ncpus, walltime_s, runtime_s,
                                submit_time, start_time, end_time, exit_status)
    SELECT g || '.bench', 'user' || (g %% %(users)s), 'users', %(project)s, 'workq', 1 + g %% 64, w,
           w * ((g * 7919) %% 1001) / 1000, %(base)s + g * 3, %(base)s + g * 3 + 60,
           %(base)s + g * 3 + 60 + w * ((g * 7919) %% 1001) / 1000, 0
    FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS g,
         LATERAL (SELECT 3600 * (1 + g %% 24) AS w) AS walltimes
""")

# One user with many jobs of one project (PBS's default) and walltime, all ended within tang's window.
LOAD_HEAVY = textwrap.dedent("""
    INSERT INTO completed_jobs (job_id, user_name, group_name, project, queue, ncpus, walltime_s, runtime_s,
                                submit_time, start_time, end_time, exit_status)
    SELECT g || '.heavy', %(user)s, 'users', %(project)s, 'workq', 1, 3600, (g * 7919) %% 3601,
           %(first_end)s + g * %(step)s - 3600, %(first_end)s + g * %(step)s - 3600, %(first_end)s + g * %(step)s, 0
    FROM generate_series(1::bigint, %(jobs)s::bigint) AS g
    ON CONFLICT DO NOTHING
""")

# The pattern being compared against: a new connection per event, closed at the end.
CONNECTION_PER_EVENT_HOOK = textwrap.dedent("""
    import time
    import pbs
    from predictor.jobs import HistoryRow
    from predictor.queries import RECENT_HISTORY
    from predictor.server import driver
    from predictor.server.config import read_hook_config

    e = pbs.event()
    config = read_hook_config(pbs.hook_config_filename)
    walltime = e.job.Resource_List["walltime"]
    deadline = time.monotonic() + config.budget_s
    conn = driver.connect(config.reader, deadline, True, config.budget_s)
    try:
        rows = conn.execute(RECENT_HISTORY, (e.requestor, config.algorithm.window), deadline, fetch=True)
    finally:
        conn.close()
    history = [HistoryRow(*row) for row in rows]
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


def load_average():
    """The machine's 1-minute load average, for the record of how busy it was during the run."""
    return round(os.getloadavg()[0], 2)


def load(dsn, rows, users, heavy_jobs):
    """Insert the rows in 1M chunks (one transaction each), the heavy user's, then VACUUM ANALYZE for index-only
    scans."""
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM completed_jobs")
            present = cursor.fetchone()[0]
            cursor.execute("SET synchronous_commit = off")
            cursor.execute("SET maintenance_work_mem = '512MB'")
            started = time.monotonic()
            base = int(time.time()) - 86400 - 3 * rows - 60 - 48 * 3600
            for first in range(present + 1, rows + 1, 1000000):
                cursor.execute(LOAD_ROWS, {"users": users, "first": first, "last": min(rows, first + 999999),
                                           "base": base, "project": DEFAULT_PROJECT})
                print("  loaded {:,} rows ({:.0f} s)".format(min(rows, first + 999999), time.monotonic() - started),
                      file=sys.stderr)
            if heavy_jobs:
                first_end = int(time.time()) - TANG_WINDOW_S + 86400
                cursor.execute(LOAD_HEAVY, {"user": HEAVY_USER, "jobs": heavy_jobs, "first_end": first_end,
                                            "project": DEFAULT_PROJECT,
                                            "step": max(1, (TANG_WINDOW_S - 2 * 86400) // heavy_jobs)})
            cursor.execute("VACUUM ANALYZE completed_jobs")
    finally:
        conn.close()


def percentiles(samples_s):
    ordered = sorted(samples_s)

    def at(fraction):
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000
    return {"n": len(ordered), "p50_ms": round(at(0.50), 3), "p99_ms": round(at(0.99), 3),
            "max_ms": round(ordered[-1] * 1000, 3)}


def restart_interpreter():
    """What a restart of pbs_server's hook interpreter does to the package: a new runtime, connections gone."""
    runtime.RUNTIME.close()
    runtime.RUNTIME = runtime.Runtime()


def random_user(users, rng):
    return "user{}".format(rng.randrange(users)) if users else HEAVY_USER


def random_walltime(users, rng):
    return 3600 * rng.randint(1, 24) if users else 3600


def random_event(users, rng):
    """A qsub of a random user (``users`` 0: the heavy user) and walltime."""
    return pbs.queuejob_event(random_user(users, rng), {"walltime": random_walltime(users, rng)})


def hook_event_s(hook_path, config, users, rng):
    """One queuejob event through ``hook_path``: its ``elapsed_s``; RuntimeError unless it predicted."""
    result = pbs.run_hook(hook_path, random_event(users, rng), config)
    if not result.accepted or "soft_walltime" not in result.resources or result.warnings:
        raise RuntimeError("the hook did not predict: {}".format(result))
    return result.elapsed_s


def v3_query(users, rng):
    """RECENT_HISTORY, newest 15 jobs of a random user: v3's query."""
    return RECENT_HISTORY, (random_user(users, rng), WINDOW)


def tang_query(users, rng):
    """tang's default key (user, project, walltime) over the last 30 days, 85th percentile, computed by
    PostgreSQL from the key's checkpoints: the hook's statement."""
    return TANG_PERCENTILE_CHECKPOINTED, (
        random_user(users, rng), DEFAULT_PROJECT, random_walltime(users, rng), int(time.time()) - TANG_WINDOW_S, 85)


def tang_scan_query(users, rng):
    """The same, by the straightforward statement: count and percentile over every job of the window."""
    return TANG_PERCENTILE["user+project+walltime"], (
        percentile_fraction(85), random_user(users, rng), DEFAULT_PROJECT, random_walltime(users, rng),
        int(time.time()) - TANG_WINDOW_S)


def bare_query_s(conn, query, users, rng):
    """One query on an open driver connection, timed as the stand-in times a hook."""
    sql, params = query(users, rng)
    started = time.monotonic()
    rows = conn.execute(sql, params, started + 2.0, fetch=True)
    elapsed = time.monotonic() - started
    if not rows:
        raise RuntimeError("no history for {}: is the table loaded?".format(params))
    return elapsed


def tang_in_python_s(conn, users, rng):
    """tang as the hooks computed it before PostgreSQL took the percentile: every row of the user's window
    fetched (RECENT_HISTORY_SINCE), then ``predictor.algorithms.tang``; timed like a bare query, on a connection
    whose statements may take 60 s (the hooks' own is cut at their budget, 2 s by default)."""
    user, walltime = random_user(users, rng), random_walltime(users, rng)
    started = time.monotonic()
    rows = conn.execute(RECENT_HISTORY_SINCE, (user, int(time.time()) - TANG_WINDOW_S, EVERY_ROW), started + 60.0,
                        fetch=True)
    tang([HistoryRow(*row) for row in rows], walltime, int(time.time()), DEFAULT_PROJECT)
    return time.monotonic() - started


def bare_query_psycopg2_s(cursor, users, rng):
    """v3's query through psycopg2 (libpq, C): the floor without a pure-Python driver."""
    sql, params = v3_query(users, rng)
    started = time.monotonic()
    cursor.execute(sql, params)
    rows = cursor.fetchall()
    elapsed = time.monotonic() - started
    if not rows:
        raise RuntimeError("no history for {}: is the table loaded?".format(params))
    return elapsed


def time_warm_and_bare(configs, reader_dsn, users, count, rng, python_count):
    """``count`` warm hook events (v3, then tang), their bare queries and v3's psycopg2 query, interleaved, and
    ``python_count`` of tang computed in Python: {series name: samples}."""
    conn = driver.connect(connect_params(reader_dsn), time.monotonic() + 5.0, True, 2.0)
    slow_conn = driver.connect(connect_params(reader_dsn), time.monotonic() + 5.0, True, 60.0)
    c_conn = psycopg2.connect(reader_dsn)
    c_conn.autocommit = True
    steps = {"warm": lambda: hook_event_s(HOOK_FILE, configs["v3"], users, rng),
             "bare_query": lambda: bare_query_s(conn, v3_query, users, rng),
             "bare_query_psycopg2": lambda: bare_query_psycopg2_s(cursor, users, rng),
             "tang_warm": lambda: hook_event_s(HOOK_FILE, configs["tang"], users, rng),
             "tang_bare_query": lambda: bare_query_s(conn, tang_query, users, rng),
             "tang_scan_query": lambda: bare_query_s(conn, tang_scan_query, users, rng),
             "tang_rows_to_python": lambda: tang_in_python_s(slow_conn, users, rng)}
    try:
        cursor = c_conn.cursor()
        for _ in range(min(200, count)):  # warm-up: the hook's connection and config, every side's caches
            for name, step in steps.items():
                if name != "tang_rows_to_python" or python_count >= count:
                    step()
        samples = {name: [] for name in steps}
        for number in range(count):
            for name, step in steps.items():
                if name != "tang_rows_to_python" or number < python_count:
                    samples[name].append(step())
        return samples
    finally:
        conn.close()
        slow_conn.close()
        c_conn.close()


def time_events(hook_path, config, users, count, rng):
    return [hook_event_s(hook_path, config, users, rng) for _ in range(count)]


def time_cold(config, users, runs, rng):
    samples = []
    for _ in range(runs):
        code = COLD_RUN.format(root=ROOT, tests=os.path.join(ROOT, "tests"), hook=HOOK_FILE,
                               user="user{}".format(rng.randrange(users)), config=config)
        output = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True,
                                universal_newlines=True).stdout
        samples.append(float(output))
    return samples


def ratio(numerator, denominator):
    return {key: round(numerator[key] / denominator[key], 2) for key in ("p50_ms", "p99_ms")}


def measure(configs, reader_dsn, per_event_hook, args):
    rng = random.Random(20260410)
    restart_interpreter()
    load_before = load_average()
    try:
        samples = time_warm_and_bare(configs, reader_dsn, args.users, args.events, rng, args.events)
        heavy = time_warm_and_bare(configs, reader_dsn, 0, args.heavy_events, rng,
                                   args.heavy_python_events) if args.heavy_jobs else {}
        per_event = time_events(per_event_hook, configs["v3"], args.users, args.events, rng)
        cold = time_cold(configs["v3"], args.users, args.cold_runs, rng)
    finally:
        restart_interpreter()
    results = {name: percentiles(values) for name, values in samples.items()}
    results["load_average_1min"] = {"start": load_before, "end": load_average()}
    results.update(("heavy_user_" + name, percentiles(values)) for name, values in heavy.items()
                   if name != "bare_query_psycopg2")
    results.update(cold=percentiles(cold), connection_per_event=percentiles(per_event))
    results["ratio_warm_to_bare_query"] = ratio(results["warm"], results["bare_query"])
    results["ratio_warm_to_bare_query_psycopg2"] = ratio(results["warm"], results["bare_query_psycopg2"])
    results["ratio_connection_per_event_to_warm"] = ratio(results["connection_per_event"], results["warm"])
    results["ratio_tang_warm_to_v3_warm"] = ratio(results["tang_warm"], results["warm"])
    results["ratio_tang_scan_to_tang_bare_query"] = ratio(results["tang_scan_query"], results["tang_bare_query"])
    if heavy:
        results["ratio_heavy_user_tang_scan_to_tang_bare_query"] = ratio(results["heavy_user_tang_scan_query"],
                                                                         results["heavy_user_tang_bare_query"])
        results["ratio_heavy_user_tang_warm_to_v3_warm"] = ratio(results["heavy_user_tang_warm"],
                                                                 results["heavy_user_warm"])
        results["ratio_heavy_user_rows_to_python_to_tang_warm"] = ratio(results["heavy_user_tang_rows_to_python"],
                                                                        results["heavy_user_tang_warm"])
    results["goal"] = {
        "warm_p99_ms_at_most": GOAL_P99_MS, "ratio_p99_at_most": GOAL_RATIO,
        "met": results["warm"]["p99_ms"] <= GOAL_P99_MS and results["ratio_warm_to_bare_query"]["p99_ms"] <= GOAL_RATIO,
        "tang_warm_p99_ms_at_most": GOAL_TANG_P99_MS,
        "tang_met": results["tang_warm"]["p99_ms"] <= GOAL_TANG_P99_MS,
        "tang_heavy_user_met": bool(heavy) and results["heavy_user_tang_warm"]["p99_ms"] <= GOAL_TANG_P99_MS,
    }
    return results


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200000, help="completed jobs to load (the goal is for 10000000)")
    parser.add_argument("--users", type=int, default=10000)
    parser.add_argument("--heavy-jobs", type=int, default=100000,
                        help="jobs of one more user, all of one walltime and in tang's window (0: none)")
    parser.add_argument("--heavy-events", type=int, default=200, help="timed events per heavy-user series")
    parser.add_argument("--heavy-python-events", type=int, default=5,
                        help="of which tang computed in Python from every row (seconds each)")
    parser.add_argument("--events", type=int, default=2000, help="timed events per series (warm, bare, per-event)")
    parser.add_argument("--cold-runs", type=int, default=10, help="fresh interpreters for the cold series")
    parser.add_argument("--dsn", default=DEFAULT_ADMIN_DSN)
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
        load(owner_dsn, args.rows, args.users, args.heavy_jobs)
        reader_dsn = dsn_with(args.dsn, dbname=dbname, user=reader)
        configs = {}
        for algorithm in ("v3", "tang"):
            configs[algorithm] = os.path.join(workdir, algorithm + ".json")
            with open(configs[algorithm], "w") as config_file:
                json.dump({"reader_dsn": reader_dsn, "algorithm": algorithm}, config_file)
        per_event_hook = os.path.join(workdir, "queuejob_connection_per_event.py")
        with open(per_event_hook, "w") as hook_file:
            hook_file.write(CONNECTION_PER_EVENT_HOOK)
        results = measure(configs, reader_dsn, per_event_hook, args)
        results["setup"] = {"rows": args.rows, "users": args.users, "heavy_jobs": args.heavy_jobs,
                            "algorithms": "v3 (window 15), tang (its defaults: user+project+walltime, 30 days, 85th)",
                            "driver": "pg8000 " + pg8000.__version__, "python": sys.version.split()[0]}
        print(json.dumps(results, indent=2))
    finally:
        restart_interpreter()
        shutil.rmtree(workdir, ignore_errors=True)  # the generated hook file and configs
        if not args.keep:
            admin(args.dsn, "DROP DATABASE IF EXISTS {} WITH (FORCE)".format(dbname))
        admin(args.dsn, "DROP ROLE IF EXISTS {}".format(reader))


if __name__ == "__main__":
    main()
