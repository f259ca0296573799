"""The SQL the package runs, as constants, and the name its sessions show. Values always travel as parameters.

Both sides read it: the hooks (``predictor.server``) and the admin commands (``predictor.db``, ``predictor.ingest``).
"""

__all__ = ["APPLICATION_NAME", "COLUMNS", "RECENT_HISTORY", "RECENT_HISTORY_SINCE", "PROJECT_HISTORY_SINCE",
           "TANG_PERCENTILE", "TANG_PERCENTILE_CHECKPOINTED", "RATIO_KEY_BITS", "TANG_EXACT_ROWS",
           "percentile_fraction",
           "CREATE_STAGING", "COPY_STAGING",
           "UPSERT_STAGED", "UPSERT_ONE", "PROGRESS_GET", "PROGRESS_PUT", "job_values"]

APPLICATION_NAME = "pbs-softwalltime"
"""The ``application_name`` of every session, hook or admin command, unless the DSN names another."""

COLUMNS = (
    "job_id", "user_name", "group_name", "project", "queue", "ncpus", "walltime_s",
    "runtime_s", "soft_walltime_s", "submit_time", "start_time", "end_time", "exit_status",
)
"""completed_jobs columns, in the order ``job_values`` gives them."""

RECENT_HISTORY = (
    "SELECT end_time, job_id, runtime_s, walltime_s, project FROM completed_jobs"
    " WHERE user_name = %s"
    " ORDER BY end_time DESC, job_id DESC LIMIT %s"
)
"""A user's newest jobs: one index-only scan of completed_jobs_user_recent."""

RECENT_HISTORY_SINCE = (
    "SELECT end_time, job_id, runtime_s, walltime_s, project FROM completed_jobs"
    " WHERE user_name = %s AND end_time >= %s"
    " ORDER BY end_time DESC, job_id DESC LIMIT %s"
)
"""A user's newest jobs that ended at or after a time: the same index-only scan, stopped at that end time."""

PROJECT_HISTORY_SINCE = (
    "SELECT end_time, job_id, runtime_s, walltime_s, project FROM completed_jobs"
    " WHERE project = %s AND end_time >= %s"
    " ORDER BY end_time DESC, job_id DESC LIMIT %s"
)
"""A project's newest jobs (every user's) that ended at or after a time: an index-only scan of
completed_jobs_project_recent, stopped at that end time."""

RATIO_KEY_BITS = 62
"""R = min(runtime, walltime) / walltime is ordered in SQL by ``floor(R x 2**62)``, a bigint computed by long
division: two R with denominators below 2**31 differ by more than 2**-62, so distinct R get distinct keys, and the
R of a key is the fraction with a denominator below 2**31 nearest to its middle (``Fraction.limit_denominator``).
Where the key fixes the walltime, R is ordered by ``min(runtime, walltime)`` itself."""

_USED = "LEAST(runtime_s, walltime_s)"
_RATIO_KEY = (
    "(((" + _USED + "::bigint << 31) / walltime_s) << 31)"
    " + (((" + _USED + "::bigint << 31) %% walltime_s) << 31) / walltime_s"
)
_TANG_WHERE = {
    "user": "user_name = %s AND end_time >= %s::bigint AND walltime_s > 0",
    "user+walltime": "user_name = %s AND walltime_s = %s AND end_time >= %s::bigint",
    "user+project": "user_name = %s AND project = %s AND end_time >= %s::bigint AND walltime_s > 0",
    "user+no project": "user_name = %s AND project IS NULL AND end_time >= %s::bigint AND walltime_s > 0",
    "user+project+walltime": "user_name = %s AND project = %s AND walltime_s = %s AND end_time >= %s::bigint",
    "user+no project+walltime": "user_name = %s AND project IS NULL AND walltime_s = %s AND end_time >= %s::bigint",
    "project": "project = %s AND end_time >= %s::bigint AND walltime_s > 0",
}
TANG_PERCENTILE = {
    form: "SELECT count(*), percentile_disc(%s::float8) WITHIN GROUP (ORDER BY "
          + (_USED if form.endswith("walltime") else _RATIO_KEY) + ") FROM completed_jobs WHERE " + where
    for form, where in _TANG_WHERE.items()
}
"""tang's eligible rows counted, and their nearest-rank percentile taken, by PostgreSQL in one index range scan,
per key (a job without a project: the ``no project`` forms): ``(rows, the percentile's ratio key)``, the ratio
key being ``min(runtime, walltime)`` for the forms ending in walltime. Parameters: the fraction given to
``percentile_disc`` (``percentile_fraction``), the key's values (user, project, walltime, in that order), the
oldest end time. The rows of the user's key with a project and a walltime are one range of completed_jobs_tang
(schema version 6); the user's key's, of completed_jobs_user_recent; the project key's, of
completed_jobs_project_recent."""

TANG_PERCENTILE_CHECKPOINTED = (
    "SELECT eligible, used FROM tang_percentile(%s::text, %s::text, %s::integer, %s::bigint, %s::integer)"
)
"""tang's default key (user, project, walltime) through its checkpoints (schema versions 7 to 9,
sql/007_tang_checkpoints.sql to sql/009_tang_percentile_nearer_end.sql): ``(eligible rows, min(runtime, walltime)
at the nearest rank)``, the same answer as ``TANG_PERCENTILE["user+project+walltime"]`` (or ``"user+no
project+walltime"``, project None) without reading every job of the window: two checkpoints, the jobs around them
(about 2 x 64) and one bucket of the window's jobs. The rank is ``ceil(percentile x rows / 100)`` in integers.
Parameters: user, project (None: none), walltime, the oldest end time, the percentile (a whole number)."""

TANG_EXACT_ROWS = 10 ** 8
"""``percentile_fraction`` is exact below this many eligible rows."""


def percentile_fraction(percentile):
    """What ``percentile_disc`` is given for the nearest-rank ``percentile``: ``percentile/100 - 1e-10``. Its own
    ``ceil(fraction x rows)`` in floating point is then ``ceil(percentile x rows / 100)`` for every count of rows
    below ``TANG_EXACT_ROWS``: 1e-10 x rows stays below the 1/100 between a rank and the value under it, and far
    above the floating-point error (about 1e-16 x rows); ``percentile/100`` alone would not be (0.07 x 100 is
    7.000000000000001 in floating point, rank 8 instead of 7)."""
    return percentile / 100 - 1e-10


_COLUMN_LIST = ", ".join(COLUMNS)
_COLUMN_TYPES = ("text", "text", "text", "text", "text", "integer", "integer", "integer", "integer", "bigint",
                 "bigint", "bigint", "integer")
"""completed_jobs' column types, in ``COLUMNS`` order: each parameter of UPSERT_ONE is cast to its column's type,
so the statement means the same whatever type a driver sends a value as."""

CREATE_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS ingest_staging (LIKE completed_jobs) ON COMMIT DELETE ROWS"
)
"""The ingester's per-session staging table (temporary: no schema change)."""

COPY_STAGING = "COPY ingest_staging (" + _COLUMN_LIST + ") FROM STDIN"
UPSERT_STAGED = (
    "SELECT record_completed_jobs(ARRAY(SELECT ROW(s.*)::completed_jobs FROM ingest_staging s))"
)
"""Batch upsert of the staged rows (the ingester), through the function the writer role may execute
(sql/004_writer_through_functions.sql): the same conflict rule as UPSERT_ONE."""

UPSERT_ONE = (
    "SELECT record_completed_jobs(ARRAY[ROW("
    + ", ".join("%s::" + kind for kind in _COLUMN_TYPES) + ")::completed_jobs])"
)
"""One-job upsert (the jobobit hook, and the ingester isolating a refused row): the same function."""

PROGRESS_GET = "SELECT head_sha1, tail_sha1, offset_bytes, line_no FROM ingest_progress WHERE path = %s"
PROGRESS_PUT = "SELECT record_ingest_progress(%s, %s, %s, %s, %s)"
"""A file's progress, written in the transaction of the rows it covers, through the writer's function."""


def job_values(job):
    """A ``CompletedJob`` as a tuple in ``COLUMNS`` order."""
    return (
        job.job_id, job.user, job.group, job.project, job.queue, job.ncpus, job.walltime_s,
        job.runtime_s, job.soft_walltime_s, job.submit_time, job.start_time, job.end_time,
        job.exit_status,
    )
