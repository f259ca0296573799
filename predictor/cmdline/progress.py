"""A progress bar on a terminal (tqdm); nothing at all when the stream is a file or a pipe.

For the admin commands and the replay only: nothing pbs_server loads imports it.
Where tqdm is not installed (it is not, on Python before 3.8), no bar is drawn.
"""

import os
import sys

__all__ = ["ProgressBar"]


def _tqdm():
    """tqdm's bar class, or None where it is not installed (Python < 3.8). Imported only for a terminal: it
    costs a command that writes to a file or a pipe a noticeable part of its start-up."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def _is_terminal(stream):
    return bool(getattr(stream, "isatty", lambda: False)())


def _screen(stream):
    """``(columns, lines)`` of the terminal, 80 x 24 where it reports 0 (a fresh pseudo-terminal: tqdm then
    draws nothing)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 80, 24
    return size.columns or 80, size.lines or 24


class ProgressBar:
    """``bar(done, total)`` moves the bar to ``done`` of ``total``; ``close()`` clears it. Silent unless a TTY."""

    def __init__(self, label, stream=None, unit="it", unit_scale=False):
        self.stream = sys.stderr if stream is None else stream
        self.unit_scale = unit_scale  # 12.3M rather than 12345678, for bytes
        self._tqdm = _tqdm() if _is_terminal(self.stream) else None
        self.enabled = self._tqdm is not None
        self.label = label
        self.unit = unit
        self._bar = None

    def __call__(self, done, total):
        if not self.enabled or total <= 0:
            return
        if self._bar is None:
            columns, lines = _screen(self.stream)
            self._bar = self._tqdm(total=total, desc=self.label, unit=self.unit, file=self.stream, leave=False,
                                   ncols=columns, nrows=lines, unit_scale=self.unit_scale)
        self._bar.update(done - self._bar.n)

    def close(self):
        """Clear the bar's line."""
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.close()
