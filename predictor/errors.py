"""Every error the package raises on purpose. Messages never contain a DSN."""

__all__ = ["PredictorError", "ConfigError", "AccountingError", "DatabaseError", "DeadlineExceeded"]


class PredictorError(Exception):
    """Base of this package's errors."""


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
