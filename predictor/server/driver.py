"""PostgreSQL from inside pbs_server: pg8000 (pure Python), every wait bounded by a deadline.

pbs_server restarts its embedded interpreter every ``python_restart_max_hooks``
hook runs, and a C extension cannot be initialised twice in one process
(psycopg2 then fails with "cannot import name 'encodings'" until pbs_server
itself restarts). pg8000 is pure Python, so a new interpreter imports it
afresh.

Time: connecting gives each network wait the time left before the deadline.
Once connected, the connection reads and writes through ``_DeadlineFile``,
which re-arms the socket's timeout with the time left before every wait, so
a query cannot outlast the deadline however the server answers. The server
also gets ``statement_timeout`` and ``lock_timeout``, so a query abandoned at
the deadline does not linger there.

Each parameterised statement is prepared once per connection and then run in
one round trip (pg8000 otherwise parses, describes and binds it in three, and
the server plans it every time): the hook's history query costs half as much.

Names are not looked up here: the hook config admits only IP addresses and
socket directories, because a name lookup cannot be bounded.
"""

import socket
import ssl
import time

import pg8000
import pg8000.exceptions
import pg8000.native

from ..errors import DatabaseError, DeadlineExceeded
from ..queries import APPLICATION_NAME

__all__ = ["Connection", "connect", "describe_error"]

def _release(version):
    """``(major, minor)`` of a version string such as ``1.31.6``."""
    numbers = [int("".join(char for char in part if char.isdigit()) or 0) for part in version.split(".")[:2]]
    return tuple(numbers + [0] * (2 - len(numbers)))


_PLAIN = False if _release(pg8000.__version__) >= (1, 31) else None
"""The ``ssl_context`` that means "no TLS": None up to pg8000 1.30, False from 1.31 (where None tries TLS)."""

_SESSION = ("SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false), "
            "set_config('default_transaction_read_only', %s, false)")


class _DeadlineFile:
    """The connection's buffered socket file, with the socket's timeout re-armed before every wait."""

    def __init__(self, sock):
        self._sock = sock
        self._in = bytearray()
        self._out = bytearray()
        self.deadline = None

    def _arm(self):
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("deadline reached")
            self._sock.settimeout(remaining)

    def read(self, size):
        while len(self._in) < size:
            self._arm()
            block = self._sock.recv(max(65536, size - len(self._in)))
            if not block:
                raise ConnectionResetError("the server closed the connection")
            self._in.extend(block)
        data = bytes(self._in[:size])
        del self._in[:size]
        return data

    def write(self, data):
        self._out.extend(data)
        return len(data)

    def flush(self):
        if self._out:
            self._arm()
            data, self._out = bytes(self._out), bytearray()
            self._sock.sendall(data)

    def close(self):
        self._in.clear()
        self._out.clear()


class Connection:
    """One open connection: ``execute`` statements, each within a deadline; ``close``."""

    _MAX_PREPARED = 16
    """Prepared statements kept per connection: the hooks use three, the doctor a few more."""

    def __init__(self, raw, file):
        self._raw = raw
        self._file = file
        self._prepared = {}

    def execute(self, sql, params, deadline, fetch=False):
        """Run one statement (``%s`` parameters) in autocommit; its rows if ``fetch``."""
        self._file.deadline = deadline
        try:
            if params:
                rows = self._statement(sql).run(**{"p{}".format(i): value for i, value in enumerate(params)})
            else:
                rows = self._raw.run(sql)
            return [tuple(row) for row in rows or ()] if fetch else None
        except pg8000.exceptions.DatabaseError as err:
            if _sqlstate(err) == _PLAN_CHANGED:  # the table changed shape: prepare it again next time
                self._prepared.pop(sql, None)
            raise _database_error(err, deadline) from err
        except (pg8000.exceptions.InterfaceError, OSError) as err:
            self.close()
            raise _network_error(err, deadline) from err
        except Exception as err:  # pg8000 could not read the answer: the stream is out of step for good
            self.close()
            raise _unreadable(err) from err

    def _statement(self, sql):
        statement = self._prepared.get(sql)
        if statement is None:
            statement = self._raw.prepare(_named(sql))
            if len(self._prepared) < self._MAX_PREPARED:
                self._prepared[sql] = statement
        return statement

    def close(self):
        """Close the connection; never raises."""
        raw, self._raw = self._raw, None
        self._prepared = {}
        if raw is not None:
            self._file.deadline = time.monotonic() + 0.05  # a polite goodbye, but no waiting for it
            try:
                raw.close()
            except Exception:  # a broken connection cannot even say goodbye; it is gone either way
                pass

    @property
    def closed(self):
        return self._raw is None


def connect(params, deadline, read_only, statement_timeout_s):
    """A ``Connection`` for ``ConnectParams``, in autocommit, with this package's session settings."""
    conn = _open(params, deadline)
    try:
        timeout_ms = str(max(1, int(statement_timeout_s * 1000)))
        conn.execute(_SESSION, (timeout_ms, timeout_ms, "on" if read_only else "off"), deadline)
    except BaseException:
        conn.close()
        raise
    return conn


def _open(params, deadline):
    if params.sslmode == "prefer":
        try:
            return _open_with(params, _tls_context(params), deadline)
        except DatabaseError as err:
            if "refuses SSL" not in str(err.__cause__):
                raise
    return _open_with(params, _PLAIN if params.sslmode in ("disable", "prefer") else _tls_context(params), deadline)


def _open_with(params, tls, deadline):
    if params.connect_timeout_s is not None:
        deadline = min(deadline, time.monotonic() + params.connect_timeout_s)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineExceeded("no time left in the budget to connect to the database")
    try:
        raw = pg8000.native.Connection(
            user=params.user, host=params.address, port=params.port, database=params.dbname,
            password=params.password, unix_sock=params.unix_socket, ssl_context=tls, timeout=remaining,
            application_name=params.application_name or APPLICATION_NAME)
    except pg8000.exceptions.DatabaseError as err:
        raise _database_error(err, deadline) from err
    except (pg8000.exceptions.InterfaceError, OSError, ssl.CertificateError) as err:  # 3.6: not an SSLError
        raise _network_error(err, deadline) from err
    except Exception as err:  # not a PostgreSQL server, or pg8000 could not read its answer
        raise _unreadable(err) from err
    file = _DeadlineFile(raw._usock)
    raw._sock = file  # pg8000 reads and writes through this attribute in every supported release
    return Connection(raw, file)


def _named(sql):
    """``sql`` with its ``%s`` parameters as pg8000's ``:p0``, ``:p1``... (and ``%%`` as ``%``)."""
    parts = sql.split("%%")
    counter = iter(range(sql.count("%s")))
    return "%".join(_numbered(part, counter) for part in parts)


def _numbered(part, counter):
    pieces = part.split("%s")
    return "".join(piece if i == 0 else ":p{}{}".format(next(counter), piece) for i, piece in enumerate(pieces))


def _tls_context(params):
    try:
        if params.sslmode in ("prefer", "require") and not params.sslrootcert:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            context = ssl.create_default_context(cafile=params.sslrootcert)
            context.check_hostname = params.sslmode == "verify-full"
        if params.sslcert:
            context.load_cert_chain(params.sslcert, params.sslkey)
    except OSError as err:  # ssl.SSLError too: a missing or unreadable file
        raise DatabaseError("database: cannot use the TLS files (sslrootcert, sslcert, sslkey): {}".format(
            " ".join(str(err).split()) or type(err).__name__)) from err
    return _NamedContext(context, params.host or params.address)


class _NamedContext:
    """An SSLContext that checks the server's certificate against ``host``, as libpq does.

    pg8000 passes the address it connects to; with ``hostaddr`` that is an IP,
    while the certificate names the host.
    """

    def __init__(self, context, host):
        self._context = context
        self._host = host

    def wrap_socket(self, sock, server_hostname=None):
        return self._context.wrap_socket(sock, server_hostname=self._host)


def describe_error(err):
    """One line for a driver error: the server's message and SQLSTATE, never a password."""
    fields = err.args[0] if err.args and isinstance(err.args[0], dict) else None
    if fields is not None:  # a server message may span lines (RAISE, a DETAIL-like text): one line for the log
        return "database: {} (SQLSTATE {})".format(" ".join(fields.get("M", "error").split()), fields.get("C", "?"))
    text = " ".join(str(err).split())
    return "database: " + (text or type(err).__name__)


def _sqlstate(err):
    return err.args[0].get("C") if err.args and isinstance(err.args[0], dict) else None


_PLAN_CHANGED = "0A000"
"""A prepared statement whose result columns changed since it was prepared (an ALTER TABLE)."""

_OWN_TIMEOUTS = ("57014", "55P03")
"""statement_timeout and lock_timeout, which ``connect`` sets to the budget."""


def _database_error(err, deadline):
    if _sqlstate(err) in _OWN_TIMEOUTS:
        return DeadlineExceeded("no answer from the database within the time budget ({})".format(
            describe_error(err)))
    return DatabaseError(describe_error(err))


def _unreadable(err):
    return DatabaseError("database: an answer the driver cannot read ({})".format(type(err).__name__))


def _network_error(err, deadline):
    if time.monotonic() >= deadline or isinstance(err, socket.timeout) or isinstance(err.__cause__, socket.timeout):
        return DeadlineExceeded("no answer from the database within the time budget")
    cause = err.__cause__ if err.__cause__ is not None else err
    return DatabaseError("database: cannot reach the server: {}".format(
        " ".join(str(cause).split()) or type(cause).__name__))
