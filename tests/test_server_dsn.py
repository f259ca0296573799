"""predictor.server.dsn: libpq connection strings read without libpq, checked against libpq itself.

libpq is reached through psycopg2 (``parse_dsn`` is PQconninfoParse; a trust
connection's ``info.password`` is what libpq took from a pgpass file). The
hooks never import psycopg2; only these tests do.
"""

import os
import pwd
import stat
import uuid

import psycopg2
import psycopg2.extensions
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from predictor.errors import ConfigError
from predictor.server.dsn import HONOURED_KEYS, SSL_MODES, ConnectParams, connect_params, parse_dsn

LIBPQ_KEYS = (
    "service", "user", "password", "passfile", "channel_binding", "connect_timeout", "dbname", "host", "hostaddr",
    "port", "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
    "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "sslmode", "sslnegotiation",
    "sslcompression", "sslcert", "sslkey", "sslcertmode", "sslpassword", "sslrootcert", "sslcrl", "sslcrldir",
    "sslsni", "requirepeer", "require_auth", "ssl_min_protocol_version", "ssl_max_protocol_version", "gssencmode",
    "krbsrvname", "gsslib", "gssdelegation", "replication", "target_session_attrs", "load_balance_hosts",
)
"""libpq 17's keywords (PQconndefaults of psycopg2's libpq), written out so the oracle does not trust dsn.py."""

UNSUPPORTED_KEYS = tuple(key for key in LIBPQ_KEYS if key not in HONOURED_KEYS)

SECRET = "Zq9s3cr3tW"
"""A password no message may show: not a key, not a word any message uses."""


# --- strategies -------------------------------------------------------------------------------------

# Space, the C locale's other isspace characters, Python-only spaces, quotes, escapes, separators, unicode.
_VALUE_CHARS = st.sampled_from(list(" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028'\\=\"ab1/:@?&,é用"))
_values = st.text(_VALUE_CHARS, max_size=8)


def _quoted(value):
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _escaped(value):
    return "".join("\\" + char if char in " \t\n\r\x0b\x0c'\\" else char for char in value)


@st.composite
def pair_strings(draw):
    """``key=value`` strings as an admin writes them: quoted, escaped or bare values, spaces around ``=``."""
    pieces = []
    for _ in range(draw(st.integers(0, 4))):
        key, value = draw(st.sampled_from(LIBPQ_KEYS)), draw(_values)
        written = draw(st.sampled_from([_quoted, _escaped, str]))(value)
        pieces.append(key + draw(st.sampled_from(["=", " = ", "\t=", "= "])) + written)
    separators = st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c"])
    return draw(st.sampled_from(["", " "])) + "".join(piece + draw(separators) for piece in pieces)


pair_soups = st.lists(st.one_of(
    st.sampled_from(["host", "port", "user", "password", "dbname", "options", "nokey", "=", "'", "\\", " ", "\t",
                     "\x0b", "\x1c", "\xa0", "é", "x", "5432", "''", "\\'"]),
    _VALUE_CHARS,
), max_size=12).map("".join)
"""Fragments of the key=value grammar in any order: most are malformed."""


def _percent(text, encode_all):
    return "".join("%{:02X}".format(byte) if encode_all or chr(byte) in "%@:/?&=,[] #" or byte > 127 else chr(byte)
                   for byte in text.encode("utf-8"))


_uri_text = st.text(st.sampled_from(list("ab1._-~ %@:/?&=,[]#é用'\\")), max_size=6)


@st.composite
def _netlocs(draw):
    items = []
    for _ in range(draw(st.integers(0, 3))):
        host = draw(st.one_of(
            st.sampled_from(["localhost", "127.0.0.1", "db.example.org", "[::1]", "[fe80::1%25eth0]",
                             "[2001:db8::2]", "%2Fvar%2Frun%2Fpostgresql", "%2Ftmp", ""]),
            st.builds(_percent, _uri_text, st.booleans()),
        ))
        port = draw(st.sampled_from(["", ":", ":5432", ":6543", ":0", ":x"]))
        items.append(host + port)
    return ",".join(items)


@st.composite
def uri_strings(draw):
    """``postgresql://`` URIs: user info, hosts (IPv6 in brackets, socket directories), dbname, query."""
    uri = draw(st.sampled_from(["postgresql://", "postgres://"]))
    if draw(st.booleans()):
        user = draw(st.builds(_percent, _uri_text, st.booleans()))
        password = draw(st.sampled_from(["", ":"]) | st.builds(lambda text: ":" + _percent(text, False), _uri_text))
        uri += user + password + "@"
    uri += draw(_netlocs())
    if draw(st.booleans()):
        uri += "/" + draw(st.builds(_percent, _uri_text, st.booleans()))
    if draw(st.booleans()):
        pairs = ["{}={}".format(draw(st.sampled_from(LIBPQ_KEYS + ("ssl",))),
                                draw(st.sampled_from(["true", "require", "/var/run/postgresql", "%2Ftmp"])
                                     | st.builds(_percent, _uri_text, st.booleans())))
                 for _ in range(draw(st.integers(0, 3)))]
        uri += "?" + "&".join(pairs) + draw(st.sampled_from(["", "&"]))
    return uri


uri_soups = st.builds(
    lambda prefix, tokens: prefix + "".join(tokens),
    st.sampled_from(["postgresql://", "postgres://"]),
    st.lists(st.sampled_from(["u", "pw", ":", "@", "/", "?", "&", "=", ",", "[", "]", "::1", "%2F", "%2f", "%00",
                              "%zz", "%4", "%C3", "%C3%A9", "%2C", "h", "5432", "db", "host", "port", "sslmode",
                              "require", "ssl", "true", "nokey", "é", " ", "%", "#"]), max_size=12),
)
"""Fragments of the URI grammar in any order: its corners (``@`` after ``?``, ``[`` without ``]``, ``%00``)."""


# --- parse_dsn against libpq ---------------------------------------------------------------------------

def libpq_parse(dsn):
    """libpq's PQconninfoParse through psycopg2: the dict, or None when libpq refuses the string."""
    try:
        return psycopg2.extensions.parse_dsn(dsn)
    except (psycopg2.ProgrammingError, UnicodeDecodeError):  # libpq refused; or its bytes are not UTF-8
        return None


def assert_agrees_with_libpq(dsn):
    """parse_dsn reads the string as libpq does; it refuses only what libpq refuses.

    One difference is deliberate: parse_dsn reads syntax only, and an unknown
    key is refused later, by connect_params (by name when libpq knows it). So
    where parse_dsn accepts a key libpq does not know, libpq must refuse.
    """
    expected = libpq_parse(dsn)
    try:
        ours = parse_dsn(dsn)
    except ConfigError:
        assert expected is None, "libpq accepts what parse_dsn refuses: {!r} -> {!r}".format(dsn, expected)
        return
    if all(key in LIBPQ_KEYS for key in ours):
        assert ours == expected
    else:
        assert expected is None


@settings(max_examples=200)
@given(pair_strings())
@example("host=x\\")
@example("host=a\x1cb port=1")
@example("password=\xa0")
def test_key_value_strings_read_as_libpq_reads_them(dsn):
    """Key=value strings (quotes, escapes, spaces, unicode) give libpq's dict."""
    assert_agrees_with_libpq(dsn)


@settings(max_examples=200)
@given(pair_soups)
def test_malformed_key_value_strings_are_refused_as_by_libpq(dsn):
    """Arbitrary key=value fragments: accepted and refused exactly as libpq does."""
    assert_agrees_with_libpq(dsn)


@settings(max_examples=200)
@given(uri_strings())
@example("postgresql://u:p@ss@h/db")
@example("postgresql://h?sslmode=require&")
@example("postgresql://,")
@example("postgresql://?ssl=true")
def test_uris_read_as_libpq_reads_them(uri):
    """URIs (user info, IPv6, socket directories, query parameters, percent-encoding) give libpq's dict."""
    assert_agrees_with_libpq(uri)


@settings(max_examples=200)
@given(uri_soups)
@example("postgresql://u?x@h")
@example("postgresql://[a/b]")
@example("postgresql://[]")
@example("postgresql://h?host=a=b")
@example("postgresql://h?host=%00")
def test_malformed_uris_are_refused_as_by_libpq(uri):
    """Arbitrary URI fragments: accepted and refused exactly as libpq does."""
    assert_agrees_with_libpq(uri)


def test_a_nul_character_is_refused():
    """A NUL, which libpq can never see in a C string, is refused rather than sent to the server."""
    with pytest.raises(ConfigError, match="NUL"):
        parse_dsn("host=/tmp user=alice\x00database\x00other")


def test_ipv6_address_in_brackets():
    """``[::1]:5433`` is host ``::1``, port 5433."""
    assert parse_dsn("postgresql://u@[::1]:5433/db") == {"user": "u", "host": "::1", "port": "5433", "dbname": "db"}


def test_socket_directory_in_a_uri():
    """A socket directory is given percent-encoded in the host, or as ``?host=``."""
    assert parse_dsn("postgresql://%2Fvar%2Frun%2Fpostgresql/db")["host"] == "/var/run/postgresql"
    assert parse_dsn("postgresql:///db?host=/tmp&port=6543") == {"dbname": "db", "host": "/tmp", "port": "6543"}


@pytest.mark.parametrize("dsn", [
    "host=/tmp password=ab " + SECRET,
    "host=/tmp password=ab " + SECRET + "=x",
    "password=ab " + SECRET + " = x host=/tmp",
    "password='" + SECRET,
    "password=" + SECRET + " host",
    "postgresql://u:" + SECRET + "@[::1",
    "postgresql://u:" + SECRET + "@[::1]x/db",
    "postgresql://u:" + SECRET + "@h/db?host",
    "postgresql://u:" + SECRET + "%zz@h/db",
    "postgresql://u:" + SECRET + "@h:99999/db",
    "postgresql://u:" + SECRET + "@a,b/db",
    "password=" + SECRET + " sslmode=allow hostaddr=10.0.0.1",
])
def test_messages_never_show_the_password(dsn):
    """A refused string's message shows neither its password nor a word that may be part of it."""
    with pytest.raises(ConfigError) as caught:
        connect_params(dsn, environ={})
    assert SECRET not in str(caught.value)


# --- connect_params: where -------------------------------------------------------------------------

def test_socket_directory_host_means_a_unix_socket():
    """A host that is a directory names the socket file in it, for that port."""
    params = connect_params("host=/srv/pg port=6000 user=u", environ={})
    assert (params.unix_socket, params.address, params.port) == ("/srv/pg/.s.PGSQL.6000", None, 6000)


def test_address_host_means_tcp():
    """A host that is an address is reached over TCP."""
    params = connect_params("host=10.1.2.3 port=6543 user=u", environ={})
    assert (params.unix_socket, params.address, params.port) == (None, "10.1.2.3", 6543)


def test_hostaddr_is_where_to_connect_and_host_is_the_name():
    """With hostaddr, the driver connects there; host stays the name (for pgpass and TLS)."""
    params = connect_params("host=db.example.org hostaddr=10.1.2.3 user=u", environ={})
    assert (params.unix_socket, params.address, params.host) == (None, "10.1.2.3", "db.example.org")


def test_socket_directory_from_uri_query():
    """``?host=/dir`` in a URI is a socket directory too."""
    params = connect_params("postgresql:///db?host=%2Fsrv%2Fpg&port=6000&user=u", environ={})
    assert (params.unix_socket, params.dbname) == ("/srv/pg/.s.PGSQL.6000", "db")


def test_no_host_means_the_default_socket_directory():
    """No host: the server's socket in /var/run/postgresql (where this machine's server has it)."""
    assert os.path.exists("/var/run/postgresql/.s.PGSQL.5432"), "the shared test server's socket is missing"
    params = connect_params("user=u", environ={})
    assert (params.unix_socket, params.host, params.port) == ("/var/run/postgresql/.s.PGSQL.5432",
                                                              "/var/run/postgresql", 5432)


def test_no_host_falls_back_to_tmp_when_only_it_has_the_socket():
    """No host, and the port's socket only in /tmp (upstream's default): /tmp."""
    port = _port_without_socket()
    path = "/tmp/.s.PGSQL.{}".format(port)
    open(path, "w").close()
    try:
        assert connect_params("port={} user=u".format(port), environ={}).unix_socket == path
    finally:
        os.unlink(path)


def test_no_host_and_no_socket_anywhere_means_var_run():
    """No host and no socket for the port anywhere: /var/run/postgresql, as Debian's libpq."""
    port = _port_without_socket()
    assert connect_params("port={} user=u".format(port), environ={}).host == "/var/run/postgresql"


def _port_without_socket():
    for port in range(40000, 41000):
        if not any(os.path.exists("{}/.s.PGSQL.{}".format(d, port)) for d in ("/var/run/postgresql", "/tmp")):
            return port
    raise AssertionError("no free port number for a socket test")


def test_user_defaults_to_the_os_user():
    """No user: the name of this process's user, as libpq."""
    assert connect_params("host=/tmp", environ={}).user == pwd.getpwuid(os.geteuid()).pw_name


def test_dbname_defaults_to_the_user():
    """No dbname: the user's name."""
    assert connect_params("host=/tmp user=alice", environ={}).dbname == "alice"


def test_empty_values_mean_defaults():
    """``host=''``, ``port=''``, ``user=''``, ``dbname=''`` are the defaults, as in libpq."""
    params = connect_params("host='' port='' user='' dbname='' hostaddr=''", environ={})
    user = pwd.getpwuid(os.geteuid()).pw_name
    assert (params.address, params.port, params.user, params.dbname) == (None, 5432, user, user)


@pytest.mark.parametrize("port", ["0", "65536", "x", "1,2", "-1", "²", "٥٤٣٢", "5_432"])
def test_a_bad_port_is_refused(port):
    """A port is one number in 1..65535 (ASCII digits only)."""
    with pytest.raises(ConfigError, match="port"):
        connect_params("host=/tmp port={}".format(port), environ={})


@pytest.mark.parametrize("dsn", ["host=10.0.0.1,10.0.0.2", "hostaddr=10.0.0.1,10.0.0.2",
                                 "postgresql://10.0.0.1,10.0.0.2/db", "postgresql://10.0.0.1:5432,10.0.0.2:5432/db"])
def test_several_hosts_are_refused(dsn):
    """The driver connects to one server: a host list is refused."""
    with pytest.raises(ConfigError, match="several hosts"):
        connect_params(dsn, environ={})


# --- connect_params: how ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", SSL_MODES)
def test_each_ssl_mode_is_kept_over_tcp(mode):
    """Every sslmode the driver follows is kept as given over TCP."""
    assert connect_params("host=10.0.0.1 sslmode=" + mode, environ={}).sslmode == mode


def test_sslmode_defaults_to_prefer_over_tcp():
    """No sslmode: prefer, as libpq."""
    assert connect_params("host=10.0.0.1", environ={}).sslmode == "prefer"


def test_a_unix_socket_never_uses_tls():
    """Over a Unix socket sslmode is disable, whatever the string says, as with libpq."""
    assert connect_params("host=/tmp sslmode=require", environ={}).sslmode == "disable"


@pytest.mark.parametrize("mode", ["allow", "on", "REQUIRE"])
def test_an_sslmode_the_driver_cannot_follow_is_refused(mode):
    """``allow`` (plain first, TLS if refused) and unknown modes are refused by name."""
    with pytest.raises(ConfigError, match="sslmode {!r}".format(mode)):
        connect_params("host=10.0.0.1 sslmode=" + mode, environ={})


@pytest.mark.parametrize("mode", ["verify-ca", "verify-full"])
def test_verifying_modes_default_to_the_users_root_cert(mode):
    """verify-ca and verify-full without sslrootcert use ~/.postgresql/root.crt, as libpq."""
    home = pwd.getpwuid(os.geteuid()).pw_dir
    params = connect_params("host=10.0.0.1 sslmode=" + mode, environ={})
    assert params.sslrootcert == os.path.join(home, ".postgresql", "root.crt")


def test_certificate_files_are_passed_on():
    """sslrootcert, sslcert and sslkey are kept as given."""
    params = connect_params("host=10.0.0.1 sslmode=require sslrootcert=/c/root.crt sslcert=/c/me.crt "
                            "sslkey=/c/me.key", environ={})
    assert (params.sslrootcert, params.sslcert, params.sslkey) == ("/c/root.crt", "/c/me.crt", "/c/me.key")


@pytest.mark.parametrize("text, seconds", [("10", 10.0), ("1", 2.0), ("0", None), ("-3", None), ("", None)])
def test_connect_timeout_as_libpq_reads_it(text, seconds):
    """connect_timeout: whole seconds, 1 counts as 2, 0 or less waits for ever."""
    assert connect_params("host=/tmp connect_timeout='{}'".format(text), environ={}).connect_timeout_s == seconds


@pytest.mark.parametrize("text", ["soon", "1.5"])
def test_a_bad_connect_timeout_is_refused(text):
    """connect_timeout that is not a whole number is refused by name."""
    with pytest.raises(ConfigError, match="connect_timeout"):
        connect_params("host=/tmp connect_timeout=" + text, environ={})


def test_application_name_is_passed_on():
    """application_name is kept as given."""
    assert connect_params("host=/tmp application_name='my hook'", environ={}).application_name == "my hook"


@pytest.mark.parametrize("key", UNSUPPORTED_KEYS)
def test_each_key_the_driver_cannot_honour_is_refused_by_name(key):
    """A libpq key the driver does not follow is refused, and the message names it."""
    with pytest.raises(ConfigError) as caught:
        connect_params("host=/tmp {}=1".format(key), environ={})
    assert repr(key) in str(caught.value)


def test_a_key_libpq_does_not_know_is_refused():
    """A key that is not a libpq keyword at all is refused too."""
    with pytest.raises(ConfigError, match="not a libpq keyword"):
        connect_params("host=/tmp dbnmae=x", environ={})


def test_jdbc_ssl_true_is_sslmode_require():
    """``?ssl=true`` in a URI means sslmode=require, as in libpq."""
    assert connect_params("postgresql://10.0.0.1/db?ssl=true", environ={}).sslmode == "require"


# --- pgpass ----------------------------------------------------------------------------------------

def write_passfile(directory, text, mode=0o600):
    path = os.path.join(str(directory), "pgpass-" + uuid.uuid4().hex[:8])
    with open(path, "w", encoding="utf-8", newline="") as passfile:
        passfile.write(text)
    os.chmod(path, mode)
    return path


def password_for(dsn, passfile_text, directory, environ=None):
    path = write_passfile(directory, passfile_text)
    return connect_params("{} passfile={}".format(dsn, path), environ={} if environ is None else environ).password


_LIBPQ_TARGETS = [
    "host=127.0.0.1 port=5432 user=postgres dbname=postgres",
    "hostaddr=127.0.0.1 user=postgres dbname=postgres",
    "host=localhost hostaddr=127.0.0.1 user=postgres",
    "host=/var/run/postgresql user=postgres dbname=postgres",
    "port=5432 user=postgres",
]
"""Where the shared trust server answers: libpq connects, so its pgpass lookup can be read back."""


def _with_escapes(draw, text):
    return "".join(("\\" + char) if draw(st.booleans()) else char for char in text)


@st.composite
def pgpass_fields(draw, wanted):
    choice = draw(st.sampled_from(["*", "exact", "escaped", "star", "other", "colon"]))
    if choice == "exact":
        return wanted
    if choice == "escaped":
        return _with_escapes(draw, wanted)
    return {"*": "*", "star": "\\*", "other": draw(st.sampled_from(["", "x", "localhost", "127.0.0.1", "5433"])),
            "colon": wanted + "\\:x"}[choice]


@st.composite
def pgpass_files(draw):
    """pgpass text for user postgres on 127.0.0.1 or the socket: wildcards, escapes, comments, extra fields."""
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["entry", "entry", "entry", "comment", "blank", "short"]))
        if kind == "comment":
            lines.append("#" + draw(st.sampled_from(["*:*:*:*:commented", "127.0.0.1:5432:postgres:postgres:c"])))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\r"])))
        else:
            fields = [draw(pgpass_fields(wanted)) for wanted in
                      (draw(st.sampled_from(["127.0.0.1", "localhost"])), "5432", "postgres", "postgres")]
            password = draw(st.text(st.sampled_from(list("pw:\\é# *\t\x0c\u2028")), max_size=6))
            extra = draw(st.sampled_from(["", ":extra", ":"]))
            lines.append(":".join(fields[:3 if kind == "short" else 4]) + ":" + password + extra)
    return "".join(line + draw(st.sampled_from(["\n", "\r\n"])) for line in lines)


@settings(max_examples=100)
@given(st.sampled_from(_LIBPQ_TARGETS), pgpass_files())
def test_pgpass_lookup_agrees_with_libpq(tmp_path, target, text):
    """The password found in a pgpass file is the one libpq finds (its lookup read back from a trust connection)."""
    path = write_passfile(tmp_path, text)
    dsn = "{} passfile={}".format(target, path)
    conn = psycopg2.connect(dsn, connect_timeout=10)
    try:
        expected = conn.info.password or None
    finally:
        conn.close()
    assert (connect_params(dsn, environ={}).password or None) == expected


def test_pgpass_first_matching_line_wins(tmp_path):
    """Lines are tried in order; the first that matches gives the password."""
    text = "10.0.0.1:5432:db:u:first\n*:*:*:*:second\n10.0.0.1:5432:db:u:third\n"
    assert password_for("host=10.0.0.1 dbname=db user=u", text, tmp_path) == "first"


def test_pgpass_wildcards_match_any_value(tmp_path):
    """A field that is ``*`` matches anything."""
    assert password_for("host=10.0.0.1 port=6543 dbname=db user=u", "*:*:db:*:pw\n", tmp_path) == "pw"


def test_pgpass_escaped_star_is_a_star(tmp_path):
    """``\\*`` matches only a literal ``*``, not everything."""
    assert password_for("host=10.0.0.1 dbname=db user=u", "10.0.0.1:5432:\\*:u:pw\n", tmp_path) is None


def test_pgpass_escaped_colons_in_fields_and_password(tmp_path):
    """``\\:`` is a colon inside a field or the password; ``\\\\`` a backslash."""
    text = "10.0.0.1:5432:db\\:one:u:p\\:w\\\\d\n"
    assert password_for("host=10.0.0.1 dbname='db:one' user=u", text, tmp_path) == "p:w\\d"


def test_pgpass_password_ends_at_the_next_colon(tmp_path):
    """Fields after the password are ignored, as by libpq."""
    assert password_for("host=10.0.0.1 dbname=db user=u", "*:*:*:*:pw:comment\n", tmp_path) == "pw"


def test_pgpass_no_matching_line_means_no_password(tmp_path):
    """No line matches: no password."""
    assert password_for("host=10.0.0.1 dbname=db user=u", "10.0.0.2:5432:db:u:pw\n", tmp_path) is None


@pytest.mark.parametrize("host", ["", "host=/var/run/postgresql", "host=/tmp"])
def test_pgpass_default_socket_directory_is_localhost(tmp_path, host):
    """For the default socket directory, the pgpass host to name is ``localhost``."""
    assert password_for(host + " port=5432 dbname=db user=u", "localhost:5432:db:u:pw\n", tmp_path) == "pw"


def test_pgpass_other_socket_directory_is_named_as_it_is(tmp_path):
    """Any other socket directory is matched by its path, not by ``localhost``."""
    text = "localhost:5432:db:u:wrong\n/srv/pg:5432:db:u:right\n"
    assert password_for("host=/srv/pg dbname=db user=u", text, tmp_path) == "right"


def test_pgpass_unescaped_colons_match_an_ipv6_address(tmp_path):
    """``::1`` written as is in the host field still matches host ::1, as with libpq."""
    assert password_for("hostaddr=::1 dbname=db user=u", "::1:5432:db:u:pw\n", tmp_path) == "pw"


def test_pgpass_hostaddr_is_matched_when_no_host_is_given(tmp_path):
    """With hostaddr and no host, the address is what a pgpass line names."""
    assert password_for("hostaddr=10.0.0.1 dbname=db user=u", "10.0.0.1:5432:db:u:pw\n", tmp_path) == "pw"


def test_password_in_the_string_wins_and_no_passfile_is_read(tmp_path):
    """A password in the string is used; the pgpass file is not even opened (here it would be refused)."""
    path = write_passfile(tmp_path, "*:*:*:*:fromfile\n", mode=0o644)
    assert connect_params("host=/tmp password=given passfile=" + path, environ={}).password == "given"


def test_group_readable_passfile_is_refused(tmp_path):
    """A passfile group or others can read is refused, naming the file (libpq would ignore it silently)."""
    path = write_passfile(tmp_path, "*:*:*:*:pw\n", mode=0o640)
    with pytest.raises(ConfigError, match="0600") as caught:
        connect_params("host=/tmp passfile=" + path, environ={})
    assert path in str(caught.value)


def test_missing_passfile_named_in_the_string_is_refused(tmp_path):
    """A passfile the string names but that does not exist is a config error."""
    with pytest.raises(ConfigError, match="passfile"):
        connect_params("host=/tmp passfile=" + os.path.join(str(tmp_path), "none"), environ={})


def test_missing_pgpassfile_from_the_environment_is_ignored(tmp_path):
    """``$PGPASSFILE`` naming no file means no password, as with libpq."""
    environ = {"PGPASSFILE": os.path.join(str(tmp_path), "none")}
    assert connect_params("host=/tmp", environ=environ).password is None


def test_passfile_key_comes_before_pgpassfile(tmp_path):
    """The ``passfile`` key wins over ``$PGPASSFILE``."""
    environ = {"PGPASSFILE": write_passfile(tmp_path, "*:*:*:*:env\n")}
    assert password_for("host=/tmp", "*:*:*:*:key\n", tmp_path, environ) == "key"


def test_pgpassfile_comes_before_the_home_pgpass(tmp_path, monkeypatch):
    """``$PGPASSFILE`` wins over ``~/.pgpass``."""
    _home_with_pgpass(tmp_path, monkeypatch, "*:*:*:*:home\n")
    environ = {"PGPASSFILE": write_passfile(tmp_path, "*:*:*:*:env\n")}
    assert connect_params("host=/tmp", environ=environ).password == "env"


def test_home_pgpass_is_the_last_resort(tmp_path, monkeypatch):
    """No passfile key and no ``$PGPASSFILE``: ``.pgpass`` in the process user's home directory."""
    _home_with_pgpass(tmp_path, monkeypatch, "*:*:*:*:home\n")
    assert connect_params("host=/tmp", environ={}).password == "home"


def _home_with_pgpass(tmp_path, monkeypatch, text):
    home = tmp_path / "home"
    home.mkdir()
    path = home / ".pgpass"
    path.write_text(text)
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    real = pwd.getpwuid(os.geteuid())
    fake = pwd.struct_passwd((real.pw_name, "x", real.pw_uid, real.pw_gid, "", str(home), "/bin/sh"))
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: fake)


# --- ConnectParams ---------------------------------------------------------------------------------

@given(st.text(min_size=1, max_size=12))
def test_text_form_never_shows_the_password(suffix):
    """``repr()``, ``str()`` and ``format()`` of ConnectParams hide the password."""
    password = SECRET + suffix
    params = connect_params("host=/tmp user=u", environ={})._replace(password=password)
    for text in (repr(params), str(params), "{}".format(params), "%s" % (params,), repr([params])):
        assert SECRET not in text and repr(password)[1:-1] not in text


def test_text_form_shows_the_rest():
    """The text form still says where it connects (so a log line is useful)."""
    params = connect_params("host=10.1.2.3 port=6543 user=alice password=pw", environ={})
    assert "10.1.2.3" in repr(params) and "6543" in repr(params) and "alice" in repr(params)


def test_connect_params_is_a_connect_params():
    """connect_params returns the hooks' ConnectParams, comparable as a cache key."""
    first, second = (connect_params("host=10.1.2.3 user=alice", environ={}) for _ in range(2))
    assert isinstance(first, ConnectParams) and first == second and hash(first) == hash(second)
