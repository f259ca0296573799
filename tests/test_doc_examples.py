"""Every command shown in README.md and docs/ runs as written from the repository root.

The commands are read from the code blocks (fenced or indented) of the
documents; each runs in a fresh directory that holds the repository's
``traces/`` and ``tests/`` (so outputs land there, not in the checkout), a
``--dsn`` or ``$PBS_SOFTWALLTIME_DSN`` pointing at the test database, and
must end with status 0 or 1 (some lines malformed) and no traceback. A
command that names a site's own files (``/var/spool/pbs/...``, ``site/``) or
a placeholder (``TRACE``) is a template: it is listed below with the reason,
and a new one fails the test until it is runnable or listed.
"""

import glob
import os
import re
import shlex
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_COMMAND = re.compile(r"(?:\.venv/bin/)?python3? -m (?:replay|predictor)\b")

TEMPLATES = {
    "python -m replay simulate TRACE --predictors user --policy sjf --bsld-tau 60": "TRACE: each trace in turn",
    "python -m replay simulate TRACE --predictors user --policy saf --bsld-tau 60": "TRACE: each trace in turn",
    "python -m replay simulate TRACE --predictors user --policy wfp --bsld-tau 60": "TRACE: each trace in turn",
    "python -m replay simulate TRACE --predictors user,v1,ten-minutes --extension simple": "TRACE: each trace in turn",
    "python -m replay simulate TRACE --predictors user,adaboost --extension simple": "TRACE: each trace in turn",
    "python -m replay simulate traces/hpc2n-2002-accounting --site traces/sites/strict --cores 120 --predictors "
    "user,v1,v2,v3": "a table's run: 10 to 30 minutes",
    "python -m replay simulate traces/hpc2n-2002-accounting --site traces/sites/fairshare --cores 120 --predictors "
    "user,v1,v2,v3": "a table's run: 10 to 30 minutes",
    "python -m replay simulate kth-5000.swf --site traces/sites/strict --predictors user,v1,v2,v3":
        "a trace of the Parallel Workloads Archive, not bundled",
    "python -m replay simulate kth-5000.swf --site traces/sites/fairshare --predictors user,v1,v2,v3":
        "a trace of the Parallel Workloads Archive, not bundled",
    "python -m replay fidelity /var/spool/pbs/server_priv/accounting --site site/": "a PBS server's own logs",
    "python -m replay fidelity 20261126 --json fidelity.json --show 3": "a PBS server's own log file",
    "python -m replay fidelity accounting/ --site site/ --latency 1": "a site's own logs and site folder",
    "python -m replay fidelity accounting/ --site site/ --jobs-csv starts.csv": "a site's own logs and site folder",
    "python -m replay fidelity accounting/ --site site/ --server-log /var/spool/pbs/server_logs":
        "a site's own logs, site folder and server's log",
    "python -m replay fidelity accounting/ --site site/ --server-log server_logs/ --sched-log "
    "/var/spool/pbs/sched_logs": "a site's own logs, site folder, server's and scheduler's logs",
    "python -m predictor ingest /var/spool/pbs/server_priv/accounting": "a PBS server's own logs",
    "python -m predictor ingest --follow /var/spool/pbs/server_priv/accounting": "follows for ever",
    "python -m replay TRACE.swf --at submit --predictors user,v3,v3-deployed,tang,tang:percentile=80,"
    "tang:percentile=90,tang:percentile=70,tang:min_ratio_pct=50,tang:key=user+project,tang:key=user,"
    "tang:key=project,tang:key=user+walltime": "TRACE: each public trace in turn",
    "python -m replay simulate TRACE --predictors user --policy fifo --bsld-tau 60": "TRACE: each trace in turn",
    "python -m replay simulate TRACE --predictors user --policy small-first --bsld-tau 60": "TRACE: each trace",
    "python -m replay simulate TRACE --predictors user --policy small-first-no-rerun --bsld-tau 60": "TRACE",
    "python -m replay TRACE --predictors user --classify": "TRACE: each trace in turn",
    ".venv/bin/python -m replay /var/spool/pbs/server_priv/accounting --plot plots/": "a PBS server's own logs",
    "python -m replay convert trace.swf accounting/ [--gzip] [--epoch N] [--server NAME]": "a synopsis",
    "python -m replay convert accounting/ trace.swf": "a synopsis",
    "python -m replay simulate accounting/ --site site/ --predictors user,v1,v2,v3": "a site's own files",
    "python -m replay sweep --pbs sweep1 --grid grid.txt --walltime 2:00:00": "writes a PBS job array",
    "python -m replay sweep collect sweep1": "the job array's results",
    "python -m replay fidelity tests/data/fidelity/CONFIG/accounting --site tests/data/fidelity/CONFIG/site":
        "CONFIG: each recorded configuration in turn (run below with each)",
}
"""Commands of the documents that cannot run here as written -> why."""


def documents():
    return [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))


def commands(path):
    """``[(line number, command)]`` of a document's code blocks: continuation lines joined, comments dropped."""
    found, fenced, pending = [], False, None
    with open(path, encoding="utf-8") as stream:
        lines = stream.read().splitlines()
    for number, line in enumerate(lines, 1):
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        text = line.strip()
        if pending is not None:
            pending = (pending[0], pending[1] + " " + text.rstrip("\\").strip())
            if not text.endswith("\\"):
                found.append(pending)
                pending = None
            continue
        if not (fenced or line.startswith("    ")) or not _COMMAND.match(text):
            continue
        text = re.sub(r"\s+#.*$", "", text)
        if text.endswith("\\"):
            pending = (number, text.rstrip("\\").strip())
        else:
            found.append((number, text))
    return found


EXAMPLES = [(os.path.relpath(path, REPO), number, text) for path in documents() for number, text in commands(path)]


def test_every_example_is_runnable_or_listed():
    """No command of the documents is left out silently; no listed template is stale."""
    shown = {text for _, _, text in EXAMPLES}
    assert set(TEMPLATES) <= shown, set(TEMPLATES) - shown


def argv_of(text, database, place):
    """The command's argument list: this interpreter, the test database, /tmp/ paths moved into ``place``."""
    words = shlex.split(text)
    words[0] = sys.executable
    words = [word.replace("/tmp/", str(place) + "/") for word in words]
    for index, word in enumerate(words[:-1]):
        if word == "--dsn":
            words[index + 1] = database.dsn
    return words


KNOWN_BROKEN = {}
"""Commands the documents show that fail today: each an expected failure, strict, so that fixing it shows."""


def _fidelity_configurations():
    folder = os.path.join(REPO, "tests", "data", "fidelity")
    return sorted(name for name in os.listdir(folder) if os.path.isdir(os.path.join(folder, name, "accounting"))) \
        if os.path.isdir(folder) else []


RUNNABLE = [pytest.param(*example, marks=pytest.mark.xfail(reason=KNOWN_BROKEN[example[2]], strict=True))
            if example[2] in KNOWN_BROKEN else example for example in EXAMPLES if example[2] not in TEMPLATES]
RUNNABLE += [("docs/fidelity.md", 0, "python -m replay fidelity tests/data/fidelity/{0}/accounting --site "
              "tests/data/fidelity/{0}/site".format(name)) for name in _fidelity_configurations()]


def _id(example):
    document, line, text = example.values if hasattr(example, "values") else example
    return "{}:{}".format(document, line or text.split("/")[3])


@pytest.mark.parametrize("document, line, text", RUNNABLE, ids=[_id(example) for example in RUNNABLE])
def test_example_runs_as_written(document, line, text, database, tmp_path):
    """The command ends with status 0 or 1 and no traceback, from a directory laid out as the repository."""
    for name in ("traces", "tests"):
        os.symlink(os.path.join(REPO, name), str(tmp_path / name))
    env = dict(os.environ, PYTHONPATH=REPO, PBS_SOFTWALLTIME_DSN=database.dsn)
    result = subprocess.run(argv_of(text, database, tmp_path), cwd=str(tmp_path), env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, "{}:{}: {}\n{}".format(
        document, line, text, result.stderr[-2000:])
