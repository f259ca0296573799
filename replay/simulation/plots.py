"""PNG figures of a simulation: wait time and bounded slowdown by runtime class, per predictor.

matplotlib with the file-only Agg backend, no software stamp in the PNGs: the
same schedule gives the same bytes.
"""

import os

import numpy as np

from predictor.cmdline.figures import duration_ticks, number_ticks, pyplot, save
from predictor.cmdline.tables import runtime_class_masks

__all__ = ["plot_simulation", "class_boxes"]

_HOUR = 3600.0


_MEAN = {"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black", "markersize": 5}
"""How a box's mean is drawn: waits are mostly 0, so the median often lies on the box's floor."""


def class_boxes(groups, path, title, ylabel, ticks=number_ticks):
    """Box plots (log scale): ``{class: {predictor: values}}``, one cluster of boxes per class.

    Each box: quartiles, the median as a thick black line, the mean as a white
    diamond, whiskers to 1.5 IQR; each class is labelled with its job count.
    """
    plt = pyplot()
    labels = list(next(iter(groups.values())).keys()) if groups else []
    figure, axes = plt.subplots(figsize=(min(14, max(6, 1.2 * len(groups) * max(len(labels), 1))), 5))
    try:
        width = 0.8 / max(len(labels), 1)
        for offset, label in enumerate(labels):
            data = [np.asarray(groups[group][label], dtype=np.float64) for group in groups]
            positions = [index + (offset - (len(labels) - 1) / 2.0) * width for index in range(len(groups))]
            boxes = axes.boxplot([values if values.size else [np.nan] for values in data], positions=positions,
                                 widths=width * 0.9, showfliers=False, patch_artist=True, showmeans=True,
                                 meanprops=_MEAN, medianprops={"color": "black", "linewidth": 2})
            for box in boxes["boxes"]:
                box.set_facecolor("C{}".format(offset % 10))
            axes.plot([], [], color="C{}".format(offset % 10), linewidth=6, label=label)
        axes.set_yscale("symlog", linthresh=1.0)
        ticks(axes)
        axes.grid(True, axis="y", alpha=0.3)
        axes.set_xticks(range(len(groups)))
        axes.set_xticklabels(["{} ({:,} jobs)".format(group, _jobs(groups[group])) for group in groups])
        axes.set_ylabel(ylabel)
        axes.set_title(title + "\n(boxes: quartiles; black line: median; white diamond: mean)", fontsize="medium")
        axes.legend(fontsize="small")
        save(figure, path)
    finally:
        plt.close(figure)


def _jobs(by_predictor):
    """A class's job count: the same jobs in every predictor's run."""
    return max((len(values) for values in by_predictor.values()), default=0)


def plot_simulation(out_dir, title, columns):
    """``wait_by_class.png`` and ``bsld_by_class.png`` in ``out_dir``; their paths."""
    os.makedirs(out_dir, exist_ok=True)
    waits, slowdowns = {}, {}
    for name, cols in columns.items():
        for group, mask in runtime_class_masks(cols.runtime):
            waits.setdefault(group, {})[name] = cols.wait[mask] / _HOUR
            slowdowns.setdefault(group, {})[name] = cols.bsld[mask]
    paths = [os.path.join(out_dir, "wait_by_class.png"), os.path.join(out_dir, "bsld_by_class.png")]
    class_boxes(waits, paths[0], "{}: wait time by runtime class".format(title),
                "wait (symlog scale: linear below 1 h)", lambda axes: duration_ticks(axes, symlog=True))
    class_boxes(slowdowns, paths[1], "{}: bounded slowdown by runtime class".format(title),
                "bounded slowdown (symlog scale)")
    return paths
