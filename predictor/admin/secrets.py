"""Hook configs that hold a password and that other users may read.

The hook configs carry the reader's and the writer's connection strings; with
a ``password=`` in them, a config readable by its group or by everyone gives
the database to any local user. docs/install.md asks for mode 0600 (as libpq
asks of a pgpass file); ``doctor`` warns about such a file and ``hooks qmgr``
refuses it unless told otherwise.
"""

import json
import os

from ..server.dsn import parse_dsn

__all__ = ["readable_password"]

_DSN_SETTINGS = ("reader_dsn", "writer_dsn")


def readable_password(path):
    """What is wrong, in one phrase, when ``path`` holds a password and group or others may read it; else None."""
    mode = os.stat(path).st_mode & 0o777
    if not mode & 0o044:
        return None
    setting = _password_setting(path)
    if setting is None:
        return None
    return "{} holds a password ({}) and is readable by {} (mode {:04o})".format(
        path, setting, "every local user" if mode & 0o004 else "its group", mode)


def _password_setting(path):
    """The first DSN setting of the (already validated) config that carries a password, or None."""
    try:
        with open(path, encoding="utf-8") as config_file:
            values = json.load(config_file)
    except (OSError, ValueError):
        return None
    for setting in _DSN_SETTINGS:
        text = values.get(setting) if isinstance(values, dict) else None
        if isinstance(text, str) and _has_password(text):
            return setting
    return None


def _has_password(dsn):
    try:
        return bool(parse_dsn(dsn).get("password"))
    except ValueError:  # ConfigError: a malformed DSN is reported by the config check itself
        return False
