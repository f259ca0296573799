"""Where the schema files and the hook file are: inside the installed package, or in a source checkout.

``pip install`` (``--target`` included) puts sql/ and hooks/ inside the package
as ``predictor/sql`` and ``predictor/hooks``; a source checkout has them beside
the package. Either way the admin commands need no path options.
"""

import os
import re

__all__ = ["packaged_dir", "migrations", "HOOK_FILE_NAME"]

HOOK_FILE_NAME = "softwalltime.py"
"""The one hook file every hook imports."""

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The installed ``predictor`` package (this module is in its ``cmdline`` folder)."""


def packaged_dir(name):
    """The installed ``predictor/<name>``, else the checkout's ``<name>/``; None if neither exists."""
    for candidate in (os.path.join(_PACKAGE, name), os.path.join(os.path.dirname(_PACKAGE), name)):
        if os.path.isdir(candidate):
            return candidate
    return None


_MIGRATION = re.compile(r"^([0-9]+)_[A-Za-z0-9_-]+\.sql$")


def migrations(directory):
    """``[(version, path)]`` for the schema files ``NNN_name.sql`` in ``directory``, in order."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = [(int(m.group(1)), os.path.join(directory, name)) for name in names for m in [_MIGRATION.match(name)] if m]
    return sorted(found)
