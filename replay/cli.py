"""``python -m replay``: the accuracy replay (the default command), ``convert``, ``simulate``, ``sweep`` and
``fidelity``.

    python -m replay LOGS...                 # same as: python -m replay accuracy LOGS...
    python -m replay convert IN... OUT

This module only dispatches. Each command is a module with ``SUMMARY``,
``EXAMPLES``, ``add_arguments(parser)`` and ``run(args)``, which returns the
exit status; its examples end its ``-h``.

Exit status: 0 success; 1 some input lines were malformed (each reported on
stderr as file:line: reason, skipped; the rest was used); 2 an error stopped
the command (one line on stderr, never a traceback; no output file written);
130 interrupted (Ctrl-C; the process ends by SIGINT, which a shell reports as
130), 143 terminated (SIGTERM), its worker processes stopped with it; 141 the
reader of the output went away (``| head``), silently, as a tool killed by
SIGPIPE. Any other exception is a bug: its traceback is shown, with a line
asking to report it, and the status is 1 (see predictor.cmdline.exits).
"""

import argparse
import sys

from predictor.cmdline.exits import exit_status, missing_extra, sigterm_raises
from predictor.cmdline.parser import CommandParser, examples_epilog

try:
    from .accuracy import command as accuracy
    from .fidelity import command as fidelity
    from .simulation import command as simulate
    from .sweep import command as sweep
    from .traces import command as convert
except ImportError as err:  # installed without the replay extra: main() says which to install
    if missing_extra(err) is None:
        raise
    _MISSING = err
else:
    _MISSING = None

__all__ = ["main", "build_parser", "with_command", "COMMANDS", "DEFAULT_COMMAND", "USAGE_EXAMPLES"]

PROG = "python -m replay"
DEFAULT_COMMAND = "accuracy"

COMMANDS = {} if _MISSING else {"accuracy": accuracy, "convert": convert, "simulate": simulate, "sweep": sweep,
                                 "fidelity": fidelity}
"""Command name -> its module, in the order ``-h`` lists them."""

USAGE_EXAMPLES = ("python -m replay traces/hpc2n-2002-accounting",
                  "python -m replay simulate traces/HPC2N-2002-subset.swf --json out.json",
                  "python -m replay convert traces/HPC2N-2002-subset.swf accounting/")
"""The examples ending ``python -m replay -h``."""


def build_parser():
    """The parser of ``python -m replay COMMAND``: one subcommand each, its ``func`` the command's ``run``."""
    parser = CommandParser(prog=PROG, usage="%(prog)s [COMMAND] ARGS...", epilog="Without COMMAND: {}. '{} COMMAND -h' "
                           "shows a command's options.\n\n{}".format(DEFAULT_COMMAND, PROG,
                                                                     examples_epilog(*USAGE_EXAMPLES)))
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, module in COMMANDS.items():
        command = commands.add_parser(name, prog="{} {}".format(PROG, name), help=module.SUMMARY,
                                      description=module.SUMMARY, epilog=examples_epilog(*module.EXAMPLES))
        module.add_arguments(command)
        command.set_defaults(func=module.run, command_parser=command)
    return parser


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
        if _MISSING is not None:
            raise _MISSING
        parser = build_parser()
        if not argv:
            parser.print_help(sys.stderr)
            return 2
        try:
            command, args = _parse(parser, argv)
        except SystemExit as done:  # -h printed the help, or a bad command line its one line
            return done.code
        with sigterm_raises():  # SIGTERM stops a command as Ctrl-C does: its workers with it, status 143
            return command(args)
    return exit_status(PROG, run)
