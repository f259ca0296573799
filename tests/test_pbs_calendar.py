"""The calendar PBS plans with, and how it finds a top job's start (calc_run_time, opt_backfill_fuzzy)."""

from replay.pbs.calendar import Calendar, Simulation, estimate_start
from replay.pbs.cycle import Running
from replay.pbs.jobs import PbsJob
from replay.pbs.placement import Machine
from replay.pbs.resources import parse_place, parse_select
from replay.pbs.vnodes import Vnode


def job(index, ncpus=4, walltime=100, soft=None):
    return PbsJob(index, "{}.svr".format(index), "u", "g", "p", "workq", parse_select("1:ncpus={}".format(ncpus)),
                  parse_place("free"), walltime, soft, 0, 0)


def on(ncpus, vnode="a"):
    return ((vnode, (("ncpus", ncpus),)),)


MACHINE = Machine([Vnode("a", "a", (("ncpus", 4),))])


def simulation(running, now):
    used = {"a": {"ncpus": sum(item.job.chunks[0].amount("ncpus") for item in running)}} if running else {}
    counts = {"a": len(running)} if running else {}
    return Simulation(MACHINE, now, used, counts, set(), [item.job for item in running],
                      Calendar.of_running(running, now))


def place_only(sim, candidate):
    return sim.place(candidate)


def test_running_jobs_end_at_their_planned_end():
    """A running job ends at start + soft walltime in the calendar, extended once passed."""
    calendar = Calendar.of_running([Running(job(1, soft=30), 0, on(4))], now=45)
    assert [(event.time, event.starts) for event in calendar.events] == [(60, False)]


def test_ends_before_starts_at_one_instant():
    """At one instant the calendar carries out ends before starts."""
    calendar = Calendar()
    calendar.add(50, True, job(1), on(4))
    calendar.add(50, False, job(2), on(4))
    assert [event.starts for event in calendar.events] == [False, True]


def test_start_without_fuzzy_is_the_end():
    """With opt_backfill_fuzzy off, a top job starts when the job in its way ends."""
    sim = simulation([Running(job(1, walltime=130), 0, on(4))], now=10)
    assert estimate_start(sim, job(2), 0, place_only)[0] == 130


def test_start_is_the_last_event_in_the_window():
    """With a 60 s window the start is the last event carried out up to the boundary, not the boundary."""
    running = [Running(job(1, ncpus=2, walltime=70), 0, on(2)), Running(job(2, ncpus=2, walltime=110), 0, on(2))]
    sim = simulation(running, now=10)
    assert estimate_start(sim, job(3), 60, place_only)[0] == 110


def test_window_boundary_at_a_multiple_goes_to_the_next():
    """An event at a multiple of the window rounds up to the next multiple: both ends are in one window."""
    running = [Running(job(1, ncpus=2, walltime=120), 0, on(2)), Running(job(2, ncpus=2, walltime=180), 0, on(2))]
    sim = simulation(running, now=10)
    assert estimate_start(sim, job(3, ncpus=2), 60, place_only)[0] == 180


def test_fuzzy_can_delay_the_estimate():
    """A job that fits after the first end is still estimated at the last end in that window."""
    running = [Running(job(1, ncpus=2, walltime=70), 0, on(2)), Running(job(2, ncpus=2, walltime=110), 0, on(2))]
    assert estimate_start(simulation(running, 10), job(3, ncpus=2), 60, place_only)[0] == 110
    assert estimate_start(simulation(running, 10), job(3, ncpus=2), 0, place_only)[0] == 70


def test_no_start_when_it_never_fits():
    """When every event is carried out and the job still does not fit, there is no start."""
    sim = simulation([Running(job(1), 0, on(4))], now=10)
    assert estimate_start(sim, job(2, ncpus=8), 0, place_only) is None


def test_fits_now():
    """A job that fits at once starts now, on the vnodes found."""
    sim = simulation([], now=10)
    assert estimate_start(sim, job(2), 60, place_only) == (10, on(4))


def test_simulation_leaves_the_calendar_alone():
    """Walking a simulation forward changes neither the calendar it copied nor its events."""
    running = [Running(job(1), 0, on(4))]
    calendar = Calendar.of_running(running, 10)
    sim = Simulation(MACHINE, 10, {"a": {"ncpus": 4}}, {"a": 1}, set(), [running[0].job], calendar)
    estimate_start(sim, job(2), 0, place_only)
    assert calendar.done == 0 and len(calendar.events) == 1


def test_vnodes_keep_their_order_through_simulated_ends():
    """node_sort_key ncpus LOW unused: PBS sorts its vnodes again when a job runs, not when one ends, so
    a top job's estimate searches them in the order of now (b, the fuller, first), not of after the ends."""
    from replay.pbs.policy import SortKey
    machine = Machine([Vnode("a", "a", (("ncpus", 4),)), Vnode("b", "b", (("ncpus", 4),))],
                      node_sort_key=(SortKey("ncpus", False, "unused"),))
    running = [Running(job(1, ncpus=2, walltime=50), 0, on(2, "a")),
               Running(job(2, ncpus=3, walltime=55), 0, on(3, "b"))]
    sim = Simulation(machine, 10, {"a": {"ncpus": 2}, "b": {"ncpus": 3}}, {"a": 1, "b": 1}, set(),
                     [item.job for item in running], Calendar.of_running(running, 10))
    assert estimate_start(sim, job(3, ncpus=4), 60, place_only) == (55, on(4, "b"))
    assert sim.machine.place(job(3, ncpus=4), sim.used, set()) == on(4, "a")  # sorted after the ends


def test_host_sets_sorted_again_after_simulated_ends():
    """node_sort_key ncpus LOW unused, the vnodes of one host: PBS searches a host's vnodes in its host set's
    order, which it sorts again at the first search after an end (not when a job runs), so the estimate
    searches them in the order after the ends (both empty: server order, h[0] first). Recorded on the real
    server: a top job's estimate on the emptied vnodes left room where the order of now would not."""
    from replay.pbs.policy import SortKey
    machine = Machine([Vnode("h[0]", "h", (("ncpus", 4),)), Vnode("h[1]", "h", (("ncpus", 4),))],
                      node_sort_key=(SortKey("ncpus", False, "unused"),))
    running = [Running(job(1, ncpus=2, walltime=50), 0, on(2, "h[0]")),
               Running(job(2, ncpus=3, walltime=55), 0, on(3, "h[1]"))]
    used = {"h[0]": {"ncpus": 2}, "h[1]": {"ncpus": 3}}
    sim = Simulation(machine, 10, used, {"h[0]": 1, "h[1]": 1}, set(), [item.job for item in running],
                     Calendar.of_running(running, 10), {vnode: dict(held) for vnode, held in used.items()})
    assert estimate_start(sim, job(3, ncpus=4), 60, place_only) == (55, on(4, "h[0]"))
    before = Simulation(machine, 10, used, {"h[0]": 1, "h[1]": 1}, set(), [item.job for item in running],
                        Calendar.of_running(running, 10))
    assert estimate_start(before, job(3, ncpus=4), 60, place_only) == (55, on(4, "h[1]"))


def test_host_sets_tied_keep_the_order_they_were_made_in():
    """Hosts that tie on node_sort_key keep the order PBS made its host sets in, from its vnodes as sorted
    when the cycle began (b, the fuller then, first with ncpus LOW unused), not the server's order."""
    from replay.pbs.policy import SortKey
    machine = Machine([Vnode("a", "a", (("ncpus", 4),), in_multivnode_host=True),
                       Vnode("b", "b", (("ncpus", 4),), in_multivnode_host=True)],
                      node_sort_key=(SortKey("ncpus", False, "unused"),))
    began = {"a": {"ncpus": 1}, "b": {"ncpus": 3}}
    assert machine.place(job(3, ncpus=4), {}, set(), hosts_sorted_by={}, hosts_created_by=began) == on(4, "b")
    assert machine.place(job(3, ncpus=4), {}, set(), hosts_sorted_by={}) == on(4, "a")
