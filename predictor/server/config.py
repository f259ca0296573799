"""The hooks' configuration: one JSON file, read once into a frozen ``HookConfig``.

PBS hands the file to a hook as ``pbs.hook_config_filename`` after
``qmgr -c "import hook NAME application/x-config default FILE.json"`` (PBS
does not check it: this module does). Every setting and its default is in
``DEFAULTS``; a bad value is a ``ConfigError`` that names the file and the
setting, and never repeats a DSN (it may hold a password).
"""

import ipaddress
import json
from typing import FrozenSet, NamedTuple, Optional

from ..algorithms import DEFAULT_ALGORITHM, PARAMETERS, Algorithm, make_algorithm
from ..errors import ConfigError
from .dsn import ConnectParams, connect_params

__all__ = ["HookConfig", "DEFAULTS", "MODES", "MAX_BUDGET_S", "parse_hook_config", "read_hook_config"]

MAX_BUDGET_S = 10.0
"""A budget above this comes too close to PBS's hook alarm (30 s by default)."""

MODES = ("enforce", "observe")
"""``enforce``: set soft_walltime. ``observe``: predict and log what would be set, change no job."""

DEFAULTS = {
    "reader_dsn": None,
    "writer_dsn": None,
    "mode": "enforce",
    "algorithm": DEFAULT_ALGORITHM,
    **dict.fromkeys(PARAMETERS),
    "budget_s": 2.0,
    "pause_after_timeout_s": 30.0,
    "skip_queues": [],
    "skip_users": [],
    "keep_admin_soft_walltime": False,
    "runjob_after_queued_s": None,
    "package_path": None,
}
"""Every setting with its default. The predictor parameters (``window``, ``reserve_s`` and tang's
``percentile``, ``window_days``, ``min_history``, ``key``, ``min_ratio_pct``) None: the algorithm's own (see
``predictor.algorithms.REGISTRY``).
``pause_after_timeout_s``: after the database missed the budget, events skip it
this long, so a hung server costs pbs_server one budget per pause, not per job.
``runjob_after_queued_s``: the runjob hook predicts again only for jobs submitted at least this long ago
(CESNET's production hook: 3600); null: always."""


class HookConfig(NamedTuple):
    """Validated hook settings. ``reader`` is None in a config for jobobit only, ``writer`` without jobobit."""

    reader: Optional[ConnectParams]
    writer: Optional[ConnectParams]
    mode: str
    algorithm: Algorithm
    budget_s: float
    pause_after_timeout_s: float
    skip_queues: FrozenSet[str]
    skip_users: FrozenSet[str]
    keep_admin_soft_walltime: bool
    runjob_after_queued_s: Optional[int]
    package_path: Optional[str]

    @property
    def observe(self):
        """True when the hooks only predict and log, and set nothing."""
        return self.mode == "observe"


def read_hook_config(path):
    """The ``HookConfig`` in the JSON file at ``path``; ConfigError if missing or bad."""
    if not path:
        raise ConfigError('no hook config: import one with '
                          'qmgr -c "import hook NAME application/x-config default FILE.json"')
    try:
        with open(path, encoding="utf-8") as config_file:
            text = config_file.read()
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError("hook config {}: cannot read it: {}".format(path, err)) from None
    try:
        settings = json.loads(text)
    except ValueError as err:
        raise ConfigError("hook config {}: not valid JSON: {}".format(path, err)) from None
    return parse_hook_config(settings, "hook config " + path)


def parse_hook_config(settings, source="hook config"):
    """Validate a dict of settings (keys starting with ``_`` are comments)."""
    if not isinstance(settings, dict):
        raise ConfigError("{}: expected a JSON object of settings, got {}".format(source, type(settings).__name__))
    unknown = sorted(key for key in settings if key not in DEFAULTS and not key.startswith("_"))
    if unknown:
        raise ConfigError("{}: unknown setting {!r} (known: {})".format(
            source, unknown[0], ", ".join(sorted(DEFAULTS))))
    values = dict(DEFAULTS)
    values.update((key, value) for key, value in settings.items() if key in DEFAULTS)
    try:
        return _build(values)
    except ConfigError as err:
        raise ConfigError("{}: {}".format(source, err)) from None


def _build(values):
    reader, writer = _dsn(values, "reader_dsn"), _dsn(values, "writer_dsn")
    if reader is None and writer is None:
        raise ConfigError("set reader_dsn (for predictions), writer_dsn (for the jobobit hook), or both")
    return HookConfig(
        reader=reader,
        writer=writer,
        mode=_mode(values["mode"]),
        algorithm=_algorithm(values),
        budget_s=_budget(values["budget_s"]),
        pause_after_timeout_s=_pause(values["pause_after_timeout_s"]),
        skip_queues=_names(values, "skip_queues"),
        skip_users=_names(values, "skip_users"),
        keep_admin_soft_walltime=_boolean(values, "keep_admin_soft_walltime"),
        runjob_after_queued_s=_queued_s(values["runjob_after_queued_s"]),
        package_path=_package_path(values["package_path"]),
    )


def _dsn(values, key):
    dsn = values[key]
    if dsn is None:
        return None
    if not isinstance(dsn, str) or not dsn.strip():
        raise ConfigError("{} must be a libpq connection string (key=value pairs or a postgresql:// URI) or null"
                          .format(key))
    try:
        params = connect_params(dsn)
    except ConfigError as err:
        raise ConfigError("{}: {}".format(key, err)) from None
    _check_no_name_lookup(key, params)
    return params


def _check_no_name_lookup(key, params):
    """Refuse host names: a name lookup cannot be bounded by budget_s, so DNS could stall pbs_server."""
    if params.address is not None and not _is_ip_address(params.address):
        raise ConfigError("{}: host {!r} is a name; give an IP address (host=10.0.0.5), a socket directory, "
                          "or add hostaddr=IP, because a name lookup cannot be bounded by budget_s"
                          .format(key, params.address))


def _is_ip_address(text):
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _mode(mode):
    if mode not in MODES:
        raise ConfigError("mode must be one of {}, not {!r}".format(", ".join(repr(name) for name in MODES), mode))
    return mode


def _algorithm(values):
    try:
        return make_algorithm(values["algorithm"], **{key: values[key] for key in PARAMETERS})
    except ConfigError as err:
        raise ConfigError("algorithm/{}: {}".format("/".join(PARAMETERS), err)) from None


def _seconds(value, name, low, high, low_included):
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if not number or not (low <= value if low_included else low < value) or not value <= high:
        raise ConfigError("{} must be a number of seconds {} {:g} and <= {:g}, not {!r}".format(
            name, ">=" if low_included else ">", low, high, value))
    return float(value)


def _budget(budget_s):
    return _seconds(budget_s, "budget_s", 0, MAX_BUDGET_S, low_included=False)


def _pause(pause_s):
    return _seconds(pause_s, "pause_after_timeout_s", 0, 3600, low_included=True)


def _names(values, key):
    names = values[key]
    if not isinstance(names, list) or not all(isinstance(name, str) and name for name in names):
        raise ConfigError("{} must be a list of non-empty names, not {!r}".format(key, names))
    return frozenset(names)


def _boolean(values, key):
    value = values[key]
    if not isinstance(value, bool):
        raise ConfigError("{} must be true or false (JSON booleans, not strings), not {!r}".format(key, value))
    return value


def _queued_s(seconds):
    """runjob_after_queued_s: whole seconds >= 0, or null (runjob always predicts again)."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not 0 <= seconds <= 10 ** 9:
        raise ConfigError("runjob_after_queued_s must be whole seconds from 0 to 1000000000, or null, not {!r}"
                          .format(seconds))
    return seconds


def _package_path(path):
    if path is not None and (not isinstance(path, str) or not path.startswith("/")):
        raise ConfigError("package_path must be an absolute directory path or null, not {!r}".format(path))
    return path
