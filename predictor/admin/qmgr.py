"""The qmgr commands that install, disable or remove the hooks (``python -m predictor hooks qmgr``).

Two PBS hooks import the same hook file: ``<prefix>`` serves queuejob, runjob
and modifyjob with a config holding ``reader_dsn``; ``<prefix>_jobobit``
records finished jobs with a config holding ``writer_dsn`` (the same file, or a
separate one so the writer's password stays out of the predicting hook). The
hook alarm is PBS's last resort -- when it fires, PBS rejects the request --
so it is set well above the budget the hooks keep themselves to.
"""

import math
import os
import re

from ..cmdline import files
from ..errors import ConfigError
from ..server.config import read_hook_config
from ..server.runtime import PREDICTING_EVENTS
from .secrets import readable_password

__all__ = ["DEFAULT_PREFIX", "DEFAULT_ORDER", "alarm_s", "hook_file", "hook_names", "install_commands",
           "disable_commands", "uninstall_commands"]

DEFAULT_PREFIX = "softwalltime"
DEFAULT_ORDER = 900
"""Late among site hooks, so that hooks setting walltime run before ours (lower order runs first)."""

_SAFE_PATH = re.compile(r"^/[A-Za-z0-9_./+@,=:-]+$")
_SAFE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def alarm_s(budget_s):
    """The hook alarm for a budget: at least 10 s and three times the budget."""
    return max(10, int(math.ceil(3 * budget_s)))


def hook_file():
    """The hook file shipped in the package (or in the source checkout)."""
    directory = files.packaged_dir("hooks")
    path = None if directory is None else os.path.join(directory, files.HOOK_FILE_NAME)
    if path is None or not os.path.isfile(path):
        raise ConfigError("the hook file {} is missing from the installed package; reinstall pbs-softwalltime"
                          .format(files.HOOK_FILE_NAME))
    return path


def hook_names(prefix=DEFAULT_PREFIX, with_jobobit=True):
    """``[(hook name, events)]`` in install order."""
    prefix = _checked_prefix(prefix)
    names = [(prefix, ",".join(PREDICTING_EVENTS))]
    return names + [(prefix + "_jobobit", "jobobit")] if with_jobobit else names


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


def _checked_config(path, needs, option, allow_readable):
    path = _checked_path(path, "config file")
    if not path.endswith(".json"):
        raise ConfigError("config file {}: name it *.json (PBS picks the config format from the suffix)".format(path))
    config = read_hook_config(path)
    if getattr(config, needs) is None:
        raise ConfigError("hook config {}: {}_dsn is needed by the {}".format(path, needs, option))
    exposed = None if allow_readable else readable_password(path)
    if exposed:
        raise ConfigError("{}: chmod 600 it (or give --allow-readable to install it as it is)".format(exposed))
    return path, config


def install_commands(config_path, prefix=DEFAULT_PREFIX, order=DEFAULT_ORDER, with_jobobit=True,
                     jobobit_config_path=None, hook_path=None, allow_readable=False):
    """The qmgr lines creating, configuring and enabling the hooks (configs validated first; a config holding a
    password that others may read is refused unless ``allow_readable``)."""
    names = hook_names(prefix, with_jobobit)
    configs = [_checked_config(config_path, "reader", "predicting hook (queuejob, runjob, modifyjob)",
                               allow_readable)]
    if with_jobobit:
        configs.append(_checked_config(jobobit_config_path or config_path, "writer",
                                       "jobobit hook (or use --no-jobobit)", allow_readable))
    if not 1 <= order <= 1000:
        raise ConfigError("--order must be within 1..1000 (site hooks), not {}".format(order))
    hook_path = _checked_path(hook_path or hook_file(), "hook file")
    lines = ["# pbs-softwalltime: run as root on the PBS server host."]
    for (name, events), (path, config) in zip(names, configs):
        lines.extend(_install_hook(name, events, hook_path, path, order, alarm_s(config.budget_s)))
    return lines


def _install_hook(name, events, hook_path, config_path, order, alarm):
    return [
        _qmgr("create hook {}".format(name)),
        _qmgr("set hook {} event = '{}'".format(name, events)),
        _qmgr("set hook {} order = {}".format(name, order)),
        _qmgr("set hook {} alarm = {}".format(name, alarm)),
        _qmgr("import hook {} application/x-python default {}".format(name, hook_path)),
        _qmgr("import hook {} application/x-config default {}".format(name, config_path)),
        _qmgr("set hook {} enabled = true".format(name)),
    ]


def disable_commands(prefix=DEFAULT_PREFIX, with_jobobit=True):
    """The qmgr lines switching every hook off (they stay installed)."""
    return [_qmgr("set hook {} enabled = false".format(name)) for name, _ in hook_names(prefix, with_jobobit)]


def uninstall_commands(prefix=DEFAULT_PREFIX, with_jobobit=True):
    """The qmgr lines deleting every hook."""
    return [_qmgr("delete hook {}".format(name)) for name, _ in hook_names(prefix, with_jobobit)]
