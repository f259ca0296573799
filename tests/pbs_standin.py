"""A small, strict stand-in for PBS's ``pbs`` hook module (after ../shared/pbs-facts.md).

A test double of PBS, never of our code. ``run_hook`` runs a real hook file the
way pbs_server does: compiled once (file name ``<embedded code object>``) and
executed in a fresh namespace per event holding only ``__builtins__`` -- so no
``__file__`` -- while ``sys.modules`` lives on between events, as in
pbs_server's long-lived interpreter. ``import pbs`` inside the hook gets this
module.

What it enforces, as PBS does:

* ``e.accept()`` / ``e.reject(msg)`` raise SystemExit and freeze the job; ending
  the script without either is an accept; an unhandled exception or the hook
  alarm (KeyboardInterrupt, as pbs_python_set_interrupt raises) is a rejection.
* ``duration``: an int of seconds built from an int or ``"[[HH:]MM:]SS"``;
  ``str()`` gives the original text; arithmetic gives plain ints.
* ``Resource_List``: an unset resource reads None; durations must be set as
  ``duration``. After queuejob and modifyjob the server checks soft_walltime
  (> 0, <= walltime, not on a shrink-to-fit job) and rejects the request if it
  is illegal; after runjob it checks nothing.
* ``logmsg(level, msg)``: only ``LOG_*`` and ``EVENT_*`` levels, else TypeError.
* ``hook_config_filename`` (and ``$PBS_HOOK_CONFIG_FILE``) are set per run.
* queuejob: no job id or euser (None), walltime None when not requested.
  modifyjob: ``e.job`` holds only the changes, ``e.job_o`` the full job.
  jobobit: the job is read-only.
"""

import builtins
import os
import re
import signal
import sys
import time
from typing import List, NamedTuple, Tuple

# Event types: the HOOK_EVENT_* values of src/include/hook.h.
QUEUEJOB = 0x01
MODIFYJOB = 0x02
MOVEJOB = 0x08
RUNJOB = 0x10
EXECJOB_BEGIN = 0x40
PERIODIC = 0x8000
JOBOBIT = 0x800000

# logmsg levels: LOG_* are syslog severities (logged as ADMIN|SYSTEM events), EVENT_* event classes.
LOG_DEBUG = 0x0005
LOG_WARNING = 0x0006
LOG_ERROR = 0x0007
EVENT_ERROR = 0x0001
EVENT_SYSTEM = 0x0002
EVENT_ADMIN = 0x0004
EVENT_JOB = 0x0008
EVENT_JOB_USAGE = 0x0010
EVENT_SECURITY = 0x0020
EVENT_SCHED = 0x0040
EVENT_DEBUG = 0x0080
EVENT_DEBUG2 = 0x0100
EVENT_RESV = 0x0200
EVENT_DEBUG3 = 0x0400
EVENT_DEBUG4 = 0x0800
EVENT_FORCE = 0x8000

SERVER_LOG_EVENTS_DEFAULT = 511
"""pbs_server's default log_events mask: ERROR through DEBUG2."""

_SEVERITIES = (LOG_DEBUG, LOG_WARNING, LOG_ERROR)
_EVENT_CLASSES = (EVENT_ERROR, EVENT_SYSTEM, EVENT_ADMIN, EVENT_JOB, EVENT_JOB_USAGE, EVENT_SECURITY, EVENT_SCHED,
                  EVENT_DEBUG, EVENT_DEBUG2, EVENT_RESV, EVENT_DEBUG3, EVENT_DEBUG4, EVENT_FORCE)

hook_config_filename = None
"""Path of the hook's config file during a run, else None."""

ILLEGAL_VALUE = "Illegal attribute or resource value"


class EventIncompatibleError(Exception):
    """An operation the current event does not allow (e.g. changing a read-only job)."""


class BadResourceValueTypeError(TypeError):
    """A resource set to a value of the wrong type."""


class BadResourceValueError(ValueError):
    """A resource set to a value PBS cannot hold."""


_DURATION = re.compile(r"^(?:(?:(\d+):)?(\d+):)?(\d+)$")


class duration(int):
    """Seconds, built from an int or "[[HH:]MM:]SS"; ``str()`` returns the original text."""

    def __new__(cls, value):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise BadResourceValueTypeError("duration needs an int or '[[HH:]MM:]SS', not {!r}".format(value))
        text = value if isinstance(value, str) else str(int(value))
        match = _DURATION.match(text.strip())
        if match is None:
            raise BadResourceValueError("not a duration: {!r}".format(value))
        hours, minutes, seconds = (int(part) if part else 0 for part in match.groups())
        instance = super().__new__(cls, hours * 3600 + minutes * 60 + seconds)
        instance._text = text
        return instance

    def __str__(self):
        return self._text

    __repr__ = __str__


_DURATION_RESOURCES = ("walltime", "soft_walltime", "min_walltime", "max_walltime", "cput")


class Queue:
    """A queue object as ``job.queue`` gives it; ``str()`` is its name."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class _Resources:
    """``Resource_List`` / ``resources_used``: reads None when unset; writes checked by the job."""

    def __init__(self, job, values):
        self._job = job
        self._values = {}
        for name, value in (values or {}).items():
            self._values[name] = _resource_value(name, value)

    def __getitem__(self, name):
        return self._values.get(name)

    def __setitem__(self, name, value):
        self._job._check_writable()
        if value is None:
            self._values.pop(name, None)
            return
        if name in _DURATION_RESOURCES and not isinstance(value, duration):
            raise BadResourceValueTypeError("{} must be set as pbs.duration, not {!r}".format(name, value))
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise BadResourceValueTypeError("bad value for {}: {!r}".format(name, value))
        self._values[name] = value

    def __contains__(self, name):
        return name in self._values

    def items(self):
        return sorted(self._values.items())


def _resource_value(name, value):
    if name in _DURATION_RESOURCES and not isinstance(value, duration):
        return duration(value)
    return value


_JOB_ATTRIBUTES = ("id", "euser", "egroup", "project", "queue", "Job_Name", "job_state", "ctime", "qtime",
                   "stime", "obittime", "Exit_status")


class Job:
    """A job as a hook sees it. Unset attributes read None; unknown names raise AttributeError."""

    def __init__(self, resources=None, used=None, read_only=False, **attributes):
        unknown = set(attributes) - set(_JOB_ATTRIBUTES)
        if unknown:
            raise AttributeError("not a job attribute: {}".format(sorted(unknown)))
        object.__setattr__(self, "_read_only", read_only)
        object.__setattr__(self, "_frozen", False)
        object.__setattr__(self, "_attributes", dict.fromkeys(_JOB_ATTRIBUTES))
        self._attributes.update(attributes)
        object.__setattr__(self, "Resource_List", _Resources(self, resources))
        object.__setattr__(self, "resources_used", _Resources(self, used))

    def __getattr__(self, name):
        attributes = object.__getattribute__(self, "_attributes")
        if name not in attributes:
            raise AttributeError("job has no attribute {!r}".format(name))
        return attributes[name]

    def __setattr__(self, name, value):
        self._check_writable()
        if name not in self._attributes:
            raise AttributeError("job has no attribute {!r}".format(name))
        self._attributes[name] = value

    def _check_writable(self):
        if self._read_only:
            raise EventIncompatibleError("the job is read-only in this event")
        if self._frozen:
            raise EventIncompatibleError("the event was already accepted or rejected")


class Event:
    """``pbs.event()``: the event being handled."""

    def __init__(self, event_type, job, job_o=None, requestor="", hook_name=""):
        self.type = event_type
        self.job = job
        self.job_o = job_o
        self.requestor = requestor
        self.hook_name = hook_name
        self.outcome = None      # None (still running), "accept" or "reject"
        self.reject_msg = ""

    def accept(self, ecode=0):
        """Accept the request and end the hook."""
        self._end("accept", "")

    def reject(self, msg=""):
        """Reject the request with ``msg`` and end the hook."""
        self._end("reject", msg)

    def _end(self, outcome, msg):
        if self.outcome is None:
            self.outcome, self.reject_msg = outcome, msg
            for job in (self.job, self.job_o):
                if job is not None:
                    object.__setattr__(job, "_frozen", True)
        raise SystemExit(0)


# --- building events as the server would ----------------------------------------

def queuejob_event(requestor, resources=None, queue=""):
    """A qsub as queuejob sees it: only what the client sent; no id, no euser, maybe no queue."""
    return Event(QUEUEJOB, Job(resources, queue=Queue(queue) if queue else None), requestor=requestor)


def runjob_event(job):
    """The scheduler starting ``job`` (a full job with defaults applied)."""
    return Event(RUNJOB, job, requestor="Scheduler")


def modifyjob_event(job_o, changed_resources, requestor):
    """A qalter of ``changed_resources`` on ``job_o``: e.job holds only the changes."""
    return Event(MODIFYJOB, Job(changed_resources), job_o=job_o, requestor=requestor)


def jobobit_event(job):
    """The end of ``job``: the job is read-only."""
    object.__setattr__(job, "_read_only", True)
    return Event(JOBOBIT, job, requestor="Server")


# --- the module functions a hook calls -------------------------------------------

_current_event = None
_log = []


def event():
    """The event being handled."""
    if _current_event is None:
        raise EventIncompatibleError("no event: not inside a hook")
    return _current_event


def logmsg(level, msg):
    """Write ``msg`` to the server log; TypeError for an invalid level or a non-string message."""
    if isinstance(level, bool) or level not in _SEVERITIES + _EVENT_CLASSES:
        raise TypeError("Invalid severity or eventtype value <{}>".format(level))
    if not isinstance(msg, str):
        raise TypeError("logmsg() argument 2 must be str, not {}".format(type(msg).__name__))
    _log.append((level, msg))


def logged_by_default(level):
    """Whether the server log shows ``level`` with the default log_events (511)."""
    event_class = EVENT_ADMIN | EVENT_SYSTEM if level in _SEVERITIES else level
    return bool(event_class & SERVER_LOG_EVENTS_DEFAULT)


# --- running a hook file ---------------------------------------------------------

class HookResult(NamedTuple):
    """How one event ended. ``resources``: the job's Resource_List after it, as a dict."""

    accepted: bool
    reason: str
    logs: List[Tuple[int, str]]
    elapsed_s: float
    resources: dict

    @property
    def warnings(self):
        """Log lines an admin sees with the default log_events."""
        return [msg for level, msg in self.logs if logged_by_default(level)]


_compiled = {}   # path -> (mtime_ns, size, code): PBS recompiles only when the file changes


def _compile(path):
    info = os.stat(path)
    cached = _compiled.get(path)
    if cached is None or cached[:2] != (info.st_mtime_ns, info.st_size):
        with open(path, "rb") as hook_file:
            source = hook_file.read().replace(b"\r", b" ")
        cached = _compiled[path] = (info.st_mtime_ns, info.st_size, compile(source, "<embedded code object>", "exec"))
    return cached[2]


def _interrupt(signum, frame):
    raise KeyboardInterrupt("hook alarm")


def run_hook(path, hook_event, config_path=None, alarm_s=30):
    """Run the hook file at ``path`` for ``hook_event`` as pbs_server would; a ``HookResult``."""
    global _current_event, hook_config_filename
    sys.modules["pbs"] = sys.modules[__name__]
    _current_event, hook_config_filename = hook_event, config_path
    os.environ.pop("PBS_HOOK_CONFIG_FILE", None)
    if config_path:
        os.environ["PBS_HOOK_CONFIG_FILE"] = config_path
    del _log[:]
    code = _compile(path)
    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.setitimer(signal.ITIMER_REAL, alarm_s)
    started = time.monotonic()
    try:
        reason = _execute(code, hook_event)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        elapsed = time.monotonic() - started
        _current_event, hook_config_filename = None, None
    return _finish(hook_event, reason, elapsed)


def _execute(code, hook_event):
    """The rejection reason, or None if the script accepted (or just ended)."""
    try:
        exec(code, {"__builtins__": builtins})
    except SystemExit:
        pass
    except KeyboardInterrupt:
        return "hook alarm: the hook ran longer than its alarm"
    except BaseException as err:  # PBS rejects on any unhandled exception
        return "unhandled exception in hook: {}: {}".format(type(err).__name__, err)
    if hook_event.outcome == "reject":
        return "rejected by hook: {}".format(hook_event.reject_msg)
    return None


def _finish(hook_event, reason, elapsed):
    for job in (hook_event.job, hook_event.job_o):
        if job is not None:
            object.__setattr__(job, "_frozen", True)
    final = _final_resources(hook_event)
    if reason is None and hook_event.type in (QUEUEJOB, MODIFYJOB):
        reason = _server_check(final)
    if reason is not None and hook_event.type == MODIFYJOB:
        final = dict(hook_event.job_o.Resource_List.items())
    return HookResult(reason is None, reason or "", list(_log), elapsed, final)


def _final_resources(hook_event):
    resources = dict(hook_event.job.Resource_List.items())
    if hook_event.type == MODIFYJOB:
        merged = dict(hook_event.job_o.Resource_List.items())
        merged.update(resources)
        return merged
    return resources


def _server_check(resources):
    """What the server checks after queuejob and modifyjob (not after runjob)."""
    soft = resources.get("soft_walltime")
    if soft is None:
        return None
    walltime = resources.get("walltime")
    if int(soft) <= 0 or (walltime is not None and int(soft) > int(walltime)) or "min_walltime" in resources:
        return ILLEGAL_VALUE
    return None
