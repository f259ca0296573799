"""The report's PNGs: the V curve, box plots by runtime class, and users' mean errors side by side.

The first two are ``predictor.cmdline.figures``' (Chlumsky & Klusacek, Fig. 4 and 5),
drawn from the quantiles and box statistics PostgreSQL computed; the third
is Fig. 6's comparison as a scatter plot: one point per user, below the
diagonal when the soft walltimes erred less than the user's own walltimes.
"""

import os

import numpy as np

from ..cmdline.figures import HOUR_S, LEAST_ERROR_H, draw_boxes, duration_ticks, pyplot, save, v_curve
from .queries import ESTIMATES

__all__ = ["plot_report", "user_errors_plot", "FILES"]

FILES = ("v_curve.png", "errors_by_runtime_class.png", "users.png")
_ERROR = "estimate - runtime"


def _labelled(series, jobs_per_estimate):
    return {"{} ({:,} jobs)".format(name, jobs_per_estimate.get(name, 0)): errors for name, errors in series.items()}


def plot_report(out_dir, selection, distributions, jobs_per_estimate, user_errors):
    """Write FILES into the directory ``out_dir``; return their paths."""
    paths = [os.path.join(out_dir, name) for name in FILES]
    period = selection.describe()
    v_curve(_labelled(distributions.sorted_errors, jobs_per_estimate), paths[0],
            "Sorted errors: under-estimates on the left, over-estimates on the right\n" + period, _ERROR)
    draw_boxes(distributions.boxes, paths[1], "Errors by runtime class\n" + period, _ERROR)
    user_errors_plot(user_errors, paths[2], "Mean |error| per user, the same jobs\n" + period)
    return paths


def _clamped_hours(seconds):
    return np.maximum(np.asarray(seconds, dtype=np.float64) / HOUR_S, LEAST_ERROR_H)


def user_errors_plot(user_errors, path, title):
    """One point per user: mean |walltime error| (x) against mean |soft walltime error| (y), hours, log-log."""
    plt = pyplot()
    jobs = np.array([row[1] for row in user_errors], dtype=np.float64)
    soft = np.array([row[2] for row in user_errors], dtype=np.float64) / np.maximum(jobs, 1)
    wall = np.array([row[3] for row in user_errors], dtype=np.float64) / np.maximum(jobs, 1)
    figure, axes = plt.subplots(figsize=(7, 6))
    try:
        groups = (("soft walltime better", soft < wall, "C2"), ("equal", soft == wall, "C7"),
                  ("soft walltime worse", soft > wall, "C3"))
        for label, mask, colour in groups:
            axes.scatter(_clamped_hours(wall[mask]), _clamped_hours(soft[mask]), s=18, color=colour, alpha=0.7,
                         label="{}: {:,} users".format(label, int(np.count_nonzero(mask))))
        top = max(float(np.max(_clamped_hours(np.concatenate([soft, wall])))) if jobs.size else 1.0, 1.0) * 2
        axes.plot([LEAST_ERROR_H, top], [LEAST_ERROR_H, top], color="black", linewidth=0.8, label="equal errors")
        axes.set_xscale("log")
        axes.set_yscale("log")
        duration_ticks(axes, axis="x")
        duration_ticks(axes, axis="y")
        axes.set_xlabel("mean |{} - runtime| per job (log scale)".format(ESTIMATES[1]))
        axes.set_ylabel("mean |{} - runtime| per job (log scale)".format(ESTIMATES[0]))
        axes.set_title(title)
        axes.grid(True, which="major", alpha=0.3)
        axes.legend(fontsize="small", loc="upper left")
        save(figure, path)
    finally:
        plt.close(figure)
