"""The package side of hooks/*.py: read the event, decide, set, accept, and fail open.

``run(pbs, hook_event)`` is all a hook file calls. Whatever happens -- no or bad
config, database down, refused, locked or slow, an odd job, a bug -- the event
is accepted, and a failure costs one line in the server log at
``pbs.LOG_WARNING`` (logged by default). Nothing here ever calls
``e.reject()``: a rejection by this package would fail a user's qsub.

pbs_server runs every hook in one long-lived interpreter: the hook file runs in
a fresh namespace per event, but this module stays imported. So the parsed
config, the database connections and the pause after a timeout live here,
across events and across the four hooks.

Time: each event's database work has a deadline of ``budget_s`` from the start
of ``run`` (connect and query together, with no retry that could add up). When
the database did not answer within the budget, events skip it for
``pause_after_timeout_s`` so that a hung server costs pbs_server one budget per
pause, not one per job.
"""

import os
import time

from .algorithms import clamp
from .durations import format_duration
from .errors import ConfigError, DatabaseError, DeadlineExceeded
from .hookconfig import read_hook_config
from .history import predict
from .jobs import JobRequest
from .pbsevent import completed_job, modifyjob_view, queuejob_view, runjob_view
from .pgstore import PgHistory
from .softwalltime import plan

__all__ = ["run", "reset", "HOOK_EVENTS", "LOG_PREFIX"]

LOG_PREFIX = "pbs-softwalltime"

_MAX_STORES = 4
_configs = {}        # config path -> (file signature, HookConfig)
_stores = {}         # (dsn, budget_s, read_only) -> PgHistory
_paused_until = {}   # same key -> monotonic time before which the database is not asked


def run(pbs, hook_event):
    """Handle the current event as ``hook_event`` (a key of HOOK_EVENTS); always accepts it."""
    started = time.monotonic()
    event = pbs.event()
    try:
        _check_event_type(pbs, event, hook_event)
        HOOK_EVENTS[hook_event](pbs, event, started)
    except Exception as err:  # fail open: the job must go through whatever went wrong here
        _warn(pbs, hook_event, None, "job accepted unchanged: " + _describe(err))
    event.accept()


def _check_event_type(pbs, event, hook_event):
    expected = getattr(pbs, hook_event.upper(), None)  # a PBS without the constant is not worth a failure
    if expected is not None and event.type != expected:
        raise ConfigError("this is the {} hook file but the hook ran for event type {}; set the hook's event = {}"
                          .format(hook_event, event.type, hook_event))


def _describe(err):
    if isinstance(err, (ConfigError, DatabaseError)):
        return str(err)
    return "unexpected {}: {}".format(type(err).__name__, err)


def _warn(pbs, hook_event, job_id, message):
    """A failure: one line at LOG_WARNING, which the server log shows by default."""
    _log(pbs, "LOG_WARNING", hook_event, job_id, message)


def _note(pbs, hook_event, job_id, message):
    """A success: at EVENT_DEBUG3, which the server log omits by default (log_events 511)."""
    _log(pbs, "EVENT_DEBUG3", hook_event, job_id, message)


def _log(pbs, level_name, hook_event, job_id, message):
    where = hook_event if job_id is None else "{} {}".format(hook_event, job_id)
    line = " ".join("{} {}: {}".format(LOG_PREFIX, where, message).split())  # one line, whatever the text held
    try:
        pbs.logmsg(getattr(pbs, level_name), line[:2000])
    except Exception:  # nowhere left to report to; the job must still be accepted
        pass


# --- the three prediction events ---------------------------------------------

def _queuejob(pbs, event, started):
    _set_soft_walltime(pbs, event, queuejob_view(event), started)


def _runjob(pbs, event, started):
    _set_soft_walltime(pbs, event, runjob_view(event), started)


def _modifyjob(pbs, event, started):
    _set_soft_walltime(pbs, event, modifyjob_view(event), started)


def _set_soft_walltime(pbs, event, view, started):
    config = _config(pbs)
    decision = plan(view, config)
    soft_s, failure = decision.fallback_s, None
    if decision.predict:
        try:
            predicted = _predict(config, view, started)
        except DatabaseError as err:
            failure = err
        else:
            # PBS does not check runjob values: keep every value in [1, walltime] ourselves.
            soft_s = soft_s if predicted is None else clamp(predicted, view.walltime_s)
    before = view.explicit_soft_s if view.explicit_soft_s is not None else view.existing_soft_s
    if soft_s is not None and soft_s != before:
        event.job.Resource_List["soft_walltime"] = pbs.duration(soft_s)
    if failure is not None:
        _warn(pbs, view.hook_event, view.job_id, "user {!r}: job accepted, {}: {}".format(
            view.user, _change(before, soft_s), failure))
    elif decision.predict or soft_s is not None:
        _note(pbs, view.hook_event, view.job_id, "user {!r}: {}".format(view.user, _change(before, soft_s)))


def _change(before_s, after_s):
    if after_s is None or after_s == before_s:
        return "soft_walltime unchanged ({})".format("none" if before_s is None else format_duration(before_s))
    return "soft_walltime {} -> {}".format("none" if before_s is None else format_duration(before_s),
                                           format_duration(after_s))


def _predict(config, view, started):
    deadline = started + config.budget_s
    request = JobRequest(view.user, view.walltime_s, view.queue)
    return _with_store(config.reader_dsn, config, True,
                       lambda store: predict(store, config.algorithm, request, deadline))


# --- jobobit -------------------------------------------------------------------

def _jobobit(pbs, event, started):
    config = _config(pbs)
    job = completed_job(event.job)
    if job is None:
        return
    if config.writer_dsn is None:
        raise ConfigError("writer_dsn is not set in the hook config, so finished jobs cannot be recorded")
    deadline = started + config.budget_s
    try:
        _with_store(config.writer_dsn, config, False, lambda store: store.add(job, deadline))
    except DatabaseError as err:
        # An abandoned upsert may still commit later; ingesting the accounting logs fills any gap.
        _warn(pbs, "jobobit", job.job_id, "finished job may not be recorded: {}".format(err))
        return
    _note(pbs, "jobobit", job.job_id, "recorded runtime {} s of user {!r}".format(job.runtime_s, job.user))


HOOK_EVENTS = {"queuejob": _queuejob, "runjob": _runjob, "modifyjob": _modifyjob, "jobobit": _jobobit}
"""Hook event name -> handler. The name is also the ``pbs`` event-type constant, upper-cased."""


# --- config and connections, kept across events ---------------------------------

def _config(pbs):
    """The hook config, parsed again only when the file changed (qmgr import writes a new one)."""
    path = pbs.hook_config_filename
    try:
        info = os.stat(path) if path else None
    except OSError:
        info = None
    signature = None if info is None else (info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _configs.get(path)
    if cached is not None and signature is not None and cached[0] == signature:
        return cached[1]
    config = read_hook_config(path)
    _configs[path] = (signature, config)
    return config


def _with_store(dsn, config, read_only, action):
    """``action(store)`` on the cached store for ``dsn``, unless a recent timeout paused it."""
    key = (dsn, config.budget_s, read_only)
    now = time.monotonic()
    paused_until = _paused_until.get(key, 0.0)
    if now < paused_until:
        raise DatabaseError("database skipped for {:.0f} s more: it did not answer within budget_s ({:g} s) "
                            "recently".format(paused_until - now, config.budget_s))
    try:
        return action(_store(key))
    except DeadlineExceeded:
        _paused_until[key] = time.monotonic() + config.pause_after_timeout_s
        raise


def _store(key):
    store = _stores.get(key)
    if store is None:
        if len(_stores) >= _MAX_STORES:  # the config changed several times: drop the old connections
            for old in _stores.values():
                old.close()
            _stores.clear()
        dsn, budget_s, read_only = key
        store = _stores[key] = PgHistory(dsn, timeout_s=budget_s, read_only=read_only)
    return store


def reset():
    """Close the cached connections and forget configs and pauses, as a pbs_server restart would."""
    for store in _stores.values():
        store.close()
    _stores.clear()
    _configs.clear()
    _paused_until.clear()
