"""predictor.cmdline.progress (predictor.cmdline.progress): a bar on a terminal, silence elsewhere."""

import io
import pty
import select

from predictor.cmdline.progress import ProgressBar


def test_silent_when_not_a_terminal():
    """Redirected stderr gets nothing."""
    stream = io.StringIO()
    bar = ProgressBar("replay", stream)
    bar(5, 10)
    bar(10, 10)
    bar.close()
    assert stream.getvalue() == ""


def test_draws_on_a_pseudo_terminal():
    """On a TTY the bar shows its label and its total, then clears its line."""
    master, slave = pty.openpty()
    with open(master, "rb", buffering=0) as terminal, open(slave, "w") as stream:
        bar = ProgressBar("replay", stream)
        bar(5, 10)
        bar.close()
        assert select.select([terminal], [], [], 5)[0], "nothing reached the terminal"
        shown = b""
        while select.select([terminal], [], [], 0.5)[0]:  # the writes may arrive in several pieces
            shown += terminal.read(65536)  # before the slave closes: Linux drops what is unread then
        shown = shown.decode()
    assert shown.startswith("\rreplay: ") and "/10 [" in shown and shown.endswith("\r")
