"""predictor.server.driver against real PostgreSQL servers: every wait bounded by the deadline.

The shared server (127.0.0.1:5432 and /var/run/postgresql, trust) is only
connected to. Faults that need a hung, stopped or password-checking server
use a private cluster of this module (``PrivateCluster``); slow or garbled
answers come from a proxy in front of the shared server (``PgProxy``).

Where time matters, the test checks what the code decided -- DeadlineExceeded
or not, which SQLSTATE, whether the connection was closed -- and that the clock
read after the call is past the deadline and below it plus a generous margin:
enough to catch waiting for ever, not to time the machine.
"""

import os
import shutil
import subprocess
import time

import psycopg2
import pytest
from hypothesis import given, settings
from pgadmin import terminate_backend
from pgcluster import PrivateCluster, free_port
from pgproxy import PgProxy
from strategies import hostile_names

from predictor.errors import DatabaseError, DeadlineExceeded
from predictor.server import driver
from predictor.server.dsn import connect_params

BUDGET_S = 1.0
MARGIN_S = 5.0
"""A deadline reached late by more than this means something waited for a wait of its own."""

LONG_S = 30.0
"""A deadline far enough that reaching it would mean the wrong thing decided."""

PASSWORD_LOGIN = "swt_pw"
PASSWORD = "p@ss w'rd:Zq9s3cr3tW"
"""The private cluster's scram login and its password (a space, a quote, a colon, an @)."""


def _quoted(value):
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# --- fixtures ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    """This module's private cluster, with a password login; destroyed at the end."""
    cluster = PrivateCluster()
    try:
        hba = os.path.join(cluster.data, "pg_hba.conf")
        with open(hba, encoding="utf-8") as hba_file:
            rest = hba_file.read()
        with open(hba, "w", encoding="utf-8") as hba_file:
            hba_file.write("local all {0} scram-sha-256\nhost all {0} 127.0.0.1/32 scram-sha-256\n{1}".format(
                PASSWORD_LOGIN, rest))
        cluster.start()
        conn = psycopg2.connect(cluster.dsn())
        conn.autocommit = True
        with conn.cursor() as cursor:
            cursor.execute("CREATE ROLE {} LOGIN PASSWORD %s".format(PASSWORD_LOGIN), (PASSWORD,))
        conn.close()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def private(cluster):
    """The private cluster, running and answering whatever the previous test did to it."""
    cluster.ensure_running()
    yield cluster
    cluster.ensure_running()


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A second private cluster with TLS on: its certificate names db.example.org (not 127.0.0.1), signed by
    ``ca.crt``; ``other-ca.crt`` is an authority that signed nothing. Yields ``(cluster, certificate dir)``."""
    certs = tmp_path_factory.mktemp("certs")
    _openssl(certs, "req", "-x509", "-subj", "/CN=swt test ca", "-keyout", "ca.key", "-out", "ca.crt")
    _openssl(certs, "req", "-x509", "-subj", "/CN=swt other ca", "-keyout", "other-ca.key", "-out", "other-ca.crt")
    _openssl(certs, "req", "-subj", "/CN=db.example.org", "-keyout", "server.key", "-out", "server.csr")
    (certs / "san.ext").write_text("subjectAltName=DNS:db.example.org\n")
    subprocess.run(["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                    "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.crt"],
                   cwd=str(certs), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cluster = PrivateCluster()
    try:
        for name in ("server.crt", "server.key"):
            target = os.path.join(cluster.data, name)
            shutil.copy(str(certs / name), target)
            shutil.chown(target, "postgres", "postgres")
            os.chmod(target, 0o600)
        with open(os.path.join(cluster.data, "postgresql.conf"), "a", encoding="utf-8") as conf:
            conf.write("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n")
        cluster.start()
        yield cluster, certs
    finally:
        cluster.destroy()


def _openssl(directory, command, *args):
    subprocess.run(["openssl", command, "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2"] + list(args), cwd=str(directory), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def private_dsn(cluster, via="tcp", user="postgres", extra=""):
    host = "host=127.0.0.1" if via == "tcp" else "host=" + cluster.root
    return "{} port={} user={} dbname=postgres {}".format(host, cluster.port, user, extra)


def shared_dsn(database, via="tcp"):
    return database.dsn if via == "tcp" else "host=/var/run/postgresql user=postgres dbname=" + database.name


@pytest.fixture
def connect():
    """``driver.connect`` for a DSN, with a long deadline unless given; everything opened is closed after."""
    opened = []

    def _connect(dsn, read_only=False, statement_timeout_s=LONG_S, deadline=None):
        deadline = time.monotonic() + LONG_S if deadline is None else deadline
        conn = driver.connect(connect_params(dsn, environ={}), deadline, read_only, statement_timeout_s)
        opened.append(conn)
        return conn

    yield _connect
    for conn in opened:
        conn.close()


@pytest.fixture
def proxy():
    """A PgProxy in front of the shared server, closed after the test."""
    proxy = PgProxy()
    yield proxy
    proxy.close()


def query(conn, sql, params=()):
    return conn.execute(sql, params, time.monotonic() + LONG_S, fetch=True)


def assert_reached(deadline, clock_after):
    """The call gave up at its deadline: not before it, and not long after."""
    assert deadline <= clock_after < deadline + MARGIN_S


# --- connecting ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("via, address", [("socket", None), ("tcp", "127.0.0.1")])
def test_connects_to_the_shared_server(connect, database, via, address):
    """Over the Unix socket and over TCP, to the database the string names."""
    conn = connect(shared_dsn(database, via))
    assert query(conn, "SELECT current_database(), host(inet_server_addr())") == [(database.name, address)]


def test_sslmode_prefer_falls_back_to_plain_without_server_tls(connect, private):
    """sslmode=prefer (the TCP default) connects in plain text to a server without TLS."""
    conn = connect(private_dsn(private))
    assert query(conn, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == [(False,)]


def test_sslmode_require_is_refused_by_a_server_without_tls(connect, private):
    """sslmode=require against a server without TLS: DatabaseError, not a plain-text session."""
    with pytest.raises(DatabaseError) as caught:
        connect(private_dsn(private, extra="sslmode=require"))
    assert not isinstance(caught.value, DeadlineExceeded)


def tls_dsn(tls_cluster, extra):
    cluster, certs = tls_cluster
    return "port={} user=postgres dbname=postgres {}".format(cluster.port, extra.format(certs=certs))


def uses_tls(conn):
    return query(conn, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == [(True,)]


@pytest.mark.parametrize("mode", ["require", "prefer"])
def test_tls_when_the_server_offers_it(connect, tls_cluster, mode):
    """sslmode=require and prefer encrypt the session with a server that has TLS."""
    assert uses_tls(connect(tls_dsn(tls_cluster, "host=127.0.0.1 sslmode=" + mode)))


def test_verify_full_checks_the_host_not_the_address(connect, tls_cluster):
    """verify-full with hostaddr checks the certificate against host, as libpq does."""
    extra = "host=db.example.org hostaddr=127.0.0.1 sslmode=verify-full sslrootcert={certs}/ca.crt"
    assert uses_tls(connect(tls_dsn(tls_cluster, extra)))


def test_verify_full_refuses_a_certificate_for_another_name(connect, tls_cluster):
    """verify-full: a certificate that does not name the host is refused (DatabaseError, not a timeout)."""
    with pytest.raises(DatabaseError) as caught:
        connect(tls_dsn(tls_cluster, "host=127.0.0.1 sslmode=verify-full sslrootcert={certs}/ca.crt"))
    assert not isinstance(caught.value, DeadlineExceeded)


def test_verify_ca_does_not_check_the_name(connect, tls_cluster):
    """verify-ca checks who signed the certificate, not the name in it."""
    assert uses_tls(connect(tls_dsn(tls_cluster, "host=127.0.0.1 sslmode=verify-ca sslrootcert={certs}/ca.crt")))


def test_verify_ca_refuses_an_unknown_authority(connect, tls_cluster):
    """verify-ca with a root certificate that did not sign the server's: DatabaseError."""
    with pytest.raises(DatabaseError) as caught:
        connect(tls_dsn(tls_cluster, "host=127.0.0.1 sslmode=verify-ca sslrootcert={certs}/other-ca.crt"))
    assert not isinstance(caught.value, DeadlineExceeded)


def test_a_missing_root_certificate_is_a_database_error(connect, tls_cluster, tmp_path):
    """A root certificate file that is not there: DatabaseError naming the TLS settings."""
    with pytest.raises(DatabaseError, match="sslrootcert"):
        connect(tls_dsn(tls_cluster, "host=127.0.0.1 sslmode=verify-ca sslrootcert={}/none.crt".format(tmp_path)))


@pytest.mark.parametrize("via", ["tcp", "socket"])
def test_password_login(connect, private, via):
    """A scram password from the string logs in (quotes, spaces and colons intact)."""
    conn = connect(private_dsn(private, via, PASSWORD_LOGIN, "password=" + _quoted(PASSWORD)))
    assert query(conn, "SELECT current_user") == [(PASSWORD_LOGIN,)]


def test_password_from_pgpass_logs_in(connect, private, tmp_path):
    """A password found in the passfile logs in."""
    passfile = tmp_path / "pgpass"
    passfile.write_text("127.0.0.1:{}:postgres:{}:{}\n".format(private.port, PASSWORD_LOGIN,
                                                             PASSWORD.replace("\\", "\\\\").replace(":", "\\:")))
    passfile.chmod(0o600)
    conn = connect(private_dsn(private, "tcp", PASSWORD_LOGIN, "passfile=" + str(passfile)))
    assert query(conn, "SELECT current_user") == [(PASSWORD_LOGIN,)]


def test_wrong_password_never_shows_in_the_error(connect, private):
    """A refused password is a DatabaseError with SQLSTATE 28P01 whose text never shows the password."""
    wrong = PASSWORD + "x"
    with pytest.raises(DatabaseError) as caught:
        connect(private_dsn(private, "tcp", PASSWORD_LOGIN, "password=" + _quoted(wrong)))
    texts = [str(caught.value), repr(caught.value), driver.describe_error(caught.value.__cause__)]
    assert "28P01" in texts[0]
    assert not any(secret in text for text in texts for secret in (wrong, "Zq9s3cr3tW"))


def test_missing_password_is_a_database_error(connect, private):
    """A login that needs a password and got none: DatabaseError."""
    with pytest.raises(DatabaseError):
        connect(private_dsn(private, "tcp", PASSWORD_LOGIN))


def test_nothing_listening_is_a_database_error_at_once(connect):
    """A refused TCP connection is DatabaseError, decided before the deadline (not DeadlineExceeded)."""
    deadline = time.monotonic() + LONG_S
    with pytest.raises(DatabaseError) as caught:
        connect("host=127.0.0.1 port={} user=postgres".format(free_port()), deadline=deadline)
    assert not isinstance(caught.value, DeadlineExceeded) and time.monotonic() < deadline


def test_missing_socket_is_a_database_error(connect, tmp_path):
    """A socket directory without a server: DatabaseError naming no DSN."""
    with pytest.raises(DatabaseError) as caught:
        connect("host={} user=postgres".format(tmp_path))
    assert not isinstance(caught.value, DeadlineExceeded)


def test_a_server_that_is_not_postgresql_is_a_database_error(connect, proxy):
    """An answer pg8000 cannot read while connecting is a DatabaseError, not a KeyError."""
    proxy.mode = "garble"
    with pytest.raises(DatabaseError, match="cannot read"):
        connect(proxy.dsn())


def test_no_time_left_means_no_connection_attempt(connect, proxy):
    """A deadline already passed: DeadlineExceeded, and the server never sees a connection."""
    with pytest.raises(DeadlineExceeded):
        connect(proxy.dsn(), deadline=time.monotonic())
    assert proxy.accepted == 0


# --- the session -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("read_only, shown", [(True, "on"), (False, "off")])
def test_session_settings(connect, database, read_only, shown):
    """statement_timeout and lock_timeout are the given seconds; default_transaction_read_only follows read_only."""
    conn = connect(shared_dsn(database), read_only=read_only, statement_timeout_s=1.5)
    settings_shown = [query(conn, "SHOW " + name)[0][0]
                      for name in ("statement_timeout", "lock_timeout", "default_transaction_read_only")]
    assert settings_shown == ["1500ms", "1500ms", shown]


@pytest.mark.parametrize("extra, name", [("", driver.APPLICATION_NAME), ("application_name='nightly check'",
                                                                         "nightly check")])
def test_application_name(connect, database, extra, name):
    """The session's application_name: the string's, else the package's."""
    conn = connect(shared_dsn(database) + " " + extra)
    assert query(conn, "SELECT current_setting('application_name')") == [(name,)]


def test_read_only_session_refuses_writes(connect, database):
    """A read-only session cannot write: DatabaseError with SQLSTATE 25006, and the connection stays."""
    conn = connect(shared_dsn(database), read_only=True)
    with pytest.raises(DatabaseError, match="25006"):
        conn.execute("CREATE TEMP TABLE scratch (a int)", (), time.monotonic() + LONG_S)
    assert not conn.closed


def test_writable_session_writes_in_autocommit(connect, database):
    """A writable session writes, each statement committed on its own."""
    conn = connect(shared_dsn(database), read_only=False)
    conn.execute("CREATE TEMP TABLE scratch (a int)", (), time.monotonic() + LONG_S)
    conn.execute("INSERT INTO scratch VALUES (%s), (%s)", (1, 2), time.monotonic() + LONG_S)
    assert query(conn, "SELECT count(*) FROM scratch") == [(2,)]
    assert query(conn, "SELECT now() = statement_timestamp()") == [(True,)]  # no transaction left open


def test_server_error_keeps_the_connection(connect, database):
    """A failed statement is DatabaseError with its SQLSTATE; the connection stays usable."""
    conn = connect(shared_dsn(database))
    with pytest.raises(DatabaseError, match=r"division by zero \(SQLSTATE 22012\)") as caught:
        query(conn, "SELECT 1/0")
    assert not isinstance(caught.value, DeadlineExceeded)
    assert not conn.closed and query(conn, "SELECT 1") == [(1,)]


def test_execute_returns_rows_only_when_fetching(connect, database):
    """``fetch=False`` returns None; ``fetch=True`` a list of tuples."""
    conn = connect(shared_dsn(database))
    assert conn.execute("SELECT 1", (), time.monotonic() + LONG_S) is None
    assert conn.execute("SELECT 1, 'a'", (), time.monotonic() + LONG_S, fetch=True) == [(1, "a")]


@pytest.fixture(scope="module")
def socket_conn(database):
    """One connection to the shared server over its socket, for the whole module."""
    conn = driver.connect(connect_params(shared_dsn(database, "socket"), environ={}), time.monotonic() + LONG_S,
                          True, LONG_S)
    yield conn
    conn.close()


@settings(max_examples=50)
@given(hostile_names)
def test_values_go_as_parameters(socket_conn, name):
    """A ``%s`` value reaches the server verbatim, whatever it contains."""
    assert query(socket_conn, "SELECT %s::text, length(%s)", (name, name)) == [(name, len(name))]


def test_a_server_message_on_several_lines_is_described_on_one(connect, database):
    """describe_error gives one line even when the server's message has several."""
    conn = connect(shared_dsn(database))
    with pytest.raises(DatabaseError) as caught:
        conn.execute("DO $$ BEGIN RAISE EXCEPTION E'first\\nsecond'; END $$", (), time.monotonic() + LONG_S)
    assert str(caught.value) == "database: first second (SQLSTATE P0001)"
    assert driver.describe_error(caught.value.__cause__) == str(caught.value)


def test_network_failure_closes_the_connection(connect, database):
    """The backend terminated under a connection: the next statement is DatabaseError and closes it."""
    conn = connect(shared_dsn(database))
    pid = query(conn, "SELECT pg_backend_pid()")[0][0]
    terminate_backend(database.dsn, pid)
    with pytest.raises(DatabaseError) as caught:
        query(conn, "SELECT 1")
    assert not isinstance(caught.value, DeadlineExceeded) and conn.closed



def test_an_unreadable_answer_closes_the_connection(connect, proxy):
    """An answer pg8000 cannot read is DatabaseError, and the out-of-step connection is closed."""
    conn = connect(proxy.dsn())
    proxy.mode = "garble"
    with pytest.raises(DatabaseError, match="cannot read"):
        query(conn, "SELECT 1")
    assert conn.closed


def test_close_twice_never_raises(connect, database):
    """close() on a closed connection does nothing."""
    conn = connect(shared_dsn(database))
    conn.close()
    conn.close()
    assert conn.closed


# --- deadlines ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("via", ["tcp", "socket"])
def test_connecting_to_a_frozen_server_ends_at_the_deadline(connect, private, via):
    """A server that accepts but never answers: DeadlineExceeded at the deadline."""
    private.freeze()
    deadline = time.monotonic() + BUDGET_S
    with pytest.raises(DeadlineExceeded):
        connect(private_dsn(private, via), deadline=deadline)
    assert_reached(deadline, time.monotonic())


@pytest.mark.parametrize("via", ["tcp", "socket"])
def test_querying_a_frozen_server_ends_at_the_deadline(connect, private, via):
    """A cached connection whose server froze: DeadlineExceeded at the deadline, and the connection is closed."""
    conn = connect(private_dsn(private, via))
    private.freeze()
    deadline = time.monotonic() + BUDGET_S
    with pytest.raises(DeadlineExceeded):
        conn.execute("SELECT 1", (), deadline, fetch=True)
    assert_reached(deadline, time.monotonic())
    assert conn.closed


def test_connect_timeout_ends_the_wait_before_the_deadline(connect, private):
    """connect_timeout=2 ends a connection attempt to a frozen server after 2 s, long before the deadline."""
    private.freeze()
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        connect(private_dsn(private, extra="connect_timeout=2"), deadline=started + LONG_S)
    assert_reached(started + 2, time.monotonic())


def test_statement_timeout_is_deadline_exceeded_and_keeps_the_connection(connect, database):
    """The server's statement_timeout ends a slow statement as DeadlineExceeded (57014); the connection stays."""
    conn = connect(shared_dsn(database), statement_timeout_s=0.3)
    deadline = time.monotonic() + LONG_S
    with pytest.raises(DeadlineExceeded, match="57014"):
        conn.execute("SELECT pg_sleep(%s)", (LONG_S,), deadline)
    assert time.monotonic() < deadline
    assert not conn.closed and query(conn, "SELECT 1") == [(1,)]


def test_a_held_lock_ends_at_lock_timeout(connect, database):
    """A table locked by another session: DeadlineExceeded by the server's lock_timeout (55P03)."""
    conn = connect(shared_dsn(database), statement_timeout_s=0.3)
    query(conn, "SELECT set_config('statement_timeout', '0', false)")  # leave the lock wait to lock_timeout
    holder = psycopg2.connect(database.dsn)
    try:
        with holder.cursor() as cursor:
            cursor.execute("LOCK TABLE completed_jobs IN ACCESS EXCLUSIVE MODE")
        deadline = time.monotonic() + LONG_S
        with pytest.raises(DeadlineExceeded, match="55P03"):
            conn.execute("SELECT count(*) FROM completed_jobs", (), deadline, fetch=True)
        assert time.monotonic() < deadline and not conn.closed
    finally:
        holder.rollback()
        holder.close()


def test_a_stopped_server_is_a_database_error_at_once(connect, private):
    """No server on the port any more: DatabaseError, decided long before the deadline."""
    private.stop()
    deadline = time.monotonic() + LONG_S
    with pytest.raises(DatabaseError) as caught:
        connect(private_dsn(private), deadline=deadline)
    assert not isinstance(caught.value, DeadlineExceeded) and time.monotonic() < deadline


def test_a_cached_connection_to_a_stopped_server_fails_and_closes(connect, private):
    """The server stopped under an open connection: DatabaseError (not a timeout), and the connection is closed."""
    conn = connect(private_dsn(private))
    private.stop()
    deadline = time.monotonic() + LONG_S
    with pytest.raises(DatabaseError) as caught:
        conn.execute("SELECT 1", (), deadline, fetch=True)
    assert not isinstance(caught.value, DeadlineExceeded) and time.monotonic() < deadline and conn.closed


def test_a_drip_fed_answer_ends_at_the_deadline(connect, proxy):
    """An answer trickling in a byte every 0.2 s (each wait short) still ends at the deadline."""
    conn = connect(proxy.dsn())
    proxy.mode = "drip"
    deadline = time.monotonic() + BUDGET_S
    with pytest.raises(DeadlineExceeded):
        conn.execute("SELECT repeat('x', 1000)", (), deadline, fetch=True)
    assert_reached(deadline, time.monotonic())
    assert conn.closed


def test_no_time_left_for_a_statement_closes_the_connection(connect, database):
    """A statement whose deadline has passed is not sent: DeadlineExceeded, and the connection is closed."""
    conn = connect(shared_dsn(database))
    with pytest.raises(DeadlineExceeded):
        conn.execute("SELECT 1", (), time.monotonic() - 1)
    assert conn.closed


# --- prepared statements ---------------------------------------------------------------------------

def test_a_repeated_statement_is_prepared_once(connect, database):
    """A statement run three times is one prepared statement on the server, answering each time."""
    conn = connect(shared_dsn(database))
    sql = "SELECT %s::int + %s::int, %s::text"
    answers = [query(conn, sql, (i, 1, "user%")) for i in range(3)]
    assert answers == [[(1, "user%")], [(2, "user%")], [(3, "user%")]]
    assert query(conn, "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%::int + %'") == [(1,)]


@pytest.mark.parametrize("sql, expected", [
    ("SELECT 1", "SELECT 1"),
    ("SELECT %s, %s", "SELECT :p0, :p1"),
    ("SELECT %s || '%%s'", "SELECT :p0 || '%s'"),
    ("SELECT '100%%', %s", "SELECT '100%', :p0"),
    ("SELECT %%%s", "SELECT %:p0"),
])
def test_parameters_are_numbered_for_the_driver(sql, expected):
    """psycopg2-style ``%s`` become ``:p0``, ``:p1``...; ``%%`` is a literal ``%``, never a parameter."""
    assert driver._named(sql) == expected


def test_a_statement_whose_table_changed_is_prepared_again(connect, database):
    """After an ALTER TABLE the prepared statement fails once (SQLSTATE 0A000); the next call prepares it anew."""
    conn = connect(shared_dsn(database), read_only=False)
    conn.execute("CREATE TEMP TABLE reshaped (a int)", (), time.monotonic() + LONG_S)
    conn.execute("INSERT INTO reshaped VALUES (1)", (), time.monotonic() + LONG_S)
    assert query(conn, "SELECT * FROM reshaped WHERE a = %s", (1,)) == [(1,)]
    conn.execute("ALTER TABLE reshaped ADD COLUMN b int DEFAULT 2", (), time.monotonic() + LONG_S)
    with pytest.raises(DatabaseError, match="0A000"):
        query(conn, "SELECT * FROM reshaped WHERE a = %s", (1,))
    assert query(conn, "SELECT * FROM reshaped WHERE a = %s", (1,)) == [(1, 2)]
