"""The site's scheduling policy, as values: what ``qmgr -c 'print server'``, ``sched_config`` and
``resource_group`` say, with PBS's own defaults (OpenPBS 23.06's shipped ``sched_config``) where the site
says nothing. ``replay.site`` builds these from the files; everything in ``replay.pbs`` reads them.
"""

import functools
from typing import NamedTuple, Optional, Tuple

from .mom_polls import REPORT_DELAY_S

__all__ = ["Limit", "SortKey", "ShareGroup", "FairsharePolicy", "QueuePolicy", "SchedulingPolicy",
           "DEFAULT_RESOURCES_CHECKED", "FUZZY_WINDOWS_S"]

DEFAULT_RESOURCES_CHECKED = ("ncpus", "mem", "arch", "host", "vnode", "aoe", "eoe")
"""sched_config ``resources``: what the scheduler checks a job's chunks against on vnodes."""

FUZZY_WINDOWS_S = {"off": 0, "low": 60, "med": 600, "medium": 600, "high": 3600}
"""``opt_backfill_fuzzy`` names (any case) and their windows in seconds, as OpenPBS 23.06's scheduler reads
them; a number is a window in seconds itself, and PBS's default is ``low``."""


class Limit(NamedTuple):
    """One entry of a run limit such as ``max_run = "[u:PBS_GENERIC=3]"`` or ``max_run_res.ncpus``.

    ``attribute`` is ``max_run``, ``max_run_res.<resource>``, ``max_queued``, ...; ``kind`` is
    ``o`` (overall), ``u`` (user), ``g`` (group) or ``p`` (project); ``entity`` is ``PBS_ALL``,
    ``PBS_GENERIC`` or a name; ``value`` the cap (kb for sizes)."""

    attribute: str
    kind: str
    entity: str
    value: int


class SortKey(NamedTuple):
    """One ``job_sort_key`` or ``node_sort_key``: a resource (or ``job_priority``, ``fair_share_perc``,
    ``sort_priority``, ...), high first or not. ``measure`` is, for a node_sort_key, which amount of the
    resource a vnode is sorted by: ``total`` (resources_available), ``assigned`` or ``unused``."""

    name: str
    high_first: bool
    measure: str = "total"


class ShareGroup(NamedTuple):
    """One line of ``resource_group``: ``name``, its unique ``id``, its ``parent`` (``root`` at the top)
    and its ``shares``."""

    name: str
    id: int
    parent: str
    shares: int


class FairsharePolicy(NamedTuple):
    """Fairshare as configured: the entity (``euser``, ``egroup``, ``Account_Name``, ``queue``, ...), the
    resource whose usage is counted (``fairshare_usage_res``, an expression like a sort formula), the decay, the
    share tree, the shares of the ``unknown`` group, and ``enforce_no_shares`` (a job whose entity has no
    share of the tree never runs). ``min_check_poll_s`` and ``max_check_poll_s`` are the MoMs' polling
    of their jobs (``$min_check_poll``, ``$max_check_poll``: 10 and 120 s by default), which sets when a running
    job's ``resources_used`` is reported; ``usage_report_delay_s`` how long a report takes to reach the
    scheduler;
    ``decay_anchor`` a time the scheduler decayed usage at (the usage file's last decay; None: the first
    cycle), which sets the grid every later decay falls on."""

    entity: str = "euser"
    usage_resource: str = "cput"
    decay_time_s: int = 24 * 3600
    decay_factor: float = 0.5
    tree: Tuple[ShareGroup, ...] = ()
    unknown_shares: int = 0
    enforce_no_shares: bool = True
    min_check_poll_s: int = 10
    max_check_poll_s: int = 120
    usage_report_delay_s: int = REPORT_DELAY_S
    decay_anchor: Optional[int] = None


class QueuePolicy(NamedTuple):
    """An execution queue's attributes the scheduler reads. ``backfill_depth`` None means the server's."""

    name: str
    priority: int = 0
    backfill_depth: Optional[int] = None
    started: bool = True
    enabled: bool = True
    limits: Tuple[Limit, ...] = ()


class SchedulingPolicy(NamedTuple):
    """The whole policy of one scheduler, defaults as OpenPBS ships them.

    ``queues`` are in the order the server lists them; ``server_limits`` hold the server's run limits.
    ``job_sort_formula`` is the expression text (compiled by ``formula``), None when unset; a job whose
    formula value is at or below ``job_sort_formula_threshold`` does not run. With ``preemptive_sched`` (on
    by default), jobs of queues whose priority is at least ``preempt_queue_prio`` (express queues) are
    considered before all others.
    ``resources_checked`` empty means every resource: a sched_config without a ``resources`` line.
    """

    strict_ordering: bool = False
    backfill_depth: int = 1
    by_queue: bool = True
    round_robin: bool = False
    job_sort_formula: Optional[str] = None
    job_sort_key: Tuple[SortKey, ...] = ()
    fairshare: Optional[FairsharePolicy] = None
    queues: Tuple[QueuePolicy, ...] = ()
    server_limits: Tuple[Limit, ...] = ()
    resources_checked: Tuple[str, ...] = DEFAULT_RESOURCES_CHECKED
    backfill_fuzzy_s: int = 60
    help_starving_jobs: bool = False
    max_starve_s: int = 24 * 3600
    eligible_time_enable: bool = False
    scheduler_iteration_s: int = 600
    node_sort_key: Tuple[SortKey, ...] = (SortKey("sort_priority", True),)
    smp_cluster_dist: str = "pack"
    preemptive_sched: bool = True
    preempt_queue_prio: int = 150
    job_sort_formula_threshold: Optional[float] = None

    def queue(self, name):
        """The ``QueuePolicy`` of queue ``name`` (a default one for a queue the site did not list)."""
        found = _by_name(self.queues).get(name)
        return _default_queue(name) if found is None else found

    def backfill_depth_of(self, queue_name):
        """The backfill depth that applies to jobs of ``queue_name``: the queue's, else the server's."""
        depth = self.queue(queue_name).backfill_depth
        return self.backfill_depth if depth is None else depth


_QUEUE_TABLES = {}


def _by_name(queues):
    """Queue name -> the first ``QueuePolicy`` of that name in ``queues``; kept per tuple of queues (the
    scheduler asks at every job it considers)."""
    if type(queues) is not tuple:  # noqa: E721 - a list could change under a kept table
        return _first_by_name(queues)
    kept = _QUEUE_TABLES.get(id(queues))
    if kept is None or kept[0] is not queues:
        if len(_QUEUE_TABLES) >= 64:
            _QUEUE_TABLES.clear()
        kept = _QUEUE_TABLES[id(queues)] = (queues, _first_by_name(queues))
    return kept[1]


@functools.lru_cache(maxsize=256)
def _default_queue(name):
    """PBS's defaults for a queue the site did not list (made once per name: the scheduler asks at every job
    it considers; a ``QueuePolicy`` never changes)."""
    return QueuePolicy(name)


def _first_by_name(queues):
    table = {}
    for queue in queues:
        table.setdefault(queue.name, queue)
    return table
