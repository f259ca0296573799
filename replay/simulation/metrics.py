"""What a simulated schedule measures, per predictor: the ``simulate`` Report.

For the jobs of one predictor's run (``ScheduledJob``s):

* ``wait``: start - submit (mean, median, p95, max);
* ``bsld``: bounded slowdown ``max((wait + run) / max(run, tau), 1)`` with
  ``run`` the simulated runtime (end - start: the time the job held its
  cores, cut at the walltime if killed) and ``tau`` the
  ``--bsld-tau`` threshold (default 10 s; Chlumsky & Klusacek used 600 s,
  Zrigui et al., "Improving the Performance of Batch Schedulers Using Online
  Job Runtime Classification", 60 s);
  mean, median, p95;
* ``utilization`` (summary only): core-seconds run / (machine cores x makespan);
* ``makespan`` (summary only): last end - first submission;
* ``past_soft_walltime``: the share of jobs that ran past their soft walltime
  (the runjob one, which the scheduler planned the running job with; jobs
  without a soft walltime count as not past), and
  ``past_soft_walltime_ratio_median``: over those jobs, the median of
  runtime / soft walltime, how far past it they ran. (A count of OpenPBS's
  additive extensions would say little: a job given a 1 s soft walltime is
  extended once for every second it runs.)
* ``top_jobs``: jobs that were ever a top job (got a reservation);
  ``broken_reservations``: top jobs that started later than the first
  reservation they were given, and ``reservation_delay_mean_s``: by how much, on
  average, over those;
* ``killed``: jobs that outlived their walltime and were cut there.

Breakdowns: by runtime class (simulated runtime <= 2 h, 2-24 h, > 24 h, as the
accuracy replay) and by queue. Percentiles are numpy's linear interpolation.
"""

import math

import numpy as np

from predictor.cmdline.tables import Column, Table, queue_masks, runtime_class_masks

from ..shared.quantiles import median, p95

__all__ = ["DEFAULT_BSLD_TAU_S", "legend_meanings", "ScheduleColumns", "schedule_tables", "group_metrics",
           "machine_metrics", "EVERYONE", "GROUP_COLUMNS", "SUMMARY_COLUMNS"]

DEFAULT_BSLD_TAU_S = 10

GROUP_COLUMNS = (
    Column("jobs", "jobs", "count"),
    Column("wait_mean_s", "wait mean h:m:s", "duration_s"),
    Column("wait_median_s", "wait median h:m:s", "duration_s"),
    Column("wait_p95_s", "wait p95 h:m:s", "duration_s", wide=True),
    Column("wait_max_s", "wait max h:m:s", "duration_s", wide=True),
    Column("bsld_mean", "bsld mean", "ratio"),
    Column("bsld_median", "bsld median", "ratio", wide=True),
    Column("bsld_p95", "bsld p95", "ratio", wide=True),
    Column("past_soft_walltime", "past soft %", "percent"),
    Column("past_soft_walltime_ratio_median", "run/soft median", "ratio", wide=True),
    Column("top_jobs", "top jobs", "count", wide=True),
    Column("broken_reservations", "broken", "count"),
    Column("reservation_delay_mean_s", "delay mean h:m:s", "duration_s", wide=True),
    Column("killed", "killed", "count", wide=True),
)
SUMMARY_COLUMNS = GROUP_COLUMNS + (Column("utilization", "util %", "percent", wide=True),
                                   Column("makespan_s", "makespan h:m:s", "duration_s", wide=True))
_WHO = (Column("predictor", "predictor"),)


def legend_meanings(tau_s):
    """Text-table header(s) -> what they mean, for a run with bounded-slowdown threshold ``tau_s``."""
    return (
        (("predictor",), "whose soft walltimes the scheduler planned with (one line each below); every run has "
                         "the same jobs on the same machine"),
        (("runtime",), "the jobs' simulated runtime class: <=2h, 2-24h, >24h"),
        (("queue",), "the jobs' PBS queue"),
        (("jobs",), "number of jobs simulated"),
        (("wait mean h:m:s", "wait median h:m:s", "wait p95 h:m:s", "wait max h:m:s"),
         "wait = simulated start - submission, hours:minutes:seconds (p95: 95th percentile)"),
        (("bsld mean", "bsld median", "bsld p95"),
         "bounded slowdown = max((wait + run) / max(run, tau), 1) with tau = {} s in this run (--bsld-tau): "
         "1 is no wait; no unit".format(tau_s)),
        (("past soft %",), "share of the jobs that ran past the soft walltime they were started with"),
        (("run/soft median",), "over those jobs, the median of runtime / soft walltime: how far past it they "
                               "ran (2 = twice as long); no unit"),
        (("top jobs",), "jobs that were ever a top job (given a reservation, up to backfill_depth at once)"),
        (("broken",), "top jobs that started later than the first reservation they were given"),
        (("delay mean h:m:s",), "by how much those started late, on average"),
        (("killed",), "jobs that outlived their walltime and were cut there"),
        (("util %",), "core-seconds run / (machine cores x makespan)"),
        (("makespan h:m:s",), "last end - first submission"),
    )


class ScheduleColumns:
    """One run's per-job arrays, in submission order: ``submit``, ``start``, ``end``, ``runtime``, ``wait``,
    ``bsld``, ``soft``, ``reservation``, ``killed``, ``queues``, ``width``.

    They are made when one is first read, and ``release`` lets them go (they are made again if read again):
    the tables are made one run at a time, so a run's arrays need not stay beside every other run's.
    """

    NAMES = ("submit", "start", "end", "runtime", "wait", "bsld", "soft", "reservation", "killed", "queues",
             "width")

    def __init__(self, scheduled, tau_s):
        self._scheduled, self._tau_s, self._arrays = scheduled, tau_s, None

    def __getattr__(self, name):
        if name not in ScheduleColumns.NAMES:
            raise AttributeError(name)
        if self._arrays is None:
            self._arrays = self._made()
        return self._arrays[name]

    def release(self):
        """Let the arrays go until one is read again."""
        self._arrays = None

    def _made(self):
        scheduled = self._scheduled
        # A ScheduledRun has its arrays at hand; a list of ScheduledJobs is read job by job.
        arrays = scheduled.arrays() if hasattr(scheduled, "arrays") else _arrays(scheduled)
        arrays["wait"] = arrays["start"] - arrays["submit"]
        arrays["bsld"] = np.maximum((arrays["wait"] + arrays["runtime"]) / np.maximum(arrays["runtime"], self._tau_s),
                                    1.0)
        return arrays


def _arrays(scheduled):
    """The per-job arrays of a list of ``ScheduledJob``s."""
    count = len(scheduled)
    return {
        "submit": np.fromiter((done.job.submit_time for done in scheduled), np.int64, count),
        "start": np.fromiter((done.start_time for done in scheduled), np.int64, count),
        "end": np.fromiter((done.end_time for done in scheduled), np.int64, count),
        "runtime": np.fromiter((done.runtime_s for done in scheduled), np.int64, count),
        "soft": np.fromiter((done.soft_walltime_started_s or 0 for done in scheduled), np.int64, count),
        "reservation": np.fromiter((-1 if done.reservation_time is None else done.reservation_time
                                    for done in scheduled), np.int64, count),
        "killed": np.fromiter((done.killed for done in scheduled), np.bool_, count),
        "queues": np.array([done.job.queue or "-" for done in scheduled], dtype=object),
        "width": np.fromiter((done.width for done in scheduled), np.int64, count),
    }


def _stat(values, how):
    return None if values.size == 0 else float(how(values))


EVERYONE = slice(None)
"""The ``mask`` of every job: views of the arrays, no copies."""


def group_metrics(columns, mask):
    """The GROUP_COLUMNS values (after ``jobs``) over the jobs in ``mask`` (a bool array, or ``EVERYONE``)."""
    wait, bsld = columns.wait[mask], columns.bsld[mask]
    soft, runtime = columns.soft[mask], columns.runtime[mask]
    past = (soft > 0) & (runtime > soft)
    top = columns.reservation >= 0
    if mask is not EVERYONE:
        top &= mask
    delay = columns.start[top] - columns.reservation[top]
    broken = delay[delay > 0]
    return (int(wait.size), _stat(wait, np.mean), _stat(wait, median), _stat(wait, p95), _stat(wait, np.max),
            _stat(bsld, np.mean), _stat(bsld, median), _stat(bsld, p95), _stat(past, np.mean),
            _stat(runtime[past] / soft[past], median), int(np.count_nonzero(top)), int(broken.size),
            _stat(broken, np.mean),
            int(np.count_nonzero(columns.killed[mask])))


def machine_metrics(columns, cluster):
    """``(utilization, makespan_s)`` of one run on ``cluster`` (a ``Cluster``)."""
    if columns.end.size == 0:
        return None, None
    makespan = int(columns.end.max() - columns.submit.min())
    used = math.fsum((cluster.cores_held(columns.width.astype(np.int64)) * columns.runtime).tolist())
    return (used / (cluster.cores * makespan) if makespan else None), makespan


def schedule_tables(runs, tau_s, cluster):
    """The Report's tables for ``runs`` (``{predictor: [ScheduledJob]}``) and their columns by predictor."""
    columns = {name: ScheduleColumns(scheduled, tau_s) for name, scheduled in runs.items()}
    summary, by_class, by_queue = [], [], []
    for name, cols in columns.items():
        summary.append((name,) + group_metrics(cols, EVERYONE) + machine_metrics(cols, cluster))
        by_class += [(name, group) + group_metrics(cols, mask) for group, mask in runtime_class_masks(cols.runtime)]
        queues = queue_masks(cols.queues)
        if len(queues) > 1:  # one queue: no table by queue
            by_queue += [(name, group) + group_metrics(cols, mask) for group, mask in queues]
        cols.release()
    tables = [Table("summary", "All jobs", _WHO + SUMMARY_COLUMNS, summary),
              Table("by_runtime_class", "By runtime class (simulated runtime <= 2 h, 2-24 h, > 24 h)",
                    _WHO + (Column("runtime_class", "runtime"),) + GROUP_COLUMNS, by_class)]
    if by_queue:
        tables.append(Table("by_queue", "By queue", _WHO + (Column("queue", "queue"),) + GROUP_COLUMNS, by_queue))
    return tables, columns
