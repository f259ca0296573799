"""The scheduler's file ``sched_priv/sched_config``, read as OpenPBS 23.06's scheduler reads it (parse.cpp).

A line is ``name: value [prime|non_prime|all|none]`` (also PRIME, NON_PRIME, ALL, NONE); ``#`` starts a
comment line; a value holding spaces is quoted with ``"`` or ``'``. Names are case-sensitive. A switch is
false for ``false`` (any case) or a number that is 0 and true for anything else: PBS reads ``no`` or ``off``
as true, and so does this reader, with a note. A setting the file does not mention takes the scheduler's
built-in default (``SchedConfig``'s defaults: ``by_queue`` false, every resource checked, empty queue-name
prefixes), which differ from the file PBS installs (``SHIPPED``); a site folder without ``sched_config`` gets
the installed file.

Prime time: a switch or sort key may have one value for prime time and another for non-prime time. Prime
time exists only where the site's ``holidays`` file defines it (the installed one defines none, so PBS is in
non-prime time all the time). The replay uses the non-prime values, and notes each setting whose prime-time
value differs.
"""

from typing import NamedTuple, Tuple

from ..pbs.policy import SortKey
from ..pbs.resources import parse_duration
from ..shared.errors import SiteError

__all__ = ["SchedConfigLine", "SchedConfig", "read_sched_config", "shipped_sched_config", "SHIPPED",
           "PBS_SETTINGS"]

SHIPPED = """\
round_robin: False\tall
by_queue: True\t\tprime
by_queue: True\t\tnon_prime
strict_ordering: false\tALL
backfill_prime:\tfalse\tALL
prime_exempt_anytime_queues:\tfalse
primetime_prefix: p_
nonprimetime_prefix: np_
node_sort_key: "sort_priority HIGH"\tALL
provision_policy: "aggressive_provision"
resources: "ncpus, mem, arch, host, vnode, aoe, eoe"
smp_cluster_dist: pack
fair_share: false\tALL
fairshare_usage_res: cput
fairshare_entity: euser
fairshare_decay_time: 24:00:00
fairshare_decay_factor: 0.5
preemptive_sched: true\tALL
dedicated_prefix: ded
"""
"""The settings of the ``sched_config`` OpenPBS 23.06 installs (its comments left out)."""

PRIME_KEYWORDS = {"prime": ("prime",), "PRIME": ("prime",), "non_prime": ("non_prime",),
                  "NON_PRIME": ("non_prime",), "all": ("prime", "non_prime"), "ALL": ("prime", "non_prime"),
                  "none": (), "NONE": ()}
SWITCHES = ("round_robin", "by_queue", "strict_fifo", "strict_ordering", "fair_share", "backfill",
            "backfill_prime", "preemptive_sched")
"""Switches with a prime-time and a non-prime-time value."""
SORT_ORDERS = {"high": True, "HIGH": True, "High": True, "low": False, "LOW": False, "Low": False}
NODE_MEASURES = ("total", "assigned", "unused")
SMP_DISTRIBUTIONS = ("pack", "round_robin", "lowest_load")
FAIRSHARE_ENTITIES = ("euser", "egroup", "Account_Name", "queue", "egroup:euser")
OTHER_SETTINGS = (
    "update_comments", "prime_exempt_anytime_queues", "fairshare_enforce_no_shares", "allow_aoe_calendar",
    "prime_spill", "half_life", "fairshare_decay_time", "unknown_shares", "fairshare_decay_factor",
    "fairshare_usage_res", "fairshare_entity", "resource_unset_infinite", "resv_confirm_ignore", "resources",
    "dedicated_prefix", "primetime_prefix", "nonprimetime_prefix", "server_dyn_res", "peer_queue",
    "preempt_attempts", "max_job_check", "provision_policy", "job_sort_key", "node_sort_key", "sort_nodes",
    "smp_cluster_dist", "help_starving_jobs", "max_starve", "sort_queues", "node_group_key", "log_filter",
    "preempt_queue_prio", "preempt_prio", "preempt_order", "preempt_sort")
PBS_SETTINGS = SWITCHES + OTHER_SETTINGS
"""Every name OpenPBS 23.06's scheduler accepts in sched_config (some only to say they are obsolete)."""


class SchedConfigLine(NamedTuple):
    """One setting line: its number, name, value (quotes removed) and prime keyword (``ALL`` if none)."""

    line: int
    name: str
    value: str
    prime: str = "ALL"


class SchedConfig(NamedTuple):
    """What the scheduler takes from its file: non-prime-time values, the built-in defaults where the file
    says nothing; ``resources_checked`` empty means every resource. ``readings`` are notes on how a line was
    read (a switch spelled ``yes``, a prime-time value not used)."""

    round_robin: bool = False
    by_queue: bool = False
    strict_fifo: bool = False
    strict_ordering: bool = False
    fair_share: bool = False
    backfill: bool = True
    preemptive_sched: bool = False
    job_sort_key: Tuple[SortKey, ...] = ()
    node_sort_key: Tuple[SortKey, ...] = ()
    resources_checked: Tuple[str, ...] = ()
    smp_cluster_dist: str = "pack"
    fairshare_usage_res: str = "cput"
    fairshare_entity: str = "euser"
    fairshare_decay_time_s: int = 24 * 3600
    fairshare_decay_factor: float = 0.5
    unknown_shares: int = 0
    fairshare_enforce_no_shares: bool = True
    dedicated_prefix: str = ""
    primetime_prefix: str = ""
    nonprimetime_prefix: str = ""
    lines: Tuple[SchedConfigLine, ...] = ()
    readings: Tuple[str, ...] = ()


def shipped_sched_config():
    """The values of the sched_config PBS installs."""
    return read_sched_config(SHIPPED, "sched_config")._replace(lines=(), readings=())


def read_sched_config(text, filename="sched_config"):
    """The ``SchedConfig`` of a sched_config text; SiteError naming file:line: setting on a malformed line."""
    lines = tuple(_lines(text, filename))
    state = _State()
    for entry in lines:
        handler = _HANDLERS.get(entry.name)
        if handler is not None:
            where = "{}:{}: {}".format(filename, entry.line, entry.name)
            try:
                handler(state, entry)
            except ValueError as err:
                raise SiteError("{}: {}".format(where, err)) from None
    return state.result(lines, filename)


def _lines(text, filename):
    """The setting lines, comments and blank lines skipped (a line starting with # or * is a comment)."""
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped[0] in "#*":
            continue
        words = _scan(stripped)
        where = "{}:{}".format(filename, number)
        if len(words) < 2 or words[1] == ":":
            raise SiteError("{}: {}: expected 'name: value [prime keyword]'".format(where, words[0]))
        if len(words) > 3:
            raise SiteError("{}: {}: unexpected {!r} after the prime keyword (quote a value holding spaces)".format(
                where, words[0], words[3]))
        prime = words[2] if len(words) == 3 else "ALL"
        if prime not in PRIME_KEYWORDS:
            raise SiteError("{}: {}: {!r} is not a prime keyword (prime, non_prime, all, none); quote a value "
                            "holding spaces".format(where, words[0], prime))
        yield SchedConfigLine(number, words[0], words[1], prime)


def _scan(text):
    """The words of a line as PBS's scan(): the name ends at white space or ':', a quoted word at its quote."""
    words, position, target = [], 0, ":"
    while position < len(text):
        while position < len(text) and (text[position].isspace() or text[position] == target):
            position += 1
        if position >= len(text):
            break
        if text[position] in "\"'":
            end = text.find(text[position], position + 1)
            end = len(text) if end < 0 else end
            words.append(text[position + 1:end])
        else:
            end = position
            while end < len(text) and not text[end].isspace() and text[end] != target:
                end += 1
            words.append(text[position:end])
        position, target = end + 1, " "
    return words


def _switch(value):
    """PBS's reading of a switch: false for 'false' or a number that is 0, true for anything else."""
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if value[:1].isdigit():
        digits = len(value) - len(value.lstrip("0123456789"))
        return int(value[:digits]) != 0
    return True


class _State:
    """Prime and non-prime values as the lines set them, in file order."""

    def __init__(self):
        defaults = SchedConfig()
        self.values = {"prime": {}, "non_prime": {}}
        for period in self.values.values():
            period.update({name: getattr(defaults, name) for name in SWITCHES if hasattr(defaults, name)})
            period.update(job_sort_key=[], node_sort_key=[], smp_cluster_dist="pack", backfill_prime=False)
        self.common = {}
        self.readings = []

    def set_periods(self, entry, name, value):
        for period in PRIME_KEYWORDS[entry.prime]:
            self.values[period][name] = value

    def add_periods(self, entry, name, value):
        for period in PRIME_KEYWORDS[entry.prime]:
            self.values[period][name].append(value)

    def result(self, lines, filename):
        prime, non_prime = self.values["prime"], self.values["non_prime"]
        fields = {name: (tuple(value) if isinstance(value, list) else value) for name, value in non_prime.items()
                  if name in SchedConfig._fields}
        fields.update(self.common)
        differing = [name for name in sorted(non_prime) if prime[name] != non_prime[name]]
        readings = list(self.readings) + [
            "{}: {} has a prime-time value; the replay uses the non-prime value (prime time is not modelled)".format(
                filename, name) for name in differing]
        return SchedConfig(**fields)._replace(lines=lines, readings=tuple(readings))


def _on_switch(state, entry):
    value = _switch(entry.value)
    if entry.value.lower() not in ("true", "false") and not entry.value.isdigit():
        state.readings.append("sched_config line {}: {}: {!r} is read as {}, as PBS reads it".format(
            entry.line, entry.name, entry.value, str(value).lower()))
    state.set_periods(entry, entry.name, value)


def _sort_key(value, node):
    """A ``"resource HIGH"`` sort key; for a node key an optional third word total, assigned or unused."""
    words = value.split()
    if len(words) < 2 or words[1] not in SORT_ORDERS:
        raise ValueError("{!r}: expected \"resource HIGH\" or \"resource LOW\"".format(value))
    if len(words) > (3 if node else 2) or (len(words) == 3 and words[2] not in NODE_MEASURES):
        raise ValueError("{!r}: unexpected {!r}".format(value, " ".join(words[2:])))
    name = words[0]
    if not node and name == "sort_priority":
        name = "job_priority"  # PBS's rename of the obsolete job key
    return SortKey(name, SORT_ORDERS[words[1]], words[2] if len(words) == 3 else "total")


def _on_job_sort_key(state, entry):
    state.add_periods(entry, "job_sort_key", _sort_key(entry.value, node=False))


def _on_node_sort_key(state, entry):
    state.add_periods(entry, "node_sort_key", _sort_key(entry.value, node=True))


def _on_sort_nodes(state, entry):
    state.add_periods(entry, "node_sort_key", SortKey("sort_priority", True))


def _on_smp_cluster_dist(state, entry):
    if entry.value not in SMP_DISTRIBUTIONS:
        raise ValueError("{!r}: expected one of {}".format(entry.value, ", ".join(SMP_DISTRIBUTIONS)))
    state.set_periods(entry, "smp_cluster_dist", entry.value)


def _on_resources(state, entry):
    names = [name.strip() for name in entry.value.split(",") if name.strip()]
    for implied in ("host", "vnode"):
        if implied not in entry.value:  # PBS adds them unless the text mentions them
            names.append(implied)
    state.common["resources_checked"] = tuple(names)


def duration(text):
    """Seconds of a duration (HH:MM:SS, MM:SS or seconds); ValueError saying so if it is not one."""
    try:
        return parse_duration(text)
    except ValueError:
        raise ValueError("{!r} is not a duration (HH:MM:SS or seconds)".format(text)) from None


def _on_decay_time(state, entry):
    state.common["fairshare_decay_time_s"] = duration(entry.value)


def _on_decay_factor(state, entry):
    try:
        factor = float(entry.value)
    except ValueError:
        raise ValueError("{!r} is not a number".format(entry.value)) from None
    if not 0 < factor < 1:
        raise ValueError("{}: must be between 0 and 1".format(entry.value))
    state.common["fairshare_decay_factor"] = factor


def _on_unknown_shares(state, entry):
    if not entry.value.isdigit():
        raise ValueError("{!r} is not a whole number of shares".format(entry.value))
    state.common["unknown_shares"] = int(entry.value)


def _on_entity(state, entry):
    if entry.value not in FAIRSHARE_ENTITIES:
        raise ValueError("{!r}: expected one of {}".format(entry.value, ", ".join(FAIRSHARE_ENTITIES)))
    state.common["fairshare_entity"] = entry.value


def _on_usage_res(state, entry):
    state.common["fairshare_usage_res"] = entry.value


def _on_enforce_no_shares(state, entry):
    state.common["fairshare_enforce_no_shares"] = _switch(entry.value)


def _on_prefix(state, entry):
    state.common[entry.name] = entry.value


def _checked(check):
    """A handler that only checks a setting the scheduler model does not use."""
    def handler(state, entry):
        check(entry.value)
    return handler


_HANDLERS = dict(
    {name: _on_switch for name in SWITCHES},
    job_sort_key=_on_job_sort_key, node_sort_key=_on_node_sort_key, sort_nodes=_on_sort_nodes,
    smp_cluster_dist=_on_smp_cluster_dist, resources=_on_resources, fairshare_decay_time=_on_decay_time,
    half_life=_on_decay_time, fairshare_decay_factor=_on_decay_factor, unknown_shares=_on_unknown_shares,
    fairshare_entity=_on_entity, fairshare_usage_res=_on_usage_res,
    fairshare_enforce_no_shares=_on_enforce_no_shares, prime_spill=_checked(duration),
    dedicated_prefix=_on_prefix, primetime_prefix=_on_prefix, nonprimetime_prefix=_on_prefix,
)
