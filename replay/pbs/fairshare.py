"""Fairshare as OpenPBS 23.06's scheduler keeps it (``fairshare.cpp``, ``init_scheduling_cycle``).

The share tree
    ``resource_group`` lines ``name id parent shares`` build a tree under the root (``parent`` ``root``
    is the top). An entity's share of the machine (``fairshare_perc``) is its shares over the sum of
    its siblings' shares, times its parent's share. PBS adds the group ``unknown`` first, with
    ``unknown_shares`` (0 by default); a line naming an entity already in the tree (``unknown``
    included) is ignored, and so is one whose parent is not yet defined. Any entity not in the file is
    added under ``unknown`` with 1 share when PBS first sees one of its jobs, diluting the other
    unknown entities. With the default ``unknown_shares`` of 0 every such entity has no share at all,
    and with ``enforce_no_shares`` (on by default) **its jobs never run** (a real 23.06.06 server says
    "Can Never Run: Job has zero shares for fairshare").

Entities
    ``fairshare_entity`` ``euser`` (default), ``egroup``, ``queue`` or ``Account_Name``; a job without
    that attribute, and the setting ``egroup:euser``, use ``group:user``. Names are looked up anywhere
    in the tree, so a user named like a group is that group.

Usage
    Every node starts at a usage of 1. At the start of each cycle PBS adds, for each job it saw
    running at the previous cycle and that still runs, the increase of ``fairshare_usage_res`` (an
    expression like a sort formula, ``cput`` by default) over ``resources_used`` since then, to the
    entity and every group above it. A job's usage after the last cycle that saw it running is **never
    counted**: a job that ends between two cycles loses its last stretch, and one that starts and ends
    between two cycles counts nothing. Running means state R: a job whose process has ended is exiting
    (state E) from the moment the server hears of the end, and PBS's running jobs (``check_run_job``)
    leave it out, so the cycle its own end asks for charges it nothing. The server hears of most ends a
    second after them: a cycle in the very second a process ended, while the job still holds its vnodes
    past that second, still sees it running and charges it. A job started by a cycle counts from zero at
    the next one. (On six real 23.06.06 recordings, the model's decisions agreed on 274 of 292 this way,
    263 if no exiting job was charged and 265 if every exiting job was charged up to the end of its
    process. On the 29 fairshare recordings kept, with the MoM's measurements below, they agree on 1,384
    of 1,456, and the usage replayed from the accounting log ends 5.8 % off the server's own usage file
    on average, summed over the entities. Seen
    on a real 23.06.06 server with ``fairshare_usage_res: walltime``: two 20 s jobs were charged 13 s
    and 10 s, what the MoM had reported at the last cycle that saw them running.)
    ``resources_used`` is what the job's MoM last measured, as the scheduler sees it: a MoM measures its
    jobs ``$min_check_poll`` seconds after its last job start, less often as it goes on, and the scheduler
    sees a measurement 2 s after it (``replay.pbs.mom_polls``, which has the whole rule and what it was
    checked against). So with PBS's default polling the jobs of a MoM that starts one every few seconds
    are charged nothing.
    Then, once for every ``fairshare_decay_time`` fully passed since the last decay, every node's usage
    is multiplied by ``fairshare_decay_factor``, never going below 1; the last decay time is kept on
    the decay boundary. The first decay time is the policy's ``decay_anchor`` moved onto the grid
    before the first cycle (the usage file's last decay), else the first cycle. Usage only accrues with
    ``fair_share`` on.

Ordering
    Jobs of the entity that used least for its share come first: PBS walks both entities' paths from
    the root and, at the first pair of different groups, prefers the lower usage / ``fairshare_perc``
    (a group with no share last). Within a cycle that usage includes a temporary charge for every job
    started or planned as a top job so far: ``fairshare_usage_res`` over the job's *requested*
    resources (``Resource_List``), so with the default ``cput`` (rarely requested) the charge is 0.
    PBS sorts again after each such charge (seen on a real 23.06.06 server: with equal shares, jobs
    submitted ben, ben, ana ran ben, ana, ben in one cycle).

Formula values
    ``fairshare_perc`` is the share; ``fairshare_tree_usage`` the entity's usage relative to the root,
    averaged up the tree by each group's share among its siblings; ``fairshare_factor`` is
    ``2 ** -(fairshare_tree_usage / fairshare_perc)`` (0 without a share). PBS keeps these in single
    precision.

Not modelled: the usage file a scheduler starts from (``pbsfs``); that PBS, when it restarts or is
sent a HUP, rebuilds each group's usage from its entities' (each counted with its starting 1), so group
usage jumps; when, to the second, a MoM's measurement reaches the scheduler (the model takes 2 s; the fidelity
check reads it from a server's log kept at ``log_events`` 2047, ``replay.fidelity.server_usage``); sites' local
modifications.
"""

from .formula import compile_formula, resource_values, stored
from .mom_polls import MomPolls, ran_s

__all__ = ["Fairshare", "simulated_resources_used", "MIN_USAGE", "ROOT", "UNKNOWN"]

MIN_USAGE = 1.0
"""The usage every node starts at and never decays below (``FAIRSHARE_MIN_USAGE``)."""

ROOT = "TREEROOT"
UNKNOWN = "unknown"


_ENTITY_ATTRIBUTES = {"euser": lambda job: job.user, "egroup": lambda job: job.group,
                      "queue": lambda job: job.queue, "Account_Name": lambda job: job.account}


def _no_attribute(job):
    return None


class _Node:
    """One group or entity of the share tree."""

    def __init__(self, name, shares, parent):
        self.name, self.shares, self.parent = name, shares, parent
        self.children = []
        self.usage = self.temp_usage = MIN_USAGE
        self.group_percentage = self.tree_percentage = 0.0
        self.path = (parent.path if parent is not None else ()) + (self,)


def _still_running(item, now):
    """Whether PBS's scheduler counts ``item`` among its running jobs (state R) at a cycle at ``now``: a job
    not exiting; or one whose process ended in this very second and which holds its vnodes past it, since
    the server mostly hears of an end a second after it (till then the job is still R for the scheduler)."""
    if not getattr(item, "exiting", False):
        return True
    process_s = getattr(item, "process_s", None)
    return process_s is not None and item.start + process_s == now and item.start + item.job.runtime_s > now


def simulated_resources_used(job, elapsed_s, cpu_load=None):
    """``resources_used`` of ``job`` after running ``elapsed_s`` in a simulation: walltime, ncpus and
    cput (ncpus busy at ``cpu_load``, default the job's own)."""
    ncpus = job.resource("ncpus", 1)
    load = job.cpu_load if cpu_load is None else cpu_load
    return {"walltime": elapsed_s, "ncpus": ncpus, "cput": int(ncpus * elapsed_s * load)}


class Fairshare:
    """The share tree with its usage, as the scheduler carries it from cycle to cycle (mutable)."""

    def __init__(self, policy, last_decay=None, moms=None):
        self.policy = policy
        self.last_decay = last_decay
        self.polls = MomPolls(policy.min_check_poll_s, policy.max_check_poll_s, moms, policy.usage_report_delay_s)
        self._usage_formula = compile_formula(policy.usage_resource)
        self._last_sample = {}
        self._entities_added = None
        self.root = _Node(ROOT, 0, None)
        self.root.tree_percentage = 1.0
        self._nodes = {ROOT: self.root}
        self._add(UNKNOWN, policy.unknown_shares, self.root)
        for group in policy.tree:
            parent = self.root if group.parent == "root" else self._nodes.get(group.parent)
            if group.name not in self._nodes and parent is not None:
                self._add(group.name, group.shares, parent)
        _set_percentages(self.root)

    def _add(self, name, shares, parent):
        """A new node, first among its parent's children as PBS inserts them."""
        node = _Node(name, shares, parent)
        parent.children.insert(0, node)
        self._nodes[name] = node
        return node

    def copy(self):
        """An independent copy (for a cycle that must not change the caller's tree): the nodes are cloned,
        the policy and the compiled usage formula (never changed) are shared."""
        clone = Fairshare.__new__(Fairshare)
        clone.policy, clone.last_decay, clone._usage_formula = self.policy, self.last_decay, self._usage_formula
        clone._last_sample, clone._entities_added = dict(self._last_sample), self._entities_added
        clone.polls = self.polls.copy()
        clone._nodes = {}
        clone.root = _clone(self.root, None, clone._nodes)
        return clone

    def entity(self, job):
        """The fairshare entity ``job`` counts under."""
        name = _ENTITY_ATTRIBUTES.get(self.policy.entity, _no_attribute)(job)
        return name or "{}:{}".format(job.group, job.user)

    def node(self, name):
        """The node of entity ``name``, added under ``unknown`` with 1 share if not in the tree."""
        if name not in self._nodes:
            unknown = self._nodes[UNKNOWN]
            self._add(name, 1, unknown)
            _set_sibling_percentages(unknown.children, unknown)
        return self._nodes[name]

    def add_entities(self, jobs):
        """Give every job's entity its node, as PBS does for all jobs when a cycle starts (an unknown
        entity dilutes the other unknown ones, so add them before reading shares)."""
        if jobs is self._entities_added:
            return  # the same tuple of jobs again (a walk's re-sort): their nodes exist
        for job in jobs:
            self.node(self.entity(job))
        self._entities_added = jobs if isinstance(jobs, tuple) else None

    def usage(self, name):
        """The usage of entity or group ``name`` (1 if never charged)."""
        return self.node(name).usage

    def charge(self, entity, amount):
        """Add ``amount`` of usage to ``entity`` and every group above it."""
        for node in self.node(entity).path:
            node.usage += amount
            node.temp_usage += amount

    def charge_started(self, job):
        """Charge ``job``'s entity, for the rest of this cycle only, what the job asks for: PBS does this
        (``update_usage_on_run``) when it starts a job and when it plans one as a top job, so later jobs
        of the same entity (and its groups) are less deserving. ``decide()`` calls it after each."""
        amount = self._usage_formula(resource_values(job))
        for node in self.node(self.entity(job)).path:
            node.temp_usage += amount

    def decay(self, now):
        """Decay once for every ``fairshare_decay_time`` fully passed since the last decay (the first
        call only sets the clock); the last decay time stays on the decay boundary."""
        period, anchor = self.policy.decay_time_s, self.policy.decay_anchor
        if self.last_decay is None:
            self.last_decay = now if anchor is None or not period else now - (now - anchor) % period
        if not period or now - self.last_decay <= period:
            return
        elapsed = now - self.last_decay
        factor = stored(self.policy.decay_factor)
        for _ in range((elapsed - 1) // period):
            _decay(self.root, factor)
        self.last_decay = now - elapsed % period
        self._reset_temp_usage()

    def _reset_temp_usage(self):
        """Drop the temporary charges of the last cycle, as PBS does at the start of each."""
        for node in self._nodes.values():
            node.temp_usage = node.usage

    def usage_value(self, values):
        """``fairshare_usage_res`` over resource ``values`` (a job's ``resources_used`` and requests)."""
        return self._usage_formula(values)

    def sample(self, now, running, used=None):
        """Start a cycle at ``now`` with ``running`` (items with ``job``, ``start``, ``allocation`` and
        optionally ``process_s``): accrue each job's usage since the previous sample (from zero for a job not
        running then), decay, and drop the temporary charges. ``used(item, now)`` gives a job's
        resources_used (default ``simulated_resources_used`` at the job's CPU load, with the walltime its
        MoM last reported, ``MomPolls``). An exiting item is not running for PBS (``_still_running``): it
        is not charged, now or later."""
        polls = self.polls
        polls.note_starts(running, now)
        polls.advance(now)
        used = used or (lambda item, at: simulated_resources_used(item.job, polls.reported_walltime_s(item)))
        sample, unused = {}, None
        for item in running:
            if not _still_running(item, now):
                continue  # state E: not among PBS's running jobs, never charged again
            values = resource_values(item.job)
            values.update(used(item, now))
            entity = self.entity(item.job)
            sample[item.job.name] = (entity, self.usage_value(values))
            previous = self._last_sample.get(item.job.name)
            if previous is None:
                unused = self.usage_value({}) if unused is None else unused
                previous = (entity, unused)
            self.charge(previous[0], max(0.0, sample[item.job.name][1] - previous[1]))
        self._last_sample = sample
        polls.keep_only(item.job.name for item in running)
        self.decay(now)
        self._reset_temp_usage()

    def note_starts(self, running, now):
        """Note the jobs just started (items as ``sample`` takes them): each start resets its MoM's polling."""
        self.polls.note_starts(running, now)

    def seen_running(self, now, running):
        """Take ``running`` (items with ``job`` and ``start``, charged up to ``now`` already, as by a warm-up) as
        seen at a cycle at ``now``: the next sample charges each only its growth since then."""
        for item in running:
            values = resource_values(item.job)
            values.update(simulated_resources_used(item.job, ran_s(item, now)))
            self._last_sample[item.job.name] = (self.entity(item.job), self.usage_value(values))
        self.polls.note_starts(running, now)

    def no_shares(self, job):
        """True if ``job`` never runs because its entity has no share and ``enforce_no_shares`` is on."""
        return self.policy.enforce_no_shares and self.node(self.entity(job)).tree_percentage == 0

    def parting(self, first, second):
        """Where the entities of jobs ``first`` and ``second`` part in the share tree, as ``compare_path``
        compares them: ``((name, value), (name, value))`` of the first group or entity on each side that
        differs, ``value`` its usage over its share of the tree (None without a share; the lower goes first);
        None when both jobs count under the same entity."""
        for node1, node2 in zip(self.node(self.entity(first)).path, self.node(self.entity(second)).path):
            if node1 is not node2:
                return tuple((node.name, node.temp_usage / node.tree_percentage if node.tree_percentage > 0
                              else None) for node in (node1, node2))
        return None

    def factors(self, job):
        """``fairshare_perc``, ``fairshare_tree_usage`` and ``fairshare_factor`` of ``job``'s entity."""
        node = self.node(self.entity(job))
        tree_usage = _usage_factors(self.root)[node.name]
        perc = node.tree_percentage
        factor = 2.0 ** -stored(tree_usage / perc) if perc else 0.0
        return {"fairshare_perc": perc, "fairshare_tree_usage": tree_usage, "fairshare_factor": factor}

    def deserving_key(self, job):
        """A sort key putting the most deserving entity's jobs first (PBS's ``compare_path``)."""
        return _PathKey(self.node(self.entity(job)).path)

    def deserving_keys(self, jobs):
        """``deserving_key`` of every job of ``jobs`` (their entities already added) as plain tuples that
        order exactly as ``compare_path``, by ``id(job)``; None unless every entity lies at the same depth
        (``compare_path`` calls paths equal when the shorter one runs out, which no tuple order reproduces)."""
        entities = {id(job): self.entity(job) for job in jobs}
        nodes = {name: self._nodes[name] for name in set(entities.values())}
        if len({len(node.path) for node in nodes.values()}) > 1:
            return None
        keys = {name: _path_tuple(node.path) for name, node in nodes.items()}
        return {job_id: keys[entity] for job_id, entity in entities.items()}


def _clone(node, parent, nodes):
    """A copy of ``node`` and everything below it under ``parent``, registered in ``nodes``."""
    copied = _Node.__new__(_Node)
    copied.__dict__.update(node.__dict__)
    copied.parent = parent
    copied.path = (parent.path if parent is not None else ()) + (copied,)
    nodes[copied.name] = copied
    copied.children = [_clone(child, copied, nodes) for child in node.children]
    return copied


def _set_sibling_percentages(siblings, parent):
    """Each sibling's share among them, and of the machine (single precision, as PBS keeps them)."""
    total = sum(node.shares for node in siblings)
    for node in siblings:
        if total * parent.tree_percentage == 0:
            node.group_percentage = node.tree_percentage = 0.0
        else:
            node.group_percentage = stored(node.shares / total)
            node.tree_percentage = stored(node.group_percentage * parent.tree_percentage)


def _set_percentages(parent):
    """Percentages for the whole tree below ``parent`` (``calc_fair_share_perc``)."""
    _set_sibling_percentages(parent.children, parent)
    for child in parent.children:
        _set_percentages(child)


def _decay(node, factor):
    """Multiply the usage of ``node`` and everything below it by ``factor``, never below 1."""
    node.usage = max(MIN_USAGE, node.usage * factor)
    for child in node.children:
        _decay(child, factor)


def _usage_factors(root):
    """Name -> ``usage_factor`` (``calc_usage_factor``): a root child's usage over the root's; below,
    the node's own ratio pulled toward its parent's factor by its share among its siblings."""
    factors = {root.name: 0.0}

    def walk(node, parent_factor, top):
        ratio = stored(node.usage / root.usage)
        factor = ratio if top else stored(ratio + stored(stored(parent_factor - ratio) * node.group_percentage))
        factors[node.name] = factor
        for child in node.children:
            walk(child, factor, False)

    for child in root.children:
        walk(child, 0.0, True)
    return factors


def _compare_path(path1, path2):
    """PBS's ``compare_path``: -1 if the first path's entity is more deserving, 1 if less, else 0."""
    for node1, node2 in zip(path1, path2):
        if node1 is node2:
            continue
        if (node1.tree_percentage <= 0) != (node2.tree_percentage <= 0):
            return 1 if node1.tree_percentage <= 0 else -1
        if node1.tree_percentage <= 0:
            return 0
        value1 = node1.temp_usage / node1.tree_percentage
        value2 = node2.temp_usage / node2.tree_percentage
        if value1 != value2:
            return -1 if value1 < value2 else 1
    return 0


def _path_tuple(path):
    """``path`` as a tuple that compares as ``compare_path`` does against paths of the same length: per
    node (0, usage per share), or a final (1,) at the first node without a share."""
    key = []
    for node in path:
        if node.tree_percentage <= 0:
            key.append((1,))
            break
        key.append((0, node.temp_usage / node.tree_percentage))
    return tuple(key)


class _PathKey:
    """Orders entities' paths by ``compare_path``."""

    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path

    def __lt__(self, other):
        return _compare_path(self.path, other.path) < 0

    def __eq__(self, other):
        return _compare_path(self.path, other.path) == 0

    def __hash__(self):
        return hash(tuple(node.name for node in self.path))
