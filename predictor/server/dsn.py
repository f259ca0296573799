"""libpq connection strings, read without libpq: ``key=value`` pairs and ``postgresql://`` URIs.

The hooks connect with a pure-Python driver, yet admins write the DSNs they
know from psql. ``parse_dsn`` follows libpq's grammar (a test compares it
with libpq's own parser); ``connect_params`` turns the keys the hooks honour
into a ``ConnectParams`` and refuses any other key (by name when it is a
libpq keyword), so nothing in a DSN is silently ignored. A password can also
come from a pgpass file (``passfile``, else ``$PGPASSFILE``, else
``~/.pgpass``), as with libpq.
"""

import os
import pwd
import stat
from typing import NamedTuple, Optional

from ..errors import ConfigError

__all__ = ["ConnectParams", "parse_dsn", "connect_params", "HONOURED_KEYS", "SSL_MODES"]

HONOURED_KEYS = ("host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode", "sslrootcert",
                 "sslcert", "sslkey", "connect_timeout", "application_name")
"""The libpq keys the hooks' driver honours; any other key is refused."""

_LIBPQ_KEYS = HONOURED_KEYS + (
    "service", "channel_binding", "client_encoding", "options", "fallback_application_name", "keepalives",
    "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "sslnegotiation",
    "sslcompression", "sslcertmode", "sslpassword", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "require_auth",
    "ssl_min_protocol_version", "ssl_max_protocol_version", "gssencmode", "krbsrvname", "gsslib", "gssdelegation",
    "replication", "target_session_attrs", "load_balance_hosts")
"""Every key libpq 17 knows. Only these are named in messages: another word could be part of a password."""

SSL_MODES = ("disable", "prefer", "require", "verify-ca", "verify-full")
"""``allow`` (plain first, TLS only if refused) is the one libpq mode the driver cannot follow."""

_C_SPACES = " \t\n\r\f\v"
"""What libpq's ``isspace`` separates pairs with: ASCII only, unlike ``str.isspace``."""

_SOCKET_DIRS = ("/var/run/postgresql", "/tmp")
"""Where libpq looks for the server's socket when no host is given (Debian's build, upstream's)."""


class ConnectParams(NamedTuple):
    """Where and how to connect. ``unix_socket`` is a socket file, else ``address``:``port`` over TCP.

    Its text form never shows the password.
    """

    unix_socket: Optional[str]
    address: Optional[str]
    port: int
    host: Optional[str]
    dbname: str
    user: str
    password: Optional[str]
    sslmode: str
    sslrootcert: Optional[str]
    sslcert: Optional[str]
    sslkey: Optional[str]
    connect_timeout_s: Optional[float]
    application_name: Optional[str]

    def __repr__(self):
        shown = self._replace(password=None if self.password is None else "********")
        return "ConnectParams({})".format(", ".join("{}={!r}".format(*item) for item in zip(self._fields, shown)))

    __str__ = __repr__


def parse_dsn(dsn):
    """The ``{key: value}`` of a libpq connection string or URI; ConfigError on bad syntax.

    Messages never repeat the string: it may hold a password.
    """
    if not isinstance(dsn, str):
        raise ConfigError("a connection string must be text")
    if "\x00" in dsn:
        raise ConfigError("not a valid connection string: it contains a NUL character")
    if dsn.startswith(("postgresql://", "postgres://")):
        return _parse_uri(dsn)
    return _parse_pairs(dsn)


# --- key=value ------------------------------------------------------------------------------

def _parse_pairs(text):
    params, position = {}, _skip_spaces(text, 0)
    while position < len(text):
        key, position = _key(text, position)
        value, position = _value(text, position)
        params[key] = value
        position = _skip_spaces(text, position)
    return params


def _skip_spaces(text, position):
    while position < len(text) and text[position] in _C_SPACES:
        position += 1
    return position


def _key(text, position):
    start = position
    while position < len(text) and text[position] != "=" and text[position] not in _C_SPACES:
        position += 1
    key = text[start:position]
    position = _skip_spaces(text, position)
    if not key or position >= len(text) or text[position] != "=":
        # only a known key is named: the word could be the second half of an unquoted password
        raise ConfigError("not a valid connection string: expected key=value{}".format(
            " after {!r}".format(key) if key in _LIBPQ_KEYS else ""))
    return key, _skip_spaces(text, position + 1)


def _value(text, position):
    if position < len(text) and text[position] == "'":
        return _quoted(text, position + 1)
    chars = []
    while position < len(text) and text[position] not in _C_SPACES:
        if text[position] == "\\":
            position += 1  # a backslash escapes the next character; a trailing one is dropped, as by libpq
            if position == len(text):
                break
        chars.append(text[position])
        position += 1
    return "".join(chars), position


def _quoted(text, position):
    chars = []
    while position < len(text):
        char = text[position]
        if char == "\\" and position + 1 < len(text):
            chars.append(text[position + 1])
            position += 2
        elif char == "'":
            return "".join(chars), position + 1
        else:
            chars.append(char)
            position += 1
    raise ConfigError("not a valid connection string: unterminated quoted value")


# --- URI -------------------------------------------------------------------------------------

def _parse_uri(uri):
    """libpq's URI reading, step by step: its quirks are the reference (see conninfo_uri_parse_options)."""
    rest, params = uri.split("://", 1)[1], {}
    end = _find_any(rest, "@/")  # user info ends at the first "@" before any "/"; "?" does not stop it
    if rest[end:end + 1] == "@":
        user, colon, password = rest[:end].partition(":")
        _put(params, "user", user)
        if colon:
            _put(params, "password", password)
        rest = rest[end + 1:]
    rest = _parse_netloc(rest, params)
    if rest.startswith("/"):
        dbname, question, query = rest[1:].partition("?")
        _put(params, "dbname", dbname)
        rest = question + query
    if rest.startswith("?"):
        _parse_query(rest[1:], params)
    return params


def _find_any(text, chars, start=0):
    """The index of the first of ``chars`` in ``text`` from ``start``, else ``len(text)``."""
    for position in range(start, len(text)):
        if text[position] in chars:
            return position
    return len(text)


def _parse_netloc(text, params):
    """Store the comma-separated ``host[:port]`` items; return the text after them ("/...", "?..." or "")."""
    hosts, ports, position = [], [], 0
    while True:
        host, position = _uri_host(text, position)
        port = ""
        if text[position:position + 1] == ":":
            end = _find_any(text, "/?,", position + 1)
            port, position = text[position + 1:end], end
        hosts.append(host)
        ports.append(port)
        if text[position:position + 1] != ",":
            break
        position += 1
    _put(params, "host", ",".join(hosts))
    _put(params, "port", ",".join(ports))
    return text[position:]


def _uri_host(text, position):
    if text[position:position + 1] != "[":
        end = _find_any(text, ":/?,", position)
        return text[position:end], end
    close = text.find("]", position + 1)
    if close < 0:
        raise ConfigError("not a valid connection URI: unterminated [IPv6 address]")
    if close == position + 1:
        raise ConfigError("not a valid connection URI: empty [IPv6 address]")
    if text[close + 1:close + 2] not in ("", ":", "/", "?", ","):
        raise ConfigError("not a valid connection URI: unexpected text after ]")
    return text[position + 1:close], close + 1


def _parse_query(query, params):
    pairs = query.split("&")
    if pairs[-1] == "":
        pairs.pop()  # libpq accepts one trailing "&"
    for pair in pairs:
        if pair.count("=") != 1:
            raise ConfigError("not a valid connection URI: each query parameter must be one key=value")
        key, value = (_decode(part) for part in pair.split("="))
        if not key:
            raise ConfigError("not a valid connection URI: query parameter without a key")
        if (key, value) == ("ssl", "true"):  # libpq's JDBC spelling
            key, value = "sslmode", "require"
        params[key] = value


def _put(params, key, raw):
    if raw:
        params[key] = _decode(raw)


def _decode(text):
    """Percent-decoding as libpq does it: every ``%`` starts two hex digits; the result must be UTF-8."""
    pieces = text.split("%")
    raw = bytearray(pieces[0].encode("utf-8"))
    for piece in pieces[1:]:
        if len(piece) < 2 or not all(char in "0123456789abcdefABCDEF" for char in piece[:2]):
            raise ConfigError("not a valid connection URI: bad percent-encoding")
        if piece[:2] == "00":
            raise ConfigError("not a valid connection URI: %00 is not allowed")
        raw.append(int(piece[:2], 16))
        raw.extend(piece[2:].encode("utf-8"))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("not a valid connection URI: percent-encoding that is not UTF-8") from None


# --- what the driver needs ---------------------------------------------------------------------

def connect_params(dsn, environ=None):
    """The ``ConnectParams`` of ``dsn``; ConfigError names any key or value the driver cannot honour."""
    environ = os.environ if environ is None else environ
    params = parse_dsn(dsn)
    unknown = sorted(key for key in params if key not in HONOURED_KEYS)
    if unknown:
        known = [key for key in unknown if key in _LIBPQ_KEYS]
        if not known:  # not named: after an unquoted space, a password reads as the next key
            raise ConfigError("connection string has a key that is not a libpq keyword (not shown: it could be "
                              "part of a password); supported: {}".format(", ".join(HONOURED_KEYS)))
        raise ConfigError("connection string key {!r} is not supported by the hooks' driver (supported: {})"
                          .format(known[0], ", ".join(HONOURED_KEYS)))
    host, address, port = _host(params, "host"), _host(params, "hostaddr"), _port(params.get("port"))
    unix_socket = None
    if address is None:
        if host is None:
            host = _default_socket_dir(port)
        if host.startswith("/"):
            unix_socket = "{}/.s.PGSQL.{}".format(host.rstrip("/") or "", port)
        else:
            address = host
    user = params.get("user") or _os_user()
    dbname = params.get("dbname") or user
    password = params.get("password") or _pgpass(params, environ, _pgpass_host(host, address, unix_socket), port,
                                                 dbname, user)
    return ConnectParams(
        unix_socket=unix_socket, address=address, port=port, host=host, dbname=dbname, user=user,
        password=password, sslmode=_sslmode(params.get("sslmode"), unix_socket),
        sslrootcert=params.get("sslrootcert") or _default_root_cert(params.get("sslmode")),
        sslcert=params.get("sslcert"), sslkey=params.get("sslkey"),
        connect_timeout_s=_connect_timeout(params.get("connect_timeout")),
        application_name=params.get("application_name"),
    )


def _host(params, key):
    host = params.get(key) or None
    if host is not None and "," in host:
        raise ConfigError("connection string: several hosts ({}={!r}) are not supported by the hooks' driver; "
                          "give one".format(key, host))
    return host


def _port(text):
    if text is None or text == "":
        return 5432
    if text.strip("0123456789") or not 1 <= int(text) <= 65535:  # not isdigit(): "²" is a digit to it
        raise ConfigError("connection string: port must be one number in 1..65535, not {!r}".format(text))
    return int(text)


def _pgpass_host(host, address, unix_socket):
    """The host a pgpass line must name: ``localhost`` for the default socket directory, as with libpq."""
    if unix_socket is not None and host in _SOCKET_DIRS:
        return "localhost"
    return host or address


def _default_socket_dir(port):
    for directory in _SOCKET_DIRS:
        if os.path.exists("{}/.s.PGSQL.{}".format(directory, port)):
            return directory
    return _SOCKET_DIRS[0]


def _os_user():
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        raise ConfigError("connection string: no user given, and this process's user has no name") from None


def _sslmode(mode, unix_socket):
    mode = mode or "prefer"
    if mode not in SSL_MODES:
        raise ConfigError("connection string: sslmode {!r} is not supported by the hooks' driver (supported: {})"
                          .format(mode, ", ".join(SSL_MODES)))
    if unix_socket is not None:
        return "disable"  # as libpq: no TLS over a Unix socket, whatever sslmode says
    return mode


def _default_root_cert(sslmode):
    """libpq's default for the verifying modes: ``~/.postgresql/root.crt``."""
    if sslmode not in ("verify-ca", "verify-full"):
        return None
    try:
        return os.path.join(pwd.getpwuid(os.geteuid()).pw_dir, ".postgresql", "root.crt")
    except KeyError:
        return None


def _connect_timeout(text):
    if text is None or text == "":
        return None
    try:
        seconds = int(text)
    except ValueError:
        raise ConfigError("connection string: connect_timeout must be whole seconds, not {!r}".format(text)) from None
    return None if seconds <= 0 else float(max(seconds, 2))  # libpq: 0 waits for ever, 1 counts as 2


# --- pgpass --------------------------------------------------------------------------------------

def _pgpass(params, environ, host, port, dbname, user):
    path = params.get("passfile") or environ.get("PGPASSFILE") or _home_pgpass()
    if not path:
        return None
    try:
        info = os.stat(path)
    except OSError:
        if params.get("passfile"):
            raise ConfigError("connection string: passfile {} cannot be read".format(path)) from None
        return None
    if stat.S_ISREG(info.st_mode) and info.st_mode & 0o077:
        raise ConfigError("passfile {} is readable by group or others; chmod 0600 it (libpq ignores such a file)"
                          .format(path))
    try:
        with open(path, encoding="utf-8", newline="") as passfile:
            lines = passfile.read().split("\n")  # not splitlines(): a password may hold \f or \u2028
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError("passfile {} cannot be read: {}".format(path, type(err).__name__)) from None
    wanted = (host, str(port), dbname, user)
    for line in lines:
        password = _pgpass_password(line.rstrip("\r\n"), wanted)
        if password is not None:
            return password
    return None


def _home_pgpass():
    try:
        home = pwd.getpwuid(os.geteuid()).pw_dir
    except KeyError:
        return None
    return os.path.join(home, ".pgpass")


def _pgpass_password(line, wanted):
    """The password of one pgpass line whose first four fields match ``wanted``, else None (libpq's rules)."""
    if not line or line.startswith("#"):
        return None
    position = 0
    for want in wanted:
        position = _pgpass_field_end(line, position, want)
        if position is None:
            return None
    chars = []
    while position < len(line) and line[position] != ":":  # the password ends at an unescaped ":"
        if line[position] == "\\" and position + 1 < len(line):
            position += 1
        chars.append(line[position])
        position += 1
    return "".join(chars)


def _pgpass_field_end(line, position, want):
    """Where the next field starts if the field at ``position`` matches ``want``, else None.

    As libpq's pwdfMatchesString: only a bare ``*`` is a wildcard (``\\*`` is a star), ``\\`` escapes
    one character, and an unescaped ``:`` still matches a ``:`` in ``want`` (``::1``).
    """
    if line.startswith("*:", position):
        return position + 2
    matched = 0
    while position < len(line):
        escaped = line[position] == "\\"
        position += escaped
        if position == len(line):
            return None
        if line[position] == ":" and not escaped and matched == len(want):
            return position + 1
        if matched == len(want) or line[position] != want[matched]:
            return None
        position, matched = position + 1, matched + 1
    return None
