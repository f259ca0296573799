"""``python -m replay``: the accuracy replay (the default command), ``convert``, ``simulate`` and ``sweep``.

    python -m replay LOGS...                 # same as: python -m replay accuracy LOGS...
    python -m replay convert IN... OUT

Each command is an argparse subcommand whose ``func`` runs it and returns the
exit status; its examples end its ``-h``.

Exit status: 0 success; 1 some input lines were malformed (each reported on
stderr as file:line: reason, skipped; the rest was used); 2 an error stopped
the command (one line on stderr, never a traceback; no output file written);
130 interrupted; 141 the reader of the output went away (``| head``),
silently, as a tool killed by SIGPIPE. Any other exception is a bug: its
traceback is shown, with a line asking to report it, and the status is 1
(see predictor.exits).
"""

import argparse
import os
import sys

from predictor.errors import PredictorError
from predictor.exits import exit_status

from .errors import ReplayError
from .options import add_input_arguments, epoch_seconds, predictor_names, server_name
from .outputs import STDOUT, OutputFiles, check_directory, check_file, check_not_input, check_outputs
from .simulation import simulate
from .sweep import command as sweep

__all__ = ["main", "build_parser", "with_command", "DEFAULT_COMMAND", "USAGE_EXAMPLES", "examples_epilog"]

PROG = "python -m replay"
DEFAULT_COMMAND = "accuracy"


class _UsageError(ReplayError):
    """A bad command line; argparse would print usage and exit, we print one line."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise _UsageError("{} (see '{} -h')".format(message, self.prog))

    def print_help(self, file=None):
        # argparse would swallow a closed pipe and exit 0; main() ends quietly with the SIGPIPE status instead.
        (file or sys.stdout).write(self.format_help())


def examples_epilog(examples):
    """The end of a ``-h``: one example command line each."""
    return "examples:\n" + "".join("  {}\n".format(line) for line in examples)


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: {!r}".format(text)) from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be in [0, 1): {}".format(text))
    return value


def _accuracy_arguments(parser):
    from .predictors import ACCURACY_PREDICTORS
    parser.add_argument("paths", nargs="+", metavar="LOGS",
                        help="PBS accounting files or YYYYMMDD directories, or one SWF file (.gz is fine)")
    add_input_arguments(parser)
    parser.add_argument("--predictors", type=predictor_names, metavar="NAMES",
                        help="comma-separated (default: {}; recorded only if the log has soft walltimes); "
                             "ALGORITHM:param=value sets parameters, e.g. tang:percentile=70:window_days=14".format(
                            ",".join(ACCURACY_PREDICTORS)))
    parser.add_argument("--at", choices=("submit", "start", "both"), default="both",
                        help="prediction instant(s) to report: submit (queuejob), start (runjob); default both")
    parser.add_argument("--warmup", type=_fraction, default=0.01, metavar="FRACTION",
                        help="leave the first FRACTION of jobs out of the metrics (default 0.01, as Rubio et al.)")
    parser.add_argument("--json", metavar="FILE", help="write the metrics as JSON ('-': stdout)")
    parser.add_argument("--csv", metavar="FILE", help="write the metrics as CSV ('-': stdout)")
    parser.add_argument("--jobs-csv", metavar="FILE", help="write one row per job with every prediction")
    parser.add_argument("--plot", metavar="DIR", help="write PNG figures (V curve, box plots) into DIR")
    parser.add_argument("--classify", action="store_true",
                        help="add the small/large classification table: precision and recall of Zrigui et al.'s "
                             "online classifier (what simulate --policy small-first orders by)")


def _replay(trace, predictor_names, instants):
    from .accuracy.accuracy import replay_accuracy
    from .predictors import resolve
    from .progress import ProgressBar
    progress = ProgressBar("replaying {} jobs".format(len(trace.jobs)), unit="event")
    try:
        return replay_accuracy(trace.jobs, [resolve(name) for name in predictor_names], progress, instants)
    finally:
        progress.close()


def _default_predictors(trace):
    """ACCURACY_PREDICTORS, without ``recorded`` when no job has a soft walltime in the log."""
    from .predictors import ACCURACY_PREDICTORS
    if any(job.soft_walltime_s is not None for job in trace.jobs):
        return ACCURACY_PREDICTORS, ()
    names = tuple(name for name in ACCURACY_PREDICTORS if name != "recorded")
    return names, ("no soft walltime recorded in the log: predictor 'recorded' left out",)


def _run_accuracy(args):
    from .accuracy.accuracy import job_table
    from .accuracy.metrics import accuracy_report, warmup_count
    from .report import write_outputs
    from .traces.readers import read_trace
    check_outputs(args, args.paths)
    trace, reporter = read_trace(args)
    names, notes = (args.predictors, ()) if args.predictors else _default_predictors(trace)
    instants = ("submit", "start") if args.at == "both" else (args.at,)
    predictions = _replay(trace, names, instants)
    title = "Soft-walltime accuracy replay of {} ({} format, {} jobs)".format(
        trace.name, trace.source_format.upper(), len(trace.jobs))
    report = accuracy_report(title, tuple(trace.stats.notes(len(trace.jobs))) + notes, trace.jobs, predictions,
                             args.warmup)
    if args.classify:
        from .classification.table import with_classification
        report = with_classification(report, trace.jobs)
    first = warmup_count(len(trace.jobs), args.warmup)
    with OutputFiles() as files:
        write_outputs(args, report, job_table(trace.jobs, predictions, first), files)
        if args.plot:
            from .accuracy.plots import plot_accuracy
            plot_accuracy(files.directory(args.plot, "--plot"), trace.name, trace.jobs, predictions, first)
    return 1 if reporter.count else 0


def _convert_arguments(parser):
    parser.add_argument("paths", nargs="+", metavar="IN",
                        help="one SWF file, or PBS accounting files / YYYYMMDD directories")
    parser.add_argument("out", metavar="OUT",
                        help="PBS: a file, or a directory (or path ending in /) for daily files; SWF: a file. "
                             "A .gz name compresses; '-' writes one file to stdout")
    add_input_arguments(parser)
    parser.add_argument("--epoch", type=epoch_seconds,
                        help="SWF to PBS: epoch seconds of SWF time 0 (default: the header's UnixStartTime, else 0)")
    parser.add_argument("--server", type=server_name, default="pbsserver",
                        help="SWF to PBS: the PBS server name ending each job id (default pbsserver)")
    parser.add_argument("--gzip", action="store_true", help="compress the daily files of a PBS directory")


def _check_convert_output(args):
    if args.out == STDOUT:
        if args.gzip:
            raise ReplayError("--gzip compresses the daily files of a directory; stdout ('-') is one plain file")
        return
    if os.path.isdir(args.out) or args.out.endswith(os.sep):
        check_directory("OUT", args.out)
    else:
        check_file("OUT", args.out)
    check_not_input("OUT", args.out, args.paths)


def _run_convert(args):
    from .traces.convert import convert
    from .traces.readers import RejectReporter
    _check_convert_output(args)
    reporter = RejectReporter(args.max_errors)
    try:
        trace, written = convert(args.paths, args.out, args.format, reporter, args.epoch, args.server, args.gzip)
    finally:
        reporter.close()
    source, target = ("PBS accounting log", "SWF") if trace.source_format == "pbs" else ("SWF trace", "PBS accounting")
    how = "as --format said" if args.format != "auto" else "told from the content; --format to choose"
    sys.stderr.write("read {} as {} ({})\n".format(", ".join(args.paths), source, how))
    sys.stderr.write("{} jobs written as {} to {} file(s): {}{}\n".format(
        len(trace.jobs), target, len(written), ", ".join(written[:3]), " ..." if len(written) > 3 else ""))
    for note in trace.stats.notes(len(trace.jobs))[1:]:
        sys.stderr.write("  " + note + "\n")
    return 1 if reporter.count else 0


USAGE_EXAMPLES = ("python -m replay traces/hpc2n-2002-accounting",
                  "python -m replay simulate traces/HPC2N-2002-subset.swf --json out.json",
                  "python -m replay convert traces/HPC2N-2002-subset.swf accounting/")
"""The examples ending ``python -m replay -h``."""


def build_parser():
    """The parser of ``python -m replay COMMAND``: one subcommand each, its ``func`` the command itself."""
    parser = _Parser(prog=PROG, usage="%(prog)s [COMMAND] ARGS...", epilog="Without COMMAND: {}. '{} COMMAND -h' "
                     "shows a command's options.\n\n{}".format(DEFAULT_COMMAND, PROG, examples_epilog(USAGE_EXAMPLES)))
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_command(commands, "accuracy", "measure every predictor's soft-walltime accuracy on a trace (default command)",
                 _accuracy_arguments, _run_accuracy, (
                     "python -m replay traces/hpc2n-2002-accounting",
                     "python -m replay /var/spool/pbs/server_priv/accounting --at start --plot plots/",
                     "python -m replay trace.swf --predictors v1,v3 --json metrics.json --jobs-csv jobs.csv"))
    _add_command(commands, "convert", "convert a trace between SWF and PBS accounting-log format",
                 _convert_arguments, _run_convert, (
                     "python -m replay convert traces/HPC2N-2002-subset.swf accounting/ --gzip",
                     "python -m replay convert trace.swf 20020728 --epoch 1027836000 --server pbs01",
                     "python -m replay convert /var/spool/pbs/server_priv/accounting trace.swf"))
    _add_command(commands, "simulate", "replay a trace through a simulated PBS scheduler",
                 simulate.add_arguments, simulate.run, (
                     "python -m replay simulate traces/hpc2n-2002-accounting",
                     "python -m replay simulate trace.swf --predictors user,v3 --backfill-depth 2 --json out.json "
                     "--plot figs/",
                     "python -m replay simulate accounting/ --nodes 64 --cores-per-node 32 --policy sjf"))
    _add_command(commands, "sweep", "many simulate runs over a grid, here or as a PBS job array",
                 sweep.add_arguments, sweep.run)
    return parser


def _add_command(commands, name, summary, add_arguments, run, examples=()):
    parser = commands.add_parser(name, prog="{} {}".format(PROG, name), help=summary, description=summary,
                                 epilog=examples_epilog(examples))
    add_arguments(parser)
    parser.set_defaults(func=run, command_parser=parser)


def with_command(parser, argv):
    """``argv`` with the command named: ``python -m replay LOGS...`` is ``python -m replay accuracy LOGS...``."""
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    if argv and argv[0] not in commands.choices and argv[0] not in ("-h", "--help"):
        return [DEFAULT_COMMAND] + argv
    return argv


def _parse(parser, argv):
    """``(run, args)``: the command's function and its options (nothing else in them)."""
    args, extra = parser.parse_known_args(with_command(parser, argv))
    options = vars(args)
    run, command_parser = options.pop("func"), options.pop("command_parser")
    if extra:  # named by the command's own parser, whose -h lists the options
        command_parser.error("unrecognized arguments: " + " ".join(extra))
    return run, args


def main(argv=None):
    """Run one command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)

    def run():
        parser = build_parser()
        if not argv:
            parser.print_help(sys.stderr)
            return 2
        try:
            command, args = _parse(parser, argv)
        except SystemExit as done:  # -h printed the help
            return done.code
        return command(args)
    return exit_status(PROG, run, (ReplayError, PredictorError))
