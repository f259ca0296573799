"""``python -m replay simulate``: replay one trace on a simulated PBS, once per predictor.

    python -m replay simulate LOGS --predictors user,v1,v2,v3,clairvoyant

The same jobs (submission times, cores, walltimes, true runtimes) run on the
same simulated machine once per predictor; only the soft walltimes differ.
The recorded start and end times are not used. See docs/simulate.md.
"""

import sys

import numpy as np

from predictor.arguments import duration

from ..errors import ReplayError
from ..predictors import predictor_legend, resolve
from ..options import add_input_arguments, predictor_names, whole_number
from ..outputs import OutputFiles, check_outputs
from ..report import Report, column_legend, write_outputs
from ..traces.readers import read_trace
from .cluster import Cluster
from .engine import SchedulerSettings, run_frame, simulate_run
from .parallel import can_fork, default_workers, in_processes
from .extension import EXTENSIONS
from .policies import POLICIES
from .simulation_metrics import DEFAULT_BSLD_TAU_S, legend_meanings, schedule_tables

__all__ = ["add_arguments", "add_setting_arguments", "run", "DEFAULT_PREDICTORS", "MAX_BACKFILL_DEPTH", "settings_of",
           "machine_of", "observed_cores", "runnable_jobs", "job_table", "JOB_HEADER", "simulation_report",
           "recorded_notes"]

DEFAULT_PREDICTORS = ("user", "v1", "v2", "v3", "clairvoyant")
MAX_BACKFILL_DEPTH = 10 ** 6
_DEFAULTS = SchedulerSettings()


def add_arguments(parser):
    """The ``simulate`` options."""
    parser.add_argument("paths", nargs="+", metavar="LOGS",
                        help="PBS accounting files or YYYYMMDD directories, or one SWF file (.gz is fine)")
    add_input_arguments(parser)
    parser.add_argument("--predictors", type=predictor_names, default=DEFAULT_PREDICTORS, metavar="NAMES",
                        help="comma-separated (default: {}); ALGORITHM:param=value sets parameters, "
                             "e.g. tang:percentile=70".format(",".join(DEFAULT_PREDICTORS)))
    parser.add_argument("--policy", choices=sorted(POLICIES), default=_DEFAULTS.policy,
                        help="job order: fifo (submission, default), sjf (shortest soft walltime first), "
                             "small-first (jobs predicted small first, Zrigui et al.; a false small job is "
                             "killed at the divider and queued again as large), small-first-no-rerun (the same "
                             "without that), "
                             "wfp (Tang et al. eq. 5: (wait / planned)^3 x cores, highest first)")
    parser.add_argument("--backfill-depth", type=whole_number(0, MAX_BACKFILL_DEPTH), default=_DEFAULTS.backfill_depth,
                        metavar="N", help="top jobs with a reservation (default 1; 0: no backfilling)")
    parser.add_argument("--extension", choices=sorted(EXTENSIONS), default=_DEFAULTS.extension,
                        help="soft-walltime extension: pbs (S, 2S, 3S..., default) or double (S, 2S, 4S...)")
    add_setting_arguments(parser)
    parser.add_argument("--json", metavar="FILE", help="write the metrics as JSON ('-': stdout)")
    parser.add_argument("--csv", metavar="FILE", help="write the metrics as CSV ('-': stdout)")
    parser.add_argument("--jobs-csv", metavar="FILE",
                        help="write one row per job and predictor: simulated start/end and the estimates used")
    parser.add_argument("--plot", metavar="DIR", help="write PNG figures (wait and slowdown by runtime class)")
    parser.add_argument("--workers", type=whole_number(1, 1024), metavar="N",
                        help="processes simulating predictors side by side (default: one per predictor, at most "
                             "the CPUs this process may use); the output is the same for any N")


def add_setting_arguments(parser, defaults=True):
    """The machine, scheduler and metric options besides policy, backfill depth and extension: what a sweep
    keeps the same in every cell. ``defaults`` False (the sweep): None when not given."""
    def default(value):
        return value if defaults else None
    parser.add_argument("--cores", type=whole_number(1, 10 ** 9), metavar="N",
                        help="machine cores (default: the SWF header's MaxProcs, else the log's observed maximum)")
    parser.add_argument("--nodes", type=whole_number(1, 10 ** 7), metavar="N", help="node mode: N whole nodes (with "
                        "--cores-per-node); each job takes its requested nodes, or enough for its cores")
    parser.add_argument("--cores-per-node", type=whole_number(1, 10 ** 6), metavar="C",
                        help="cores per node in node mode")
    parser.add_argument("--no-strict-ordering", dest="strict_ordering", action="store_const", const=False,
                        default=default(_DEFAULTS.strict_ordering),
                        help="no top jobs: any job that fits runs (strict_ordering False)")
    parser.add_argument("--selective", action="store_const", const=True, default=default(_DEFAULTS.selective),
                        help="plan running jobs with their walltime, waiting jobs with soft walltimes "
                             "(Tang et al.'s selective adjustment)")
    parser.add_argument("--cycle-interval", dest="cycle_interval_s", type=whole_number(0, 10 ** 9),
                        default=default(_DEFAULTS.cycle_interval_s), metavar="SECONDS",
                        help="scheduler_iteration timer (default 600; 0: cycles on events only)")
    parser.add_argument("--default-walltime", dest="default_walltime_s", type=duration, metavar="[[HH:]MM:]SS",
                        help="walltime of jobs without one (default: none, as PBS: planned 5 years, never killed)")
    parser.add_argument("--bsld-tau", dest="bsld_tau_s", type=whole_number(1, 10 ** 9),
                        default=default(DEFAULT_BSLD_TAU_S), metavar="SECONDS",
                        help="bounded-slowdown threshold (default 10 s; Chlumsky & Klusacek used 600, "
                             "Zrigui et al. 60)")


def settings_of(args):
    """The ``SchedulerSettings`` the options give."""
    return SchedulerSettings(args.strict_ordering, args.backfill_depth, args.policy, args.extension,
                             args.selective, args.cycle_interval_s, args.default_walltime_s)


def observed_cores(jobs):
    """The most cores the log shows in use at once (recorded starts and ends), else the widest job."""
    events = sorted([(job.end_time, -job.ncpus) for job in jobs if job.start_time is not None and job.end_time]
                    + [(job.start_time, job.ncpus) for job in jobs if job.start_time is not None and job.end_time])
    if not events:
        return max(job.ncpus for job in jobs)
    in_use = np.cumsum([change for _, change in events])
    return max(int(in_use.max()), max(job.ncpus for job in jobs))


def machine_of(args, trace):
    """``(Cluster, note)``: node mode, ``--cores``, the SWF header, or the log's observed maximum."""
    if (args.nodes is None) != (args.cores_per_node is None):
        raise ReplayError("give both --nodes and --cores-per-node, or neither")
    if args.nodes is not None:
        return Cluster.of_nodes(args.nodes, args.cores_per_node), "machine: {} nodes of {} cores (--nodes)".format(
            args.nodes, args.cores_per_node)
    if args.cores is not None:
        return Cluster.of_cores(args.cores), "machine: {} cores (--cores)".format(args.cores)
    if trace.max_procs:
        return Cluster.of_cores(trace.max_procs), "machine: {} cores (SWF MaxProcs)".format(trace.max_procs)
    cores = observed_cores(trace.jobs)
    if cores < 1:
        raise ReplayError("no job in the log uses a core, so the machine's size cannot be told from it: "
                          "give --cores")
    return Cluster.of_cores(cores), "machine: {} cores (most in use at once in the log)".format(cores)


def runnable_jobs(jobs, cluster):
    """``(jobs that fit the machine, notes on the others)``."""
    kept = [job for job in jobs if cluster.can_run(job)]
    notes = ()
    if len(kept) < len(jobs):
        notes = ("{} jobs left out: they request no core, more than the machine holds, or a negative runtime".format(
            len(jobs) - len(kept)),)
    return kept, notes


def recorded_notes(jobs, names):
    """A note when ``recorded`` is asked for and the log has no soft walltime: it then plans as ``user`` does."""
    if "recorded" not in names or any(job.soft_walltime_s is not None for job in jobs):
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


def _settings_note(settings, tau_s):
    return ("scheduler: {} order, strict_ordering {}, backfill_depth {}, extension {}, {}scheduler_iteration {}, "
            "bsld tau {} s, default walltime {}".format(
                settings.policy, settings.strict_ordering, settings.backfill_depth, settings.extension,
                "selective, " if settings.selective else "", settings.cycle_interval_s or "off", tau_s,
                settings.default_walltime_s or "none (planned 5 years)"))


def simulation_report(title, notes, runs, cluster, tau_s):
    """``(Report, columns by predictor)`` for ``runs`` (``{predictor: [ScheduledJob]}``)."""
    tables, columns = schedule_tables(runs, tau_s, cluster)
    legend = column_legend(tables, legend_meanings(tau_s)) + predictor_legend(runs)
    return Report(title, tuple(notes), tuple(tables), legend), columns


JOB_HEADER = ["predictor", "job_id", "user", "queue", "submit_time", "ncpus", "walltime_s", "runtime_s",
              "start_time", "end_time", "wait_s", "bsld", "soft_walltime_queued_s", "soft_walltime_started_s",
              "reservation_time", "extensions", "killed", "reruns"]


def job_table(runs, columns):
    """``(header, rows)``: one row per predictor and job, what it ran and the estimates it was planned with."""
    def rows():
        for name, scheduled in runs.items():
            bsld = columns[name].bsld.tolist()
            for done, slowdown in zip(scheduled, bsld):
                job = done.job
                yield [name, job.job_id, job.user, job.queue, job.submit_time, job.ncpus, done.walltime_s,
                       done.runtime_s, done.start_time, done.end_time, done.start_time - job.submit_time, slowdown,
                       done.soft_walltime_queued_s, done.soft_walltime_started_s, done.reservation_time,
                       done.extensions, int(done.killed), done.reruns]
    return JOB_HEADER, rows()


def _simulate_all(jobs, names, cluster, settings, workers=1):
    """``{name: ScheduledRun}``, one run per predictor, in ``workers`` processes, with one progress bar over them
    all (on a TTY). The runs are the same whatever ``workers`` is: each is one deterministic simulation."""
    from ..progress import ProgressBar
    frame = run_frame(jobs, cluster, settings)
    progress = ProgressBar("simulating {} predictors".format(len(names)), unit="job")
    try:
        if workers <= 1 or len(names) <= 1 or not can_fork():
            return _serially(frame, names, cluster, settings, progress)
        return in_processes(frame, names, cluster, settings, min(workers, len(names)), progress)
    finally:
        progress.close()


def _serially(frame, names, cluster, settings, progress):
    runs, total = {}, len(frame.jobs) * len(names)
    for number, name in enumerate(names):
        def report(submitted, _, before=number * len(frame.jobs)):
            progress(before + submitted, total)
        runs[name] = simulate_run(frame, resolve(name), cluster, settings, report)
    return runs


def _workers(args):
    return args.workers or default_workers(len(args.predictors))


def run(args):
    """Read, simulate once per predictor, report; the exit status."""
    check_outputs(args, args.paths)
    trace, reporter = read_trace(args)
    cluster, machine_note = machine_of(args, trace)
    jobs, left_out = runnable_jobs(trace.jobs, cluster)
    if not jobs:
        raise ReplayError("no job fits the machine ({})".format(machine_note))
    settings = settings_of(args)
    recorded = recorded_notes(jobs, args.predictors)
    for note in recorded:
        sys.stderr.write(note + "\n")
    runs = _simulate_all(jobs, args.predictors, cluster, settings, _workers(args))
    title = "PBS scheduling simulation of {} ({} format, {} jobs)".format(
        trace.name, trace.source_format.upper(), len(jobs))
    notes = tuple(trace.stats.notes(len(trace.jobs))) + left_out + recorded + (
        machine_note, _settings_note(settings, args.bsld_tau_s)) + rerun_notes(runs, settings)
    report, columns = simulation_report(title, notes, runs, cluster, args.bsld_tau_s)
    if POLICIES[settings.policy].classifies:
        from ..classification.table import with_classification  # the classifier's forest: only for small-first
        report = with_classification(report, jobs)
    with OutputFiles() as files:
        write_outputs(args, report, job_table(runs, columns), files)
        if args.plot:
            from .simulation_plots import plot_simulation
            plot_simulation(files.directory(args.plot, "--plot"), trace.name, columns)
    return 1 if reporter.count else 0
