"""``simulate --site``: the trace's jobs through the PBS scheduler model configured as the site's own.

Instead of the built-in scheduler (fifo, sjf, ... on a pool of cores), each job goes through
``replay.pbs``: the site's sort formula, fairshare, run limits, queues and vnodes, read from its
files by ``replay.site``. The predictor sets soft walltimes as the hooks do: when the job is queued
(queuejob) and again when it starts (runjob), from the completed jobs the simulation has produced
so far. PBS's own extension rule applies (whole soft walltimes, capped at the walltime), and a job
still running at its walltime is killed there.

A job asks for one chunk of its cores; with a node count, as many chunks as nodes, one per host
(``place=scatter``), when the machine has that many hosts; when no vnode holds all its cores, one
chunk per core, placed freely (the trace readers keep a job's cores and nodes, not its ``select``).
A queue the site does not list gets PBS's defaults.
"""

import datetime
from typing import NamedTuple

from predictor.algorithms import clamp
from predictor.history import MemoryHistory
from predictor.jobs import HistoryRow

from ..pbs.cycle import Running, placed
from ..pbs.fairshare import Fairshare, simulated_resources_used
from ..pbs.formula import resource_values
from ..pbs.jobs import PbsJob, planned_duration
from ..pbs.mom_polls import MANY_HOSTS
from ..pbs.placement import Machine
from ..pbs.resources import Chunk, Place
from ..pbs.run import Hooks, simulate_run
from ..pbs.vnodes import Vnode, moms_of
from ..shared.errors import ReplayError
from .cluster import Cluster
from .engine import held_s, requested_s
from .runs import machine_of, runnable_jobs
from .schedule import ScheduledJob

__all__ = ["SiteMachine", "SiteInputs", "WarmUp", "warm_up", "warm_up_note", "site_machine", "site_vnodes",
           "site_inputs", "site_notes", "unstarted_notes",
           "pbs_jobs", "simulate_site", "simulate_warmed"]

DEFAULT_QUEUE = "workq"
DEFAULT_PROJECT = "_pbs_project_default"


class SiteMachine(NamedTuple):
    """What a site run needs besides the jobs: the policy, the vnodes, the scheduler timer."""

    policy: object
    vnodes: tuple
    scheduler_iteration_s: int

    def machine(self):
        """The placement model on these vnodes with the resources the site's scheduler checks."""
        return Machine(self.vnodes, self.policy.resources_checked, node_sort_key=self.policy.node_sort_key)

    @property
    def cores(self):
        """The ncpus of every vnode together."""
        return sum(int(vnode.amount("ncpus") or 0) for vnode in self.vnodes)


def site_machine(site, vnodes=None, scheduler_iteration_s=None):
    """A ``SiteMachine`` from a ``replay.site`` Site; ``vnodes`` when the site's folder has none."""
    return SiteMachine(site.policy, tuple(site.vnodes) or tuple(vnodes or ()),
                       site.scheduler_iteration_s if scheduler_iteration_s is None else scheduler_iteration_s)


def _chunks(job, widest, hosts):
    nodes = job.nodes or 1
    if 1 < nodes <= hosts and job.ncpus % nodes == 0 and job.ncpus // nodes <= widest:
        return (Chunk(nodes, (("ncpus", job.ncpus // nodes),)),), Place("scatter")
    if job.ncpus <= widest:
        return (Chunk(1, (("ncpus", job.ncpus),)),), Place("pack")
    return (Chunk(job.ncpus, (("ncpus", 1),)),), Place("free")


def pbs_jobs(jobs, vnodes, default_walltime_s=None):
    """The trace's jobs (sorted by submission) as ``PbsJob``s asking for what their logs say; a job runs for
    its occupancy, cut at its walltime (where PBS kills it)."""
    widest = max(int(vnode.amount("ncpus") or 0) for vnode in vnodes)
    hosts = len({vnode.host for vnode in vnodes})
    converted = []
    for index, job in enumerate(sorted(jobs, key=lambda job: job.submit_time)):
        walltime = requested_s(job) or default_walltime_s
        chunks, place = _chunks(job, widest, hosts)
        converted.append(PbsJob(index, job.job_id, job.user, job.group or job.user,
                                job.project or DEFAULT_PROJECT, job.queue or DEFAULT_QUEUE, chunks, place, walltime,
                                None, job.submit_time, job.submit_time, held_s(job, walltime),
                                resources=(("ncpus", job.ncpus),)))
    return converted


class _PredictorHooks(Hooks):
    """The hooks as deployed: the predictor's soft walltime at queuejob and again at runjob, from the
    completed jobs of the run so far; each end adds the job to its user's history."""

    def __init__(self, predictor, trace_jobs):
        self.predictor, self.trace_jobs = predictor, trace_jobs
        self.history = MemoryHistory(max(predictor.window, 1))
        self.learner = predictor.learner(trace_jobs) if predictor.learner is not None else None
        self.queued_soft, self.started_soft, self.first_reservation = {}, {}, {}

    def _soft(self, job, now):
        trace_job = self.trace_jobs[job.index]
        window = self.predictor.window
        if self.learner is not None:
            soft = self.learner.estimate(trace_job, now)
        else:
            soft = self.predictor.estimate(self.history.recent(job.user, window) if window else (), trace_job)
        return None if soft is None else clamp(int(soft), job.walltime_s)

    def queued(self, job, now):
        soft = self.queued_soft[job.index] = self._soft(job, now)
        return job._replace(soft_walltime_s=soft)

    def started(self, job, now):
        soft = self.started_soft[job.index] = self._soft(job, now)
        return job._replace(soft_walltime_s=soft)

    def reserved(self, job, start, now):
        self.first_reservation.setdefault(job.index, start)

    def ended(self, job, now):
        self.completed(self.trace_jobs[job.index], job, now)

    def completed(self, trace_job, job, now):
        """``job`` (the ``PbsJob`` of ``trace_job``) ended at ``now``: the jobobit hook records it."""
        runtime = min(trace_job.runtime_s, job.runtime_s)
        if self.learner is not None:
            self.learner.observe(trace_job, now, runtime)
        if self.predictor.window:
            self.history.add_row(job.user, HistoryRow(now, job.name, runtime, job.walltime_s))


def _extensions(job, soft, held):
    """How many times PBS extended the job's soft walltime while it ran ``held`` seconds."""
    if not soft or held <= soft:
        return 0
    return max(0, -(-planned_duration(job._replace(soft_walltime_s=soft), held) // soft) - 1)


def simulate_site(trace_jobs, predictor, site_machine, default_walltime_s=None, latency_s=0, fairshare=None,
                  history=(), running=()):
    """The trace's jobs scheduled once by the site's PBS with ``predictor``'s soft walltimes: a list of
    ``ScheduledJob`` in submission order (jobs the model never started are left out). ``fairshare``: the
    usage to start from (a copy is charged; default none yet); ``history``: ``(trace job, PbsJob, end)`` of
    jobs completed before, in end order, which the predictor's history holds from the start; ``running``:
    ``Running`` items of jobs already running, which hold their vnodes until their end (a warm-up's)."""
    trace_jobs = sorted(trace_jobs, key=lambda job: job.submit_time)
    jobs = pbs_jobs(trace_jobs, site_machine.vnodes, default_walltime_s)
    hooks = _PredictorHooks(predictor, trace_jobs)
    for trace_job, job, end in history:
        hooks.completed(trace_job, job, end)
    policy = site_machine.policy
    if fairshare is not None:
        fairshare = fairshare.copy()
    elif policy.fairshare is not None:
        fairshare = Fairshare(policy.fairshare, moms=moms_of(site_machine.vnodes))
    runs = simulate_run(policy, site_machine.machine(), jobs, site_machine.scheduler_iteration_s, latency_s,
                        fairshare, hooks=hooks, running_at_start=running)
    scheduled = []
    for job in jobs:
        run = runs.get(job.name)
        if run is None:
            continue
        trace_job, held = trace_jobs[job.index], run.end - run.start
        soft = hooks.started_soft.get(job.index)
        scheduled.append(ScheduledJob(trace_job, run.start, run.end, held, trace_job.ncpus, job.walltime_s,
                                      hooks.queued_soft.get(job.index), soft, hooks.first_reservation.get(job.index),
                                      _extensions(job, soft, held),
                                      job.walltime_s is not None and trace_job.runtime_s > job.walltime_s))
    return scheduled


class WarmUp(NamedTuple):
    """Fairshare warmed up on the start of a log: the usage its jobs charged as they ran, decayed to
    ``until``; the jobs left to simulate (submitted from ``until`` on); how many jobs charged usage, and how
    many of them still ran at ``until`` (charged up to it); ``running``: ``Running`` items of those the vnodes
    hold at ``until`` (placed as PBS would place them on free vnodes, in start order), which hold their vnodes
    in the simulation until their logged end; ``history``: ``(trace job, PbsJob, end)`` of the jobs that ended
    before ``until``, in end order, as the hooks' database holds them when the simulation starts."""

    fairshare: object
    until: int
    jobs: list
    charged: int
    running_at_end: int
    history: tuple = ()
    running: tuple = ()


def warm_up(trace_jobs, site_machine, warm_up_s, default_walltime_s=None):
    """The ``WarmUp`` of the first ``warm_up_s`` after the first submission: each job submitted then that ran
    (recorded start and end) charges ``fairshare_usage_res`` over its run up to the end of the warm-up, at its
    end, with the site's decay in between, as PBS's scheduler would have charged it."""
    trace_jobs = sorted(trace_jobs, key=lambda job: job.submit_time)
    until = trace_jobs[0].submit_time + warm_up_s if trace_jobs else 0
    warm = [job for job in trace_jobs if job.submit_time < until]
    fairshare = Fairshare(site_machine.policy.fairshare, moms=moms_of(site_machine.vnodes))
    ran = [(trace, job) for trace, job in zip(warm, pbs_jobs(warm, site_machine.vnodes, default_walltime_s))
           if trace.start_time is not None and trace.end_time is not None and trace.start_time < until]
    runs = [(min(trace.end_time, until), trace.start_time, job) for trace, job in ran]
    history = tuple((trace, job, trace.end_time) for trace, job in sorted(
        ran, key=lambda pair: (pair[0].end_time, pair[1].index)) if trace.end_time < until)
    for charged_at, start, job in sorted(runs, key=lambda run: (run[0], run[2].index)):
        fairshare.decay(charged_at)
        values = resource_values(job)
        values.update(simulated_resources_used(job, charged_at - start))
        fairshare.charge(fairshare.entity(job), max(0.0, fairshare.usage_value(values) - fairshare.usage_value({})))
    fairshare.decay(until)
    running = _running_at(site_machine, [(trace, job) for trace, job in ran if trace.end_time > until], until)
    fairshare.seen_running(until, running)
    return WarmUp(fairshare, until, [job for job in trace_jobs if job.submit_time >= until], len(runs),
                  sum(1 for charged_at, start, job in runs if charged_at == until), history, running)


def simulate_warmed(trace_jobs, predictor, site_machine, default_walltime_s=None, warmed=None):
    """``simulate_site`` from the ``WarmUp`` ``warmed``: its usage, history and running jobs (None: from
    nothing)."""
    if warmed is None:
        return simulate_site(trace_jobs, predictor, site_machine, default_walltime_s)
    return simulate_site(trace_jobs, predictor, site_machine, default_walltime_s, fairshare=warmed.fairshare,
                         history=warmed.history, running=warmed.running)


def _running_at(site_machine, ran, until):
    """``Running`` items of the jobs of ``ran`` (``(trace job, PbsJob)`` still running at ``until``) that find
    room, in start order, numbered below every simulated job."""
    ran = sorted(ran, key=lambda pair: (pair[0].start_time, pair[1].index))
    jobs = [job._replace(index=number - len(ran)) for number, (_, job) in enumerate(ran)]
    starts = {job.name: trace.start_time for (trace, _), job in zip(ran, jobs)}
    return tuple(Running(job, starts[job.name], allocation, process_s=job.runtime_s)
                 for job, allocation in placed(site_machine.policy, site_machine.machine(), jobs, until))


def warm_up_note(warmed):
    """The report's line on a fairshare warm-up."""
    return ("fairshare warm-up: {} jobs that ran before {} charged their usage ({} still running then, charged up "
            "to it, {} of them holding their vnodes here until their logged end), and the {} that ended before it "
            "are the predictors' history; {} jobs submitted from then on are simulated".format(
                warmed.charged, _utc(warmed.until), warmed.running_at_end, len(warmed.running), len(warmed.history),
                len(warmed.jobs)))


def _utc(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def site_vnodes(site, trace, cores=None, nodes=None, cores_per_node=None):
    """``(vnodes, note)``: the site's vnodes in service; else ``nodes`` vnodes of ``cores_per_node`` cpus, one
    per host; else one vnode of ``cores``, of the SWF header's MaxProcs or of the most cores the log shows in use
    at once (as without ``--site``)."""
    if site.vnodes:
        return site.vnodes, "machine: {} vnodes of the site's pbsnodes.json, {:,} cpus".format(
            len(site.vnodes), sum(int(vnode.amount("ncpus") or 0) for vnode in site.vnodes))
    if nodes is not None and cores_per_node is not None:
        vnodes = tuple(Vnode("node{}".format(number), "node{}".format(number), (("ncpus", cores_per_node),))
                       for number in range(1, nodes + 1))
        return vnodes, "machine: {} vnodes of {} cpus, one per host (--nodes)".format(nodes, cores_per_node)
    cluster, note = machine_of(trace, cores)
    return (Vnode("node1", "node1", (("ncpus", cluster.cores),), mom=MANY_HOSTS),), note + ", as one vnode"


class SiteInputs(NamedTuple):
    """What every predictor of one trace runs on with ``--site``: the same for simulate and a sweep's cells."""

    machine: SiteMachine
    cluster: Cluster
    jobs: list
    left_out: tuple
    machine_note: str


def site_inputs(site, trace, cores=None, nodes=None, cores_per_node=None):
    """The ``SiteInputs`` of ``trace`` on ``site`` (``site_vnodes`` sizes the machine); ReplayError when no job
    fits it."""
    vnodes, machine_note = site_vnodes(site, trace, cores, nodes, cores_per_node)
    machine = site_machine(site, vnodes)
    cluster = Cluster.of_cores(machine.cores)
    jobs, left_out = runnable_jobs(trace.jobs, cluster)
    if not jobs:
        raise ReplayError("no job fits the machine ({})".format(machine_note))
    return SiteInputs(machine, cluster, jobs, left_out, machine_note)


def unstarted_notes(runs, jobs):
    """A note per predictor whose run left jobs unstarted (``runs``: ``{name: [ScheduledJob]}``)."""
    return tuple("predictor {}: {:,} jobs never started (they can never run on these vnodes)".format(
        name, len(jobs) - len(done)) for name, done in runs.items() if len(done) < len(jobs))


def site_notes(site):
    """The report's lines on the site: the scheduler used, and what its files hold that is not modelled."""
    return ("scheduler: the site's PBS (--site), its soft walltimes extended by PBS's rule, jobs killed at "
            "their walltime",) + tuple(site.notes())
