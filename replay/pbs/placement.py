"""Where PBS puts a job's chunks: the vnodes it picks, in its order, for the job's select and place.

The rules, as OpenPBS 23.06's scheduler applies them (``eval_selspec``, ``eval_placement``,
``eval_complex_selspec``, ``eval_simple_selspec``, ``is_vnode_eligible``, ``check_resources_for_node``):

- A job of a queue that vnodes are tied to (vnode attribute ``queue``) uses only those vnodes; other jobs
  use only the vnodes tied to no queue.
- Vnodes are searched in ``node_sort_key`` order (default ``sort_priority HIGH``), ties in the order the
  server lists them; a key on ``assigned`` or ``unused`` amounts is re-read after every job started and,
  with ``free`` placement, after every chunk, but not when a job ends: a top job's estimate searches the
  vnodes in their order at the last start, real or simulated, before the ends it walks through. Placed
  host by host (below), the hosts and each host's vnodes are in the order of PBS's host sets instead:
  sorted when the cycle begins, not when a job runs, and again at the first search after an end
  (simulated ones too); hosts that tie keep the order the sets were made in, from the vnodes as sorted
  when the cycle began. Each chunk goes on the first vnode, in that order, with room for it: one pass, no
  backtracking, so a job that a cleverer packing could fit may not run. The vnodes one chunk passed over
  are not looked at again for the other chunks of the same part of the select (``3:ncpus=2`` is one part,
  ``+`` begins another), not even to spread a chunk over them.
- Only the resources in sched_config's ``resources`` line are compared (with ``host`` and ``vnode`` always
  added; booleans always); a chunk's other resources, ``ngpus`` for instance when it is not listed, are
  not checked. A resource a vnode does not have counts as zero.
- A vnode is used exclusively when the job asks ``place=excl`` or ``exclhost``, or the vnode's sharing is
  ``default_excl``/``default_exclhost`` and the job does not ask ``shared``, or the vnode forces it
  (``force_excl``/``force_exclhost``; ``ignore_excl`` never is). A job wanting a vnode exclusively can
  only have one that runs no job, and a vnode held exclusively takes no other job.
- ``free`` lets chunks share vnodes; ``scatter`` puts at most one chunk per host and ``vscatter`` at most one
  per vnode; ``pack`` puts all chunks on one host. ``exclhost`` (or a host whose vnodes are
  ``default_exclhost``/``force_exclhost``) takes every vnode of each host it uses.
- When some host has several vnodes (or a MoM reports several vnodes: ``in_multivnode_host``, even if
  each has a host of its own), PBS places host by host, and a chunk that no vnode of the host can
  hold whole is spread over the host's vnodes in order, each giving what it has free of each resource
  (``exec_vnode`` then shows ``(h[0]:ncpus=4+h[1]:ncpus=2)``); not with ``vscatter`` on a machine of
  several hosts. Whether some vnode could hold a chunk whole is judged over all the host's vnodes, with the
  job's earlier chunks counted, except with ``scatter`` and ``vscatter``: there PBS judges the vnodes as
  they were before the job, so a vnode an earlier chunk took, that could have held this one, keeps it
  whole, and it must then fit whole on a vnode not yet taken.
- When top jobs hold reservations in the future (``strict_ordering``), a vnode has room for a chunk only if
  the chunk fits on it now and at every reservation that starts on that vnode before the job would end
  (judged by its planned duration: soft walltime first), counting the running jobs that end before then;
  an exclusive job (or an exclusive reservation) cannot overlap another on the same vnode at all. So a
  job may run alongside a top job's future window when the vnodes have room for both.

Exclusive jobs on machines of one vnode per host take PBS's node-bucket path instead (``buckets``).

Not modelled: ``place=group=``, placement sets, provisioning, and ``smp_cluster_dist`` other than
``pack``.
"""

from typing import Dict, Iterable, List, Mapping, NamedTuple, Sequence, Tuple

from .buckets import place_in_buckets, uses_buckets
from .jobs import PbsJob
from .policy import DEFAULT_RESOURCES_CHECKED, SortKey
from .room import FutureUse, copy_held, fits_over_time, hold, is_excl, is_exclhost, release, room, units_over_time
from .vnodes import Vnode

__all__ = ["Allocation", "FutureUse", "Machine", "is_excl", "is_exclhost", "hold", "release"]

Allocation = Tuple[Tuple[str, Tuple[Tuple[str, object], ...]], ...]
"""Pieces ``(vnode, ((resource, amount), ...))`` in the order of the job's chunks, as in ``exec_vnode``."""


def _is_boolean(value):
    return isinstance(value, str) and value.lower() in ("true", "false")


def _same(required, offered):
    if _is_boolean(required):
        return str(offered).lower() == required.lower()
    return str(offered).lower() == str(required).lower()


class _Request(NamedTuple):
    """One job's placement question: the chunks as PBS compares them, and the window [now, end)."""

    job: PbsJob
    chunks: Tuple[Tuple[Tuple[Tuple[str, object], ...], Tuple[Tuple[str, str], ...], int], ...]
    future: Mapping[str, Sequence[FutureUse]]
    now: int
    end: int
    eligible: frozenset


class Machine:
    """The vnodes of one scheduler, in PBS's search order, and the resources it compares."""

    def __init__(self, vnodes, resources_checked=DEFAULT_RESOURCES_CHECKED,
                 node_sort_key=(SortKey("sort_priority", True),)):
        self.server_order = tuple(vnodes)
        self.node_sort_key = tuple(node_sort_key)
        self.sorts_on_use = any(key.measure in ("assigned", "unused") for key in self.node_sort_key)
        self.vnodes = self.ordered({})
        self.by_name = {vnode.name: vnode for vnode in self.vnodes}
        self.resources_checked = tuple(resources_checked)
        self._chunk_requests, self._fits_empty, self._pools = {}, {}, {}
        self.hosts = _hosts(self.vnodes)
        self.multi_vnode = any(len(members) > 1 for _, members in self.hosts) or \
            any(vnode.in_multivnode_host for vnode in self.vnodes)

    def ordered(self, used):
        """The vnodes in search order with ``used`` held: ``node_sort_key``, ties in server order. Keys on
        ``assigned`` or ``unused`` amounts make PBS sort again after every job it starts."""
        ranked = sorted(enumerate(self.server_order),
                        key=lambda item: _node_key(item[1], item[0], self.node_sort_key, used))
        return tuple(vnode for _, vnode in ranked)

    def _host_order(self, vnodes, used, created):
        """Hosts in PBS's host-set order: ``node_sort_key`` over each host's totals (``sort_priority``
        counts 0 for a host), ties in the order the hosts first appear among ``created``: the order PBS
        made its host sets in, its vnodes as sorted when the cycle began."""
        hosts = _hosts(vnodes)
        first = {host: rank for rank, (host, _) in enumerate(_hosts(created))}
        keys = []
        for host, members in hosts:
            rank = first[host]
            key = []
            for sort_key in self.node_sort_key:
                value = 0 if sort_key.name == "sort_priority" else \
                    sum(_node_amount(vnode, sort_key, used) for vnode in members)
                key.append(-value if sort_key.high_first else value)
            keys.append((tuple(key), rank))
        return tuple(host for _, host in sorted(zip(keys, hosts), key=lambda pair: pair[0]))

    def checked(self, name):
        """Whether chunk resource ``name`` is compared on vnodes (sched_config ``resources``)."""
        return not self.resources_checked or name in self.resources_checked or name in ("host", "vnode")

    def chunk_request(self, chunk):
        """The amounts and requirements of ``chunk`` that PBS compares on a vnode."""
        kept = self._chunk_requests.get(id(chunk))
        if kept is None or kept[0] is not chunk:  # by identity: 1 and 1.0 are equal but print apart
            kept = self._chunk_requests[id(chunk)] = (chunk, self._new_chunk_request(chunk))
        return kept[1]

    def _new_chunk_request(self, chunk):
        amounts = tuple((name, value) for name, value in chunk.amounts if self.checked(name))
        requirements = tuple((name, value) for name, value in chunk.requirements
                             if self.checked(name) or _is_boolean(value))
        return amounts, requirements

    def fits_empty(self, job):
        """Whether ``job`` could ever run on these vnodes, as PBS's can-never-run test judges it
        (``resresv_can_fit_nodepart`` on all vnodes, totals): the job-wide amounts and each chunk within
        the machine's totals, a non-consumable requirement some vnode offers, and scatter or vscatter
        needing no more vnodes than exist. Kept per job object (jobs are immutable)."""
        kept = self._fits_empty.get(id(job))
        if kept is None or kept[0] is not job:
            if len(self._fits_empty) >= 1 << 16:
                self._fits_empty.clear()
            kept = self._fits_empty[id(job)] = (job, self._new_fits_empty(job))
        return kept[1]

    def _new_fits_empty(self, job):
        pool = self.pool(job.queue)
        if not pool:
            return False
        if job.place.arrangement in ("scatter", "vscatter") and _total_chunks(job) > len(pool):
            return False
        totals = _totals(pool)
        requested = {}
        for chunk in job.chunks:
            amounts, requirements = self.chunk_request(chunk)
            if any(amount > totals.get(name, 0) for name, amount in amounts):
                return False
            if not any(_offers(vnode, requirements) for vnode in pool):
                return False
            for name, _ in amounts:
                requested[name] = job.resource(name)
        return all(not isinstance(amount, (int, float)) or amount <= totals.get(name, 0)
                   for name, amount in requested.items())

    def fits_free(self, job, used, exclusive):
        """Whether ``job`` passes PBS's quick test that it may fit now (``resresv_can_fit_nodepart`` on all
        vnodes, free amounts), made before run limits are checked: some vnode is free (not held
        exclusively, not all its cpus assigned), scatter or vscatter need no more chunks than free vnodes,
        and the job-wide amounts and each chunk are within what all the vnodes have left, summed (none
        below nothing)."""
        pool = self.pool(job.queue)
        free_vnodes = sum(1 for vnode in pool if vnode.name not in exclusive and not (
            vnode.name in used and vnode.amount("ncpus") - used[vnode.name].get("ncpus", 0) <= 0))
        if not free_vnodes:
            return False
        if job.place.arrangement in ("scatter", "vscatter") and _total_chunks(job) > free_vnodes:
            return False
        left = {}
        for vnode in pool:
            held = used.get(vnode.name, {})
            for name, value in vnode.available:
                if isinstance(value, (int, float)):
                    left[name] = left.get(name, 0) + max(0, value - held.get(name, 0))
        requested = {}
        for chunk in job.chunks:
            amounts, _ = self.chunk_request(chunk)
            for name, amount in amounts:
                if isinstance(amount, (int, float)) and name in left and amount > left[name]:
                    return False
                requested[name] = job.resource(name)
        return all(not isinstance(amount, (int, float)) or name not in left or amount <= left[name]
                   for name, amount in requested.items())

    def pool(self, queue):
        """The vnodes a job of ``queue`` may use: the queue's own vnodes if some are tied to it, else the
        vnodes tied to no queue (PBS's ``qinfo->nodes`` or ``sinfo->unassoc_nodes``)."""
        pool = self._pools.get(queue)
        if pool is None:
            own = tuple(vnode for vnode in self.vnodes if vnode.queue == queue)
            pool = self._pools[queue] = own or tuple(vnode for vnode in self.vnodes if vnode.queue is None)
        return pool

    def place(self, job, used, exclusive, future=None, now=0, end=None, sorted_by=None, hosts_sorted_by=None,
              hosts_created_by=None):
        """The vnodes PBS picks for ``job`` now, or None. ``used`` maps each vnode that runs a job to the
        amounts held there, ``exclusive`` the vnodes held exclusively; ``future`` maps a vnode to its
        calendar changes (``FutureUse``, in calendar order) and ``end`` is when the job would end.
        ``sorted_by``: the amounts held when the server's vnode list was last sorted, when a key on
        ``assigned`` or ``unused`` amounts orders it (default ``used``). Placed host by host, the hosts and
        their vnodes follow PBS's host sets instead: ``hosts_sorted_by`` the amounts held when they were last
        sorted (default ``sorted_by``), ``hosts_created_by`` those when the cycle made them, which orders
        hosts that tie (default ``hosts_sorted_by``)."""
        chunks = tuple(self.chunk_request(chunk) + (chunk.count,) for chunk in job.chunks)
        end = now if end is None else end
        if uses_buckets(self, job):
            return place_in_buckets(self, job, chunks, used, exclusive, future or {}, now, end, _offers)
        eligible = self._eligible_vnodes(job, used, exclusive)
        request = _Request(job, chunks, future or {}, now, end, eligible)
        work = copy_held(used)
        sorted_by = used if sorted_by is None else sorted_by
        if self.multi_vnode or (job.place.arrangement == "pack" and _total_chunks(job) > 1):
            by_host = sorted_by if hosts_sorted_by is None else hosts_sorted_by
            vnodes = self.ordered(by_host) if self.sorts_on_use else self.vnodes
            created = self.ordered(hosts_created_by) if self.sorts_on_use and hosts_created_by is not None else vnodes
            return self._by_host(request, work, self._host_order(vnodes, by_host, created))
        vnodes = self.ordered(sorted_by) if self.sorts_on_use else self.vnodes
        return self._over_vnodes(request, vnodes, work)

    def _over_vnodes(self, request, vnodes, work, okbreak=False):
        """Every chunk on the vnodes in order (``eval_complex_selspec``): scatter/vscatter use a vnode once."""
        pieces = []
        taken = set()
        once = request.job.place.arrangement in ("scatter", "vscatter")
        members = {vnode.name for vnode in vnodes}
        for amounts, requirements, count in request.chunks:
            visited = set()
            for _ in range(count):
                found = self._fit_chunk(request, amounts, requirements, vnodes, work, taken, okbreak,
                                        visited=visited)
                if found is None:
                    return None
                pieces.extend(found)
                if once:
                    taken.update(name for name, _ in found)
                elif self.sorts_on_use:
                    vnodes = tuple(vnode for vnode in self.ordered(work) if vnode.name in members)
        return tuple(pieces)

    def _fit_chunk(self, request, amounts, requirements, vnodes, work, taken, okbreak, judged=None, visited=None):
        """One chunk (``eval_simple_selspec``): on the first vnode with room, else, when PBS may break
        chunks and no vnode could hold it whole, spread over vnodes in order. Whether some vnode could hold
        it whole is judged on ``judged`` (default ``work``: with the job's earlier chunks), over every
        vnode. ``visited`` holds the vnodes an earlier chunk of the same part of the select (``N:...``)
        looked at, whole, and passed over: PBS marks them and does not look at them again for that part,
        not even to spread a chunk over them; a vnode passed over here is added. Its pieces, added to
        ``work``; None (``work`` unchanged) if it does not fit."""
        visited = set() if visited is None else visited
        candidates = [vnode for vnode in vnodes if vnode.name not in taken and vnode.name not in visited
                      and vnode.name in request.eligible and _offers(vnode, requirements)]
        judged = work if judged is None else judged
        if okbreak and not any(room(vnode, amounts, judged.get(vnode.name, {}))
                               for vnode in vnodes if _offers(vnode, requirements)):
            return _spread(request, amounts, candidates, work)
        for vnode in candidates:
            if fits_over_time(request, vnode, amounts, work):
                _add(work, vnode.name, amounts)
                return [(vnode.name, amounts)]
            visited.add(vnode.name)
        return None

    def _eligible_vnodes(self, job, used, exclusive):
        """The vnodes that may take ``job``'s chunks (``check_node_array_eligibility``): a vnode running a
        job rules out its whole host for a job that takes hosts exclusively (exclhost)."""
        eligible = {vnode.name for vnode in self.pool(job.queue) if self._eligible(job, vnode, used, exclusive)}
        for _, members in self.hosts:
            if any(vnode.name in used and is_exclhost(job.place, vnode.sharing) for vnode in members):
                eligible.difference_update(vnode.name for vnode in members)
        return frozenset(eligible)

    def _eligible(self, job, vnode, used, exclusive):
        """PBS's ``is_vnode_eligible``, judged once per job before any chunk is placed: the vnode is free
        (not held exclusively, not job-busy with all its cpus assigned) and runs no job if the job wants
        it exclusively."""
        if vnode.name in exclusive:
            return False
        if vnode.name in used and vnode.amount("ncpus") - used[vnode.name].get("ncpus", 0) <= 0:
            return False
        return not (is_excl(job.place, vnode.sharing) and vnode.name in used)

    def _by_host(self, request, work, hosts):
        """Chunks host by host (``eval_placement``): pack on one host, scatter one chunk per host,
        vscatter one per vnode, free as many as fit; exclhost takes the rest of each host used. The
        pieces come host by host, as PBS lists them. A chunk may be spread over vnodes of one host
        (except with vscatter, unless the machine is one host)."""
        remaining = [count for _, _, count in request.chunks]
        pieces = []
        for _, members in hosts:
            if not any(remaining):
                break
            if request.job.place.arrangement == "pack":
                found = self._over_vnodes(request, members, copy_held(work), okbreak=True)
                if found is not None:
                    return self._with_exclhost(request, found, members)
                continue
            found = self._on_host(request, members, copy_held(work), remaining)
            if found:
                pieces.extend(self._with_exclhost(request, tuple(found), members))
        if any(remaining):
            return None
        return tuple(pieces)

    def _with_exclhost(self, request, found, members):
        if not is_exclhost(request.job.place, members[0].sharing):
            return found
        taken = {name for name, _ in found}
        return found + tuple((vnode.name, ()) for vnode in members if vnode.name not in taken)

    def _on_host(self, request, members, work, remaining):
        """The chunks one host takes. With scatter and vscatter PBS searches the host's vnodes as they were
        before the job (``eval_placement`` marks the vnodes a chunk took, it does not charge them), so
        whether some vnode could hold a chunk whole is judged without the job's earlier chunks: a taken
        vnode that could have held it keeps the chunk whole, and it must fit whole on another vnode."""
        arrangement = request.job.place.arrangement
        okbreak = arrangement != "vscatter" or len(self.hosts) == 1
        judged = copy_held(work) if arrangement in ("scatter", "vscatter") else None
        found = []
        taken = set()
        for index, (amounts, requirements, _) in enumerate(request.chunks):
            visited = set()
            while remaining[index]:
                pieces = self._fit_chunk(request, amounts, requirements, members, work, taken, okbreak, judged,
                                         visited)
                if pieces is None:
                    break
                found.extend(pieces)
                remaining[index] -= 1
                if arrangement == "vscatter":
                    taken.update(name for name, _ in pieces)
                if arrangement == "scatter":
                    return found
        return found


def _spread(request, amounts, candidates, work):
    """A chunk broken over vnodes (``resources_avail_on_vnode`` with EVAL_OKBREAK): each vnode in turn
    gives, of each resource still wanted, as much as it has free over the job's time; None if the vnodes
    run out first."""
    wanted = dict(amounts)
    pieces = []
    trial = copy_held(work)
    for vnode in candidates:
        given = []
        for name, _ in amounts:
            if wanted[name] <= 0:
                continue
            units = units_over_time(request, vnode, name, trial)
            if units > 0:
                take = min(units, wanted[name])
                wanted[name] -= take
                given.append((name, take))
                _add(trial, vnode.name, ((name, take),))
        if given:
            pieces.append((vnode.name, tuple(sorted(given))))
        if all(amount <= 0 for amount in wanted.values()):
            work.clear()
            work.update(trial)
            return pieces
    return None


def _total_chunks(job):
    return sum(chunk.count for chunk in job.chunks)


def _totals(vnodes):
    totals = {}
    for vnode in vnodes:
        for name, value in vnode.available:
            if isinstance(value, (int, float)):
                totals[name] = totals.get(name, 0) + value
    return totals


def _add(work, vnode, amounts):
    held = work.setdefault(vnode, {})
    for name, amount in amounts:
        held[name] = held.get(name, 0) + amount


def _offers(vnode, requirements):
    """Whether ``vnode`` matches a chunk's non-consumable requirements (host, vnode, arch, booleans)."""
    for name, value in requirements:
        if name == "host":
            offered = vnode.host
        elif name == "vnode":
            offered = vnode.name
        else:
            offered = vnode.amount(name)
            if offered == 0:
                offered = "false" if _is_boolean(value) else ""
        if not _same(value, offered):
            return False
    return True


def _node_amount(vnode, sort_key, used):
    """A vnode's value for one ``node_sort_key`` (PBS's ``find_node_amount``)."""
    if sort_key.name == "sort_priority":
        return vnode.priority
    total = vnode.amount(sort_key.name)
    assigned = used.get(vnode.name, {}).get(sort_key.name, 0)
    return {"assigned": assigned, "unused": total - assigned}.get(sort_key.measure, total) \
        if isinstance(total, (int, float)) else 0


def _node_key(vnode: Vnode, rank: int, node_sort_key: Iterable[SortKey], used):
    key: List[object] = []
    for sort_key in node_sort_key:
        value = _node_amount(vnode, sort_key, used)
        value = value if isinstance(value, (int, float)) else 0
        key.append(-value if sort_key.high_first else value)
    key.append(rank)
    return tuple(key)


def _hosts(vnodes) -> Tuple[Tuple[str, Tuple[Vnode, ...]], ...]:
    members: Dict[str, List[Vnode]] = {}
    for vnode in vnodes:
        members.setdefault(vnode.host, []).append(vnode)
    return tuple((host, tuple(group)) for host, group in members.items())
