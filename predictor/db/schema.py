"""``db init``: apply the numbered ``sql/NNN_*.sql`` files not yet applied.

All pending files run in one transaction under an advisory lock, so two
concurrent ``db init`` runs cannot interleave and a failure leaves nothing half
done. Every file is itself idempotent.
"""

import os

from ..cmdline import files
from ..cmdline.files import migrations
from ..errors import ConfigError
from .sessions import session

__all__ = ["find_sql_dir", "check_sql_dir", "migrations", "init_schema"]

_LOCK = "SELECT pg_advisory_xact_lock(hashtext('pbs-softwalltime schema'))"
_APPLIED = "SELECT version FROM schema_version"
_RECORD = "INSERT INTO schema_version (version) VALUES (%s) ON CONFLICT DO NOTHING"


def find_sql_dir():
    """The schema files shipped in the package (or in the source checkout)."""
    directory = files.packaged_dir("sql")
    if directory is None or not migrations(directory):
        raise ConfigError("the schema files (sql/*.sql) are missing from the installed package; "
                          "reinstall pbs-softwalltime")
    return directory


def check_sql_dir(directory):
    """``directory`` if it holds schema files ``NNN_name.sql``, else ConfigError."""
    if not os.path.isdir(directory):
        raise ConfigError("--sql-dir {}: no such directory".format(directory))
    if not migrations(directory):
        raise ConfigError("--sql-dir {}: no schema files NNN_name.sql in it".format(directory))
    return directory


def init_schema(dsn, directory=None, timeout_s=600.0, connect_timeout_s=None):
    """Apply pending schema files; return the versions applied (empty if up to date). ``timeout_s`` bounds
    each statement, ``connect_timeout_s`` the connection (``db.sessions``)."""
    schema_files = migrations(check_sql_dir(directory) if directory else find_sql_dir())
    with session(dsn, timeout_s, False, connect_timeout_s) as conn, conn, conn.cursor() as cursor:
        cursor.execute(_LOCK)
        applied = _applied_versions(cursor)
        pending = [(version, path) for version, path in schema_files if version not in applied]
        for version, path in pending:
            with open(path, encoding="utf-8") as sql_file:
                cursor.execute(sql_file.read())
            cursor.execute(_RECORD, (version,))
    return [version for version, _ in pending]


def _applied_versions(cursor):
    cursor.execute("SELECT to_regclass('schema_version') IS NOT NULL")
    if not cursor.fetchone()[0]:
        return set()
    cursor.execute(_APPLIED)
    return {row[0] for row in cursor.fetchall()}
