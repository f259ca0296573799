"""The replay's own errors. The CLI prints them as one line and exits non-zero."""

__all__ = ["ReplayError", "TraceError"]


class ReplayError(Exception):
    """Base of the errors the replay raises on purpose."""


class TraceError(ReplayError, ValueError):
    """A trace cannot be used: missing file, unknown format, or no valid job in it."""
