"""PNG figures of a sweep: mean wait and mean bounded slowdown per scenario, one bar per predictor.

A scenario is a cell's trace, policy, backfill depth and extension. matplotlib
with the file-only Agg backend, no software stamp: the same table gives the
same bytes.
"""

import os

from predictor.cmdline.figures import pyplot, save

__all__ = ["plot_sweep"]

_HOUR = 3600.0
_FIGURES = (("wait_mean_s", "sweep_wait_mean.png", "mean wait, hours", 1.0 / _HOUR),
            ("bsld_mean", "sweep_bsld_mean.png", "mean bounded slowdown", 1.0))


def _scenario(row, at):
    """A bar group's label: the trace, then the built-in scheduler's settings, or the site's PBS (``--site``)."""
    if row[at["policy"]] is None:
        return "{}\nthe site's PBS".format(os.path.basename(row[at["trace"]]))
    return "{}\n{}, backfill {}, {}".format(os.path.basename(row[at["trace"]]), row[at["policy"]],
                                         row[at["backfill_depth"]], row[at["extension"]])


def _bars(table, key, scale):
    """``(scenarios, {predictor: [value per scenario]})`` from the sweep table's rows."""
    keys = [column.key for column in table.columns]
    at = {name: keys.index(name) for name in ("trace", "policy", "backfill_depth", "extension", "predictor", key)}
    scenarios, values = [], {}
    for row in table.rows:
        scenario = _scenario(row, at)
        if scenario not in scenarios:
            scenarios.append(scenario)
        value = row[at[key]]
        values.setdefault(row[at["predictor"]], {})[scenario] = float("nan") if value is None else value * scale
    return scenarios, {name: [by.get(s, float("nan")) for s in scenarios] for name, by in values.items()}


def _figure(path, title, ylabel, scenarios, values):
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(max(6, 0.9 * len(scenarios) * max(len(values), 1)), 5))
    try:
        width = 0.8 / max(len(values), 1)
        for offset, (name, heights) in enumerate(values.items()):
            positions = [index + (offset - (len(values) - 1) / 2.0) * width for index in range(len(scenarios))]
            axes.bar(positions, heights, width * 0.9, label=name, color="C{}".format(offset % 10))
        axes.set_xticks(range(len(scenarios)))
        axes.set_xticklabels(scenarios, fontsize="small")
        axes.set_ylabel(ylabel)
        axes.set_title(title)
        axes.legend(fontsize="small")
        save(figure, path)
    finally:
        plt.close(figure)


def plot_sweep(out_dir, report):
    """``sweep_wait_mean.png`` and ``sweep_bsld_mean.png`` in the directory ``out_dir``; their paths."""
    table = report.tables[0]
    paths = []
    for key, name, ylabel, scale in _FIGURES:
        scenarios, values = _bars(table, key, scale)
        paths.append(os.path.join(out_dir, name))
        _figure(paths[-1], "{}: {}".format(report.title, ylabel), ylabel, scenarios, values)
    return paths
