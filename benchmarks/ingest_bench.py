"""Ingestion throughput: records/s into PostgreSQL for synthetic accounting logs.

Not a test. Creates a throwaway database on the local server, writes N E
records (shaped like a real OpenPBS 23.06 E line, ~30 fields each) into daily
files, ingests them with ``predictor.ingest.ingester.Ingester`` and reports records/s,
next to the parse-only rate (no database) to show where the time goes.
``--one-by-one N``: also N jobs upserted one statement each, as the jobobit hook
does (the hooks' driver, pg8000), 20 users' jobs in end-time order, per-job
median and p99; ``--async-commit``: that database does not wait for the disk at
commit (synchronous_commit off), which leaves the statement's own cost.

    python benchmarks/ingest_bench.py [--records 1000000] [--files 10] [--one-by-one 0] [--async-commit]
"""

import argparse
import os
import tempfile
import time
import uuid

import psycopg2
from hook_latency import admin, dsn_with  # same directory

from predictor.accounting.logfile import LogFile
from predictor.db.schema import init_schema
from predictor.ingest.chunks import parse_chunk
from predictor.ingest.ingester import Ingester
from predictor.jobs import CompletedJob
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory

ADMIN_DSN = os.environ.get("PBS_SOFTWALLTIME_TEST_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=postgres")

LINE = (
    "{date} 10:35:23;E;{id}.pbshost;user=user{user} group=grp{group} project=_pbs_project_default "
    "jobname=job{id} queue=workq ctime={ctime} qtime={ctime} etime={ctime} start={start} "
    "exec_host=node{node}/0*{ncpus} exec_vnode=(node{node}:ncpus={ncpus}) Resource_List.ncpus={ncpus} "
    "Resource_List.nodect=1 Resource_List.place=pack Resource_List.select=1:ncpus={ncpus} "
    "Resource_List.soft_walltime=00:30:00 Resource_List.walltime={walltime} session={session} end={end} "
    "Exit_status=0 resources_used.cpupercent=99 resources_used.cput=00:10:00 resources_used.mem=1048576kb "
    "resources_used.ncpus={ncpus} resources_used.vmem=2097152kb resources_used.walltime={runtime} run_count=1\n"
)


def hms(seconds):
    return "{:02d}:{:02d}:{:02d}".format(seconds // 3600, seconds // 60 % 60, seconds % 60)


def write_logs(directory, records, files):
    per_file = -(-records // files)
    for day in range(files):
        with open(os.path.join(directory, "202604{:02d}".format(day + 1)), "w") as log:
            for index in range(day * per_file, min(records, (day + 1) * per_file)):
                start = 1775000000 + index * 3
                runtime = 60 + index * 7919 % 86400
                log.write(LINE.format(date="04/{:02d}/2026".format(day + 1), id=index, user=index % 10000,
                                      group=index % 97, ctime=start - 60, start=start, node=index % 512,
                                      ncpus=1 + index % 64, walltime=hms(runtime * 2), session=index % 65536,
                                      end=start + runtime, runtime=hms(runtime)))


def parse_only(directory):
    started, count = time.perf_counter(), 0
    for name in sorted(os.listdir(directory)):
        for lines, _ in LogFile(os.path.join(directory, name)).line_chunks(0, 10000):
            count += parse_chunk(lines, 1).jobs
    return count, time.perf_counter() - started


def ingest(dsn, directory, workers):
    conn = psycopg2.connect(dsn)
    ingester = Ingester(conn, workers=workers)
    try:
        started = time.perf_counter()
        stats = ingester.ingest([directory])
        return stats, time.perf_counter() - started
    finally:
        ingester.close()
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2, 4],
                        help="worker-process counts to measure, each into a fresh table")
    parser.add_argument("--one-by-one", type=int, default=0, metavar="N",
                        help="also upsert N jobs one statement each (the jobobit hook's way) into a fresh table")
    parser.add_argument("--async-commit", action="store_true",
                        help="--one-by-one's database does not wait for the disk at commit")
    args = parser.parse_args()
    name = "swt_bench_" + uuid.uuid4().hex[:8]
    dsn = dsn_with(ADMIN_DSN, dbname=name)
    with tempfile.TemporaryDirectory() as directory:
        write_logs(directory, args.records, args.files)
        size_mb = sum(os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory)) / 1e6
        parsed, parse_s = parse_only(directory)
        results = [(workers, ingest_fresh(dsn, name, directory, workers)) for workers in args.workers]
    one_by_one = one_by_one_fresh(dsn, name, args.one_by_one, args.async_commit) if args.one_by_one else None
    print("{} E records in {} files, {:.0f} MB, {} CPUs".format(args.records, args.files, size_mb, os.cpu_count()))
    print("parse only, 1 process   : {:8.0f} records/s ({} jobs, {:.1f} s)".format(parsed / parse_s, parsed, parse_s))
    for workers, (stats, ingest_s, again, again_s) in results:
        print("ingest, {} parse workers : {:8.0f} records/s ({} jobs loaded, {:.1f} s; re-run read {} lines "
              "in {:.2f} s)".format(workers, stats.jobs / ingest_s, stats.jobs, ingest_s, again.lines, again_s))
    if one_by_one:
        print("one job per statement   : median {:.3f} ms, p99 {:.3f} ms ({} jobs)".format(*one_by_one))


def ingest_fresh(dsn, name, directory, workers):
    """Ingest into a new database, then again (nothing new): both stats and times."""
    admin(ADMIN_DSN, "CREATE DATABASE " + name)
    try:
        init_schema(dsn)
        stats, ingest_s = ingest(dsn, directory, workers)
        again, again_s = ingest(dsn, directory, workers)
        return stats, ingest_s, again, again_s
    finally:
        admin(ADMIN_DSN, "DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))

def one_by_one_fresh(dsn, name, count, async_commit=False):
    """``count`` single-job upserts through the hooks' store into a new database: (median ms, p99 ms, count)."""
    admin(ADMIN_DSN, "CREATE DATABASE " + name)
    try:
        init_schema(dsn)
        if async_commit:
            admin(ADMIN_DSN, "ALTER DATABASE {} SET synchronous_commit = off".format(name))
        samples = []
        with HookHistory(connect_params(dsn), read_only=False) as store:
            for index in range(count):
                runtime = 60 + index * 7919 % 3600
                job = CompletedJob("{}.one".format(index), "user{}".format(index % 20), runtime,
                                   1775000000 + index * 3, walltime_s=3600, project="_pbs_project_default")
                started = time.perf_counter()
                store.add(job)
                samples.append(time.perf_counter() - started)
        samples.sort()
        return samples[len(samples) // 2] * 1000, samples[int(0.99 * len(samples))] * 1000, count
    finally:
        admin(ADMIN_DSN, "DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))


if __name__ == "__main__":
    main()
