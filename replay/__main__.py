"""``python -m replay``: see replay/cli.py."""

from .cli import entry_point

entry_point()
