"""``python -m replay``: see replay/cli.py."""

from predictor.cmdline.exits import end_process

from .cli import main

end_process(main())
