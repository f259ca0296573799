"""What pbs_server does to the hooks, in-process: an embedded interpreter finalized and initialized again.

A small C program (built here against the Python headers) initializes Python
without site-packages, runs a script that runs the real hook file under the
PBS stand-in for a qsub, finalizes, and starts over, several times in one
process -- pbs_server's interpreter restart. Every round must set the
prediction. The canary runs the same rounds with psycopg2 imported in each:
its C extension cannot be initialised twice, so its second round must fail,
or this harness would not be showing a restart at all.

Runs on this test run's Python and on Python 3.6 (EL8's hook interpreter)
when one is found, with pg8000 1.24.2 installed for it as the package pins.
"""

import glob
import json
import os
import shutil
import subprocess
import sysconfig

import pytest
from hookenv import HOOK_FILE, write_config

from predictor.jobs import CompletedJob
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
ROUNDS = 4

EMBED = r"""
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>

/* argv[1]: rounds, argv[2]: a Python script run in each new interpreter. */
int main(int argc, char **argv) {
    int rounds = atoi(argv[1]);
    FILE *source = fopen(argv[2], "r");
    static char script[1 << 16];
    size_t length = fread(script, 1, sizeof script - 1, source);
    script[length] = 0;
    fclose(source);
    Py_NoSiteFlag = 1;  /* as pbs_server: no site-packages */
    for (int round = 0; round < rounds; round++) {
        Py_Initialize();
        PyRun_SimpleString(script);
        Py_Finalize();
    }
    return 0;
}
"""

ROUND = r"""
import json, sys
sys.path[:0] = {paths!r}
outcome = {{"round": None, "soft_walltime": None, "error": None}}
try:
    {canary}
    import pbs_standin as pbs
    result = pbs.run_hook({hook!r}, pbs.queuejob_event("alice", {{"walltime": 7200}}), {config!r})
    outcome["soft_walltime"] = result.resources.get("soft_walltime")
    outcome["warnings"] = result.warnings
except BaseException as err:
    outcome["error"] = "{{}}: {{}}".format(type(err).__name__, err)
with open({out!r}, "a") as out:
    out.write(json.dumps(outcome) + "\n")
"""


def interpreters():
    """(label, python executable) for this Python and, if present, a Python 3.6."""
    found = [("current", os.path.join(sysconfig.get_config_var("BINDIR"), "python3"))]
    for candidate in [os.environ.get("PYTHON36")] + sorted(glob.glob("/root/.pyenv/versions/3.6.*/bin/python3.6")):
        if candidate and os.path.exists(candidate):
            found.append(("3.6", candidate))
            break
    return found


def build(python, tmp_path):
    """The embedding program, compiled and linked against ``python``'s libpython."""
    config = python + "-config" if os.path.exists(python + "-config") else python.rstrip("0123456789.") + "3-config"
    flags = subprocess.run([config, "--cflags", "--ldflags"] + (["--embed"] if "3.6" not in python else []),
                           stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
    source, program = tmp_path / "embed.c", tmp_path / "embed"
    source.write_text(EMBED)
    subprocess.run(["gcc", "-o", str(program), str(source)] + [flag for flag in flags if flag != "-Wall"],
                   check=True, stderr=subprocess.PIPE)
    return str(program)


def pure_python_dependencies(label, python, tmp_path_factory):
    """The directory holding pg8000 and its dependencies for ``python``."""
    if label == "current":
        import pg8000
        return [os.path.dirname(os.path.dirname(pg8000.__file__))]
    target = str(tmp_path_factory.mktemp("py36-deps"))
    subprocess.run([python, "-m", "pip", "install", "-q", "--target", target, "pg8000==1.24.2", "scramp==1.4.1",
                    "asn1crypto==1.5.1"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return [target]


@pytest.fixture
def history_config(db, tmp_path):
    """A user with one past job (ratio 1/6): v3 predicts 7200 / 6 + 900 = 2100 s for a 2 h walltime."""
    with HookHistory(connect_params(db.writer_dsn), read_only=False) as store:
        store.add(CompletedJob("1.svr", "alice", runtime_s=600, end_time=1, walltime_s=3600))
    return write_config(tmp_path, reader_dsn=db.reader_dsn)


def restarted_rounds(label, python, tmp_path, tmp_path_factory, config, canary=""):
    program = build(python, tmp_path)
    out = tmp_path / "rounds.jsonl"
    script = tmp_path / "round.py"
    paths = [REPO, TESTS] + pure_python_dependencies(label, python, tmp_path_factory)
    if canary:
        paths.append(os.path.dirname(os.path.dirname(__import__("psycopg2").__file__)))
    script.write_text(ROUND.format(paths=paths, canary=canary or "pass", hook=HOOK_FILE, config=config, out=str(out)))
    subprocess.run([program, str(ROUNDS), str(script)], check=True, timeout=300,
                   env=dict(os.environ, PYTHONHOME=sysconfig.get_config_var("prefix") if label == "current"
                            else os.path.dirname(os.path.dirname(python))))
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("label, python", interpreters(), ids=[label for label, _ in interpreters()])
def test_every_restarted_interpreter_predicts(label, python, tmp_path, tmp_path_factory, history_config):
    """Four interpreters in one process, one after the other: each runs the hook and sets the prediction."""
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed to build the embedding program")
    rounds = restarted_rounds(label, python, tmp_path, tmp_path_factory, history_config)
    assert [(r["soft_walltime"], r["error"], r["warnings"]) for r in rounds] == [(2100, None, [])] * ROUNDS


def test_canary_psycopg2_fails_after_a_restart(tmp_path, tmp_path_factory, history_config):
    """The harness reproduces pbs_server's failure: psycopg2 imports once, then never again in that process."""
    rounds = restarted_rounds("current", interpreters()[0][1], tmp_path, tmp_path_factory, history_config,
                              canary="import psycopg2")
    assert rounds[0]["error"] is None
    assert all(r["error"] and "encodings" in r["error"] for r in rounds[1:]), rounds
