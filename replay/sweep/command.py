"""``python -m replay sweep``: many simulate runs, here in parallel processes or as a PBS job array.

    python -m replay sweep [GRID OPTIONS] TRACE...             # run here, print one table
    python -m replay sweep --pbs DIR [GRID OPTIONS] TRACE...   # write a job array, print its qsub line
    python -m replay sweep collect DIR                         # merge the array's results into the table
    python -m replay sweep cell DIR INDEX                      # what each subjob runs

See docs/sweep.md.
"""

import argparse
import os
import shlex
import sys

import predictor
from predictor.cmdline.arguments import checked, duration, whole_number
from predictor.cmdline.outputs import OutputPaths, check_outputs, check_targets, publish
from predictor.cmdline.parser import examples_epilog
from predictor.errors import UsageError

from ..shared.options import add_input_arguments, add_wide_argument
from ..simulation.command import SITE_DECIDES, add_setting_arguments, refuse_warm_up, refuse_with_site
from ..simulation.extension import EXTENSIONS
from ..simulation.policies import POLICIES
from .arrayjob import outcomes, read_manifest, write_result, write_sweep
from .cells import SweepSettings, cell_result, check_trace, load_site
from .grid import BUILT_IN_AXES, DEFAULTS, GridError, expand, grid_of, parse_values, read_grid_file
from .local import default_jobs, run_cells
from .table import outcome_of, problem_lines, sweep_report

__all__ = ["SUMMARY", "EXAMPLES", "add_arguments", "run"]

SUMMARY = "many simulate runs over a grid, here or as a PBS job array"
EXAMPLES = ("python -m replay sweep --predictors v1,v3 --policy fifo,sjf --backfill-depth 1,10 "
            "traces/HPC2N-2002-subset.swf",
            "python -m replay sweep --pbs sweep1 --grid grid.txt --walltime 2:00:00   # then the qsub line it prints",
            "python -m replay sweep collect sweep1 --csv sweep1.csv --plot sweep1-figures")

_USAGE = """%(prog)s [GRID OPTIONS] TRACE...
       %(prog)s --pbs DIR [GRID OPTIONS] TRACE...
       %(prog)s collect DIR [--json FILE] [--csv FILE] [--plot DIR]"""

_DESCRIPTION = """Simulate every cell of a grid (traces x predictors x policies x backfill depths x extensions),
each as one 'simulate' run, and print one table with a row per cell. Here, in --jobs processes; or, with
--pbs DIR, as a PBS job array that 'collect DIR' merges into the same table. See docs/sweep.md."""

_OUTPUTS = ("json", "csv", "plot", "wide")
_PBS_ONLY = ("walltime", "queue", "python")
_VERB_ARGUMENTS = {"collect": 2, "cell": 3}


def _values(axis):
    return checked(lambda text: parse_values(axis, [value for value in text.split(",") if value.strip()]))


def add_arguments(parser):
    """The ``sweep`` options. Every default is None here: ``SweepSettings`` and ``DEFAULTS`` hold the values."""
    # Its own usage lines and description: sweep has verbs (collect, cell) besides the grid.
    parser.usage, parser.description, parser.epilog = _USAGE, _DESCRIPTION, examples_epilog(*EXAMPLES)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("paths", nargs="*", metavar="TRACE", help="SWF files, PBS accounting files or YYYYMMDD "
                        "directories: each one trace (a grid axis)")
    _grid_arguments(parser.add_argument_group("grid (each a comma-separated list; the cells are every combination)"))
    _shared_arguments(parser.add_argument_group("the same in every cell (as in 'simulate')"))
    local = parser.add_argument_group("running here")
    local.add_argument("--jobs", type=whole_number(1, 10 ** 4), metavar="N",
                       help="worker processes (default: the CPUs available, {})".format(default_jobs()))
    array = parser.add_argument_group("running as a PBS job array")
    array.add_argument("--pbs", metavar="DIR", help="write the sweep into the new directory DIR and print the "
                       "qsub line; nothing runs here")
    array.add_argument("--walltime", type=duration, metavar="[[HH:]MM:]SS", help="walltime of each subjob "
                       "(default 01:00:00)")
    array.add_argument("--queue", metavar="QUEUE", help="queue to submit to (default: the server's)")
    array.add_argument("--python", metavar="PATH", help="interpreter the subjobs run (default: the one running "
                       "this command; the job script names it)")
    outputs = parser.add_argument_group("outputs (here, or with collect)")
    outputs.add_argument("--json", metavar="FILE", help="write the table as JSON ('-': stdout)")
    outputs.add_argument("--csv", metavar="FILE", help="write the table as CSV ('-': stdout)")
    outputs.add_argument("--plot", metavar="DIR", help="write PNG bar charts of mean wait and mean slowdown")
    add_wide_argument(outputs)


def _grid_arguments(group):
    group.add_argument("--grid", metavar="FILE", help="a grid file (JSON, or 'key: a, b' lines); the options "
                       "below replace its lists")
    group.add_argument("--predictors", type=_values("predictors"), metavar="NAMES",
                       help="default: {}".format(",".join(DEFAULTS["predictors"])))
    group.add_argument("--policy", type=_values("policy"), metavar="NAMES",
                       help="among {} (default fifo)".format(",".join(sorted(POLICIES))))
    group.add_argument("--backfill-depth", dest="backfill_depth", type=_values("backfill_depth"), metavar="NS",
                       help="top jobs with a reservation, 0: no backfilling (default 1)")
    group.add_argument("--extension", type=_values("extension"), metavar="NAMES",
                       help="among {} (default pbs)".format(",".join(sorted(EXTENSIONS))))


def _shared_arguments(group):
    """simulate's own options, with no default: the values given are the ones ``SweepSettings`` takes."""
    add_input_arguments(group, defaults=False)
    add_setting_arguments(group, defaults=False)
    group.add_argument("--site", metavar="DIR", help="every cell schedules as the site's own PBS does, as 'simulate "
                       "--site' (qmgr.txt, sched_config, resource_group, pbsnodes.json; docs/site.md); the grid is "
                       "then traces x predictors: --policy, --backfill-depth, --extension, --no-strict-ordering, "
                       "--selective and --cycle-interval are refused")
    group.add_argument("--fairshare-warm-up", dest="fairshare_warm_up_s", type=duration, metavar="[[HH:]MM:]SS",
                       help="with --site and fairshare: in every cell, the jobs of this first stretch of the trace "
                            "are not simulated; the usage they charged as they ran is where the simulation of the "
                            "later jobs starts from, and those that ended are the predictors' history, as 'simulate "
                            "--fairshare-warm-up' (e.g. 168:00:00)")


_OPTION_OF = {"strict_ordering": "--no-strict-ordering", "cycle_interval_s": "--cycle-interval",
              "default_walltime_s": "--default-walltime", "bsld_tau_s": "--bsld-tau"}
"""Options whose ``dest`` is not their name."""


def _given(args, names):
    """The options among ``names`` (dests) that the command line gave."""
    return [_OPTION_OF.get(name, "--" + name.replace("_", "-")) for name in names
            if getattr(args, name, None) is not None]


def _only(args, verb, allowed):
    """Refuse options that ``verb`` does not take: they would be silently ignored."""
    taken = set(allowed) | {"paths"}
    extra = _given(args, sorted(name for name in vars(args) if name not in taken))
    if extra:
        raise UsageError("'sweep {}' takes no {} (the grid and settings are in DIR/manifest.json)".format(
            verb, " ".join(extra)))
    if len(args.paths) != _VERB_ARGUMENTS[verb]:
        raise UsageError("usage: sweep {}".format("collect DIR" if verb == "collect" else "cell DIR INDEX"))


def _settings(args):
    return SweepSettings(**{field: getattr(args, field) for field in SweepSettings._fields
                            if getattr(args, field) is not None})


def _outputs(args, inputs):
    """The output options as values, checked against the ``inputs`` before any trace is read or cell runs."""
    return check_outputs(OutputPaths(json=args.json, csv=args.csv, plot=args.plot), inputs)


def _finish(outputs, found, settings, malformed=0, wide=False):
    """Print what is missing, then the table and the files asked for; the exit status."""
    problems = problem_lines(found)
    for line in problems:
        sys.stderr.write(line + "\n")
    report = sweep_report(found, settings)
    publish(outputs, report, draw=lambda directory: _plot(directory, report), wide=bool(wide))
    return 1 if problems or malformed else 0


def _plot(directory, report):
    from .plots import plot_sweep
    plot_sweep(directory, report)


def _pythonpath():
    """Where this ``replay`` and ``predictor`` come from, then the caller's PYTHONPATH: what a subjob imports."""
    roots = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
             os.path.dirname(os.path.dirname(os.path.abspath(predictor.__file__)))]
    roots += [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    return os.pathsep.join(dict.fromkeys(os.path.abspath(root) for root in roots))


def _write_array(args, cells, settings):
    refused = _given(args, ("jobs",) + _OUTPUTS)
    if refused:
        raise UsageError("{}: not with --pbs, which runs nothing here (outputs: 'sweep collect DIR')".format(
            " ".join(refused)))
    python = os.path.abspath(args.python or sys.executable)
    if not os.access(python, os.X_OK):
        raise UsageError("--python {}: not an executable file".format(python))
    script = write_sweep(args.pbs, cells, settings, python, _pythonpath(), args.walltime or 3600, args.queue)
    directory = os.path.dirname(script)
    sys.stderr.write("{} cells written to {}; submit them with the qsub line below, then merge the results with: "
                     "python -m replay sweep collect {}\n".format(len(cells), directory, shlex.quote(directory)))
    sys.stdout.write("qsub {}\n".format(shlex.quote(script)))
    return 0


def _refuse_with_site(args, from_file):
    """With --site, the options and grid-file lists the site's configuration overrides are errors, as in
    simulate."""
    refuse_with_site(args)
    in_file = [axis for axis in BUILT_IN_AXES if axis in from_file]
    if in_file:
        raise GridError("{}: {}: {}".format(args.grid, ", ".join(in_file), SITE_DECIDES))


def checked_traces(paths):
    """The TRACE arguments as the grid's traces axis; UsageError names what is wrong (a trace given twice)."""
    try:
        return parse_values("traces", paths)
    except ValueError as err:
        raise UsageError("TRACE: {}".format(err)) from None


def _run_grid(args):
    if args.pbs is None and _given(args, _PBS_ONLY):
        raise UsageError("{}: only with --pbs DIR".format(" ".join(_given(args, _PBS_ONLY))))
    settings = _settings(args)
    from_file = read_grid_file(args.grid) if args.grid else {}
    if settings.site is not None:
        _refuse_with_site(args, from_file)
    traces = checked_traces(args.paths) if args.paths else None
    grid = grid_of(from_file, {"traces": traces, "policy": args.policy, "backfill_depth": args.backfill_depth,
                               "extension": args.extension, "predictors": args.predictors}, settings.site is not None)
    inputs = list(grid["traces"]) + [path for path in (args.grid, settings.site) if path]
    if args.pbs is not None:
        check_targets([("--pbs", args.pbs, True)], inputs)
    else:
        outputs = _outputs(args, inputs)
    # The site once, before any trace is read or cell runs: a malformed file stops here.
    refuse_warm_up(settings.fairshare_warm_up_s, None if settings.site is None else load_site(settings.site))
    malformed = sum(check_trace(path, settings) for path in grid["traces"])
    cells = expand(grid)
    if args.pbs is not None:
        return _write_array(args, cells, settings)
    results = run_cells(cells, settings, args.jobs or default_jobs())
    found = [outcome_of(index, cell, results[index]) for index, cell in enumerate(cells, 1)]
    return _finish(outputs, found, settings, malformed, args.wide)


def _run_collect(args):
    _only(args, "collect", _OUTPUTS)
    directory = args.paths[1]
    outputs = _outputs(args, [directory])
    cells, settings, _ = read_manifest(directory)
    return _finish(outputs, outcomes(directory, cells), settings, wide=args.wide)


def _run_cell(args):
    _only(args, "cell", ())
    directory, index = args.paths[1], args.paths[2]
    cells, settings, workdir = read_manifest(directory)
    if not index.isdigit() or not 1 <= int(index) <= len(cells):
        raise UsageError("cell {!r}: the sweep in {} has cells 1 to {}".format(index, directory, len(cells)))
    cell = cells[int(index) - 1]
    text = cell_result(int(index), cell, settings, workdir)
    write_result(directory, int(index), text)
    lines = problem_lines([outcome_of(int(index), cell, text)])
    for line in lines:
        sys.stderr.write(line + "\n")
    return 1 if lines else 0


_VERBS = {"collect": _run_collect, "cell": _run_cell}
"""``sweep VERB ...``: the first TRACE argument names another action (a trace called so: ``./collect``)."""


def run(args):
    """The sweep, its collection, or one cell; the exit status."""
    verb = args.paths[0] if args.paths else None
    return _VERBS.get(verb, _run_grid)(args)
