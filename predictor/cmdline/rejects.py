"""The printer of rejected lines, for every command that reads accounting logs or traces.

``RejectPrinter`` is the ``on_reject(path, line_no, message)`` the ingester
and the trace readers call for each malformed line: the first ``limit`` are
shown as ``file:line: reason`` on stderr, all are counted, and ``close()``
says how many were not shown.
"""

import sys

__all__ = ["RejectPrinter"]


class RejectPrinter:
    """``on_reject``: prints the first ``limit`` malformed lines as file:line: reason, counts all."""

    def __init__(self, limit, stream=None):
        self.limit = limit
        self.stream = sys.stderr if stream is None else stream
        self.count = 0

    def __call__(self, path, line_no, message):
        self.count += 1
        if self.count <= self.limit:
            self.stream.write("{}:{}: {}\n".format(path, line_no, message))

    def close(self):
        """Say how many were not shown."""
        if self.count > self.limit:
            self.stream.write("... and {} more malformed lines (--max-errors shows more)\n".format(
                self.count - self.limit))
