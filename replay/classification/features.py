"""The features of a submitted job (Zrigui et al., Table 4), from the jobs already known.

20 numbers per job:

* job: the requested walltime and the requested processors (``requested_cores``);
* temporal (of the submission, UTC): hour, day of the week, day of the month,
  month, week of the year, quarter;
* lag: the class (1 small, 0 large, -1 none) of the last three known jobs of each
  of the job's categories, in submission order;
* aggregation: the share of small jobs among the known jobs of each category
  (-1 when there is none).

A job's categories are (user, requested walltime), (user, requested cores) and
(user, day of the week of the submission). *Known* jobs are the completed ones
the classifier has folded in (``CategoryHistory.add``): the caller decides
which; the classifier folds in a week's completions when the week ends.
"""

import time
from bisect import insort
from typing import NamedTuple, Optional

__all__ = ["FEATURE_NAMES", "NO_WALLTIME", "Submission", "CategoryHistory", "job_features", "requested_cores"]

FEATURE_NAMES = (
    "walltime_s", "ncpus",
    "hour", "weekday", "day_of_month", "month", "week", "quarter",
    "walltime_lag_1", "walltime_lag_2", "walltime_lag_3",
    "ncpus_lag_1", "ncpus_lag_2", "ncpus_lag_3",
    "weekday_lag_1", "weekday_lag_2", "weekday_lag_3",
    "walltime_small_share", "ncpus_small_share", "weekday_small_share",
)
"""The feature order of every row."""

NO_WALLTIME = 10 ** 12
"""Stands for a job with no requested walltime: longer than any walltime."""

_LAGS = 3


class Submission(NamedTuple):
    """A job as it is classified: ``key`` identifies it (unique, and ordering same-second submissions)."""

    key: int
    submit_time: int
    user: str
    walltime_s: Optional[int]
    ncpus: int


def requested_cores(job):
    """The processors a trace job (``replay.traces.trace.Job``) asked for: SWF's requested processors (field 8)
    where the trace has them, else its cores."""
    return job.ncpus if job.requested_ncpus is None else job.requested_ncpus


def weekday(submit_time):
    """0 (Monday) .. 6, UTC."""
    return time.gmtime(submit_time).tm_wday


def _categories(job):
    return (("walltime", job.user, job.walltime_s), ("ncpus", job.user, job.ncpus),
            ("weekday", job.user, weekday(job.submit_time)))


class CategoryHistory:
    """Per category, the known jobs' classes in submission order."""

    def __init__(self):
        self._classes = {}  # category -> [(submit_time, key, small)], sorted
        self._small = {}  # category -> how many of them are small

    def add(self, job, small):
        """Fold in a known ``Submission`` and its class (True: small)."""
        for category in _categories(job):
            insort(self._classes.setdefault(category, []), (job.submit_time, job.key, small))
            self._small[category] = self._small.get(category, 0) + small

    def lags_and_share(self, category):
        """``([class of the last, second last, third last job], share small)``; -1 where unknown."""
        known = self._classes.get(category, ())
        lags = [int(entry[2]) for entry in known[-1:-_LAGS - 1:-1]]
        share = self._small[category] / len(known) if known else -1.0
        return lags + [-1] * (_LAGS - len(lags)), share


def _temporal(submit_time):
    moment = time.gmtime(submit_time)
    return [moment.tm_hour, moment.tm_wday, moment.tm_mday, moment.tm_mon, int(time.strftime("%W", moment)),
            (moment.tm_mon - 1) // 3 + 1]


def job_features(job, history):
    """The feature row (``FEATURE_NAMES`` order) of ``job`` (a ``Submission``) given ``history``."""
    row = [NO_WALLTIME if job.walltime_s is None else job.walltime_s, job.ncpus] + _temporal(job.submit_time)
    shares = []
    for category in _categories(job):
        lags, share = history.lags_and_share(category)
        row += lags
        shares.append(share)
    return row + shares
