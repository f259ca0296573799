"""Least privilege, tried for real: what the two roles cannot do, and a password that never shows.

The reader login (predictions) and the writer login (ingester, jobobit) each
try every kind of write and schema change they must not make, one statement
per transaction, and must get "permission denied" (or "must be owner") from
the server. The password checks use a private cluster with scram-sha-256
authentication, so real authentication failures happen: every hook log line,
every CLI output and every exception chain (as a traceback would print it) is
searched for the password.
"""

import os
import subprocess
import sys
import traceback
import uuid

import pbs_standin as pbs
import psycopg2
import psycopg2.errors
import psycopg2.extensions
import pytest
from hookenv import (
    finished_job,
    fresh_pbs_server,  # noqa: F401 (a fixture)
    run,
    write_config,
)
from pgcluster import PrivateCluster

from predictor.db.schema import init_schema
from predictor.errors import PredictorError
from predictor.server.dsn import connect_params
from predictor.server.store import HookHistory

A_ROW = "('x.svr', 'x', 1, 1)"

READER_REFUSED = [
    "INSERT INTO completed_jobs (job_id, user_name, runtime_s, end_time) VALUES " + A_ROW,
    "UPDATE completed_jobs SET runtime_s = 0",
    "DELETE FROM completed_jobs",
    "TRUNCATE completed_jobs",
    "INSERT INTO ingest_progress (path, head_sha1, tail_sha1, offset_bytes, line_no) VALUES ('p', 'h', 't', 0, 0)",
    "UPDATE ingest_progress SET line_no = 0",
    "DELETE FROM ingest_progress",
    "UPDATE schema_version SET version = 99",
    "CREATE TABLE public.x (a int)",
    "CREATE SCHEMA x",
    "CREATE VIEW public.v AS SELECT 1",
    "CREATE SEQUENCE public.s",
    "CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE INDEX ON completed_jobs (queue)",
    "INSERT INTO tang_checkpoints VALUES ('x', '', 1, 1, '{}')",
    "UPDATE tang_checkpoints SET counts = '{}'",
    "DELETE FROM tang_checkpoints",
    "UPDATE tang_settings SET checkpoint_rows = 1",
    "SELECT tang_refresh('x', NULL, 1, 0)",
    "DROP TRIGGER tang_checkpoints_insert ON completed_jobs",
]
"""What the prediction role (queuejob, runjob, modifyjob, predict) must not do.
Temporary tables and large objects, which PostgreSQL lets any role create, are
tried in test_schema.py (schema version 3 takes them away)."""

WRITER_REFUSED = [
    "DROP TABLE completed_jobs",
    "DROP TABLE ingest_progress",
    "DROP TABLE schema_version",
    "DROP INDEX completed_jobs_user_recent",
    "ALTER TABLE completed_jobs ADD COLUMN x int",
    "ALTER TABLE completed_jobs DROP COLUMN queue",
    "ALTER TABLE completed_jobs RENAME TO old_jobs",
    "ALTER TABLE ingest_progress ALTER COLUMN path TYPE varchar",
    "ALTER INDEX completed_jobs_user_recent RENAME TO x",
    "COMMENT ON TABLE completed_jobs IS 'x'",
    "DELETE FROM completed_jobs",
    "DELETE FROM ingest_progress",
    "TRUNCATE completed_jobs",
    "TRUNCATE ingest_progress",
    "UPDATE schema_version SET version = 99",
    "DELETE FROM schema_version",
    "CREATE TABLE public.x (a int)",
    "CREATE SCHEMA x",
    "CREATE INDEX ON completed_jobs (queue)",
    "LOCK TABLE completed_jobs IN ACCESS EXCLUSIVE MODE",
    "LOCK TABLE completed_jobs IN SHARE MODE",
    "LOCK TABLE ingest_progress IN ACCESS EXCLUSIVE MODE",
    "SELECT * FROM completed_jobs FOR UPDATE",
    "SELECT * FROM ingest_progress FOR UPDATE",
    "UPDATE completed_jobs SET runtime_s = 0",
    "INSERT INTO completed_jobs (job_id, user_name, runtime_s, end_time) VALUES " + A_ROW,
    "INSERT INTO completed_jobs (job_id, user_name, runtime_s, end_time) VALUES " + A_ROW
    + " ON CONFLICT (job_id) DO UPDATE SET runtime_s = 2",
    "UPDATE ingest_progress SET line_no = 0",
    "INSERT INTO ingest_progress (path, head_sha1, tail_sha1, offset_bytes, line_no) VALUES ('p', 'h', 't', 0, 0)",
    "CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE OR REPLACE FUNCTION record_ingest_progress(path text, head_sha1 text, tail_sha1 text, "
    "offset_bytes bigint, line_no bigint) RETURNS void LANGUAGE sql AS 'SELECT 1'",
    "INSERT INTO tang_checkpoints VALUES ('x', '', 1, 1, '{}')",
    "UPDATE tang_checkpoints SET counts = '{}'",
    "DELETE FROM tang_checkpoints",
    "TRUNCATE tang_checkpoints",
    "UPDATE tang_settings SET checkpoint_rows = 1",
    "SELECT tang_refresh('x', NULL, 1, 0)",
    "ALTER TABLE completed_jobs DISABLE TRIGGER tang_checkpoints_insert",
    "DROP TRIGGER tang_checkpoints_insert ON completed_jobs",
]
"""What the write role (ingest, jobobit) must not do: it records jobs and the ingester's progress through two
functions, nothing else (no lock that stalls the predictions, no update of every row)."""


def attempt(dsn, statement):
    """Run ``statement`` in a transaction that is rolled back; the error, or None if it worked."""
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cursor:
            cursor.execute(statement)
    except psycopg2.Error as err:
        return err
    finally:
        conn.rollback()
        conn.close()
    return None


@pytest.mark.parametrize("statement", READER_REFUSED)
def test_reader_role_is_refused(database, statement):
    """The prediction role cannot write a row or create or change an object."""
    assert isinstance(attempt(database.reader_dsn, statement), psycopg2.errors.InsufficientPrivilege)


@pytest.mark.parametrize("statement", WRITER_REFUSED)
def test_writer_role_is_refused(database, statement):
    """The write role cannot drop, alter, delete, truncate or create objects."""
    assert isinstance(attempt(database.writer_dsn, statement), psycopg2.errors.InsufficientPrivilege)


def test_roles_can_do_their_work(database):
    """The control for the refusals above: the reader reads; the writer records a job and a file's progress
    through its functions, and stages in a temp table."""
    assert attempt(database.reader_dsn, "SELECT count(*) FROM completed_jobs") is None
    assert attempt(database.reader_dsn, "SELECT * FROM tang_percentile('x', NULL, 1, 0, 85)") is None
    job = ("x.svr", "x", None, None, None, None, None, 1, None, None, None, 1, None)
    assert attempt(database.writer_dsn, psycopg2.extensions.adapt(job).getquoted().decode().join(
        ["SELECT record_completed_jobs(ARRAY[ROW", "::completed_jobs])"])) is None
    assert attempt(database.writer_dsn, "SELECT record_ingest_progress('p', 'h', 't', 0, 0)") is None
    assert attempt(database.writer_dsn, "CREATE TEMP TABLE staging (LIKE completed_jobs)") is None


def test_reader_cannot_record(database):
    """The prediction role may not execute the writer's functions either."""
    for statement in ("SELECT record_ingest_progress('p', 'h', 't', 0, 0)",
                      "SELECT record_completed_jobs(ARRAY[]::completed_jobs[])"):
        assert isinstance(attempt(database.reader_dsn, statement), psycopg2.errors.InsufficientPrivilege)


# --- the password never shows ----------------------------------------------------------

SECRET_MARK = uuid.uuid4().hex
PASSWORD = "pw {} ;'\\--".format(SECRET_MARK)
"""Quotes, a space, a backslash and a semicolon; ``SECRET_MARK`` is what must never appear."""


def with_params(dsn, **changes):
    params = psycopg2.extensions.parse_dsn(dsn)
    params.update(changes)
    return psycopg2.extensions.make_dsn(**params)


@pytest.fixture(scope="module")
def scram():
    """A private cluster where the reader and writer logins need their password (scram-sha-256)."""
    private = PrivateCluster()
    try:
        private.start()
        reader_dsn, writer_dsn = private.setup_schema()
        conn = psycopg2.connect(private.dsn())
        conn.autocommit = True
        with conn.cursor() as cursor:
            for role in ("swt_reader", "swt_writer"):
                cursor.execute("ALTER ROLE {} PASSWORD %s".format(role), (PASSWORD,))
        conn.close()
        with open(os.path.join(private.data, "pg_hba.conf"), "w") as hba:
            hba.write("host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
        private.reload()
        wait_for_password_auth(reader_dsn)
        private.reader_dsn, private.writer_dsn = reader_dsn, writer_dsn
        yield private
    finally:
        private.destroy()


def wait_for_password_auth(dsn):
    for _ in range(100):
        try:
            psycopg2.connect(dsn, connect_timeout=2).close()
        except psycopg2.OperationalError as err:
            if "password" in str(err):
                return
        subprocess.run(["sleep", "0.05"], check=True)
    raise AssertionError("the private cluster never asked for a password")


def bad_dsns(scram):
    """DSNs holding the password that fail in every way a site can get wrong: name -> DSN."""
    reader = scram.reader_dsn
    return {
        "wrong password": with_params(reader, password=PASSWORD + "x"),
        "right password, no such database": with_params(reader, password=PASSWORD, dbname="nosuchdb"),
        "right password, no such user": with_params(reader, password=PASSWORD, user="nosuchuser"),
        "malformed key=value string": "host=127.0.0.1 password='{}' junk".format(PASSWORD.replace("'", "\\'")),
        "malformed URI": "postgresql://swt_reader:{}@[127.0.0.1/db".format(SECRET_MARK),
        "host name instead of an address": with_params(reader, host="localhost", password=SECRET_MARK),
    }


@pytest.fixture
def secret_free():
    """``check(text)``: fail if ``text`` holds the password."""
    def check(text):
        assert SECRET_MARK not in text, text
        return text
    return check


def exception_chain(err):
    """The exception as a traceback prints it: with every cause and context."""
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))


def test_password_works_when_right(scram):
    """The control: with the right password the hooks' reader connects (so the failures below are real)."""
    with HookHistory(connect_params(with_params(scram.reader_dsn, password=PASSWORD))) as store:
        assert store.recent("alice", 1) == []


@pytest.mark.usefixtures("fresh_pbs_server")
def test_hook_log_lines_hold_no_password(scram, tmp_path, secret_free):
    """Every way the DSN can fail: queuejob and jobobit accept the job; no log line holds the password."""
    for name, dsn in bad_dsns(scram).items():
        config = write_config(tmp_path, name="{}.json".format(uuid.uuid4().hex), reader_dsn=dsn, writer_dsn=dsn,
                              budget_s=1.0)
        for event, pbs_event in (("queuejob", pbs.queuejob_event("alice", {"walltime": 7200})),
                                 ("jobobit", pbs.jobobit_event(finished_job("7.svr")))):
            result = run(event, pbs_event, config)
            assert result.accepted and len(result.warnings) == 1, (name, event, result.logs)
            secret_free(" ".join(message for _, message in result.logs))


def test_library_errors_hold_no_password(scram, secret_free):
    """The hooks' DSN reading and store errors, with their whole cause chain, never hold the password."""
    for name, dsn in bad_dsns(scram).items():
        with pytest.raises(PredictorError) as info:
            with HookHistory(connect_params(dsn), timeout_s=1.0) as store:
                store.recent("alice", 1)
        secret_free(exception_chain(info.value))


def test_schema_init_errors_hold_no_password(scram, secret_free):
    """db init as a role that may not create the schema: refused, and the error holds no password."""
    with pytest.raises(PredictorError) as info:
        init_schema(with_params(scram.writer_dsn, password=PASSWORD, dbname="template1"))
    secret_free(exception_chain(info.value))


def predictor_cli(*args):
    return subprocess.run([sys.executable, "-m", "predictor"] + list(args), capture_output=True, text=True,
                          timeout=60)


def test_cli_output_holds_no_password(scram, tmp_path, secret_free):
    """predict, ingest and db init with each bad DSN: one error line, never the password."""
    log = tmp_path / "20260410"
    log.write_text("04/10/2026 12:00:05;E;1.svr;user=alice ctime=1 start=10 end=20\n")
    commands = [["predict", "--user", "alice", "--walltime", "60", "--timeout", "1"], ["ingest", str(log)],
                ["db", "init"]]
    for name, dsn in bad_dsns(scram).items():
        for command in commands:
            result = predictor_cli(*command, "--dsn", dsn)
            assert result.returncode == 2 and "Traceback" not in result.stderr, (name, command, result.stderr)
            secret_free(result.stdout + result.stderr)


def test_ingest_refused_write_holds_no_password(scram, tmp_path, secret_free):
    """ingest as the reader (the server refuses the write): an error line, never the password."""
    log = tmp_path / "20260410"
    log.write_text("04/10/2026 12:00:05;E;1.svr;user=alice ctime=1 start=10 end=20\n")
    result = predictor_cli("ingest", "--dsn", with_params(scram.reader_dsn, password=PASSWORD), str(log))
    assert result.returncode == 2 and "permission denied" in result.stderr
    secret_free(result.stdout + result.stderr)
