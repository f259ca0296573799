"""A small, strict stand-in for PBS's ``pbs`` hook module (after ../shared/pbs-facts.md).

A test double of PBS, never of our code. ``run_hook`` runs a real hook file the
way pbs_server does: compiled once (file name ``<embedded code object>``) and
executed in a fresh namespace per event holding only ``__builtins__`` -- so no
``__file__`` -- while ``sys.modules`` lives on between events, as in
pbs_server's long-lived interpreter. ``import pbs`` inside the hook gets this
module.

What it enforces, as PBS does -- each check was tried in real hooks on an
OpenPBS 23.06.06 server (the comment at each says what that server did), and is
no stricter and no laxer than it:

* ``e.accept()`` / ``e.reject(msg)`` raise SystemExit and freeze the job; ending
  the script without either is an accept; an unhandled exception or the hook
  alarm (KeyboardInterrupt, as pbs_python_set_interrupt raises) is a rejection.
* ``duration``: an int of seconds built from ``str(value)`` read as
  ``[[HH:]MM:]SS[.fraction]`` (rounded half up); ``str()`` gives that text;
  arithmetic gives plain ints.
* ``Resource_List``: an unset built-in resource reads None, an unknown name
  raises AttributeError; durations are set as ``duration`` or int (converted),
  never as text or float. After queuejob and modifyjob the server checks
  soft_walltime (<= walltime, not on a shrink-to-fit job; 0 is legal) and
  rejects the request if it is illegal; after runjob it checks nothing.
* ``logmsg(level, msg)``: an int level (True is 1) that is one ``LOG_*`` or
  ``EVENT_*`` value, else TypeError; ``msg`` str or bytes.
* ``hook_config_filename`` (and ``$PBS_HOOK_CONFIG_FILE``) are set per run.
* queuejob: job id and queue ``""``, euser None, walltime None when not
  requested. modifyjob: ``e.job`` holds only the changes, ``e.job_o`` the full
  job. jobobit: the job is read-only.
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
SHRINK_TO_FIT = "soft_walltime is not supported with Shrink to Fit jobs"


# The exception classes of pbs.v1._exc_types, with their real bases: none is a TypeError or ValueError.

class EventIncompatibleError(AttributeError):
    """An operation the current event does not allow."""


class UnsetAttributeNameError(Exception):
    """A job attribute PBS does not have was set (real: "job attribute 'x' not found")."""


class BadAttributeValueError(Exception):
    """A read-only object changed (real, jobobit: "attribute 'Resource_List' is part of a readonly object")."""


class BadResourceValueTypeError(Exception):
    """A resource set to a value of the wrong type."""


class BadResourceValueError(Exception):
    """A resource set to a value PBS cannot hold."""


_DURATION = re.compile(r"^(?:(?:([0-9]+):)?([0-9]+):)?([0-9]+)(?:\.([0-9]+))?$")


class duration(int):
    """Seconds from ``str(value)`` read as "[[HH:]MM:]SS[.fraction]"; ``str()`` returns that text.

    Real 23.06.06 (pbs.duration parses str(value)): 0, 3600, "01:00:00", "99:99" (6039), 10**12 and "" (0)
    are accepted; 1.5 -> 2, 0.4 -> 0, 2.5 -> 3, "00:00:02.49" -> 2 (half up); -5, "-5", "+5", " 60",
    "60 ", "1h", "1:2:3:4", Arabic-Indic digits, True, None, b"60" raise BadResourceValueError ("input value X
    not of the right format for 'walltime'").
    """

    def __new__(cls, value):
        text = str(value)
        match = _DURATION.match(text)
        if match is None and text != "":
            raise BadResourceValueError("input value {} not of the right format for 'walltime'".format(text))
        hours, minutes, seconds, fraction = match.groups() if match else (None, None, "0", None)
        whole = int(hours or 0) * 3600 + int(minutes or 0) * 60 + int(seconds)
        instance = super().__new__(cls, whole + (fraction is not None and fraction[0] >= "5"))
        instance._text = text
        return instance

    def __str__(self):
        return self._text

    __repr__ = __str__


_DURATION_RESOURCES = ("walltime", "soft_walltime", "min_walltime", "max_walltime", "cput", "pcput")

BUILTIN_RESOURCES = frozenset((
    "accelerator accelerator_group accelerator_memory accelerator_model aoe arch cpupercent cput energy eoe "
    "exec_vnode file hbmem host hpm max_walltime mem min_walltime mpiprocs naccelerators nchunk ncpus nice nodect "
    "nodemask nodes noop ompthreads partition pcap_accelerator pcap_node pcput pgov place pmem preempt_targets "
    "pstate pvmem resc select site soft_walltime software ssinodes start_time vmem vnode vntype walltime").split())
"""The resources a 23.06.06 server with no custom resources knows (dir() of a queuejob's Resource_List)."""


class Queue:
    """A queue object as ``job.queue`` gives it; ``str()`` is its name."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class _Resources:
    """``Resource_List`` / ``resources_used``: reads None when unset; writes checked by the job.

    Names given when the job is made count as defined (a site's custom resources).
    """

    def __init__(self, job, values):
        self._job = job
        self._values = {}
        for name, value in (values or {}).items():
            self._values[name] = _resource_value(name, value)

    def __getitem__(self, name):
        # Real: Resource_List["zz_nonexistent"] raised AttributeError ("'pbs_resource' object has no attribute").
        if name not in self._values and name not in BUILTIN_RESOURCES:
            raise AttributeError("'pbs_resource' object has no attribute {!r}".format(name))
        return self._values.get(name)

    def __setitem__(self, name, value):
        self._job._check_writable()
        if value is None:
            self._values.pop(name, None)
            return
        if name in _DURATION_RESOURCES:
            value = _duration_setting(name, value)
        elif isinstance(value, float) or not isinstance(value, (int, str)):  # real: ncpus = True was accepted
            raise BadResourceValueTypeError("bad value for {}: {!r}".format(name, value))
        self._values[name] = value

    def __contains__(self, name):
        return name in self._values

    def items(self):
        return sorted(self._values.items())


def _duration_setting(name, value):
    """A duration resource takes a duration or an int, converted (real: soft_walltime = 0, 1800, 3600, 7200 were
    stored as durations; True and -5 raised BadResourceValueError from pbs.duration; "00:30:00" and 1800.5 raised
    BadResourceValueTypeError "value for class <pbs_resource> attribute <soft_walltime> must be 'None' or
    '(<class 'pbs.v1._base_types.duration'>,),<class 'int'>'")."""
    if isinstance(value, duration):
        return value
    if isinstance(value, int):
        return duration(value)
    raise BadResourceValueTypeError("value for class <pbs_resource> attribute <{}> must be 'None' or "
                                    "'(<class 'pbs.v1._base_types.duration'>,),<class 'int'>'".format(name))


def _resource_value(name, value):
    if name in _DURATION_RESOURCES and not isinstance(value, duration):
        return duration(value)
    return value


_JOB_ATTRIBUTES = ("id", "euser", "egroup", "project", "Account_Name", "queue", "Job_Name", "job_state", "ctime",
                   "qtime", "stime", "obittime", "Exit_status", "exec_host", "exec_vnode")


class Job:
    """A job as a hook sees it. Unset attributes read None; unknown names raise AttributeError when read and
    UnsetAttributeNameError when set (real: job.zz_x raised AttributeError, job.zz_x = 1 UnsetAttributeNameError)."""

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
            raise UnsetAttributeNameError("job attribute {!r} not found".format(name))
        self._attributes[name] = value

    def _check_writable(self):
        # Real, jobobit: setting Resource_List raised BadAttributeValueError. After accept() (its SystemExit
        # caught): AssertionError. Either way the hook failed and the request was rejected.
        if self._read_only:
            raise BadAttributeValueError("attribute 'Resource_List' is part of a readonly object")
        if self._frozen:
            raise AssertionError("Not permitted to modify attributes (name=Resource_List,res=soft_walltime): "
                                 "an event.accept() or event.reject() already called.")


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
    """A qsub as queuejob sees it: only what the client sent; no euser; id "" and queue "" unless given (real)."""
    return Event(QUEUEJOB, Job(resources, id="", queue=Queue(queue) if queue else ""), requestor=requestor)


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
    """Write ``msg`` to the server log; TypeError for an invalid level or a message that is not text.

    Real: True (= 1, EVENT_ERROR), 1, 5, 0x8000, LOG_DEBUG, EVENT_DEBUG3 were logged; False, 0, 3, 12
    (EVENT_JOB | EVENT_ADMIN), 42, 1029 raised TypeError "Invalid severity or eventtype value <N>"; "warning",
    None, 1.0 raised TypeError "'str' object cannot be interpreted as an integer"; 2**40 OverflowError. A bytes
    message was logged; 123 raised TypeError "a bytes-like object is required, not 'int'".
    """
    if not isinstance(level, int):
        raise TypeError("{!r} object cannot be interpreted as an integer".format(type(level).__name__))
    if not -2 ** 31 <= level < 2 ** 31:
        raise OverflowError("signed integer is greater than maximum")
    if level not in _SEVERITIES + _EVENT_CLASSES:
        raise TypeError("Invalid severity or eventtype value <{}>".format(int(level)))
    if not isinstance(msg, (str, bytes)):
        raise TypeError("a bytes-like object is required, not {!r}".format(type(msg).__name__))
    _log.append((int(level), msg if isinstance(msg, str) else msg.decode("utf-8", "replace")))


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
    """What the server checks after queuejob and modifyjob (not after runjob).

    Real: a queuejob or modifyjob hook setting soft_walltime 0 was accepted (qstat: 00:00:00; a manager's
    qalter -l soft_walltime=0 too), so was 1800 without a walltime; above walltime failed qsub and qalter with
    "Illegal attribute or resource value" (exit 166); on a job with min_walltime qsub failed with "soft_walltime
    is not supported with Shrink to Fit jobs" (exit 76). A runjob hook set 7200 on walltime 60 unchecked.
    """
    soft = resources.get("soft_walltime")
    if soft is None:
        return None
    if "min_walltime" in resources:
        return SHRINK_TO_FIT
    walltime = resources.get("walltime")
    if walltime is not None and int(soft) > int(walltime):
        return ILLEGAL_VALUE
    return None
