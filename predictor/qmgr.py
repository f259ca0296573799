"""The qmgr commands that install, disable or remove the hooks (``python -m predictor hooks qmgr``).

One PBS hook per event, named ``<prefix>_<event>``, each importing its file
from hooks/ and the same JSON config. The hook alarm is PBS's last resort --
when it fires, PBS rejects the request -- so it is set well above the budget
the hooks keep themselves to.
"""

import math
import os
import re
import sys

from .errors import ConfigError
from .hookconfig import read_hook_config

__all__ = ["HOOK_EVENTS", "alarm_s", "find_hooks_dir", "check_hooks_dir", "install_commands", "disable_commands",
           "uninstall_commands"]

HOOK_EVENTS = ("queuejob", "runjob", "modifyjob", "jobobit")
"""Hook events, in install order; each has hooks/<event>.py."""

DEFAULT_PREFIX = "softwalltime"
DEFAULT_ORDER = 900
"""Late among site hooks, so that hooks setting walltime run before ours (lower order runs first)."""

_SAFE_PATH = re.compile(r"^/[A-Za-z0-9_./+@,=:-]+$")
_SAFE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def alarm_s(budget_s):
    """The hook alarm for a budget: at least 10 s and three times the budget."""
    return max(10, int(math.ceil(3 * budget_s)))


def _missing_hook_files(directory):
    return [event + ".py" for event in HOOK_EVENTS if not os.path.isfile(os.path.join(directory, event + ".py"))]


def find_hooks_dir():
    """The source checkout's hooks/, else the installed share/pbs-softwalltime/hooks."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(os.path.dirname(here), "hooks"),
                      os.path.join(sys.prefix, "share", "pbs-softwalltime", "hooks")):
        if not _missing_hook_files(candidate):
            return candidate
    raise ConfigError("hook files not found; give --hooks-dir")


def check_hooks_dir(directory):
    """``directory`` if it holds every hook file, else ConfigError naming the missing ones."""
    missing = _missing_hook_files(directory)
    if missing:
        raise ConfigError("hooks directory {}: missing {}".format(directory, ", ".join(missing)))
    return directory


def _qmgr(command):
    return 'qmgr -c "{}"'.format(command)


def _checked_path(path, what):
    path = os.path.abspath(path)
    if not _SAFE_PATH.match(path):
        raise ConfigError("{} {!r}: use a path without spaces, quotes or shell characters (qmgr and the shell "
                          "would split or expand it)".format(what, path))
    return path


def _checked_prefix(prefix):
    if not _SAFE_NAME.match(prefix) or prefix.upper().startswith("PBS"):
        raise ConfigError("hook name prefix {!r}: letters, digits and _, starting with a letter, "
                          "not starting with PBS (reserved)".format(prefix))
    return prefix


def _events(with_jobobit):
    return [event for event in HOOK_EVENTS if with_jobobit or event != "jobobit"]


def _checked_config(path):
    path = _checked_path(path, "config file")
    if not path.endswith(".json"):
        raise ConfigError("config file {}: name it *.json (PBS picks the config format from the suffix)".format(path))
    return path, read_hook_config(path)


def install_commands(config_path, hooks_dir, prefix=DEFAULT_PREFIX, order=DEFAULT_ORDER, with_jobobit=True,
                     jobobit_config_path=None):
    """The qmgr lines creating and importing every hook.

    ``jobobit_config_path``: a separate config for the jobobit hook, so that the
    writer's credentials stay out of the three predicting hooks' config.
    """
    configs = {event: _checked_config(config_path) for event in HOOK_EVENTS}
    if jobobit_config_path is not None:
        configs["jobobit"] = _checked_config(jobobit_config_path)
    if with_jobobit and configs["jobobit"][1].writer_dsn is None:
        raise ConfigError("hook config {}: writer_dsn is needed by the jobobit hook (or use --no-jobobit)"
                          .format(configs["jobobit"][0]))
    hooks_dir, prefix = _checked_path(hooks_dir, "hooks directory"), _checked_prefix(prefix)
    if not 1 <= order <= 1000:
        raise ConfigError("--order must be within 1..1000 (site hooks), not {}".format(order))
    lines = ["# pbs-softwalltime: run as root on the PBS server host."]
    for event in _events(with_jobobit):
        path, config = configs[event]
        lines.extend(_install_hook(prefix + "_" + event, event, hooks_dir, path, order, alarm_s(config.budget_s)))
    return lines


def _install_hook(name, event, hooks_dir, config_path, order, alarm):
    return [
        _qmgr("create hook {}".format(name)),
        _qmgr("set hook {} event = {}".format(name, event)),
        _qmgr("set hook {} order = {}".format(name, order)),
        _qmgr("set hook {} alarm = {}".format(name, alarm)),
        _qmgr("import hook {} application/x-python default {}".format(name, os.path.join(hooks_dir, event + ".py"))),
        _qmgr("import hook {} application/x-config default {}".format(name, config_path)),
        _qmgr("set hook {} enabled = true".format(name)),
    ]


def disable_commands(prefix=DEFAULT_PREFIX, with_jobobit=True):
    """The qmgr lines switching every hook off (they stay installed)."""
    prefix = _checked_prefix(prefix)
    return [_qmgr("set hook {}_{} enabled = false".format(prefix, event)) for event in _events(with_jobobit)]


def uninstall_commands(prefix=DEFAULT_PREFIX, with_jobobit=True):
    """The qmgr lines deleting every hook."""
    prefix = _checked_prefix(prefix)
    return [_qmgr("delete hook {}_{}".format(prefix, event)) for event in _events(with_jobobit)]
