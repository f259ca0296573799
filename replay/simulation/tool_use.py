"""The metrics of a performance-model run split between the tool's adopters and the other users.

The study of a performance-model submission tool reports the mean queue time
of the users who adopt the tool, against theirs when nobody uses it. With a
``model`` predictor among a simulation's predictors, this table gives, for
each model and every predictor run, the metrics of the model's adopters and
of the others; with predictor ``user`` in the same run, the change of their
mean wait against it (the users' own walltimes: nobody uses the tool).
"""

import numpy as np

from predictor.cmdline.tables import Column, Table, column_legend

from .metrics import GROUP_COLUMNS, group_metrics

__all__ = ["COLUMNS", "LEGEND", "tool_use_table", "with_tool_use"]

COLUMNS = (Column("model", "tool"), Column("predictor", "predictor"), Column("group", "group"),
           Column("users", "users", "count")) + GROUP_COLUMNS + (
    Column("wait_mean_change", "wait change %", "percent"),)

LEGEND = (
    (("tool",), "the performance-model predictor whose adopters and others the row's jobs are"),
    (("group",), "adopters: the users drawn to submit with the model's estimates; others: the rest, who keep "
                 "their own walltimes"),
    (("users",), "users in the group"),
    (("wait change %",), "the group's mean wait under this predictor against its mean wait under 'user' "
                         "(nobody uses the tool) in the same simulation: negative is shorter"),
)
"""Text-table header(s) -> meaning, printed in the legend."""


def _jobs(scheduled):
    return scheduled.frame.jobs if hasattr(scheduled, "frame") else [done.job for done in scheduled]


def tool_use_table(runs, columns, predictors):
    """The ``Table`` of adopters and others for each ``model`` predictor among ``predictors``; None without one.

    ``runs``: ``{predictor name: its run}``; ``columns``: their ``ScheduleColumns``.
    """
    models = [predictor for predictor in predictors if hasattr(predictor.learner, "adopters")]
    if not models or not runs:
        return None
    users = {name: [job.user for job in _jobs(scheduled)] for name, scheduled in runs.items()}
    rows = []
    for model in models:
        adopters = model.learner.adopters(_jobs(next(iter(runs.values()))))
        adopting = {name: np.fromiter((user in adopters for user in names), np.bool_, len(names))
                    for name, names in users.items()}
        for group, adopts in (("adopters", True), ("others", False)):
            masks = {name: mask == adopts for name, mask in adopting.items()}
            baseline = group_metrics(columns["user"], masks["user"])[1] if "user" in columns else None
            for name, cols in columns.items():
                metrics = group_metrics(cols, masks[name])
                change = metrics[1] / baseline - 1 if baseline and metrics[1] is not None else None
                group_users = len({user for user, kept in zip(users[name], masks[name].tolist()) if kept})
                rows.append((model.name, name, group, group_users) + metrics + (change,))
    return Table("by_tool_use", "Adopters of the performance-model tool and the other users", COLUMNS, rows)


def with_tool_use(report, runs, columns, predictors):
    """``report`` with the adopters/others table added (if a ``model`` predictor ran), and its legend lines."""
    table = tool_use_table(runs, columns, predictors)
    if table is None:
        return report
    return report._replace(tables=report.tables + (table,), legend=report.legend + column_legend([table], LEGEND))
