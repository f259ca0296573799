"""``python -m replay convert IN... OUT``: a trace from SWF to PBS accounting logs, or back.

See ``convert`` (replay/traces/convert.py) for what is written, and docs/replay.md.
"""

import sys

from predictor.cmdline.rejects import RejectPrinter

from ..shared.options import add_input_arguments, epoch_seconds, server_name

__all__ = ["SUMMARY", "EXAMPLES", "add_arguments", "run"]

SUMMARY = "convert a trace between SWF and PBS accounting-log format"
EXAMPLES = ("python -m replay convert traces/HPC2N-2002-subset.swf accounting/ --gzip",
            "python -m replay convert trace.swf 20020728 --epoch 1027836000 --server pbs01",
            "python -m replay convert /var/spool/pbs/server_priv/accounting trace.swf")


def add_arguments(parser):
    """The ``convert`` options."""
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


def run(args):
    """Convert; the exit status (1: some lines were malformed)."""
    from .convert import convert, output_target
    output_target(args.out, args.paths, args.gzip)  # before reading: a wrong OUT is one line at once
    rejects = RejectPrinter(args.max_errors)
    try:
        trace, written = convert(args.paths, args.out, args.format, rejects, args.epoch, args.server, args.gzip)
    finally:
        rejects.close()
    source, target = ("PBS accounting log", "SWF") if trace.source_format == "pbs" else ("SWF trace", "PBS accounting")
    how = "as --format said" if args.format != "auto" else "told from the content; --format to choose"
    sys.stderr.write("read {} as {} ({})\n".format(", ".join(args.paths), source, how))
    sys.stderr.write("{} jobs written as {} to {} file(s): {}{}\n".format(
        len(trace.jobs), target, len(written), ", ".join(written[:3]), " ..." if len(written) > 3 else ""))
    for note in trace.stats.notes(len(trace.jobs))[1:]:
        sys.stderr.write("  " + note + "\n")
    return 1 if rejects.count else 0
