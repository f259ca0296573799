"""The report's tables, from ``measure``'s aggregates: how close the soft walltimes were to the runtimes.

Figures compare each estimate with the runtime that followed (error =
estimate - runtime), over the jobs that had a soft walltime; the jobs
without one are counted apart. Per user, the mean |error| of the soft
walltimes is set against that of the same jobs' walltimes, as Chlumsky &
Klusacek compare users ("Improving Accuracy of Walltime Estimates in PBS
Professional using Soft Walltimes", Fig. 6).
"""

from typing import NamedTuple, Tuple

from ..cmdline.tables import RUNTIME_CLASSES, Column, Report, Table
from ..durations import format_duration
from .measure import ALL
from .queries import ESTIMATES

__all__ = ["build_report", "compare_users", "UserComparison", "LEGEND", "TOP_USERS"]

TOP_USERS = 5
"""Users listed among the largest gains, and among the largest losses."""

CLASSES = (ALL,) + tuple(name for name, _, _ in RUNTIME_CLASSES)

LEGEND = (
    "runtime: the jobs' runtime class (all, <=2h, 2-24h, >24h)",
    "estimate: soft walltime = what the hooks set; walltime = the user's own request (Resource_List.walltime)",
    "jobs: number of jobs; measured: with a soft walltime; apart: without one, left out of every other figure",
    "under %, over %: share of the jobs whose estimate was below, above the runtime (the rest were exact)",
    "mean |err| h:m:s, median |err| h:m:s: |estimate - runtime| per job, hours:minutes:seconds (as in "
    "python -m replay)",
    "run/est mean, run/est median: runtime / estimate per job (1 exact, < 1 over-, > 1 under-estimated; no ratio "
    "for an estimate of 0 s); not python -m replay's 0-1 'acc', the shorter over the longer",
    "users: users with jobs that have both estimates; better, worse: the soft walltimes' mean |err| on those jobs "
    "was smaller, larger than the walltimes'",
    "gain h:m:s, loss h:m:s: the walltimes' mean |err| minus the soft walltimes' (loss: the other way round), "
    "per job",
)
"""What the text table's columns mean, printed under it."""


class UserComparison(NamedTuple):
    """Users compared, how many the soft walltime served better, equally, worse, and the extremes.

    ``gains`` and ``losses``: ``(user, jobs, walltime mean |err| s, soft walltime mean |err| s, gain or loss s)``,
    largest first, ties by user name.
    """

    compared: int
    better: int
    equal: int
    worse: int
    gains: Tuple[tuple, ...]
    losses: Tuple[tuple, ...]


def compare_users(user_errors, top=TOP_USERS):
    """The UserComparison of ``(user, jobs, soft |err| sum, walltime |err| sum)`` rows (same jobs on both sides)."""
    rows = [(user, jobs, walltime_sum / jobs, soft_sum / jobs, walltime_sum - soft_sum)
            for user, jobs, soft_sum, walltime_sum in user_errors if jobs]
    better = [row for row in rows if row[4] > 0]
    worse = [row for row in rows if row[4] < 0]
    gains = sorted(better, key=lambda row: (-row[4] / row[1], row[0]))[:top]
    losses = sorted(worse, key=lambda row: (row[4] / row[1], row[0]))[:top]
    return UserComparison(len(rows), len(better), len(rows) - len(better) - len(worse), len(worse),
                          tuple(row[:4] + (row[2] - row[3],) for row in gains),
                          tuple(row[:4] + (row[3] - row[2],) for row in losses))


def _share(count, total):
    return count / total if total else None


_CLASS = Column("runtime_class", "runtime")
_JOB_COLUMNS = (_CLASS, Column("jobs", "jobs", "count"), Column("measured", "measured", "count"),
                Column("without_soft_walltime", "apart", "count"))
_ACCURACY_COLUMNS = (
    _CLASS, Column("estimate", "estimate"), Column("jobs", "jobs", "count"),
    Column("underestimated_share", "under %", "percent"), Column("overestimated_share", "over %", "percent"),
    Column("mean_abs_error_s", "mean |err| h:m:s", "duration_s"),
    Column("median_abs_error_s", "median |err| h:m:s", "duration_s"),
    Column("runtime_ratio_mean", "run/est mean", "ratio", wide=True),
    Column("runtime_ratio_median", "run/est median", "ratio"))
_USER_COLUMNS = (
    Column("users_compared", "users", "count"), Column("soft_better", "better", "count"),
    Column("soft_better_share", "better %", "percent"), Column("soft_equal", "equal", "count"),
    Column("soft_worse", "worse", "count"), Column("soft_worse_share", "worse %", "percent"))


def _top_columns(key, header):
    return (Column("user", "user"), Column("jobs", "jobs", "count"),
            Column("walltime_mean_abs_error_s", "walltime mean |err| h:m:s", "duration_s"),
            Column("soft_walltime_mean_abs_error_s", "soft mean |err| h:m:s", "duration_s"),
            Column(key, header, "duration_s"))


def _job_rows(job_counts):
    found = {row[0]: row[1:4] for row in job_counts}
    return [(name,) + _job_counts(found.get(name, (0, 0))) for name in CLASSES]


def _job_counts(counts):
    jobs, measured = counts[0], counts[1]
    return jobs, measured, jobs - measured


def _accuracy_rows(accuracy):
    found = {(row[0], row[1]): row[2:] for row in accuracy}
    rows = []
    for name in CLASSES:
        for estimate in ESTIMATES:
            jobs, under, over, abs_sum, abs_median, ratio_mean, ratio_median = found.get(
                (name, estimate), (0, 0, 0, None, None, None, None))
            rows.append((name, estimate, jobs, _share(under, jobs), _share(over, jobs),
                         abs_sum / jobs if jobs else None, abs_median, ratio_mean, ratio_median))
    return rows


def _notes(job_counts):
    jobs, measured, no_walltime = next((row[1], row[2], row[3]) for row in job_counts if row[0] == ALL)
    notes = ["{:,} jobs ended in the period: {:,} with a soft walltime are measured; {:,} without one (ended before "
             "the hooks were installed, or given none) are counted apart and left out of every other figure".format(
                 jobs, measured, jobs - measured)]
    if no_walltime:
        notes.append("{:,} measured jobs have no walltime: the walltime rows and the per-user comparison leave "
                     "them out".format(no_walltime))
    if not measured:
        notes.append("no job with a soft walltime ended in the period: nothing to compare")
    return tuple(notes)


def build_report(selection, measured):
    """The Report: jobs per class, accuracy per class and estimate, users compared, top gains and losses."""
    users = compare_users(measured.user_errors)
    return Report("Soft walltime accuracy: " + selection.describe(), _notes(measured.job_counts), (
        Table("jobs", "Jobs by runtime class", _JOB_COLUMNS, _job_rows(measured.job_counts)),
        Table("accuracy", "Soft walltime and walltime against the runtime, jobs with a soft walltime",
              _ACCURACY_COLUMNS, _accuracy_rows(measured.accuracy)),
        Table("users", "Users: the soft walltimes' mean |err| against their own walltimes' (same jobs)",
              _USER_COLUMNS, [(users.compared, users.better, _share(users.better, users.compared), users.equal,
                               users.worse, _share(users.worse, users.compared))]),
        Table("user_gains", "Largest gains: users the soft walltime served best",
              _top_columns("gain_s", "gain h:m:s"), list(users.gains)),
        Table("user_losses", "Largest losses: users the soft walltime served worst",
              _top_columns("loss_s", "loss h:m:s"), list(users.losses)),
    ), LEGEND, summary=_summary(_accuracy_rows(measured.accuracy), users))


def _summary(accuracy_rows, users):
    """What the tables say in two lines: the soft walltimes' and the walltimes' under-estimates and median
    errors over all jobs, the users served better and worse; then what to try next."""
    found = {row[1]: row for row in accuracy_rows if row[0] == ALL and row[2]}
    if ESTIMATES[0] not in found:
        return ()
    said = ["{}: {:.0f}% under-estimated, median |err| {}".format(
        estimate, 100 * found[estimate][3], format_duration(int(round(found[estimate][6]))))
        for estimate in ESTIMATES if estimate in found and found[estimate][6] is not None]
    line = "over all jobs, " + "; ".join(said) + "."
    if users.compared:
        line += " The soft walltimes erred less for {} of {} users, more for {}.".format(
            users.better, users.compared, users.worse)
    return (line, "--plot DIR draws the errors (V curve, runtime classes, users); --user NAME or --queue NAME "
                  "narrows the period's jobs; --wide shows every column.")
