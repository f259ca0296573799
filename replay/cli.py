"""``python -m replay``: the accuracy replay (default command), ``convert``, and more by registry.

    python -m replay LOGS...                 # same as: python -m replay accuracy LOGS...
    python -m replay convert IN... OUT

A command is an entry of ``COMMANDS``: a summary, ``add_arguments(parser)``,
``run(args) -> exit status`` and the examples ending its ``-h``. A command
living in its own module is one ``_from_module`` entry.

Exit status: 0 success; 1 some input lines were malformed (each reported on
stderr as file:line: reason, skipped; the rest was used); 2 an error stopped
the command (one line on stderr, never a traceback; no output file written);
130 interrupted; 141 the reader of the output went away (``| head``),
silently, as a tool killed by SIGPIPE.
"""

import argparse
import importlib
import os
import sys
from typing import Callable, NamedTuple, Tuple

from .errors import ReplayError
from .options import epoch_seconds, server_name, whole_number
from .outputs import STDOUT, OutputFiles, check_directory, check_file, check_not_input, check_outputs

__all__ = ["main", "COMMANDS", "Command", "DEFAULT_COMMAND", "USAGE_EXAMPLES", "command_parser", "examples_epilog"]

PROG = "python -m replay"
_BROKEN_PIPE_STATUS = 128 + 13
"""What a shell reports for a tool killed by SIGPIPE."""


class Command(NamedTuple):
    """A subcommand: ``add_arguments(parser)`` then ``run(args)`` returns the exit status."""

    summary: str
    add_arguments: Callable
    run: Callable
    examples: Tuple[str, ...] = ()


class _UsageError(ReplayError):
    """A bad command line; argparse would print usage and exit, we print one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError("{} (see '{} -h')".format(message, self.prog))

    def print_help(self, file=None):
        # argparse would swallow a closed pipe and exit 0; main() ends quietly with the SIGPIPE status instead.
        (file or sys.stdout).write(self.format_help())


def examples_epilog(examples):
    """The end of a ``-h``: one example command line each."""
    return "examples:\n" + "".join("  {}\n".format(line) for line in examples)


def _from_module(module_name, summary, examples=()):
    """A command whose ``add_arguments`` and ``run`` live in ``module_name``, imported when used."""
    return Command(summary, lambda parser: importlib.import_module(module_name).add_arguments(parser),
                   lambda args: importlib.import_module(module_name).run(args), tuple(examples))


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: {!r}".format(text)) from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be in [0, 1): {}".format(text))
    return value


def _predictor_names(text):
    from .predictors import predictor_list
    try:
        return predictor_list(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _add_input_arguments(parser):
    parser.add_argument("--format", choices=("auto", "pbs", "swf"), default="auto",
                        help="input format (default: told from the content; a directory is PBS)")
    parser.add_argument("--max-errors", type=whole_number(0, 10 ** 9), default=20, metavar="N",
                        help="malformed lines to show on stderr (default 20; all are counted)")


def _accuracy_arguments(parser):
    from .predictors import ACCURACY_PREDICTORS
    parser.add_argument("paths", nargs="+", metavar="LOGS",
                        help="PBS accounting files or YYYYMMDD directories, or one SWF file (.gz is fine)")
    _add_input_arguments(parser)
    parser.add_argument("--predictors", type=_predictor_names, metavar="NAMES",
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
    _add_input_arguments(parser)
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


COMMANDS = {
    "accuracy": Command("measure every predictor's soft-walltime accuracy on a trace (default command)",
                        _accuracy_arguments, _run_accuracy, (
                            "python -m replay traces/hpc2n-2002-accounting",
                            "python -m replay /var/spool/pbs/server_priv/accounting --at start --plot plots/",
                            "python -m replay trace.swf --predictors v1,v3 --json metrics.json --jobs-csv jobs.csv")),
    "convert": Command("convert a trace between SWF and PBS accounting-log format",
                       _convert_arguments, _run_convert, (
                           "python -m replay convert traces/HPC2N-2002-subset.swf accounting/ --gzip",
                           "python -m replay convert trace.swf 20020728 --epoch 1027836000 --server pbs01",
                           "python -m replay convert /var/spool/pbs/server_priv/accounting trace.swf")),
    "simulate": _from_module("replay.simulation.simulate", "replay a trace through a simulated PBS scheduler", (
        "python -m replay simulate traces/hpc2n-2002-accounting",
        "python -m replay simulate trace.swf --predictors user,v3 --backfill-depth 2 --json out.json --plot figs/",
        "python -m replay simulate accounting/ --nodes 64 --cores-per-node 32 --policy sjf")),
    "sweep": _from_module("replay.sweep.command", "many simulate runs over a grid, here or as a PBS job array"),
}
"""Subcommand name -> Command."""

DEFAULT_COMMAND = "accuracy"


USAGE_EXAMPLES = ("python -m replay traces/hpc2n-2002-accounting",
                  "python -m replay simulate traces/HPC2N-2002-subset.swf --json out.json",
                  "python -m replay convert traces/HPC2N-2002-subset.swf accounting/")
"""The examples ending ``python -m replay -h``."""


def _usage():
    lines = ["usage: {} [COMMAND] ARGS...".format(PROG), "", "commands:"]
    lines += ["  {:<10} {}".format(name, command.summary) for name, command in COMMANDS.items()]
    lines += ["", "Without COMMAND: {}. '{} COMMAND -h' shows a command's options.".format(DEFAULT_COMMAND, PROG)]
    return "\n".join(lines) + "\n\n" + examples_epilog(USAGE_EXAMPLES)


def _split(argv):
    if argv and argv[0] in COMMANDS:
        return argv[0], argv[1:]
    return DEFAULT_COMMAND, argv


def command_parser(name):
    """The argument parser of command ``name``, its examples at the end of its ``-h``."""
    command = COMMANDS[name]
    parser = _Parser(prog="{} {}".format(PROG, name), description=command.summary,
                     epilog=examples_epilog(command.examples), formatter_class=argparse.RawDescriptionHelpFormatter)
    command.add_arguments(parser)
    return parser


def _run(argv):
    if not argv or argv[0] in ("-h", "--help"):
        (sys.stdout if argv else sys.stderr).write(_usage())
        return 0 if argv else 2
    name, rest = _split(argv)
    try:
        return COMMANDS[name].run(command_parser(name).parse_args(rest))
    except (ReplayError, ValueError) as err:
        sys.stderr.write("{}: error: {}\n".format(PROG, err))
        return 2
    except OSError as err:
        if isinstance(err, BrokenPipeError):
            raise
        sys.stderr.write("{}: error: {}\n".format(PROG, _os_error(err)))  # one the readers did not expect
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("{}: interrupted\n".format(PROG))
        return 130


def _os_error(err):
    return "{}: {}".format(err.filename, err.strerror) if err.filename and err.strerror else str(err)


def main(argv=None):
    """Run one command; returns the exit status."""
    try:
        status = _run(sys.argv[1:] if argv is None else list(argv))
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, and let nothing flush into the closed pipe at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            os.dup2(devnull, stream.fileno())
        return _BROKEN_PIPE_STATUS
