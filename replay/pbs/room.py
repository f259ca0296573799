"""Room on one vnode over a job's time: the check PBS makes against its calendar, and vnode sharing.

OpenPBS 23.06 (``check_resources_for_node``, ``is_excl``, ``is_exclhost``):

- A vnode has room for a chunk when the chunk fits in what is free now and still fits at every start of a
  top job on that vnode before the job would end (its planned end: soft walltime first), counting the
  running jobs that end on it before then. Changes at or after the job's end, or before now, do not count.
- A job holds a vnode exclusively when it asks ``place=excl`` or ``exclhost``, or the vnode's ``sharing``
  is ``default_excl``/``default_exclhost`` and the job does not ask ``shared``, or the vnode forces it
  (``force_excl``/``force_exclhost``); ``ignore_excl`` never is. An exclusive job, or an exclusive
  reservation, admits no overlap on the vnode at all while the job would run.
- A job takes whole hosts (exclhost) when it asks ``exclhost``, or the vnode is ``force_exclhost``, or
  ``default_exclhost`` and the job asks neither ``excl`` nor ``shared``.
"""

from typing import Mapping, NamedTuple, Sequence, Tuple

__all__ = ["FutureUse", "Window", "is_excl", "is_exclhost", "hold", "release", "copy_held", "room", "changes_in_window",
           "free_over_time", "fits_over_time", "units_over_time"]

_EXCL_PLACES = ("excl", "exclhost")


class FutureUse(NamedTuple):
    """One change on a vnode in the calendar: a job that starts (``starts``) or ends there at ``time``,
    whether it holds the vnode exclusively, and the amounts it takes or gives back."""

    time: int
    starts: bool
    exclusive: bool
    amounts: Tuple[Tuple[str, object], ...]


def is_excl(place, sharing):
    """Whether a job with ``place`` holds a vnode of ``sharing`` exclusively (PBS's ``is_excl``)."""
    if sharing in ("force_excl", "force_exclhost"):
        return True
    if sharing == "ignore_excl":
        return False
    if place.sharing in _EXCL_PLACES:
        return True
    if place.sharing == "shared":
        return False
    return sharing in ("default_excl", "default_exclhost")


def is_exclhost(place, sharing):
    """Whether a job with ``place`` takes the whole host of a vnode of ``sharing`` (PBS's ``is_exclhost``)."""
    if sharing == "force_exclhost":
        return True
    if sharing == "ignore_excl":
        return False
    if sharing == "default_exclhost" and place.sharing == "":
        return True
    return place.sharing == "exclhost"


def hold(used, counts, allocation):
    """Add ``allocation``'s amounts to ``used`` (vnode -> {resource: amount}) and one job to ``counts``."""
    for vnode in dict.fromkeys(name for name, _ in allocation):
        counts[vnode] = counts.get(vnode, 0) + 1
        used.setdefault(vnode, {})
    for vnode, amounts in allocation:
        held = used[vnode]
        for name, amount in amounts:
            if isinstance(amount, (int, float)):
                held[name] = held.get(name, 0) + amount


def copy_held(used):
    """A copy of ``used`` (vnode -> {resource: amount}) that later holds and releases leave as it is."""
    return {vnode: dict(held) for vnode, held in used.items()}


def release(used, counts, allocation):
    """Take back what ``hold`` added; a vnode left with no job leaves ``used``."""
    for vnode, amounts in allocation:
        held = used.get(vnode)
        if held is None:
            continue
        for name, amount in amounts:
            if isinstance(amount, (int, float)):
                held[name] = held.get(name, 0) - amount
    for vnode in dict.fromkeys(name for name, _ in allocation):
        counts[vnode] = counts.get(vnode, 0) - 1
        if counts[vnode] <= 0:
            counts.pop(vnode, None)
            used.pop(vnode, None)


def room(vnode, amounts, held):
    """Whether ``amounts`` fit in what ``vnode`` has free with ``held`` held (a zero window always does)."""
    return all(amount == 0 or vnode.amount(name) - held.get(name, 0) >= amount for name, amount in amounts)


class Window(NamedTuple):
    """The question asked of a vnode: ``job`` would run from ``now`` to ``end``; ``future`` maps each vnode
    to its pending calendar changes (``FutureUse``) in calendar order."""

    job: object
    future: Mapping[str, Sequence[FutureUse]]
    now: int
    end: int


def changes_in_window(window, vnode):
    """The calendar changes on ``vnode`` while ``window``'s job would run (``window``: a ``Window``, or
    anything with its fields), or None if one of them excludes it (an exclusive job on either side)."""
    job_excl = is_excl(window.job.place, vnode.sharing)
    changes = []
    for change in window.future.get(vnode.name, ()):
        if change.time < window.now:
            continue
        if change.time >= window.end:
            break
        if change.exclusive or job_excl:
            return None
        changes.append(change)
    return changes


def free_over_time(window, vnode, name, held):
    """The least of ``name`` free on ``vnode`` now and at each start in the job's window (PBS's
    ``check_resources_for_node``), with ``held`` what is held now; None if the vnode is excluded."""
    changes = changes_in_window(window, vnode)
    if changes is None:
        return None
    level = held.get(name, 0)
    least = vnode.amount(name) - level
    for change in changes:
        amount = dict(change.amounts).get(name, 0)
        if isinstance(amount, (int, float)):
            level += amount if change.starts else -amount
        if change.starts:
            least = min(least, vnode.amount(name) - level)
    return least


def fits_over_time(window, vnode, amounts, work):
    """Room for the whole chunk on ``vnode`` now and at every start on it before the job ends."""
    held = work.get(vnode.name, {})
    if not room(vnode, amounts, held):
        return False
    for name, amount in amounts:
        free = free_over_time(window, vnode, name, held)
        if free is None or (amount != 0 and free < amount):
            return False
    return changes_in_window(window, vnode) is not None


def units_over_time(window, vnode, name, work):
    """How much of ``name`` ``vnode`` can give a broken chunk over the job's time (0 if excluded)."""
    free = free_over_time(window, vnode, name, work.get(vnode.name, {}))
    return 0 if free is None else max(0, free)
