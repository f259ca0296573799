"""The SQL the package runs, as constants, and the name its sessions show. Values always travel as parameters.

Both sides read it: the hooks (``predictor.server``) and the admin commands (``predictor.db``, ``predictor.ingest``).
"""

__all__ = ["APPLICATION_NAME", "COLUMNS", "RECENT_HISTORY", "RECENT_HISTORY_SINCE", "CREATE_STAGING", "COPY_STAGING",
           "UPSERT_STAGED", "UPSERT_ONE", "PROGRESS_GET", "PROGRESS_PUT", "job_values"]

APPLICATION_NAME = "pbs-softwalltime"
"""The ``application_name`` of every session, hook or admin command, unless the DSN names another."""

COLUMNS = (
    "job_id", "user_name", "group_name", "project", "queue", "ncpus", "walltime_s",
    "runtime_s", "soft_walltime_s", "submit_time", "start_time", "end_time", "exit_status",
)
"""completed_jobs columns, in the order ``job_values`` gives them."""

RECENT_HISTORY = (
    "SELECT end_time, job_id, runtime_s, walltime_s FROM completed_jobs"
    " WHERE user_name = %s"
    " ORDER BY end_time DESC, job_id DESC LIMIT %s"
)
"""A user's newest jobs: one index-only scan of completed_jobs_user_recent."""

RECENT_HISTORY_SINCE = (
    "SELECT end_time, job_id, runtime_s, walltime_s FROM completed_jobs"
    " WHERE user_name = %s AND end_time >= %s"
    " ORDER BY end_time DESC, job_id DESC LIMIT %s"
)
"""A user's newest jobs that ended at or after a time: the same index-only scan, stopped at that end time."""

_COLUMN_LIST = ", ".join(COLUMNS)
_UPDATED = [name for name in COLUMNS if name != "job_id"]
_ON_CONFLICT = (
    " ON CONFLICT (job_id) DO UPDATE SET "
    + ", ".join("{0} = EXCLUDED.{0}".format(name) for name in _UPDATED)
    + " WHERE (" + ", ".join("completed_jobs." + name for name in _UPDATED) + ")"
    + " IS DISTINCT FROM (" + ", ".join("EXCLUDED." + name for name in _UPDATED) + ")"
)

CREATE_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS ingest_staging (LIKE completed_jobs) ON COMMIT DELETE ROWS"
)
"""The ingester's per-session staging table (temporary: no schema change)."""

COPY_STAGING = "COPY ingest_staging (" + _COLUMN_LIST + ") FROM STDIN"
UPSERT_STAGED = (
    "INSERT INTO completed_jobs (" + _COLUMN_LIST + ") SELECT " + _COLUMN_LIST + " FROM ingest_staging"
    + _ON_CONFLICT
)
"""Batch upsert of the staged rows (the ingester): the same conflict rule as UPSERT_ONE."""

UPSERT_ONE = (
    "INSERT INTO completed_jobs (" + _COLUMN_LIST + ") VALUES ("
    + ", ".join(["%s"] * len(COLUMNS)) + ")" + _ON_CONFLICT
)
"""One-job upsert (the jobobit hook): the same statement as the ingester's."""

PROGRESS_GET = "SELECT head_sha1, tail_sha1, offset_bytes, line_no FROM ingest_progress WHERE path = %s"
PROGRESS_PUT = (
    "INSERT INTO ingest_progress (path, head_sha1, tail_sha1, offset_bytes, line_no, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, now())"
    " ON CONFLICT (path) DO UPDATE SET head_sha1 = EXCLUDED.head_sha1,"
    " tail_sha1 = EXCLUDED.tail_sha1, offset_bytes = EXCLUDED.offset_bytes,"
    " line_no = EXCLUDED.line_no, updated_at = EXCLUDED.updated_at"
)


def job_values(job):
    """A ``CompletedJob`` as a tuple in ``COLUMNS`` order."""
    return (
        job.job_id, job.user, job.group, job.project, job.queue, job.ncpus, job.walltime_s,
        job.runtime_s, job.soft_walltime_s, job.submit_time, job.start_time, job.end_time,
        job.exit_status,
    )
