"""The test server's admin DSN and small helpers, for pytest and the Python 3.6 driver alike.

Python 3.6 syntax, stdlib and psycopg2 only: tests/py36_hooks_driver.py runs
under PBS's interpreter version and imports this too.
"""

import os

import psycopg2
import psycopg2.extensions

ADMIN_DSN = os.environ.get("PBS_SOFTWALLTIME_TEST_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=postgres")
READER_LOGIN = "softwalltime_test_reader"
WRITER_LOGIN = "softwalltime_test_writer"
"""Login roles the tests create in the reader and writer group roles (cluster-wide)."""


def dsn_for(dbname, user=None):
    """The admin DSN pointed at ``dbname`` (and at login ``user``, if given)."""
    params = psycopg2.extensions.parse_dsn(ADMIN_DSN)
    params["dbname"] = dbname
    if user:
        params["user"] = user
    return psycopg2.extensions.make_dsn(**params)


def admin_execute(*statements):
    """Run statements as the admin, each in autocommit (CREATE/DROP DATABASE, roles)."""
    conn = psycopg2.connect(ADMIN_DSN, connect_timeout=5)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
    finally:
        conn.close()


def run_sql(dsn, statement, params=None):
    """One statement as the user of ``dsn``, committed; its rows if it returns any."""
    conn = psycopg2.connect(dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute(statement, params)
            return cursor.fetchall() if cursor.description else None
    finally:
        conn.close()


def terminate_backend(dsn, pid):
    """End server process ``pid`` (as PostgreSQL does on a restart or an admin's kill), as the user of ``dsn``."""
    conn = psycopg2.connect(dsn, connect_timeout=5)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
    finally:
        conn.close()


def ensure_login(name, group):
    """Create login role ``name`` in ``group`` unless it exists (roles are cluster-wide)."""
    admin_execute(
        "DO $$ BEGIN CREATE ROLE {} LOGIN IN ROLE {}; "
        "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$".format(name, group),
        "GRANT {} TO {}".format(group, name),
    )
