"""The replay's own errors: what a user can get wrong. The CLI prints them as one line and exits 2;
any other exception is a bug and keeps its traceback."""

__all__ = ["ReplayError", "TraceError", "UsageError"]


class ReplayError(Exception):
    """Base of the errors the replay raises on purpose."""


class TraceError(ReplayError, ValueError):
    """A trace cannot be used: missing file, unknown format, or no valid job in it."""


class UsageError(ReplayError, ValueError):
    """A value given on the command line or in a grid file cannot be used: an unknown predictor, a bad parameter."""
