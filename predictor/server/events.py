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

from ..jobs import CompletedJob

__all__ = ["JobView", "queuejob_view", "runjob_view", "modifyjob_view", "completed_job", "resource_seconds"]

_MAX_INT32 = 2 ** 31 - 1


class JobView(NamedTuple):
    """What the soft-walltime decision needs to know about one job event.

    ``walltime_s`` is the walltime the job will have (for modifyjob: the new one,
    None when the request does not change it). ``explicit_soft_s`` is a
    soft_walltime given in this very request (qsub or qalter);
    ``existing_soft_s`` the one the job already had before it. ``submit_time``
    is the job's ``ctime`` (None in queuejob: the job is being submitted now).
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
                   resource_seconds(job, "soft_walltime"), None, _resource(job, "min_walltime") is not None)


def runjob_view(event):
    """A runjob event: the full job about to start."""
    job = event.job
    return JobView("runjob", _text(job.id), _text(job.euser), _queue_name(job), resource_seconds(job, "walltime"),
                   None, resource_seconds(job, "soft_walltime"), _resource(job, "min_walltime") is not None,
                   _creation_time(job))


def modifyjob_view(event):
    """A modifyjob event: ``e.job`` is the change, ``e.job_o`` the job before it."""
    change, job = event.job, event.job_o
    shrink = _resource(job, "min_walltime") is not None or _resource(change, "min_walltime") is not None
    return JobView("modifyjob", _text(job.id), _text(job.euser), _queue_name(job), resource_seconds(change, "walltime"),
                   resource_seconds(change, "soft_walltime"), resource_seconds(job, "soft_walltime"), shrink,
                   _creation_time(job))


def _creation_time(job):
    """The job's ctime in epoch seconds, or None if PBS gave none (the predictor then counts from now)."""
    value = getattr(job, "ctime", None)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return int(value)


def completed_job(job):
    """The ``CompletedJob`` of a jobobit event, or None for an array parent or a job that never started.

    As in the accounting E record: runtime is ``resources_used.walltime``, else
    end - start. ValueError names a field PBS gave in an unexpected form.
    """
    job_id = _text(job.id)
    start = _epoch(job.stime, "stime")
    if job_id is None or "[]" in job_id or start is None:
        return None
    used = job.resources_used
    used_walltime = None if used is None else used["walltime"]
    end = _epoch(job.obittime, "obittime")
    runtime = _seconds(used_walltime, "resources_used.walltime")
    if runtime is None:
        runtime = max(0, (start if end is None else end) - start)
    return CompletedJob(
        job_id=job_id, user=_required_text(job.euser, "euser"), runtime_s=min(runtime, _MAX_INT32),
        end_time=start + runtime if end is None else end,
        walltime_s=resource_seconds(job, "walltime"), soft_walltime_s=resource_seconds(job, "soft_walltime"),
        group=_text(job.egroup), project=_text(job.project), queue=_queue_name(job),
        ncpus=_seconds(_resource(job, "ncpus"), "Resource_List.ncpus"),
        submit_time=_epoch(job.ctime, "ctime"), start_time=start,
        exit_status=_seconds(job.Exit_status, "Exit_status", low=-_MAX_INT32),
    )


def _required_text(value, field):
    if not value:
        raise ValueError("jobobit: job has no {}".format(field))
    return str(value)


def _epoch(value, field):
    return _seconds(value, field, high=10 ** 11)


def _seconds(value, field, low=0, high=_MAX_INT32):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError("jobobit: {} is not an integer in [{}, {}]: {!r}".format(field, low, high, value))
    return int(value)
