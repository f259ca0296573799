"""predictor.server.config: the hooks' JSON config, validated into a frozen HookConfig."""

import json

import pytest

from predictor.errors import ConfigError
from predictor.server.config import DEFAULTS, HookConfig, parse_hook_config, read_hook_config

READER = "host=127.0.0.1 dbname=swt user=reader"


def parse(**settings):
    settings.setdefault("reader_dsn", READER)
    return parse_hook_config(settings, "test.json")


def test_defaults():
    """Only reader_dsn given: v3, 2 s budget, no skips, admin values replaced, no writer."""
    config = parse()
    assert (config.algorithm.name, config.algorithm.window, config.budget_s, config.writer) == ("v3", 15, 2.0, None)
    assert config.skip_users == frozenset() and config.keep_admin_soft_walltime is False
    assert config.mode == "enforce" and not config.observe


def test_config_is_frozen():
    """A HookConfig cannot be changed after it is read."""
    with pytest.raises(AttributeError):
        parse().budget_s = 5


def test_every_field_has_a_default():
    """DEFAULTS covers every setting (the algorithm is built from eight of them)."""
    settings = set(HookConfig._fields) - {"algorithm", "reader", "writer"} | {
        "algorithm", "window", "reserve_s", "percentile", "window_days", "min_history", "key", "min_ratio_pct"}
    assert set(DEFAULTS) == settings | {"reader_dsn", "writer_dsn"}


def test_algorithm_parameters():
    """algorithm, window and reserve_s build the predictor."""
    config = parse(algorithm="v2", window=5, reserve_s=60)
    assert tuple(config.algorithm)[:3] == ("v2", 5, 60)


def test_v3_deployed_selectable():
    """algorithm "v3-deployed" takes v3's window and reserve."""
    config = parse(algorithm="v3-deployed", reserve_s=600)
    assert tuple(config.algorithm)[:3] == ("v3-deployed", 15, 600)


def test_tang_parameters():
    """algorithm "tang" with its percentile, time window, minimum history and key."""
    config = parse(algorithm="tang", percentile=70, window_days=14, min_history=5, key="user+walltime")
    assert tuple(config.algorithm) == ("tang", 2 ** 31 - 1, 0, 70, 14, 5, "user+walltime", 0)


def test_tang_defaults_are_the_papers_recommendation():
    """tang alone: 85th percentile, one month, at least 10 similar jobs, the triple key, no lower bound."""
    algorithm = parse(algorithm="tang").algorithm
    assert (algorithm.percentile, algorithm.window_days, algorithm.min_history, algorithm.key,
            algorithm.min_ratio_pct) == (85, 30, 10, "user+project+walltime", 0)


@pytest.mark.parametrize("settings, fragment", [
    ({"algorithm": "tang", "percentile": 0}, "percentile"),
    ({"algorithm": "tang", "percentile": 101}, "percentile"),
    ({"algorithm": "tang", "window_days": "30"}, "window_days"),
    ({"algorithm": "tang", "key": "group"}, "key must be one of"),
    ({"algorithm": "v3", "percentile": 80}, "percentile does not apply to v3"),
])
def test_bad_tang_parameters_named(settings, fragment):
    """A bad or misplaced tang parameter is a ConfigError naming it."""
    with pytest.raises(ConfigError, match=fragment):
        parse(**settings)


@pytest.mark.parametrize("settings, setting", [
    ({"budget_s": 0}, "budget_s"),
    ({"budget_s": "2"}, "budget_s"),
    ({"budget_s": 11}, "budget_s"),
    ({"budget_s": True}, "budget_s"),
    ({"pause_after_timeout_s": -1}, "pause_after_timeout_s"),
    ({"keep_admin_soft_walltime": "False"}, "keep_admin_soft_walltime"),
    ({"keep_admin_soft_walltime": 0}, "keep_admin_soft_walltime"),
    ({"skip_users": "alice"}, "skip_users"),
    ({"skip_queues": [""]}, "skip_queues"),
    ({"algorithm": "v9"}, "algorithm"),
    ({"window": 0}, "window"),
    ({"reserve_s": 1.5}, "reserve_s"),
    ({"package_path": "relative/dir"}, "package_path"),
    ({"reader_dsn": 5}, "reader_dsn"),
    ({"writer_dsn": ""}, "writer_dsn"),
    ({"mode": "dry-run"}, "mode"),
    ({"budjet_s": 2}, "budjet_s"),
])
def test_bad_values_name_the_setting(settings, setting):
    """Each bad value is a ConfigError naming the file and the setting."""
    with pytest.raises(ConfigError, match="test.json: .*{}".format(setting)):
        parse(**settings)


def test_string_false_is_not_true():
    """"False" as a string is refused rather than read as true."""
    with pytest.raises(ConfigError, match="JSON booleans"):
        parse(keep_admin_soft_walltime="False")


def test_comment_keys_are_ignored():
    """Keys starting with _ are comments."""
    assert parse(_comment="reader role only").budget_s == 2.0


@pytest.mark.parametrize("dsn", ["host=db.example.org user=x", "postgresql://x@db.example.org/swt"])
def test_host_names_are_refused(dsn):
    """A DSN host that needs a name lookup is refused: it cannot be bounded by the budget."""
    with pytest.raises(ConfigError, match="reader_dsn: host .* is a name"):
        parse(reader_dsn=dsn)


def test_several_hosts_are_refused():
    """libpq's host lists are not followed by the hooks' driver, and the config says so."""
    with pytest.raises(ConfigError, match="reader_dsn: .*several hosts"):
        parse(reader_dsn="host=127.0.0.1,10.0.0.2 user=x")


@pytest.mark.parametrize("dsn, where", [
    ("host=10.0.0.5 user=x", (None, "10.0.0.5")),
    ("host=::1 user=x", (None, "::1")),
    ("host=/var/run/postgresql user=x", ("/var/run/postgresql/.s.PGSQL.5432", None)),
    ("host=db.example.org hostaddr=10.0.0.5 user=x", (None, "10.0.0.5")),
    ("postgresql://x@[::1]:5432/swt", (None, "::1")),
])
def test_addresses_and_sockets_are_accepted(dsn, where):
    """IP addresses, socket directories and hostaddr need no lookup."""
    reader = parse(reader_dsn=dsn).reader
    assert (reader.unix_socket, reader.address) == where


def test_no_host_means_the_default_socket():
    """Without host, the server's socket in its default directory, as with libpq."""
    assert parse(reader_dsn="user=x dbname=y").reader.unix_socket.endswith("/.s.PGSQL.5432")


def test_unsupported_dsn_key_is_named():
    """A libpq key the hooks' driver cannot honour is refused by name rather than ignored."""
    with pytest.raises(ConfigError, match="reader_dsn: .*'target_session_attrs'"):
        parse(reader_dsn="host=10.0.0.5 user=x target_session_attrs=read-write")


def test_neither_dsn_is_refused():
    """A config with no DSN at all serves no hook."""
    with pytest.raises(ConfigError, match="reader_dsn .*writer_dsn"):
        parse_hook_config({}, "test.json")


def test_writer_dsn_alone_is_a_jobobit_config():
    """writer_dsn alone is a valid config, for the jobobit hook."""
    config = parse_hook_config({"writer_dsn": READER}, "test.json")
    assert config.reader is None and config.writer.address == "127.0.0.1"


@pytest.mark.parametrize("mode", ["observe", "enforce"])
def test_modes(mode):
    """mode is enforce (set soft_walltime) or observe (predict and log only)."""
    assert parse(mode=mode).observe == (mode == "observe")


def test_password_never_shows_in_the_config():
    """The parsed config's text form hides the DSN password."""
    config = parse(reader_dsn="host=10.0.0.5 user=x password=hunter2")
    assert "hunter2" not in repr(config) and "hunter2" not in str(config)


def test_bad_dsn_is_not_echoed():
    """A malformed DSN is reported without its text (it may hold a password)."""
    with pytest.raises(ConfigError) as info:
        parse(writer_dsn="host=10.0.0.5 password=hunter2 junk")
    assert "hunter2" not in str(info.value) and "writer_dsn" in str(info.value)


def test_read_from_file(tmp_path):
    """read_hook_config parses a JSON file."""
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"reader_dsn": READER, "budget_s": 0.5}))
    assert read_hook_config(str(path)).budget_s == 0.5


@pytest.mark.parametrize("text, message", [("{", "not valid JSON"), ("[]", "expected a JSON object")])
def test_bad_file_is_named(tmp_path, text, message):
    """Invalid JSON or a non-object names the file."""
    path = tmp_path / "h.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="hook config .*h.json: {}".format(message)):
        read_hook_config(str(path))


@pytest.mark.parametrize("path", [None, "/nonexistent/h.json"])
def test_missing_config(path):
    """No config path, or a missing file, is a ConfigError that says what to do."""
    with pytest.raises(ConfigError, match="import hook|cannot read"):
        read_hook_config(path)


@pytest.mark.parametrize("value", ["3600", -1, 1.5, True])
def test_bad_runjob_after_queued_s_named(value):
    """runjob_after_queued_s takes whole seconds or null, nothing else."""
    with pytest.raises(ConfigError, match="runjob_after_queued_s"):
        parse(runjob_after_queued_s=value)


def test_runjob_after_queued_s_defaults_to_always():
    """By default runjob predicts again for every job; 3600 is CESNET's production setting."""
    assert parse().runjob_after_queued_s is None and parse(runjob_after_queued_s=3600).runjob_after_queued_s == 3600
