"""PNG figures: the sorted-error "V" curve and error box plots by runtime class (Chlumsky & Klusacek Fig. 4, 5).

The drawing functions live in ``predictor.cmdline.figures``, where ``python -m
predictor report`` draws the soft walltimes that were set with them too; here
the replay's predictions become their ``{label: errors in seconds}`` mappings.
"""

import os

import numpy as np

from predictor.cmdline.figures import error_boxes, v_curve

__all__ = ["v_curve", "error_boxes", "plot_accuracy"]


def plot_accuracy(out_dir, title, jobs, predictions, first):
    """The accuracy replay's PNGs in ``out_dir`` for the jobs from index ``first`` on; their paths."""
    from predictor.cmdline.tables import runtime_class_masks
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
