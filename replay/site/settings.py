"""A site's configuration folder read into a ``Site``, and every setting found in it classified.

The folder holds, each optional: ``qmgr.txt`` (``qmgr -c 'print server'``, possibly followed by ``qmgr -c
'print sched'``), ``qmgr-sched.txt`` (``qmgr -c 'print sched'``, where ``opt_backfill_fuzzy`` lives),
``sched_config`` (missing: the file PBS installs), ``resource_group`` and ``pbsnodes.json`` (``pbsnodes -av
-F json``; missing: the vnodes of qmgr's ``print node`` lines, if any), ``mom_config`` (a copy of the MoM's
``mom_priv/config``: how often it reports jobs' usage; missing: PBS's defaults) and ``usage`` (a copy of
the scheduler's ``sched_priv/usage``: when fairshare usage decays; missing: from the first cycle).

Every setting is one of three categories, decided in one table, ``CATEGORIES``:

- ``modelled``: the replay's scheduler uses it.
- ``no effect on a replay``: it cannot change when logged jobs start: logging, access lists, mail, limits
  and defaults applied when a job was submitted (the log holds what the server accepted), names, history,
  licensing, hooks' housekeeping.
- ``not modelled``: it can change scheduling and the replay ignores it: preemption, prime time, dedicated
  time, placement sets, provisioning, soft limits, server- and queue-level resources, peering, ...

Some depend on the value: a switch that turns a feature not modelled off has no effect (``SWITCHES_OFF``);
fairshare settings only count when ``fair_share`` is on; preemption settings only count when a job can
preempt another (an execution queue whose priority reaches ``preempt_queue_prio``, or a ``preempt_prio``
other than PBS's default); a name PBS does not know in sched_config is ignored by PBS.
"""

import os
from typing import NamedTuple, Tuple

from ..pbs.policy import SchedulingPolicy
from ..pbs.vnodes import Vnode
from ..shared.errors import SiteError
from .mom_config import read_mom_config
from .pbsnodes import nodes_from_qmgr, read_pbsnodes, vnodes_of
from .qmgr import DEFAULT_SCHED, parse_qmgr, qmgr_objects
from .resource_group import group_lines, read_resource_group
from .sched_config import read_sched_config, shipped_sched_config
from .scheduling import scheduling_policy
from .usage import decode_usage

__all__ = ["Setting", "Site", "read_site", "classify", "is_listed", "CATEGORIES", "MODELLED", "NO_EFFECT",
           "NOT_MODELLED"]

FILES = ("qmgr.txt", "qmgr-sched.txt", "sched_config", "resource_group", "pbsnodes.json", "mom_config")
"""The text files of a site folder, each optional."""
USAGE_FILE = "usage"
"""The scheduler's binary fairshare usage file, optional."""
QMGR_FILES = ("qmgr.txt", "qmgr-sched.txt")
"""``qmgr -c 'print server'``, and ``qmgr -c 'print sched'`` (which may also follow in qmgr.txt itself)."""

MODELLED, NO_EFFECT, NOT_MODELLED = "modelled", "no effect on a replay", "not modelled"

CATEGORIES = {
    "server": {
        MODELLED: "backfill_depth eligible_time_enable job_sort_formula max_run max_run_res max_running "
                  "max_user_run max_group_run max_user_res max_group_res scheduler_iteration",
        NO_EFFECT: "server_state server_host scheduling pnames total_jobs state_count acl_host_enable acl_hosts "
                   "acl_host_moms_enable acl_resv_host_enable acl_resv_hosts acl_resv_group_enable "
                   "acl_resv_groups acl_user_enable acl_users acl_resv_user_enable acl_resv_users acl_roots "
                   "managers operators default_queue log_events mailer mail_from query_other_jobs "
                   "resources_default default_chunk resources_max resources_assigned resources_cost system_cost "
                   "comment default_node node_pack flatuid resv_enable node_fail_requeue max_array_size "
                   "require_cred_enable require_cred default_qdel_arguments default_qsub_arguments rpp_retry "
                   "rpp_highwater pbs_license_info pbs_license_min pbs_license_max pbs_license_linger_time "
                   "license_count pbs_version reserve_retry_time reserve_retry_init job_history_enable "
                   "job_history_duration max_concurrent_provision provision_timeout resv_post_processing_time "
                   "job_requeue_timeout python_restart_max_hooks python_restart_max_objects "
                   "python_restart_min_interval max_queued max_queued_res queued_jobs_threshold "
                   "queued_jobs_threshold_res jobscript_max_size show_hidden_attribs sync_mom_hookfiles_timeout "
                   "rpp_max_pkt_check max_job_sequence_id has_runjob_hook acl_krb_realm_enable acl_krb_realms "
                   "acl_krb_submit_realms cred_renew_enable cred_renew_tool cred_renew_period "
                   "cred_renew_cache_period single_signon_password_enable",
        NOT_MODELLED: "max_run_soft max_run_res_soft max_user_run_soft max_group_run_soft max_user_res_soft "
                      "max_group_res_soft resources_available node_group_enable node_group_key provision_enable "
                      "power_provisioning restrict_res_to_release_on_suspend",
    },
    "queue": {
        MODELLED: "queue_type priority started backfill_depth max_run max_run_res max_running max_user_run "
                  "max_group_run max_user_res max_group_res",
        NO_EFFECT: "enabled total_jobs state_count acl_host_enable acl_hosts acl_user_enable acl_users "
                   "acl_group_enable acl_groups from_route_only resources_max resources_min resources_default "
                   "default_chunk require_cred_enable require_cred max_array_size comment checkpoint_min "
                   "kill_delay resources_assigned max_queued max_queued_res max_queuable queued_jobs_threshold "
                   "queued_jobs_threshold_res route_destinations alt_router route_held_jobs route_waiting_jobs "
                   "route_retry_time route_lifetime rendezvous_retry reserved_expedite reserved_sync hasnodes",
        NOT_MODELLED: "resources_available max_run_soft max_run_res_soft max_user_run_soft max_group_run_soft "
                      "max_user_res_soft max_group_res_soft node_group_key partition",
    },
    "sched": {
        MODELLED: "opt_backfill_fuzzy scheduler_iteration job_sort_formula job_sort_formula_threshold "
                  "preempt_queue_prio",
        NO_EFFECT: "sched_host sched_priv sched_log sched_user comment state log_events attr_update_period "
                   "throughput_mode job_run_wait sched_cycle_length server_dyn_res_alarm scheduling partition",
        NOT_MODELLED: "do_not_span_psets only_explicit_psets sched_preempt_enforce_resumption "
                      "preempt_targets_enable preempt_prio preempt_order preempt_sort",
    },
    "node": {
        MODELLED: "resources_available sharing state queue priority in_multivnode_host",
        NO_EFFECT: "mom port pbs_version ntype pcpus jobs resources_assigned comment resv_enable license "
                   "license_info last_state_change_time last_used_time topology_info "
                   "vnode_pool pnames resv current_aoe current_eoe maintenance_jobs poweroff_eligible "
                   "power_provisioning",
        NOT_MODELLED: "max_running max_user_run max_group_run no_multinode_jobs provision_enable partition no_tasks",
    },
    "sched_config": {
        MODELLED: "round_robin by_queue strict_ordering fair_share backfill job_sort_key node_sort_key sort_nodes "
                  "resources smp_cluster_dist fairshare_usage_res fairshare_entity fairshare_decay_time half_life "
                  "fairshare_decay_factor unknown_shares fairshare_enforce_no_shares dedicated_prefix "
                  "primetime_prefix",
        NO_EFFECT: "update_comments nonprimetime_prefix prime_exempt_anytime_queues provision_policy "
                   "allow_aoe_calendar resv_confirm_ignore help_starving_jobs max_starve sort_queues node_group_key "
                   "log_filter preempt_queue_prio "
                   "preempt_prio preempt_order preempt_sort",
        NOT_MODELLED: "strict_fifo backfill_prime preemptive_sched preempt_attempts max_job_check prime_spill "
                      "resource_unset_infinite server_dyn_res peer_queue",
    },
    "resource": {NO_EFFECT: "type", NOT_MODELLED: "flag"},  # flag: by its value (resource_flag_category)
    "mom_config": {
        MODELLED: "$min_check_poll $max_check_poll",
        NO_EFFECT: "$action $alien_attach $alien_kill $alps_client $alps_confirm_empty_timeout "
                   "$alps_release_wait_time $alps_release_jitter $alps_release_timeout $vnode_per_numa_node "
                   "$alps_confirm_switch_timeout $attach_allow $checkpoint_path $clienthost $configversion $enforce "
                   "$jobdir_root $logevent $max_poll_downtime $momname $nrun_factor $port $prologalarm "
                   "$sister_join_job_alarm $job_launch_delay $restart_background $restart_transmogrify "
                   "$restrict_user $restrict_user_exceptions $restrict_user_maxsysid $restricted "
                   "$gen_nodefile_on_sister_mom $spool_size $suspendsig $tmpdir $vnodedef_additive $usecp "
                   "$reject_root_scripts $report_hook_checksums",
        NOT_MODELLED: "$ideal_load $max_load $kbd_idle $cputmult $wallmult"},
    "resource_group": {MODELLED: "group"},
}
"""Every setting's category, by where it is set (qmgr object kind, sched_config, resource_group)."""

SWITCHES_OFF = {("server", name) for name in ("node_group_enable", "provision_enable", "power_provisioning")} | {
    ("node", "no_multinode_jobs"), ("node", "provision_enable"), ("sched_config", "strict_fifo"),
    ("sched_config", "backfill_prime"), ("sched", "do_not_span_psets"), ("sched", "only_explicit_psets")}
"""Not-modelled switches that change nothing while they are off."""
FAIRSHARE_SETTINGS = ("fairshare_usage_res", "fairshare_entity", "fairshare_decay_time", "half_life",
                      "fairshare_decay_factor", "unknown_shares", "fairshare_enforce_no_shares", "group")
PREEMPTION_SETTINGS = {("sched_config", "preemptive_sched"), ("sched_config", "preempt_attempts"),
                       ("sched", "preempt_prio"), ("sched", "preempt_order"), ("sched", "preempt_sort"),
                       ("sched", "preempt_targets_enable"), ("sched", "sched_preempt_enforce_resumption"),
                       ("server", "restrict_res_to_release_on_suspend")}
DEFAULT_PREEMPT_PRIO = "express_queue, normal_jobs"
OFF_NOT_MODELLED = {("server", "scheduling"), ("sched", "scheduling")}
"""Switches with no effect while on, which stop scheduling when off."""
VALUED_NO_EFFECT = {("sched_config", "max_job_check"): "ALL_JOBS", ("sched", "partition"): "pbs-default"}
"""Settings whose PBS default value changes nothing."""

_TABLE = {(source, name): category for source, by_category in CATEGORIES.items()
          for category, names in by_category.items() for name in names.split()}


class Setting(NamedTuple):
    """One setting found in a site's files: the file, its line, the setting's name (qualified by its object,
    ``queue express max_run``), its value and its category."""

    file: str
    line: int
    name: str
    value: str
    category: str


class Site(NamedTuple):
    """A site read from its folder: the scheduler's policy, the vnodes in service, the scheduler's
    iteration, every setting found with its category, and remarks on how the files were read."""

    policy: SchedulingPolicy
    vnodes: Tuple[Vnode, ...] = ()
    scheduler_iteration_s: int = 600
    settings: Tuple[Setting, ...] = ()
    remarks: Tuple[str, ...] = ()

    def notes(self):
        """Lines for a report: each setting not modelled once (vnodes' attributes once per attribute),
        then the remarks (vnodes left out, routing queues, readings of sched_config)."""
        return _not_modelled_notes(self.settings) + list(self.remarks)


class _Context(NamedTuple):
    """What value-dependent categories depend on."""

    fair_share: bool
    preemption_possible: bool


def classify(source, name, value, context=_Context(False, False)):
    """The category of setting ``name`` (bare attribute or sched_config name) set in ``source`` to ``value``."""
    base = name.split(".")[0]
    key = (source, base)
    if source == "hook" or source == "pbshook":
        return NO_EFFECT if value_is_false(value) else NOT_MODELLED
    if key in OFF_NOT_MODELLED and value_is_false(value):
        return NOT_MODELLED
    if source == "mom_config" and not name.startswith("$"):
        return NO_EFFECT  # a static host resource: pbsnodes.json holds its value
    if key not in _TABLE:
        return NO_EFFECT if source == "sched_config" else NOT_MODELLED
    category = _TABLE[key]
    if key in SWITCHES_OFF and value_is_false(value) or VALUED_NO_EFFECT.get(key) == value:
        return NO_EFFECT
    if base in FAIRSHARE_SETTINGS and source in ("sched_config", "resource_group"):
        return category if context.fair_share else NO_EFFECT
    if key in PREEMPTION_SETTINGS:
        return NOT_MODELLED if context.preemption_possible and not value_is_false(value) else NO_EFFECT
    if key == ("sched_config", "smp_cluster_dist") and value != "pack":
        return NOT_MODELLED
    if key == ("resource", "flag"):
        return resource_flag_category(value)
    return category


def is_listed(source, name):
    """Whether ``CATEGORIES`` names setting ``name`` of ``source`` (hooks are classified as a whole, and so
    are a MoM's static host resources)."""
    return (source in ("hook", "pbshook") or (source, name.split(".")[0]) in _TABLE
            or source == "mom_config" and not name.startswith("$"))


def value_is_false(value):
    """Whether a setting's value turns it off (False, false, 0, ...)."""
    return str(value).strip().lower() in ("false", "f", "0", "n", "no")


def read_site(path):
    """The ``Site`` in folder ``path``; SiteError naming file:line: setting when something is malformed."""
    if not os.path.isdir(path):
        raise SiteError("{}: not a folder holding qmgr.txt, sched_config, resource_group or pbsnodes.json".format(
            path))
    texts = {name: _read(path, name) for name in FILES}
    usage_data = _read_usage(path)
    try:
        return _site(texts, None if usage_data is None else decode_usage(usage_data, USAGE_FILE))
    except SiteError as err:  # the messages start with the file's name: say which folder it is in
        raise SiteError(os.path.join(path, str(err))) from None


def _site(texts, usage=None):
    """The Site of the folder's texts (None for a missing file) and decoded usage file (None: none)."""
    objects = qmgr_objects(sum((parse_qmgr(texts[name] or "", name) for name in QMGR_FILES), ()))
    sched_config = (read_sched_config(texts["sched_config"], "sched_config") if texts["sched_config"] is not None
                    else shipped_sched_config())
    tree = read_resource_group(texts["resource_group"] or "", "resource_group")
    policy, remarks = scheduling_policy(objects, sched_config, tree, "qmgr.txt")
    mom_config = read_mom_config(texts["mom_config"] or "", "mom_config")
    policy = _with_fairshare_timing(policy, mom_config, usage)
    node_entries, node_file = _node_entries(texts["pbsnodes.json"], objects)
    vnodes, left_out = vnodes_of(node_entries, node_file)
    context = _Context(policy.fairshare is not None, _preemption_possible(policy, objects))
    lines = group_lines(texts["resource_group"] or "")
    settings = (_qmgr_settings(objects, context) + _sched_config_settings(sched_config, context)
                + _group_settings(tree, lines, context)
                + (_node_settings(node_entries, context) if node_file == "pbsnodes.json" else ())
                + _mom_settings(mom_config, context))
    remarks = (list(sched_config.readings) + remarks + _left_out_remarks(left_out, node_file)
               + _fairshare_timing_remarks(policy, texts["mom_config"] is None, usage is None))
    return Site(policy, vnodes, policy.scheduler_iteration_s, settings, tuple(remarks))


def _with_fairshare_timing(policy, mom_config, usage):
    """``policy`` with the MoMs' polling (when fairshare sees usage) and fairshare's decay grid (from the
    usage file)."""
    if policy.fairshare is None:
        return policy
    return policy._replace(fairshare=policy.fairshare._replace(
        min_check_poll_s=mom_config.min_check_poll_s, max_check_poll_s=mom_config.max_check_poll_s,
        decay_anchor=None if usage is None else usage.last_decay))


def _fairshare_timing_remarks(policy, no_mom_config, no_usage):
    """With fairshare on, what the model assumes in place of a missing mom_config or usage file."""
    if policy.fairshare is None:
        return []
    remarks = []
    if no_mom_config:
        remarks.append("fairshare: no mom_config: the MoMs measure their jobs as PBS ships them ($min_check_poll "
                       "{} s, $max_check_poll {} s), and a running job's usage is charged when measured".format(
                           policy.fairshare.min_check_poll_s, policy.fairshare.max_check_poll_s))
    if no_usage:
        remarks.append("fairshare: no usage file: the usage decays are counted from the first cycle, not on the "
                       "site's own decay times")
    return remarks


def _read_usage(path):
    """The bytes of the ``usage`` file of folder ``path``, None if there is none (see ``_read``)."""
    full = os.path.join(path, USAGE_FILE)
    try:
        with open(full, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise SiteError("{}: cannot be read: {}".format(full, err)) from None
    return data


def _read(path, name):
    """The text of ``path/name``, None if there is no such file. One that is there but cannot be opened is an
    error, not a missing file (``os.path.exists`` says False for a file in a folder closed to this user)."""
    full = os.path.join(path, name)
    try:
        with open(full, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise SiteError("{}: cannot be read: {}".format(full, err)) from None


def _node_entries(pbsnodes_text, objects):
    """The vnodes' entries and the file they come from: pbsnodes.json, else qmgr's node lines."""
    if pbsnodes_text is not None:
        return read_pbsnodes(pbsnodes_text, "pbsnodes.json"), "pbsnodes.json"
    return nodes_from_qmgr(objects), "qmgr.txt"


def _preemption_possible(policy, objects):
    """Whether a job can preempt another: an express execution queue, or preempt_prio not PBS's default."""
    if not policy.preemptive_sched:
        return False
    express = any(queue.priority >= policy.preempt_queue_prio for queue in policy.queues)
    prio = [item.get("preempt_prio") for item in objects if item.kind == "sched" and item.name == "default"]
    return express or any(value not in (None, DEFAULT_PREEMPT_PRIO) for value in prio)


def _qmgr_settings(objects, context):
    """A Setting for each attribute of each qmgr object; a second scheduler's are all not modelled."""
    return tuple(Setting(attribute.file, attribute.line, _qualified(item, attribute), attribute.value,
                         NOT_MODELLED if item.kind == "sched" and item.name != DEFAULT_SCHED else
                         classify(item.kind, attribute.name, _switch_value(item, attribute), context))
                 for item in objects for attribute in item.attributes)


def _qualified(item, attribute):
    """``queue express max_run``, ``server backfill_depth``: the attribute named with its object."""
    return " ".join(part for part in (item.kind, item.name, attribute.name) if part)


def _switch_value(item, attribute):
    """The value a hook's category depends on (its ``enabled``: a disabled hook has no effect), a resource
    flag's with its type (``long hn``), else the attribute's own."""
    if item.kind in ("hook", "pbshook"):
        return item.get("enabled", "True") if attribute.name != "enabled" else attribute.value
    if item.kind == "resource" and attribute.name == "flag":
        return "{} {}".format(item.get("type", "long"), attribute.value)
    return attribute.value


MATCHED_TYPES = ("string", "boolean")
"""Types of a host-level resource that is not consumed but matched, as the model matches it (equal values)."""


def resource_flag_category(value):
    """The category of a custom resource's ``flag``, from ``TYPE FLAGS`` (``long hn``).

    A host-level resource (``h``) that is consumed (``n`` or ``f``) is what the model does with every number
    a chunk asks for: it takes it from the vnode's ``resources_available``. A host-level string or boolean is
    matched, as the model matches it. A host-level number that is not consumed (PBS compares it with the vnode's
    value, the model would take from it) and a server- or queue-level resource (no ``h``) are not modelled."""
    kind, _, flags = value.partition(" ")
    flags = flags.lower()
    if "h" not in flags:
        return NOT_MODELLED
    if "n" in flags or "f" in flags or kind.lower() in MATCHED_TYPES:
        return MODELLED
    return NOT_MODELLED


def _sched_config_settings(sched_config, context):
    return tuple(Setting("sched_config", line.line, line.name, line.value,
                         classify("sched_config", line.name, line.value, context)) for line in sched_config.lines)


def _group_settings(tree, lines, context):
    return tuple(Setting("resource_group", lines[group.name], "group " + group.name,
                         "{} {} {}".format(group.id, group.parent, group.shares),
                         classify("resource_group", "group", group.shares, context)) for group in tree)


def _node_settings(entries, context):
    return tuple(Setting("pbsnodes.json", entry.line, "node {} {}".format(entry.name, key), str(value),
                         classify("node", key, value, context)) for entry in entries for key, value in entry.attributes)


def _mom_settings(mom_config, context):
    return tuple(Setting("mom_config", line, name, value, classify("mom_config", name, value, context))
                 for line, name, value in mom_config.lines)


def _left_out_remarks(left_out, node_file):
    return ["vnode {} left out: {} in {}".format(name, state, node_file) for name, state in left_out]


def _not_modelled_notes(settings):
    """'not modelled: NAME (file line N[, and K more])' once per setting, vnodes grouped by attribute."""
    groups = {}
    for setting in settings:
        if setting.category != NOT_MODELLED:
            continue
        words = setting.name.split()
        name = "node " + words[-1] if words[0] == "node" and len(words) == 3 else setting.name
        groups.setdefault((name, setting.file), []).append(setting.line)
    return ["not modelled: {} ({} line {}{})".format(name, file, lines[0], ", and {} more".format(
        len(lines) - 1) if len(lines) > 1 else "") for (name, file), lines in groups.items()]

