"""Helpers shared by the hook tests: config files, running a real hook file, PBS jobs."""

import json
import os

import pbs_standin as pbs
import pytest

from predictor.server import runtime

HOOKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks")
HOOK_FILE = os.path.join(HOOKS_DIR, "softwalltime.py")
EVENTS = runtime.HOOK_EVENTS


def hook_path(event=None):
    """The real hook file (one file serves every event)."""
    return HOOK_FILE


def write_config(directory, name="hook.json", **settings):
    """Write a JSON hook config into ``directory``; return its path."""
    path = os.path.join(str(directory), name)
    with open(path, "w", encoding="utf-8") as config_file:
        json.dump(settings, config_file, ensure_ascii=False)
    return path


def run(event, pbs_event, config_path, alarm_s=30):
    """Run the hook file for ``pbs_event`` (an ``event`` event) under the stand-in."""
    return pbs.run_hook(HOOK_FILE, pbs_event, config_path, alarm_s=alarm_s)


def full_job(job_id="1.svr", user="alice", walltime=None, soft_walltime=None, queue="workq", **resources):
    """A job as runjob / modifyjob's e.job_o see it."""
    if walltime is not None:
        resources["walltime"] = walltime
    if soft_walltime is not None:
        resources["soft_walltime"] = soft_walltime
    return pbs.Job(resources, id=job_id, euser=user, egroup="users", queue=pbs.Queue(queue))


def finished_job(job_id="1.svr", user="alice", runtime=600, walltime=3600, stime=1000000, **attributes):
    """A job as jobobit sees it (made read-only by ``pbs.jobobit_event``)."""
    attributes.setdefault("obittime", stime + runtime)
    attributes.setdefault("Exit_status", 0)
    return pbs.Job({"walltime": walltime, "ncpus": 4}, {"walltime": runtime}, id=job_id, euser=user,
                   egroup="users", project="_pbs_project_default", queue=pbs.Queue("workq"), ctime=stime - 50,
                   stime=stime, **attributes)


def restart_interpreter():
    """What a restart of pbs_server's hook interpreter does to the package: a new runtime, connections gone."""
    runtime.RUNTIME.close()
    runtime.RUNTIME = runtime.Runtime()


@pytest.fixture
def fresh_pbs_server():
    """A new hook runtime before and after the test, as after an interpreter restart."""
    restart_interpreter()
    yield
    restart_interpreter()
