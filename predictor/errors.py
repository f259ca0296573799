"""Every error the project raises on purpose, under one root. Messages never contain a DSN.

``SoftwalltimeError`` is what both command lines (``python -m predictor``,
``python -m replay``) print as one line with exit status 2: a user's mistake
or the world's refusal, never a bug. ``PredictorError`` is the predictors',
the hooks' and the admin commands' branch; ``replay.shared.errors`` holds the
replay's.
"""

__all__ = ["SoftwalltimeError", "UsageError", "OutputError", "PredictorError", "ConfigError", "AccountingError",
           "DatabaseError", "DeadlineExceeded"]


class SoftwalltimeError(Exception):
    """Root of the errors raised on purpose."""


class UsageError(SoftwalltimeError, ValueError):
    """A value given on a command line or in a file it names cannot be used: the message names the option."""


class OutputError(SoftwalltimeError):
    """An output file could not be written (a full disk, a closed device); the message names option and path."""


class PredictorError(SoftwalltimeError):
    """Base of the predictors', the hooks' and the admin commands' errors."""


class ConfigError(PredictorError, ValueError):
    """A setting is missing or has a bad value; the message names the setting."""


class AccountingError(PredictorError, ValueError):
    """One accounting-log line is malformed; ``field`` names the culprit (or None)."""

    def __init__(self, reason, field=None):
        super().__init__(reason if field is None else "field {}: {}".format(field, reason))
        self.reason = reason
        self.field = field


class DatabaseError(PredictorError):
    """The history database could not answer (down, refused, denied, failed query)."""


class DeadlineExceeded(DatabaseError, TimeoutError):
    """The database did not answer within the time budget."""
