"""The fidelity check as a report: the figures, and the first disagreeing decisions with their state."""

import time

from predictor.cmdline.tables import Column, Report, Table

from ..pbs.cycle import NEVER_RUN, NO_ROOM, NO_SHARES, STRICT_ORDERING, UNDER_THRESHOLD
from ..pbs.jobs import EXITING_TIME_S, planned_end
from .outcomes import relative_difference

__all__ = ["fidelity_report", "disagreement", "fairshare_parting", "job_table", "order_difference", "FIGURE_KEYS",
           "JOB_HEADER"]

FIGURE_KEYS = ("decisions", "decisions_agreeing", "decisions_agreeing_share", "decisions_ambiguous",
               "decisions_agreeing_on_another_reading", "jobs", "starts_within_2s",
               "starts_within_2s_share", "mean_abs_start_error_s", "wait_mean_real_s", "wait_mean_sim_s",
               "wait_mean_difference", "wait_median_real_s", "wait_median_sim_s", "wait_median_difference",
               "jobs_not_started_sim", "latency_s", "log_reuse_latency_median_s", "orders_compared", "orders_agreeing")
"""The figures at the top of the JSON document, before ``disagreements``, ``orders_differing`` and
``not_modelled``."""

_FIGURES = (Column("figure", "figure"), Column("value", "value"), Column("detail", "detail"))
_STATE = (Column("job", "job"), Column("state", "state"), Column("user", "user"),
          Column("queue", "queue", wide=True), Column("ncpus", "ncpus", "count"),
          Column("soft_walltime_s", "soft wt", "duration_s"), Column("walltime_s", "walltime", "duration_s", wide=True),
          Column("since", "since"), Column("planned_end", "planned end", wide=True),
          Column("top_job_start", "top job at"), Column("sort_value", "sort value", wide=True),
          Column("pbs", "PBS"), Column("model", "model"), Column("reason", "model's reason"))

_ORDER = (Column("position", "#", "count"), Column("pbs", "PBS"), Column("pbs_user", "user"),
          Column("model", "model"), Column("model_user", "user"))

_SHORT_REASONS = {NO_ROOM: "no room", STRICT_ORDERING: "strict ordering", NEVER_RUN: "never fits",
                  NO_SHARES: "no shares", UNDER_THRESHOLD: "under threshold"}
"""The model's reasons as the text table says them (the legend spells them out; --json keeps them whole)."""


def _share(part, whole):
    return part / float(whole) if whole else None


def _percent(value):
    return "-" if value is None else "{:.1f}%".format(100.0 * value)


def _share_percent(part, whole):
    """``part`` of ``whole`` in percent to a tenth, cut rather than rounded: never above the share, so that 48
    of 49 (97.96 %) reads 97.9%, not 98.0%."""
    return "-" if not whole else "{}.{}%".format(*divmod(part * 1000 // whole, 10))


def _seconds(value):
    return "-" if value is None else "{:.1f} s".format(value)


def _clock(epoch):
    """An instant as UTC date and time (what the check prints; the logs' own lines are local time)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def figures(fidelity, orders=None):
    """``(key, value)`` of the check's figures, in ``FIGURE_KEYS`` order; ``orders``: the ``sched_log.OrderCheck``
    list, None without the scheduler's log."""
    decisions, outcomes = fidelity.decisions, fidelity.outcomes
    values = {
        "decisions": decisions.decisions, "decisions_agreeing": decisions.agreeing,
        "decisions_agreeing_share": _share(decisions.agreeing, decisions.decisions),
        "decisions_ambiguous": decisions.ambiguous,
        "decisions_agreeing_on_another_reading": decisions.agreeing_on_another_reading,
        "jobs": outcomes.jobs, "starts_within_2s": outcomes.starts_within_2s,
        "starts_within_2s_share": _share(outcomes.starts_within_2s, outcomes.jobs),
        "mean_abs_start_error_s": outcomes.mean_abs_start_error_s,
        "wait_mean_real_s": outcomes.wait_mean_real_s, "wait_mean_sim_s": outcomes.wait_mean_sim_s,
        "wait_mean_difference": relative_difference(outcomes.wait_mean_sim_s, outcomes.wait_mean_real_s),
        "wait_median_real_s": outcomes.wait_median_real_s, "wait_median_sim_s": outcomes.wait_median_sim_s,
        "wait_median_difference": relative_difference(outcomes.wait_median_sim_s, outcomes.wait_median_real_s),
        "jobs_not_started_sim": outcomes.not_started_sim, "latency_s": fidelity.latency_s,
        "log_reuse_latency_median_s": fidelity.log_latency_s,
        "orders_compared": None if orders is None else len(orders),
        "orders_agreeing": None if orders is None else sum(1 for order in orders if order.in_order),
    }
    return tuple((key, values[key]) for key in FIGURE_KEYS)


def _figure_rows(values):
    return [
        ("decisions agreeing", "{} / {}".format(values["decisions_agreeing"], values["decisions"]),
         "{} ({} ambiguous, {} agreeing on another reading)".format(
             _share_percent(values["decisions_agreeing"], values["decisions"]), values["decisions_ambiguous"],
             values["decisions_agreeing_on_another_reading"])),
        ("jobs compared", str(values["jobs"]), "{} never started by the model".format(values["jobs_not_started_sim"])),
        ("starts within 2 s", "{} / {}".format(values["starts_within_2s"], values["jobs"]),
         _share_percent(values["starts_within_2s"], values["jobs"])),
        ("mean |start error|", _seconds(values["mean_abs_start_error_s"]), ""),
        ("mean wait real / sim", "{} / {}".format(_seconds(values["wait_mean_real_s"]),
                                                  _seconds(values["wait_mean_sim_s"])),
         "{} difference".format(_percent(values["wait_mean_difference"]))),
        ("median wait real / sim", "{} / {}".format(_seconds(values["wait_median_real_s"]),
                                                    _seconds(values["wait_median_sim_s"])),
         "{} difference".format(_percent(values["wait_median_difference"]))),
        ("latency end -> reuse", "{} s".format(values["latency_s"]),
         "the logs' median: {}".format(_seconds(values["log_reuse_latency_median_s"]))),
    ] + ([] if values["orders_compared"] is None else [
        ("orders as the scheduler's", "{} / {}".format(values["orders_agreeing"], values["orders_compared"]),
         "{} of the agreeing decisions' cycles considered the jobs in its order".format(
             _share_percent(values["orders_agreeing"], values["orders_compared"])))])


ORDER_ROWS = 12
"""Positions of a differing order shown in the text report, from the first that differs (--json: all)."""


def order_difference(order):
    """A ``sched_log.OrderCheck`` whose orders differ, as a dict: when, the jobs PBS started, the jobs each side
    considered in its order, and those considered by one side only."""
    state = order.check.state
    return {"time": state.now, "time_utc": _clock(state.now), "pbs_started": list(order.check.group.started),
            "pbs_considered": list(order.real), "model_considered": list(order.model),
            "pbs_only": list(order.real_only), "model_only": list(order.model_only)}


def _order_table(number, item, users):
    real, model = item["pbs_considered"], item["model_considered"]
    first = next((position for position, pair in enumerate(zip(real, model)) if pair[0] != pair[1]),
                 min(len(real), len(model)))
    rows = []
    for position in range(first, min(max(len(real), len(model)), first + ORDER_ROWS)):
        pbs = real[position] if position < len(real) else None
        ours = model[position] if position < len(model) else None
        rows.append((position + 1, pbs, users.get(pbs), ours, users.get(ours)))
    title = "Order {} at {} UTC: PBS started {}; the jobs considered, from the first place the orders differ".format(
        number, item["time_utc"], " ".join(item["pbs_started"]))
    return Table("order", title, _ORDER, rows)


def _sort_values(policy, jobs, now, fairshare, accrual=None):
    """Job name -> the value PBS sorts it by: the job_sort_formula's (with the jobs' eligible time as
    ``accrual`` has it); without one, with fairshare, the entity's fairshare_factor (higher: more
    deserving); else nothing."""
    if policy.job_sort_formula:
        from ..pbs.order import sort_values
        jobs = tuple(jobs)
        values = sort_values(policy, jobs, now, fairshare, accrual)
        return {job.name: values[id(job)] for job in jobs}
    if fairshare is not None:
        copy = fairshare.copy()
        return {job.name: copy.factors(job)["fairshare_factor"] for job in jobs}
    return {}


def _ordered(policy, jobs, now, fairshare, accrual=None):
    """The queued jobs in the order the model's scheduler walks them."""
    from ..pbs.order import job_order, sort_values
    jobs = list(jobs)
    values = sort_values(policy, jobs, now, fairshare, accrual)
    return [job for queue in job_order(policy, jobs, now, fairshare, values) for job in queue]


def disagreement(policy, check):
    """A disagreeing ``DecisionCheck`` as a dict: when, what PBS and the model started, and the state:
    queued jobs in the model's order with their sort values and the model's reasons, running jobs with
    the ends PBS planned for them."""
    state, decision = check.state, check.decision
    pbs, model = set(check.group.started), set(check.model_started)
    accrual = getattr(state, "accrual", None)
    values = _sort_values(policy, state.queued, state.now, state.fairshare, accrual)
    tops = {job.name: start for job, start, _ in decision.top_jobs}
    queued = [dict(_job_row(job, "queued", job.eligible_time, None, values.get(job.name), job.name in pbs,
                            job.name in model, decision.reasons.get(job.name)), top_job_start=tops.get(job.name))
              for job in _ordered(policy, state.queued, state.now, state.fairshare, accrual)]
    running = [_job_row(item.job, "exiting" if item.exiting else "running", item.start,
                        state.now + EXITING_TIME_S if item.exiting else planned_end(item.job, item.start, state.now),
                        None, False, False, None) for item in state.running]
    return {"time": state.now, "time_utc": _clock(state.now), "pbs_started": list(check.group.started),
            "model_started": list(check.model_started), "ambiguous": check.ambiguous,
            "fairshare": fairshare_parting(policy, check), "queued": queued, "running": running}


def fairshare_parting(policy, check):
    """The ``fairshare`` object of a disagreeing ``DecisionCheck``. With fairshare ordering the jobs (no
    ``job_sort_formula``): where the entities of the first job PBS started and the model did not, and of the
    first the model started and PBS did not, part in the share tree, and each side's usage over its tree
    share there (``Fairshare.parting``), as the cycle began; None when the two jobs are in different queues
    (the queues' order comes first) or there is no such pair."""
    state = check.state
    if policy.fairshare is None or policy.job_sort_formula or getattr(state, "fairshare", None) is None:
        return None
    queued = {job.name: job for job in state.queued}
    pbs = [queued[name] for name in check.group.started if name in queued and name not in check.model_started]
    model = [queued[name] for name in check.model_started if name in queued and name not in check.group.started]
    if not pbs or not model or pbs[0].queue != model[0].queue:
        return None
    fairshare = state.fairshare.copy()
    fairshare.add_entities(sorted([item.job for item in state.running] + list(state.queued), key=lambda job: job.index))
    parting = fairshare.parting(pbs[0], model[0])
    if parting is None:
        return None
    (pbs_side, pbs_value), (model_side, model_value) = parting
    apart = None if pbs_value is None or model_value is None or not min(pbs_value, model_value) else \
        abs(pbs_value - model_value) / min(pbs_value, model_value)
    return {"pbs_job": pbs[0].name, "pbs_side": pbs_side, "pbs_usage_per_tree_share": pbs_value,
            "model_job": model[0].name, "model_side": model_side, "model_usage_per_tree_share": model_value,
            "apart": apart}


def _job_row(job, status, since, end, value, by_pbs, by_model, reason):
    return {"job": job.name, "state": status, "user": job.user, "queue": job.queue,
            "ncpus": job.resource("ncpus"), "soft_walltime_s": job.soft_walltime_s, "walltime_s": job.walltime_s,
            "since": since, "planned_end": end, "top_job_start": None, "sort_value": value, "pbs": by_pbs,
            "model": by_model, "reason": reason}


def _state_table(number, item):
    rows = []
    for job in item["queued"] + item["running"]:
        rows.append((job["job"], job["state"], job["user"], job["queue"], job["ncpus"], job["soft_walltime_s"],
                     job["walltime_s"], _clock(job["since"])[11:],
                     None if job["planned_end"] is None else _clock(job["planned_end"])[11:],
                     None if job["top_job_start"] is None else _clock(job["top_job_start"])[11:],
                     None if job["sort_value"] is None else "{:g}".format(job["sort_value"]),
                     "yes" if job["pbs"] else "", "yes" if job["model"] else "",
                     _SHORT_REASONS.get(job["reason"], job["reason"] or "")))
    title = "Disagreement {} at {} UTC{}: PBS started {}; the model started {}{}".format(
        number, item["time_utc"], " (ambiguous)" if item["ambiguous"] else "",
        " ".join(item["pbs_started"]) or "nothing", " ".join(item["model_started"]) or "nothing",
        _parting_text(item["fairshare"]))
    return Table("disagreement", title, _STATE, rows)


def _parting_text(parting):
    """``; fairshare: ...`` for a disagreement's title, or nothing."""
    if parting is None:
        return ""

    def side(name, value):
        return "{} {}".format(name, "no share" if value is None else "{:.1f}".format(value))
    return "; fairshare: {} against {} usage per tree share{}".format(
        side(parting["pbs_side"], parting["pbs_usage_per_tree_share"]),
        side(parting["model_side"], parting["model_usage_per_tree_share"]),
        "" if parting["apart"] is None else " ({:.1f} % apart)".format(100 * parting["apart"]))


JOB_HEADER = ["job_id", "user", "queue", "ncpus", "eligible_time", "start_real", "start_replayed",
              "start_error_s", "wait_real_s", "wait_replayed_s"]


def job_table(fidelity):
    """``(header, rows)`` for ``--jobs-csv``: each job of the whole-run replay, in submission order, with its
    real and replayed start (epoch seconds) and waits; the replayed ones empty for a job the model never
    started."""
    def rows():
        for job, real, replayed in fidelity.starts:
            moved = (None, None) if replayed is None else (replayed - real, replayed - job.eligible_time)
            yield [job.name, job.user, job.queue, job.resource("ncpus"), job.eligible_time, real, replayed,
                   moved[0], real - job.eligible_time, moved[1]]
    return JOB_HEADER, rows()


def fidelity_report(title, notes, fidelity, site, show, orders=None):
    """The ``Report``: figures, then the first ``show`` disagreements, each as its state table, and, given the
    scheduler's log (``orders``, a ``sched_log.OrderCheck`` list), the first ``show`` orders that differ."""
    values = figures(fidelity, orders)
    disagreements = [disagreement(site.policy, check) for check in fidelity.checks if not check.agrees]
    differing = None if orders is None else [order_difference(order) for order in orders if not order.in_order]
    tables = (Table("figures", "Model against the real server", _FIGURES, _figure_rows(dict(values))),)
    tables += tuple(_state_table(number, item) for number, item in enumerate(disagreements[:show], 1))
    if differing:
        users = {job.name: job.user for order in orders for job in order.check.state.queued}
        tables += tuple(_order_table(number, item, users) for number, item in enumerate(differing[:show], 1))
    all_notes = tuple(notes) + fidelity.notes  # the site's notes name each setting not modelled
    if len(disagreements) > show:
        all_notes += ("{} disagreeing decisions, the first {} shown (--show N; all in --json)".format(
            len(disagreements), show),)
    if differing and len(differing) > show:
        all_notes += ("{} orders differing from the scheduler's, the first {} shown (--show N; all in --json)".format(
            len(differing), show),)
    figures_json = values + (("disagreements", disagreements), ("orders_differing", differing),
                             ("not_modelled", list(site.not_modelled)))
    legend = _LEGEND + (_ORDER_LEGEND if orders is not None else ())
    return Report(title, all_notes, tables, legend, figures_json)


_LEGEND = (
    "decisions: instants the real server started jobs; agreeing: the model started the same set of jobs",
    "ambiguous: a job became eligible, or a job's process ended, that very second; see the documentation",
    "waits: start - eligible time (the release of a held job), real and replayed from the first submission",
    "disagreement tables: queued jobs in the model's order (top jobs with the start the model reserved), "
    "then running jobs with the ends PBS planned",
    "since: a queued job's eligible time, a running job's start; PBS, model: yes if it started the job",
    "fairshare (in a disagreement's title, when fairshare orders the queue): where the entities of PBS's job "
    "and the model's part in the share tree, PBS's side first, each with its usage over its share of the tree "
    "as the cycle began (the lower goes first); a few percent apart is one MoM measurement, or one cycle a "
    "second off",
    "model's reason: no room (not enough free resources on the vnodes), strict ordering (an earlier job could "
    "not run), never fits (larger than the machine), no shares (the entity has no fairshare shares, "
    "enforce_no_shares), under threshold (job_sort_formula value at or below job_sort_formula_threshold); else "
    "the run limit that stopped the job; --json holds every reason whole",
)

_ORDER_LEGEND = (
    "orders (given the scheduler's log): for each agreeing decision whose jobs one cycle of that log ran, the jobs "
    "the model's cycle considered, in its order, against the cycle's \"Considering job to run\" lines, those that "
    "could not run too; a job only the model considered is left out if it became eligible that very second",
    "order tables: the jobs each side considered, from the first place they differ, with their users",
)
