"""What the hook file calls: read the event, decide, set, accept -- and fail open.

``run(pbs)`` handles the current event, whichever of queuejob, runjob,
modifyjob or jobobit it is. Whatever happens -- no or bad config, database
down, refused, locked or slow, an odd job, a bug -- the event is accepted,
and a failure costs one line in the server log at ``pbs.LOG_WARNING`` (logged
by default). Nothing here calls ``e.reject()``: a rejection by this package
would fail a user's qsub or qalter.

pbs_server runs every hook in one embedded interpreter: the hook file runs
in a fresh namespace per event, but this module stays imported until the
server restarts the interpreter. The one ``Runtime`` below holds what lives
that long: the parsed configs, the database connections, and the pause after
a timeout. A new interpreter starts with a new one.

Time: each event's database work has a deadline of ``budget_s`` from the start
of ``run`` (connect and query together, with no retry that could add up). When
the database did not answer within the budget, events skip it for
``pause_after_timeout_s``, so that a hung server costs pbs_server one budget
per pause, not one per job.
"""

import os
import time

from ..algorithms import clamp
from ..durations import format_duration
from ..errors import ConfigError, DatabaseError, DeadlineExceeded
from ..history import predict
from ..jobs import JobRequest
from .config import read_hook_config
from .events import completed_job, modifyjob_view, queuejob_view, runjob_view
from .policy import plan
from .store import HookHistory

__all__ = ["run", "Runtime", "RUNTIME", "HOOK_EVENTS", "PREDICTING_EVENTS", "LOG_PREFIX"]

LOG_PREFIX = "pbs-softwalltime"

_VIEWS = {"queuejob": queuejob_view, "runjob": runjob_view, "modifyjob": modifyjob_view}
"""The events that set soft_walltime, each with the reading of its job."""

PREDICTING_EVENTS = tuple(_VIEWS)
"""The events that set soft_walltime (one PBS hook serves all three)."""

HOOK_EVENTS = PREDICTING_EVENTS + ("jobobit",)
"""Every event the hook file handles; each name is also the ``pbs`` event-type constant, upper-cased."""

_MAX_STORES = 4


class Runtime:
    """The state one hook interpreter keeps across events: configs, connections, pauses."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._configs = {}       # config path -> (file signature, HookConfig)
        self._stores = {}        # (ConnectParams, budget_s, read_only) -> HookHistory
        self._paused_until = {}  # same key -> clock time before which the database is not asked

    def run(self, pbs, event=None):
        """Handle the current event; always accepts it (``accept`` raises SystemExit, as in PBS)."""
        started, name = self.clock(), None
        event = pbs.event() if event is None else event
        try:
            name = _event_name(pbs, event)
            _HANDLERS[name](self, pbs, event, name, started)
        except Exception as err:  # fail open: the job must go through whatever went wrong here
            warn(pbs, name, None, "job accepted unchanged: " + _describe(err))
        event.accept()

    def config(self, pbs):
        """The hook config, parsed again only when the file changed (qmgr import writes a new one)."""
        path = pbs.hook_config_filename
        try:
            info = os.stat(path) if path else None
        except OSError:
            info = None
        signature = None if info is None else (info.st_ino, info.st_size, info.st_mtime_ns)
        cached = self._configs.get(path)
        if cached is not None and signature is not None and cached[0] == signature:
            return cached[1]
        config = read_hook_config(path)
        self._configs[path] = (signature, config)
        return config

    def with_store(self, params, config, read_only, action):
        """``action(store)`` on the cached store for ``params``, unless a recent timeout paused it."""
        key = (params, config.budget_s, read_only)
        now = self.clock()
        paused_until = self._paused_until.get(key, 0.0)
        if now < paused_until:
            raise DatabaseError("database skipped for {:.0f} s more: it did not answer within budget_s ({:g} s) "
                                "recently".format(paused_until - now, config.budget_s))
        try:
            return action(self._store(key))
        except DeadlineExceeded:
            self._paused_until[key] = self.clock() + config.pause_after_timeout_s
            raise

    def paused(self):
        """How many databases are being skipped after a timeout right now."""
        now = self.clock()
        return sum(until > now for until in self._paused_until.values())

    def _store(self, key):
        store = self._stores.get(key)
        if store is None:
            if len(self._stores) >= _MAX_STORES:  # the config changed several times: drop the old connections
                self.close()
            params, budget_s, read_only = key
            store = self._stores[key] = HookHistory(params, timeout_s=budget_s, read_only=read_only)
        return store

    def close(self):
        """Close the cached connections (configs and pauses stay)."""
        for store in self._stores.values():
            store.close()
        self._stores.clear()


def _event_name(pbs, event):
    for name in HOOK_EVENTS:
        constant = getattr(pbs, name.upper(), None)
        if constant is not None and event.type == constant:
            return name
    raise ConfigError("the hook ran for event type {}, which it does not handle; set the hook's event to some of {}"
                      .format(event.type, ", ".join(HOOK_EVENTS)))


def _describe(err):
    if isinstance(err, (ConfigError, DatabaseError)):
        return str(err)
    return "unexpected {}: {}".format(type(err).__name__, err)


def warn(pbs, hook_event, job_id, message):
    """A failure: one line at LOG_WARNING, which the server log shows by default."""
    _log(pbs, "LOG_WARNING", hook_event, job_id, message)


def note(pbs, hook_event, job_id, message):
    """A success: at EVENT_DEBUG3, which the server log omits by default (log_events 511)."""
    _log(pbs, "EVENT_DEBUG3", hook_event, job_id, message)


def _log(pbs, level_name, hook_event, job_id, message):
    where = "" if hook_event is None else " " + hook_event if job_id is None else " {} {}".format(hook_event, job_id)
    line = " ".join("{}{}: {}".format(LOG_PREFIX, where, message).split())  # one line, whatever the text held
    try:
        pbs.logmsg(getattr(pbs, level_name), line[:2000])
    except Exception:  # nowhere left to report to; the job must still be accepted
        pass


# --- the three prediction events ---------------------------------------------------------------


def _set_soft_walltime(runtime, pbs, event, name, started):
    view = _VIEWS[name](event)
    config = runtime.config(pbs)
    decision = plan(view, config, int(time.time()))
    soft_s, failure = decision.fallback_s, None
    if decision.predict:
        try:
            predicted = _predict(runtime, config, view, started)
        except DatabaseError as err:
            failure = err
        else:
            # PBS does not check runjob values: keep every value in [1, walltime] ourselves.
            soft_s = soft_s if predicted is None else clamp(predicted, view.walltime_s)
    before = view.explicit_soft_s if view.explicit_soft_s is not None else view.existing_soft_s
    change = _change(before, soft_s)
    if config.observe:
        change = "observe mode, nothing set: would set " + change if soft_s not in (None, before) else change
    elif soft_s is not None and soft_s != before:
        event.job.Resource_List["soft_walltime"] = pbs.duration(soft_s)
    if failure is not None:
        warn(pbs, name, view.job_id, "user {!r}: job accepted, {}: {}".format(view.user, change, failure))
    elif decision.predict or soft_s is not None:
        note(pbs, name, view.job_id, "user {!r}: {}".format(view.user, change))


def _change(before_s, after_s):
    if after_s is None or after_s == before_s:
        return "soft_walltime unchanged ({})".format("none" if before_s is None else format_duration(before_s))
    return "soft_walltime {} -> {}".format("none" if before_s is None else format_duration(before_s),
                                           format_duration(after_s))


def _predict(runtime, config, view, started):
    if config.reader is None:
        raise ConfigError("reader_dsn is not set in this hook's config, so it cannot predict; "
                          "set it, or attach this config to the jobobit hook only")
    deadline = started + config.budget_s
    # queuejob: the job is being submitted now; a time-window predictor counts back from then.
    submit_time = view.submit_time if view.submit_time is not None else int(time.time())
    request = JobRequest(view.user, view.walltime_s, view.queue, view.project, submit_time=submit_time)
    return runtime.with_store(config.reader, config, True,
                              lambda store: predict(store, config.algorithm, request, deadline))


# --- jobobit -----------------------------------------------------------------------------------

def _record_finished_job(runtime, pbs, event, name, started):
    config = runtime.config(pbs)
    job = completed_job(event.job)
    if job is None:
        return
    if config.writer is None:
        raise ConfigError("writer_dsn is not set in the hook config, so finished jobs cannot be recorded")
    deadline = started + config.budget_s
    try:
        runtime.with_store(config.writer, config, False, lambda store: store.add(job, deadline))
    except DatabaseError as err:
        # An abandoned upsert may still commit later; ingesting the accounting logs fills any gap.
        warn(pbs, name, job.job_id, "finished job may not be recorded: {}".format(err))
        return
    note(pbs, name, job.job_id, "recorded runtime {} s of user {!r}".format(job.runtime_s, job.user))


_HANDLERS = dict(dict.fromkeys(PREDICTING_EVENTS, _set_soft_walltime), jobobit=_record_finished_job)
"""Event name (``HOOK_EVENTS``) -> what handles it."""

RUNTIME = Runtime()
"""This interpreter's runtime: created when the module is imported, i.e. once per hook interpreter."""


def run(pbs):
    """Handle the current PBS event with this interpreter's ``RUNTIME``; always accepts it."""
    RUNTIME.run(pbs)
