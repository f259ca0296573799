"""How accurate soft walltimes were, measured against the runtimes that followed.

For one predictor at one instant, over the jobs measured (after warm-up):

* ``no_prediction``: share of jobs that got no soft walltime (no walltime to
  start from); every other share and statistic is over the jobs that got one.
* ``underestimated``: share with prediction < runtime, whatever the cause
  (Chlumsky & Klusacek Fig. 4, left of the V): it includes jobs left with
  their own walltime that ran past it;
* Tang et al.'s categories (Fig. 5), which add up with their OE to 100 %:
  ``not_adjusted`` (NA), the share whose estimate is their walltime;
  ``tang_ue`` (UE), the share adjusted below their runtime by at most 30 min;
  ``tang_be`` (BE), the share adjusted below it by more than 30 min (a
  reservation planned on it breaks by over half an hour);
* ``mean_abs_error_s``, ``median_abs_error_s``: |prediction - runtime|;
* ``accuracy_mean``, ``accuracy_median``: Tang et al. eq. 3, per job
  runtime/prediction if runtime < prediction, prediction/runtime if greater,
  1 if equal (so 0..1, 1 is exact);
* ``users_compared``, ``users_improved``, ``users_worse`` (summary only): the
  users with at least one job measured, a walltime and a prediction, and the
  shares of them whose mean absolute error on those jobs is lower (higher)
  than that of their own walltimes (Chlumsky & Klusacek Fig. 6); the rest are equal,
  e.g. when every prediction was the walltime. None for the ``user``
  predictor itself.

Breakdowns: by runtime class (Chlumsky & Klusacek Fig. 5: runtime <= 2 h,
2-24 h, > 24 h) and by queue. Warm-up: the first ``warmup_fraction`` of the
jobs in submission order are left out of every metric (Rubio et al. drop 1 %);
their completions still feed the history.

Papers: Chlumsky & Klusacek, "Improving Accuracy of Walltime Estimates in PBS
Professional using Soft Walltimes"; Tang, Desai, Buettner & Lan, "Job
Scheduling with Adjusted Runtime Estimates on Production Supercomputers";
Rubio, Villapando, Matira & Aborot, "Correcting Job Walltime in a
Resource-Constrained Environment".

Sums are exact (integers; floats summed exactly and rounded once, as
``math.fsum`` does) so the figures do not depend on the order of a
floating-point sum.
"""

import math
import operator

import numpy as np

from predictor.cmdline.tables import Column, Report, Table, column_legend, queue_masks, runtime_class_masks

from ..shared.quantiles import median
from ..traces.columns import JobColumns
from .histories import codes, field
from .predictions import NO_PREDICTION
from .sums import exact_sum

__all__ = ["BADLY_UNDER_S", "METRIC_COLUMNS", "LEGEND", "eq3_accuracy", "error_metrics", "users_improved",
           "warmup_count", "accuracy_report"]

BADLY_UNDER_S = 30 * 60
"""Tang et al.: an underestimate by more than 30 minutes is a bad estimation."""

METRIC_COLUMNS = (
    Column("jobs", "jobs", "count"),
    Column("no_prediction", "none %", "percent", wide=True),
    Column("underestimated", "under %", "percent"),
    Column("not_adjusted", "NA %", "percent", wide=True),
    Column("tang_ue", "UE %", "percent", wide=True),
    Column("tang_be", "BE %", "percent", wide=True),
    Column("mean_abs_error_s", "mean |err| h:m:s", "duration_s"),
    Column("median_abs_error_s", "median |err| h:m:s", "duration_s"),
    Column("accuracy_mean", "acc mean", "ratio", wide=True),
    Column("accuracy_median", "acc median", "ratio"),
)
_USER_COLUMNS = (Column("users_compared", "users", "count", wide=True),
                 Column("users_improved", "better %", "percent"),
                 Column("users_worse", "worse %", "percent", wide=True))
_WHO = (Column("predictor", "predictor"), Column("at", "at"))

LEGEND = (
    (("predictor",), "whose estimate of the runtime is measured (one line each below)"),
    (("at",), "when the estimate is made: submit (the queuejob hook) or start (the runjob hook, with the "
              "history of the jobs that ended while the job waited)"),
    (("runtime",), "the jobs' runtime class: <=2h, 2-24h, >24h"),
    (("queue",), "the jobs' PBS queue"),
    (("jobs",), "number of jobs measured (after the warm-up)"),
    (("none %",), "share of the jobs that got no estimate (no walltime to start from); the columns after it "
                  "are over the jobs that got one"),
    (("under %",), "share of the jobs whose estimate was shorter than their runtime (also those left with their "
                   "own walltime that ran past it)"),
    (("NA %",), "share of the jobs whose estimate was their own walltime: not adjusted (Tang et al.'s NA)"),
    (("UE %",), "share of the jobs whose estimate was adjusted below their runtime by at most 30 minutes (Tang et "
                "al.'s UE)"),
    (("BE %",), "share of the jobs whose estimate was adjusted below their runtime by more than 30 minutes (Tang "
                "et al.'s BE: a reservation planned on it breaks by over half an hour)"),
    (("mean |err| h:m:s", "median |err| h:m:s"), "|estimate - runtime| per job, hours:minutes:seconds"),
    (("acc mean", "acc median"), "accuracy per job = the shorter of estimate and runtime / the longer (Tang et "
                                 "al. eq. 3): 1 exact, towards 0 further off either way; no unit"),
    (("users",), "users with jobs that have both a walltime and an estimate (- for user itself)"),
    (("better %", "worse %"), "share of those users whose mean |err| was smaller, larger than that of their "
                              "own walltimes on the same jobs (the rest: equal)"),
)
"""Text-table header(s) -> what they mean, printed in the legend under the tables."""


def eq3_accuracy(runtime, predicted):
    """Tang et al. eq. 3 per job: min/max of runtime and prediction, 1 when equal."""
    # Two float arrays in all (this runs on every job of a trace): the larger is made over the runtimes' copy.
    larger = runtime.astype(np.float64)
    ratio = np.minimum(larger, predicted.astype(np.float64))
    np.maximum(larger, predicted, out=larger)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(ratio, larger, out=ratio)
    del larger
    ratio[runtime == predicted] = 1.0
    return ratio


def _share(count, total):
    return count / total if total else None


def error_metrics(runtime, predicted, walltime):
    """The METRIC_COLUMNS values for these jobs (``predicted``, ``walltime`` use NO_PREDICTION)."""
    jobs = int(runtime.size)
    has = predicted != NO_PREDICTION
    if not has.all():  # else the arrays themselves, not copies
        runtime, predicted, walltime = runtime[has], predicted[has], walltime[has]
    del has
    count = int(runtime.size)
    if not count:
        return (jobs, _share(jobs, jobs)) + (None,) * 8
    error = np.subtract(predicted, runtime, dtype=np.int64)
    adjusted = predicted != walltime
    under = error < 0
    shares = (_share(int(np.count_nonzero(under)), count), _share(count - int(np.count_nonzero(adjusted)), count))
    under &= adjusted
    badly = error < -BADLY_UNDER_S
    badly &= under
    shares += (_share(int(np.count_nonzero(under)) - int(np.count_nonzero(badly)), count),
               _share(int(np.count_nonzero(badly)), count))
    del adjusted, under, badly
    absolute = np.abs(error, out=error)
    mean_absolute = int(absolute.sum()) / count
    median_absolute = median(absolute, overwrite=True)
    del absolute, error
    accuracy = eq3_accuracy(runtime, predicted)
    # Sums before medians: the medians may reorder the arrays in place.
    return (jobs, _share(jobs - count, jobs)) + shares + (
        mean_absolute, median_absolute, exact_sum(accuracy) / count, median(accuracy, overwrite=True))


def users_improved(user_codes, runtime, predicted, walltime):
    """``(users compared, share better, share worse)`` than their walltimes by mean |error|.

    Chlumsky & Klusacek Fig. 6.
    """
    both = (predicted != NO_PREDICTION) & (walltime != NO_PREDICTION)
    codes = user_codes[both]
    if not codes.size:
        return 0, None, None
    size = int(codes.max()) + 1
    # Same jobs on both sides, so comparing the sums compares the means; float sums of ints are exact here.
    predicted_error = np.bincount(codes, np.abs(predicted[both] - runtime[both]).astype(np.float64), size)
    walltime_error = np.bincount(codes, np.abs(walltime[both] - runtime[both]).astype(np.float64), size)
    compared = np.bincount(codes, minlength=size) > 0
    users = int(np.count_nonzero(compared))
    better = int(np.count_nonzero(compared & (predicted_error < walltime_error)))
    worse = int(np.count_nonzero(compared & (predicted_error > walltime_error)))
    return users, better / users, worse / users


def warmup_count(jobs, warmup_fraction):
    """How many of the first jobs (submission order) the warm-up leaves out."""
    if not 0.0 <= warmup_fraction < 1.0:
        raise ValueError("warm-up fraction must be in [0, 1), not {}".format(warmup_fraction))
    return int(math.floor(jobs * warmup_fraction))


class _Columns:
    """The trace's per-job arrays the metrics need, measured jobs only (from the replay's ``read`` if given)."""

    def __init__(self, jobs, first, read=None):
        measured = jobs[first:]
        if read is None:
            self.runtime, self.walltime = field(measured, "runtime_s"), field(measured, "walltime_s", NO_PREDICTION)
            self.user_codes = codes(map(operator.attrgetter("user"), measured))[0]
        else:  # the codes number the users of every job, not only the measured ones: the counts are the same
            self.runtime, self.walltime = read.runtime_s[first:], read.walltime_s[first:]
            self.user_codes = read.users[first:]
        self.queues = _queues(measured)


def _queues(jobs):
    """The jobs' queue names as an object array, "-" for none."""
    if isinstance(jobs, JobColumns):
        queue_codes, names = jobs.name_codes("queue")
        shown = np.empty(len(names) + 1, dtype=object)  # code -1: the last, "-"
        shown[:] = [name or "-" for name in names] + ["-"]
        return shown[queue_codes]
    queues = list(map(operator.attrgetter("queue"), jobs))
    return np.array(list(map({None: "-", "": "-"}.get, queues, queues)), dtype=object)  # queue or "-"


def _summary_rows(columns, predictions, first):
    rows = []
    for name in predictions.names:
        for instant in predictions.instants:
            predicted = predictions.at(instant, name)[first:]
            users = (None, None, None) if name == "user" else users_improved(
                columns.user_codes, columns.runtime, predicted, columns.walltime)
            rows.append((name, instant) + error_metrics(columns.runtime, predicted, columns.walltime) + users)
    return rows


def _group_rows(groups, columns, predictions, first):
    rows = {}
    for group, mask in groups:  # one group's jobs at a time: their copies are not all held at once
        jobs = np.flatnonzero(mask)
        runtime, walltime = columns.runtime[jobs], columns.walltime[jobs]
        for name in predictions.names:
            for instant in predictions.instants:
                predicted = predictions.at(instant, name)[first:][jobs]
                rows[name, instant, group] = error_metrics(runtime, predicted, walltime)
    return [(name, instant, group) + rows[name, instant, group]
            for name in predictions.names for instant in predictions.instants for group, _ in groups]


def accuracy_report(title, notes, jobs, predictions, warmup_fraction=0.0):
    """The accuracy Report: summary, by runtime class, by queue."""
    first = warmup_count(len(jobs), warmup_fraction)
    columns = _Columns(jobs, first, predictions.columns)
    notes = tuple(notes) + ("warm-up: the first {} jobs ({:g} %) are left out of the metrics; {} jobs measured".format(
        first, 100 * warmup_fraction, len(jobs) - first),)
    tables = [
        Table("summary", "All jobs (users: mean |err| better or worse than their own walltimes')",
              _WHO + METRIC_COLUMNS + _USER_COLUMNS, _summary_rows(columns, predictions, first)),
        Table("by_runtime_class", "By runtime class (runtime <= 2 h, 2-24 h, > 24 h)",
              _WHO + (Column("runtime_class", "runtime"),) + METRIC_COLUMNS,
              _group_rows(runtime_class_masks(columns.runtime), columns, predictions, first)),
    ]
    queues = queue_masks(columns.queues)
    if len(queues) > 1:
        tables.append(Table("by_queue", "By queue", _WHO + (Column("queue", "queue"),) + METRIC_COLUMNS,
                            _group_rows(queues, columns, predictions, first)))
    else:
        notes += ("one queue ({}): no by-queue table".format(queues[0][0] if queues else "-"),)
    return Report(title, notes, tuple(tables), column_legend(tables, LEGEND) + predictions.legend,
                  summary=accuracy_summary(tables[0]))


def accuracy_summary(table):
    """What the summary table says, in two lines: each predictor's share of under-estimates and its median
    error, at start if the table has it, then what to try next."""
    keys = [column.key for column in table.columns]
    rows = [dict(zip(keys, row)) for row in table.rows]
    instant = "start" if any(row["at"] == "start" for row in rows) else rows[0]["at"] if rows else None
    rows = [row for row in rows if row["at"] == instant and row["underestimated"] is not None]
    if not rows:
        return ()
    under = ", ".join("{} {:.0f}%".format(row["predictor"], 100 * row["underestimated"]) for row in rows)
    closest = min(rows, key=lambda row: (row["median_abs_error_s"], row["predictor"]))
    return ("estimated at {}, the soft walltime is shorter than the runtime for: {} of the jobs; the smallest "
            "median error is {}'s ({}).".format(instant, under, closest["predictor"],
                                                _hms(closest["median_abs_error_s"])),
            "An under-estimate is what extends soft walltimes and breaks reservations: see their effect on waits "
            "with 'python -m replay simulate' on the same logs, and the errors with --plot DIR.")


def _hms(seconds):
    from predictor.durations import format_duration
    return format_duration(int(round(seconds)))
