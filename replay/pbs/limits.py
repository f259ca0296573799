"""Hard run limits: whether starting a job now would take a user, group, project, queue or the server
past ``max_run`` or ``max_run_res.<resource>`` (OpenPBS 23.06 scheduler, ``check_limits``).

How PBS applies them:

- Limits are set on the server and on each queue, as ``max_run = "[u:PBS_GENERIC=3], [u:ana=5]"``
  (``u`` user, ``g`` group, ``p`` project, ``o:PBS_ALL`` everyone together) or
  ``max_run_res.ncpus = "[g:PBS_GENERIC=64]"``. Old-style attributes are the same limits under other
  names: ``max_running`` is ``[o:PBS_ALL]``, ``max_user_run`` and ``max_user_res.<res>`` are
  ``[u:PBS_GENERIC]``, ``max_group_run`` and ``max_group_res.<res>`` are ``[g:PBS_GENERIC]``.
- An individual limit (``u:ana``) replaces the generic one (``u:PBS_GENERIC``) for that entity, even
  when it is *higher*; the generic limit applies to everyone without an individual one.
- Only running jobs count (queued and held jobs never do), including the jobs the scheduler started
  earlier in the same cycle; a queue's limit counts only that queue's jobs. ``max_run`` fails when the
  entity already runs as many jobs as the limit; ``max_run_res`` when what the entity's running jobs
  requested plus what this job requests would exceed it. A job that does not request a resource is
  never held back by a limit on it (PBS compares job-wide ``Resource_List`` amounts, not what a job
  uses).
- The checks run in a fixed order, queue before server, run-count limits before resource limits, and
  within each: group, project, overall, user; the first one that fails is the reason given.
- When top jobs have been planned (``strict_ordering``), PBS also counts, over the time the job would
  run, the top jobs planned to start before it ends (and the running jobs planned to end before then):
  a job that fits the limits now but would push an entity past them once a top job starts does not
  run. ``events`` carries that calendar. Seen on a real 23.06.06 server with ``[u:PBS_GENERIC=1]``: a
  user running nothing, whose top job was planned to start in 100 s, could not backfill a 300 s job
  ("User has reached server running job limit"), while another user's identical job ran. An end met on the
  way takes a resource off an entity only where the entity already has an amount of it (``_add_at``).
- Soft limits (``max_run_soft``, ...) never stop a job from running; they only matter to preemption and
  are not checked here. ``max_queued`` is enforced by the server at submission, not by the scheduler.

Jobs in the exiting state are not counted (PBS counts ``is_running`` jobs only, although an exiting job
may still hold vnodes): ``cycle`` leaves them out of ``running_jobs``.

With ``eligible_time_enable`` on, PBS checks the limits once more for each job that cannot run, against
its *total* counts (``check_limits`` with ``CHECK_CUMULATIVE_LIMIT``): the running jobs, the jobs started
in this cycle, and the jobs the cycle already considered and could not run, each of which is added after
its own check (``update_total_counts``; one quirk kept: such a job is counted in the server's totals
when the server has limits, else in its queue's). ``Totals`` keeps these counts; the kind of the first
limit a job breaks decides whether it accrues eligible time (``accrual``).

Not modelled: ``max_run_subjobs`` of job arrays (``qsub -J 1-10%2``: qsub makes the ``%2`` a job attribute,
and the accounting log, whose Q record holds ``array_indices=1-10`` only, never says it) and limits inside
reservations.
"""

import functools
from typing import NamedTuple, Optional

from .jobs import planned_duration
from .policy import Limit

__all__ = ["LimitEvent", "LimitFailure", "Totals", "over_limit", "limit_failure", "has_entity_limits", "normalise",
           "OLD_STYLE"]

OLD_STYLE = {"max_running": ("max_run", "o", "PBS_ALL"), "max_user_run": ("max_run", "u", "PBS_GENERIC"),
             "max_group_run": ("max_run", "g", "PBS_GENERIC"),
             "max_user_res": ("max_run_res", "u", "PBS_GENERIC"),
             "max_group_res": ("max_run_res", "g", "PBS_GENERIC")}
"""Old-style limit attributes and the new-style attribute, kind and entity PBS reads them as."""

_KIND_WORDS = {"u": "user", "g": "group", "p": "project", "o": "everyone"}
_CHECK_ORDER = ("g", "p", "o", "u")
SERVER = ""


class LimitFailure(NamedTuple):
    """The first limit a job breaks: PBS-like text naming it (None where only the kind was asked for), and
    its kind (``u``, ``g``, ``p`` or ``o``)."""

    reason: Optional[str]
    kind: str


class LimitEvent(NamedTuple):
    """One event of the scheduler's calendar that limits look ahead to: ``job`` starts (a top job's
    planned start) or ends (a running or top job's planned end) at ``time``."""

    time: int
    job: object
    starts: bool


def normalise(limit):
    """``limit`` in the new form: old-style attributes (``max_user_run``, ``max_group_res.mem``, ...)
    become ``max_run``/``max_run_res.<res>`` with their kind and entity."""
    base, dot, resource = limit.attribute.partition(".")
    if base not in OLD_STYLE:
        return limit
    attribute, kind, entity = OLD_STYLE[base]
    return Limit(attribute + dot + resource, kind, entity, limit.value)


def _hard_limits(limits):
    """(attribute, kind, entity) -> value of the hard run limits among ``limits``; the first set wins. Kept
    per tuple of limits, as a cycle asks for every job it checks (callers do not change the table)."""
    return _hard_limits_of(tuple(limits))


@functools.lru_cache(maxsize=256)
def _hard_limits_of(limits):
    table = {}
    for limit in map(normalise, limits):
        if limit.attribute == "max_run" or limit.attribute.startswith("max_run_res."):
            table.setdefault((limit.attribute, limit.kind, limit.entity), limit.value)
    return table


def _entity(job, kind):
    """The name ``job`` is counted under for ``kind``."""
    if kind == "u":
        return job.user
    if kind == "g":
        return job.group
    return job.project if kind == "p" else "PBS_ALL"


def _keys(job):
    """Every (scope, kind, name) ``job`` counts in: the server's and its queue's, per kind."""
    return [(scope, kind, _entity(job, kind)) for scope in (SERVER, job.queue) for kind in _CHECK_ORDER]


def _amount(job, resource):
    """What ``job`` requests of ``resource`` job-wide, None if it requests none."""
    durations = {"walltime": job.walltime_s, "soft_walltime": job.soft_walltime_s}
    if durations.get(resource) is not None:
        return durations[resource]
    return job.resource(resource, None)


def _add(counts, job, resources, sign):
    """Count ``job`` (sign 1) or uncount it (sign -1) in ``counts``."""
    for key in _keys(job):
        _add_at(counts, key, job, resources, sign)


def _add_at(counts, key, job, resources, sign):
    """Count ``job`` (sign 1) or uncount it (sign -1) under ``key`` (scope, kind, name) of ``counts``. Uncounting
    takes a resource off only where the entity already has an amount of it, as PBS's ``update_counts_on_end`` does
    (it finds the entity's count of that resource and leaves it alone when there is none): an exiting job, not
    counted, whose end the look-ahead passes, takes nothing off an entity none of whose counted jobs asked for
    that resource."""
    fields = counts.get(key)
    if fields is None:
        fields = counts[key] = {}
    fields[None] = fields.get(None, 0) + sign
    for resource in resources:
        amount = _amount(job, resource)
        if amount is not None and (sign > 0 or resource in fields):
            fields[resource] = fields.get(resource, 0) + sign * amount


def _raise_maxima(maxima, counts, job):
    """Keep, for each of ``job``'s entities, the highest count seen of each field."""
    for key in _keys(job):
        peak = maxima.setdefault(key, {})
        for field, value in counts.get(key, {}).items():
            peak[field] = max(peak.get(field, value), value)


def _counts(running_jobs, resources, job, now, events):
    """(scope, kind, name) -> {None: running jobs, resource: amount}; with ``events``, the highest values
    reached while ``job`` would run (PBS looks ahead only if a planned start falls in that time)."""
    counts = {}
    for other in running_jobs:
        _add(counts, other, resources, 1)
    end = None if now is None else now + planned_duration(job)
    ahead = sorted((e for e in events if e.job.name != job.name and end is not None and e.time < end),
                   key=lambda e: (e.time, e.starts))
    if not any(event.starts for event in ahead):
        return counts
    maxima = {key: dict(fields) for key, fields in counts.items()}
    for event in ahead:
        _add(counts, event.job, resources, 1 if event.starts else -1)
        if event.starts:
            _raise_maxima(maxima, counts, event.job)
    return maxima


def _limit(table, attribute, kind, name):
    """The limit that applies to ``name``: (value, entity written in the limit), or None. An individual
    limit replaces the generic one."""
    if kind == "o":
        value = table.get((attribute, "o", "PBS_ALL"))
        return None if value is None else (value, "PBS_ALL")
    if (attribute, kind, name) in table:
        return table[(attribute, kind, name)], name
    value = table.get((attribute, kind, "PBS_GENERIC"))
    return None if value is None else (value, "PBS_GENERIC")


def _reason(scope, attribute, kind, entity, value, name):
    """PBS-like text naming the limit that holds the job back."""
    where = "server" if scope == SERVER else "queue " + scope
    who = "" if kind == "o" else " for {} {}".format(_KIND_WORDS[kind], name)
    return "{} {} [{}:{}={}]{}".format(where, attribute, kind, entity, value, who)


def _check_run(table, scope, counts, job, describe=True):
    """The ``LimitFailure`` of the scope's ``max_run`` limits for ``job`` (without its text unless
    ``describe``), else None."""
    for kind in _CHECK_ORDER:
        name = _entity(job, kind)
        found = _limit(table, "max_run", kind, name)
        if found is not None and counts.get((scope, kind, name), {}).get(None, 0) >= found[0]:
            return LimitFailure(_reason(scope, "max_run", kind, found[1], found[0], name) if describe else None,
                                kind)
    return None


def _check_resources(table, scope, counts, job, resources, describe=True):
    """The ``LimitFailure`` of the scope's ``max_run_res`` limits for ``job`` (as ``_check_run``), else None."""
    for kind in _CHECK_ORDER:
        name = _entity(job, kind)
        for resource in resources:
            attribute = "max_run_res." + resource
            found, requested = _limit(table, attribute, kind, name), _amount(job, resource)
            if found is None or requested is None:
                continue
            if counts.get((scope, kind, name), {}).get(resource, 0) + requested > found[0]:
                return LimitFailure(_reason(scope, attribute, kind, found[1], found[0], name) if describe else None,
                                    kind)
    return None


def _resources(tables):
    """The resources some limit is set on, in the order the limits name them."""
    seen = {}
    for table in tables:
        for attribute, _, _ in table:
            if attribute.startswith("max_run_res."):
                seen.setdefault(attribute[len("max_run_res."):], None)
    return list(seen)


def over_limit(policy, job, running_jobs, now=None, events=()):
    """Why starting ``job`` now would break a hard run limit of its queue or the server, else None.

    ``running_jobs`` are the jobs running now (PbsJob), including those started earlier in this cycle.
    ``events`` (``LimitEvent``, with ``now``) is the calendar of top jobs' planned starts and ends and
    running jobs' planned ends, which PBS looks ahead to over the job's planned duration.
    """
    failure = limit_failure(policy, job, running_jobs, now, events)
    return None if failure is None else failure.reason


def _scopes(policy, job):
    return ((job.queue, _hard_limits(policy.queue(job.queue).limits)),
            (SERVER, _hard_limits(policy.server_limits)))


def limit_failure(policy, job, running_jobs, now=None, events=()) -> Optional[LimitFailure]:
    """``over_limit`` with the kind of the limit broken: a ``LimitFailure``, else None."""
    scopes = _scopes(policy, job)
    if not any(table for _, table in scopes):
        return None
    resources = _resources(table for _, table in scopes)
    return _first_failure(scopes, _counts(running_jobs, resources, job, now, events), job, resources)


def _first_failure(scopes, counts, job, resources, describe=True):
    """The first limit of ``scopes`` that ``counts`` plus ``job`` break, in PBS's order, else None."""
    for scope, table in scopes:
        if table:
            failure = _check_run(table, scope, counts, job, describe)
            if failure:
                return failure
    if resources:
        for scope, table in scopes:
            if table:
                failure = _check_resources(table, scope, counts, job, resources, describe)
                if failure:
                    return failure
    return None


def has_entity_limits(policy):
    """True if a hard run limit is set per user, group or project, on the server or on a queue."""
    limits = list(policy.server_limits) + [limit for queue in policy.queues for limit in queue.limits]
    return any(kind != "o" for (_, kind, _) in _hard_limits(limits))


class Totals:
    """PBS's total counts of one cycle (``total_user_counts``, ... in ``server_info`` and ``queue_info``):
    the running jobs, then each job started (counted where its server or queue has limits) and each job
    considered that could not run (counted in the server's totals when the server has limits, else in its
    queue's: ``update_total_counts`` with ``ALL``). Only the counts some limit reads are kept."""

    def __init__(self, policy, running_jobs):
        self.policy, self.counts, self._scopes, self._kinds = policy, {}, {}, {}
        self._server_limited = bool(_hard_limits(policy.server_limits))
        self._resources = _resources([_hard_limits(policy.server_limits)]
                                     + [_hard_limits(queue.limits) for queue in policy.queues])
        for job in running_jobs:
            self.started(job)

    def started(self, job):
        """Count ``job``, started in this cycle (or running)."""
        for scope, _ in self._scopes_of(job):
            self._count(job, scope)

    def considered(self, job):
        """Count ``job``, considered in this cycle and not run."""
        if self._server_limited:
            self._count(job, SERVER)
        elif self._scopes_of(job)[0][1]:
            self._count(job, job.queue)

    def failure(self, job) -> Optional[LimitFailure]:
        """The first limit ``job`` breaks against the totals (``CHECK_CUMULATIVE_LIMIT``), else None; its
        kind only (``reason`` None)."""
        return _first_failure(self._scopes_of(job), self.counts, job, self._resources, describe=False)

    def _count(self, job, scope):
        kinds = self._kinds.get(scope)
        if kinds is None:
            table = _hard_limits(self.policy.server_limits if scope == SERVER else self.policy.queue(scope).limits)
            kinds = self._kinds[scope] = tuple(kind for kind in _CHECK_ORDER if any(k == kind for _, k, _ in table))
        for kind in kinds:
            _add_at(self.counts, (scope, kind, _entity(job, kind)), job, self._resources, 1)

    def _scopes_of(self, job):
        """``_scopes`` of ``job``'s queue, kept for the cycle."""
        scopes = self._scopes.get(job.queue)
        if scopes is None:
            scopes = self._scopes[job.queue] = _scopes(self.policy, job)
        return scopes
