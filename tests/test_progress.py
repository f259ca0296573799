"""replay.progress: a bar on a terminal, silence elsewhere."""

import io

from replay.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_silent_when_not_a_terminal():
    """Redirected stderr gets nothing."""
    stream = io.StringIO()
    bar = ProgressBar("replay", stream)
    bar(5, 10)
    bar.close()
    assert stream.getvalue() == ""


def test_draws_and_clears_on_a_terminal():
    """On a TTY the bar shows the percentage, then its line is cleared."""
    stream = Terminal()
    bar = ProgressBar("replay", stream, width=10)
    bar(5, 10)
    assert stream.getvalue() == "\rreplay [#####.....]  50%"
    bar.close()
    assert stream.getvalue().endswith("\r")
