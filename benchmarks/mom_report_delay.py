"""When a MoM's measurement of a running job reaches the server, on a test PBS. Not a test.

    python benchmarks/mom_report_delay.py [--pbs-run CMD] [--user USER] [--seconds 25] [--busy]

Submits one job (``sleep``, one ncpu) as USER and reads ``qstat -f -F json`` of it every 0.05 s while
it runs. Each time its ``resources_used.walltime`` changes, the MoM measured it at ``stime +
walltime`` (whole seconds, as the MoM counts); the line printed gives that second and how long
after its start the new value showed on the server. With ``--busy``, a one-second job is submitted
every 1.7 s beside it, so that the MoM starts and ends jobs while it measures. The server is left
as it is: set the MoM's ``$min_check_poll`` and ``$max_check_poll`` first (``mom_priv/config``,
then a HUP to ``pbs_mom``) to the values to look at.

The fairshare replay (``replay.pbs.mom_polls``) has the scheduler see a measurement from 2 s after
the second it was made in; this shows what a server does.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pbs_record import Server, stime_epoch  # noqa: E402  (benchmarks/ is where this script runs from)

from predictor.durations import parse_duration  # noqa: E402

POLL_S = 0.05


def submit(server, user, seconds):
    return server.run("qsub", "-l", "select=1:ncpus=1", "-l", "walltime=600", "-o", "/dev/null", "-e", "/dev/null",
                      "--", "/bin/sleep", str(seconds), user=user, timeout=30).strip()


def watch(server, job_id, until):
    """``(stime, [(seen at, walltime)])``: each new resources_used.walltime of ``job_id`` while it runs (state R)
    and when qstat showed it; stime None if it never ran before ``until``."""
    seen, stime = [], None
    while time.time() < until:
        try:
            jobs = json.loads(server.run("qstat", "-f", "-F", "json", job_id, timeout=30)).get("Jobs", {})
        except (RuntimeError, ValueError):
            break  # the job has left the server
        now = time.time()
        job = next(iter(jobs.values()), {})
        if job.get("job_state") == "E" or (stime is not None and job.get("job_state") != "R"):
            break  # ended: its last resources_used came with its end, not from a measurement
        if job.get("job_state") != "R":
            time.sleep(POLL_S)
            continue
        if stime is None and "stime" in job:
            stime = stime_epoch(job["stime"])
        walltime = job.get("resources_used", {}).get("walltime")
        if walltime is not None and (not seen or parse_duration(walltime) != seen[-1][1]):
            seen.append((now, parse_duration(walltime)))
        time.sleep(POLL_S)
    return stime, seen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pbs-run", default="", help="command that runs PBS commands (default: run them directly)")
    parser.add_argument("--user", default="pbsuser", help="who submits the jobs (default pbsuser)")
    parser.add_argument("--seconds", type=int, default=25, help="how long the watched job runs (default 25)")
    parser.add_argument("--busy", action="store_true", help="start a one-second job every 1.7 s beside it")
    args = parser.parse_args(argv)
    server = Server(shlex.split(args.pbs_run), None, None)
    try:
        job_id = submit(server, args.user, args.seconds)
        stop = threading.Event()
        if args.busy:
            def feed():
                while not stop.wait(1.7):
                    try:
                        submit(server, args.user, 1)
                    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                        print("mom_report_delay: --busy: {}".format(error), file=sys.stderr)
                        return
            threading.Thread(target=feed, daemon=True).start()
        stime, seen = watch(server, job_id, time.time() + args.seconds + 30)
        stop.set()
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        print("mom_report_delay: {}".format(error), file=sys.stderr)
        return 2
    if stime is None:
        try:
            server.run("qdel", job_id, timeout=30)  # left as it was
        except (RuntimeError, OSError, subprocess.SubprocessError):
            pass
        print("mom_report_delay: {} did not run within {} s".format(job_id, args.seconds + 30), file=sys.stderr)
        return 2
    delays = []
    print("job {} started at {}".format(job_id, time.strftime("%H:%M:%S", time.localtime(stime))))
    print("{:>9} {:>9} {:>12}".format("measured", "walltime", "shown after"))
    for at, walltime in seen:
        if walltime == 0:
            continue  # the report the MoM sends as the job starts
        measured = stime + walltime
        delays.append(at - measured)
        print("{:>9} {:>8}s {:>11.2f}s".format(time.strftime("%H:%M:%S", time.localtime(measured)), walltime,
                                               delays[-1]))
    if delays:
        print("{} measurements shown {:.2f} to {:.2f} s (median {:.2f} s) after the second they were made in".format(
            len(delays), min(delays), max(delays), statistics.median(delays)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
