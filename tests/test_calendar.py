"""The calendar: running jobs' planned ends, reservations and the backfill test."""

from replay.simulation.calendar import Calendar


def busy_calendar():
    """10 cores; jobs planned to end at 100 (4 cores) and 200 (4 cores); 2 free now (t=0)."""
    calendar = Calendar(10)
    calendar.add("a", 100, 4)
    calendar.add("b", 200, 4)
    calendar.begin_cycle(0)
    return calendar


def test_free_at_counts_jobs_planned_to_end_by_then():
    """free(t) grows at each planned end."""
    calendar = busy_calendar()
    assert [calendar.free_at(t) for t in (0, 99, 100, 200)] == [2, 2, 6, 10]


def test_first_reservation_is_when_enough_cores_are_free():
    """A 5-core top job is reserved at 100, leaving 1 core spare there."""
    calendar = busy_calendar()
    assert calendar.reserve(5, 50) == 100
    assert calendar.dips == [[100, 1]]


def test_fits_in_front_of_the_reservation_or_in_spare_cores():
    """With the 5-core reservation at 100: 2 cores fit until 100; 1 core fits for ever; 2 cores past 100 do not."""
    calendar = busy_calendar()
    calendar.reserve(5, 50)
    assert calendar.fits(2, 100) and calendar.fits(1, 10 ** 6)
    assert not calendar.fits(2, 101) and not calendar.fits(3, 10)


def test_starting_a_job_takes_its_cores_from_spanned_dips():
    """A 1-core job to 150 uses the spare core at the reservation."""
    calendar = busy_calendar()
    calendar.reserve(5, 50)
    calendar.start("c", 1, 150)
    assert calendar.free == 1 and calendar.dips == [[100, 0]]
    assert not calendar.fits(1, 101)


def test_start_says_when_it_takes_cores_a_reservation_counted_on():
    """The spare core at the reservation goes to one job to 150; a second one invades it: start returns True."""
    calendar = busy_calendar()
    calendar.reserve(5, 50)
    assert calendar.start("c", 1, 150) is False
    assert calendar.start("d", 1, 150) is True and calendar.dips == [[100, -1]]


def test_second_reservation_queues_behind_the_first():
    """An 8-core job cannot overlap the 5-core reservation [100, 150): it gets 200."""
    calendar = busy_calendar()
    calendar.reserve(5, 50)
    assert calendar.reserve(8, 50) == 200


def test_second_reservation_may_share_spare_cores():
    """A 1-core top job gets the cores c frees at 10: one stays spare across the first reservation."""
    calendar = busy_calendar()
    calendar.reserve(5, 50)
    calendar.start("c", 2, 10)  # takes the 2 cores free now, until 10
    assert calendar.reserve(1, 500) == 10
    assert calendar.reserve(1, 500) == 150  # the spare core at 100 is taken: after the 5-core reservation


def test_remove_and_move_keep_the_profile_sorted():
    """Ends and plan changes keep planned ends in order."""
    calendar = busy_calendar()
    calendar.move("a", 300)
    assert calendar.end_times == [200, 300] and calendar.end_jobs == ["b", "a"]
    calendar.remove("b")
    assert calendar.free == 6 and calendar.end_jobs == ["a"]


def test_replan_expired_moves_only_jobs_planned_to_have_ended():
    """At 100, a (planned 100) is re-planned; b is not."""
    calendar = busy_calendar()
    assert calendar.replan_expired(100, lambda job: 250) == 1
    assert calendar.end_jobs == ["b", "a"] and calendar.planned_end["a"] == 250
