"""Load: concurrent prediction clients against a big completed_jobs table.

Each client is a process of its own with one ``HookHistory`` (the hooks' store
and driver, pg8000: one cached connection, a 2 s budget per call) asking for
random users' predictions (v3: the newest 15 jobs) in a loop, all clients for
the same ``--seconds``. Reports predictions per second, latency p50 / p99 / max and
every error. The rows are loaded server-side with benchmarks/hook_latency.py's
generate_series loader (``--rows`` jobs of ``--users`` users).

    python benchmarks/load_predictions.py [--rows 10000000] [--users 10000]
        [--clients 50] [--seconds 60] [--dsn ADMIN_DSN] [--keep DBNAME]

``--keep DBNAME`` reuses (or creates and keeps) that database, to skip the
load next time. tests/test_reliability_load.py runs the same code, small in
the default test run and at full size with ``-m slow``.
"""

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
import uuid

import pg8000

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hook_latency import admin, database_exists, dsn_with, load  # noqa: E402  (same directory)

from predictor.algorithms import make_algorithm  # noqa: E402
from predictor.db.schema import init_schema  # noqa: E402
from predictor.errors import PredictorError  # noqa: E402
from predictor.history import predict  # noqa: E402
from predictor.jobs import JobRequest  # noqa: E402
from predictor.server.dsn import connect_params  # noqa: E402
from predictor.server.store import HookHistory  # noqa: E402

DEFAULT_DSN = os.environ.get("PBS_SOFTWALLTIME_TEST_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=postgres")


def _client(task):
    """One client's loop: ``(latencies_s, errors, predictions that were None)``."""
    dsn, users, start_at, seconds, seed = task
    rng = random.Random(seed)
    algorithm = make_algorithm("v3")
    latencies, errors, empty = [], [], 0
    with HookHistory(connect_params(dsn), timeout_s=2.0) as store:
        store.recent("user0", 1)  # connected before the clock starts
        time.sleep(max(0.0, start_at - time.monotonic()))  # CLOCK_MONOTONIC is the same in every process
        end = start_at + seconds
        while time.monotonic() < end:
            request = JobRequest("user{}".format(rng.randrange(users)), 3600 * rng.randint(1, 48))
            started = time.perf_counter()
            try:
                empty += predict(store, algorithm, request) is None
            except PredictorError as err:
                errors.append(str(err))
            latencies.append(time.perf_counter() - started)
    return latencies, errors, empty


def run_load(reader_dsn, users, clients, seconds, seed=20261122):
    """Run the clients; a dict of figures (throughput, latency percentiles, errors)."""
    start_at = time.monotonic() + 1.0 + 0.05 * clients  # time for every client to start and connect
    tasks = [(reader_dsn, users, start_at, seconds, seed + index) for index in range(clients)]
    with multiprocessing.Pool(clients) as pool:
        results = pool.map(_client, tasks)
    latencies = sorted(sample for result in results for sample in result[0])
    errors = [error for result in results for error in result[1]]

    def at(fraction):
        return round(1000 * latencies[min(len(latencies) - 1, int(fraction * len(latencies)))], 2)
    return {
        "clients": clients, "seconds": seconds, "predictions": len(latencies),
        "throughput_per_s": round(len(latencies) / seconds, 1), "p50_ms": at(0.50), "p99_ms": at(0.99),
        "max_ms": round(1000 * latencies[-1], 2), "errors": len(errors), "error_examples": sorted(set(errors))[:3],
        "without_history": sum(result[2] for result in results),
        "fewest_by_one_client": min(len(result[0]) for result in results),
    }


def prepare(admin_dsn, dbname, rows, users):
    """The database with the schema and ``rows`` jobs, and a reader login; the reader's DSN."""
    if not database_exists(admin_dsn, dbname):
        admin(admin_dsn, "CREATE DATABASE " + dbname)
    owner_dsn = dsn_with(admin_dsn, dbname=dbname)
    init_schema(owner_dsn)
    load(owner_dsn, rows, users, heavy_jobs=0)
    reader = "swt_load_reader_{}".format(uuid.uuid4().hex[:8])
    admin(admin_dsn, "CREATE ROLE {} LOGIN IN ROLE softwalltime_reader".format(reader))
    return reader, dsn_with(admin_dsn, dbname=dbname, user=reader)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10000000)
    parser.add_argument("--users", type=int, default=10000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--dsn", default=DEFAULT_DSN, help="an admin DSN on the server (default: the tests')")
    parser.add_argument("--keep", metavar="DBNAME", help="reuse or keep this database instead of a throwaway one")
    return parser.parse_args()


def main():
    args = parse_args()
    dbname = args.keep or "swt_bench_load_{}".format(uuid.uuid4().hex[:8])
    reader = None
    try:
        started = time.monotonic()
        reader, reader_dsn = prepare(args.dsn, dbname, args.rows, args.users)
        print("  database ready in {:.0f} s".format(time.monotonic() - started), file=sys.stderr)
        results = run_load(reader_dsn, args.users, args.clients, args.seconds)
        results["setup"] = {"rows": args.rows, "users": args.users, "algorithm": "v3 (window 15)",
                            "cpus": os.cpu_count(), "driver": "pg8000 " + pg8000.__version__,
                            "python": sys.version.split()[0]}
        print(json.dumps(results, indent=2))
    finally:
        if not args.keep:
            admin(args.dsn, "DROP DATABASE IF EXISTS {} WITH (FORCE)".format(dbname))
        if reader:
            admin(args.dsn, "DROP ROLE IF EXISTS {}".format(reader))


if __name__ == "__main__":
    main()
