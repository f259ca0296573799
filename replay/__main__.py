"""``python -m replay``: see replay/cli.py."""

import sys

from .cli import main

sys.exit(main())
