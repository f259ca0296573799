"""Node buckets: how PBS places exclusive jobs on machines of one vnode per host.

OpenPBS 23.06 (``job_should_use_buckets``, ``create_node_buckets``, ``find_correct_buckets``,
``bucket_match``, ``bucket_to_nspecs``) takes a faster path for a job that asks ``place=excl`` (or
``exclhost``), is not ``pack``, names no ``host`` or ``vnode``, on a machine where every host is one vnode
and no ``node_sort_key`` sorts on ``assigned`` or ``unused`` amounts:

- Vnodes with the same resources, queue and ``sort_priority`` form a bucket; buckets are searched in
  ``node_sort_key`` order (ties in the order their first vnode comes).
- For each chunk of the select, in each bucket whose vnodes could hold it, PBS first takes the vnodes that
  are empty now but reserved later for a top job, provided the job ends (by its planned duration) before
  the first such reservation starts; then the empty vnodes with no reservation, in vnode order. A vnode
  takes as many of the chunk's copies as it could hold when empty (one with ``scatter``/``vscatter``).
- The chunks are then listed vnode by vnode in vnode order.

So an exclusive job may fill a gap before a top job's reservation rather than the first empty vnode.
"""

from typing import Dict, List, Tuple

__all__ = ["uses_buckets", "place_in_buckets"]


def uses_buckets(machine, job):
    """Whether PBS places ``job`` through node buckets on ``machine``."""
    if job.place.sharing not in ("excl", "exclhost") or job.place.arrangement == "pack":
        return False
    if machine.multi_vnode or machine.sorts_on_use:
        return False
    return not any(name in ("host", "vnode") for chunk in job.chunks for name, _ in chunk.requirements)


def _signature(machine, vnode):
    compared = tuple((name, value) for name, value in vnode.available
                     if machine.checked(name) and name not in ("host", "vnode"))
    return compared, vnode.queue, vnode.priority


def _buckets(machine):
    """The buckets, in search order: (queue, vnodes in vnode order)."""
    groups: Dict[tuple, List] = {}
    for vnode in machine.vnodes:
        groups.setdefault(_signature(machine, vnode), []).append(vnode)
    return list(groups.values())


def _copies(amounts, vnode, scatter):
    """How many copies of a chunk an empty ``vnode`` holds (0 if none)."""
    copies = None
    for name, amount in amounts:
        if amount:
            fits = int(vnode.amount(name) // amount) if isinstance(vnode.amount(name), (int, float)) else 0
            copies = fits if copies is None else min(copies, fits)
    copies = 1 if copies is None else copies
    return min(copies, 1) if scatter else copies


def _first_reservation(future, vnode_name):
    starts = [change.time for change in future.get(vnode_name, ()) if change.starts]
    return min(starts) if starts else None


def place_in_buckets(machine, job, chunks, used, exclusive, future, now, end, offers):
    """The allocation of an exclusive ``job`` through buckets, or None. ``chunks`` are the compared
    (amounts, requirements, count) of its chunks; ``offers(vnode, requirements)`` matches requirements."""
    queue_has_vnodes = any(vnode.queue == job.queue for vnode in machine.vnodes)
    wanted_queue = job.queue if queue_has_vnodes else None
    scatter = job.place.arrangement in ("scatter", "vscatter")
    taken = set()
    pieces: List[Tuple[str, tuple]] = []
    for amounts, requirements, count in chunks:
        chosen = _choose(machine, amounts, requirements, count, wanted_queue, scatter,
                         (used, exclusive, future, end, taken, offers))
        if chosen is None:
            return None
        order = {vnode.name: index for index, vnode in enumerate(machine.vnodes)}
        for name, copies in sorted(chosen, key=lambda item: order[item[0]]):
            pieces.extend((name, amounts) for _ in range(copies))
    return tuple(pieces)


def _choose(machine, amounts, requirements, count, wanted_queue, scatter, context):
    """(vnode, copies) taken for one chunk of ``count`` copies, or None if they do not all fit."""
    used, exclusive, future, end, taken, offers = context
    chosen = []
    needed = count
    for bucket in _buckets(machine):
        if needed <= 0:
            break
        if bucket[0].queue != wanted_queue or not offers(bucket[0], requirements):
            continue
        copies = _copies(amounts, bucket[0], scatter)
        if copies <= 0:
            continue
        empty = [vnode for vnode in bucket
                 if vnode.name not in used and vnode.name not in exclusive and vnode.name not in taken]
        later = [vnode for vnode in empty if _first_reservation(future, vnode.name) is not None]
        free = [vnode for vnode in empty if _first_reservation(future, vnode.name) is None]
        for vnode in [v for v in later if _first_reservation(future, v.name) >= end] + free:
            if needed <= 0:
                break
            taken.add(vnode.name)
            chosen.append((vnode.name, min(copies, needed)))
            needed -= copies
    return chosen if needed <= 0 else None
