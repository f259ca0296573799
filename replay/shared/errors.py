"""The replay's own errors, under the project's one root (``predictor.errors.SoftwalltimeError``): what a user
can get wrong. The CLI prints them as one line and exits 2; any other exception is a bug and keeps its
traceback. A bad value on the command line or in a grid file is ``predictor.errors.UsageError``."""

from predictor.errors import SoftwalltimeError

__all__ = ["ReplayError", "TraceError", "SiteError"]


class ReplayError(SoftwalltimeError):
    """Base of the errors the replay raises on purpose."""


class TraceError(ReplayError, ValueError):
    """A trace cannot be used: missing file, unknown format, or no valid job in it."""


class SiteError(ReplayError, ValueError):
    """A site folder (``--site``) cannot be used: the message names the file, the line and the setting."""
