"""``python -m predictor``: db init, ingest, predict, hooks qmgr.

Errors are one line on stderr and a non-zero exit, never a traceback:
0 success, 1 some accounting lines were rejected (the rest was loaded),
2 an error stopped the command.
"""

import argparse
import os
import signal
import sys
import time

from .algorithms import make_algorithm
from .durations import format_duration, parse_duration
from .errors import PredictorError

__all__ = ["main"]

DSN_ENV = "PBS_SOFTWALLTIME_DSN"


def _duration_arg(text):
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _add_dsn(parser):
    parser.add_argument("--dsn", default=os.environ.get(DSN_ENV),
                        help="libpq connection string or URI (default: ${})".format(DSN_ENV))


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m predictor", description="PBS soft-walltime predictor")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    db = commands.add_parser("db", help="database schema").add_subparsers(dest="db_command", metavar="ACTION")
    db.required = True
    init = db.add_parser("init", help="create or upgrade the schema and roles (idempotent)")
    _add_dsn(init)
    init.add_argument("--sql-dir", help="directory of NNN_*.sql schema files (default: the installed ones)")
    ingest = commands.add_parser("ingest", help="load PBS accounting logs into completed_jobs")
    _add_dsn(ingest)
    ingest.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    ingest.add_argument("--follow", action="store_true", help="keep loading new lines and new files")
    ingest.add_argument("--interval", type=float, default=5.0, help="seconds between --follow passes")
    ingest.add_argument("--chunk-lines", type=int, default=10000, help="lines parsed and committed together")
    ingest.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                        help="processes that parse lines (0: parse in the main process; default: up to 4)")
    predict = commands.add_parser("predict", help="print the soft walltime a job would get")
    _add_dsn(predict)
    predict.add_argument("--user", required=True)
    predict.add_argument("--walltime", required=True, type=_duration_arg, help="[[HH:]MM:]SS")
    predict.add_argument("--algorithm", default="v3", choices=["v1", "v2", "v3"])
    predict.add_argument("--window", type=int, help="history window (default: the algorithm's)")
    predict.add_argument("--reserve", type=int, help="reserve in seconds (v2, v3; default 900)")
    predict.add_argument("--timeout", type=float, default=2.0, help="seconds for the whole query")
    _add_hooks(commands)
    return parser


def _add_hooks(commands):
    hooks = commands.add_parser("hooks", help="PBS hooks").add_subparsers(dest="hooks_command", metavar="ACTION")
    hooks.required = True
    qmgr = hooks.add_parser("qmgr", help="print the qmgr commands that install the hooks")
    qmgr.add_argument("--config", help="the hooks' JSON config file, validated first (needed to install)")
    qmgr.add_argument("--jobobit-config", help="a separate config for jobobit, holding writer_dsn (default: --config)")
    qmgr.add_argument("--hooks-dir", help="directory of queuejob.py ... jobobit.py (default: the installed ones)")
    qmgr.add_argument("--prefix", help="hook names are PREFIX_<event> (default: softwalltime)")
    qmgr.add_argument("--order", type=int, help="hook order, 1..1000, lower runs first (default: 900)")
    qmgr.add_argument("--no-jobobit", action="store_true",
                      help="no jobobit hook (PBS without that event, e.g. OpenPBS < 22.05: use ingest --follow)")
    qmgr.add_argument("--disable", action="store_true", help="print the commands that disable the hooks instead")
    qmgr.add_argument("--uninstall", action="store_true", help="print the commands that delete the hooks instead")


def _require_dsn(args):
    if not args.dsn:
        raise PredictorError("no database: give --dsn or set ${}".format(DSN_ENV))
    return args.dsn


def _db_init(args):
    from .schema import init_schema
    applied = init_schema(_require_dsn(args), args.sql_dir)
    print("applied schema versions " + ", ".join(map(str, applied)) if applied else "schema is up to date")
    return 0


def _report_reject(path, line_no, message):
    print("{}:{}: {}".format(path, line_no, message), file=sys.stderr)


def _ingest(args):
    import psycopg2
    from .ingest import Ingester
    from .pgstore import describe_error, session_dsn
    try:
        conn = psycopg2.connect(session_dsn(_require_dsn(args), 600.0, read_only=False))
    except psycopg2.Error as err:
        raise PredictorError(describe_error(err)) from err
    warn = lambda message: print("warning: " + message, file=sys.stderr)
    ingester = Ingester(conn, args.chunk_lines, on_reject=_report_reject, on_warning=warn, workers=args.workers)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    started = time.monotonic()
    try:
        if args.follow:
            ingester.follow(args.paths, args.interval)
        else:
            ingester.ingest(args.paths)
    except KeyboardInterrupt:
        pass
    finally:
        ingester.close()
        conn.close()
        print("{} in {:.1f} s".format(ingester.stats, time.monotonic() - started), file=sys.stderr)
    stats = ingester.stats
    return 2 if stats.missing or stats.unreadable else 1 if stats.rejected else 0


def _predict(args):
    from .pgstore import PgHistory
    algorithm = make_algorithm(args.algorithm, args.window, args.reserve)
    with PgHistory(_require_dsn(args), timeout_s=args.timeout) as store:
        history = store.recent(args.user, algorithm.window)
    soft = algorithm.predict(history, args.walltime)
    print("soft_walltime {} ({} s) for user {}, walltime {}, {} (window {}, reserve {} s)".format(
        format_duration(soft), soft, args.user, format_duration(args.walltime),
        algorithm.name, algorithm.window, algorithm.reserve_s))
    print("history: {} completed job(s), newest first{}".format(len(history), ":" if history else ""))
    for row in history:
        print("  {}  ended {}  runtime {}  walltime {}".format(
            row.job_id, time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(row.end_time)),
            format_duration(row.runtime_s), "-" if row.walltime_s is None else format_duration(row.walltime_s)))
    return 0


def _hooks_qmgr(args):
    from . import qmgr
    with_jobobit, prefix = not args.no_jobobit, args.prefix or qmgr.DEFAULT_PREFIX
    if args.uninstall:
        lines = qmgr.uninstall_commands(prefix, with_jobobit)
    elif args.disable:
        lines = qmgr.disable_commands(prefix, with_jobobit)
    elif not args.config:
        raise PredictorError("give --config FILE.json: the hooks' config")
    else:
        order = qmgr.DEFAULT_ORDER if args.order is None else args.order
        hooks_dir = qmgr.check_hooks_dir(args.hooks_dir) if args.hooks_dir else qmgr.find_hooks_dir()
        lines = qmgr.install_commands(args.config, hooks_dir, prefix, order, with_jobobit, args.jobobit_config)
    print("\n".join(lines))
    return 0


_COMMANDS = {"db": _db_init, "ingest": _ingest, "predict": _predict, "hooks": _hooks_qmgr}


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except (PredictorError, ValueError) as err:
        print("python -m predictor: error: {}".format(err), file=sys.stderr)
        return 2
