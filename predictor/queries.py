"""The SQL the package runs, as constants, and the name its sessions show. Values always travel as parameters.

Both sides read it: the hooks (``predictor.server``) and the admin commands (``predictor.db``, ``predictor.ingest``).
"""

__all__ = ["APPLICATION_NAME", "COLUMNS", "RECENT_HISTORY", "RECENT_HISTORY_SINCE", "PROJECT_HISTORY_SINCE",
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
