"""How ``ingest --follow`` waits for a database that stopped answering: capped backoff, two lines per outage.

A follower is often the only feed of the history, so it never gives up: a
database restart, a long maintenance stop, a full disk or a revoked grant
are all waited out. The first retry is at once (a connection dropped by a
restart that is already over needs nothing more, and is not reported); then
the pause doubles from ``FIRST_PAUSE_S`` up to ``MAX_PAUSE_S``. One warning says
the database is lost (with the cause), one that it is back (with how long it
was away); never one per retry.
"""

import time

__all__ = ["Outage"]

FIRST_PAUSE_S = 0.5
MAX_PAUSE_S = 10.0


class Outage:
    """``failed(err)`` after each failed pass gives the pause before the next; ``over()`` after a good one."""

    def __init__(self, warn, clock=time.monotonic):
        self._warn = warn
        self._clock = clock
        self.failures = 0
        self._since = None

    def failed(self, err):
        """Count a failure; the seconds to wait before trying again."""
        if self.failures == 0:
            self._since = self._clock()
        self.failures += 1
        if self.failures == 1:
            return 0.0
        if self.failures == 2:
            self._warn("{}; retrying (every {:g} s at most) until it answers".format(err, MAX_PAUSE_S))
        return min(MAX_PAUSE_S, FIRST_PAUSE_S * 2 ** (self.failures - 2))

    def over(self):
        """A pass went through: say so if the database had been reported lost."""
        if self.failures >= 2:
            self._warn("database back after {:.0f} s: catching up from where each file stopped".format(
                self._clock() - self._since))
        self.failures = 0

