"""Read PBS hook events into plain records; the only module that reads ``pbs`` objects.

What each event shows (see docs/install.md and the OpenPBS hook guide):

* queuejob: only what the client sent. No job id, no ``euser``: the user is
  ``e.requestor``; ``walltime`` is None when not requested; ``queue`` may be empty.
* runjob: the full job with defaults applied.
* modifyjob: ``e.job`` holds only the attributes being changed, ``e.job_o`` the
  full job; the user is the job's ``euser``, not the requestor (often a manager).
* jobobit: the finished job, read-only, with ``resources_used``, ``Exit_status``,
  ``stime`` and ``obittime``.

``pbs.duration`` is an int of seconds: ``int()`` it, never parse ``str()``.
"""

from typing import NamedTuple, Optional

from ..accounting import job_attributes
from ..errors import AccountingError

__all__ = ["JobView", "queuejob_view", "runjob_view", "modifyjob_view", "completed_job", "e_record_fields",
           "resource_seconds"]


class JobView(NamedTuple):
    """What the soft-walltime decision needs to know about one job event.

    ``walltime_s`` is the walltime the job will have (for modifyjob: the new one,
    None when the request does not change it). ``explicit_soft_s`` is a
    soft_walltime given in this very request (qsub or qalter);
    ``existing_soft_s`` the one the job already had before it. ``submit_time``
    is the job's ``ctime`` (None in queuejob: the job is being submitted now).
    ``project`` is the job's PBS project (PBS's default project when the user
    named none: the one its accounting records will carry).
    """

    hook_event: str
    job_id: Optional[str]
    user: Optional[str]
    queue: Optional[str]
    walltime_s: Optional[int]
    explicit_soft_s: Optional[int]
    existing_soft_s: Optional[int]
    shrink_to_fit: bool
    submit_time: Optional[int] = None
    project: Optional[str] = None


DEFAULT_PROJECT = "_pbs_project_default"
"""The project PBS gives a job submitted without one."""


def resource_seconds(job, name):
    """A duration resource of ``job.Resource_List`` in whole seconds, or None if unset."""
    value = _resource(job, name)
    return None if value is None else int(value)


def _resource(job, name):
    resources = job.Resource_List
    return None if resources is None else resources[name]


def _queue_name(job):
    queue = job.queue
    name = getattr(queue, "name", queue)
    return str(name) if name else None


def _text(value):
    return str(value) if value else None


def queuejob_view(event):
    """A queuejob event: the job as submitted by ``e.requestor``."""
    job = event.job
    return JobView("queuejob", None, _text(event.requestor), _queue_name(job), resource_seconds(job, "walltime"),
                   resource_seconds(job, "soft_walltime"), None, _resource(job, "min_walltime") is not None,
                   project=_project(job))


def runjob_view(event):
    """A runjob event: the full job about to start."""
    job = event.job
    return JobView("runjob", _text(job.id), _text(job.euser), _queue_name(job), resource_seconds(job, "walltime"),
                   None, resource_seconds(job, "soft_walltime"), _resource(job, "min_walltime") is not None,
                   _creation_time(job), _project(job))


def modifyjob_view(event):
    """A modifyjob event: ``e.job`` is the change, ``e.job_o`` the job before it."""
    change, job = event.job, event.job_o
    shrink = _resource(job, "min_walltime") is not None or _resource(change, "min_walltime") is not None
    return JobView("modifyjob", _text(job.id), _text(job.euser), _queue_name(job), resource_seconds(change, "walltime"),
                   resource_seconds(change, "soft_walltime"), resource_seconds(job, "soft_walltime"), shrink,
                   _creation_time(job), _project(job))


def _project(job):
    """The job's project, as its accounting records will name it: PBS's default project when unset."""
    return _text(getattr(job, "project", None)) or DEFAULT_PROJECT


def _creation_time(job):
    """The job's ctime in epoch seconds, or None if PBS gave none (the predictor then counts from now)."""
    value = getattr(job, "ctime", None)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return int(value)


_ATTRIBUTES = (("user", "euser"), ("group", "egroup"), ("project", "project"), ("account", "Account_Name"),
               ("ctime", "ctime"), ("qtime", "qtime"), ("start", "stime"), ("end", "obittime"),
               ("Exit_status", "Exit_status"), ("exec_host", "exec_host"), ("exec_vnode", "exec_vnode"))
"""E-record field -> the job attribute a jobobit hook reads it from."""

_RESOURCES = (("Resource_List", ("ncpus", "select", "nodes", "walltime", "soft_walltime")),
              ("resources_used", ("walltime", "ncpus")))
"""The resources the E record and the completed row use, by where PBS keeps them."""

_ATTRIBUTE_OF = dict(_ATTRIBUTES)


def completed_job(job):
    """The ``CompletedJob`` of a jobobit event, or None for an array parent or a job that never started.

    The rules are the accounting E record's (``predictor.accounting.job_attributes``); the
    E record PBS writes after this event may say one second more in ``end``.
    ValueError names a job attribute PBS gave in an unexpected form.
    """
    job_id = _text(job.id)
    if job_id is None:
        return None
    try:
        return job_attributes.completed_job(job_id, e_record_fields(job))
    except AccountingError as err:
        field = _ATTRIBUTE_OF.get(err.field, err.field)
        raise ValueError("jobobit: {}: {}".format(field, err.reason)) from err


def e_record_fields(job):
    """The finished job's attributes as an E record gives them: ``{field: text}``, unset ones left out."""
    fields = {}
    for field, attribute in _ATTRIBUTES:
        _put(fields, field, getattr(job, attribute, None))
    _put(fields, "queue", _queue_name(job))
    for where, names in _RESOURCES:
        resources = getattr(job, where)
        for name in names:
            _put(fields, where + "." + name, None if resources is None else resources[name])
    return fields


def _put(fields, field, value):
    # An int (a pbs.duration too) as its seconds: the text of a pbs.duration is the form it was given in.
    text = str(int(value)) if isinstance(value, int) and not isinstance(value, bool) else str(value)
    if value is not None and text:
        fields[field] = text
