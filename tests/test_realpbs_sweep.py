"""``sweep --pbs`` on the real OpenPBS: the test grid as a job array, collected, gives the local table.

The job user cannot run this checkout's interpreter (it may live under /root),
so, as for the hooks (docs/install.md), the system Python's pip installs the
package, with numpy for the simulation, with ``--target`` into a folder the job
user can read; the job user writes the sweep with that Python and submits it.
Skips outside CI when no PBS server is here (tests/realpbs.py); fails in CI.
"""

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time

import pytest
from realpbs import JOB_USER, Pbs, require_pbs
from sweepgrid import CELLS, GRID, REPO, write_tiny_trace

from replay.cli import main

SYSTEM_PYTHON = "/usr/bin/python3"
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
ARRAY_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def pbs():
    """The server, keeping finished jobs a while: the test waits for the array's F state."""
    server = Pbs(require_pbs())
    with server.job_history():
        yield server


@pytest.fixture(scope="module")
def shared_folder(pbs):
    """A folder under /tmp the job user can read, with ``work/`` it owns; removed afterwards."""
    folder = tempfile.mkdtemp(prefix="swt-sweep-", dir="/tmp")
    try:
        os.chmod(folder, 0o755)
        os.mkdir(os.path.join(folder, "work"))
        shutil.chown(os.path.join(folder, "work"), JOB_USER, JOB_USER)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def installed(shared_folder):
    """The package and numpy installed for the system Python, as the install guide installs the hooks."""
    target = os.path.join(shared_folder, "python")
    done = subprocess.run([SYSTEM_PYTHON, "-m", "pip", "install", "-q", "--target", target, REPO, "numpy"],
                          env={"PATH": SYSTEM_PATH, "HOME": "/root"}, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
    return target


@pytest.fixture(scope="module")
def trace(shared_folder):
    path = write_tiny_trace(os.path.join(shared_folder, "tiny.swf"))
    os.chmod(path, 0o644)
    return path


def run_here(argv):
    """``(exit status, stdout)`` of ``python -m replay ARGV`` in this process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    return status, out.getvalue()


def subjob_exit_statuses(pbs, job_id):
    """Each subjob's Exit_status, in subjob order."""
    text = pbs.run("qstat", "-fx", "-t", "-F", "json", job_id).stdout
    jobs = json.loads(re.sub(r'("[^"]*":\s*)(?=[,}])', r'\1null', text))["Jobs"]
    return [attributes.get("Exit_status") for name, attributes in sorted(
        jobs.items(), key=lambda item: int(item[0].partition("[")[2].partition("]")[0] or 0)) if "[]" not in name]


@pytest.fixture
def array_job(pbs):
    """Job ids submitted by the test; deleted if still there at the end."""
    submitted = []
    yield submitted
    for job_id in submitted:
        pbs.run("qdel", "-W", "force", "-x", job_id, check=False)


def test_array_job_collects_into_the_local_table(pbs, installed, trace, shared_folder, array_job,
                                                 record_property):
    """Written and submitted by the job user, one subjob per cell, collected: the table of a local run."""
    directory = os.path.join(shared_folder, "work", "array")
    written = pbs.as_user("PYTHONPATH={} {} -m replay sweep --pbs {} {} {}".format(
        shlex.quote(installed), SYSTEM_PYTHON, shlex.quote(directory), " ".join(GRID), shlex.quote(trace)),
        cwd=os.path.join(shared_folder, "work"))
    qsub_line = written.stdout.strip()
    assert qsub_line.startswith("qsub ") and "\n" not in qsub_line
    started = time.monotonic()
    job_id = pbs.as_user(qsub_line).stdout.strip()
    array_job.append(job_id)
    assert job_id.endswith("[]." + job_id.partition("[].")[2])
    pbs.wait_state(job_id, ("F",), timeout=ARRAY_TIMEOUT_S)
    record_property("array_seconds", round(time.monotonic() - started, 1))
    assert subjob_exit_statuses(pbs, job_id) == [0] * CELLS
    collected = run_here(["sweep", "collect", directory])
    assert collected == run_here(["sweep"] + GRID + ["--jobs", "2", trace])
    assert collected[0] == 0 and "PBS scheduling sweep: {} cells".format(CELLS) in collected[1]


def test_site_sweep_subjobs_read_the_copy_in_the_sweep_directory(pbs, installed, trace, shared_folder, array_job):
    """--site with --pbs: the subjobs read DIR/site, the admin's folder being closed to them by then, and the
    collected table is the local run's."""
    site = os.path.join(shared_folder, "site")
    shutil.copytree(os.path.join(REPO, "traces", "sites", "fairshare"), site)
    grid = ["--site", site, "--predictors", "user,v3"]
    directory = os.path.join(shared_folder, "work", "site-array")
    written = pbs.as_user("PYTHONPATH={} {} -m replay sweep --pbs {} {} {}".format(
        shlex.quote(installed), SYSTEM_PYTHON, shlex.quote(directory), " ".join(grid), shlex.quote(trace)),
        cwd=os.path.join(shared_folder, "work"))
    os.chmod(site, 0o700)  # root's alone from now on
    try:
        job_id = pbs.as_user(written.stdout.strip()).stdout.strip()
        array_job.append(job_id)
        pbs.wait_state(job_id, ("F",), timeout=ARRAY_TIMEOUT_S)
        assert subjob_exit_statuses(pbs, job_id) == [0, 0]
    finally:
        os.chmod(site, 0o755)
    collected = run_here(["sweep", "collect", directory])
    assert collected == run_here(["sweep"] + grid + ["--jobs", "2", trace])
    assert collected[0] == 0 and "every cell: the site's PBS (--site)" in collected[1]
