"""predictor.ingest.outage: the follower's pauses after database failures and its two lines per outage."""

from predictor.errors import DatabaseError
from predictor.ingest.outage import MAX_PAUSE_S, Outage


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_pauses_start_at_once_then_double_up_to_the_cap():
    """The first retry is immediate, then 0.5 s doubling, never above the cap."""
    outage = Outage(lambda message: None, Clock())
    pauses = [outage.failed(DatabaseError("database: down")) for _ in range(9)]
    assert pauses == [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, MAX_PAUSE_S, MAX_PAUSE_S, MAX_PAUSE_S]


def test_one_line_when_lost_and_one_when_back_whatever_the_retries():
    """A long outage is two lines: the cause when lost, the duration when back."""
    said, clock = [], Clock()
    outage = Outage(said.append, clock)
    for _ in range(50):
        outage.failed(DatabaseError("database: connection refused"))
        clock.now += 10
    outage.over()
    outage.over()
    assert len(said) == 2
    assert said[0].startswith("database: connection refused; retrying") and said[1].startswith(
        "database back after 500 s")


def test_a_failure_that_the_immediate_retry_cures_is_not_reported():
    """A connection dropped by a restart that is already over: reconnected at once, nothing said."""
    said = []
    outage = Outage(said.append, Clock())
    outage.failed(DatabaseError("database: terminating connection due to administrator command"))
    outage.over()
    assert said == []


def test_each_outage_is_reported_anew():
    """Two outages, four lines; the pauses start again from the beginning."""
    said = []
    outage = Outage(said.append, Clock())
    for _ in range(2):
        assert [outage.failed(DatabaseError("database: down")) for _ in range(3)] == [0.0, 0.5, 1.0]
        outage.over()
    assert len(said) == 4
