"""The argument parser of both command lines (``python -m predictor``, ``python -m replay``).

A bad command line is one line on stderr naming the command, then exit status
2: the usage is one ``-h`` away. Each command's ``-h`` ends with examples,
one command line each (``examples_epilog``).
"""

import argparse
import sys

__all__ = ["CommandParser", "examples_epilog", "one_line"]


def one_line(text):
    """``text`` with its control characters (a carriage return or line feed a user typed in a value, say)
    written as escapes, so that a message stays one line (undecodable bytes, kept as surrogates, are left
    for the error stream to write as ``\\xff``)."""
    return "".join(char if char.isprintable() or char == "\t" or "\udc80" <= char <= "\udcff" else repr(char)[1:-1]
                   for char in text)


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, and whose ``-h`` keeps the description's line breaks."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, "{0}: error: {1} (see '{0} -h')\n".format(self.prog, one_line(message)))

    def print_help(self, file=None):
        # argparse would swallow a closed pipe and exit 0; the command ends quietly with the SIGPIPE status instead.
        (file or sys.stdout).write(self.format_help())


def examples_epilog(*lines):
    """The end of a ``-h``: one example command line each."""
    return "examples:\n" + "".join("  {}\n".format(line) for line in lines)
