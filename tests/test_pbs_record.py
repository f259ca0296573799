"""The recording harness's pure parts, the workloads it plays, and the recordings kept in tests/data/fidelity.

No PBS server is needed: these check the text the harness writes to the
server's files, the lines it keeps from the accounting log, the generated
workloads, and that every kept recording is complete.
"""

import json
import os
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import fidelity_totals  # noqa: E402  (benchmarks/ is not a package)
import fidelity_workloads  # noqa: E402
import pbs_record  # noqa: E402

RECORDINGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fidelity")
SHIPPED_SCHED_CONFIG = """# comment
round_robin: False\tall
by_queue: True\t\tprime
by_queue: True\t\tnon_prime
strict_ordering: false\tALL
#job_sort_key: "ncpus HIGH"\tALL
fair_share: false\tALL
"""


# --- sched_config, resource_group, MoM configuration ---------------------------------------------------

def test_sched_config_setting_replaced_in_place():
    """A named setting's line is replaced where it stood; the lines around it are unchanged."""
    text = pbs_record.sched_config_with(SHIPPED_SCHED_CONFIG, {"strict_ordering": "True ALL"})
    assert text.splitlines() == SHIPPED_SCHED_CONFIG.replace("strict_ordering: false\tALL",
                                                             "strict_ordering: True ALL").splitlines()


def test_sched_config_repeated_setting_becomes_the_given_lines():
    """by_queue's two lines (prime, non_prime) become the one line asked for, at the first one's place."""
    lines = pbs_record.sched_config_with(SHIPPED_SCHED_CONFIG, {"by_queue": "True ALL"}).splitlines()
    assert [line for line in lines if line.startswith("by_queue")] == ["by_queue: True ALL"]
    assert lines.index("by_queue: True ALL") == 2


def test_sched_config_new_and_multiple_settings_appended_comments_kept():
    """Absent settings are added at the end (several job_sort_key lines in order); comments stay."""
    lines = pbs_record.sched_config_with(SHIPPED_SCHED_CONFIG, {
        "job_sort_key": ['"ncpus HIGH" ALL', '"walltime LOW" ALL'], "fairshare_decay_time": "00:01:00"}).splitlines()
    assert lines[-3:] == ["fairshare_decay_time: 00:01:00", 'job_sort_key: "ncpus HIGH" ALL',
                          'job_sort_key: "walltime LOW" ALL']
    assert '#job_sort_key: "ncpus HIGH"\tALL' in lines


_names = st.sampled_from(["round_robin", "by_queue", "strict_ordering", "fair_share", "job_sort_key", "help"])


@given(st.dictionaries(_names, st.sampled_from(["True ALL", "false", '"ncpus HIGH" ALL'])))
def test_sched_config_lines_of_other_settings_kept(settings):
    """Every line not setting a named setting is kept, in order, and each named setting appears as given."""
    lines = pbs_record.sched_config_with(SHIPPED_SCHED_CONFIG, settings).splitlines()
    kept = [line for line in SHIPPED_SCHED_CONFIG.splitlines() if pbs_record.setting_name(line) not in settings]
    assert [line for line in lines if pbs_record.setting_name(line) not in settings] == kept
    for name, value in settings.items():
        assert [line for line in lines if pbs_record.setting_name(line) == name] == ["{}: {}".format(name, value)]


def test_resource_group_one_line_per_entity():
    """The share tree is written as name, id, parent, shares lines."""
    assert pbs_record.resource_group_text([["red", 10, "root", 50], ["ana", 11, "red", 60]]) == (
        "red\t10\troot\t50\nana\t11\tred\t60\n")


def test_mom_config_poll_settings_replaced_or_added():
    """$min_check_poll replaces the existing line, $max_check_poll is added; other lines are unchanged."""
    text = pbs_record.mom_config_with("$clienthost pbshost\n$min_check_poll 10\n",
                                      {"$min_check_poll": "1", "$max_check_poll": "2"})
    assert text == "$clienthost pbshost\n$min_check_poll 1\n$max_check_poll 2\n"


def test_vnode_config_empties_the_moms_own_vnode_and_numbers_the_others():
    """Version 2 header, the MoM's own vnode at 0 ncpus, one block of resources per numbered vnode."""
    text = pbs_record.vnode_config_text("pbshost", [{"ncpus": 2, "mem": "4gb", "host": "h-a"}, {"ncpus": 8}])
    assert text.splitlines() == [
        "$configversion 2", "pbshost: resources_available.ncpus = 0",
        "pbshost[0]: resources_available.host = h-a", "pbshost[0]: resources_available.mem = 4gb",
        "pbshost[0]: resources_available.ncpus = 2", "pbshost[1]: resources_available.ncpus = 8"]


def test_scratch_file_is_new_private_and_removed():
    """The files handed to qmgr and pbs_mom are made by mkstemp (no name known in advance to follow a symlink
    planted at it), readable only by their owner, and gone after the block, even when it fails."""
    with pytest.raises(RuntimeError):
        with pbs_record.scratch_file("$configversion 2\n", "vnodes") as path:
            kept = path
            assert os.path.basename(path).startswith("pbs-record.") and path.endswith(".vnodes")
            assert open(path, encoding="utf-8").read() == "$configversion 2\n"
            assert os.stat(path).st_mode & 0o777 == 0o600
            raise RuntimeError("qmgr failed")
    assert not os.path.exists(kept)


# --- qmgr text and commands -----------------------------------------------------------------------------

PRINT_SERVER = """create queue workq
set queue workq queue_type = Execution
set queue workq priority = 10
set server scheduling = True
set server backfill_depth = 2
set server max_run = [u:PBS_GENERIC=2]
"""


def test_print_server_settings_and_queues_read():
    """Server settings, queue names and one queue's settings are read from ``print server``."""
    assert pbs_record.server_settings(PRINT_SERVER) == {
        "scheduling": "True", "backfill_depth": "2", "max_run": "[u:PBS_GENERIC=2]"}
    assert pbs_record.queue_names(PRINT_SERVER) == ["workq"]
    assert pbs_record.queue_settings(PRINT_SERVER, "workq") == {"queue_type": "Execution", "priority": "10"}


class _Commands:
    """A server that only notes the commands the harness runs."""

    def __init__(self):
        self.commands = []

    def run(self, *arguments, check=True):
        self.commands.append(arguments)
        return ""

    def qmgr(self, command, check=True):
        self.commands.append(("qmgr", command))
        return ""


def test_custom_resources_deleted_after_the_history_that_keeps_them_busy():
    """A resource the workload created is deleted once the recording's finished jobs are purged; one that was
    there before the recording is kept; a workload without resources runs nothing."""
    before = "create resource scratch\nset resource scratch type = long\n" + PRINT_SERVER
    assert pbs_record.resource_names(before) == ["scratch"]
    server = _Commands()
    workload = {"resources": {"ngpus": "type=long, flag=nh", "scratch": "type=long, flag=nh"}}
    pbs_record.restore_resources(server, {"print_server": before}, workload, ["1.pbshost", "2.pbshost"])
    assert server.commands == [("qdel", "-x", "-W", "force", "1.pbshost", "2.pbshost"),
                               ("qmgr", "delete resource ngpus")]
    server = _Commands()
    pbs_record.restore_resources(server, {"print_server": before}, {}, ["1.pbshost"])
    assert server.commands == []


def test_print_sched_settings_read():
    """The scheduler object's settings are read from ``print sched``, to be put back after a recording."""
    text = "create sched default\nset sched scheduling = True\nset sched job_sort_formula_threshold = 120\n"
    assert pbs_record.sched_settings(text) == {"scheduling": "True", "job_sort_formula_threshold": "120"}


def test_jobs_that_never_run_are_named():
    """The jobs a workload marks ``never_runs`` are not waited for; the others are."""
    workload = {"jobs": [{"name": "j1"}, {"name": "j2", "never_runs": True}, {"name": "j3", "never_runs": False}]}
    assert pbs_record.never_run_names(workload) == {"j2"}


@pytest.mark.parametrize("value, text", [(3, "3"), ("[u:PBS_GENERIC=2]", '"[u:PBS_GENERIC=2]"'),
                                         ("ncpus * 100 + walltime", '"ncpus * 100 + walltime"'), ("4gb", "4gb")])
def test_qmgr_values_quoted_when_needed(value, text):
    """Values with spaces, brackets or operators are quoted for qmgr; plain ones are not."""
    assert pbs_record.qmgr_value(value) == text


def test_qsub_holds_the_job_and_sleeps_for_its_runtime():
    """The job is held, named, queued, sized and timed as the workload says, and sleeps its runtime."""
    job = {"name": "j001", "queue": "workq", "select": "2:ncpus=2+1:ncpus=1", "place": "scatter",
           "walltime": 40, "runtime": 12}
    assert pbs_record.qsub_arguments(job) == [
        "qsub", "-h", "-N", "j001", "-q", "workq", "-o", "/dev/null", "-e", "/dev/null",
        "-l", "select=2:ncpus=2+1:ncpus=1", "-l", "place=scatter", "-l", "walltime=40", "--", "/bin/sleep", "12"]


def test_qsub_of_a_job_submitted_as_it_comes_is_not_held():
    """A ``direct`` workload's job is submitted without -h, otherwise as a held one."""
    job = {"name": "j001", "queue": "workq", "select": "1:ncpus=2", "place": "pack", "walltime": 40, "runtime": 12}
    held = pbs_record.qsub_arguments(job)
    assert pbs_record.qsub_arguments(job, held=False) == [argument for argument in held if argument != "-h"]
    assert "-h" in held


def test_qsub_of_a_queuejob_workload_carries_the_soft_walltime_to_the_hook():
    """A ``queuejob`` workload's job carries its soft walltime in the variable the recording's queuejob hook reads
    (a job without one carries none), and the hook's body is Python that the server's interpreter (3.6) reads."""
    job = {"name": "j001", "queue": "workq", "select": "1:ncpus=2", "place": "pack", "walltime": 40, "runtime": 12,
           "soft_walltime": 7}
    arguments = pbs_record.qsub_arguments(job, held=False, soft_walltime_variable=True)
    assert arguments[1:3] == ["-v", "{}=7".format(pbs_record.SOFT_WALLTIME_VARIABLE)]
    assert arguments[3:] == pbs_record.qsub_arguments(job, held=False)[1:]
    assert "-v" not in pbs_record.qsub_arguments(dict(job, soft_walltime=None), held=False,
                                                  soft_walltime_variable=True)
    compile(pbs_record.SOFT_WALLTIME_HOOK_BODY, pbs_record.SOFT_WALLTIME_HOOK, "exec")
    assert pbs_record.SOFT_WALLTIME_VARIABLE in pbs_record.SOFT_WALLTIME_HOOK_BODY


def test_qsub_of_a_job_in_a_project():
    """A job naming a project is submitted in it (``-P``), as ``limits-projects``' are, each job in one of three."""
    job = {"name": "j001", "queue": "workq", "select": "1:ncpus=2", "place": "pack", "walltime": 40, "runtime": 12}
    assert pbs_record.qsub_arguments(dict(job, project="fid_atlas"))[-5:] == [
        "-P", "fid_atlas", "--", "/bin/sleep", "12"]
    assert "-P" not in pbs_record.qsub_arguments(job)
    workload = fidelity_workloads.generate("limits-projects", 22)
    pbs_record.check_workload(workload, "limits-projects")
    assert {job["project"] for job in workload["jobs"]} == set(fidelity_workloads.PROJECTS)


def test_direct_workload_deletes_some_jobs_and_submits_as_they_come():
    """``direct`` asks for submission as the jobs come, deletes a few of them, and holds an array or two."""
    for seed in (5, 22):
        workload = fidelity_workloads.generate("direct", seed)
        pbs_record.check_workload(workload, "direct")
        assert workload["submission"] == pbs_record.DIRECT
        assert len([job for job in workload["jobs"] if job.get("delete_after")]) == 4
        assert len([job for job in workload["jobs"] if job.get("array")]) == 2


def test_qsub_of_an_array_after_an_earlier_job():
    """An ``array`` range is qsub's -J; a ``depend`` names the earlier job by the id PBS gave it."""
    job = {"name": "j005", "queue": "workq", "select": "1:ncpus=1", "place": "pack", "walltime": 40, "runtime": 12,
           "array": "1-3", "depend": "afterok:j002"}
    assert pbs_record.qsub_arguments(job, {"j002": "14.pbshost"})[-7:] == [
        "-J", "1-3", "-W", "depend=afterok:14.pbshost", "--", "/bin/sleep", "12"]


def test_jobs_with_the_same_offset_released_together():
    """Release groups come by offset, jobs of one offset in workload order."""
    jobs = [{"name": "a", "offset": 2}, {"name": "b", "offset": 0}, {"name": "c", "offset": 2.0}]
    assert pbs_record.release_groups(jobs) == [(0.0, ["b"]), (2.0, ["a", "c"])]


# --- the accounting lines kept ------------------------------------------------------------------------

ACCOUNTING = [
    "11/26/2026 10:46:52;Q;12.pbshost;user=fid_ana queue=workq",
    "11/26/2026 10:46:52;Q;112.pbshost;user=pbsuser queue=workq",
    "11/26/2026 10:46:53;a;12.pbshost;Resource_List.soft_walltime=00:00:03",
    "11/26/2026 10:46:55;S;12.pbshost;user=fid_ana start=1795690015",
    "11/26/2026 10:46:56;L;license;floating license hour:0 day:0 avail:0 unavail:0",
    "11/26/2026 10:47:01;E;12.pbshost;user=fid_ana end=1795690021",
    "11/26/2026 10:47:02;E;112.pbshost;user=pbsuser end=1795690022",
]


def test_accounting_keeps_only_the_recordings_jobs_every_record_unchanged():
    """Every record of the recording's jobs is kept as it was; other jobs' and other lines are not."""
    assert pbs_record.recording_lines(ACCOUNTING, ["12.pbshost"]) == [ACCOUNTING[0], ACCOUNTING[2], ACCOUNTING[3],
                                                                      ACCOUNTING[5]]


def test_an_arrays_subjob_lines_are_kept_with_it():
    """A subjob's records (``7[2].pbshost``) belong to its array (``7[].pbshost``); another array's do not."""
    lines = ["11/26/2026 10:46:52;Q;7[].pbshost;queue=workq", "11/26/2026 10:46:55;S;7[2].pbshost;start=1",
             "11/26/2026 10:46:55;S;17[2].pbshost;start=1", "11/26/2026 10:47:01;E;7[].pbshost;end=2"]
    assert pbs_record.recording_lines(lines, ["7[].pbshost"]) == [lines[0], lines[1], lines[3]]
    assert pbs_record.submitted_id("7[12].pbshost") == "7[].pbshost" == pbs_record.submitted_id("7[].pbshost")


def test_ended_jobs_are_those_with_an_e_record():
    """A job counts as ended at its E record, not at S."""
    assert pbs_record.ended_jobs(ACCOUNTING[:5], ["12.pbshost", "112.pbshost"]) == set()
    assert pbs_record.ended_jobs(ACCOUNTING, ["12.pbshost"]) == {"12.pbshost"}


def test_accrual_lines_are_the_recordings_jobs_accrue_type_changes():
    """Of the server's log, the lines that change the accrue type of the recording's jobs (and their subjobs)."""
    change = "11/27/2026 03:31:{};0400;Server@pbshost;Job;{};Accrue type has changed to eligible_time, previous " \
             "accrue type was ineligible_time for 5 secs, total eligible_time=00:00:00"
    lines = [change.format(10, "12.pbshost"), change.format(11, "112.pbshost"),
             "11/27/2026 03:31:12;0008;Server@pbshost;Job;12.pbshost;Job Modified at request of Scheduler@pbshost",
             change.format(13, "7[2].pbshost")]

    class Log:
        def lines(self):
            return {"20261127": lines}
    assert pbs_record.accrual_lines(Log(), ["12.pbshost", "7[].pbshost"]) == [lines[0], lines[3]]


def test_server_event_lines_are_the_recordings_ends_releases_and_runs_with_the_cycle_requests():
    """Of the server's log (as a real 23.06.06 server writes it), the lines giving the order within a second of the
    recording's jobs' ends, releases and runs, and every request for a cycle; other jobs and other events are left."""
    day = "11/28/2026 16:20:54;"
    lines = [day + "0080;Server@pbshost;Job;12.pbshost;Obit received momhop:1 serverhop:1 state:R substate:42",
             day + "0080;Server@pbshost;Job;8.pbshost;Obit received momhop:1 serverhop:1 state:R substate:42",
             day + "0010;Server@pbshost;Job;12.pbshost;Exit_status=0 resources_used.cpupercent=0",
             day + "0100;Server@pbshost;Job;12.pbshost;dequeuing from workq, state E",
             day + "0040;Server@pbshost;Svr;pbshost;Scheduler sent command 2",
             day + "0008;Server@pbshost;Job;20.pbshost;Job Run at request of Scheduler@pbshost on exec_vnode "
                   "(pbshost[0]:ncpus=1)",
             day + "0008;Server@pbshost;Job;7[3].pbshost;Holds u released at request of root@pbshost",
             day + "0c06;Server@pbshost;TPP;Server@pbshost(Thread 0);tpp_mbox_read;Unable to read from msg box"]

    class Log:
        def lines(self):
            return {"20261128": lines}
    assert pbs_record.server_event_lines(Log(), ["12.pbshost", "20.pbshost", "7[].pbshost"]) == \
        [lines[0], lines[2], lines[4], lines[5], lines[6]]


# --- the fairshare usage file ---------------------------------------------------------------------------

# --- workloads -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(fidelity_workloads.CONFIGURATIONS))
def test_workload_is_deterministic(name):
    """The same seed gives the same workload, another seed other jobs."""
    first, again = fidelity_workloads.generate(name, 22), fidelity_workloads.generate(name, 22)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert first["jobs"] != fidelity_workloads.generate(name, 23)["jobs"]


@pytest.mark.parametrize("name", sorted(fidelity_workloads.CONFIGURATIONS))
def test_workload_is_valid_and_extends_soft_walltimes(name):
    """Valid for the harness; 50-100 jobs of several users; soft walltimes both under and over runtimes."""
    workload = fidelity_workloads.generate(name, 22)
    pbs_record.check_workload(workload, name)
    jobs = workload["jobs"]
    assert 50 <= len(jobs) <= 100 and len({job["user"] for job in jobs}) >= 3
    assert [job["offset"] for job in jobs] == sorted(job["offset"] for job in jobs)
    softs = [(job["soft_walltime"], job["runtime"]) for job in jobs if job["soft_walltime"] is not None]
    assert any(soft < runtime for soft, runtime in softs) and any(soft > runtime for soft, runtime in softs)


def test_every_job_fits_its_configuration():
    """No job asks for more ncpus than a user may hold (limits) or than the vnodes have (the others)."""
    for name in fidelity_workloads.CONFIGURATIONS:
        workload = fidelity_workloads.generate(name, 22)
        ceiling = 6 if name == "limits" else sum(vnode["ncpus"] for vnode in workload["vnodes"])
        assert max(fidelity_workloads.total_ncpus(job["select"]) for job in workload["jobs"]) <= ceiling, name


def test_jobs_under_the_threshold_are_the_ones_that_never_run():
    """In ``resources`` a job never runs exactly when its formula value is at or below the threshold the
    workload sets; some do, most do not."""
    for seed in (1, 22):
        workload = fidelity_workloads.generate("resources", seed)
        threshold = workload["sched"]["job_sort_formula_threshold"]
        never = [job for job in workload["jobs"] if job.get("never_runs")]
        assert never and len(never) < len(workload["jobs"]) // 5
        assert all((fidelity_workloads.resources_value(job) <= threshold) == bool(job.get("never_runs"))
                   for job in workload["jobs"])


def test_round_robin_queues_have_equal_priorities():
    """``roundrobin``'s queues share one priority and every job is in one of them."""
    workload = fidelity_workloads.generate("roundrobin", 22)
    assert len({queue["priority"] for queue in workload["queues"].values()}) == 1
    assert {job["queue"] for job in workload["jobs"]} == set(workload["queues"])


def test_total_amount_of_a_resource_in_gb():
    """Chunk counts multiply each chunk's amount; mem counts in gb."""
    assert fidelity_workloads.total_amount("2:ncpus=1:mem=3gb+1:ncpus=4:mem=2gb", "mem") == 8


def test_total_ncpus_of_a_multi_chunk_select():
    """Chunk counts multiply each chunk's ncpus."""
    assert fidelity_workloads.total_ncpus("2:ncpus=2+1:ncpus=1:mem=6gb") == 5


@pytest.mark.parametrize("drop, changes, field", [
    ("runtime", {}, "missing runtime"), (None, {"runtime": 50}, "runtime must be"),
    (None, {"soft_walltime": 0}, "soft_walltime must be"), (None, {"user": "eve"}, "user eve"),
    (None, {"array": "3-1"}, "array must be"), (None, {"array": 4}, "array must be"),
    (None, {"depend": "afterok:j9"}, "depend must be"), (None, {"depend": "before:j0"}, "depend must be"),
    (None, {"never_runs": "yes"}, "never_runs must be"), (None, {"delete_after": 0}, "delete_after must be"),
    (None, {"delete_after": "1"}, "delete_after must be")])
def test_bad_workload_named_by_job_and_field(drop, changes, field):
    """A job missing a field, of an unknown user or with impossible times is refused, naming job and field."""
    job = {"name": "j1", "user": "fid_ana", "queue": "workq", "select": "1:ncpus=1", "place": "pack",
           "walltime": 30, "runtime": 5, "offset": 0, **changes}
    job.pop(drop, None)
    with pytest.raises(pbs_record.WorkloadError, match="w.json: job 0: " + field):
        pbs_record.check_workload({"users": {"fid_ana": "fid_red"}, "jobs": [job]}, "w.json")


def test_unknown_submission_is_refused():
    """A workload's ``submission`` is ``held`` or ``direct``."""
    job = {"name": "j1", "user": "fid_ana", "queue": "workq", "select": "1:ncpus=1", "place": "pack",
           "walltime": 30, "runtime": 5, "offset": 0}
    with pytest.raises(pbs_record.WorkloadError, match="w.json: submission must be held or direct"):
        pbs_record.check_workload({"users": {"fid_ana": "fid_red"}, "jobs": [job], "submission": "now"}, "w.json")


def test_unreadable_workload_exits_2_with_one_line(tmp_path, capsys):
    """A workload that is not JSON: exit status 2 and one line naming the file, before any PBS command."""
    path = tmp_path / "w.json"
    path.write_text("{not json")
    assert pbs_record.main([str(path), str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and str(path) in error


def test_a_recordings_summary_gives_its_workload(tmp_path):
    """A recording's recording.json in place of a workload file: the workload it recorded, to record it again."""
    folder = os.path.join(RECORDINGS, "strict-depth3")
    with open(os.path.join(folder, "recording.json"), encoding="utf-8") as source:
        recorded = json.load(source)["workload"]
    assert pbs_record.load_workload(os.path.join(folder, "recording.json")) == recorded
    path = tmp_path / "w.json"
    path.write_text(json.dumps(recorded))
    assert pbs_record.load_workload(str(path)) == recorded


# --- the recordings kept ------------------------------------------------------------------------------

KEPT = sorted(os.listdir(RECORDINGS)) if os.path.isdir(RECORDINGS) else []


@pytest.mark.parametrize("name", KEPT)
def test_kept_recording_is_complete(name):
    """Four site files, and Q, S and E records for every job and for no other job."""
    assert pbs_record.recording_problems(os.path.join(RECORDINGS, name)) == []


@pytest.mark.parametrize("name", KEPT)
def test_kept_recording_put_pbs_back(name):
    """The recording ended with the server as it was and no scheduler error logged."""
    with open(os.path.join(RECORDINGS, name, "recording.json"), encoding="utf-8") as source:
        summary = json.load(source)
    assert (summary["restore_failures"], summary["differences_after_restore"], summary["sched_log_errors"]) == (
        [], [], [])


# --- the totals over many recordings ---------------------------------------------------------------------


def test_totals_sort_recordings_by_fairshare_and_mom_polling():
    """A recording counts as without fairshare, with it, or with it and the MoM polling as PBS ships it."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.machine import site_model
    from replay.fidelity.records import read_records

    def kind(name):
        folder = os.path.join(RECORDINGS, name)
        accounting = read_records([os.path.join(folder, "accounting")], RejectPrinter(0))
        return fidelity_totals.kind_of(site_model(os.path.join(folder, "site"), accounting))
    assert kind("strict-depth3") == fidelity_totals.KINDS[0]
    assert kind("fairshare-2") == fidelity_totals.KINDS[1]
    assert kind("fairshare-mom-defaults") == fidelity_totals.KINDS[2]


def test_totals_count_equal_waits_as_within():
    """Waits within 5 % count; equal ones too, 0 s included, where a relative difference means nothing."""
    assert fidelity_totals.within(10.4, 10.0) and not fidelity_totals.within(10.6, 10.0)
    assert fidelity_totals.within(0.0, 0.0) and not fidelity_totals.within(1.0, 0.0)


def test_totals_of_one_recording_are_its_fidelity():
    """One recording's line holds what ``python -m replay fidelity`` reports for it; with a server.log, also what
    it reports given ``--server-log``, and with a sched.log, given ``--sched-log`` too."""
    line = fidelity_totals.check(os.path.join(RECORDINGS, "sortkey-seed5"))
    assert line[:11] == ("sortkey-seed5", fidelity_totals.KINDS[0], 52, 52, 60, 60, True, True, None, [], None)
    assert (len(line[11]), line[12]) == (60, "sortkey")
    assert line[11] == fidelity_totals.recording_waits(os.path.join(RECORDINGS, "sortkey-seed5"))[2]
    assert fidelity_totals.check(os.path.join(RECORDINGS, "vnodes-light-seed10"))[5:11] == (
        60, True, True, None, [], (60, 60, True, True, None, (58, 58, fidelity_totals.KINDS[0]), (58, 58)))


def test_totals_take_a_configurations_recordings_together(tmp_path):
    """A recording is of its workload's configuration, seed and submission suffixes dropped (a folder without
    recording.json: its own name); the jobs of one configuration's recordings are taken together."""
    assert [fidelity_totals.configuration_of(os.path.join(RECORDINGS, name)) for name in (
        "sortkey-seed5", "sortkey-queuejob", "vnodes-light-seed7-direct", "fairshare-2", "strict-depth3-again")] == [
        "sortkey", "sortkey", "vnodes-light", "fairshare", "strict-depth3"]
    assert fidelity_totals.configuration_of(str(tmp_path / "mine")) == "mine"
    (one, other) = fidelity_totals.pooled([("b", 3, [(10, 12), (0, 0)]), ("a", 1, [(4, 4)]), ("b", 2, [(2, 2)])])
    assert one == fidelity_totals.Pooled("a", 1, 1, 1, 4.0, 4.0, 4.0, 4.0)
    assert other == fidelity_totals.Pooled("b", 2, 3, 5, 4.0, 14 / 3, 2.0, 2.0)


def test_totals_count_how_near_the_fairshare_disagreements_were(capsys):
    """Each fairshare disagreement between two entities gives how far apart their usage per tree share was where
    they part (fairshare-seed8: two 0.2 % apart, four 7.1 %); the totals count them under 5, 10 and 25 %, a side
    without a share under none."""
    partings = fidelity_totals.check(os.path.join(RECORDINGS, "fairshare-seed8"))[9]
    assert sorted(round(apart, 3) for apart in partings) == [0.002, 0.002, 0.071, 0.071, 0.071, 0.071]
    fidelity_totals.print_partings([0.02, 0.08, 0.3, None], 6)
    assert capsys.readouterr().out == ("fairshare disagreements between two entities: 4 of 6; their usage per tree "
                                       "share where they part, apart by at most 5 %: 1, 10 %: 2, 25 %: 2\n")


def test_totals_set_the_replayed_usage_beside_the_servers_file():
    """With fairshare and the server's usage file kept, each entity's usage replayed to the end of the log is set
    beside the file's; then summed over entities, and per entity, signed, above and below."""
    usage = fidelity_totals.check(os.path.join(RECORDINGS, "fairshare-long-default-poll-seed3"))[8]
    assert usage == {"fid_ana": (397.5, 382.0), "fid_ben": (170.25, 172.75), "fid_cai": (271.25, 271.5),
                     "fid_dan": (25.25, 25.25)}


def test_totals_print_the_usage_per_entity(capsys):
    """Off: 11 of 200 and 21 of 200; b is 0.5 % above, then 0.3 % below: neither above nor below."""
    fidelity_totals.print_usage([("one", {"a": (110.5, 100.0), "b": (100.5, 100.0)}),
                                 ("two", {"a": (79.3, 100.0), "b": (99.7, 100.0)})])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("replayed fairshare usage against the server's usage file (2 recordings): 8.0 % off on "
                        "average, 10.5 % at most (two)")
    assert lines[2].split() == "a -5.1 % on average; above in 1, below in 1, of 2 recordings".split()
    assert lines[3].split() == "b +0.1 % on average; above in 0, below in 0, of 2 recordings".split()


def test_measurements_are_stime_plus_each_new_walltime():
    """A running job's stime plus each new resources_used.walltime qstat shows is a measurement; a job's first
    report (0 s), repeats, and jobs not running are left out."""
    start = 1795822327
    stime = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(start))

    def qstat(**walltimes):
        return {"Jobs": {name + ".pbshost": {"job_state": state, "stime": stime,
                                             "resources_used": {"walltime": walltime}}
                         for name, (state, walltime) in walltimes.items()}}

    measurements = pbs_record.Measurements()
    for snapshot in (qstat(a=("R", "00:00:00")), qstat(a=("R", "00:00:10")), qstat(a=("R", "00:00:10")),
                     qstat(a=("R", "00:00:26"), b=("E", "00:00:30")), {}):
        measurements.add(snapshot)
    assert sorted(measurements.instants) == [start + 10, start + 26]
