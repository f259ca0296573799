"""The small grid the sweep tests run, here and on the real PBS: 8 cells on a 200-job trace."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLED_SWF = os.path.join(REPO, "traces", "HPC2N-2002-subset.swf")
TRACE_JOBS = 200

GRID = ["--predictors", "v1,v3", "--policy", "fifo,sjf", "--backfill-depth", "1,10"]
"""1 trace x 2 policies x 2 backfill depths x 1 extension x 2 predictors."""
CELLS = 8


def write_tiny_trace(path):
    """The bundled SWF's header and first ``TRACE_JOBS`` jobs at ``path``: a sweep of it takes seconds."""
    with open(BUNDLED_SWF, encoding="utf-8") as source:
        lines = source.readlines()
    header = [line for line in lines if line.startswith(";")]
    jobs = [line for line in lines if not line.startswith(";")][:TRACE_JOBS]
    with open(path, "w", encoding="utf-8") as target:
        target.writelines(header + jobs)
    return str(path)
