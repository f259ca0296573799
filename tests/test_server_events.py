"""predictor.server.events: PBS events (from the stand-in) read into plain records."""

import pbs_standin as pbs
import pytest
from hookenv import finished_job, full_job

from predictor.jobs import CompletedJob
from predictor.server.events import JobView, completed_job, modifyjob_view, queuejob_view, runjob_view


def test_queuejob_view_uses_the_requestor():
    """queuejob: the user is e.requestor, the walltime as requested, no queue when none was given."""
    event = pbs.queuejob_event("alice", {"walltime": "01:00:00", "soft_walltime": 600})
    assert queuejob_view(event) == JobView("queuejob", None, "alice", None, 3600, 600, None, False,
                                           project="_pbs_project_default")


def test_queuejob_view_without_walltime():
    """An unrequested walltime stays None."""
    assert queuejob_view(pbs.queuejob_event("alice", {}, queue="debug")).walltime_s is None


def test_queuejob_view_sees_shrink_to_fit():
    """min_walltime marks a shrink-to-fit job."""
    assert queuejob_view(pbs.queuejob_event("alice", {"walltime": 60, "min_walltime": 30})).shrink_to_fit


def test_runjob_view_uses_the_full_job():
    """runjob: id, euser, queue and the current soft_walltime come from the job."""
    event = pbs.runjob_event(full_job("7.svr", "bob", walltime=7200, soft_walltime=1800, queue="long"))
    assert runjob_view(event)[:8] == ("runjob", "7.svr", "bob", "long", 7200, None, 1800, False)


def test_runjob_view_carries_the_creation_time():
    """runjob: the job's ctime is its submission, where tang's time window is counted back from."""
    job = pbs.Job({"walltime": 7200}, id="7.svr", euser="bob", queue=pbs.Queue("long"), ctime=1775822400)
    assert runjob_view(pbs.runjob_event(job)).submit_time == 1775822400


def test_views_carry_the_project():
    """The job's project is what tang's project keys compare: runjob reads the job's, queuejob PBS's default when
    the user named none."""
    job = pbs.Job({"walltime": 7200}, id="7.svr", euser="bob", queue=pbs.Queue("long"), project="climate")
    assert runjob_view(pbs.runjob_event(job)).project == "climate"
    assert queuejob_view(pbs.queuejob_event("alice", {"walltime": 60})).project == "_pbs_project_default"


def test_modifyjob_view_uses_the_owner_not_the_requestor():
    """modifyjob: the history is the job owner's even when a manager runs qalter."""
    event = pbs.modifyjob_event(full_job("7.svr", "bob", walltime=7200, soft_walltime=1800), {"walltime": 600}, "root")
    assert modifyjob_view(event)[:8] == ("modifyjob", "7.svr", "bob", "workq", 600, None, 1800, False)


def test_modifyjob_view_without_walltime_change():
    """A qalter that leaves walltime alone has no new walltime."""
    event = pbs.modifyjob_event(full_job(walltime=7200), {"ncpus": 8}, "alice")
    assert modifyjob_view(event).walltime_s is None


def test_completed_job_from_jobobit():
    """jobobit: every column of completed_jobs comes from the finished job."""
    job = finished_job("9.svr", "alice", runtime=600, walltime=3600, stime=1000000, Exit_status=-29)
    assert completed_job(pbs.jobobit_event(job).job) == CompletedJob(
        job_id="9.svr", user="alice", runtime_s=600, end_time=1000600, walltime_s=3600, soft_walltime_s=None,
        group="users", project="_pbs_project_default", queue="workq", ncpus=4, submit_time=999950,
        start_time=1000000, exit_status=-29)


def test_runtime_falls_back_to_obit_minus_start():
    """Without resources_used.walltime the runtime is obittime - stime, as for an E record."""
    job = pbs.Job({"walltime": 3600}, id="9.svr", euser="alice", stime=100, obittime=400)
    assert completed_job(job).runtime_s == 300


@pytest.mark.parametrize("attributes", [{"id": "12[].svr", "stime": 1}, {"id": "12.svr"}])
def test_array_parents_and_unstarted_jobs_are_not_runs(attributes):
    """An array parent or a job without a start time is not a completed run."""
    assert completed_job(pbs.Job({"walltime": 60}, euser="alice", **attributes)) is None


def test_subjobs_are_runs():
    """A subjob 12[3].svr is recorded like any job."""
    assert completed_job(finished_job("12[3].svr")).job_id == "12[3].svr"


@pytest.mark.parametrize("attributes, field", [({"stime": "yesterday"}, "stime"),
                                               ({"Exit_status": 2 ** 40}, "Exit_status"), ({"euser": None}, "euser")])
def test_odd_values_name_the_field(attributes, field):
    """A value PBS would not give raises ValueError naming the field."""
    values = dict({"id": "9.svr", "euser": "alice", "stime": 100, "obittime": 400}, **attributes)
    with pytest.raises(ValueError, match=field):
        completed_job(pbs.Job({"walltime": 3600}, **values))
