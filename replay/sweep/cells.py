"""One cell of a sweep: one simulate run, through the simulate command's own functions; its result as JSON.

A cell's result is the same JSON document whether it ran in a local worker
process or in a PBS subjob, and the table is built from that document in both
cases: the same grid gives the same table however and wherever it ran.

    {"index": 3, "cell": {"trace": ..., "policy": ..., ...}, "status": "ok",
     "notes": [...], "values": [...SUMMARY_COLUMNS...]}
    {"index": 4, "cell": {...}, "status": "failed", "error": "one line"}
"""

import json
import os
from typing import NamedTuple, Optional

from predictor.cmdline.rejects import RejectPrinter
from predictor.errors import SoftwalltimeError

from ..shared.errors import ReplayError
from ..shared.predictors import resolve
from ..simulation.engine import SchedulerSettings, run_frame, simulate_run
from ..simulation.metrics import DEFAULT_BSLD_TAU_S
from ..simulation.runs import machine_of, narrowed, recorded_notes, runnable_jobs, simulation_report
from ..traces.readers import load_trace

__all__ = ["SweepSettings", "settings_note", "load", "load_site", "check_trace", "run_cell", "cell_result"]

_SCHEDULER = SchedulerSettings()


class SweepSettings(NamedTuple):
    """What is the same in every cell: input, machine and the scheduler settings that are not grid axes."""

    format: str = "auto"
    max_errors: int = 20
    cores: Optional[int] = None
    nodes: Optional[int] = None
    cores_per_node: Optional[int] = None
    strict_ordering: bool = _SCHEDULER.strict_ordering
    selective: bool = _SCHEDULER.selective
    cycle_interval_s: int = _SCHEDULER.cycle_interval_s
    default_walltime_s: Optional[int] = _SCHEDULER.default_walltime_s
    bsld_tau_s: int = DEFAULT_BSLD_TAU_S
    site: Optional[str] = None
    """The site's folder (``--site``): every cell through its PBS, as ``simulate --site``; None: the built-in
    scheduler with the cell's policy, backfill depth and extension."""
    fairshare_warm_up_s: Optional[int] = None
    """With a site running fairshare (``--fairshare-warm-up``): the first stretch of each trace is history, as in
    ``simulate --site --fairshare-warm-up``."""


def settings_note(settings):
    """The report's note on what every cell shares."""
    if settings.site is not None:  # its scheduler's settings are in the site's notes, from the cells
        return "every cell: the site's PBS (--site), bsld tau {} s, default walltime {}".format(
            settings.bsld_tau_s, settings.default_walltime_s or "none (planned 5 years)")
    return ("every cell: strict_ordering {}, {}scheduler_iteration {}, bsld tau {} s, default walltime {}".format(
        settings.strict_ordering, "selective, " if settings.selective else "", settings.cycle_interval_s or "off",
        settings.bsld_tau_s, settings.default_walltime_s or "none (planned 5 years)"))


_TRACES = {}
"""(path, format) -> (Trace, malformed lines): each trace is read once per process. Worker processes
forked after the parent checked the traces find them here already."""


def load(path, settings):
    """``(trace, malformed line count)``; malformed lines are shown on stderr the first time only."""
    key = (path, settings.format)
    if key not in _TRACES:
        rejects = RejectPrinter(settings.max_errors)
        try:
            trace = load_trace([path], settings.format, rejects, as_columns=settings.site is None)
            trace = narrowed(trace)
        finally:
            rejects.close()
        _TRACES[key] = (trace, rejects.count)
    return _TRACES[key]


_SITES = {}
"""folder -> Site: the site is read once per process, before any cell runs (workers inherit it)."""


def load_site(folder):
    """The ``Site`` in ``folder``; SiteError names the file, line and setting of a malformed one."""
    if folder not in _SITES:
        from ..site import read_site  # the site's readers and PBS model: only for a sweep with --site
        _SITES[folder] = read_site(folder)
    return _SITES[folder]


def _machine(path, settings):
    """``(cluster, jobs that fit it, notes, site machine or None)`` of a trace: with a site, as simulate --site
    sizes it (``site_inputs``)."""
    trace, _ = load(path, settings)
    site_machine = None
    if settings.site is None:
        cluster, machine_note = machine_of(trace, settings.cores, settings.nodes, settings.cores_per_node)
        jobs, left_out = runnable_jobs(trace.jobs, cluster)
        if not jobs:
            raise ReplayError("{}: no job fits the machine ({})".format(path, machine_note))
    else:
        from ..simulation.site import site_inputs
        try:
            inputs = site_inputs(load_site(settings.site), trace, settings.cores, settings.nodes,
                                 settings.cores_per_node)
        except ReplayError as err:
            raise ReplayError("{}: {}".format(path, err)) from None
        cluster, jobs, left_out, machine_note, site_machine = (inputs.cluster, inputs.jobs, inputs.left_out,
                                                               inputs.machine_note, inputs.machine)
    notes = ("{} format, {} jobs simulated".format(trace.source_format.upper(), len(jobs)),)
    return cluster, jobs, notes + tuple(trace.stats.notes(len(trace.jobs))) + left_out + (machine_note,), \
        site_machine


def check_trace(path, settings):
    """Read ``path`` as a cell would and fail now if no cell could use it; its malformed line count."""
    _machine(path, settings)
    return load(path, settings)[1]


def run_cell(cell, settings, workdir=""):
    """``(notes, values)``: the simulate summary row of one cell (``SUMMARY_COLUMNS``, predictor left out).

    A relative trace path is taken from ``workdir``: where the sweep was written, for a PBS subjob. With a
    site, its notes (the scheduler, what is not modelled) come unprefixed, the same in every cell: the table
    shows them once.
    """
    cluster, jobs, notes, site_machine = _machine(os.path.join(workdir, cell.trace), settings)
    predictor = resolve(cell.predictor)
    notes += recorded_notes(jobs, (predictor,))
    if site_machine is None:
        scheduler = SchedulerSettings(settings.strict_ordering, cell.backfill_depth, cell.policy, cell.extension,
                                      settings.selective, settings.cycle_interval_s, settings.default_walltime_s)
        runs = {predictor.name: simulate_run(run_frame(jobs, cluster, scheduler), predictor, cluster, scheduler)}
        shared = ()
    else:
        from ..simulation.site import simulate_warmed, site_notes, unstarted_notes, warm_up, warm_up_note
        warmed = None
        if settings.fairshare_warm_up_s is not None:
            warmed = warm_up(jobs, site_machine, settings.fairshare_warm_up_s, settings.default_walltime_s)
            jobs, notes = warmed.jobs, notes + (warm_up_note(warmed),)
        runs = {predictor.name: simulate_warmed(jobs, predictor, site_machine, settings.default_walltime_s, warmed)}
        notes += unstarted_notes(runs, jobs)
        shared = site_notes(load_site(settings.site))
    report, _ = simulation_report(cell.trace, (), runs, cluster, settings.bsld_tau_s, (predictor,))
    summary = next(table for table in report.tables if table.key == "summary")
    notes = ["{}: {}".format(cell.trace, note) for note in notes] + list(shared)
    return notes, list(summary.rows[0][1:])


def _finite(value):
    """JSON has no NaN: None, which the tables show as ``-`` anyway."""
    return None if isinstance(value, float) and value != value else value


def cell_result(index, cell, settings, workdir=""):
    """The JSON text of cell number ``index``: its row, or the one-line reason it has none."""
    document = {"index": index, "cell": cell._asdict()}
    try:
        notes, values = run_cell(cell, settings, workdir)
    except (SoftwalltimeError, OSError) as err:  # anything else is a bug, with its traceback
        document.update(status="failed", error=str(err) or type(err).__name__)
    else:
        document.update(status="ok", notes=notes, values=[_finite(value) for value in values])
    return json.dumps(document, allow_nan=False) + "\n"
