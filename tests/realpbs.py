"""A real OpenPBS server for the end-to-end tests: finding it, running its commands, reading its logs.

The server is either installed on this host (``qmgr`` on PATH and
/etc/pbs.conf) or runs in a sandbox whose commands go through a wrapper named
by ``$SWT_PBS_RUN`` (CI sets it). Without either, the tests skip with one line
-- except in CI (``CI=true``), where a test that needs PBS and cannot find it
fails: a skipped real-PBS test is a failed one.

Jobs are submitted as the unprivileged ``pbsuser`` (PBS refuses root's jobs).
"""

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import time

import pytest

PBS_RUN_ENV = "SWT_PBS_RUN"
JOB_USER = "pbsuser"
PBS_HOME = "/var/spool/pbs"


def wrapper():
    """The command prefix that reaches PBS, or None when there is no PBS here."""
    run = os.environ.get(PBS_RUN_ENV)
    if run:
        return [run]
    if shutil.which("qmgr") and os.path.exists("/etc/pbs.conf"):
        return []
    return None


def require_pbs():
    """The wrapper; skips (fails in CI) when no PBS server answers."""
    prefix = wrapper()
    reason = None
    if prefix is None:
        reason = "no PBS server here: set ${} to the command that runs PBS commands, or install OpenPBS".format(
            PBS_RUN_ENV)
    elif subprocess.run(prefix + ["qstat", "-B"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        timeout=60).returncode != 0:
        reason = "the PBS server does not answer qstat -B"
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("real-PBS test cannot run in CI: " + reason)
        pytest.skip(reason)
    return prefix


class Pbs:
    """Commands on the real server, and what it logged and accounted since this object was made."""

    def __init__(self, prefix):
        self.prefix = prefix
        self._log_offsets = {}

    def run(self, *command, check=True, timeout=120, input=None):
        """A command inside PBS's sandbox (as root); the CompletedProcess, text output."""
        done = subprocess.run(self.prefix + list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout, input=input)
        if check and done.returncode != 0:
            raise AssertionError("{} failed ({}): {}{}".format(" ".join(command), done.returncode, done.stdout,
                                                              done.stderr))
        return done

    def shell(self, script, check=True, timeout=600):
        """A bash script inside the sandbox, as root."""
        return self.run("bash", "-c", script, check=check, timeout=timeout)

    def as_user(self, script, check=True, timeout=600, cwd="/tmp"):
        """A bash script inside the sandbox as the job user, from a directory it can write (``cwd``: one of
        its own where the script runs ``python -m``, which puts that directory first on its path)."""
        return self.run("runuser", "-u", JOB_USER, "--", "bash", "-c", "cd {} && {}".format(shlex.quote(cwd), script),
                        check=check, timeout=timeout)

    def qmgr(self, command, check=True):
        return self.run("qmgr", "-c", command, check=check)

    @contextlib.contextmanager
    def job_history(self):
        """Finished jobs kept a while (``job_history_enable``) for the ``with`` block, and the server's own setting
        back afterwards, so that the tests leave the server as they found it."""
        was_on = "job_history_enable = True" in self.qmgr("print server").stdout
        self.qmgr("set server job_history_enable = True")
        try:
            yield self
        finally:
            if not was_on:
                self.qmgr("unset server job_history_enable", check=False)

    def qsub(self, arguments, check=True):
        """Submit as the job user: ``(returncode, job id or error text)``."""
        done = self.as_user("qsub -o /dev/null -e /dev/null " + arguments, check=False)
        if check and done.returncode != 0:
            raise AssertionError("qsub {} failed: {}".format(arguments, done.stderr))
        return done.returncode, (done.stdout.strip() or done.stderr.strip())

    def job(self, job_id):
        """The job's attributes (``qstat -fx -F json``), finished jobs included."""
        done = self.run("qstat", "-fx", "-F", "json", job_id)
        text = re.sub(r'("[^"]*":\s*)(?=[,}])', r'\1null', done.stdout)  # qstat may print an empty value
        return json.loads(text)["Jobs"][job_id]

    def jobs(self, job_ids):
        """``{job id: attributes}`` of many jobs in one qstat call."""
        done = self.run("qstat", "-fx", "-F", "json", *job_ids, timeout=600)
        text = re.sub(r'("[^"]*":\s*)(?=[,}])', r'\1null', done.stdout)
        return json.loads(text)["Jobs"]

    def resources(self, job_id):
        return self.job(job_id).get("Resource_List", {})

    def wait_state(self, job_id, states, timeout=120):
        """Wait until the job's state is one of ``states`` (F: finished); its attributes."""
        deadline = time.monotonic() + timeout
        while True:
            attributes = self.job(job_id)
            if attributes.get("job_state") in states:
                return attributes
            assert time.monotonic() < deadline, "{} still {} after {} s".format(
                job_id, attributes.get("job_state"), timeout)
            time.sleep(0.5)

    # --- the server log and the accounting log, read since a mark -------------------------------

    def _today(self, kind):
        return os.path.join(PBS_HOME, kind, time.strftime("%Y%m%d"))

    def mark(self):
        """Remember where the server log and the accounting log end now."""
        for kind in ("server_logs", "server_priv/accounting"):
            path = self._today(kind)
            self._log_offsets[kind] = (path, os.path.getsize(path) if os.path.exists(path) else 0)

    def _since_mark(self, kind):
        path, offset = self._log_offsets.get(kind, (self._today(kind), 0))
        lines = []
        for name in sorted({path, self._today(kind)}):
            if os.path.exists(name):
                with open(name, encoding="utf-8", errors="replace") as log:
                    log.seek(offset if name == path else 0)
                    lines.extend(log.read().splitlines())
        return lines

    def server_log(self, pattern=""):
        """Server log lines written since ``mark()`` that contain ``pattern``."""
        return [line for line in self._since_mark("server_logs") if pattern in line]

    def hook_lines(self):
        """Our hooks' lines since ``mark()``, without the log's own prefix."""
        return [line.split(";", 5)[5] for line in self.server_log(";pbs-softwalltime")]

    def restarts(self):
        """How many times the server restarted its hook interpreter since ``mark()``."""
        return len(self.server_log("Restarting Python interpreter"))

    def accounting(self, record_type, job_id):
        """The accounting records of one type for a job since ``mark()``: ``[{field: value}]``."""
        found = []
        for line in self._since_mark("server_priv/accounting"):
            parts = line.split(";", 3)
            if len(parts) == 4 and parts[1] == record_type and parts[2] == job_id:
                found.append(dict(field.split("=", 1) for field in parts[3].split() if "=" in field))
        return found

    def wait_accounting(self, record_type, job_id, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            records = self.accounting(record_type, job_id)
            if records:
                return records[-1]
            assert time.monotonic() < deadline, "no {} record for {} after {} s".format(record_type, job_id, timeout)
            time.sleep(0.5)
