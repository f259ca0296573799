"""The whole check: decisions, then the whole run replayed, against the logs."""

from typing import NamedTuple, Optional, Tuple

from ..shared.errors import TraceError
from .decisions import check_decisions, machine_of, new_fairshare, summarise
from .outcomes import compare_outcomes, reuse_latency_s

__all__ = ["Fidelity", "measure", "repeat_outcomes", "replay_outcomes", "replayed_jobs"]


class Fidelity(NamedTuple):
    """What the check found: each decision compared, their counts, the whole-run outcomes, the logs' reuse
    latency, the latency the replay used, and notes on jobs left out of the whole-run replay."""

    checks: tuple
    decisions: object
    outcomes: object
    log_latency_s: Optional[float]
    latency_s: int
    notes: Tuple[str, ...]
    starts: Tuple[tuple, ...] = ()  # (PbsJob, real start, replayed start or None) of each job the run replays


def replayed_jobs(accounting):
    """``(jobs, compared, notes)``: the PbsJobs the whole run replays (queued in the logs, with a run
    whose end is known; soft walltime as known at their real start; runtime the real ``end - start``),
    ``(name, eligible_time, real_start)`` of each, and what was left out and why."""
    jobs, compared, left_out = [], [], {}
    for record in accounting.jobs:
        reason = _left_out(record)
        if reason is not None:
            left_out[reason] = left_out.get(reason, 0) + 1
            continue
        first = record.runs[0]
        job = record.job_at(first.start_order)._replace(runtime_s=first.end - first.start)
        jobs.append(job)
        compared.append((job.name, job.eligible_time, first.start))
    notes = tuple("{} jobs {} (left out of the whole-run replay)".format(count, reason)
                  for reason, count in sorted(left_out.items()))
    return jobs, compared, notes


def _left_out(record):
    if not record.queued_order:
        return "running before the logs begin"
    if not record.runs:
        return "never ran (deleted, or still queued when the logs end)"
    if record.runs[0].end is None:
        return "still running when the logs end"
    if len(record.runs) > 1:
        return "rerun"
    return None


def measure(accounting, site, latency_s=0, decide=None, server_log=None):
    """The ``Fidelity`` of the model (``decide``, default the PBS model's cycle) with ``site`` on
    ``accounting``; the whole run replayed with ``latency_s`` between an end and the reuse, and with the order
    within a second of ``server_log`` (a ``server_log.ServerLog``) if given; the decisions with the fairshare
    usage of the server's cycles if that log records the MoMs' updates."""
    checks = check_decisions(accounting, site, decide, server_log=server_log)
    outcomes, notes, starts = replay_outcomes(accounting, site, latency_s, decide, server_log)
    return Fidelity(tuple(checks), summarise(checks), outcomes, reuse_latency_s(accounting), latency_s, notes,
                    starts)


def replay_outcomes(accounting, site, latency_s=0, decide=None, server_log=None):
    """``(outcomes, notes, starts)``: the whole run replayed by the model, each job's start against the logs';
    notes on the jobs left out; ``(PbsJob, real start, replayed start or None)`` of each job replayed. Ends of
    one second go in the order of their E records, and a job is exiting from its E record's second (the server
    hears of most ends then); with ``server_log``, each second's releases and ends go in
    the server's order, a job is exiting from its obit, holds its vnodes from its "Job Run" line to its
    "Exit_status" line, and is charged fairshare usage from its MoM's updates when the log records them
    (``replay.pbs.run.WithinSecond``)."""
    from ..pbs.run import RealRuns, simulate_run
    jobs, compared, notes = replayed_jobs(accounting)
    exiting = {record.job.name: record.runs[0].used_s for record in accounting.jobs
               if record.runs and record.runs[0].used_s is not None}
    obit = real_runs = None
    if server_log is None:
        # The server hears of a job's end (its obit) in the second of its E record for most jobs, often a second
        # after the process ended (docs/fidelity.md, "Exiting jobs"): exiting from then.
        obit = {record.job.name: record.runs[0].end - record.runs[0].start for record in accounting.jobs
                if record.job.name in exiting}
        within_second = _submissions_in_log_order(accounting)
        # The log has no record of a release, nor of when the server heard of an end: where a second leaves their
        # order open, it is read the way in which the model starts what the server started then (docs/fidelity.md).
        real_runs = RealRuns({record.job.name: (record.runs[0].start, record.runs[0].end, record.runs[0].allocation)
                              for record in accounting.jobs if record.runs})
    else:
        from .server_usage import log_offset_s
        offset = log_offset_s(accounting, server_log)
        real = {record.job.name: record.runs[0].start for record in accounting.jobs if record.runs}
        jobs, starts = _as_logged(jobs, accounting, server_log, offset)
        exiting = {name: used_s + real[name] - starts[name] if name in starts else used_s
                   for name, used_s in exiting.items()}  # the process still ends when it did
        within_second = _within_second(accounting, server_log, jobs, starts, offset)
    end_order = {record.job.name: record.runs[0].end_order for record in accounting.jobs
                 if record.runs and record.runs[0].end_order is not None}
    runs = simulate_run(site.policy, machine_of(site), jobs, site.scheduler_iteration_s, latency_s,
                        new_fairshare(site.policy, site.vnodes), decide, exiting_after_s=exiting,
                        cycle_per_event=True, end_order=end_order,
                        within_second=within_second, obit_after_s=obit, real_runs=real_runs)
    if real_runs is not None and real_runs.seconds:
        notes += ("whole-run replay: {} seconds on the server's state that the log leaves open (the order of a "
                  "release and an end or of several ends, a job exiting before its E record's second, a release whose "
                  "job the server started the next second); {} of them read otherwise than the first way, the reading "
                  "in which the model starts what the server started then".format(real_runs.seconds,
                                                                                  real_runs.reordered),)
    replayed = {name: run.start for name, run in runs.items()}
    starts = tuple((job, real_start, replayed.get(job.name)) for job, (_, _, real_start) in zip(jobs, compared))
    return compare_outcomes(compared, replayed), notes, starts


def _as_logged(jobs, accounting, server_log, offset):
    """``(jobs, starts)``: ``jobs`` each holding its vnodes from the second the server ran it to the second it
    finished it, as its log says (its seconds plus ``offset``), and each job's real start for the replay to match
    its own against. The server
    runs a job at the scheduler's request ("Job Run"), and its S record's start is that second or, when the
    execution host confirmed it later, the next; it frees the job's vnodes, and asks for the cycle that reuses
    them, once it has finished the job ("Exit_status"), in the second of its E record's end or the next. A job
    the log does not time keeps its records' times."""
    records = {record.job.name: record.runs[0] for record in accounting.jobs if record.runs}
    starts = {name: run.start for name, run in records.items() if run.start is not None}
    if not server_log.runs:
        return jobs, starts  # no "Job Run" line to read the log's clock against
    held = []
    for job in jobs:
        run = records[job.name]
        ran = server_log.runs.get(job.name)
        finished = server_log.finished_seconds.get(job.name)
        start = run.start if ran is None else min(run.start, ran[1] + offset)
        end = run.end if finished is None else max(run.end, finished + offset)
        starts[job.name] = start
        held.append(job._replace(runtime_s=end - start))
    return held, starts


def _submissions_in_log_order(accounting):
    """A ``WithinSecond`` from the accounting log alone, for the seconds in which a job was submitted eligible at
    once (``qsub`` without a hold: its Q record is its first eligible instant) and others ended: the server writes
    the Q record as it queues the job and the E record as it finishes one, so their order in the log is the order
    in which the server took them, and the cycles they asked for. Each such Q record and each E record of those
    seconds by its position; and every E record by its position (``recorded_end``), which places the cycle its end
    asked for after the S records before it, whose starts the execution host had confirmed by then. None when the
    logs have no E record."""
    from ..pbs.run import WithinSecond
    submitted = {record.job.name: (record.job.submit_time, record.queued_order) for record in accounting.jobs
                 if record.queued_order and _eligible_at_submission(record)}
    seconds = {second for second, _ in submitted.values()}
    recorded = {record.job.name: record.runs[0] for record in accounting.jobs
                if record.runs and record.runs[0].end_order is not None}
    if not recorded:
        return None
    ended = {name: run for name, run in recorded.items() if run.end in seconds}
    return WithinSecond({name: position for name, (_, position) in submitted.items()}, {},
                        {name: run.end_order for name, run in ended.items()},
                        {record.job.name: record.runs[0].start for record in accounting.jobs if record.runs},
                        {name: run.end for name, run in ended.items()},
                        confirmed={record.job.name: record.runs[0].start_order for record in accounting.jobs
                                   if record.runs},
                        recorded_end={name: (run.end, run.end_order) for name, run in recorded.items()})


def _eligible_at_submission(record):
    """Whether the job was submitted without a hold: eligible from its submission, not from a later release."""
    return record.job.eligible_time == record.job.submit_time


def _within_second(accounting, server_log, jobs, starts, offset):
    """The ``WithinSecond`` of ``server_log``: a job eligible from its submission (no hold) becomes eligible at
    its "Job Queued" line, a held one at its release."""
    from ..pbs.run import WithinSecond
    from .server_usage import reported_walltimes
    eligible = {record.job.name: server_log.queued[record.job.name] for record in accounting.jobs
                if record.job.name in server_log.queued and _eligible_at_submission(record)}
    eligible.update(server_log.released)
    return WithinSecond(eligible, server_log.obit, server_log.finished, starts,
                        {job.name: starts[job.name] + job.runtime_s for job in jobs}, server_log.cycles,
                        reported_walltimes(accounting, server_log, offset), _confirmations(accounting, server_log))


def _confirmations(accounting, server_log):
    """Job name -> the position in the server's log from which its start was confirmed: that of the first Q or E
    record after its S record in the accounting log that the server's log has too ("Job Queued", "Exit_status");
    the server writes the S record once the execution host has confirmed the start, and its log has no line of its
    own for that."""
    import bisect
    queued, finished = server_log.queued, server_log.finished
    events = sorted([(record.queued_order, queued[record.job.name]) for record in accounting.jobs
                     if record.job.name in queued] +
                    [(record.runs[0].end_order, finished[record.job.name]) for record in accounting.jobs
                     if record.runs and record.runs[0].end_order is not None and record.job.name in finished])
    orders = [order for order, _ in events]
    confirmed = {}
    for record in accounting.jobs:
        if record.runs:
            after = bisect.bisect_right(orders, record.runs[0].start_order)
            if after < len(events):
                confirmed[record.job.name] = events[after][1]
    return confirmed


def repeat_outcomes(first, second):
    """``Outcomes`` of ``second``, the same workload recorded again on the same server, against ``first``,
    measured as the model's are against the logs: the server against itself.

    Jobs are matched in submission order, and must ask for the same (user, queue, chunks, place). Clocks
    and releases differ between two recordings, so a job's start error is the difference of its waits (a
    wait runs from the job's eligible time), which is what a simulated start's error is too.
    """
    if len(first.jobs) != len(second.jobs):
        raise TraceError("not the same workload: {} jobs against {}".format(len(first.jobs), len(second.jobs)))
    names = {}
    for position, (one, other) in enumerate(zip(first.jobs, second.jobs), 1):
        if _request(one.job) != _request(other.job):
            raise TraceError("not the same workload: job {} in submission order is {} ({}) against {} ({})".format(
                position, one.job.name, one.job.user, other.job.name, other.job.user))
        names[other.job.name] = one.job
    _, compared, _ = replayed_jobs(first)
    _, again, _ = replayed_jobs(second)
    starts = {names[name].name: names[name].eligible_time + start - eligible for name, eligible, start in again}
    return compare_outcomes(compared, starts)


def _request(job):
    return job.user, job.queue, job.chunks, job.place
