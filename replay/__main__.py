"""``python -m replay``: see replay/cli.py."""

import os

# The replay's numpy work is element-wise and its parallel runs are processes: OpenBLAS's thread pool would only
# add to every command's start-up and sit idle. A setting of the admin's own is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from predictor.cmdline.exits import end_process  # noqa: E402  (after the setting, which numpy reads at import)

from .cli import main  # noqa: E402

end_process(main())
