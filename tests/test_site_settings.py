"""A site folder read into a Site: the policy, the vnodes, every setting classified, the notes."""

import glob
import json
import os
import shutil

import pytest

from replay.pbs.policy import FairsharePolicy, Limit, QueuePolicy, SchedulingPolicy, ShareGroup, SortKey
from replay.shared.errors import SiteError
from replay.site.limits import is_run_limit, run_limits
from replay.site.sched_config import PBS_SETTINGS, read_sched_config
from replay.site.settings import (
    CATEGORIES,
    MODELLED,
    NO_EFFECT,
    NOT_MODELLED,
    classify,
    is_listed,
    read_site,
)

HERE = os.path.dirname(__file__)
DATA = os.path.join(HERE, "data", "site")
RECORDINGS = sorted(glob.glob(os.path.join(HERE, "data", "fidelity", "*", "site")))

# Every attribute of OpenPBS 23.06's server, queue, scheduler and node objects (src/lib/Libattr/master_*.xml).
PBS_ATTRIBUTES = {
    "server": "server_state server_host scheduling max_running max_queued max_queued_res max_run max_run_res "
              "max_run_soft max_run_res_soft max_user_run max_group_run max_user_res max_group_res "
              "max_user_run_soft max_group_run_soft max_user_res_soft max_group_res_soft pnames total_jobs "
              "state_count acl_host_enable acl_hosts acl_host_moms_enable acl_resv_host_enable acl_resv_hosts "
              "acl_resv_group_enable acl_resv_groups acl_user_enable acl_users acl_resv_user_enable acl_resv_users "
              "acl_roots managers operators default_queue log_events mailer mail_from query_other_jobs "
              "resources_available resources_default default_chunk resources_max resources_assigned resources_cost "
              "system_cost scheduler_iteration comment default_node node_pack flatuid resv_enable node_fail_requeue "
              "max_array_size require_cred_enable require_cred node_group_enable node_group_key "
              "default_qdel_arguments default_qsub_arguments rpp_retry rpp_highwater pbs_license_info "
              "pbs_license_min pbs_license_max pbs_license_linger_time license_count pbs_version job_sort_formula "
              "eligible_time_enable reserve_retry_time reserve_retry_init job_history_enable job_history_duration "
              "provision_enable max_concurrent_provision provision_timeout resv_post_processing_time backfill_depth "
              "job_requeue_timeout python_restart_max_hooks python_restart_max_objects python_restart_min_interval "
              "queued_jobs_threshold queued_jobs_threshold_res jobscript_max_size "
              "restrict_res_to_release_on_suspend power_provisioning show_hidden_attribs sync_mom_hookfiles_timeout "
              "rpp_max_pkt_check max_job_sequence_id has_runjob_hook acl_krb_realm_enable acl_krb_realms "
              "acl_krb_submit_realms cred_renew_enable cred_renew_tool cred_renew_period cred_renew_cache_period",
    "queue": "queue_type priority max_queuable total_jobs state_count max_running max_queued max_queued_res "
             "acl_host_enable acl_hosts acl_user_enable acl_users from_route_only resources_max resources_min "
             "resources_default require_cred_enable require_cred max_array_size comment acl_group_enable acl_groups "
             "checkpoint_min rendezvous_retry reserved_expedite reserved_sync default_chunk resources_available "
             "resources_assigned kill_delay max_user_run max_group_run max_run max_run_res max_run_soft "
             "max_run_res_soft hasnodes max_user_res max_group_res max_user_run_soft max_group_run_soft "
             "max_user_res_soft max_group_res_soft node_group_key backfill_depth route_destinations alt_router "
             "route_held_jobs route_waiting_jobs route_retry_time route_lifetime enabled started "
             "queued_jobs_threshold queued_jobs_threshold_res partition",
    "sched": "sched_host sched_cycle_length do_not_span_psets only_explicit_psets sched_preempt_enforce_resumption "
             "preempt_targets_enable job_sort_formula_threshold throughput_mode job_run_wait opt_backfill_fuzzy "
             "partition sched_priv sched_log scheduling scheduler_iteration sched_user comment state "
             "preempt_queue_prio preempt_prio preempt_order preempt_sort log_events job_sort_formula "
             "server_dyn_res_alarm attr_update_period",
    "node": "mom port pbs_version ntype state pcpus priority jobs max_running max_user_run max_group_run no_tasks "
            "pnames resv resources_available resources_assigned queue comment resv_enable no_multinode_jobs sharing "
            "provision_enable current_aoe in_multivnode_host maintenance_jobs license license_info topology_info "
            "vnode_pool power_provisioning current_eoe partition poweroff_eligible last_state_change_time "
            "last_used_time",
}


def listed(setting):
    """Whether the table names a setting found in a site folder."""
    words = setting.name.split()
    if setting.file.startswith(("qmgr", "pbsnodes")):
        return is_listed(words[0], words[-1])
    return is_listed(setting.file, words[0])


def site_copy(tmp_path, folder, **replace):
    """A copy of a test site folder with some files replaced (None removes one)."""
    target = tmp_path / folder
    shutil.copytree(os.path.join(DATA, folder), str(target))
    for name, text in replace.items():
        path = target / name.replace("_", ".") if name.endswith("_txt") or name.endswith("_json") else target / name
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
    return str(target)


@pytest.mark.parametrize("source", sorted(PBS_ATTRIBUTES))
def test_every_pbs_attribute_has_one_category(source):
    """Each attribute PBS 23.06 defines for servers, queues, schedulers and vnodes is in the table, once."""
    listed = [name for names in CATEGORIES[source].values() for name in names.split()]
    assert sorted(set(PBS_ATTRIBUTES[source].split()) - set(listed)) == []
    assert len(listed) == len(set(listed))


def test_every_sched_config_name_has_one_category():
    """Each name PBS's sched_config parser accepts is in the table, once."""
    listed = [name for names in CATEGORIES["sched_config"].values() for name in names.split()]
    assert sorted(set(PBS_SETTINGS) - set(listed)) == [] and len(listed) == len(set(listed))


def test_every_mom_directive_has_one_category():
    """Each $ directive OpenPBS 23.06's MoM reads from its configuration is in the table, once; an unknown
    one is reported as not modelled, a static resource line has no effect."""
    directives = ("action alien_attach alien_kill alps_client alps_confirm_empty_timeout alps_release_wait_time "
                  "alps_release_jitter alps_release_timeout vnode_per_numa_node alps_confirm_switch_timeout "
                  "attach_allow checkpoint_path clienthost configversion cputmult enforce ideal_load jobdir_root "
                  "kbd_idle logevent max_check_poll max_load max_poll_downtime min_check_poll momname nrun_factor "
                  "port prologalarm sister_join_job_alarm job_launch_delay restart_background restart_transmogrify "
                  "restrict_user restrict_user_exceptions restrict_user_maxsysid restricted "
                  "gen_nodefile_on_sister_mom spool_size suspendsig tmpdir vnodedef_additive usecp wallmult "
                  "reject_root_scripts report_hook_checksums").split()
    listed = [name for names in CATEGORIES["mom_config"].values() for name in names.split()]
    assert sorted(listed) == sorted("$" + name for name in directives)
    assert classify("mom_config", "$not_a_directive", "1") == NOT_MODELLED
    assert classify("mom_config", "scratch", "100gb") == NO_EFFECT


def test_neutral_site_is_pbs_as_shipped():
    """The real neutral server: PBS's shipped policy with its queue workq, its vnode, nothing not modelled."""
    site = read_site(os.path.join(DATA, "neutral"))
    assert site.policy == SchedulingPolicy(queues=(QueuePolicy("workq"),))
    assert [(vnode.name, vnode.amount("ncpus")) for vnode in site.vnodes] == [("pbshost", 2)]
    assert site.scheduler_iteration_s == 600
    assert site.notes() == []


@pytest.mark.parametrize("folder", ["neutral", "configured", "old-limits"])
def test_every_setting_found_is_listed_and_classified(folder):
    """Every setting of the real captures is named in the table and has one of the three categories."""
    site = read_site(os.path.join(DATA, folder))
    assert site.settings
    for setting in site.settings:
        assert setting.category in (MODELLED, NO_EFFECT, NOT_MODELLED)
        assert listed(setting), setting


def test_configured_site_policy():
    """Queues, limits, formula and the scheduler's attributes of the configured capture, with its sched_config."""
    policy = read_site(os.path.join(DATA, "configured")).policy
    assert [queue.name for queue in policy.queues] == ["workq", "express", "long"]
    assert policy.queue("express") == QueuePolicy("express", 200, 2, True, True, (
        Limit("max_run", "o", "PBS_ALL", 10), Limit("max_run", "u", "PBS_GENERIC", 2), Limit("max_run", "u", "ana", 4),
        Limit("max_run_res.ncpus", "o", "PBS_ALL", 8)))
    assert policy.queue("long").started is False
    assert policy.server_limits == (Limit("max_run", "g", "grp", 4), Limit("max_run", "p", "proj", 2),
                                    Limit("max_run", "u", "PBS_GENERIC", 3),
                                    Limit("max_run_res.mem", "u", "PBS_GENERIC", 10 * 1024 ** 2))
    assert (policy.backfill_depth, policy.job_sort_formula, policy.eligible_time_enable) == (
        3, "ncpus * 2 + walltime / 60", True)
    assert (policy.backfill_fuzzy_s, policy.scheduler_iteration_s, policy.job_sort_formula_threshold) == (600, 300, 1)
    assert (policy.strict_ordering, policy.by_queue) == (True, False)
    assert policy.node_sort_key == (SortKey("sort_priority", True), SortKey("ncpus", True, "unused"))


def test_configured_fairshare():
    """fair_share on: the tree of resource_group and sched_config's fairshare settings."""
    fairshare = read_site(os.path.join(DATA, "configured")).policy.fairshare
    assert fairshare == FairsharePolicy("euser", "ncpus*walltime", 12 * 3600, 0.7, (
        ShareGroup("physics", 50, "root", 60), ShareGroup("chem", 51, "root", 40), ShareGroup("ana", 60, "physics", 10),
        ShareGroup("bob", 61, "physics", 30), ShareGroup("carol", 62, "chem", 1)), 10, True)


def test_configured_notes():
    """Notes list what is not modelled once each, the routing queue and the prime-time value."""
    notes = read_site(os.path.join(DATA, "configured")).notes()
    assert "not modelled: sched default preempt_order (qmgr.txt line 102)" in notes
    assert "not modelled: preemptive_sched (sched_config line 23)" in notes
    assert any(note.startswith("queue entry is a routing queue (to express,long)") for note in notes)
    assert any("by_queue has a prime-time value" in note for note in notes)
    assert len(notes) == len(set(notes))


def test_old_style_limits_become_new_ones():
    """max_running, max_user_run, max_user_res.ncpus and the queue's old limits map onto max_run entries."""
    policy = read_site(os.path.join(DATA, "old-limits")).policy
    assert policy.server_limits == (Limit("max_run", "o", "PBS_ALL", 20), Limit("max_run", "u", "PBS_GENERIC", 4),
                                    Limit("max_run_res.ncpus", "u", "PBS_GENERIC", 6))
    assert set(policy.queue("long").limits) == {
        Limit("max_run", "o", "PBS_ALL", 6), Limit("max_run", "u", "PBS_GENERIC", 3),
        Limit("max_run", "g", "PBS_GENERIC", 5), Limit("max_run_res.mem", "u", "PBS_GENERIC", 8 * 1024 ** 2),
        Limit("max_run_res.ncpus", "g", "PBS_GENERIC", 16)}


def test_soft_limit_is_not_modelled():
    """A soft limit is named in the notes with its file and line."""
    assert read_site(os.path.join(DATA, "old-limits")).notes() == [
        "not modelled: server max_user_run_soft (qmgr.txt line 31)"]


def test_empty_folder_is_pbs_as_installed(tmp_path):
    """No file at all: PBS's installed sched_config, no queue, no vnode, no setting."""
    site = read_site(str(tmp_path))
    assert site.policy == SchedulingPolicy() and site.vnodes == () and site.settings == ()


def test_missing_folder_is_a_site_error(tmp_path):
    """A path that is not a folder is one SiteError."""
    with pytest.raises(SiteError, match="not a folder"):
        read_site(str(tmp_path / "nowhere"))


@pytest.mark.parametrize("name", ["sched_config", "usage"])
def test_a_file_that_cannot_be_opened_is_a_site_error_not_a_missing_one(tmp_path, name):
    """Only a file that is not there takes PBS's defaults: one there that cannot be opened (here a symbolic link
    loop; for a job user, a folder closed to it) is a SiteError naming it."""
    os.symlink(name, str(tmp_path / name))
    with pytest.raises(SiteError, match="{}: cannot be read".format(name)):
        read_site(str(tmp_path))


def test_sched_config_without_a_setting_takes_pbs_built_in_default(tmp_path):
    """A sched_config that does not mention by_queue turns it off, as PBS does."""
    folder = site_copy(tmp_path, "neutral", sched_config="strict_ordering: true ALL\n")
    policy = read_site(folder).policy
    assert (policy.by_queue, policy.strict_ordering, policy.resources_checked, policy.node_sort_key) == (
        False, True, (), ())


def test_sched_config_without_dedicated_prefix_stops_every_queue(tmp_path):
    """Without dedicated_prefix every queue is a dedicated-time queue, whose jobs PBS runs only then (seen on a
    real server: 'Not Running: Dedicated time conflict'): the queue is taken as not started, with a note."""
    site = read_site(site_copy(tmp_path, "neutral", sched_config="strict_ordering: true ALL\n"))
    assert site.policy.queue("workq").started is False
    assert site.notes() == ["queue workq: PBS runs its jobs only in dedicated time (sched_config sets no "
                            "dedicated_prefix, and an empty prefix begins every name); the replay has no such "
                            "time, so the queue is taken as not started"]


@pytest.mark.parametrize("queue, started, time", [
    ("dedq", False, "dedicated time (its name begins with dedicated_prefix 'ded')"),
    ("p_day", False, "prime time (its name begins with primetime_prefix 'p_')"),
    ("np_night", True, None), ("debug", True, None)])
def test_queues_named_for_a_time(tmp_path, queue, started, time):
    """With the installed prefixes, ded* and p_* queues run only in dedicated and prime time; np_* any time here."""
    text = "create queue {0}\nset queue {0} queue_type = Execution\nset queue {0} started = True\n".format(queue)
    site = read_site(site_copy(tmp_path, "neutral", qmgr_txt=text))
    assert site.policy.queue(queue).started is started
    assert [note for note in site.notes() if "only in" in note] == (
        ["queue {}: PBS runs its jobs only in {}; the replay has no such time, so the queue is taken as not "
         "started".format(queue, time)] if time else [])


def test_print_sched_in_its_own_file(tmp_path):
    """qmgr-sched.txt holds print sched: its attributes count, with that file's name in the settings."""
    folder = site_copy(tmp_path, "neutral")
    with open(os.path.join(folder, "qmgr-sched.txt"), "w") as handle:
        handle.write("create sched default\nset sched opt_backfill_fuzzy = off\nset sched scheduler_iteration = 90\n")
    site = read_site(folder)
    assert (site.policy.backfill_fuzzy_s, site.scheduler_iteration_s) == (0, 90)
    assert ("qmgr-sched.txt", 2, "sched default opt_backfill_fuzzy", MODELLED) in [
        (s.file, s.line, s.name, s.category) for s in site.settings]


@pytest.mark.parametrize("value, seconds", [("off", 0), ("LOW", 60), ("med", 600), ("Medium", 600),
                                            ("high", 3600), ("120", 120)])
def test_opt_backfill_fuzzy_spellings(tmp_path, value, seconds):
    """opt_backfill_fuzzy as PBS's scheduler reads it: names in any case, or seconds."""
    folder = site_copy(tmp_path, "neutral")
    with open(os.path.join(folder, "qmgr-sched.txt"), "w") as handle:
        handle.write("set sched opt_backfill_fuzzy = {}\n".format(value))
    assert read_site(folder).policy.backfill_fuzzy_s == seconds


def test_backfill_false_turns_backfilling_off(tmp_path):
    """sched_config's obsolete backfill: false is a backfill_depth of 0."""
    folder = site_copy(tmp_path, "neutral", sched_config="strict_ordering: true\nbackfill: false\n")
    assert read_site(folder).policy.backfill_depth == 0


def test_a_second_scheduler_is_noted(tmp_path):
    """A scheduler other than the default one is noted as not modelled; its settings do not count."""
    folder = site_copy(tmp_path, "neutral")
    with open(os.path.join(folder, "qmgr-sched.txt"), "w") as handle:
        handle.write("create sched other\nset sched other opt_backfill_fuzzy = off\n")
    site = read_site(folder)
    assert site.policy.backfill_fuzzy_s == 60
    assert "scheduler other is not modelled: only the default scheduler's settings are used" in site.notes()
    assert "not modelled: sched other opt_backfill_fuzzy (qmgr-sched.txt line 2)" in site.notes()


def test_unavailable_vnodes_are_noted(tmp_path):
    """A vnode down when pbsnodes ran is left out and said in the notes."""
    with open(os.path.join(DATA, "neutral", "pbsnodes.json")) as handle:
        document = json.load(handle)
    document["nodes"]["pbshost"]["state"] = "down,offline"
    folder = site_copy(tmp_path, "neutral", pbsnodes_json=json.dumps(document))
    site = read_site(folder)
    assert site.vnodes == ()
    assert site.notes() == ["vnode pbshost left out: down,offline in pbsnodes.json"]


def test_vnode_attributes_not_modelled_are_noted_once(tmp_path):
    """A not-modelled attribute on many vnodes is one note, with how many more."""
    nodes = {"n{}".format(i): {"state": "free", "max_running": 2, "resources_available": {"ncpus": 1}}
             for i in range(3)}
    folder = site_copy(tmp_path, "neutral", pbsnodes_json=json.dumps({"nodes": nodes}, indent=1))
    assert read_site(folder).notes() == ["not modelled: node max_running (pbsnodes.json line 3, and 2 more)"]


@pytest.mark.parametrize("text, message", [
    ("create queue q\nset queue q queue_type = Execution\nset queue q Priority = high\n",
     "qmgr.txt:3: queue q priority: 'high' is not a whole number"),
    ("set server backfill_depth = deep\n", "qmgr.txt:1: server backfill_depth: 'deep' is not a whole number"),
    ("create queue q\nset queue q queue_type = Execution\nset queue q started = maybe\n",
     "qmgr.txt:3: queue q started: 'maybe' is not a boolean"),
    ("set server max_run = [u:PBS_GENERIC=x]\n", "qmgr.txt:1: server max_run: 'x' is not a number of jobs"),
    ("create queue q\nset queue q queue_type = Bucket\n", "qmgr.txt:2: queue q queue_type"),
])
def test_malformed_values_name_file_line_and_setting(tmp_path, text, message):
    """A value PBS would refuse gives one SiteError naming the file, the line and the setting."""
    folder = site_copy(tmp_path, "neutral", qmgr_txt=text)
    with pytest.raises(SiteError, match=message) as raised:
        read_site(folder)
    assert str(raised.value).startswith(os.path.join(folder, "qmgr.txt:"))


def test_vnodes_from_print_node_without_pbsnodes(tmp_path):
    """Without pbsnodes.json, the vnodes come from print node's lines in qmgr.txt, and their attributes count."""
    with open(os.path.join(DATA, "neutral", "qmgr.txt")) as handle:
        text = handle.read() + ("create node n1 Mom=h1\nset node n1 resources_available.ncpus = 4\n"
                                "set node n1 max_running = 2\n")
    site = read_site(site_copy(tmp_path, "neutral", qmgr_txt=text, pbsnodes_json=None))
    assert [(vnode.name, vnode.host, vnode.amount("ncpus")) for vnode in site.vnodes] == [("n1", "h1", 4)]
    assert site.notes() == ["not modelled: node max_running (qmgr.txt line 35)"]


@pytest.mark.parametrize("source, name, category", [
    ("server", "max_run", MODELLED), ("server", "max_run_res.ncpus", MODELLED), ("server", "backfill_depth", MODELLED),
    ("server", "job_sort_formula", MODELLED), ("queue", "priority", MODELLED), ("queue", "started", MODELLED),
    ("sched", "opt_backfill_fuzzy", MODELLED), ("sched_config", "strict_ordering", MODELLED),
    ("sched_config", "job_sort_key", MODELLED), ("node", "resources_available.ncpus", MODELLED),
    ("server", "acl_users", NO_EFFECT), ("server", "resources_default.walltime", NO_EFFECT),
    ("server", "max_queued", NO_EFFECT), ("queue", "enabled", NO_EFFECT),
    ("queue", "resources_max.walltime", NO_EFFECT),
    ("sched_config", "help_starving_jobs", NO_EFFECT), ("sched", "sched_log", NO_EFFECT),
    ("server", "max_run_soft", NOT_MODELLED), ("queue", "resources_available.ncpus", NOT_MODELLED),
    ("server", "node_group_key", NOT_MODELLED), ("sched_config", "peer_queue", NOT_MODELLED),
    ("node", "no_multinode_jobs", NOT_MODELLED)])
def test_categories_of_telling_settings(source, name, category):
    """What the model uses, what cannot matter to logged jobs, what the model ignores: a few of each."""
    assert classify(source, name, "x") == category


@pytest.mark.parametrize("source, name, value, category", [
    ("server", "node_group_enable", "False", NO_EFFECT),
    ("server", "node_group_enable", "True", NOT_MODELLED),
    ("sched_config", "strict_fifo", "false", NO_EFFECT),
    ("sched_config", "smp_cluster_dist", "round_robin", NOT_MODELLED),
    ("sched_config", "no_such_setting", "1", NO_EFFECT),
    ("sched_config", "max_job_check", "ALL_JOBS", NO_EFFECT),
    ("sched_config", "fairshare_entity", "egroup", NO_EFFECT),
    ("sched_config", "preemptive_sched", "true", NO_EFFECT),
    ("hook", "event", "queuejob", NOT_MODELLED),
    ("hook", "event", "False", NO_EFFECT),
    ("server", "scheduling", "True", NO_EFFECT),
    ("sched", "scheduling", "False", NOT_MODELLED),
    ("server", "some_future_attribute", "1", NOT_MODELLED),
    ("resource", "flag", "long hn", MODELLED),
    ("resource", "flag", "float fh", MODELLED),
    ("resource", "flag", "size nh", MODELLED),
    ("resource", "flag", "string h", MODELLED),
    ("resource", "flag", "boolean h", MODELLED),
    ("resource", "flag", "long h", NOT_MODELLED),
    ("resource", "flag", "string_array h", NOT_MODELLED),
    ("resource", "flag", "long q", NOT_MODELLED),
    ("resource", "flag", "long nq", NOT_MODELLED),
])
def test_value_dependent_categories(source, name, value, category):
    """Switches off have no effect; fairshare and preemption settings count only when they can act; a custom
    resource's flag is modelled when the resource is consumed on vnodes, or matched there as a string or boolean."""
    assert classify(source, name, value) == category


@pytest.mark.parametrize("definition, noted", [
    ("set resource ngpus type = long\nset resource ngpus flag = hn\n", False),
    ("set resource ngpus flag = hn\n", False),
    ("set resource licences type = long\nset resource licences flag = q\n", True),
    ("set resource gpu_model type = string\nset resource gpu_model flag = h\n", False),
    ("set resource scratch_gb type = long\nset resource scratch_gb flag = h\n", True),
])
def test_custom_resource_flags_as_print_server_writes_them(tmp_path, definition, noted):
    """A GPU count consumed on the vnodes (``flag = hn``, as PBS's guide defines ``ngpus``) is modelled; a
    resource the model would treat otherwise than PBS is named once in the notes."""
    name = definition.split()[2]
    (tmp_path / "qmgr.txt").write_text("create resource {}\n{}".format(name, definition))
    notes = read_site(str(tmp_path)).notes()
    assert any("resource {} flag".format(name) in note for note in notes) == noted, notes


def _expected_limits(settings):
    """The run limits a workload's server or queue settings make, old-style attributes read as PBS reads them."""
    return sorted(limit for attribute, value in settings.items() if is_run_limit(attribute)
                  for limit in run_limits(attribute, str(value)))


@pytest.mark.skipif(not RECORDINGS, reason="no fidelity recording with a site folder yet")
@pytest.mark.parametrize("folder", RECORDINGS, ids=[path.split(os.sep)[-2] for path in RECORDINGS])
def test_recordings_site_folders_match_their_workloads(folder):
    """Each recording's real site folder: every setting listed, and the policy the workload configured."""
    with open(os.path.join(os.path.dirname(folder), "recording.json")) as handle:
        workload = json.load(handle)["workload"]
    site = read_site(folder)
    for setting in site.settings:
        assert listed(setting), setting
    server, sched_config, policy = workload["server"], workload["sched_config"], site.policy
    assert policy.strict_ordering is sched_config.get("strict_ordering", "false").lower().startswith("true")
    assert policy.backfill_depth == server.get("backfill_depth", 1)
    assert policy.job_sort_formula == server.get("job_sort_formula")
    assert sorted(policy.server_limits) == _expected_limits(server)
    assert (policy.fairshare is not None) is sched_config.get("fair_share", "false").lower().startswith("true")
    if policy.fairshare is not None:
        assert policy.fairshare.tree == tuple(ShareGroup(*group) for group in workload["resource_group"] or ())
        polls = workload.get("mom_config", {})
        if os.path.exists(os.path.join(folder, "mom_config")) and "$max_check_poll" in polls:
            assert (policy.fairshare.min_check_poll_s, policy.fairshare.max_check_poll_s) == (
                int(polls["$min_check_poll"]), int(polls["$max_check_poll"]))
        expected = read_sched_config("".join("{}: {}\n".format(name, value) for name, value in sched_config.items()
                                             if name.startswith(("fairshare_", "unknown_shares"))))
        assert policy.fairshare[:4] + policy.fairshare[5:6] == (
            expected.fairshare_entity, expected.fairshare_usage_res, expected.fairshare_decay_time_s,
            expected.fairshare_decay_factor, expected.unknown_shares)
    if "by_queue" in sched_config:
        assert policy.by_queue is sched_config["by_queue"].lower().startswith("true")
    for name, attributes in workload["queues"].items():
        assert policy.queue(name).priority == attributes.get("priority", 0)
        assert sorted(policy.queue(name).limits) == _expected_limits(attributes)
    keys = sched_config.get("job_sort_key", [])
    assert [(key.name, key.high_first) for key in policy.job_sort_key] == [
        (key.split()[0].strip('"'), key.split()[1].strip('"').lower() == "high") for key in keys]
    working = [vnode for vnode in site.vnodes if vnode.amount("ncpus") > 0]  # a natural vnode may hold none
    assert sorted(vnode.amount("ncpus") for vnode in working) == sorted(v["ncpus"] for v in workload["vnodes"])


def test_mom_config_and_usage_set_fairshare_timing(tmp_path):
    """mom_config's polling sets when usage is reported, the usage file's last decay the decay grid."""
    from test_site_usage import usage_file_bytes
    folder = site_copy(tmp_path, "configured", mom_config="$clienthost pbshost\n$max_check_poll 2\n"
                                                          "$min_check_poll 1\n$max_load 7.5\n")
    (tmp_path / "configured" / "usage").write_bytes(usage_file_bytes(1795702133, [("ana", 12.0)]))
    site = read_site(folder)
    fairshare = site.policy.fairshare
    assert (fairshare.min_check_poll_s, fairshare.max_check_poll_s, fairshare.decay_anchor) == (1, 2, 1795702133)
    assert "not modelled: $max_load (mom_config line 4)" in site.notes()
    assert [setting.category for setting in site.settings if setting.file == "mom_config"] == [
        NO_EFFECT, MODELLED, MODELLED, NOT_MODELLED]
    assert not [note for note in site.notes() if note.startswith("fairshare: no ")]


def test_without_mom_config_pbs_default_polling(tmp_path):
    """No mom_config and no usage file: PBS's default MoM polling, decays from the first cycle."""
    site = read_site(site_copy(tmp_path, "configured"))
    fairshare = site.policy.fairshare
    assert (fairshare.min_check_poll_s, fairshare.max_check_poll_s, fairshare.decay_anchor) == (10, 120, None)
    assert [note for note in site.notes() if note.startswith("fairshare: no ")] == [
        "fairshare: no mom_config: the MoMs measure their jobs as PBS ships them ($min_check_poll 10 s, "
        "$max_check_poll 120 s), and a running job's usage is charged when measured",
        "fairshare: no usage file: the usage decays are counted from the first cycle, not on the site's own "
        "decay times"]


def test_usage_file_not_pbs_names_the_file(tmp_path):
    """A usage file that is not PBS's is one error naming the folder's file."""
    folder = site_copy(tmp_path, "configured")
    (tmp_path / "configured" / "usage").write_bytes(b"usage,ana,12\n")
    with pytest.raises(SiteError, match=r"configured/usage: "):
        read_site(folder)


@pytest.mark.parametrize("limit", ["set server max_run = [u:PBS_GENERIC=2]",
                                   "set sched job_sort_formula_threshold = 10"])
def test_eligible_time_under_limits_is_modelled_not_named(tmp_path, limit):
    """Eligible time that stops while a per-user limit or the formula threshold holds a job back is modelled
    (replay.pbs.accrual): the report names nothing about it."""
    (tmp_path / "qmgr.txt").write_text("\n".join([
        "create queue workq", "set queue workq queue_type = Execution", "set queue workq started = True",
        "set server eligible_time_enable = True", 'set server job_sort_formula = "eligible_time + ncpus"',
        limit]) + "\n")
    assert not [note for note in read_site(str(tmp_path)).notes() if "eligible_time" in note]
