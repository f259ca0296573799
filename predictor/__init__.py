"""pbs-softwalltime: predict PBS soft walltimes from each user's completed jobs.

Everything here is Python 3.6 syntax, for PBS's hook interpreter on EL8.
The top of the package is the pure core (predictors, records, the history
store, errors); its folders are the parts: ``server`` (what pbs_server loads:
the standard library and pg8000 only), ``accounting`` (the log format),
``db``, ``ingest`` and ``report`` (the admin side, with psycopg2; the figures
of ``report --plot`` with numpy and matplotlib), ``cmdline`` (the kit both
command lines share) and ``admin`` (``python -m predictor``).
"""

from .algorithms import ALGORITHMS, RESERVE_S, Algorithm, make_algorithm, v1, v2, v3
from .durations import format_duration, parse_duration
from .errors import AccountingError, ConfigError, DatabaseError, DeadlineExceeded, PredictorError
from .history import MemoryHistory, predict
from .jobs import CompletedJob, HistoryRow, JobRequest

__all__ = [
    "ALGORITHMS", "RESERVE_S", "Algorithm", "make_algorithm", "v1", "v2", "v3",
    "format_duration", "parse_duration",
    "AccountingError", "ConfigError", "DatabaseError", "DeadlineExceeded", "PredictorError",
    "MemoryHistory", "predict",
    "CompletedJob", "HistoryRow", "JobRequest",
]

__version__ = "0.1.0"
