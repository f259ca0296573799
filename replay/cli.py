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

import gc
import importlib
import os
import sys

# Before numpy is imported (by the command's module): the replay's numpy work is element-wise and its parallel
# runs are processes, so OpenBLAS's pool of threads would only add to every command's start-up and sit idle beside
# the workers. A setting of the admin's own is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from predictor.cmdline.exits import end_process, exit_status, sigterm_raises  # noqa: E402
from predictor.cmdline.parser import CommandParser, examples_epilog  # noqa: E402

__all__ = ["main", "entry_point", "build_parser", "command_module", "command_name", "with_command", "COMMANDS",
           "DEFAULT_COMMAND", "USAGE_EXAMPLES"]

PROG = "python -m replay"
INSTALLED_PROG = "pbs-replay"
"""The script ``pip install`` puts on the PATH (setup.cfg)."""
DEFAULT_COMMAND = "accuracy"

COMMANDS = {"accuracy": "replay.accuracy.command", "convert": "replay.traces.command",
            "simulate": "replay.simulation.command", "sweep": "replay.sweep.command",
            "fidelity": "replay.fidelity.command"}
"""Command name -> its module's name, in the order ``-h`` lists them. A command line imports only the module of
the command it runs (the others' imports would add to every run's start); ``-h`` imports them all."""

USAGE_EXAMPLES = ("python -m replay traces/hpc2n-2002-accounting",
                  "python -m replay simulate traces/HPC2N-2002-subset.swf --json out.json",
                  "python -m replay convert traces/HPC2N-2002-subset.swf accounting/")
"""The examples ending ``python -m replay -h``."""


def command_module(name):
    """The module of command ``name``. An ImportError of a module an extra installs (the replay extra's numpy,
    pandas) reaches ``exit_status``, which says what to install.

    The garbage collector is paused while it is imported: numpy and the command's modules make many objects and
    no garbage, and the collections they set off only cost time (a few milliseconds of every command's
    start)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(COMMANDS[name])
    finally:
        if collecting:
            gc.enable()


def command_name(argv):
    """The command ``argv`` runs: its first word if that names one, else the default (``python -m replay
    LOGS...`` is ``python -m replay accuracy LOGS...``); None for no words or ``-h``, which list every command."""
    if not argv or argv[0] in ("-h", "--help"):
        return None
    return argv[0] if argv[0] in COMMANDS else DEFAULT_COMMAND


def with_command(argv):
    """``argv`` with its command named: ``python -m replay LOGS...`` is ``python -m replay accuracy LOGS...``."""
    name = command_name(argv)
    return argv if name is None or argv[0] == name else [name] + argv


def build_parser(names=None, prog=PROG):
    """The parser of ``python -m replay COMMAND`` (``prog``: how it was started): one subcommand each (of
    ``names``, default all), its ``func`` the command's ``run``."""
    parser = CommandParser(prog=prog, usage="%(prog)s [COMMAND] ARGS...", epilog="Without COMMAND: {}. '{} COMMAND -h' "
                           "shows a command's options.\n\n{}".format(DEFAULT_COMMAND, prog,
                                                                     examples_epilog(*USAGE_EXAMPLES)))
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMANDS if names is None else names:
        module = command_module(name)
        command = commands.add_parser(name, prog="{} {}".format(prog, name), help=module.SUMMARY,
                                      description=module.SUMMARY, epilog=examples_epilog(*module.EXAMPLES))
        module.add_arguments(command)
        command.set_defaults(func=module.run, command_parser=command)
    return parser


def _parse(parser, argv):
    """``(run, args)``: the command's function and its options (nothing else in them)."""
    args, extra = parser.parse_known_args(argv)
    options = vars(args)
    run, command_parser = options.pop("func"), options.pop("command_parser")
    if extra:  # named by the command's own parser, whose -h lists the options
        command_parser.error("unrecognized arguments: " + " ".join(extra))
    return run, args


def main(argv=None, prog=PROG):
    """Run one command; returns the exit status. ``prog``: how the replay was started, in its messages."""
    argv = sys.argv[1:] if argv is None else list(argv)

    def run():
        name = command_name(argv)
        parser = build_parser(None if name is None else [name], prog)
        if not argv:
            parser.print_help(sys.stderr)
            return 2
        try:
            command, args = _parse(parser, with_command(argv))
        except SystemExit as done:  # -h printed the help, or a bad command line its one line
            return done.code
        with sigterm_raises():  # SIGTERM stops a command as Ctrl-C does: its workers with it, status 143
            return command(args)
    return exit_status(prog, run)


def entry_point():
    """``python -m replay`` and ``pbs-replay``: ``main``, then the process ends with its status (``end_process``,
    without Python's teardown). Its messages name it as the admin started it."""
    installed = os.path.basename(sys.argv[0]) == INSTALLED_PROG
    end_process(main(prog=INSTALLED_PROG if installed else PROG), teardown=False)
