"""Benchmark: tang's percentile function as the database has it against an earlier schema version's, in one run.
Not a test.

On a database loaded by ``hook_latency.py --keep DBNAME`` (10 M rows and a
user with 100,000 jobs of one key in the window), the ``tang_percentile`` of
schema version ``--against`` (7 or 8; default 8) is installed beside the
current one under another name, from that version's file in ``sql/`` itself,
and the two are timed in turn through psycopg2, each query for the same key:

* heavy user: the key with 100,000 jobs in tang's window (checkpoints);
* random key: a random user and walltime, as the hooks meet them (most keys
  have no checkpoint, or no job at all);
* new connection: the first five calls on a fresh connection, as after a
  restart of pbs_server's hook interpreter (version 7 planned its statements
  anew for each of them).

The answers are compared as well. The copy of the earlier version is dropped at the end.

    python benchmarks/tang_percentile_versions.py DBNAME [--against 8] [--events 3000] [--connections 20]
        [--dsn ADMIN_DSN]
"""

import argparse
import json
import os
import random
import re
import time

import psycopg2
from hook_latency import (
    DEFAULT_ADMIN_DSN,
    HEAVY_USER,
    TANG_PERCENTILE_CHECKPOINTED,
    TANG_WINDOW_S,
    dsn_with,
    percentiles,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OLD = "tang_percentile_earlier"
CALL = TANG_PERCENTILE_CHECKPOINTED.replace("tang_percentile(", "{}(")
"""The hooks' statement, with the function's name to fill in."""
PROJECT = "_pbs_project_default"


def earlier_function(version):
    """The CREATE FUNCTION tang_percentile of schema version ``version``'s file, renamed."""
    folder = os.path.join(ROOT, "sql")
    name = next(name for name in sorted(os.listdir(folder)) if name.startswith("{:03d}_".format(version)))
    with open(os.path.join(folder, name)) as schema:
        text = schema.read()
    match = re.search(r"CREATE OR REPLACE FUNCTION tang_percentile\(.*?\n\$\$;\n", text, re.S)
    return match.group(0).replace("FUNCTION tang_percentile(", "FUNCTION {}(".format(OLD), 1)


def timed(cursor, function, key, window_start):
    started = time.perf_counter()
    cursor.execute(CALL.format(function), key + (window_start, 85))
    answer = cursor.fetchall()
    return time.perf_counter() - started, answer


def interleaved(cursor, keys, window_start):
    """Each key through both functions in turn: ``({function: [seconds]}, keys whose answers differ)``."""
    samples, differ = {OLD: [], "tang_percentile": []}, 0
    for key in keys:
        answers = []
        for function in samples:
            seconds, answer = timed(cursor, function, key, window_start)
            samples[function].append(seconds)
            answers.append(answer)
        differ += answers[0] != answers[1]
    return samples, differ


def first_calls(dsn, connections, key, window_start):
    """The first five calls of ``connections`` fresh connections, each function on connections of its own."""
    samples = {OLD: [], "tang_percentile": []}
    for _ in range(connections):
        for function in samples:
            conn = psycopg2.connect(dsn)
            conn.autocommit = True
            try:
                with conn.cursor() as cursor:
                    samples[function] += [timed(cursor, function, key, window_start)[0] for _ in range(5)]
            finally:
                conn.close()
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dbname", help="a database kept by hook_latency.py --keep")
    parser.add_argument("--against", type=int, choices=(7, 8), default=8,
                        help="the earlier schema version whose function is timed beside the current one")
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--dsn", default=DEFAULT_ADMIN_DSN)
    args = parser.parse_args()
    dsn = dsn_with(args.dsn, dbname=args.dbname)
    rng = random.Random(1)
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute(earlier_function(args.against))
            window_start = int(time.time()) - TANG_WINDOW_S
            heavy = (HEAVY_USER, PROJECT, 3600)
            random_keys = [("user{}".format(rng.randrange(10000)), PROJECT, 3600 * rng.randint(1, 24))
                           for _ in range(args.events)]
            interleaved(cursor, [heavy] * 200 + random_keys[:200], window_start)  # warm every cache
            results = {"against_version": args.against, "load_average_1min_start": os.getloadavg()[0]}
            for name, keys in (("heavy_user", [heavy] * args.events), ("random_key", random_keys)):
                samples, differ = interleaved(cursor, keys, window_start)
                results[name] = {function: percentiles(values) for function, values in samples.items()}
                results[name]["answers_differ"] = differ
            results["new_connection_first_5_calls"] = {
                function: percentiles(values)
                for function, values in first_calls(dsn, args.connections, heavy, window_start).items()}
            results["load_average_1min_end"] = os.getloadavg()[0]
            cursor.execute("DROP FUNCTION {}(text, text, integer, bigint, integer)".format(OLD))
    finally:
        conn.close()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
