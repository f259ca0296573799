"""The argument parser of both command lines (``python -m predictor``, ``python -m replay``).

A bad command line is one line on stderr naming the command, then exit status
2: the usage is one ``-h`` away. Each command's ``-h`` ends with examples,
one command line each (``examples_epilog``).
"""

import argparse
import sys

__all__ = ["CommandParser", "examples_epilog"]


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, and whose ``-h`` keeps the description's line breaks."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, "{0}: error: {1} (see '{0} -h')\n".format(self.prog, message))

    def print_help(self, file=None):
        # argparse would swallow a closed pipe and exit 0; the command ends quietly with the SIGPIPE status instead.
        (file or sys.stdout).write(self.format_help())


def examples_epilog(*lines):
    """The end of a ``-h``: one example command line each."""
    return "examples:\n" + "".join("  {}\n".format(line) for line in lines)
