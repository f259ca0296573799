"""``python -m replay simulate``: replay one trace on a simulated PBS, once per predictor.

    python -m replay simulate LOGS --predictors user,v1,v2,v3,clairvoyant

See ``runs.py`` for what is simulated, and docs/simulate.md.
"""

import sys

from predictor.cmdline.arguments import duration, whole_number
from predictor.cmdline.outputs import OutputPaths, check_outputs, publish
from predictor.cmdline.progress import ProgressBar
from predictor.errors import UsageError

from ..shared.errors import ReplayError
from ..shared.options import add_input_arguments, add_wide_argument, predictor_names
from ..shared.predictors import resolved
from ..traces.readers import read_trace
from .engine import SchedulerSettings
from .extension import EXTENSIONS
from .metrics import DEFAULT_BSLD_TAU_S
from .parallel import default_workers
from .policies import POLICIES
from .runs import (
    DEFAULT_PREDICTORS,
    MAX_BACKFILL_DEPTH,
    job_table,
    machine_of,
    narrowed,
    recorded_notes,
    rerun_notes,
    runnable_jobs,
    settings_note,
    simulate_all,
    simulation_report,
)
from .tool_use import with_tool_use

__all__ = ["SUMMARY", "EXAMPLES", "SITE_DECIDED", "add_arguments", "add_setting_arguments", "settings_of",
           "refuse_with_site", "refuse_warm_up", "run"]

SUMMARY = "replay a trace through a simulated PBS scheduler"
EXAMPLES = ("python -m replay simulate traces/hpc2n-2002-accounting",
            "python -m replay simulate accounting/ --site site/ --predictors user,v3",
            "python -m replay simulate trace.swf --predictors user,v3 --backfill-depth 2 --json out.json --plot figs/")

_DEFAULTS = SchedulerSettings()


def add_arguments(parser):
    """The ``simulate`` options."""
    parser.add_argument("paths", nargs="+", metavar="LOGS",
                        help="PBS accounting files or YYYYMMDD directories, or one SWF file (.gz is fine)")
    add_input_arguments(parser)
    parser.add_argument("--predictors", type=predictor_names, default=resolved(DEFAULT_PREDICTORS), metavar="NAMES",
                        help="comma-separated (default: {}); ALGORITHM:param=value sets parameters, "
                             "e.g. tang:percentile=70".format(",".join(DEFAULT_PREDICTORS)))
    parser.add_argument("--policy", choices=sorted(POLICIES),
                        help="job order: fifo (submission, default), sjf (shortest soft walltime first: SPF), "
                             "saf (smallest planned area first), wfp (Tang et al. eq. 5: (wait / planned)^3 x "
                             "cores, highest first); small-first (jobs predicted small first, Zrigui et al., "
                             "over fifo; a false small job is killed at the divider and queued again as large), "
                             "small-first-sjf, -saf, -wfp (over those orders), each also -no-rerun (without the "
                             "kill)")
    parser.add_argument("--starvation-threshold", dest="starvation_threshold_s", type=duration,
                        metavar="[[HH:]MM:]SS", help="ours, off by default: a job waiting this long goes to the "
                                                     "head of the queue, whatever the policy (e.g. 24:00:00)")
    parser.add_argument("--runjob-after-queued", dest="runjob_after_queued_s", type=duration,
                        metavar="[[HH:]MM:]SS", help="runjob predicts again only for jobs that waited this long "
                                                     "(CESNET's production hook: 01:00:00); default: every job")
    parser.add_argument("--backfill-depth", type=whole_number(0, MAX_BACKFILL_DEPTH), metavar="N",
                        help="top jobs with a reservation (default 1; 0: no backfilling)")
    parser.add_argument("--extension", choices=sorted(EXTENSIONS),
                        help="soft-walltime extension: pbs (S, 2S, 3S..., default), double (S, 2S, 4S...), or "
                             "Rubio et al.'s corrections simple (+1 h at each limit reached) and power "
                             "(+15 min, +30 min, +1 h ... each time the limit is reached)")
    add_setting_arguments(parser, defaults=False)
    parser.set_defaults(bsld_tau_s=DEFAULT_BSLD_TAU_S)  # the scheduler's settings stay None: settings_of
    parser.add_argument("--site", metavar="DIR",
                        help="schedule as the site's own PBS does: a folder with qmgr.txt, sched_config, "
                             "resource_group and pbsnodes.json, each optional (docs/site.md); the sort formula, "
                             "fairshare, run limits, queues and vnodes come from there: --policy, "
                             "--backfill-depth, --extension, --no-strict-ordering, --selective, --cycle-interval, "
                             "--starvation-threshold and --runjob-after-queued are refused")
    parser.add_argument("--fairshare-warm-up", dest="fairshare_warm_up_s", type=duration, metavar="[[HH:]MM:]SS",
                        help="with --site and fairshare: the jobs of this first stretch of the log are not "
                             "simulated; the usage they charged as they ran (decayed as the site decays it) is "
                             "where the simulation of the later jobs starts from, and those that ended are the "
                             "predictors' history (e.g. 168:00:00)")
    parser.add_argument("--json", metavar="FILE", help="write the metrics as JSON ('-': stdout)")
    parser.add_argument("--csv", metavar="FILE", help="write the metrics as CSV ('-': stdout)")
    parser.add_argument("--jobs-csv", metavar="FILE",
                        help="write one row per job and predictor: simulated start/end and the estimates used")
    parser.add_argument("--plot", metavar="DIR", help="write PNG figures (wait and slowdown by runtime class)")
    add_wide_argument(parser)
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
    """The ``SchedulerSettings`` the options give: the command line's values, once, the defaults' for the others."""
    given = {field: getattr(args, field) for field in _DEFAULTS._fields if getattr(args, field) is not None}
    return _DEFAULTS._replace(**given)


SITE_DECIDES = ("not with --site: the site's PBS decides them (its qmgr.txt and sched_config; soft walltimes "
                "extended by PBS's rule)")
SITE_DECIDED = {"policy": "--policy", "backfill_depth": "--backfill-depth", "extension": "--extension",
                "strict_ordering": "--no-strict-ordering", "selective": "--selective",
                "cycle_interval_s": "--cycle-interval", "starvation_threshold_s": "--starvation-threshold",
                "runjob_after_queued_s": "--runjob-after-queued"}
"""The built-in scheduler's options (dest -> option), which a site's own configuration replaces."""


def refuse_with_site(args):
    """UsageError naming the options of ``SITE_DECIDED`` the command line gave: with --site they would be
    ignored."""
    given = [option for dest, option in SITE_DECIDED.items() if getattr(args, dest, None) is not None]
    if given:
        raise UsageError("{}: {}".format(" ".join(given), SITE_DECIDES))


def refuse_warm_up(warm_up_s, site):
    """UsageError when ``--fairshare-warm-up`` (``warm_up_s``) is given without a site (``site`` None) or with a
    site whose fair_share is off: there would be no usage to warm up."""
    if warm_up_s is None:
        return
    if site is None:
        raise UsageError("--fairshare-warm-up: only with --site (it warms up the site's fairshare)")
    if site.policy.fairshare is None:
        raise UsageError("--fairshare-warm-up: the site's sched_config has fair_share off")


def _workers(args):
    return args.workers or default_workers(len(args.predictors))


def run(args):
    """Read, simulate once per predictor, report; the exit status (1: some lines were malformed)."""
    if args.site is not None:
        refuse_with_site(args)
    outputs = check_outputs(OutputPaths(args.json, args.csv, args.jobs_csv, args.plot),
                            list(args.paths) + ([args.site] if args.site else []))
    site = _read_site(args.site)
    refuse_warm_up(args.fairshare_warm_up_s, site)
    # The built-in scheduler keeps the jobs as columns from the reader to the engine (frame.py).
    trace, rejects = read_trace(args.paths, args.format, args.max_errors, as_columns=site is None)
    if site is not None:
        return _run_site(args, site, outputs, trace, rejects)
    trace = narrowed(trace)
    cluster, machine_note = machine_of(trace, args.cores, args.nodes, args.cores_per_node)
    jobs, left_out = runnable_jobs(trace.jobs, cluster)
    if not jobs:
        raise ReplayError("no job fits the machine ({})".format(machine_note))
    settings = settings_of(args)
    recorded = recorded_notes(jobs, args.predictors)
    for note in recorded:
        sys.stderr.write(note + "\n")
    runs = simulate_all(jobs, args.predictors, cluster, settings, _workers(args))
    title = "PBS scheduling simulation of {} ({} format, {} jobs)".format(
        trace.name, trace.source_format.upper(), len(jobs))
    notes = tuple(trace.stats.notes(len(trace.jobs))) + left_out + recorded + (
        machine_note, settings_note(settings, args.bsld_tau_s)) + rerun_notes(runs, settings)
    report, columns = simulation_report(title, notes, runs, cluster, args.bsld_tau_s, args.predictors)
    report = with_tool_use(report, runs, columns, args.predictors)
    if POLICIES[settings.policy].classifies:
        from ..classification.table import with_classification  # the classifier's forest: only for small-first
        report = with_classification(report, jobs)
    publish(outputs, report, job_table(runs, columns), lambda directory: _plot(directory, trace, columns),
            wide=bool(args.wide))
    return 1 if rejects.count else 0


def _read_site(folder):
    if folder is None:
        return None
    from ..site import read_site
    return read_site(folder)


def _run_site(args, site, outputs, trace, rejects):
    """``--site``: every predictor through the site's own PBS scheduler (``site.py``)."""
    from .site import site_inputs, site_notes, unstarted_notes, warm_up, warm_up_note
    from .site_parallel import simulate_site_all
    inputs = site_inputs(site, trace, args.cores, args.nodes, args.cores_per_node)
    jobs, warmed, warm_notes = inputs.jobs, None, ()
    if args.fairshare_warm_up_s is not None:
        warmed = warm_up(jobs, inputs.machine, args.fairshare_warm_up_s, args.default_walltime_s)
        jobs, warm_notes = warmed.jobs, (warm_up_note(warmed),)
    recorded = recorded_notes(jobs, args.predictors)
    for note in recorded:
        sys.stderr.write(note + "\n")
    progress = ProgressBar("simulating {} predictors on the site's PBS".format(len(args.predictors)), unit="predictor")
    try:
        runs = simulate_site_all(jobs, args.predictors, inputs.machine, args.default_walltime_s,
                                 warmed, _workers(args), progress)
    finally:
        progress.close()
    title = "PBS scheduling simulation of {} on the site's PBS ({} format, {} jobs)".format(
        trace.name, trace.source_format.upper(), len(jobs))
    notes = (tuple(trace.stats.notes(len(trace.jobs))) + inputs.left_out + recorded + (inputs.machine_note,)
             + site_notes(site) + warm_notes + unstarted_notes(runs, jobs))
    report, columns = simulation_report(title, notes, runs, inputs.cluster, args.bsld_tau_s, args.predictors)
    report = with_tool_use(report, runs, columns, args.predictors)
    publish(outputs, report, job_table(runs, columns), lambda directory: _plot(directory, trace, columns),
            wide=bool(args.wide))
    return 1 if rejects.count else 0


def _plot(directory, trace, columns):
    from .plots import plot_simulation
    plot_simulation(directory, trace.name, columns)
