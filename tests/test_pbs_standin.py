"""The stand-in for PBS's ``pbs`` module behaves as ../shared/pbs-facts.md says PBS does."""

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pbs_standin as pbs


def script(tmp_path, body, name="hook.py"):
    path = tmp_path / name
    path.write_text("import pbs\n" + textwrap.dedent(body))
    return str(path)


def queued(walltime=3600, **resources):
    if walltime is not None:
        resources["walltime"] = walltime
    return pbs.queuejob_event("alice", resources)


def running(walltime=3600, soft_walltime=None):
    resources = {"walltime": walltime}
    if soft_walltime is not None:
        resources["soft_walltime"] = soft_walltime
    return pbs.runjob_event(pbs.Job(resources, id="1.svr", euser="alice"))


@given(st.integers(0, 10 ** 7))
def test_duration_from_int_is_those_seconds(seconds):
    """duration(int) is an int equal to it, and str() is the int's text."""
    value = pbs.duration(seconds)
    assert isinstance(value, int) and int(value) == seconds and str(value) == str(seconds)


@given(st.integers(0, 500), st.integers(0, 59), st.integers(0, 59))
def test_duration_from_text_keeps_the_text(hours, minutes, seconds):
    """duration("HH:MM:SS") holds the seconds and str() returns the original text."""
    text = "{}:{:02d}:{:02d}".format(hours, minutes, seconds)
    value = pbs.duration(text)
    assert int(value) == hours * 3600 + minutes * 60 + seconds and str(value) == text


def test_duration_arithmetic_gives_plain_ints():
    """Arithmetic on a duration gives a plain int, which must be wrapped again."""
    assert type(pbs.duration("00:10:00") + 1) is int


@pytest.mark.parametrize("bad", ["1h", "", "-5", 1.5, None, True])
def test_duration_refuses_other_values(bad):
    """Anything but an int or [[HH:]MM:]SS text is refused."""
    with pytest.raises((TypeError, ValueError)):
        pbs.duration(bad)


@pytest.mark.parametrize("level", [0, 3, 8 | 4, 42, "warning", None])
def test_logmsg_refuses_invalid_levels(level):
    """logmsg with a level that is neither LOG_* nor one EVENT_* class raises TypeError."""
    with pytest.raises(TypeError):
        pbs.logmsg(level, "x")


def test_default_log_shows_warnings_but_not_debug3():
    """With log_events 511 the server log shows LOG_WARNING and hides EVENT_DEBUG3."""
    assert pbs.logged_by_default(pbs.LOG_WARNING) and not pbs.logged_by_default(pbs.EVENT_DEBUG3)


def test_accept_ends_the_hook(tmp_path):
    """Code after e.accept() does not run."""
    path = script(tmp_path, """
        e = pbs.event()
        e.accept()
        e.job.Resource_List["soft_walltime"] = pbs.duration(60)
    """)
    result = pbs.run_hook(path, queued())
    assert result.accepted and "soft_walltime" not in result.resources


def test_job_cannot_change_after_accept(tmp_path):
    """A hook that catches accept's SystemExit and changes the job fails, and is rejected."""
    path = script(tmp_path, """
        e = pbs.event()
        try:
            e.accept()
        except SystemExit:
            e.job.Resource_List["soft_walltime"] = pbs.duration(60)
    """)
    result = pbs.run_hook(path, queued())
    assert not result.accepted and "EventIncompatibleError" in result.reason


def test_reject_fails_the_request(tmp_path):
    """e.reject(msg) rejects with the message."""
    path = script(tmp_path, "pbs.event().reject('no')\n")
    result = pbs.run_hook(path, queued())
    assert not result.accepted and result.reason.endswith("no")


def test_ending_without_accept_accepts(tmp_path):
    """A script that just ends accepts the event."""
    assert pbs.run_hook(script(tmp_path, "x = 1\n"), queued()).accepted


def test_unhandled_exception_rejects(tmp_path):
    """An exception escaping the hook rejects the request."""
    result = pbs.run_hook(script(tmp_path, "1 / 0\n"), queued())
    assert not result.accepted and "ZeroDivisionError" in result.reason


def test_alarm_rejects(tmp_path):
    """A hook running past its alarm is interrupted and the request rejected."""
    result = pbs.run_hook(script(tmp_path, "while True:\n    pass\n"), queued(), alarm_s=0.2)
    assert not result.accepted and "alarm" in result.reason


def test_queuejob_soft_walltime_above_walltime_is_rejected(tmp_path):
    """The server rejects a qsub whose soft_walltime a queuejob hook set above walltime."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = pbs.duration(7200)\n')
    result = pbs.run_hook(path, queued(walltime=3600))
    assert not result.accepted and result.reason == pbs.ILLEGAL_VALUE


@pytest.mark.parametrize("soft", [0, 3601])
def test_modifyjob_checks_soft_walltime(tmp_path, soft):
    """modifyjob values are checked: 0 or above walltime rejects the qalter."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = pbs.duration({})\n'.format(soft))
    job = pbs.Job({"walltime": 3600}, id="1.svr", euser="alice")
    result = pbs.run_hook(path, pbs.modifyjob_event(job, {"walltime": 3600}, "root"))
    assert not result.accepted and result.reason == pbs.ILLEGAL_VALUE


def test_qalter_walltime_below_existing_soft_is_rejected(tmp_path):
    """Lowering walltime under the job's soft_walltime fails the qalter if no hook fixes it."""
    job = pbs.Job({"walltime": 3600, "soft_walltime": 3000}, id="1.svr", euser="alice")
    result = pbs.run_hook(script(tmp_path, "pass\n"), pbs.modifyjob_event(job, {"walltime": 600}, "root"))
    assert not result.accepted and result.resources["walltime"] == 3600


def test_runjob_values_are_not_checked(tmp_path):
    """PBS does not check runjob values: a soft_walltime above walltime goes through."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = pbs.duration(7200)\n')
    result = pbs.run_hook(path, running(walltime=3600))
    assert result.accepted and result.resources["soft_walltime"] == 7200


def test_shrink_to_fit_job_refuses_soft_walltime(tmp_path):
    """soft_walltime on a job with min_walltime is illegal at qsub."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = pbs.duration(60)\n')
    assert not pbs.run_hook(path, queued(min_walltime=600)).accepted


def test_duration_resource_must_be_set_as_duration(tmp_path):
    """Setting soft_walltime to a plain int is an error (and so a rejection)."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = 60\n')
    assert "BadResourceValueTypeError" in pbs.run_hook(path, queued()).reason


def test_queuejob_has_no_job_id_euser_or_walltime(tmp_path):
    """queuejob: id and euser read None, an unrequested walltime reads None, the user is the requestor."""
    path = script(tmp_path, """
        e = pbs.event()
        pbs.logmsg(pbs.LOG_DEBUG, repr((e.job.id, e.job.euser, e.job.Resource_List["walltime"], e.requestor)))
    """)
    result = pbs.run_hook(path, queued(walltime=None))
    assert result.logs == [(pbs.LOG_DEBUG, "(None, None, None, 'alice')")]


def test_modifyjob_job_holds_only_the_changes(tmp_path):
    """modifyjob: e.job has only the changed resources, e.job_o the full job."""
    path = script(tmp_path, """
        e = pbs.event()
        pbs.logmsg(pbs.LOG_DEBUG, repr((e.job.Resource_List["ncpus"], e.job_o.Resource_List["ncpus"])))
    """)
    job = pbs.Job({"walltime": 3600, "ncpus": 4}, id="1.svr", euser="alice")
    result = pbs.run_hook(path, pbs.modifyjob_event(job, {"walltime": 600}, "root"))
    assert result.logs == [(pbs.LOG_DEBUG, "(None, 4)")]


def test_jobobit_job_is_read_only(tmp_path):
    """Changing the job in jobobit fails (and so rejects)."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = pbs.duration(60)\n')
    job = pbs.Job({"walltime": 3600}, id="1.svr", euser="alice", stime=1)
    assert "EventIncompatibleError" in pbs.run_hook(path, pbs.jobobit_event(job)).reason


def test_each_event_gets_a_fresh_namespace_without_file(tmp_path):
    """Globals do not survive between events and __file__ is not set."""
    path = script(tmp_path, """
        pbs.logmsg(pbs.LOG_DEBUG, repr(("seen" in globals(), "__file__" in globals())))
        seen = True
    """)
    results = [pbs.run_hook(path, queued()) for _ in range(2)]
    assert [result.logs for result in results] == [[(pbs.LOG_DEBUG, "(False, False)")]] * 2


def test_imported_modules_persist_between_events(tmp_path):
    """sys.modules lives on between events, as in pbs_server's interpreter."""
    path = script(tmp_path, """
        import sys, types
        probe = sys.modules.setdefault("swt_standin_probe", types.ModuleType("swt_standin_probe"))
        probe.count = getattr(probe, "count", 0) + 1
        pbs.logmsg(pbs.LOG_DEBUG, str(probe.count))
    """)
    counts = [pbs.run_hook(path, queued()).logs[0][1] for _ in range(2)]
    assert int(counts[1]) == int(counts[0]) + 1


def test_config_filename_is_set_during_the_run_only(tmp_path):
    """pbs.hook_config_filename and $PBS_HOOK_CONFIG_FILE name the config while the hook runs."""
    path = script(tmp_path, """
        import os
        pbs.logmsg(pbs.LOG_DEBUG, repr((pbs.hook_config_filename, os.environ.get("PBS_HOOK_CONFIG_FILE"))))
    """)
    result = pbs.run_hook(path, queued(), config_path="/x/h.json")
    assert result.logs == [(pbs.LOG_DEBUG, "('/x/h.json', '/x/h.json')")] and pbs.hook_config_filename is None
