"""predictor.accounting.job_attributes: one rule for a finished job, from its E record or the jobobit hook."""

import pbs_standin as pbs
import pytest
from hypothesis import given
from strategies import finished_pbs_jobs

from predictor.accounting.records import completed_job as from_e_record
from predictor.accounting.records import parse_fields, parse_record
from predictor.durations import format_duration
from predictor.server.events import completed_job as from_jobobit

# E-record field -> jobobit job attribute (the others have the same name in both).
_E_NAMES = {"euser": "user", "egroup": "group", "Account_Name": "account", "stime": "start", "obittime": "end"}
_DURATIONS = ("walltime", "soft_walltime")


def _quoted(value):
    text = str(value)
    if " " not in text:
        return text
    return "'{}'".format(text) if '"' in text else '"{}"'.format(text)


def e_record(attributes, requested, used):
    """The E line pbs_server writes for this job (durations as HH:MM:SS)."""
    fields = ["{}={}".format(_E_NAMES.get(name, name), _quoted(value))
              for name, value in sorted(attributes.items()) if name != "id"]
    for prefix, resources in (("Resource_List", requested), ("resources_used", used)):
        fields += ["{}.{}={}".format(prefix, name, format_duration(value) if name in _DURATIONS else value)
                   for name, value in sorted(resources.items())]
    return "04/10/2026 12:00:05;E;{};{}".format(attributes["id"], " ".join(fields))


def jobobit_job(attributes, requested, used):
    """The read-only job a jobobit hook sees, as the PBS stand-in makes it."""
    return pbs.jobobit_event(pbs.Job(requested, used, queue=pbs.Queue("workq"), **attributes)).job


def both(attributes, requested=None, used=None):
    """``(row from the E record, row from the jobobit job)`` for the same job."""
    requested, used = requested or {}, used or {}
    record = parse_record(e_record(dict(attributes, queue="workq"), requested, used))
    return from_e_record(record, parse_fields(record.body)), from_jobobit(jobobit_job(attributes, requested, used))


@given(finished_pbs_jobs())
def test_e_record_and_jobobit_give_the_same_row(job):
    """Any finished job gives the same completed row whichever of the two shows it."""
    by_record, by_jobobit = both(*job)
    assert by_record == by_jobobit


def test_cores_from_exec_vnode_without_a_requested_ncpus():
    """No Resource_List.ncpus: both count the cores the job ran on, from exec_vnode."""
    job = {"id": "7.svr", "euser": "alice", "stime": 1000, "obittime": 1600,
           "exec_vnode": "(n1:ncpus=2)+(n2:ncpus=2)"}
    by_record, by_jobobit = both(job, {"walltime": 3600}, {"walltime": 590})
    assert by_record == by_jobobit and by_jobobit.ncpus == 4


def test_runtime_without_resources_used_walltime():
    """No resources_used.walltime: both take end - start, and the same times."""
    job = {"id": "8.svr", "euser": "alice", "ctime": 900, "stime": 1000, "obittime": 1600}
    by_record, by_jobobit = both(job, {"walltime": 3600, "ncpus": 2})
    assert by_record == by_jobobit
    assert (by_jobobit.runtime_s, by_jobobit.submit_time, by_jobobit.start_time, by_jobobit.end_time) == (
        600, 900, 1000, 1600)


@pytest.mark.parametrize("times, attribute", [({"stime": 1000}, "obittime"),
                                              ({"stime": 1000, "obittime": 900}, "obittime")])
def test_jobobit_without_a_sane_end_is_refused_as_an_e_record_is(times, attribute):
    """A job with no end, or one before its start, is refused naming the jobobit attribute, not made up."""
    job = pbs.Job({"walltime": 3600}, id="9.svr", euser="alice", **times)
    with pytest.raises(ValueError, match=attribute):
        from_jobobit(job)
