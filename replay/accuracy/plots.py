"""PNG figures: the sorted-error "V" curve and error box plots by runtime class (Chlumsky & Klusacek Fig. 4, 5).

The drawing functions take plain ``{label: errors in seconds}`` mappings, so
the simulation can draw its own series with them. matplotlib is imported
only here, with the file-only Agg backend, and the PNGs carry no software or
date stamp: the same data gives the same bytes.
"""

import os

import numpy as np

__all__ = ["v_curve", "error_boxes", "plot_accuracy"]

_HOUR = 3600.0
_PNG_METADATA = {"Software": None}
_LEAST_ERROR_H = 1.0 / _HOUR  # a zero error is drawn at 1 s on the log scale


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    return pyplot


def _save(figure, path):
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata=_PNG_METADATA)


def v_curve(series, path, title):
    """Each series' errors sorted, then drawn as |error| in hours (log) against the job's rank (%).

    The left, falling branch is the underestimates, the right, rising one the
    overestimates; the curves of series of different sizes line up on 0-100 %.
    """
    pyplot = _pyplot()
    figure, axes = pyplot.subplots(figsize=(8, 5))
    try:
        for label, errors in series.items():
            ordered = np.sort(np.asarray(errors, dtype=np.float64))
            if ordered.size:
                rank = np.linspace(0.0, 100.0, ordered.size)
                axes.plot(rank, np.maximum(np.abs(ordered) / _HOUR, _LEAST_ERROR_H), label=label, linewidth=1.2)
        axes.set_yscale("log")
        axes.set_xlabel("jobs, sorted by error (prediction - runtime), %")
        axes.set_ylabel("|error|, hours (log scale)")
        axes.set_title(title)
        axes.grid(True, which="both", alpha=0.3)
        axes.legend()
        _save(figure, path)
    finally:
        pyplot.close(figure)


def error_boxes(groups, path, title):
    """Box plots of signed errors in hours: ``{group: {label: errors}}``, one cluster per group."""
    pyplot = _pyplot()
    labels = list(next(iter(groups.values())).keys()) if groups else []
    figure, axes = pyplot.subplots(figsize=(min(14, 4 + 0.5 * len(groups) * max(len(labels), 1)), 5))
    try:
        width = 0.8 / max(len(labels), 1)
        for offset, label in enumerate(labels):
            data = [np.asarray(groups[group][label], dtype=np.float64) / _HOUR for group in groups]
            positions = [index + (offset - (len(labels) - 1) / 2.0) * width for index in range(len(groups))]
            boxes = axes.boxplot([values if values.size else [np.nan] for values in data], positions=positions,
                                 widths=width * 0.9, showfliers=False, patch_artist=True,
                                 medianprops={"color": "black"})
            for box in boxes["boxes"]:
                box.set_facecolor("C{}".format(offset % 10))
            axes.plot([], [], color="C{}".format(offset % 10), linewidth=6, label=label)
        axes.axhline(0.0, color="black", linewidth=0.8)
        axes.set_yscale("symlog", linthresh=1.0)
        axes.set_xticks(range(len(groups)))
        axes.set_xticklabels(["{} ({} jobs)".format(group, _size(groups[group])) for group in groups])
        axes.set_ylabel("error (prediction - runtime), hours (symlog)")
        axes.set_title(title)
        axes.legend(fontsize="small")
        _save(figure, path)
    finally:
        pyplot.close(figure)


def _size(series):
    return max((len(errors) for errors in series.values()), default=0)


def plot_accuracy(out_dir, title, jobs, predictions, first):
    """The accuracy replay's PNGs in ``out_dir`` for the jobs from index ``first`` on; their paths."""
    from ..report import runtime_class_masks
    os.makedirs(out_dir, exist_ok=True)
    runtime = np.fromiter((job.runtime_s for job in jobs[first:]), np.int64, len(jobs) - first)
    classes = runtime_class_masks(runtime)
    paths = []
    for instant in predictions.instants:
        errors = {}
        for name in predictions.names:
            predicted = predictions.at(instant, name)[first:]
            errors[name] = (predicted - runtime, predicted >= 0)
        v_path = os.path.join(out_dir, "v_curve_{}.png".format(instant))
        v_curve({name: error[has] for name, (error, has) in errors.items()}, v_path,
                "{}: sorted errors, prediction at {}".format(title, instant))
        boxes = {group: {name: error[has & mask] for name, (error, has) in errors.items()} for group, mask in classes}
        box_path = os.path.join(out_dir, "errors_by_runtime_class_{}.png".format(instant))
        error_boxes(boxes, box_path, "{}: errors by runtime class, prediction at {}".format(title, instant))
        paths += [v_path, box_path]
    return paths
