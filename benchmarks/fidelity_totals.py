"""The fidelity check over many recordings at once: one line each, then the totals. Not a test.

    python benchmarks/fidelity_totals.py tests/data/fidelity [--workers 2]

FOLDER holds recordings as ``benchmarks/pbs_record.py`` writes them (each a folder with ``accounting/``
and ``site/``). Each is checked as ``python -m replay fidelity ACCOUNTING --site SITE`` checks it, and
the totals count its decisions under one of three kinds: without fairshare, with fairshare
(``fair_share`` on in its ``sched_config``), and, of those, the ones whose MoM polls its jobs as PBS
ships it (``$max_check_poll`` left at 120 s in its ``mom_config``); then the starts within 2 s over all jobs,
the recordings whose mean wait, and whose mean and median waits, are within 5 % of the real ones
(equal medians count as within, as when both are 0 s), and the lightly loaded recordings (``-light``
in their name) with fewer than 95 % of their starts within 2 s; then, per configuration (``configuration_of``), the
jobs of all its recordings together: starts within 2 s, and the mean and median waits, real and simulated; then the
same figures with the server's own log
(``--server-log``) on the recordings that kept it (``server.log``), the decisions given that log (its scheduler
cycles), without fairshare and with it, and the fairshare decisions given the MoMs'
updates that log records (kept at ``log_events`` 2047) against those from the accounting log alone, and their
replayed usage against the server's usage file. Last, on the recordings whose ``recording.json`` kept the
server's fairshare usage file with some usage in it: how far the usage replayed through the whole log ends from
the file's (the differences summed over the entities, over the
file's total), and, per entity, the replayed usage against the file's, signed, on average and how often
above and below it by more than 0.5 %. And of the disagreeing fairshare decisions where PBS's job and the
model's count under two entities, how near the two sides' usage per tree share were where the entities
part in the tree (what the check's report gives in each such disagreement's title).
"""

import argparse
import json
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from predictor.cmdline.rejects import RejectPrinter  # noqa: E402
from replay.fidelity.decisions import check_decisions, new_fairshare, summarise, usage_at_end  # noqa: E402
from replay.fidelity.machine import site_model  # noqa: E402
from replay.fidelity.measure import measure, replay_outcomes  # noqa: E402
from replay.fidelity.outcomes import median, relative_difference  # noqa: E402
from replay.fidelity.records import read_records  # noqa: E402
from replay.fidelity.report import fairshare_parting  # noqa: E402
from replay.fidelity.sched_log import check_orders, read_sched_log  # noqa: E402
from replay.fidelity.server_log import read_server_log  # noqa: E402
from replay.fidelity.server_usage import has_updates  # noqa: E402
from replay.site.mom_config import MomConfig  # noqa: E402

WAIT_BOUND = 0.05
LIGHT_WITHIN_2S = 0.95
USAGE_SIDE = 0.005
KINDS = ("without fairshare", "with fairshare", "with fairshare, MoM polling as shipped")
SERVER_LOG = "server.log"
"""The server's own log a recording kept (``pbs_record.py`` writes it)."""
SCHED_LOG = "sched.log"
"""The scheduler's own log a recording kept."""
NEAR = (0.05, 0.10, 0.25)
"""How near, relatively, the two sides of a fairshare disagreement are counted."""


def kind_of(site):
    """Which of ``KINDS`` a recording whose site folder reads as ``site`` (a ``SiteModel``) counts under."""
    if site.policy.fairshare is None:
        return KINDS[0]
    return KINDS[2] if site.policy.fairshare.max_check_poll_s == MomConfig().max_check_poll_s else KINDS[1]


def within(sim, real):
    """Whether ``sim`` is within ``WAIT_BOUND`` of ``real`` (equal values are, 0 s included)."""
    difference = relative_difference(sim, real)
    return sim == real if difference is None else abs(difference) <= WAIT_BOUND


def usage_errors(folder, accounting, site, server_log=None):
    """``{entity: (replayed, the server's)}`` of the fairshare usage at the end of the recording in ``folder``
    (charged at the cycles of ``server_log`` if it records the MoMs' updates); None when its ``recording.json``
    kept no usage file with usage in it."""
    try:
        with open(os.path.join(folder, "recording.json")) as handle:
            real = (json.load(handle).get("fairshare_usage_file") or {}).get("usage")
    except OSError:
        return None
    if not real or site.policy.fairshare is None:
        return None
    replayed = usage_at_end(accounting, new_fairshare(site.policy, site.vnodes), server_log)
    return {entity: (replayed.usage(entity), amount) for entity, amount in real.items()}


def check(folder):
    """``(name, kind, decisions, agreeing, jobs, starts within 2 s, mean within, both within, usage, partings)`` of
    one recording (usage: ``usage_errors``; partings: how far apart the two sides of each disagreement between
    two fairshare entities were, relatively, None where one side had no share)."""
    accounting = read_records([os.path.join(folder, "accounting")], RejectPrinter(0))
    site = site_model(os.path.join(folder, "site"), accounting)
    fidelity = measure(accounting, site)
    decisions, outcomes = fidelity.decisions, fidelity.outcomes
    mean = within(outcomes.wait_mean_sim_s, outcomes.wait_mean_real_s)
    both = mean and within(outcomes.wait_median_sim_s, outcomes.wait_median_real_s)
    partings = [fairshare_parting(site.policy, item) for item in fidelity.checks if not item.agrees]
    return (os.path.basename(folder), kind_of(site), decisions.decisions, decisions.agreeing, outcomes.jobs,
            outcomes.starts_within_2s, mean, both, usage_errors(folder, accounting, site),
            [parting["apart"] for parting in partings if parting is not None],
            with_server_log(folder, accounting, site), waits(fidelity.starts), configuration_of(folder))


def waits(starts):
    """``[(real wait, simulated wait)]`` of each job the replay started, from ``Fidelity.starts``: a wait runs from
    the job's eligible time, as in the check's outcomes."""
    return [(real - job.eligible_time, simulated - job.eligible_time) for job, real, simulated in starts
            if simulated is not None]


def configuration_of(folder):
    """The configuration a recording is of: its workload's name in ``recording.json``, without a ``-seedN``
    (another draw of the same configuration's jobs) or a submission suffix (``-queuejob``, ``-direct``: the same
    configuration, its jobs submitted another way); the folder's name when it has no ``recording.json``."""
    try:
        with open(os.path.join(folder, "recording.json")) as handle:
            workload = json.load(handle)["workload"]
        name, submission = workload["name"], workload.get("submission")
    except (OSError, ValueError, KeyError, TypeError):
        return os.path.basename(folder)
    if submission and name.endswith("-" + submission):
        name = name[:-len(submission) - 1]
    return re.sub(r"-seed\d+$", "", name)


class Pooled(NamedTuple):
    """One configuration's recordings taken together: every job replayed, its real and simulated waits."""

    configuration: str
    recordings: int
    jobs: int
    starts_within_2s: int
    wait_mean_real_s: float
    wait_mean_sim_s: float
    wait_median_real_s: float
    wait_median_sim_s: float


def recording_waits(folder):
    """``(configuration, starts within 2 s, waits)`` of the recording in ``folder``, its whole run replayed from the
    accounting log alone (``configuration_of``, ``waits``): what ``pooled`` takes, without the decisions."""
    accounting = read_records([os.path.join(folder, "accounting")], RejectPrinter(0))
    outcomes, _, starts = replay_outcomes(accounting, site_model(os.path.join(folder, "site"), accounting))
    return configuration_of(folder), outcomes.starts_within_2s, waits(starts)


def pooled(recordings_waits):
    """A ``Pooled`` per configuration, by name, from ``(configuration, starts within 2 s, waits)`` of each
    recording."""
    by_configuration = {}
    for configuration, within_2s, pairs in recordings_waits:
        by_configuration.setdefault(configuration, []).append((within_2s, pairs))
    result = []
    for configuration, of_it in sorted(by_configuration.items()):
        pairs = [pair for _, waits_of in of_it for pair in waits_of]
        if not pairs:
            continue
        real, simulated = [wait for wait, _ in pairs], [wait for _, wait in pairs]
        result.append(Pooled(configuration, len(of_it), len(pairs), sum(within_2s for within_2s, _ in of_it),
                             sum(real) / len(real), sum(simulated) / len(simulated), median(real), median(simulated)))
    return result


def print_pooled(configurations):
    """The table of ``pooled``: per configuration, its recordings' jobs together."""
    print("per configuration, all its recordings' jobs together (waits in s, simulated against real):")
    print("  {:<30} {:>10} {:>6} {:>10}  {:>21}  {:>21}".format("configuration", "recordings", "jobs", "within 2 s",
                                                               "mean wait real / sim", "median wait real / sim"))
    for item in configurations:
        print("  {:<30} {:>10} {:>6} {:>10}  {:>21}  {:>21}".format(
            item.configuration, item.recordings, item.jobs, item.starts_within_2s,
            _real_sim(item.wait_mean_real_s, item.wait_mean_sim_s),
            _real_sim(item.wait_median_real_s, item.wait_median_sim_s)))
    means = sum(1 for item in configurations if within(item.wait_mean_sim_s, item.wait_mean_real_s))
    both = sum(1 for item in configurations if within(item.wait_mean_sim_s, item.wait_mean_real_s)
               and within(item.wait_median_sim_s, item.wait_median_real_s))
    print("configurations with the mean wait within 5 %: {} of {}; mean and median: {}".format(
        means, len(configurations), both))


def _real_sim(real, simulated):
    difference = relative_difference(simulated, real)
    return "{:.1f} / {:.1f}{}".format(real, simulated, "" if difference is None else " ({:+.1f} %)".format(
        100 * difference))


def with_server_log(folder, accounting, site):
    """``(jobs, starts within 2 s, mean within, both within, updated, decisions, orders)`` of the whole run
    replayed with the recording's ``server.log`` (``--server-log``), ``updated`` being ``(decisions, agreeing,
    usage)`` given the MoMs' updates that log records, None when it records none (and with fairshare off),
    ``decisions`` ``(decisions, agreeing, kind)`` given the log, whatever it records, and ``orders`` ``(compared,
    in order)`` against its ``sched.log`` (``--sched-log``), None without one; None when it kept no log."""
    path = os.path.join(folder, SERVER_LOG)
    if not os.path.exists(path):
        return None
    server_log = read_server_log([path], RejectPrinter(0))
    outcomes, _, _ = replay_outcomes(accounting, site, server_log=server_log)
    mean = within(outcomes.wait_mean_sim_s, outcomes.wait_mean_real_s)
    checks = check_decisions(accounting, site, server_log=server_log)
    summary = summarise(checks)
    orders = None
    if os.path.exists(os.path.join(folder, SCHED_LOG)):
        compared = check_orders(checks, read_sched_log([os.path.join(folder, SCHED_LOG)], RejectPrinter(0)))
        orders = (len(compared), sum(1 for order in compared if order.in_order))
    updated = None
    if has_updates(server_log) and site.policy.fairshare is not None:
        updated = (summary.decisions, summary.agreeing, usage_errors(folder, accounting, site, server_log))
    return (outcomes.jobs, outcomes.starts_within_2s, mean,
            mean and within(outcomes.wait_median_sim_s, outcomes.wait_median_real_s), updated,
            (summary.decisions, summary.agreeing, kind_of(site)), orders)


def recordings(folder):
    """The recording folders in ``folder``, by name."""
    return [os.path.join(folder, name) for name in sorted(os.listdir(folder))
            if os.path.isdir(os.path.join(folder, name, "accounting"))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a folder of recordings (each with accounting/ and site/)")
    parser.add_argument("--workers", type=int, default=2, help="processes checking recordings at once (default 2)")
    arguments = parser.parse_args(argv)
    folders = recordings(arguments.folder) if os.path.isdir(arguments.folder) else []
    if not folders:
        print("fidelity_totals: {}: no recording folder (with accounting/) in it".format(arguments.folder),
              file=sys.stderr)
        return 2
    with ProcessPoolExecutor(max(1, arguments.workers)) as pool:
        rows = list(pool.map(check, folders))
    print("{:<34} {:>10} {:>6} {:>11}  {:<6} {}".format("recording", "decisions", "jobs", "within 2 s", "mean",
                                                         "mean and median"))
    for name, _, decisions, agreeing, jobs, within_2s, mean, both, *_ in rows:
        print("{:<34} {:>10} {:>6} {:>11}  {:<6} {}".format(name, "{}/{}".format(agreeing, decisions), jobs,
                                                             within_2s, "yes" if mean else "no",
                                                             "yes" if both else "no"))
    print()
    print("{} recordings".format(len(rows)))
    for kind in KINDS:
        of_kind = [row for row in rows if row[1] == kind]
        if of_kind:
            decisions, agreeing = sum(row[2] for row in of_kind), sum(row[3] for row in of_kind)
            print("decisions agreeing, {} ({} recording{}): {} of {} ({:.1f} %)".format(
                kind, len(of_kind), "" if len(of_kind) == 1 else "s", agreeing, decisions,
                100.0 * agreeing / decisions if decisions else 100.0))
    print("starts within 2 s: {} of {}".format(sum(row[5] for row in rows), sum(row[4] for row in rows)))
    print("mean wait within 5 %: {} recordings; mean and median: {}".format(sum(row[6] for row in rows),
                                                                           sum(row[7] for row in rows)))
    light = [row for row in rows if "-light" in row[0]]
    short = [row[0] for row in light if row[5] < LIGHT_WITHIN_2S * row[4]]
    print("lightly loaded with under 95 % of starts within 2 s: {} of {}{}".format(
        len(short), len(light), " ({})".format(", ".join(short)) if short else ""))
    print_pooled(pooled([(row[12], row[5], row[11]) for row in rows]))
    logged = [(row[0], row[10]) for row in rows if row[10] is not None]
    if logged:
        short = [name for name, (jobs, within_2s, _, _, _, _, _) in logged
                 if "-light" in name and within_2s < LIGHT_WITHIN_2S * jobs]
        print("with the server's log ({} recordings that kept it): starts within 2 s: {} of {}; mean wait within 5 %: "
              "{}; mean and median: {}; lightly loaded under 95 %: {} of {}".format(
                  len(logged), sum(item[1] for _, item in logged), sum(item[0] for _, item in logged),
                  sum(item[2] for _, item in logged), sum(item[3] for _, item in logged), len(short),
                  sum(1 for name, _ in logged if "-light" in name)))
        for kind in KINDS[:2]:
            of_kind = [item[5] for _, item in logged if (item[5][2] == KINDS[0]) == (kind == KINDS[0])]
            if of_kind:
                decisions, agreeing = sum(item[0] for item in of_kind), sum(item[1] for item in of_kind)
                print("  decisions agreeing given the log (its scheduler cycles), {} ({} recordings): {} of {} "
                      "({:.1f} %)".format(kind, len(of_kind), agreeing, decisions, 100.0 * agreeing / decisions))
        ordered = [item for _, item in logged if item[6] is not None]
        if ordered:
            plain = [item[6] for item in ordered if item[5][2] == KINDS[0]]
            print("  orders as the scheduler's log ({} recordings that kept it): {} of {} agreeing decisions' cycles "
                  "considered the jobs in its order; {} of {} without fairshare".format(
                      len(ordered), sum(item[6][1] for item in ordered), sum(item[6][0] for item in ordered),
                      sum(item[1] for item in plain), sum(item[0] for item in plain)))
        updated = [(name, item[4]) for name, item in logged if item[4] is not None]
        if updated:
            decisions = sum(item[0] for _, item in updated)
            agreeing = sum(item[1] for _, item in updated)
            print("fairshare decisions agreeing given the MoMs' updates in the server's log ({} recordings whose "
                  "server logged them): {} of {} ({:.1f} %); from the accounting log alone: {} of {}".format(
                      len(updated), agreeing, decisions, 100.0 * agreeing / max(1, decisions),
                      sum(row[3] for row in rows if row[0] in dict(updated)),
                      sum(row[2] for row in rows if row[0] in dict(updated))))
            for name, item in updated:
                print("  {:<40} {}/{}".format(name, item[1], item[0]))
            print_usage([(name, item[2]) for name, item in updated if item[2]], "given the MoMs' updates")
    print_usage([(row[0], row[8]) for row in rows if row[8]])
    print_partings([apart for row in rows for apart in row[9]],
                   sum(row[2] - row[3] for row in rows if row[1] != KINDS[0]))
    return 0


def print_partings(aparts, disagreeing):
    """How near the two sides of the fairshare disagreements between two entities were (``aparts``, of the
    ``disagreeing`` fairshare decisions in all)."""
    if not aparts:
        return
    known = [apart for apart in aparts if apart is not None]
    print("fairshare disagreements between two entities: {} of {}; their usage per tree share where they part, "
          "apart by at most {}".format(len(aparts), disagreeing, ", ".join(
              "{:.0f} %: {}".format(100 * bound, sum(1 for apart in known if apart <= bound)) for bound in NEAR)))


def print_usage(usages, given=None):
    """The replayed fairshare usage against the servers' files: over ``usages`` (``(name, usage_errors)``),
    and per entity (unless ``given`` names what the usage was replayed from)."""
    if not usages:
        return
    off = sorted((sum(abs(replayed - real) for replayed, real in usage.values()) /
                  sum(real for _, real in usage.values()), name) for name, usage in usages)
    print("replayed fairshare usage{} against the server's usage file ({} recordings): {:.1f} % off on average, "
          "{:.1f} % at most ({})".format("" if given is None else " " + given, len(off),
                                         100 * sum(error for error, _ in off) / len(off), 100 * off[-1][0],
                                         off[-1][1]))
    if given is not None:
        return
    sides = {}
    for _, usage in usages:
        for entity, (replayed, real) in usage.items():
            if real:
                sides.setdefault(entity, []).append((replayed - real) / real)
    print("per entity, replayed against the server's (above, below: by more than 0.5 %):")
    for entity, errors in sorted(sides.items()):
        print("  {:<12} {:+6.1f} % on average; above in {}, below in {}, of {} recordings".format(
            entity, 100 * sum(errors) / len(errors), sum(1 for error in errors if error > USAGE_SIDE),
            sum(1 for error in errors if error < -USAGE_SIDE), len(errors)))


if __name__ == "__main__":
    sys.exit(main())
