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

__all__ = ["v_curve", "error_boxes", "box_stats", "draw_boxes", "pyplot", "save", "HOUR_S", "LEAST_ERROR_H",
           "duration_ticks", "number_ticks"]

HOUR_S = 3600.0
LEAST_ERROR_H = 1.0 / HOUR_S
"""An error of 0 is drawn at 1 s on a log scale."""

WHISKER_IQR = 1.5
"""Whiskers reach the furthest error within 1.5 interquartile ranges of the box (matplotlib's default)."""

_PNG_METADATA = {"Software": None}
_STAT_KEYS = ("med", "q1", "q3", "whislo", "whishi")


_LOG_DURATIONS_S = ((1, "1 s"), (60, "1 min"), (600, "10 min"), (3600, "1 h"), (6 * 3600, "6 h"), (86400, "1 d"),
                    (4 * 86400, "4 d"), (30 * 86400, "30 d"), (365 * 86400, "1 y"))
"""Where a log-scale axis of durations is labelled: about one tick per decade, in the units people say."""
_SYMLOG_DURATIONS_S = ((0, "0"), (1800, "30 min"), (3600, "1 h"), (2 * 3600, "2 h"), (6 * 3600, "6 h"),
                       (12 * 3600, "12 h")) + _LOG_DURATIONS_S[5:]
"""The same for a symlog axis whose linear part is the first hour (0 and 30 min there)."""


def duration_ticks(axes, symlog=False, axis="y"):
    """Label the ``axis`` (in hours) at ``1 min``, ``1 h``, ``1 d``...; with ``symlog``, 0 and the negative side
    too. matplotlib's own ticks on such an axis were ``0`` and ``10^0`` alone: no value could be read."""
    low, high = axes.get_ylim() if axis == "y" else axes.get_xlim()
    marks = _SYMLOG_DURATIONS_S if symlog else _LOG_DURATIONS_S
    ticks = [(seconds / HOUR_S, label) for seconds, label in marks]
    if symlog:
        ticks = [(-hours, "-" + label) for hours, label in reversed(ticks) if hours] + ticks
    _set_ticks(axes, [(value, label) for value, label in ticks if low <= value <= high], axis)


def number_ticks(axes):
    """Label the y axis of a log or symlog scale of plain numbers at 1, 2, 5, 10, 20, 50... (0 if shown)."""
    low, high = axes.get_ylim()
    values = [0.0] + [base * 10.0 ** power for power in range(-3, 10) for base in (1, 2, 5)]
    chosen = [value for value in values if low <= value <= high]
    step = max(1, len(chosen) // 9)  # at most about ten labels
    _set_ticks(axes, [(value, "{:g}".format(value)) for value in chosen[::step]])


def _set_ticks(axes, ticks, axis="y"):
    from matplotlib.ticker import NullLocator
    getattr(axes, "set_{}ticks".format(axis))([value for value, _ in ticks])
    getattr(axes, "set_{}ticklabels".format(axis))([label for _, label in ticks])
    getattr(axes, "{}axis".format(axis)).set_minor_locator(NullLocator())


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
        duration_ticks(axes)
        axes.set_xlabel("jobs, sorted by error ({}), %".format(error_label))
        axes.set_ylabel("|error| (log scale)")
        axes.set_title(title)
        axes.grid(True, which="major", alpha=0.3)
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
        duration_ticks(axes, symlog=True)
        axes.grid(True, axis="y", alpha=0.3)
        axes.set_xticks(range(len(groups)))
        axes.set_xticklabels(["{} ({:,} jobs)".format(group, _jobs(series)) for group, series in groups.items()])
        axes.set_ylabel("error ({}); linear below 1 h".format(error_label))
        axes.set_title(title)
        axes.legend(fontsize="small")
        save(figure, path)
    finally:
        plt.close(figure)


def _jobs(series):
    return max((stats["jobs"] for stats in series.values()), default=0)
