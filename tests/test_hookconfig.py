"""predictor.hookconfig: the hooks' JSON config, validated into a frozen HookConfig."""

import json

import pytest

from predictor.errors import ConfigError
from predictor.hookconfig import DEFAULTS, HookConfig, parse_hook_config, read_hook_config

READER = "host=127.0.0.1 dbname=swt user=reader"


def parse(**settings):
    settings.setdefault("reader_dsn", READER)
    return parse_hook_config(settings, "test.json")


def test_defaults():
    """Only reader_dsn given: v3, 2 s budget, no skips, admin values replaced, no writer."""
    config = parse()
    assert (config.algorithm.name, config.algorithm.window, config.budget_s, config.writer_dsn) == ("v3", 15, 2.0, None)
    assert config.skip_users == frozenset() and config.keep_admin_soft_walltime is False


def test_config_is_frozen():
    """A HookConfig cannot be changed after it is read."""
    with pytest.raises(AttributeError):
        parse().budget_s = 5


def test_every_field_has_a_default():
    """DEFAULTS covers every setting (the algorithm is built from three of them)."""
    settings = set(HookConfig._fields) - {"algorithm"} | {"algorithm", "window", "reserve_s"}
    assert set(DEFAULTS) == settings


def test_algorithm_parameters():
    """algorithm, window and reserve_s build the predictor."""
    config = parse(algorithm="v2", window=5, reserve_s=60)
    assert tuple(config.algorithm) == ("v2", 5, 60)


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
    ({"reader_dsn": None}, "reader_dsn"),
    ({"writer_dsn": ""}, "writer_dsn"),
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


@pytest.mark.parametrize("dsn", ["host=db.example.org user=x", "postgresql://x@db.example.org/swt",
                                 "host=127.0.0.1,db2 user=x"])
def test_host_names_are_refused(dsn):
    """A DSN host that needs a name lookup is refused: libpq resolves it outside any timeout."""
    with pytest.raises(ConfigError, match="reader_dsn: host .* is a name"):
        parse(reader_dsn=dsn)


@pytest.mark.parametrize("dsn", ["host=10.0.0.5 user=x", "host=::1 user=x", "host=/var/run/postgresql user=x",
                                 "host=db.example.org hostaddr=10.0.0.5 user=x", "user=x dbname=y",
                                 "postgresql://x@[::1]:5432/swt"])
def test_addresses_and_sockets_are_accepted(dsn):
    """IP addresses, socket directories, hostaddr and the default socket need no lookup."""
    assert parse(reader_dsn=dsn).reader_dsn == dsn


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
