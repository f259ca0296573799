"""``db prune``: delete the completed_jobs rows that no predictor reads any more.

The predictors read each user's newest jobs (v3: the last 15), so a row can go
once it is both older than a given age and deeper than the newest
``keep_per_user`` jobs of its user. Both conditions must hold: a user who ran
nothing for a year keeps the history their next job will be predicted from.
The age condition keeps recent rows for reports over recent periods.

Deleting needs the database owner's role (the writer role never deletes).
Safe to run from cron: one statement, in one transaction.
"""


from .sessions import session

__all__ = ["prune", "DEFAULT_KEEP_PER_USER"]

DEFAULT_KEEP_PER_USER = 15
"""The largest default window of the predictors (v3)."""

_PRUNABLE = (
    "SELECT job_id FROM ("
    " SELECT job_id, end_time, row_number() OVER"
    " (PARTITION BY user_name ORDER BY end_time DESC, job_id DESC) AS depth FROM completed_jobs"
    ") ranked WHERE depth > %(keep)s AND end_time < %(before)s"
)
COUNT_PRUNABLE = "SELECT count(*) FROM (" + _PRUNABLE + ") prunable"
DELETE_PRUNABLE = "DELETE FROM completed_jobs WHERE job_id IN (" + _PRUNABLE + ")"


def prune(dsn, before_epoch, keep_per_user, dry_run=False, timeout_s=3600.0, connect_timeout_s=None):
    """Delete (or with ``dry_run`` only count) the prunable rows; return how many. ``timeout_s`` bounds the
    statement, ``connect_timeout_s`` the connection (``db.sessions``)."""
    params = {"keep": keep_per_user, "before": before_epoch}
    with session(dsn, timeout_s, dry_run, connect_timeout_s) as conn, conn, conn.cursor() as cursor:
        if dry_run:
            cursor.execute(COUNT_PRUNABLE, params)
            return cursor.fetchone()[0]
        cursor.execute(DELETE_PRUNABLE, params)
        return cursor.rowcount
