"""The scheduling cycle on its own: top jobs, backfilling and the incremental walk."""

from replay.simulation.calendar import Calendar
from replay.simulation.policies import POLICIES, QueuedJob
from replay.simulation.scheduler import Scheduler


def queued(index, planned, width):
    return QueuedJob(index, index, planned, width, planned)


def scheduler(depth=1, strict=True):
    calendar = Calendar(10)
    calendar.add("running", 100, 6)
    return Scheduler(calendar, POLICIES["fifo"], strict, depth)


def test_job_that_fits_starts():
    """A 4-core job starts on the 4 free cores."""
    sched = scheduler()
    sched.submit(queued(0, 50, 4), 0)
    assert [job.index for job in sched.cycle(0)] == [0]


def test_blocked_job_becomes_top_job_with_reservation():
    """An 8-core job is reserved at 100."""
    sched = scheduler()
    sched.submit(queued(0, 50, 8), 0)
    assert sched.cycle(0) == [] and sched.reservations == {0: 100}


def test_job_queued_later_is_walked_without_rewalking_the_queue():
    """With nothing changed, a new job is judged against the kept reservation."""
    sched = scheduler()
    sched.submit(queued(0, 50, 8), 0)
    sched.cycle(0)
    sched.submit(queued(1, 90, 4), 5)
    assert [job.index for job in sched.cycle(5)] == [1]  # ends at 95, before the reservation


def test_kept_reservation_still_refuses_a_job_too_long_for_it():
    """Same, but ending at 106: it would delay the top job."""
    sched = scheduler()
    sched.submit(queued(0, 50, 8), 0)
    sched.cycle(0)
    sched.submit(queued(1, 101, 4), 5)
    assert sched.cycle(5) == []


def test_depth_zero_blocks_everything_behind():
    """backfill_depth 0: nothing passes the blocked job."""
    sched = scheduler(depth=0)
    sched.submit(queued(0, 50, 8), 0)
    sched.submit(queued(1, 5, 1), 0)
    assert sched.cycle(0) == [] and sched.reservations == {}


def test_negative_depth_is_refused():
    """backfill_depth < 0 is a configuration error."""
    try:
        scheduler(depth=-1)
    except ValueError as err:
        assert "backfill_depth" in str(err)
    else:
        raise AssertionError("expected ValueError")
