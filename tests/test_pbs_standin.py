"""The stand-in for PBS's ``pbs`` module behaves as ../shared/pbs-facts.md says PBS does."""

import textwrap

import pbs_standin as pbs
import pytest
from hypothesis import given
from hypothesis import strategies as st


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


@pytest.mark.parametrize("bad", ["1h", "-5", -5, "+5", " 60", "60 ", "1:2:3:4", "\u0661\u0662", True, None, b"60"])
def test_duration_refuses_what_real_pbs_refuses(bad):
    """Text that is not [[HH:]MM:]SS[.fraction] once str() is applied raises BadResourceValueError, no TypeError."""
    with pytest.raises(pbs.BadResourceValueError):
        pbs.duration(bad)


@pytest.mark.parametrize("value, seconds", [("", 0), (0.4, 0), (1.5, 2), (2.5, 3), ("00:00:02.49", 2),
                                            ("1:00:00.999", 3601), ("99:99", 6039), (10 ** 12, 10 ** 12)])
def test_duration_accepts_what_real_pbs_accepts(value, seconds):
    """Fractions round half up, minutes may exceed 59, empty text is 0; str() is the text given."""
    assert (int(pbs.duration(value)), str(pbs.duration(value))) == (seconds, str(value))


@pytest.mark.parametrize("level", [0, False, 3, 8 | 4, 42, 1029, "warning", None, 1.0, 2 ** 40])
def test_logmsg_refuses_invalid_levels(level):
    """logmsg with a level that is neither LOG_* nor one EVENT_* value (or not an int) raises, as on a real server."""
    with pytest.raises((TypeError, OverflowError)):
        pbs.logmsg(level, "x")


def test_logmsg_takes_true_as_event_error(tmp_path):
    """True is the int 1, EVENT_ERROR: a real server logged it (pbs.logmsg(True, ...) fails no hook)."""
    result = pbs.run_hook(script(tmp_path, "pbs.logmsg(True, 'x')\n"), queued())
    assert result.accepted and result.logs == [(pbs.EVENT_ERROR, "x")] and result.warnings == ["x"]


def test_logmsg_takes_bytes_but_not_numbers(tmp_path):
    """A bytes message is logged, an int one raises TypeError, as on a real server."""
    result = pbs.run_hook(script(tmp_path, "pbs.logmsg(pbs.LOG_DEBUG, b'raw')\npbs.logmsg(pbs.LOG_DEBUG, 123)\n"),
                          queued())
    assert result.logs == [(pbs.LOG_DEBUG, "raw")] and "TypeError" in result.reason


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
    assert not result.accepted and "AssertionError: Not permitted to modify attributes" in result.reason


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


@pytest.mark.parametrize("soft, accepted", [(0, True), (3600, True), (3601, False)])
def test_modifyjob_checks_soft_walltime(tmp_path, soft, accepted):
    """modifyjob values are checked: above walltime rejects the qalter; 0 is legal, as on a real server."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = pbs.duration({})\n'.format(soft))
    job = pbs.Job({"walltime": 3600}, id="1.svr", euser="alice")
    result = pbs.run_hook(path, pbs.modifyjob_event(job, {"walltime": 3600}, "root"))
    assert (result.accepted, result.reason) == (accepted, "" if accepted else pbs.ILLEGAL_VALUE)
    assert result.resources.get("soft_walltime") == (soft if accepted else None)


@pytest.mark.parametrize("value", ["pbs.duration(0)", "0"])
def test_queuejob_soft_walltime_zero_is_legal(tmp_path, value):
    """A real server took soft_walltime 0 from a queuejob hook (qstat: 00:00:00)."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = {}\n'.format(value))
    result = pbs.run_hook(path, queued(walltime=3600))
    assert result.accepted and result.resources["soft_walltime"] == 0


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
    result = pbs.run_hook(path, queued(min_walltime=600))
    assert not result.accepted and result.reason == pbs.SHRINK_TO_FIT


def test_duration_resource_set_from_int_becomes_a_duration(tmp_path):
    """A plain int for soft_walltime is converted, as a real server did with 0, 1800, 3600 and 7200."""
    path = script(tmp_path, """
        e = pbs.event()
        e.job.Resource_List["soft_walltime"] = 1800
        pbs.logmsg(pbs.LOG_DEBUG, type(e.job.Resource_List["soft_walltime"]).__name__)
    """)
    result = pbs.run_hook(path, queued())
    assert result.accepted and result.resources["soft_walltime"] == 1800 and result.logs[0][1] == "duration"


@pytest.mark.parametrize("value, error", [('"00:30:00"', "BadResourceValueTypeError"),
                                          ("1800.5", "BadResourceValueTypeError"),
                                          ("True", "BadResourceValueError"), ("-5", "BadResourceValueError")])
def test_duration_resource_refuses_text_floats_and_bad_ints(tmp_path, value, error):
    """Text and floats are the wrong type, True and -5 bad durations: the hook fails, so the qsub does."""
    path = script(tmp_path, 'pbs.event().job.Resource_List["soft_walltime"] = {}\n'.format(value))
    result = pbs.run_hook(path, queued())
    assert not result.accepted and error + ":" in result.reason


def test_unknown_resource_name_raises_when_read(tmp_path):
    """Reading a resource the server does not define raises AttributeError; an unset built-in reads None."""
    path = script(tmp_path, """
        e = pbs.event()
        pbs.logmsg(pbs.LOG_DEBUG, repr(e.job.Resource_List["mem"]))
        e.job.Resource_List["softwalltime"]
    """)
    result = pbs.run_hook(path, queued())
    assert result.logs[0][1] == "None" and "AttributeError" in result.reason


def test_unknown_job_attribute_raises_when_set(tmp_path):
    """Setting a job attribute PBS does not have raises UnsetAttributeNameError."""
    result = pbs.run_hook(script(tmp_path, "pbs.event().job.zz_x = 1\n"), queued())
    assert "UnsetAttributeNameError" in result.reason


def test_queuejob_has_no_job_id_euser_or_walltime(tmp_path):
    """queuejob: id and queue read "", euser None, an unrequested walltime None; the user is the requestor."""
    path = script(tmp_path, """
        e = pbs.event()
        job = e.job
        pbs.logmsg(pbs.LOG_DEBUG, repr((job.id, job.queue, job.euser, job.Resource_List["walltime"], e.requestor)))
    """)
    result = pbs.run_hook(path, queued(walltime=None))
    assert result.logs == [(pbs.LOG_DEBUG, "('', '', None, None, 'alice')")]


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
    assert "BadAttributeValueError" in pbs.run_hook(path, pbs.jobobit_event(job)).reason


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
