"""PNG figures of estimate errors: the sorted-error "V" curve and box plots by runtime class.

Chlumsky & Klusacek, "Improving Accuracy of Walltime Estimates in PBS
Professional using Soft Walltimes", Fig. 4 and 5. The replay draws its
predictors with these (``replay.accuracy.plots``), ``python -m predictor
report`` the soft walltimes that were set and the users' walltimes.

The drawing functions take plain mappings of errors in seconds (error =
estimate - runtime), or for box plots their statistics (``box_stats``), which
a caller may compute elsewhere (the report has PostgreSQL compute them).
matplotlib is imported only when drawing, with the file-only Agg backend, and
the PNGs carry no software or date stamp: the same data gives the same bytes.
"""

import numpy as np

__all__ = ["v_curve", "error_boxes", "box_stats", "draw_boxes", "pyplot", "save", "HOUR_S", "LEAST_ERROR_H"]

HOUR_S = 3600.0
LEAST_ERROR_H = 1.0 / HOUR_S
"""An error of 0 is drawn at 1 s on a log scale."""

WHISKER_IQR = 1.5
"""Whiskers reach the furthest error within 1.5 interquartile ranges of the box (matplotlib's default)."""

_PNG_METADATA = {"Software": None}
_STAT_KEYS = ("med", "q1", "q3", "whislo", "whishi")


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(figure, path):
    """Write ``figure`` as a PNG without a software stamp."""
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata=_PNG_METADATA)


def v_curve(series, path, title, error_label="prediction - runtime"):
    """Each series' errors sorted, then drawn as |error| in hours (log) against the job's rank (%).

    The left, falling branch is the underestimates, the right, rising one the
    overestimates; the curves of series of different sizes line up on 0-100 %.
    Evenly spaced quantiles of the errors draw the same curve as all of them.
    """
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(8, 5))
    try:
        for label, errors in series.items():
            ordered = np.sort(np.asarray(errors, dtype=np.float64))
            if ordered.size:
                rank = np.linspace(0.0, 100.0, ordered.size)
                axes.plot(rank, np.maximum(np.abs(ordered) / HOUR_S, LEAST_ERROR_H), label=label, linewidth=1.2)
        axes.set_yscale("log")
        axes.set_xlabel("jobs, sorted by error ({}), %".format(error_label))
        axes.set_ylabel("|error|, hours (log scale)")
        axes.set_title(title)
        axes.grid(True, which="both", alpha=0.3)
        axes.legend()
        save(figure, path)
    finally:
        plt.close(figure)


def box_stats(errors):
    """The statistics a box is drawn from, for ``errors`` in seconds; ``jobs`` counts them (NaN boxes if none)."""
    from matplotlib import cbook
    values = np.asarray(errors, dtype=np.float64)
    stats = cbook.boxplot_stats(values if values.size else [np.nan], whis=WHISKER_IQR)[0]
    stats["jobs"] = int(values.size)
    return stats


def error_boxes(groups, path, title, error_label="prediction - runtime"):
    """Box plots of signed errors in hours: ``{group: {label: errors}}``, one cluster per group."""
    stats = {group: {label: box_stats(errors) for label, errors in series.items()} for group, series in groups.items()}
    draw_boxes(stats, path, title, error_label)


def _in_hours(stats):
    hours = {key: stats[key] / HOUR_S for key in _STAT_KEYS}
    hours["fliers"] = []
    return hours


def draw_boxes(groups, path, title, error_label="prediction - runtime"):
    """Box plots from ``{group: {label: box_stats}}`` (seconds), drawn in hours; tick labels count the jobs."""
    plt = pyplot()
    labels = list(next(iter(groups.values())).keys()) if groups else []
    figure, axes = plt.subplots(figsize=(min(14, 4 + 0.5 * len(groups) * max(len(labels), 1)), 5))
    try:
        width = 0.8 / max(len(labels), 1)
        for offset, label in enumerate(labels):
            positions = [index + (offset - (len(labels) - 1) / 2.0) * width for index in range(len(groups))]
            boxes = axes.bxp([_in_hours(series[label]) for series in groups.values()], positions=positions,
                             widths=width * 0.9, showfliers=False, patch_artist=True,
                             boxprops={"linestyle": "solid"}, medianprops={"color": "black"})
            for box in boxes["boxes"]:
                box.set_facecolor("C{}".format(offset % 10))
            axes.plot([], [], color="C{}".format(offset % 10), linewidth=6, label=label)
        axes.axhline(0.0, color="black", linewidth=0.8)
        axes.set_yscale("symlog", linthresh=1.0)
        axes.set_xticks(range(len(groups)))
        axes.set_xticklabels(["{} ({:,} jobs)".format(group, _jobs(series)) for group, series in groups.items()])
        axes.set_ylabel("error ({}), hours (symlog)".format(error_label))
        axes.set_title(title)
        axes.legend(fontsize="small")
        save(figure, path)
    finally:
        plt.close(figure)


def _jobs(series):
    return max((stats["jobs"] for stats in series.values()), default=0)
