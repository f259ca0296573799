"""A finished job's attributes -> its ``CompletedJob``: the one place that decides runtime, cores and times.

Both sources of finished jobs give the same attributes: the accounting E
record as its ``key=value`` fields, the jobobit hook as the job's attributes
(``predictor.server.events`` names them as the E record does). Values are
text as PBS writes it in the E record; durations may also be plain seconds.
Everything here is the standard library, so the hooks import it too.

Every check raises ``AccountingError`` naming the field.
"""

import re

from ..durations import parse_duration
from ..errors import AccountingError
from ..jobs import MAX_EPOCH, MAX_INT32, CompletedJob

__all__ = ["completed_job", "job_ncpus", "submit_time", "array_subjob", "is_array_parent"]

_INTEGER = re.compile(r"-?[0-9]+")
_DIGITS = re.compile(r"[0-9]{1,18}")  # int() refuses over 4300 digits; 18 fit any count
_HMS = re.compile(r"([0-9]{1,9}):([0-5][0-9]):([0-5][0-9])")  # how pbs_server writes durations
_ARRAY_JOB_ID = re.compile(r"([0-9]+)\[([0-9]{0,18})\]((?:\..*)?)", re.DOTALL)  # 123[4].svr, 123[].svr, 123[4]


def _integer(fields, key, low, high, required=False):
    text = fields.get(key)
    if text is None:
        if required:
            raise AccountingError("missing", key)
        return None
    if not _INTEGER.fullmatch(text):
        raise AccountingError("not an integer: {!r}".format(text[:40]), key)
    value = int(text) if len(text) <= 30 else None  # int() refuses over 4300 digits
    if value is None or not low <= value <= high:
        raise AccountingError("out of range [{}, {}]: {}".format(low, high, text[:40]), key)
    return value


def _duration(fields, key):
    text = fields.get(key)
    if text is None:
        return None
    match = _HMS.fullmatch(text)
    if match is not None:  # the usual form, read without the general parser
        hours, minutes, seconds = match.groups()
        seconds = int(hours) * 3600 + int(minutes) * 60 + int(seconds)
    else:
        seconds = _any_duration(text, key)
    if seconds > MAX_INT32:
        raise AccountingError("too long: {!r}".format(text[:40]), key)
    return seconds


def _any_duration(text, key):
    try:
        return parse_duration(text)
    except ValueError:
        raise AccountingError("not a duration [[HH:]MM:]SS: {!r}".format(text[:40]), key) from None


def _chunk_ncpus(chunk, key, resource, default_count):
    """ncpus of one ``N:res=v:...`` chunk (PBS select) or ``N:ppn=P`` (Torque nodes)."""
    parts = chunk.split(":")
    counted = _DIGITS.fullmatch(parts[0]) is not None
    count = int(parts[0]) if counted else default_count
    per_chunk = 1
    for part in parts[1:] if counted else parts:
        name, sep, value = part.partition("=")
        if sep and name == resource:
            if not _DIGITS.fullmatch(value):
                raise AccountingError("bad {} in {!r}".format(resource, chunk[:40]), key)
            per_chunk = int(value)
    return count * per_chunk


def _spec_ncpus(fields, key, resource):
    """CPUs of a select (``resource`` ncpus) or Torque nodes (``ppn``) spec; None if the field is absent."""
    spec = fields.get(key)
    if not spec:
        return None
    total = sum(_chunk_ncpus(chunk, key, resource, 1) for chunk in spec.split("+"))
    if total > MAX_INT32:
        raise AccountingError("too many cpus", key)
    return total


def _vnode_ncpus(fields):
    """CPUs of ``exec_vnode=(n1:ncpus=4:mem=1gb)+(n2:ncpus=2+n3:ncpus=2)``; None if no part names ncpus."""
    spec = fields.get("exec_vnode")
    if not spec or "ncpus=" not in spec:
        return None
    total = 0
    for part in spec.replace("(", "").replace(")", "").split("+"):
        for resource in part.split(":")[1:]:
            name, _, value = resource.partition("=")
            if name == "ncpus":
                if not _DIGITS.fullmatch(value):
                    raise AccountingError("bad ncpus in {!r}".format(part[:40]), "exec_vnode")
                total += int(value)
    return _capped(total, "exec_vnode")


def _host_ncpus(fields):
    """CPUs of ``exec_host``: PBS ``n1/0*4+n2/0*4`` (``n1/0`` is one), Torque ``n1/0+n1/1`` or ``n1/0-3,5``."""
    spec = fields.get("exec_host")
    if not spec:
        return None
    return _capped(sum(_host_slots(part) for part in spec.split("+")), "exec_host")


def _host_slots(part):
    host, _, slots = part.partition("/")
    if not slots:
        return 1
    if "*" in slots:
        count = slots.partition("*")[2]
        if not _DIGITS.fullmatch(count):
            raise AccountingError("bad cpu count in {!r}".format(part[:40]), "exec_host")
        return int(count)
    return sum(_slot_range(item, part) for item in slots.split(","))


def _slot_range(item, part):
    low, dash, high = item.partition("-")
    if not _DIGITS.fullmatch(low) or (dash and not _DIGITS.fullmatch(high)) or (dash and int(high) < int(low)):
        raise AccountingError("bad cpu index in {!r}".format(part[:40]), "exec_host")
    return int(high) - int(low) + 1 if dash else 1


def _capped(total, key):
    if total > MAX_INT32:
        raise AccountingError("too many cpus", key)
    return total


def job_ncpus(fields):
    """Total CPUs of a job; None only if the record says nothing of them.

    The request first: ``Resource_List.ncpus``, else the ``select`` spec, else
    a Torque ``nodes`` spec. Torque's ncpus is not the job's total: with
    ``nodes=2:ppn=8`` and ``ncpus=1`` the job held 16 cores, so the larger of
    the two is taken. A record without a request (Torque jobs that asked for
    nothing, logs that leave it out) gives the cores the job was run on:
    ``exec_vnode``, else ``exec_host``, else ``resources_used.ncpus``.
    """
    ncpus = _integer(fields, "Resource_List.ncpus", 0, MAX_INT32)
    nodes = _spec_ncpus(fields, "Resource_List.nodes", "ppn")
    if ncpus is not None:
        return ncpus if nodes is None else max(ncpus, nodes)
    select = _spec_ncpus(fields, "Resource_List.select", "ncpus")
    for found in (select, nodes):
        if found is not None:
            return found
    for given in (_vnode_ncpus, _host_ncpus):
        found = given(fields)
        if found is not None:
            return found
    return _integer(fields, "resources_used.ncpus", 0, MAX_INT32)


def submit_time(fields):
    """When the job was submitted: ``ctime``, else ``qtime`` (None if neither is there)."""
    submit = _integer(fields, "ctime", 0, MAX_EPOCH)
    return _integer(fields, "qtime", 0, MAX_EPOCH) if submit is None else submit


def array_subjob(job_id):
    """``(parent id, index)`` of a job-array subjob: ``("123[].svr", 4)`` for ``123[4].svr``; else None.

    Only a sequence number followed by ``[index]`` is a subjob: brackets
    elsewhere (``3073070.[hostname_1]``) are part of a plain job id.
    """
    match = _ARRAY_JOB_ID.fullmatch(job_id) if "[" in job_id else None
    if match is None or not match.group(2):
        return None
    return "{}[]{}".format(match.group(1), match.group(3)), int(match.group(2))


def is_array_parent(job_id):
    """True for a job-array parent id such as ``123[].svr``."""
    match = _ARRAY_JOB_ID.fullmatch(job_id) if "[]" in job_id else None
    return match is not None and not match.group(2)


def completed_job(job_id, fields):
    """The ``CompletedJob`` of a finished job's attributes, or None for a job that is not a run.

    Not a run: a job-array parent (``123[].svr``, whose subjobs are the runs)
    and a job without ``start``, or with ``start=0`` and no
    ``resources_used.walltime`` (the job never started: ``qdel -W force`` of a
    job that had not started writes such an E record). A converted trace whose
    first job starts at the epoch keeps its ``start=0`` run: its E record says
    how long the job ran.

    The runtime is ``resources_used.walltime``, else ``end - start``; ``end``
    is required and never before ``start``.
    """
    if "start" not in fields or is_array_parent(job_id):
        return None
    user = fields.get("user")
    if not user:
        raise AccountingError("missing", "user")
    start = _integer(fields, "start", 0, MAX_EPOCH, required=True)
    if start == 0 and "resources_used.walltime" not in fields:
        return None
    end = _integer(fields, "end", 0, MAX_EPOCH, required=True)
    if end < start:
        raise AccountingError("before start ({} < {})".format(end, start), "end")
    runtime = _duration(fields, "resources_used.walltime")
    return CompletedJob(
        job_id,
        user,
        min(end - start, MAX_INT32) if runtime is None else runtime,
        end,
        _duration(fields, "Resource_List.walltime"),
        _duration(fields, "Resource_List.soft_walltime"),
        fields.get("group"),
        fields.get("project", fields.get("account")),
        fields.get("queue"),
        job_ncpus(fields),
        submit_time(fields),
        start,
        _integer(fields, "Exit_status", -MAX_INT32, MAX_INT32),
    )
