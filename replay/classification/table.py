"""The small/large classification table (Zrigui et al.'s Tables 5 and 6) for a report.

Shown by the accuracy replay with ``--classify`` and by ``simulate`` with a
policy that classifies. The classifier is replayed over the log (see
``quality``): what it would have decided at each submission, learning from
the log's completions.
"""

from statistics import median

from predictor.cmdline.progress import ProgressBar
from predictor.cmdline.tables import Column, Table, column_legend

from .features import requested_cores
from .quality import LoggedJob, classify_log, quality_of, true_classes

__all__ = ["COLUMNS", "LEGEND", "logged_jobs", "classification_table", "with_classification"]

COLUMNS = (
    Column("classified", "classified", "count"),
    Column("small", "small %", "percent"),
    Column("predicted_small", "predicted small %", "percent"),
    Column("true_small", "TS", "count"),
    Column("false_small", "FS", "count"),
    Column("true_large", "TL", "count"),
    Column("false_large", "FL", "count"),
    Column("accuracy", "accuracy %", "percent"),
    Column("precision", "precision %", "percent"),
    Column("recall", "recall %", "percent"),
    Column("divider_median_s", "divider median h:m:s", "duration_s"),
)

LEGEND = (
    (("classified",), "jobs classified small or large at submission after the first week (the first week has "
                      "no divider: every job is large)"),
    (("small %", "predicted small %"), "share of those jobs that were small (runtime below the median runtime "
                                       "of the jobs completed in the week they completed in, the label they are "
                                       "learned with), that were predicted small"),
    (("TS", "FS", "TL", "FL"), "true small, false small (predicted small, ran longer), true large, false large"),
    (("accuracy %", "precision %", "recall %"), "(TS + TL) / all, TS / (TS + FS), TS / (TS + FL) (Zrigui et al. "
                                                "eqs. 1-3)"),
    (("divider median h:m:s",), "the median over those jobs of the divider they were judged against: the median "
                                "runtime of the jobs completed in the week before theirs"),
)
"""Text-table header(s) -> meaning, printed in the legend."""


def _requested_s(job):
    return job.walltime_s if job.walltime_s and job.walltime_s >= 1 else None


def logged_jobs(jobs):
    """``LoggedJob``s of trace jobs: the walltime and processors the user asked for, the logged end and runtime."""
    return [LoggedJob(job.submit_time, job.end_time, job.user, _requested_s(job), requested_cores(job),
                      job.runtime_s) for job in jobs]


def classification_table(jobs, on_progress=None, learner="scikit-learn"):
    """The one-row ``Table`` of the classifier's quality over the trace ``jobs``; ``on_progress(done, jobs)``;
    ``learner``: the forest's."""
    logged = logged_jobs(jobs)
    classifications = classify_log(logged, on_progress=on_progress, learner=learner)
    quality = quality_of(classifications, true_classes(logged))
    counted = sum(quality)
    dividers = [verdict.divider_s for verdict in classifications if verdict.divider_s is not None]
    row = (counted, _share(quality.true_small + quality.false_large, counted),
           _share(quality.true_small + quality.false_small, counted)) + tuple(quality) + (
               quality.accuracy(), quality.precision(), quality.recall(), median(dividers) if dividers else None)
    return Table("classification", "Small/large classification at submission (Zrigui et al.; learned from the log)",
                 COLUMNS, [row])


def _share(count, total):
    return count / total if total else None


def with_classification(report, jobs):
    """``report`` with the classification table of ``jobs`` added, and its legend lines."""
    progress = ProgressBar("classifying small/large", unit="job")  # on a terminal only: minutes on long logs
    try:
        table = classification_table(jobs, progress)
    finally:
        progress.close()
    return report._replace(tables=report.tables + (table,), legend=report.legend + column_legend([table], LEGEND))
