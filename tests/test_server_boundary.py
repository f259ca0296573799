"""The boundary that keeps the hooks alive across interpreter restarts: nothing pbs_server loads is a C extension.

A fresh interpreter runs the real hook file under the PBS stand-in for every
event (database unreachable, so the driver's whole connect path runs), then
lists the extension modules loaded from outside the standard library. As a
canary, the same probe then imports the admin side, whose psycopg2 it must see.
"""

import json
import os
import subprocess
import sys

from hookenv import HOOK_FILE

TESTS = os.path.dirname(os.path.abspath(__file__))

PROBE = r"""
import json, sys, sysconfig
base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
stdlib = [sysconfig.get_path(kind, vars=base) + "/" for kind in ("stdlib", "platstdlib")]

def foreign_extensions():
    found = []
    for name, module in list(sys.modules.items()):
        path = str(getattr(module, "__file__", None) or "")
        in_stdlib = any(path.startswith(root) for root in stdlib) and "-packages/" not in path
        if path.endswith((".so", ".pyd")) and not in_stdlib:
            found.append(name)
    return sorted(found)

import pbs_standin as pbs
from hookenv import full_job, finished_job, write_config
config = write_config(sys.argv[2], reader_dsn="host=127.0.0.1 port=1 user=x", writer_dsn="host=127.0.0.1 port=1 user=x")
events = [pbs.queuejob_event("alice", {"walltime": 60}), pbs.runjob_event(full_job(walltime=60)),
          pbs.modifyjob_event(full_job(walltime=60, soft_walltime=30), {"walltime": 20}, "alice"),
          pbs.jobobit_event(finished_job())]
accepted = [pbs.run_hook(sys.argv[1], event, config).accepted for event in events]
hook_side = foreign_extensions()
loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("psycopg2", "numpy", "pandas", "tqdm"))
import predictor.db.sessions
print(json.dumps({"accepted": accepted, "hook_side": hook_side, "loaded": loaded, "canary": foreign_extensions()}))
"""


def probe(tmp_path):
    done = subprocess.run([sys.executable, "-c", PROBE, HOOK_FILE, str(tmp_path)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=TESTS))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_hook_side_loads_no_c_extension_outside_the_stdlib(tmp_path):
    """Every event through the real hook file loads only pure Python outside the standard library."""
    found = probe(tmp_path)
    assert found["accepted"] == [True] * 4
    assert found["hook_side"] == [] and found["loaded"] == []
    assert any(name.startswith("psycopg2") for name in found["canary"]), "the probe cannot see C extensions"
