"""The site's ``SchedulingPolicy`` from its qmgr objects, its sched_config values and its share tree, taken
as OpenPBS 23.06's scheduler takes them (server_info.cpp, queue_info.cpp, fifo.cpp's scheduler attributes).

- Queues: execution queues only, in the server's order; a routing queue is left out and noted (the
  accounting log shows the execution queue each job ran from). The scheduler reads ``started``, not
  ``enabled`` (which only stops new submissions).
- ``backfill_depth``: the server's; ``backfill: false`` in sched_config (obsolete) turns backfilling off as a
  server ``backfill_depth = 0`` does, unless a queue has a ``backfill_depth`` above 0.
- ``job_sort_formula``: the server's (deprecated there), else the default scheduler's.
- ``scheduler_iteration``: the default scheduler's, which the server's mirrors, else the server's.
- ``opt_backfill_fuzzy``: off, low, med or medium, high (any case) or a number of seconds; low by default.
- Queues named for a time: PBS runs the jobs of a queue whose name begins with sched_config's
  ``dedicated_prefix`` only in dedicated time, and of one beginning with ``primetime_prefix`` only in prime
  time (queue_info.cpp, check.cpp). The replay has neither, so such a queue is taken as not started, with a
  note. An empty prefix begins every name: a sched_config without ``dedicated_prefix`` stops every queue, as
  it does on a real server ("Not Running: Dedicated time conflict").
"""

from ..pbs.policy import FUZZY_WINDOWS_S, FairsharePolicy, QueuePolicy, SchedulingPolicy
from ..pbs.resources import parse_duration
from ..shared.errors import SiteError
from .limits import is_run_limit, run_limits
from .qmgr import DEFAULT_SCHED

__all__ = ["scheduling_policy", "parse_boolean", "queue_type"]

TRUE_WORDS = ("True", "TRUE", "true", "t", "T", "1", "y", "Y")
FALSE_WORDS = ("False", "FALSE", "false", "f", "F", "0", "n", "N")


def parse_boolean(text):
    """A qmgr boolean as the server decodes it (True, t, y, 1, ... / False, f, n, 0, ...); ValueError else."""
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ValueError("{!r} is not a boolean (True or False)".format(text))


def whole_number(text):
    """An integer attribute value (``Priority``, ``backfill_depth``); ValueError saying so if it is not one."""
    try:
        return int(text)
    except ValueError:
        raise ValueError("{!r} is not a whole number".format(text)) from None


def number(text):
    """A numeric attribute value (``job_sort_formula_threshold``); ValueError saying so if it is not one."""
    try:
        return float(text)
    except ValueError:
        raise ValueError("{!r} is not a number".format(text)) from None


def queue_type(text):
    """``execution`` or ``route`` for a queue_type value (any case, abbreviated as qmgr allows)."""
    for kind in ("execution", "route"):
        if text and kind.startswith(text.lower()):
            return kind
    raise ValueError("{!r} is not a queue type (Execution or Route)".format(text))


def scheduling_policy(objects, sched_config, tree=(), filename="qmgr.txt"):
    """(SchedulingPolicy, notes) of the site; SiteError naming file:line: setting on a malformed value."""
    server = _first(objects, "server")
    sched = _first(objects, "sched", DEFAULT_SCHED)
    notes = ["scheduler {} is not modelled: only the default scheduler's settings are used".format(item.name)
             for item in objects if item.kind == "sched" and item.name != DEFAULT_SCHED]
    queues = tuple(_queues(objects, sched_config, filename, notes))
    fields = dict(
        strict_ordering=sched_config.strict_ordering, by_queue=sched_config.by_queue,
        round_robin=sched_config.round_robin, job_sort_key=sched_config.job_sort_key,
        node_sort_key=sched_config.node_sort_key, resources_checked=sched_config.resources_checked,
        smp_cluster_dist=sched_config.smp_cluster_dist, preemptive_sched=sched_config.preemptive_sched,
        queues=queues, server_limits=_limits(server, filename), fairshare=_fairshare(sched_config, tree, notes),
        backfill_depth=_backfill_depth(server, sched_config, queues, filename, notes),
        **_server_fields(server, sched, filename))
    return SchedulingPolicy(**fields), notes


def _first(objects, kind, name=None):
    """The first object of ``kind`` (named ``name`` if given), or None."""
    for item in objects:
        if item.kind == kind and (name is None or item.name == name):
            return item
    return None


def _value(item, attribute, parse, filename, default=None):
    """``parse`` of an object's attribute, ``default`` if unset; SiteError naming the line if malformed."""
    if item is None:
        return default
    for found in item.attributes:
        if found.name == attribute:
            try:
                return parse(found.value)
            except ValueError as err:
                owner = " ".join(part for part in (item.kind, item.name) if part)
                raise SiteError("{}:{}: {} {}: {}".format(found.file, found.line, owner, attribute, err)) from None
    return default


def _queues(objects, sched_config, filename, notes):
    """QueuePolicy of each execution queue, in order; routing queues and queues for a time noted."""
    for item in objects:
        if item.kind != "queue":
            continue
        kind = _value(item, "queue_type", queue_type, filename)
        if kind == "route":
            notes.append("queue {} is a routing queue (to {}): left out; the log shows each job's execution "
                         "queue".format(item.name, item.get("route_destinations", "no destination")))
        elif kind is None:
            notes.append("queue {} has no queue_type: left out, as PBS runs no job from it".format(item.name))
        else:
            started = _value(item, "started", parse_boolean, filename, False)
            restriction = _time_restriction(item.name, sched_config)
            if started and restriction:
                notes.append("queue {}: PBS runs its jobs only in {}; the replay has no such time, so the queue "
                             "is taken as not started".format(item.name, restriction))
            yield QueuePolicy(
                item.name, priority=_value(item, "priority", whole_number, filename, 0),
                backfill_depth=_value(item, "backfill_depth", whole_number, filename),
                started=started and not restriction,
                enabled=_value(item, "enabled", parse_boolean, filename, False),
                limits=_limits(item, filename))


def _time_restriction(name, sched_config):
    """The time PBS runs a queue's jobs in, when its name says so ('' for any time)."""
    for prefix, setting, time in ((sched_config.dedicated_prefix, "dedicated_prefix", "dedicated time"),
                                  (sched_config.primetime_prefix, "primetime_prefix", "prime time")):
        if name.startswith(prefix):
            why = ("its name begins with {} {!r}".format(setting, prefix) if prefix else
                   "sched_config sets no {}, and an empty prefix begins every name".format(setting))
            return "{} ({})".format(time, why)
    return ""


def _limits(item, filename):
    """The hard run limits of a server or queue, in the order set."""
    if item is None:
        return ()
    limits = []
    for attribute in item.attributes:
        if is_run_limit(attribute.name):
            limits.extend(_value(item, attribute.name, lambda text, name=attribute.name: run_limits(name, text),
                                 filename))
    return tuple(limits)


def _backfill_depth(server, sched_config, queues, filename, notes):
    """The server's backfill depth, 0 when sched_config's obsolete backfill switch is off (see above)."""
    depth = _value(server, "backfill_depth", whole_number, filename, 1)
    if not sched_config.backfill:
        if any((queue.backfill_depth or 0) > 0 for queue in queues):
            notes.append("sched_config backfill: false is overridden by a queue's backfill_depth above 0")
        else:
            depth = 0
    return depth


def _fuzzy(text):
    """Seconds of an opt_backfill_fuzzy value."""
    if text.lstrip("-").isdigit():
        return int(text)
    if text.lower() in FUZZY_WINDOWS_S:
        return FUZZY_WINDOWS_S[text.lower()]
    raise ValueError("{!r}: expected off, low, med, high or a number of seconds".format(text))


def _seconds(text):
    try:
        return parse_duration(text)
    except ValueError:
        raise ValueError("{!r} is not a duration (seconds or HH:MM:SS)".format(text)) from None


def _server_fields(server, sched, filename):
    """The policy fields read from the server's and the default scheduler's attributes."""
    iteration = _value(sched, "scheduler_iteration", _seconds, filename)
    formula = _value(server, "job_sort_formula", str, filename) or _value(sched, "job_sort_formula", str, filename)
    return dict(
        job_sort_formula=formula,
        job_sort_formula_threshold=_value(sched, "job_sort_formula_threshold", number, filename),
        eligible_time_enable=_value(server, "eligible_time_enable", parse_boolean, filename, False),
        scheduler_iteration_s=iteration or _value(server, "scheduler_iteration", _seconds, filename, 600),
        backfill_fuzzy_s=_value(sched, "opt_backfill_fuzzy", _fuzzy, filename, FUZZY_WINDOWS_S["low"]),
        preempt_queue_prio=_value(sched, "preempt_queue_prio", whole_number, filename, 150))


def _fairshare(sched_config, tree, notes):
    """The FairsharePolicy when fair_share is on, else None."""
    if not sched_config.fair_share:
        return None
    if not tree:
        notes.append("fair_share is on but resource_group names no group: every entity is in the unknown group")
    return FairsharePolicy(
        entity=sched_config.fairshare_entity, usage_resource=sched_config.fairshare_usage_res,
        decay_time_s=sched_config.fairshare_decay_time_s, decay_factor=sched_config.fairshare_decay_factor,
        tree=tuple(tree), unknown_shares=sched_config.unknown_shares,
        enforce_no_shares=sched_config.fairshare_enforce_no_shares)
