"""``python -m replay [accuracy] LOGS``: every predictor's soft walltimes against the runtimes that followed.

    python -m replay traces/hpc2n-2002-accounting --at start --plot plots/

See docs/replay.md.
"""

import argparse

from predictor.cmdline.arguments import duration
from predictor.cmdline.outputs import OutputPaths, check_outputs, publish
from predictor.cmdline.progress import ProgressBar

from ..shared.options import add_input_arguments, add_wide_argument, predictor_names
from ..shared.predictors import ACCURACY_PREDICTORS, resolved
from ..traces.columns import JobColumns
from ..traces.readers import read_trace

__all__ = ["SUMMARY", "EXAMPLES", "add_arguments", "run"]

SUMMARY = "measure every predictor's soft-walltime accuracy on a trace (default command)"
EXAMPLES = ("python -m replay traces/hpc2n-2002-accounting",
            "python -m replay /var/spool/pbs/server_priv/accounting --at start --plot plots/",
            "python -m replay trace.swf --predictors v1,v3 --json metrics.json --jobs-csv jobs.csv")


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: {!r}".format(text)) from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be in [0, 1): {}".format(text))
    return value


def add_arguments(parser):
    """The ``accuracy`` options."""
    parser.add_argument("paths", nargs="+", metavar="LOGS",
                        help="PBS accounting files or YYYYMMDD directories, or one SWF file (.gz is fine)")
    add_input_arguments(parser)
    parser.add_argument("--predictors", type=predictor_names, metavar="NAMES",
                        help="comma-separated (default: {}; recorded only if the log has soft walltimes); "
                             "ALGORITHM:param=value sets parameters, e.g. tang:percentile=70:window_days=14".format(
                            ",".join(ACCURACY_PREDICTORS)))
    parser.add_argument("--at", choices=("submit", "start", "both"), default="both",
                        help="prediction instant(s) to report: submit (queuejob), start (runjob); default both")
    parser.add_argument("--runjob-after-queued", dest="runjob_after_queued_s", type=duration, metavar="[[HH:]MM:]SS",
                        help="runjob predicts again only for jobs that waited this long; the others keep their "
                             "submit value at start (CESNET's production hook: 01:00:00); default: every job")
    parser.add_argument("--warmup", type=_fraction, default=0.01, metavar="FRACTION",
                        help="leave the first FRACTION of jobs out of the metrics (default 0.01, as Rubio et al.)")
    parser.add_argument("--json", metavar="FILE", help="write the metrics as JSON ('-': stdout)")
    parser.add_argument("--csv", metavar="FILE", help="write the metrics as CSV ('-': stdout)")
    parser.add_argument("--jobs-csv", metavar="FILE", help="write one row per job with every prediction")
    parser.add_argument("--plot", metavar="DIR", help="write PNG figures (V curve, box plots) into DIR")
    add_wide_argument(parser)
    parser.add_argument("--classify", action="store_true",
                        help="add the small/large classification table: precision and recall of Zrigui et al.'s "
                             "online classifier (what simulate --policy small-first orders by)")


def _replay(trace, predictors, instants, runjob_after_queued_s=None):
    from .predictions import replay_accuracy
    progress = ProgressBar("replaying {} jobs".format(len(trace.jobs)), unit="event")
    try:
        return replay_accuracy(trace.jobs, predictors, progress, instants, runjob_after_queued_s)
    finally:
        progress.close()


def _has_soft_walltimes(jobs):
    if isinstance(jobs, JobColumns):
        return jobs.has_values("soft_walltime_s")
    return any(job.soft_walltime_s is not None for job in jobs)


def _default_predictors(trace):
    """ACCURACY_PREDICTORS, without ``recorded`` when no job has a soft walltime in the log."""
    if _has_soft_walltimes(trace.jobs):
        return resolved(ACCURACY_PREDICTORS), ()
    names = tuple(name for name in ACCURACY_PREDICTORS if name != "recorded")
    return resolved(names), ("no soft walltime recorded in the log: predictor 'recorded' left out",)


def run(args):
    """Read, replay every predictor, report; the exit status (1: some lines were malformed)."""
    from .metrics import accuracy_report, warmup_count
    from .predictions import job_table
    outputs = check_outputs(OutputPaths(args.json, args.csv, args.jobs_csv, args.plot), args.paths)
    trace, rejects = read_trace(args.paths, args.format, args.max_errors, as_columns=True)
    predictors, notes = (args.predictors, ()) if args.predictors else _default_predictors(trace)
    instants = ("submit", "start") if args.at == "both" else (args.at,)
    predictions = _replay(trace, predictors, instants, args.runjob_after_queued_s)
    title = "Soft-walltime accuracy replay of {} ({} format, {} jobs)".format(
        trace.name, trace.source_format.upper(), len(trace.jobs))
    report = accuracy_report(title, tuple(trace.stats.notes(len(trace.jobs))) + notes, trace.jobs, predictions,
                             args.warmup)
    if args.classify:
        from ..classification.table import with_classification
        report = with_classification(report, trace.jobs)
    first = warmup_count(len(trace.jobs), args.warmup)
    publish(outputs, report, job_table(trace.jobs, predictions, first),
            lambda directory: _plot(directory, trace, predictions, first), wide=bool(args.wide))
    return 1 if rejects.count else 0


def _plot(directory, trace, predictions, first):
    from .plots import plot_accuracy
    plot_accuracy(directory, trace.name, trace.jobs, predictions, first)
