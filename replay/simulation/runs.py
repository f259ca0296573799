"""One trace simulated once per predictor: the machine it runs on, the runs, and their Report.

The same jobs (submission times, cores, walltimes, true runtimes) run on the
same simulated machine once per predictor; only the soft walltimes differ.
The recorded start and end times are not used. ``python -m replay simulate``
(``command.py``) and each cell of a sweep run these. See docs/simulate.md.
"""

import numpy as np

from predictor.cmdline.progress import ProgressBar
from predictor.cmdline.tables import Report, column_legend
from predictor.durations import format_duration
from predictor.errors import UsageError

from ..shared.errors import ReplayError
from ..shared.predictors import predictor_legend
from ..traces.columns import NONE, JobColumns
from ..traces.files import give_back_freed_memory
from .cluster import Cluster
from .engine import run_frame, simulate_run
from .frame import fitting, numbers
from .metrics import legend_meanings, schedule_tables
from .parallel import can_fork, in_processes
from .policies import POLICIES

__all__ = ["DEFAULT_PREDICTORS", "MAX_BACKFILL_DEPTH", "machine_of", "observed_cores", "narrowed", "runnable_jobs",
           "recorded_notes", "rerun_notes", "settings_note", "simulate_all", "simulation_report", "job_table",
           "JOB_HEADER"]

DEFAULT_PREDICTORS = ("user", "v1", "v2", "v3", "clairvoyant")
MAX_BACKFILL_DEPTH = 10 ** 6


def observed_cores(jobs):
    """The most cores the log shows in use at once (recorded starts and ends), else the widest job."""
    start, end = numbers(jobs, "start_time", NONE), numbers(jobs, "end_time", 0)
    ncpus = numbers(jobs, "ncpus")
    ran = (start != NONE) & (end != 0)
    if not ran.any():
        return int(ncpus.max())
    # At one instant ends (negative changes) come before starts: the order sorted() gives (time, change).
    times = np.concatenate((end[ran], start[ran]))
    changes = np.concatenate((-ncpus[ran], ncpus[ran]))
    in_use = np.cumsum(changes[np.lexsort((changes, times))])
    return max(int(in_use.max()), int(ncpus.max()))


def machine_of(trace, cores=None, nodes=None, cores_per_node=None):
    """``(Cluster, note)``: ``nodes`` of ``cores_per_node``, ``cores``, the SWF header, or the log's observed
    maximum, the first of them given."""
    if (nodes is None) != (cores_per_node is None):
        raise UsageError("give both --nodes and --cores-per-node, or neither")
    if nodes is not None:
        return Cluster.of_nodes(nodes, cores_per_node), "machine: {} nodes of {} cores (--nodes)".format(
            nodes, cores_per_node)
    if cores is not None:
        return Cluster.of_cores(cores), "machine: {} cores (--cores)".format(cores)
    if trace.max_procs:
        return Cluster.of_cores(trace.max_procs), "machine: {} cores (SWF MaxProcs)".format(trace.max_procs)
    cores = observed_cores(trace.jobs)
    if cores < 1:
        raise ReplayError("no job in the log uses a core, so the machine's size cannot be told from it: "
                          "give --cores")
    return Cluster.of_cores(cores), "machine: {} cores (most in use at once in the log)".format(cores)


def narrowed(trace):
    """``trace`` with its jobs held as a simulation needs them: a ``JobColumns``' times and runtimes in int32
    where they fit (``JobColumns.narrowed``), the submission times as they are (the ``RunFrame``'s own)."""
    if not isinstance(trace.jobs, JobColumns):
        return trace
    trace = trace._replace(jobs=trace.jobs.narrowed())
    give_back_freed_memory()  # the wide columns
    return trace


def runnable_jobs(jobs, cluster):
    """``(jobs that fit the machine, notes on the others)``: a ``JobColumns`` stays one (the very one when every
    job fits)."""
    fits = fitting(jobs, cluster)
    kept = jobs if fits.all() else (jobs.taken(np.flatnonzero(fits)) if isinstance(jobs, JobColumns)
                                    else [job for job, fit in zip(jobs, fits.tolist()) if fit])
    notes = ()
    if len(kept) < len(jobs):
        notes = ("{} jobs left out: they request no core, more than the machine holds, or a negative runtime".format(
            len(jobs) - len(kept)),)
    return kept, notes


def recorded_notes(jobs, predictors):
    """A note when ``recorded`` is asked for and the log has no soft walltime: it then plans as ``user`` does."""
    asked = "recorded" in [predictor.name for predictor in predictors]
    if not asked or (numbers(jobs, "soft_walltime_s", NONE) != NONE).any():
        return ()
    return ("no soft walltime recorded in the log: predictor 'recorded' plans every job with its walltime, "
            "as 'user' does",)


def rerun_notes(runs, settings):
    """With the small-first safeguard: per predictor, how many jobs it killed and queued again."""
    if not POLICIES[settings.policy].reruns_false_small:
        return ()
    return tuple("small-first safeguard, predictor {}: {:,} jobs predicted small ran past the divider and were "
                 "killed there and queued again as large ({:.1%} of the jobs)".format(
                     name, sum(1 for done in scheduled if done.reruns), _share(scheduled))
                 for name, scheduled in runs.items())


def _share(scheduled):
    return sum(1 for done in scheduled if done.reruns) / len(scheduled) if scheduled else 0.0


def settings_note(settings, tau_s):
    starvation = "" if settings.starvation_threshold_s is None else ", starvation threshold {} s (ours)".format(
        settings.starvation_threshold_s)
    if settings.runjob_after_queued_s is not None:
        starvation += ", runjob predicts again after {} s queued".format(settings.runjob_after_queued_s)
    return ("scheduler: {} order, strict_ordering {}, backfill_depth {}, extension {}, {}scheduler_iteration {}, "
            "bsld tau {} s, default walltime {}{}".format(
                settings.policy, settings.strict_ordering, settings.backfill_depth, settings.extension,
                "selective, " if settings.selective else "", settings.cycle_interval_s or "off", tau_s,
                settings.default_walltime_s or "none (planned 5 years)", starvation))


def simulation_report(title, notes, runs, cluster, tau_s, predictors):
    """``(Report, columns by predictor)`` for ``runs`` (``{predictor name: [ScheduledJob]}``) of ``predictors``."""
    tables, columns = schedule_tables(runs, tau_s, cluster)
    legend = column_legend(tables, legend_meanings(tau_s)) + predictor_legend(predictors)
    return Report(title, tuple(notes), tuple(tables), legend, summary=schedule_summary(tables[0])), columns


_NEXT_STEP = ("Soft walltimes change waits through backfilling: try --backfill-depth, --policy sjf, or 'python -m "
              "replay sweep' for a grid of settings; --plot DIR draws the waits by runtime class.")


_NAMED = {"backfill_depth": "backfill depth {}", "extension": "extension {}"}
"""How a sweep axis is named in a summary (the others by their value alone)."""


def schedule_summary(table, who=("predictor",), next_step=_NEXT_STEP):
    """Two lines on the first table: which row (``who`` names it) waited least and most on average, with
    their bounded slowdowns, then ``next_step``: what to try next."""
    keys = [column.key for column in table.columns]
    rows = [dict(zip(keys, row)) for row in table.rows if dict(zip(keys, row)).get("wait_mean_s") is not None]
    if len(rows) < 2:
        return ()
    ranked = sorted(rows, key=lambda row: (row["wait_mean_s"], [str(row[key]) for key in who]))

    def said(row):
        return "{} ({} mean wait, bounded slowdown {:.2f})".format(
            ", ".join(_NAMED.get(key, "{}").format(row[key]) for key in who),
            format_duration(int(round(row["wait_mean_s"]))), row["bsld_mean"])
    return ("the shortest mean wait is {}; the longest {}.".format(said(ranked[0]), said(ranked[-1])), next_step)


JOB_HEADER = ["predictor", "job_id", "user", "queue", "submit_time", "ncpus", "walltime_s", "runtime_s",
              "start_time", "end_time", "wait_s", "bsld", "soft_walltime_queued_s", "soft_walltime_started_s",
              "reservation_time", "extensions", "killed", "reruns"]


def job_table(runs, columns):
    """``(header, rows)``: one row per predictor and job, what it ran and the estimates it was planned with."""
    def rows():
        for name, scheduled in runs.items():
            for done, slowdown in zip(scheduled, _values(columns[name].bsld)):
                job = done.job
                yield [name, job.job_id, job.user, job.queue, job.submit_time, job.ncpus, done.walltime_s,
                       done.runtime_s, done.start_time, done.end_time, done.start_time - job.submit_time, slowdown,
                       done.soft_walltime_queued_s, done.soft_walltime_started_s, done.reservation_time,
                       done.extensions, int(done.killed), done.reruns]
    return JOB_HEADER, rows()


def _values(array_, chunk=1 << 14):
    """The values of a numpy array as Python numbers, a slice at a time (not one list of them all)."""
    for begin in range(0, len(array_), chunk):
        yield from array_[begin:begin + chunk].tolist()


def simulate_all(jobs, predictors, cluster, settings, workers=1):
    """``{name: ScheduledRun}``, one run per predictor, in ``workers`` processes, with one progress bar over them
    all (on a TTY). The runs are the same whatever ``workers`` is: each is one deterministic simulation."""
    frame = run_frame(jobs, cluster, settings)
    progress = ProgressBar("simulating {} predictors".format(len(predictors)), unit="job")
    try:
        if workers <= 1 or len(predictors) <= 1 or not can_fork():
            return _serially(frame, predictors, cluster, settings, progress)
        return in_processes(frame, predictors, cluster, settings, min(workers, len(predictors)), progress)
    finally:
        progress.close()


def _serially(frame, predictors, cluster, settings, progress):
    runs, total = {}, len(frame.jobs) * len(predictors)
    for number, predictor in enumerate(predictors):
        def on_progress(submitted, _, before=number * len(frame.jobs)):
            progress(before + submitted, total)
        runs[predictor.name] = simulate_run(frame, predictor, cluster, settings, on_progress)
    return runs
