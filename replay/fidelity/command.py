"""``python -m replay fidelity LOGS...``: the PBS scheduler model against what a real server did.

See ``decisions`` (each instant the server started jobs), ``measure`` (the whole run replayed) and
docs/fidelity.md.
"""

from predictor.cmdline.arguments import whole_number
from predictor.cmdline.outputs import OutputPaths, check_outputs, publish
from predictor.cmdline.rejects import RejectPrinter
from predictor.ingest.paths import nothing_to_load

from ..shared.errors import TraceError
from ..shared.options import add_wide_argument

__all__ = ["SUMMARY", "EXAMPLES", "add_arguments", "run"]

SUMMARY = "check the PBS scheduler model against a real server's accounting logs"
EXAMPLES = ("python -m replay fidelity /var/spool/pbs/server_priv/accounting --site site/",
            "python -m replay fidelity 20261126 --json fidelity.json --show 3",
            "python -m replay fidelity accounting/ --site site/ --server-log server_logs/ --sched-log sched_logs/")


def add_arguments(parser):
    """The ``fidelity`` options."""
    parser.add_argument("paths", nargs="+", metavar="LOGS", help="PBS accounting files or YYYYMMDD directories")
    parser.add_argument("--site", metavar="DIR",
                        help="the site's folder (qmgr.txt, sched_config, resource_group, pbsnodes.json; see "
                             "docs/simulate.md); default: PBS's shipped policy, vnodes inferred from the logs")
    parser.add_argument("--json", metavar="FILE", help="write the figures and every disagreement as JSON ('-': stdout)")
    parser.add_argument("--jobs-csv", metavar="FILE",
                        help="write each job of the whole-run replay as CSV: its real and replayed start and "
                             "wait ('-': stdout)")
    parser.add_argument("--show", type=whole_number(0, 10 ** 6), default=5, metavar="N",
                        help="disagreeing decisions shown with their state (default 5)")
    parser.add_argument("--server-log", dest="server_logs", action="append", metavar="PATH",
                        help="the server's own log of the same days (server_logs/YYYYMMDD files or that directory; "
                             "repeatable): the decisions are its scheduler cycles, and the whole-run replay takes "
                             "each second's releases and ends in its order; kept with log_events 1535 or 2047, the "
                             "decisions take fairshare usage from its MoM updates")
    parser.add_argument("--sched-log", dest="sched_logs", action="append", metavar="PATH",
                        help="the scheduler's own log of the same days (sched_logs/YYYYMMDD files or that directory; "
                             "repeatable): each agreeing decision's cycle is compared with its \"Considering job "
                             "to run\" lines, the order in which it took the jobs (written at log_events 767, the "
                             "default)")
    parser.add_argument("--latency", dest="latency_s", type=whole_number(0, 3600), default=0, metavar="SECONDS",
                        help="whole-run replay: seconds between a job's end and the reuse of its resources "
                             "(default 0; the report gives the logs' median)")
    parser.add_argument("--max-errors", type=whole_number(0, 10 ** 9), default=20, metavar="N",
                        help="malformed lines to show on stderr (default 20; all are counted)")
    add_wide_argument(parser)


def run(args):
    """Read the logs and the site, check, report; the exit status (1: some lines were malformed)."""
    from .decisions import server_cycles
    from .machine import site_model
    from .measure import measure
    from .records import read_records
    from .report import fidelity_report, job_table
    from .sched_log import check_orders, read_sched_log
    from .server_log import log_days, read_server_log
    server_paths, sched_paths = args.server_logs or [], args.sched_logs or []
    outputs = check_outputs(OutputPaths(json=args.json, jobs_csv=args.jobs_csv),
                            args.paths + ([args.site] if args.site else []) + server_paths + sched_paths)
    problem = nothing_to_load(args.paths)  # an SWF trace, a missing or empty path: one line, as ingest says it
    if problem:
        raise TraceError(problem)
    for option, paths in (("--server-log", server_paths), ("--sched-log", sched_paths)):
        problem = nothing_to_load(paths) if paths else None
        if problem:
            raise TraceError(option + ": " + problem)
    rejects = RejectPrinter(args.max_errors)
    try:
        accounting = read_records(args.paths, rejects)
        days = None if accounting.first_time is None else log_days(accounting.first_time, accounting.last_time)
        server_log = read_server_log(server_paths, rejects, days) if server_paths and days else None
        sched_cycles = read_sched_log(sched_paths, rejects, days) if sched_paths and days else None
    finally:
        rejects.close()
    if not accounting.starts:
        raise TraceError("{}: no job started in these logs (no S record)".format(", ".join(args.paths)))
    site = site_model(args.site, accounting)
    fidelity = measure(accounting, site, args.latency_s, server_log=server_log)
    title = "Fidelity of the PBS scheduler model on {} ({} jobs, {} file(s))".format(
        ", ".join(args.paths), len(accounting.jobs), accounting.stats.files)
    notes = site.notes + ((("{} malformed lines skipped".format(rejects.count)),) if rejects.count else ())
    if server_log is not None:
        notes += ("order within a second from the server's log ({} file(s): {} releases, {} ends)".format(
            server_log.files, len(server_log.released), len(server_log.finished)),)
        cycle_of = server_cycles(server_log)
        known = sum(1 for start in accounting.starts if cycle_of(start.name) is not None)
        if known:
            rest = "; the others by their S records" if known < len(accounting.starts) else ""
            notes += ("decisions: {} of the {} starts grouped by the server's cycles (its \"Scheduler sent command\" "
                      "lines){}".format(known, len(accounting.starts), rest),)
        if site.policy.fairshare is not None and server_log.updates:
            notes += ("decisions: fairshare usage charged at the server's {} cycles, with the {} updates of "
                      "resources_used its log records".format(
                          len(server_log.cycles), sum(len(lines) for lines in server_log.updates.values())),)
    orders = None
    if sched_cycles is not None:
        orders = check_orders(fidelity.checks, sched_cycles)
        notes += ("orders: {} of the {} agreeing decisions ran the jobs of exactly one of the {} cycles of the "
                  "scheduler's log".format(len(orders), fidelity.decisions.agreeing, len(sched_cycles)),)
        if not any(cycle.considered for cycle in sched_cycles):
            notes += ("orders: the scheduler's log has no \"Considering job to run\" line (its log_events leaves out "
                      "128, debug): no order to compare",)
    publish(outputs, fidelity_report(title, notes, fidelity, site, args.show, orders), job_table(fidelity),
            wide=bool(args.wide))
    return 1 if rejects.count else 0
