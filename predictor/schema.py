"""``db init``: apply the numbered ``sql/NNN_*.sql`` files not yet applied.

All pending files run in one transaction under an advisory lock, so two
concurrent ``db init`` runs cannot interleave and a failure leaves nothing half
done. Every file is itself idempotent.
"""

import os
import re
import sys

import psycopg2

from .errors import ConfigError, DatabaseError
from .pgstore import describe_error, session_dsn

__all__ = ["find_sql_dir", "migrations", "init_schema"]

_MIGRATION = re.compile(r"^([0-9]+)_[A-Za-z0-9_-]+\.sql$")
_LOCK = "SELECT pg_advisory_xact_lock(hashtext('pbs-softwalltime schema'))"
_APPLIED = "SELECT version FROM schema_version"
_RECORD = "INSERT INTO schema_version (version) VALUES (%s) ON CONFLICT DO NOTHING"


def find_sql_dir():
    """``$PBS_SOFTWALLTIME_SQL``, the source checkout's ``sql/``, or the installed copy."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.environ.get("PBS_SOFTWALLTIME_SQL"),
        os.path.join(os.path.dirname(here), "sql"),
        os.path.join(sys.prefix, "share", "pbs-softwalltime", "sql"),
    ]
    for candidate in candidates:
        if candidate and migrations(candidate):
            return candidate
    raise ConfigError("no schema files found; set PBS_SOFTWALLTIME_SQL to the sql/ directory")


def migrations(directory):
    """``[(version, path)]`` for the schema files in ``directory``, in order."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = [(int(m.group(1)), os.path.join(directory, name)) for name in names for m in [_MIGRATION.match(name)] if m]
    return sorted(found)


def init_schema(dsn, directory=None, timeout_s=600.0):
    """Apply pending schema files; return the versions applied (empty if up to date)."""
    files = migrations(directory or find_sql_dir())
    try:
        conn = psycopg2.connect(session_dsn(dsn, timeout_s, read_only=False))
    except psycopg2.Error as err:
        raise DatabaseError(describe_error(err)) from err
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute(_LOCK)
            applied = _applied_versions(cursor)
            pending = [(version, path) for version, path in files if version not in applied]
            for version, path in pending:
                with open(path, encoding="utf-8") as sql_file:
                    cursor.execute(sql_file.read())
                cursor.execute(_RECORD, (version,))
        return [version for version, _ in pending]
    except psycopg2.Error as err:
        raise DatabaseError(describe_error(err)) from err
    finally:
        conn.close()


def _applied_versions(cursor):
    cursor.execute("SELECT to_regclass('schema_version') IS NOT NULL")
    if not cursor.fetchone()[0]:
        return set()
    cursor.execute(_APPLIED)
    return {row[0] for row in cursor.fetchall()}
