"""The report's SQL: every figure is aggregated in PostgreSQL, so only a few rows per query come back.

All queries start from ``period_jobs``, the selected rows of completed_jobs
with their runtime class, and most from ``estimates``: each job with a soft
walltime twice, once per estimate (``kind`` indexes ESTIMATES), with its
error ``estimate - runtime`` in seconds. Values always travel as parameters
(``Selection`` fields, the class bounds, quantile fractions).
"""

from ..cmdline.tables import RUNTIME_CLASSES

__all__ = ["ESTIMATES", "JOB_COUNTS", "ACCURACY", "USER_ERRORS", "SORTED_ERRORS", "BOX_STATS", "class_bounds"]

ESTIMATES = ("soft walltime", "walltime")
"""``kind`` 0: the soft walltime the hooks set; 1: the user's own walltime (Resource_List.walltime)."""


def class_bounds():
    """Parameters: the upper runtime bound of every class but the last, ``class_N_s``."""
    return {"class_{}_s".format(index): high for index, (_, _, high) in enumerate(RUNTIME_CLASSES) if high}


_CLASS_OF_RUNTIME = "CASE {} ELSE {} END".format(
    " ".join("WHEN runtime_s <= %(class_{0}_s)s THEN {0}".format(index)
             for index, (_, _, high) in enumerate(RUNTIME_CLASSES) if high), len(RUNTIME_CLASSES) - 1)

_PERIOD_JOBS = (
    "WITH period_jobs AS ("
    " SELECT user_name, runtime_s, walltime_s, soft_walltime_s, " + _CLASS_OF_RUNTIME + " AS runtime_class"
    " FROM completed_jobs"
    " WHERE end_time >= %(since)s AND end_time < %(until)s"
    " AND (%(user)s::text IS NULL OR user_name = %(user)s)"
    " AND (%(queue)s::text IS NULL OR queue = %(queue)s))"
)

_ESTIMATES = (
    _PERIOD_JOBS + ", estimates AS ("
    " SELECT runtime_class, runtime_s, estimate.kind, estimate.seconds AS estimate_s,"
    " estimate.seconds - runtime_s AS error_s"
    " FROM period_jobs CROSS JOIN LATERAL (VALUES (0, soft_walltime_s), (1, walltime_s)) AS estimate (kind, seconds)"
    " WHERE soft_walltime_s IS NOT NULL AND estimate.seconds IS NOT NULL)"
)

JOB_COUNTS = (
    _PERIOD_JOBS + " SELECT runtime_class, count(*), count(soft_walltime_s),"
    " count(*) FILTER (WHERE soft_walltime_s IS NOT NULL AND walltime_s IS NULL)"
    " FROM period_jobs GROUP BY ROLLUP (runtime_class)"
)
"""Per runtime class and in all (class NULL): jobs, jobs with a soft walltime, those of them without a walltime."""

ACCURACY = (
    _ESTIMATES + " SELECT kind, runtime_class, count(*),"
    " count(*) FILTER (WHERE error_s < 0), count(*) FILTER (WHERE error_s > 0),"
    " sum(abs(error_s)), percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(error_s)),"
    " avg(runtime_s::float8 / nullif(estimate_s, 0)),"
    " percentile_cont(0.5) WITHIN GROUP (ORDER BY runtime_s::float8 / nullif(estimate_s, 0))"
    " FROM estimates GROUP BY GROUPING SETS ((kind), (kind, runtime_class))"
)
"""Per estimate, in all (class NULL) and per class: jobs, under, over, sum and median of |error|,
mean and median of runtime/estimate (an estimate of 0 s has no ratio)."""

USER_ERRORS = (
    _PERIOD_JOBS + " SELECT user_name, count(*), sum(abs(soft_walltime_s - runtime_s)),"
    " sum(abs(walltime_s - runtime_s))"
    " FROM period_jobs WHERE soft_walltime_s IS NOT NULL AND walltime_s IS NOT NULL GROUP BY user_name"
)
"""Per user, over their jobs with both estimates: jobs, sum of |error| of the soft walltime, of the walltime."""

_FRACTIONS_OF_KIND = "CASE kind {} END".format(
    " ".join("WHEN {0} THEN %(fractions_{0})s::float8[]".format(kind) for kind in range(len(ESTIMATES))))

SORTED_ERRORS = (
    _ESTIMATES + " SELECT kind, percentile_disc(" + _FRACTIONS_OF_KIND + ") WITHIN GROUP (ORDER BY error_s)"
    " FROM estimates GROUP BY kind"
)
"""Each estimate's errors at its quantiles ``fractions_KIND``: evenly spaced, they draw the V curve."""

BOX_STATS = (
    _ESTIMATES + ", quartiles AS ("
    " SELECT kind, runtime_class, count(*) AS jobs,"
    " percentile_cont(ARRAY[0.25, 0.5, 0.75]::float8[]) WITHIN GROUP (ORDER BY error_s) AS q"
    " FROM estimates GROUP BY kind, runtime_class)"
    " SELECT q.kind, q.runtime_class, q.jobs, q.q[1], q.q[2], q.q[3],"
    " min(e.error_s) FILTER (WHERE e.error_s >= q.q[1] - %(whisker_iqr)s * (q.q[3] - q.q[1])),"
    " max(e.error_s) FILTER (WHERE e.error_s <= q.q[3] + %(whisker_iqr)s * (q.q[3] - q.q[1]))"
    " FROM quartiles q JOIN estimates e ON e.kind = q.kind AND e.runtime_class = q.runtime_class"
    " GROUP BY q.kind, q.runtime_class, q.jobs, q.q"
)
"""Per estimate and class: jobs, quartiles of the error (interpolated, as numpy), and the furthest errors
within ``whisker_iqr`` interquartile ranges of the box (the whiskers)."""
