"""``python -m predictor``: db init, db prune, ingest, predict, hooks qmgr, doctor, report.

Errors are one line on stderr and a non-zero exit, never a traceback:
0 success, 1 some accounting lines were rejected (the rest was loaded) or a
doctor check failed, 2 an error stopped the command (a bad option included),
130 interrupted (Ctrl-C; the process ends by SIGINT, which a shell reports
as 130), 141 the reader of the output went away (``| head``),
silently, as a tool killed by SIGPIPE. An exception that is not one of the
package's own errors is a bug: its traceback is shown (see predictor.cmdline.exits).
"""

import argparse
import contextlib
import os
import re
import signal
import sys
import time
import urllib.parse

from ..algorithms import DEFAULT_ALGORITHM, EVERY_ROW, PARAMETERS, REGISTRY, make_algorithm
from ..cmdline.arguments import bounded, checked, duration, whole_number
from ..cmdline.exits import Terminated, exit_status, sigterm_raises
from ..cmdline.files import migrations
from ..cmdline.parser import CommandParser, examples_epilog
from ..cmdline.rejects import RejectPrinter
from ..db import CONNECT_TIMEOUT_S
from ..durations import format_duration
from ..errors import ConfigError, PredictorError
from ..jobs import MAX_EPOCH

__all__ = ["main", "build_parser"]

PROG = "python -m predictor"
DSN_ENV = "PBS_SOFTWALLTIME_DSN"
_MAX_TIMEOUT_S = 3600.0
_ACCOUNTING = "/var/spool/pbs/server_priv/accounting"
_CONFIG = "/etc/pbs-softwalltime/hooks.json"


def _sql_dir_arg(text):
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError("{}: no such directory".format(text))
    if not migrations(text):
        raise argparse.ArgumentTypeError("{}: no schema files NNN_name.sql in it".format(text))
    return text


def _add_timeouts(parser, statement_s):
    """--connect-timeout and --statement-timeout: every wait on the server bounded, with a documented default."""
    parser.add_argument("--connect-timeout", type=bounded(float, 1, 86400, "seconds"), default=CONNECT_TIMEOUT_S,
                        metavar="SECONDS", help="seconds to connect and log in (default {})".format(
                            CONNECT_TIMEOUT_S))
    parser.add_argument("--statement-timeout", type=bounded(float, 1, 10 ** 6, "seconds"), default=statement_s,
                        metavar="SECONDS", help="seconds each statement may take, lock waits included (default "
                        "{:g})".format(statement_s))


def _add_dsn(parser, who):
    parser.add_argument("--dsn", help="libpq connection string or URI of {} (default: ${}); keep the password "
                                      "in a passfile=, not here, where ps shows it".format(who, DSN_ENV))


def build_parser():
    parser = CommandParser(prog=PROG, description="PBS soft-walltime predictor", epilog=examples_epilog(
        'python -m predictor db init --dsn "host=127.0.0.1 dbname=softwalltime user=postgres"',
        "python -m predictor ingest {}".format(_ACCOUNTING),
        "python -m predictor predict --user alice --walltime 04:00:00"))
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    _add_db(commands)
    _add_ingest(commands)
    _add_predict(commands)
    _add_hooks(commands)
    _add_doctor(commands)
    _add_report(commands)
    return parser


def _add_db(commands):
    db = commands.add_parser("db", help="database schema and retention", description="database schema and retention",
                             epilog=examples_epilog('python -m predictor db init --dsn "host=127.0.0.1 user=postgres"',
                                              "python -m predictor db prune --older-than 365 --dry-run"),
                             ).add_subparsers(dest="db_command", metavar="ACTION")
    db.required = True
    init = db.add_parser("init", help="create or upgrade the schema and roles (idempotent)",
                         description="create or upgrade the schema and roles (idempotent)", epilog=examples_epilog(
                             'python -m predictor db init --dsn "host=127.0.0.1 dbname=softwalltime user=postgres"',
                             'python -m predictor db init --dsn "postgresql://postgres@10.0.0.5/softwalltime"'))
    _add_dsn(init, "the database owner")
    init.add_argument("--sql-dir", type=_sql_dir_arg,
                      help="directory of NNN_*.sql schema files (default: the installed ones)")
    _add_timeouts(init, 600.0)
    init.set_defaults(func=_db_init)
    prune = db.add_parser("prune", help="delete completed jobs no predictor reads any more (safe from cron)",
                          description="delete completed jobs no predictor reads any more (safe from cron)",
                          epilog=examples_epilog("python -m predictor db prune --older-than 365 --dry-run",
                                           "python -m predictor db prune --older-than 365 --config " + _CONFIG,
                                           "python -m predictor db prune --older-than 90 --keep-per-user 50"))
    _add_dsn(prune, "the database owner")
    prune.add_argument("--older-than", required=True, metavar="DAYS", type=whole_number(1, 100000, "whole days"),
                       help="only rows of jobs that ended more than DAYS days ago")
    prune.add_argument("--keep-per-user", metavar="N", type=whole_number(1, 1000000),
                       help="keep every user's newest N jobs (default: 15, or the window of --config if larger)")
    prune.add_argument("--config", help="the hooks' config: keep at least its algorithm's window per user")
    prune.add_argument("--dry-run", action="store_true", help="count what would be deleted, delete nothing")
    _add_timeouts(prune, 3600.0)
    prune.set_defaults(func=_db_prune)


def _add_ingest(commands):
    ingest = commands.add_parser(
        "ingest", help="load PBS accounting logs into completed_jobs",
        description="load PBS accounting logs into completed_jobs (exit 0: all loaded, 1: some lines rejected, "
                    "2: a path missing, empty or unreadable, or an error stopped the run)",
        epilog=examples_epilog("python -m predictor ingest " + _ACCOUNTING,
                         "python -m predictor ingest --follow --interval 10 " + _ACCOUNTING,
                         "python -m predictor ingest --max-errors 100 --workers 0 /archive/accounting/20250101.gz"))
    _add_dsn(ingest, "a role in softwalltime_writer")
    ingest.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                        help="accounting files (.gz too), or directories of them such as server_priv/accounting")
    ingest.add_argument("--follow", action="store_true", help="keep loading new lines and new files")
    ingest.add_argument("--interval", type=bounded(float, 0.1, 86400, "seconds"), default=5.0,
                        help="seconds between --follow passes (default 5)")
    ingest.add_argument("--chunk-lines", type=whole_number(1, 10 ** 7), default=10000,
                        help="lines parsed and committed together (default 10000)")
    ingest.add_argument("--workers", type=whole_number(0, 256), default=min(4, os.cpu_count() or 1),
                        help="processes that parse lines (0: parse in the main process; default: up to 4)")
    ingest.add_argument("--max-errors", type=whole_number(0, 10 ** 9), default=20, metavar="N",
                        help="malformed lines to show on stderr (default 20; all are counted)")
    _add_timeouts(ingest, _INGEST_TIMEOUT_S)
    ingest.set_defaults(func=_ingest)


def _add_predict(commands):
    predict = commands.add_parser("predict", help="print the soft walltime a job would get, as the hooks compute it",
                                  description="print the soft walltime a job would get, as the hooks compute it",
                                  epilog=examples_epilog("python -m predictor predict --user alice --walltime 04:00:00",
                                                   "python -m predictor predict --user bob --walltime 3600 "
                                                   "--algorithm v2 --window 10 --reserve 600",
                                                   "python -m predictor predict --user carol --walltime 48:00:00 "
                                                   "--algorithm tang --percentile 90 --window-days 30"))
    _add_dsn(predict, "a role in softwalltime_reader")
    predict.add_argument("--user", required=True, type=checked(_name),
                         help="the job owner's user name, as in the accounting log")
    predict.add_argument("--walltime", required=True, type=duration, help="[[HH:]MM:]SS, at least 1 s")
    _add_algorithm(predict)
    predict.add_argument("--submit-time", type=whole_number(0, MAX_EPOCH, "epoch seconds"),
                         help="tang: the job's submission, epoch seconds (default: now)")
    predict.add_argument("--project", default="_pbs_project_default",
                         help="tang: the job's PBS project (default: PBS's default project, _pbs_project_default)")
    predict.add_argument("--timeout", type=bounded(float, 0.001, _MAX_TIMEOUT_S, "seconds"), default=2.0,
                         help="seconds for connecting and querying together (default 2)")
    predict.set_defaults(func=_predict)


_OPTION_OF = {"reserve_s": "--reserve"}
"""Predictor parameters whose option is not ``--`` and the parameter's name with dashes."""


def _add_algorithm(parser):
    """--algorithm and an option per predictor parameter, each with its bounds and defaults from the registry."""
    parser.add_argument("--algorithm", default=DEFAULT_ALGORITHM, choices=sorted(REGISTRY),
                        help="predictor (default {})".format(DEFAULT_ALGORITHM))
    for parameter, allowed in PARAMETERS.items():
        option = _OPTION_OF.get(parameter, "--" + parameter.replace("_", "-"))
        kind = {"choices": allowed.choices} if allowed.choices else {
            "type": whole_number(allowed.low, allowed.high), "metavar": option[2:].upper().replace("-", "_")}
        parser.add_argument(option, dest=parameter, help="{} (default: {})".format(
            allowed.meaning, _defaults_text(parameter)), **kind)


def _defaults_text(parameter):
    """``v1, v2 2; v3, v3-deployed 15; tang 1000``: each predictor's default, the predictors sharing one together."""
    by_default = {}
    for name, spec in REGISTRY.items():
        if spec.settable(parameter):
            by_default.setdefault(spec.defaults[parameter], []).append(name)
    return "; ".join("{} {}".format(", ".join(names), value) for value, names in by_default.items())


def _add_hooks(commands):
    hooks = commands.add_parser("hooks", help="PBS hooks", description="PBS hooks", epilog=examples_epilog(
        "python -m predictor hooks qmgr --config {} > install-hooks.sh".format(_CONFIG),
        "python -m predictor hooks qmgr --disable")).add_subparsers(dest="hooks_command", metavar="ACTION")
    hooks.required = True
    qmgr = hooks.add_parser(
        "qmgr", help="print the qmgr commands that install, disable or remove the hooks",
        description="print the qmgr commands that install, disable or remove the hooks",
        epilog=examples_epilog("python -m predictor hooks qmgr --config {} --jobobit-config {} > install-hooks.sh"
                               .format(
                             _CONFIG, _CONFIG.replace("hooks.json", "jobobit.json")),
                         "python -m predictor hooks qmgr --config {} --no-jobobit".format(_CONFIG),
                         "python -m predictor hooks qmgr --uninstall"))
    qmgr.add_argument("--config", help="the hooks' JSON config file, validated first (needed to install)")
    qmgr.add_argument("--jobobit-config", help="a separate config for jobobit, holding writer_dsn (default: --config)")
    qmgr.add_argument("--prefix", help="hook names are PREFIX and PREFIX_jobobit (default: softwalltime)")
    qmgr.add_argument("--order", type=whole_number(1, 1000),
                      help="hook order, 1..1000, lower runs first (default: 900)")
    qmgr.add_argument("--allow-readable", action="store_true",
                      help="install a config that holds a password though group or others may read it")
    qmgr.add_argument("--no-jobobit", action="store_true",
                      help="no jobobit hook (PBS without that event, e.g. OpenPBS < 22.05: use ingest --follow)")
    actions = qmgr.add_mutually_exclusive_group()
    actions.add_argument("--disable", action="store_true", help="print the commands that disable the hooks instead")
    actions.add_argument("--uninstall", action="store_true", help="print the commands that delete the hooks instead")
    qmgr.set_defaults(func=_hooks_qmgr)


def _add_doctor(commands):
    summary = "check a deployment before going live: config, database roles, the hooks in PBS, the server's Python"
    doctor = commands.add_parser("doctor", help=summary, description=summary, epilog=examples_epilog(
        "python -m predictor doctor --config {} --jobobit-config {}".format(
            _CONFIG, _CONFIG.replace("hooks.json", "jobobit.json")),
        "python -m predictor doctor --config {} --no-pbs".format(_CONFIG)))
    doctor.add_argument("--config", required=True, help="the predicting hook's JSON config")
    doctor.add_argument("--jobobit-config", help="the jobobit hook's config, if separate")
    doctor.add_argument("--prefix", help="hook names are PREFIX and PREFIX_jobobit (default: softwalltime)")
    doctor.add_argument("--no-pbs", action="store_true", help="check the config and the database only")
    doctor.set_defaults(func=_doctor)


def _name(text):
    """A user or queue name: not empty, and text (a name the terminal could not decode never matches a
    name PBS recorded, and the database would refuse it)."""
    if not text.strip():
        raise ValueError("must not be empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("{!r}: not valid UTF-8 (check the terminal's locale)".format(
            text.encode("utf-8", "surrogateescape"))) from None
    return text


_REPORT_EXAMPLES = examples_epilog("python -m predictor report --since 2026-03-01 --until 2026-03-31",
                                   "python -m predictor report --queue workq --plot /tmp/softwalltime-plots",
                                   "python -m predictor report --user alice --since 2026-01-01 --json alice-2026.json")


def _add_report(commands):
    summary = "how accurate the soft walltimes set were: errors, accuracy, per-user gains, from completed_jobs"
    report = commands.add_parser("report", help=summary,
                                 description=summary + " (jobs without a soft walltime are counted apart)",
                                 epilog=_REPORT_EXAMPLES)
    _add_dsn(report, "a role in softwalltime_reader")
    from ..report.selection import parse_day
    report.add_argument("--since", type=checked(parse_day), metavar="YYYY-MM-DD",
                        help="first day (UTC) of job end times (default: 30 days before the end)")
    report.add_argument("--until", type=checked(parse_day), metavar="YYYY-MM-DD",
                        help="last day (UTC) of job end times, included (default: up to now)")
    report.add_argument("--user", type=checked(_name), help="only this user's jobs")
    report.add_argument("--queue", type=checked(_name), help="only jobs of this queue")
    report.add_argument("--csv", metavar="PATH", help="also write the tables as CSV ('-': stdout, no text table)")
    report.add_argument("--json", metavar="PATH", help="also write the tables as JSON ('-': stdout, no text table)")
    report.add_argument("--plot", metavar="DIR", help="write PNG figures into DIR: V curve, box plots by runtime "
                                                      "class, users' mean errors")
    report.add_argument("--wide", action="store_true", help="show every column of the text tables (default: the "
                        "essential ones, within 100 columns; --csv and --json always hold them all)")
    report.set_defaults(func=_report)


def _require_dsn(args):
    """The DSN of --dsn, else of $PBS_SOFTWALLTIME_DSN; a password given on the command line is warned about."""
    if args.dsn and _holds_password(args.dsn):
        print("warning: --dsn holds a password, which every local user can read in the process table (ps): "
              "put it in a passfile= (mode 0600) or the DSN in ${}".format(DSN_ENV), file=sys.stderr, flush=True)
    dsn = args.dsn or os.environ.get(DSN_ENV)
    if not dsn:
        raise PredictorError("no database: give --dsn or set ${}".format(DSN_ENV))
    return dsn


_PASSWORD_KEY = re.compile(r"(?:^|\s)password\s*=")


def _holds_password(dsn):
    """Does a key=value DSN or a URI carry a password (``password=``, or ``user:secret@`` in a URI)?"""
    if re.match(r"postgres(?:ql)?://", dsn):
        try:
            parts = urllib.parse.urlsplit(dsn)
            return parts.password is not None or "password=" in parts.query
        except ValueError:
            return ":" in dsn.partition("://")[2].partition("@")[0]
    return _PASSWORD_KEY.search(dsn) is not None


def _psycopg2():
    try:
        import psycopg2
    except ImportError:
        raise PredictorError("this command needs psycopg2: install it with your distribution (python3-psycopg2) "
                             "or pip install 'pbs-softwalltime[admin]'") from None
    return psycopg2


def _parameters(algorithm):
    """``window 15, reserve 900 s`` and, for tang, its own parameters."""
    if algorithm.percentile is not None:
        return "percentile {}, window_days {}, min_history {}, key {}, min_ratio_pct {}, reserve {} s".format(
            algorithm.percentile, algorithm.window_days, algorithm.min_history, algorithm.key,
            algorithm.min_ratio_pct, algorithm.reserve_s)
    return "window {}, reserve {} s".format(algorithm.window, algorithm.reserve_s)


def _db_init(args):
    _psycopg2()
    from ..db.schema import init_schema
    applied = init_schema(_require_dsn(args), args.sql_dir, args.statement_timeout, args.connect_timeout)
    print("applied schema versions " + ", ".join(map(str, applied)) if applied else "schema is up to date")
    return 0


def _db_prune(args):
    _psycopg2()
    from ..db.prune import DEFAULT_KEEP_PER_USER, prune
    keep = args.keep_per_user or DEFAULT_KEEP_PER_USER
    if args.config:
        from ..server.config import read_hook_config
        algorithm = read_hook_config(args.config).algorithm
        if algorithm.window_days is not None and args.older_than < algorithm.window_days:
            raise ConfigError("--older-than {}: {}'s time window is {} days; keep at least those".format(
                args.older_than, algorithm.name, algorithm.window_days))
        if algorithm.window != EVERY_ROW:  # a time-window predictor is served by --older-than instead
            keep = max(keep, algorithm.window)
    before = int(time.time()) - args.older_than * 86400
    count = prune(_require_dsn(args), before, keep, args.dry_run, args.statement_timeout, args.connect_timeout)
    print("{} {} completed job(s) that ended before {} and are not among their user's newest {}".format(
        "would delete" if args.dry_run else "deleted", count,
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(before)), keep))
    return 0


def _ingest(args):
    _psycopg2()
    from ..cmdline.progress import ProgressBar
    from ..db.sessions import connect, session_dsn
    from ..ingest.ingester import Ingester, nothing_to_load
    problem = None if args.follow else nothing_to_load(args.paths)
    if problem:  # before connecting: a cron job's wrong path is one line, whatever the database does
        raise PredictorError(problem)
    dsn = _require_dsn(args)
    session_dsn(dsn, args.statement_timeout, read_only=False)  # a malformed DSN stops here, even under --follow

    def warn(message):
        print("warning: " + message, file=sys.stderr, flush=True)
    rejects = RejectPrinter(args.max_errors)
    ingester = Ingester(lambda: connect(dsn, args.statement_timeout, False, args.connect_timeout), args.chunk_lines,
                        on_reject=rejects, on_warning=warn, workers=args.workers)
    progress = ProgressBar("ingesting", unit="B", unit_scale=True)  # bytes: one big file moves too
    started = time.monotonic()
    try:
        if args.follow:
            ingester.follow(args.paths, args.interval)
        else:
            ingester.ingest(args.paths, progress)
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: what was committed stays, the next run resumes there
        _close_ingest(progress, ingester, rejects)
        how = "terminated (SIGTERM)" if isinstance(stop, Terminated) else "interrupted"
        if not args.follow:  # a half load must not look like a whole one to cron: 130 or 143
            print("{}: {} in {:.1f} s; what was loaded is committed, the next run goes on from there".format(
                how, ingester.stats, time.monotonic() - started), file=sys.stderr)
            raise
        print("stopped, {}: {} in {:.1f} s".format(how, ingester.stats, time.monotonic() - started),
              file=sys.stderr)  # a follower's normal end (systemctl stop): its usual status
    else:
        _close_ingest(progress, ingester, rejects)
        print("{} in {:.1f} s".format(ingester.stats, time.monotonic() - started), file=sys.stderr)
    stats = ingester.stats
    failed = stats.missing or stats.empty or stats.unreadable or stats.not_accounting
    return 2 if failed else 1 if stats.rejected else 0


_INGEST_TIMEOUT_S = 600.0
"""The ingester's statement and lock timeout: a chunk's commit is never near it."""


def _close_ingest(progress, ingester, rejects):
    """Close the bar, the workers and the connection, and print the rejected lines' tail; a second Ctrl-C
    meanwhile does not stop the clean-up."""
    with _signals_held():
        progress.close()
        ingester.close()
        rejects.close()


@contextlib.contextmanager
def _signals_held():
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _predict(args):
    from ..server.dsn import connect_params
    from ..server.store import HookHistory
    algorithm = make_algorithm(args.algorithm, **{parameter: getattr(args, parameter) for parameter in PARAMETERS})
    try:
        params = connect_params(_require_dsn(args))
    except ConfigError as err:
        raise ConfigError("--dsn: {}".format(err)) from None
    submit_time = int(time.time()) if args.submit_time is None else args.submit_time
    since = algorithm.since(submit_time)
    with HookHistory(params, timeout_s=args.timeout) as store:
        if algorithm.by_project:
            history = store.project_recent(args.project, algorithm.window, since=since)
        else:
            history = store.recent(args.user, algorithm.window, since=since)
    soft = algorithm.predict(history, args.walltime, submit_time, args.project)
    print("{} for user {}, walltime {}, {} ({})".format(
        "no soft_walltime" if soft is None else "soft_walltime {} ({} s)".format(format_duration(soft), soft),
        args.user, format_duration(args.walltime), algorithm.name, _parameters(algorithm)))
    print("history: {} completed job(s), newest first{}".format(len(history), ":" if history else ""))
    for row in history:
        print("  {}  ended {}  runtime {}  walltime {}  project {}".format(
            row.job_id, time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(row.end_time)),
            format_duration(row.runtime_s), "-" if row.walltime_s is None else format_duration(row.walltime_s),
            row.project or "-"))
    return 0


def _report(args):
    _psycopg2()
    from ..report.command import run_report
    from ..report.selection import selection_for
    selection = selection_for(args.since, args.until, args.user, args.queue, now=time.time())
    return run_report(_require_dsn(args), selection, args.csv, args.json, args.plot, args.wide)


def _hooks_qmgr(args):
    from . import qmgr
    with_jobobit, prefix = not args.no_jobobit, args.prefix or qmgr.DEFAULT_PREFIX
    if args.no_jobobit and args.jobobit_config:
        raise ConfigError("--no-jobobit and --jobobit-config contradict each other: give one")
    if args.disable or args.uninstall:
        given = [option for option, value in (("--config", args.config), ("--jobobit-config", args.jobobit_config),
                                              ("--order", args.order)) if value is not None]
        if given:
            raise ConfigError("{} has no effect with --{}: leave it out".format(
                given[0], "disable" if args.disable else "uninstall"))
        command = qmgr.disable_commands if args.disable else qmgr.uninstall_commands
        lines = command(prefix, with_jobobit)
    elif not args.config:
        raise ConfigError("give --config FILE.json: the hooks' config")
    else:
        order = qmgr.DEFAULT_ORDER if args.order is None else args.order
        lines = qmgr.install_commands(args.config, prefix, order, with_jobobit, args.jobobit_config,
                                      allow_readable=args.allow_readable)
    print("\n".join(lines))
    return 0


def _doctor(args):
    from .doctor import format_check, run_checks
    from .qmgr import DEFAULT_PREFIX
    failed = False
    for check in run_checks(args.config, args.jobobit_config, args.prefix or DEFAULT_PREFIX, not args.no_pbs):
        print(format_check(check), flush=True)
        failed = failed or check.status == "FAIL"
    return 1 if failed else 0


def main(argv=None):
    """Run one command; returns the exit status."""
    def run():
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as done:  # -h printed the help, or a bad command line its one line
            return done.code
        with sigterm_raises():  # SIGTERM stops a command as Ctrl-C does (status 143), its clean-up run
            return args.func(args)
    return exit_status(PROG, run)
