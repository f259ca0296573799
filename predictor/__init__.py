"""pbs-softwalltime: predict PBS soft walltimes from each user's completed jobs.

Everything here is Python 3.6 syntax, for PBS's hook interpreter on EL8.
The hooks' side imports the standard library and pg8000 only; the admin
commands add psycopg2, and the figures of ``report --plot`` numpy and
matplotlib, imported only by the modules that need them.
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
