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


def test_the_waits_of_a_replay_report_their_progress():
    """Reading a trace (by bytes, PBS logs and SWF) and the small/large classification (by job) move a bar
    with the work, to its end: the stages that were silent for minutes on long logs."""
    import os

    from replay.classification.table import classification_table
    from replay.traces.readers import load_trace
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "traces")
    for path in ("hpc2n-2002-accounting", "HPC2N-2002-subset.swf"):
        seen = []
        trace = load_trace([os.path.join(root, path)], on_progress=lambda done, total: seen.append((done, total)))
        assert len(seen) >= 2 and seen[-1][0] <= seen[-1][1] and seen[-1][0] >= seen[0][0], path
    seen = []
    classification_table(trace.jobs, lambda done, total: seen.append((done, total)))
    assert [done for done, _ in seen] == list(range(0, len(trace.jobs), 1000)) and seen[0][1] == len(trace.jobs)
