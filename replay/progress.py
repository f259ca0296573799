"""A progress bar on a terminal; silent when the stream is a file or a pipe."""

import sys

__all__ = ["ProgressBar"]


class ProgressBar:
    """``bar(done, total)`` redraws one line; ``close()`` ends it. Prints nothing unless a TTY."""

    def __init__(self, label, stream=None, width=30):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label = label
        self.width = width
        self._drawn = False

    def __call__(self, done, total):
        if not self.enabled or total <= 0:
            return
        filled = self.width * done // total
        self.stream.write("\r{} [{}{}] {:3d}%".format(self.label, "#" * filled, "." * (self.width - filled),
                                                      100 * done // total))
        self.stream.flush()
        self._drawn = True

    def close(self):
        """Clear the bar's line."""
        if self._drawn:
            self.stream.write("\r" + " " * (len(self.label) + self.width + 8) + "\r")
            self.stream.flush()
            self._drawn = False
