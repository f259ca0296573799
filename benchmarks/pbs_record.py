"""Record a workload on a real (test) OpenPBS server, to check the simulator against it.

    python benchmarks/pbs_record.py WORKLOAD.json OUTDIR [--pbs-run CMD]

Run it as root on the PBS server host of a test PBS with no other jobs (or
with ``--pbs-run CMD`` naming a command that runs PBS commands for you; the
server's files must then still be readable here). It:

1. configures the server as the workload says: vnode sizes (``qmgr`` for the
   MoM's own vnode, or a version-2 MoM configuration for several vnodes),
   custom resources (``"resources": {"ngpus": "type=long, flag=nh"}``, created
   before the vnodes that offer them), server and queue attributes
   (``backfill_depth``, ``job_sort_formula``,
   ``max_run``, queues with a ``priority`` or a ``max_run_res.ncpus``, ...),
   the scheduler object's attributes (``job_sort_formula_threshold``), the
   scheduler's ``sched_config`` (only the named settings change) and
   ``resource_group``, MoM settings such as ``$min_check_poll``; it creates
   the workload's users and groups when missing, and starts fairshare usage
   from zero;
2. submits every job held (``qsub -h``) as its user, with ``sleep RUNTIME`` as
   the job (a job array with ``-J`` when the job names an ``array`` range; after
   an earlier job with ``-W depend=`` when it names a ``depend``, such as
   ``afterok:j012``), sets ``soft_walltime`` as the manager (``qalter``), and
   releases each job (``qrls``) at its offset from the start. A workload with
   ``"submission": "direct"`` submits each job at its offset instead, not held,
   and sets its soft walltime right after (the scheduler may have started it by
   then, as on a server where jobs come as they come); ``"submission":
   "queuejob"`` submits each job at its offset too, its soft walltime set at
   submission by a queuejob hook the harness installs for the recording (as
   pbs-softwalltime's own hook sets it: no ``qalter``, nothing for a cycle to
   miss). A job that names
   ``delete_after`` is deleted (``qdel``) that many seconds after its release or
   submission, queued or running;
3. waits until every job has ended (a job the workload marks ``never_runs``,
   one under ``job_sort_formula_threshold`` say, is not waited for: once all
   the others have ended the harness deletes it, ``qdel``, and waits for its
   D record), then writes OUTDIR/accounting/YYYYMMDD (this recording's lines
   only, unchanged), the site folder OUTDIR/site/ (``qmgr.txt``,
   ``sched_config``, ``resource_group``, ``pbsnodes.json``, ``qmgr-sched.txt``
   with the scheduler object's attributes, ``mom_config`` and the scheduler's
   fairshare ``usage`` file) and OUTDIR/recording.json (the workload, the job
   ids, when each job was released, the PBS version); when the server logs
   each change of a job's accrue type (``log_events`` with 1024, as 2047
   has), also OUTDIR/accrual.log, those lines of the server's log; and
   OUTDIR/server.log, the server's log lines of the recording's jobs that
   give the order of ends, submissions, releases and starts within a second, and
   OUTDIR/sched.log, the scheduler's log while it ran;
4. always -- also after an error or Ctrl-C -- puts back what it changed: the
   saved ``sched_config``, ``resource_group``, MoM configuration and
   fairshare usage, server, scheduler, queue and vnode attributes as they
   were, no extra queues, vnodes or custom resources (the recording's finished
   jobs are purged from the server's history first, ``qdel -x``: they would keep
   a resource busy). Several vnodes need a restart of the MoM
   to be forgotten (a HUP keeps the vnodes it knew): the harness restarts it.

While recording, pbs_server, pbs_sched and pbs_mom run at nice -10, so that a
loaded test machine delays the scheduler as little as possible.

Fairshare charges usage from what the MoM reports (``resources_used``) at each
scheduling cycle. A MoM measures its jobs ``$min_check_poll`` seconds after its
last job start, less often as it goes on, up to every ``$max_check_poll``
seconds (10 and 120 by default): for jobs that run seconds, most fairshare
workloads set them to 1 and 2, or PBS charges almost nothing. With
``--watch-measurements`` the harness reads ``qstat -f -F json`` every second
while the workload runs and writes OUTDIR/mom_measurements.json: the instants
at which the MoM measured its running jobs (a running job's ``stime`` plus each
new ``resources_used.walltime`` it shows).

The workload format is what ``benchmarks/fidelity_workloads.py`` writes.
"""

import argparse
import contextlib
import datetime
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

DEFAULT_PBS_HOME = "/var/spool/pbs"
NICE_WHILE_RECORDING = -10
POLL_S = 0.5
JOB_KEYS = ("name", "user", "queue", "select", "place", "walltime", "runtime", "offset")


class WorkloadError(ValueError):
    """A workload file that cannot be recorded: one line naming the file and the field."""


# --- pure text: the workload, the configuration files, the accounting lines ------------------------

def load_workload(path):
    """The workload in ``path`` as a dict (a recording's ``recording.json``: the workload it recorded, to record
    it again); WorkloadError naming the field that is wrong."""
    try:
        with open(path, encoding="utf-8") as source:
            workload = json.load(source)
    except (OSError, ValueError) as err:
        raise WorkloadError("{}: {}".format(path, err)) from err
    if isinstance(workload, dict) and "job_ids" in workload and isinstance(workload.get("workload"), dict):
        workload = workload["workload"]
    check_workload(workload, path)
    return workload


def check_workload(workload, path="workload"):
    """WorkloadError unless every job names the fields the harness needs, with usable values."""
    jobs = workload.get("jobs") if isinstance(workload, dict) else None
    if not jobs:
        raise WorkloadError("{}: no jobs".format(path))
    users = workload.get("users", {})
    for number, job in enumerate(jobs):
        missing = [key for key in JOB_KEYS if key not in job]
        if missing:
            raise WorkloadError("{}: job {}: missing {}".format(path, number, ", ".join(missing)))
        if job["user"] not in users:
            raise WorkloadError("{}: job {}: user {} is not in users".format(path, number, job["user"]))
        if not 0 < job["runtime"] < job["walltime"]:
            raise WorkloadError("{}: job {}: runtime must be > 0 and below walltime".format(path, number))
        soft = job.get("soft_walltime")
        if soft is not None and not 0 < soft <= job["walltime"]:
            raise WorkloadError("{}: job {}: soft_walltime must be > 0 and at most walltime".format(path, number))
        if job.get("array") is not None and not _array_range(job["array"]):
            raise WorkloadError("{}: job {}: array must be a range FIRST-LAST, FIRST < LAST".format(path, number))
        if not isinstance(job.get("never_runs", False), bool):
            raise WorkloadError("{}: job {}: never_runs must be true or false".format(path, number))
        delete_after = job.get("delete_after")
        if delete_after is not None and not (isinstance(delete_after, (int, float)) and delete_after > 0):
            raise WorkloadError("{}: job {}: delete_after must be a number of seconds > 0".format(path, number))
        depend = job.get("depend")
        earlier = {other["name"] for other in jobs[:number]}
        if depend is not None and not (isinstance(depend, str) and depend.count(":") == 1
                                       and depend.split(":")[0] in DEPENDENCIES and depend.split(":")[1] in earlier):
            raise WorkloadError("{}: job {}: depend must be {}:NAME of an earlier job".format(
                path, number, "|".join(DEPENDENCIES)))
    if len({job["name"] for job in jobs}) != len(jobs):
        raise WorkloadError("{}: job names are not unique".format(path))
    if workload.get("submission", HELD) not in SUBMISSIONS:
        raise WorkloadError("{}: submission must be {}".format(path, " or ".join(SUBMISSIONS)))


HELD, DIRECT, QUEUEJOB = "held", "direct", "queuejob"
SUBMISSIONS = (HELD, DIRECT, QUEUEJOB)
"""How a workload's jobs reach the server: all submitted held, then each released at its offset (``held``, the
default); or each submitted at its offset, its soft walltime set by the manager right after (``direct``) or at
submission by a queuejob hook (``queuejob``)."""

SOFT_WALLTIME_HOOK = "fid_soft_walltime"
"""The queuejob hook a ``queuejob`` workload's recording installs, and deletes at the end."""
SOFT_WALLTIME_VARIABLE = "FID_SOFT_WALLTIME"
"""The job variable (``qsub -v``) that carries a job's soft walltime, in seconds, to that hook."""
SOFT_WALLTIME_HOOK_BODY = '''import pbs
event = pbs.event()
try:
    variables = event.job.Variable_List
    value = variables["{variable}"] if variables is not None and "{variable}" in variables else None
    if value:
        event.job.Resource_List["soft_walltime"] = pbs.duration(int(value))
except Exception as err:
    pbs.logmsg(pbs.LOG_DEBUG, "{hook}: " + str(err))
event.accept()
'''.format(variable=SOFT_WALLTIME_VARIABLE, hook=SOFT_WALLTIME_HOOK)
"""The hook's body: the job's soft walltime from its variable, as the job is queued."""


DEPENDENCIES = ("afterok", "afterany")
"""The dependency types a workload job may name (``qsub -W depend=TYPE:JOBID``)."""


def _array_range(value):
    """``(first, last)`` of an ``array`` range ``"1-4"``, or None when it is not one."""
    match = re.fullmatch(r"(\d+)-(\d+)", value) if isinstance(value, str) else None
    if match is None or int(match.group(1)) >= int(match.group(2)):
        return None
    return int(match.group(1)), int(match.group(2))


def sched_config_with(text, settings):
    """``sched_config`` text with each named setting replaced (or added at the end); other lines unchanged.

    ``settings`` maps a name to its value text (``"True ALL"``) or to a list of them
    for settings PBS allows several times (``job_sort_key``). A setting's first
    uncommented line is replaced by its lines, its other uncommented lines are dropped.
    """
    wanted = {name: [value] if isinstance(value, str) else list(value) for name, value in settings.items()}
    lines, done = [], set()
    for line in text.splitlines():
        name = setting_name(line)
        if name in wanted:
            if name not in done:
                lines.extend("{}: {}".format(name, value) for value in wanted[name])
                done.add(name)
            continue
        lines.append(line)
    for name in sorted(set(wanted) - done):
        lines.extend("{}: {}".format(name, value) for value in wanted[name])
    return "\n".join(lines) + "\n"


def setting_name(line):
    """The name a ``sched_config`` line sets, or None for comments and blank lines."""
    match = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:", line)
    return match.group(1) if match else None


def resource_group_text(tree):
    """A ``resource_group`` file from ``[[name, id, parent, shares], ...]``."""
    return "".join("{}\t{}\t{}\t{}\n".format(*entry) for entry in tree)


def mom_config_with(text, settings):
    """MoM ``config`` text with each ``$name value`` setting replaced or added; other lines unchanged."""
    lines, done = [], set()
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in settings:
            if words[0] not in done:
                lines.append("{} {}".format(words[0], settings[words[0]]))
                done.add(words[0])
            continue
        lines.append(line)
    lines.extend("{} {}".format(name, settings[name]) for name in sorted(set(settings) - done))
    return "\n".join(lines) + "\n"


def vnode_names(mom, count):
    """The names PBS gives a MoM's numbered vnodes: ``mom[0]``, ``mom[1]``, ..."""
    return ["{}[{}]".format(mom, number) for number in range(count)]


def vnode_config_text(mom, vnodes):
    """A version-2 MoM configuration: the MoM's own vnode empty, then one vnode per entry of ``vnodes``.

    Each entry holds ``resources_available`` values (``ncpus``, ``mem``, ...); an
    entry's ``host`` becomes ``resources_available.host``, the host PBS's
    ``place=scatter`` spreads chunks over.
    """
    lines = ["$configversion 2", "{}: resources_available.ncpus = 0".format(mom)]
    for name, vnode in zip(vnode_names(mom, len(vnodes)), vnodes):
        lines.extend("{}: resources_available.{} = {}".format(name, resource, vnode[resource])
                     for resource in sorted(vnode))
    return "\n".join(lines) + "\n"


def accounting_job_id(line):
    """The job (or reservation) id an accounting line is about, or None."""
    parts = line.split(";", 3)
    return parts[2] if len(parts) >= 3 else None


def submitted_id(job_id):
    """The id a job was submitted as: an array's subjob ``123[4].svr`` is its array ``123[].svr``'s."""
    return re.sub(r"^(\d+)\[\d+\]", r"\1[]", job_id) if job_id else job_id


def recording_lines(lines, job_ids):
    """The accounting lines about the jobs in ``job_ids`` (an array's with its subjobs'), in their order,
    unchanged."""
    wanted = set(job_ids)
    return [line for line in lines if submitted_id(accounting_job_id(line)) in wanted]


def ended_jobs(lines, job_ids):
    """The ids among ``job_ids`` that have an E (ended) record in ``lines``."""
    wanted, ended = set(job_ids), set()
    for line in lines:
        parts = line.split(";", 3)
        if len(parts) >= 3 and parts[2] in wanted and parts[1] == "E":
            ended.add(parts[2])
    return ended


def qsub_arguments(job, job_ids=None, held=True, soft_walltime_variable=False):
    """qsub's arguments for a job (held unless ``held`` is false) that sleeps for its runtime: in its ``project``
    if it names one, a job array for an ``array`` range, after an earlier job (its id in ``job_ids``, by name)
    for a ``depend``; its soft walltime in the variable the queuejob hook reads if ``soft_walltime_variable``."""
    arguments = ["qsub"] + (["-h"] if held else []) + (
        ["-v", "{}={}".format(SOFT_WALLTIME_VARIABLE, job["soft_walltime"])]
        if soft_walltime_variable and job.get("soft_walltime") is not None else []) + [
        "-N", job["name"], "-q", job["queue"], "-o", "/dev/null", "-e", "/dev/null",
        "-l", "select=" + job["select"], "-l", "place=" + job["place"], "-l", "walltime={}".format(job["walltime"])]
    if job.get("project") is not None:
        arguments += ["-P", job["project"]]
    if job.get("array") is not None:
        arguments += ["-J", job["array"]]
    if job.get("depend") is not None:
        kind, name = job["depend"].split(":")
        arguments += ["-W", "depend={}:{}".format(kind, job_ids[name])]
    return arguments + ["--", "/bin/sleep", str(job["runtime"])]


def release_groups(jobs):
    """``[(offset, [job names])]``, by offset: the jobs released together, in workload order."""
    groups = {}
    for job in jobs:
        groups.setdefault(float(job["offset"]), []).append(job["name"])
    return sorted(groups.items())


def server_settings(print_server):
    """``{name: value text}`` of the ``set server`` lines in ``qmgr -c 'print server'`` output."""
    return dict(re.findall(r"^set server (\S+) = (.*)$", print_server, flags=re.M))


def sched_settings(print_sched):
    """``{name: value text}`` of the ``set sched`` lines in ``qmgr -c 'print sched'`` output."""
    return dict(re.findall(r"^set sched (\S+) = (.*)$", print_sched, flags=re.M))


def never_run_names(workload):
    """The names of the jobs the workload says never run (``never_runs``): deleted once the others ended."""
    return {job["name"] for job in workload["jobs"] if job.get("never_runs")}


def deleted_names(workload):
    """The names of the jobs the workload deletes while they are queued or running (``delete_after``)."""
    return {job["name"] for job in workload["jobs"] if job.get("delete_after")}


def queue_names(print_server):
    """The queues ``qmgr -c 'print server'`` creates."""
    return re.findall(r"^create queue (\S+)", print_server, flags=re.M)


def resource_names(print_server):
    """The custom resources ``qmgr -c 'print server'`` creates."""
    return re.findall(r"^create resource (\S+)", print_server, flags=re.M)


def queue_settings(print_server, queue):
    """``{name: value text}`` of one queue's ``set queue`` lines."""
    return dict(re.findall(r"^set queue {} (\S+) = (.*)$".format(re.escape(queue)), print_server, flags=re.M))


def qmgr_value(value):
    """A value as qmgr reads it: quoted when it holds spaces, commas or brackets."""
    text = str(value)
    return '"{}"'.format(text) if re.search(r"[\s,\[\]=*+]", text) and not text.startswith('"') else text


SITE_FILES = ("qmgr.txt", "sched_config", "resource_group", "pbsnodes.json")


def recording_problems(outdir):
    """What is wrong with a recording folder (empty when sound): site files, and Q, S and E of every job."""
    problems = ["site/{} missing".format(name) for name in SITE_FILES
                if not os.path.isfile(os.path.join(outdir, "site", name))]
    with open(os.path.join(outdir, "recording.json"), encoding="utf-8") as source:
        summary = json.load(source)
    job_ids = summary["job_ids"]
    arrays = {job["name"]: _array_range(job["array"]) for job in summary["workload"]["jobs"] if job.get("array")}
    never = never_run_names(summary["workload"])
    deleted = deleted_names(summary["workload"])
    folder = os.path.join(outdir, "accounting")
    seen = set()
    for day in sorted(os.listdir(folder)):
        with open(os.path.join(folder, day), encoding="utf-8") as log:
            seen.update(tuple(line.split(";", 3)[1:3]) for line in log if line.count(";") >= 3)
    for name, job_id in sorted(job_ids.items()):
        expected = [(kind, job_id) for kind in "QSE"]
        if name in arrays:  # the array is queued and ends; each of its subjobs starts and ends
            first, last = arrays[name]
            subjobs = [job_id.replace("[]", "[{}]".format(index), 1) for index in range(first, last + 1)]
            expected = [("Q", job_id), ("E", job_id)] + [(kind, subjob) for subjob in subjobs for kind in "SE"]
        elif name in never:  # queued, then deleted by the harness; it must not have started
            expected = [("Q", job_id), ("D", job_id)]
            if ("S", job_id) in seen:
                problems.append("{} ({}): started, but the workload says it never runs".format(name, job_id))
        elif name in deleted:  # deleted while queued (Q, D) or while running (Q, S, D, E)
            expected = [("Q", job_id), ("D", job_id)] + ([("E", job_id)] if ("S", job_id) in seen else [])
        missing = ["{} {}".format(kind, some_id) for kind, some_id in expected if (kind, some_id) not in seen]
        if missing:
            problems.append("{} ({}): no record {}".format(name, job_id, ", ".join(missing)))
    strangers = sorted({job_id for _, job_id in seen if submitted_id(job_id) not in set(job_ids.values())})
    problems.extend("{}: not a job of this recording".format(job_id) for job_id in strangers)
    return problems


# --- the server: commands, files, daemons --------------------------------------------------------------

class Server:
    """A PBS server reached through ``prefix`` (empty: this host), with its files under ``home``."""

    def __init__(self, prefix, home, exec_dir):
        self.prefix, self.home, self.exec_dir = prefix, home, exec_dir

    def run(self, *command, check=True, user=None, timeout=120):
        """A command as root (or as ``user``), from /tmp; its standard output."""
        if user is not None:
            command = ("runuser", "-u", user, "--") + command
        done = subprocess.run(self.prefix + list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout, cwd="/tmp")
        if check and done.returncode != 0:
            raise RuntimeError("{} failed ({}): {}".format(" ".join(command), done.returncode,
                                                          (done.stderr or done.stdout).strip()))
        return done.stdout

    def qmgr(self, command, check=True):
        return self.run("qmgr", "-c", command, check=check)

    def path(self, relative):
        return os.path.join(self.home, relative)

    def read(self, relative):
        """A file under PBS_HOME as text, or None when it does not exist."""
        try:
            with open(self.path(relative), encoding="utf-8") as source:
                return source.read()
        except FileNotFoundError:
            return None

    def write(self, relative, text):
        """Write (or, with None, remove) a file under PBS_HOME."""
        if text is None:
            if os.path.exists(self.path(relative)):
                os.remove(self.path(relative))
            return
        with open(self.path(relative), "w", encoding="utf-8") as target:
            target.write(text)

    def pid(self, daemon):
        """The process id of pbs_server, pbs_sched or pbs_mom, from its lock file."""
        lock = {"server": "server_priv/server.lock", "sched": "sched_priv/sched.lock", "mom": "mom_priv/mom.lock"}
        return int(self.read(lock[daemon]).split()[0])

    def hup(self, daemon, settle_s=2.0):
        """Make a daemon re-read its configuration."""
        os.kill(self.pid(daemon), signal.SIGHUP)
        time.sleep(settle_s)

    def nodes(self):
        """``{vnode name: attributes}`` from ``pbsnodes -av -F json``."""
        return json.loads(self.run("pbsnodes", "-av", "-F", "json"))["nodes"]

    def mom(self):
        """The MoM's own vnode (the first vnode's ``Mom``)."""
        return sorted(node["Mom"] for node in self.nodes().values())[0]


def pbs_conf(name, default):
    """A setting of /etc/pbs.conf, or ``default``."""
    try:
        with open("/etc/pbs.conf", encoding="utf-8") as conf:
            found = re.findall(r"^{}=(.*)$".format(name), conf.read(), flags=re.M)
    except OSError:
        found = []
    return found[-1].strip() if found else default


# --- the state to come back to --------------------------------------------------------------------------

SAVED_FILES = ("sched_priv/sched_config", "sched_priv/resource_group", "sched_priv/usage", "sched_priv/sched_formula",
               "mom_priv/config")
"""The files a recording changes, or PBS changes for it (the server writes ``sched_formula`` for the scheduler)."""
VNODE_CONFIG = "pbs_record_vnodes"


def save_state(server):
    """What the recording may change, as it is before: print server and sched, the files, vnodes, niceness."""
    return {"print_server": server.qmgr("print server"), "print_sched": server.qmgr("print sched"),
            "files": {name: server.read(name) for name in SAVED_FILES}, "nodes": server.nodes(),
            "nice": {daemon: nice_of(server.pid(daemon)) for daemon in DAEMONS}}


DAEMONS = ("server", "sched", "mom")


def tasks(pid):
    """The thread ids of a process (niceness is per thread on Linux)."""
    try:
        return [int(task) for task in os.listdir("/proc/{}/task".format(pid))]
    except OSError:
        return [pid]


def nice_of(pid):
    return os.getpriority(os.PRIO_PROCESS, pid)


def renice(server, nice):
    """Set every thread of pbs_server, pbs_sched and pbs_mom to ``nice`` (an int, or {daemon: int})."""
    for daemon in DAEMONS:
        value = nice[daemon] if isinstance(nice, dict) else nice
        for task in tasks(server.pid(daemon)):
            try:
                os.setpriority(os.PRIO_PROCESS, task, value)
            except OSError:
                pass  # a thread that ended meanwhile


def restore(server, saved, workload, job_ids):
    """Put back everything the workload may have changed; the steps that failed, as text."""
    steps = (lambda: delete_jobs(server, job_ids), lambda: restore_queues(server, saved, workload),
             lambda: restore_server(server, saved, workload), lambda: restore_sched(server, saved, workload),
             lambda: restore_files(server, saved),
             lambda: restore_vnodes(server, saved, workload),
             lambda: restore_resources(server, saved, workload, job_ids), lambda: restore_hooks(server),
             lambda: renice(server, saved["nice"]))
    failures = []
    for step in steps:
        try:
            step()
        except Exception as err:  # every step is tried: one failure must not leave the rest changed
            failures.append(str(err))
    return failures


def delete_jobs(server, job_ids):
    """Delete the recording's jobs that have not finished (after an error or Ctrl-C)."""
    unfinished = server.run("qselect", check=False).split()
    ours = [job for job in job_ids if job in unfinished]
    if ours:
        server.run("qdel", "-W", "force", *ours, check=False)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and set(ours) & set(server.run("qselect", check=False).split()):
            time.sleep(POLL_S)


def restore_queues(server, saved, workload):
    existing = queue_names(saved["print_server"])
    for queue, settings in sorted(workload.get("queues", {}).items()):
        if queue not in existing:
            server.qmgr("delete queue " + queue, check=False)
            continue
        before = queue_settings(saved["print_server"], queue)
        for name in settings:
            server.qmgr("set queue {} {} = {}".format(queue, name, before[name]) if name in before
                        else "unset queue {} {}".format(queue, name))


def restore_server(server, saved, workload):
    before = server_settings(saved["print_server"])
    for name in sorted(workload.get("server", {})):
        server.qmgr("set server {} = {}".format(name, before[name]) if name in before
                    else "unset server " + name)


def restore_sched(server, saved, workload):
    before = sched_settings(saved["print_sched"])
    for name in sorted(workload.get("sched", {})):
        server.qmgr("set sched {} = {}".format(name, before[name]) if name in before else "unset sched " + name)


def restore_files(server, saved):
    for name in SAVED_FILES:
        server.write(name, saved["files"][name])
    server.hup("sched", settle_s=1.0)


def restore_vnodes(server, saved, workload):
    """The MoM's vnodes as they were: its configuration removed, extra vnodes deleted, sizes unset. Without a
    configuration, the sizes set with qmgr are unset before the MoM is told to report again: what it finds
    itself (its ``mem``, say) comes back only with its next report, and a later recording would save the
    vnode without it."""
    mom = server.mom()
    sized = set(resource for vnode in workload.get("vnodes", []) for resource in vnode) | {"ncpus"}
    configured = VNODE_CONFIG in server.run("pbs_mom", "-s", "list").split()
    if not configured:
        unset_sizes(server, mom, sized)
        server.hup("mom", settle_s=1.0)
    else:
        server.run("pbs_mom", "-s", "remove", VNODE_CONFIG)
        restart_mom(server)
    for name in sorted(set(server.nodes()) - set(saved["nodes"])):
        server.qmgr("delete node " + name)
    if configured:
        unset_sizes(server, mom, sized)
    wait_for_vnodes(server, [mom])


def unset_sizes(server, mom, resources):
    """Unset the MoM's own vnode's ``resources_available`` of each of ``resources``."""
    for resource in sorted(resources):
        server.qmgr("unset node {} resources_available.{}".format(mom, resource), check=False)


def restore_resources(server, saved, workload, job_ids):
    """Delete the custom resources the workload created: first the recording's finished jobs kept in the
    server's history, which would keep a resource busy."""
    created = sorted(set(workload.get("resources", {})) - set(resource_names(saved["print_server"])))
    if not created:
        return
    if job_ids:
        server.run("qdel", "-x", "-W", "force", *job_ids, check=False)
    for name in created:
        server.qmgr("delete resource " + name)


def restart_mom(server):
    """Stop the MoM and start it again: the only way it forgets vnodes of a removed configuration."""
    pid = server.pid("mom")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and os.path.exists("/proc/{}".format(pid)):
        time.sleep(0.2)
    subprocess.run(server.prefix + [os.path.join(server.exec_dir, "sbin", "pbs_mom")], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=True)


def wait_for_vnodes(server, names, timeout_s=60):
    """Wait until every vnode in ``names`` is free."""
    deadline = time.monotonic() + timeout_s
    while True:
        nodes = server.nodes()
        if all(nodes.get(name, {}).get("state") == "free" for name in names):
            return
        if time.monotonic() > deadline:
            raise RuntimeError("vnodes not free after {} s: {}".format(timeout_s, ", ".join(names)))
        time.sleep(POLL_S)


def state_differences(server, saved):
    """How the server differs from the saved state (empty when it is back): print server, vnodes, files."""
    differences = []
    if server.qmgr("print server") != saved["print_server"]:
        differences.append("qmgr print server differs")
    now = server.nodes()
    if sorted(now) != sorted(saved["nodes"]):
        differences.append("vnodes {} (were {})".format(sorted(now), sorted(saved["nodes"])))
    for name, node in sorted(now.items()):
        if name in saved["nodes"] and node.get("resources_available") != saved["nodes"][name].get(
                "resources_available"):
            differences.append("vnode {} resources_available differ".format(name))
    differences.extend("{} differs".format(name) for name in SAVED_FILES
                       if server.read(name) != saved["files"][name])
    if SOFT_WALLTIME_HOOK in hook_names(server):
        differences.append("hook {} left".format(SOFT_WALLTIME_HOOK))
    return differences


# --- configuring, submitting, releasing, waiting ------------------------------------------------------

def ensure_users(server, users):
    """Create each user (with a home) and its group when missing."""
    for user, group in sorted(users.items()):
        if server.run("getent", "group", group, check=False) == "":
            server.run("groupadd", group)
        if server.run("getent", "passwd", user, check=False) == "":
            server.run("useradd", "-m", "-g", group, "-s", "/bin/bash", user)


def configure(server, saved, workload):
    """Apply the workload's vnodes, server and queue attributes, scheduler and MoM files."""
    ensure_users(server, workload["users"])
    existing = resource_names(saved["print_server"])
    for name, definition in sorted(workload.get("resources", {}).items()):
        if name not in existing:
            server.qmgr("create resource {} {}".format(name, definition))
    configure_vnodes(server, workload.get("vnodes", []))
    for name, value in sorted(workload.get("server", {}).items()):
        server.qmgr("set server {} = {}".format(name, qmgr_value(value)))
    configure_queues(server, saved, workload.get("queues", {}))
    for name, value in sorted(workload.get("sched", {}).items()):
        server.qmgr("set sched {} = {}".format(name, qmgr_value(value)))
    files = saved["files"]
    server.write("mom_priv/config", mom_config_with(files["mom_priv/config"] or "", workload.get("mom_config", {})))
    server.hup("mom")
    server.write("sched_priv/sched_config", sched_config_with(files["sched_priv/sched_config"],
                                                              workload.get("sched_config", {})))
    if workload.get("resource_group") is not None:
        server.write("sched_priv/resource_group", resource_group_text(workload["resource_group"]))
    server.write("sched_priv/usage", None)  # fairshare starts from no usage
    server.hup("sched")
    if workload.get("submission") == QUEUEJOB:
        install_soft_walltime_hook(server)


def install_soft_walltime_hook(server):
    """Create the queuejob hook that sets each job's soft walltime from its variable."""
    with scratch_file(SOFT_WALLTIME_HOOK_BODY, SOFT_WALLTIME_HOOK + ".py") as path:
        server.qmgr("create hook {} event = queuejob".format(SOFT_WALLTIME_HOOK))
        server.qmgr("import hook {} application/x-python default {}".format(SOFT_WALLTIME_HOOK, path))


@contextlib.contextmanager
def scratch_file(text, name):
    """A new file in /tmp holding ``text`` for a command run as root, removed after the block: created by
    ``mkstemp`` (never a name another user could have made, or pointed with a symlink elsewhere)."""
    descriptor, path = tempfile.mkstemp(prefix="pbs-record.", suffix="." + name, dir="/tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as target:
            target.write(text)
        yield path
    finally:
        os.remove(path)


def restore_hooks(server):
    """The recording's queuejob hook deleted, if it made one."""
    if SOFT_WALLTIME_HOOK in hook_names(server):
        server.qmgr("delete hook " + SOFT_WALLTIME_HOOK)


def hook_names(server):
    """The server's hooks, by name (``qmgr -c 'list hook'``)."""
    return set(re.findall(r"^Hook (\S+)", server.qmgr("list hook", check=False) or "", flags=re.M))


def configure_vnodes(server, vnodes):
    """One entry: the MoM's own vnode sized with qmgr; several: a version-2 MoM configuration."""
    mom = server.mom()
    if len(vnodes) == 1:
        for resource, value in sorted(vnodes[0].items()):
            server.qmgr("set node {} resources_available.{} = {}".format(mom, resource, qmgr_value(value)))
        wait_for_vnodes(server, [mom])
    elif vnodes:
        with scratch_file(vnode_config_text(mom, vnodes), VNODE_CONFIG) as path:
            server.run("pbs_mom", "-s", "insert", VNODE_CONFIG, path)
        server.hup("mom")
        wait_for_vnodes(server, vnode_names(mom, len(vnodes)))


def configure_queues(server, saved, queues):
    existing = queue_names(saved["print_server"])
    for queue, settings in sorted(queues.items()):
        if queue not in existing:
            server.qmgr("create queue {} queue_type = Execution".format(queue))
        for name, value in sorted(settings.items()):
            server.qmgr("set queue {} {} = {}".format(queue, name, qmgr_value(value)))
        server.qmgr("set queue {} enabled = True".format(queue))
        server.qmgr("set queue {} started = True".format(queue))


def submit(server, jobs, job_ids):
    """Submit every job held as its user and set its soft walltime as the manager; fills ``job_ids``."""
    for job in jobs:
        submit_one(server, job, job_ids)


def submit_one(server, job, job_ids, held=True, by_hook=False):
    """Submit ``job`` as its user (held unless ``held`` is false), set its soft walltime as the manager right
    after (or, ``by_hook``, let the queuejob hook set it at submission), and add its id to ``job_ids``; the id."""
    job_id = job_ids[job["name"]] = server.run(*qsub_arguments(job, job_ids, held, by_hook), user=job["user"]).strip()
    if job.get("soft_walltime") is not None and not by_hook:
        server.run("qalter", "-l", "soft_walltime={}".format(job["soft_walltime"]), job_id)
    return job_id


def release(server, jobs, job_ids, deletions, lead_s=2.0):
    """Release the jobs at their offsets from now + ``lead_s``; ``{name: epoch seconds just before qrls}``.
    The jobs that name ``delete_after`` are deleted that long after (``deletions`` collects the timers)."""
    released, start, by_name = {}, time.time() + lead_s, {job["name"]: job for job in jobs}
    for offset, names in release_groups(jobs):
        delay = start + offset - time.time()
        if delay > 0:
            time.sleep(delay)
        now = time.time()
        server.run("qrls", *[job_ids[name] for name in names])
        released.update((name, round(now, 3)) for name in names)
        for name in names:
            delete_later(server, by_name[name], job_ids[name], deletions)
    return released


def submit_directly(server, jobs, job_ids, deletions, lead_s=2.0, by_hook=False):
    """Submit each job at its offset from now + ``lead_s``, not held, and set its soft walltime as the manager
    right after (or, ``by_hook``, let the queuejob hook set it); fills ``job_ids``; ``{name: epoch seconds just
    before qsub}``. As ``release`` for ``delete_after``."""
    submitted, start = {}, time.time() + lead_s
    for job in sorted(jobs, key=lambda job: float(job["offset"])):  # stable: one offset's jobs in workload order
        delay = start + float(job["offset"]) - time.time()
        if delay > 0:
            time.sleep(delay)
        now = time.time()
        job_id = submit_one(server, job, job_ids, held=False, by_hook=by_hook)
        submitted[job["name"]] = round(now, 3)
        delete_later(server, job, job_id, deletions)
    return submitted


def delete_later(server, job, job_id, deletions):
    """Delete ``job`` (``qdel``) ``delete_after`` seconds from now, if it names one (a timer added to
    ``deletions``)."""
    if job.get("delete_after") is not None:
        timer = threading.Timer(float(job["delete_after"]), server.run, args=("qdel", job_id),
                                kwargs={"check": False})
        timer.daemon = True
        timer.start()
        deletions.append(timer)


def wait_for_idle(server, timeout_s):
    """Wait until the server has no unfinished job (the deleted ones gone too); False at the timeout."""
    deadline = time.monotonic() + timeout_s
    while server.run("qselect").split():
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


class LogMark:
    """Where a PBS log (accounting, sched_logs) ended when the recording began; reads what came after."""

    def __init__(self, server, kind):
        self.server, self.kind = server, kind
        self.first_day = time.strftime("%Y%m%d")
        self.offset = os.path.getsize(self._file(self.first_day)) if os.path.exists(self._file(self.first_day)) else 0

    def _file(self, day):
        return self.server.path(os.path.join(self.kind, day))

    def days(self):
        """The log days from the first to today."""
        day, last = datetime.datetime.strptime(self.first_day, "%Y%m%d").date(), datetime.date.today()
        while day <= last:
            yield day.strftime("%Y%m%d")
            day += datetime.timedelta(days=1)

    def lines(self):
        """``{day: [lines written since the mark]}``."""
        found = {}
        for day in self.days():
            if os.path.exists(self._file(day)):
                with open(self._file(day), encoding="utf-8", errors="replace") as log:
                    log.seek(self.offset if day == self.first_day else 0)
                    found[day] = log.read().splitlines()
        return found


def wait_for_ends(accounting, job_ids, timeout_s):
    """Wait until every job has an E record; the ids still running at the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        lines = [line for day_lines in accounting.lines().values() for line in day_lines]
        missing = set(job_ids) - ended_jobs(lines, job_ids)
        if not missing or time.monotonic() > deadline:
            return sorted(missing)
        time.sleep(POLL_S)


def delete_never_run(server, accounting, never_ids, timeout_s=60):
    """Delete the jobs that were never to run (still queued) and wait for their D records."""
    if not never_ids:
        return
    server.run("qdel", *never_ids)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        deleted = {line.split(";", 3)[2] for day_lines in accounting.lines().values() for line in day_lines
                   if line.count(";") >= 3 and line.split(";", 3)[1] == "D"}
        if set(never_ids) <= deleted:
            return
        time.sleep(POLL_S)
    raise RuntimeError("no D record after qdel of {}".format(" ".join(never_ids)))


ACCRUAL_FILE = "accrual.log"
"""The server's log lines of the recording's jobs that change their accrue type (written when the workload's
``log_events`` includes 1024, as 2047 does), for checking the model's eligible time."""


def accrual_lines(server_logs, ids):
    """The server's "Accrue type has changed" lines of the jobs ``ids`` (an array's subjobs with it), in log
    order."""
    wanted = set(ids)
    return [line for lines in server_logs.lines().values() for line in lines
            if "Accrue type has changed" in line and line.count(";") >= 5
            and submitted_id(line.split(";")[4]) in wanted]


SERVER_LOG_FILE = "server.log"
"""The server's log lines of the recording's jobs that show, in the server's own order, when it took each job's end
from its execution host ("Obit received"), finished the job ("Exit_status", as the E record), queued it ("Job
Queued", its qsub), released it from hold and ran it at the scheduler's request, with the requests for a scheduler
cycle in between ("Scheduler sent command"): the order within a second that the accounting log does not keep. When
the server's ``log_events`` includes 1024 (as 2047 does), also each update of a running job's ``resources_used``
received from its MoM ("Received session ID for job", "Received the same SID as before"): when each measurement
reached the server."""

SERVER_EVENTS = ("Obit received", "Exit_status=", "released at request", "Job Queued at request", "Job Run at request",
                 "Received session ID for job", "Received the same SID as before")

SCHED_LOG_FILE = "sched.log"
"""The scheduler's log while the recording ran: each cycle, the jobs it considered, the top jobs with their
estimated start, and why a job did not run."""


def server_event_lines(server_logs, ids):
    """The server's log lines of the jobs ``ids`` (an array's subjobs with it) that carry one of ``SERVER_EVENTS``,
    and its "Scheduler sent command" lines, in log order."""
    wanted, kept = set(ids), []
    for lines in server_logs.lines().values():
        for line in lines:
            fields = line.split(";", 5)
            if len(fields) < 6:
                continue
            if fields[5].startswith("Scheduler sent command") or (
                    submitted_id(fields[4]) in wanted and any(event in fields[5] for event in SERVER_EVENTS)):
                kept.append(line)
    return kept


def scheduler_errors(sched_logs):
    """The scheduler's log lines of the recording flagged as errors (event type bit 0x0001)."""
    errors = []
    for lines in sched_logs.lines().values():
        for line in lines:
            parts = line.split(";", 2)
            if len(parts) == 3 and re.fullmatch(r"[0-9a-fA-F]{4}", parts[1]) and int(parts[1], 16) & 1:
                errors.append(line)
    return errors


# --- writing the recording ---------------------------------------------------------------------------

def new_file(path, text):
    """Write ``text`` to a file that must not exist yet (never replaces anything)."""
    with open(path, "x", encoding="utf-8") as target:
        target.write(text)


def write_site(server, outdir):
    """The site folder an admin would produce: qmgr.txt, sched_config, resource_group, pbsnodes.json, the
    MoM's configuration (mom_config: how often it reports usage) and the scheduler's fairshare usage file
    (usage: when it decays)."""
    site = os.path.join(outdir, "site")
    os.makedirs(site, exist_ok=True)
    new_file(os.path.join(site, "qmgr.txt"), server.qmgr("print server"))
    new_file(os.path.join(site, "qmgr-sched.txt"), server.qmgr("print sched"))
    for name in ("sched_config", "resource_group"):
        new_file(os.path.join(site, name), server.read("sched_priv/" + name) or "")
    new_file(os.path.join(site, "pbsnodes.json"), server.run("pbsnodes", "-av", "-F", "json"))
    new_file(os.path.join(site, "mom_config"), server.read("mom_priv/config") or "")
    usage = usage_bytes(server)
    if usage is not None:
        with open(os.path.join(site, "usage"), "xb") as target:
            target.write(usage)


def write_accounting(accounting, job_ids, outdir):
    """OUTDIR/accounting/YYYYMMDD: the recording's lines of each day; how many lines in all."""
    folder = os.path.join(outdir, "accounting")
    os.makedirs(folder, exist_ok=True)
    count = 0
    for day, lines in sorted(accounting.lines().items()):
        kept = recording_lines(lines, job_ids)
        if kept:
            new_file(os.path.join(folder, day), "".join(line + "\n" for line in kept))
            count += len(kept)
    return count


MEASUREMENTS_FILE = "mom_measurements.json"


class Measurements:
    """The instants at which a MoM measured its running jobs, from ``qstat -f -F json`` read in turn: each
    running job's ``stime`` plus every new ``resources_used.walltime`` it shows (its first report, 0 s at its
    start, left out). ``stime`` is read in this machine's time zone, the server's."""

    def __init__(self):
        self.instants, self._seen = set(), {}

    def add(self, qstat):
        """Take one ``qstat -f -F json`` output (a dict)."""
        from predictor.durations import parse_duration
        for job_id, job in (qstat.get("Jobs") or {}).items():
            walltime, stime = (job.get("resources_used") or {}).get("walltime"), job.get("stime")
            if job.get("job_state") != "R" or not walltime or not stime:
                continue
            seconds = parse_duration(walltime)
            if seconds and self._seen.get(job_id) != seconds:
                self.instants.add(stime_epoch(stime) + seconds)
            self._seen[job_id] = seconds


def stime_epoch(stime):
    """Epoch seconds of a job's ``stime`` as ``qstat -f`` writes it, read in this machine's time zone."""
    return int(time.mktime(time.strptime(stime, "%a %b %d %H:%M:%S %Y")))


class MeasurementWatch(threading.Thread):
    """``Measurements`` of ``server``, read every ``interval_s`` until ``stop()``."""

    def __init__(self, server, interval_s=1.0):
        super().__init__(daemon=True)
        self.server, self.interval_s = server, interval_s
        self.measurements, self.failures, self._stop_event = Measurements(), 0, threading.Event()

    def run(self):
        while not self._stop_event.is_set():
            began = time.monotonic()
            try:
                self.measurements.add(json.loads(self.server.run("qstat", "-f", "-F", "json", timeout=10) or "{}"))
            except (RuntimeError, ValueError, OSError, subprocess.SubprocessError):
                self.failures += 1
            self._stop_event.wait(max(0.0, self.interval_s - (time.monotonic() - began)))

    def stop(self):
        self._stop_event.set()
        self.join()

    def document(self):
        return {"description": "When the MoM measured its running jobs during this recording: each instant is a "
                               "running job's stime plus a new resources_used.walltime that qstat -f -F json "
                               "showed for it, read every second while the job was in state R (a job's first "
                               "report, 0 s at its start, left out).",
                "measured_at": sorted(self.measurements.instants), "qstat_failures": self.failures}


def record(server, workload, outdir, timeout_s, watch_measurements=False):
    """Play the workload, write the recording; the server is put back as it was, whatever happens. With
    ``watch_measurements``, also OUTDIR/mom_measurements.json (``MeasurementWatch``)."""
    saved = save_state(server)
    watch = MeasurementWatch(server) if watch_measurements else None
    job_ids, summary = {}, {"workload": workload, "pbs_version": pbs_version(server)}
    accounting, sched_logs = LogMark(server, "server_priv/accounting"), LogMark(server, "sched_logs")
    server_logs = LogMark(server, "server_logs")
    try:
        renice(server, NICE_WHILE_RECORDING)
        configure(server, saved, workload)
        summary["configured_at"] = round(time.time(), 3)
        if watch is not None:
            watch.start()
        deletions = []
        if workload.get("submission", HELD) in (DIRECT, QUEUEJOB):
            summary["released_at"] = submit_directly(server, workload["jobs"], job_ids, deletions,
                                                     by_hook=workload.get("submission") == QUEUEJOB)
        else:
            submit(server, workload["jobs"], job_ids)
            summary["released_at"] = release(server, workload["jobs"], job_ids, deletions)
        for timer in deletions:
            timer.join()
        never = never_run_names(workload)
        not_waited_for = never | deleted_names(workload)
        missing = wait_for_ends(accounting, [job_ids[name] for name in sorted(job_ids) if name not in not_waited_for],
                                timeout_s)
        if missing:
            raise RuntimeError("jobs still not ended after {} s: {}".format(timeout_s, " ".join(missing)))
        delete_never_run(server, accounting, [job_ids[name] for name in sorted(never)])
        if not wait_for_idle(server, timeout_s):
            raise RuntimeError("jobs still on the server after {} s".format(timeout_s))
        if watch is not None:
            watch.stop()
            new_file(os.path.join(outdir, MEASUREMENTS_FILE), json.dumps(watch.document(), indent=1) + "\n")
        time.sleep(2 * POLL_S)  # let the scheduler finish its last cycle before the files are copied
        write_site(server, outdir)
        summary["fairshare_usage_end"] = server.run("pbsfs", "-p", check=False)
        summary["fairshare_usage_file"] = usage_file(server)
    finally:
        if watch is not None and watch.is_alive():
            watch.stop()
        failures = restore(server, saved, workload, list(job_ids.values()))
        for failure in failures:
            print("pbs_record: could not put back: " + failure, file=sys.stderr)
    accrual = accrual_lines(server_logs, list(job_ids.values()))
    if accrual:
        new_file(os.path.join(outdir, ACCRUAL_FILE), "".join(line + "\n" for line in accrual))
    events = server_event_lines(server_logs, list(job_ids.values()))
    if events:
        new_file(os.path.join(outdir, SERVER_LOG_FILE), "".join(line + "\n" for line in events))
    cycles = [line for lines in sched_logs.lines().values() for line in lines]
    if cycles:
        new_file(os.path.join(outdir, SCHED_LOG_FILE), "".join(line + "\n" for line in cycles))
    summary.update(job_ids=job_ids, accounting_lines=write_accounting(accounting, list(job_ids.values()), outdir),
                   sched_log_errors=scheduler_errors(sched_logs)[:20], restore_failures=failures,
                   differences_after_restore=state_differences(server, saved))
    new_file(os.path.join(outdir, "recording.json"), json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def usage_bytes(server):
    """The scheduler's fairshare usage file, or None when it kept none."""
    try:
        with open(server.path("sched_priv/usage"), "rb") as source:
            return source.read()
    except OSError:
        return None


def usage_file(server):
    """The fairshare usage file decoded (``{"last_decay": epoch, "usage": {entity: usage}}``), or None when
    the scheduler kept none or it is not a version 2 file."""
    from replay.shared.errors import SiteError
    from replay.site.usage import decode_usage
    data = usage_bytes(server)
    try:
        usage = None if data is None else decode_usage(data)
    except SiteError:
        return None
    return None if usage is None else {"last_decay": usage.last_decay, "usage": dict(usage.usage)}


def pbs_version(server):
    return server.run("qstat", "--version").split("=")[-1].strip()


def timeout_for(workload):
    """Long enough for every job (each subjob of an array) to run one after another after the last release."""
    jobs = workload["jobs"]
    runs = [_array_range(job["array"]) if job.get("array") else (1, 0) if job.get("never_runs") else (1, 1)
            for job in jobs]
    return max(job["offset"] for job in jobs) + sum((job["runtime"] + 3) * (last - first + 1)
                                                    for job, (first, last) in zip(jobs, runs)) + 120


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="workload JSON file (benchmarks/fidelity_workloads.py writes them), or a "
                                         "recording's recording.json to record its workload again")
    parser.add_argument("outdir", help="new folder for the recording")
    parser.add_argument("--pbs-run", default=os.environ.get("SWT_PBS_RUN", ""),
                        help="command that runs PBS commands (default: run them directly)")
    parser.add_argument("--pbs-home", default=pbs_conf("PBS_HOME", DEFAULT_PBS_HOME), help="PBS_HOME")
    parser.add_argument("--watch-measurements", action="store_true",
                        help="read qstat every second while the workload runs and write OUTDIR/" + MEASUREMENTS_FILE
                             + ": when the MoM measured its running jobs")
    arguments = parser.parse_args(argv)
    try:
        workload = load_workload(arguments.workload)
    except WorkloadError as err:
        print("pbs_record: " + str(err), file=sys.stderr)
        return 2
    if os.path.exists(os.path.join(arguments.outdir, "recording.json")):
        print("pbs_record: {} already holds a recording".format(arguments.outdir), file=sys.stderr)
        return 2
    os.makedirs(arguments.outdir, exist_ok=True)
    server = Server(shlex.split(arguments.pbs_run), arguments.pbs_home, pbs_conf("PBS_EXEC", "/opt/pbs"))
    if server.run("qselect").split():
        print("pbs_record: the server has unfinished jobs; record on an idle test server", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        summary = record(server, workload, arguments.outdir, timeout_for(workload), arguments.watch_measurements)
    except (KeyboardInterrupt, SystemExit, RuntimeError, OSError, subprocess.SubprocessError) as err:
        print("pbs_record: stopped: {} (anything not put back is listed above)".format(str(err) or type(err).__name__),
              file=sys.stderr)
        return 1
    for problem in recording_problems(arguments.outdir):
        print("pbs_record: " + problem, file=sys.stderr)
    print("{} jobs, {} accounting lines, {} scheduler errors, PBS back as it was: {}".format(
        len(summary["job_ids"]), summary["accounting_lines"], len(summary["sched_log_errors"]),
        "yes" if not summary["differences_after_restore"] and not summary["restore_failures"]
        else "NO: " + "; ".join(summary["restore_failures"] + summary["differences_after_restore"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
