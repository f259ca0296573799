"""A whole run through the PBS model: events, one cycle per instant, latency, the scheduler timer."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.pbs.jobs import PbsJob
from replay.pbs.placement import Machine
from replay.pbs.policy import SchedulingPolicy
from replay.pbs.resources import Place, parse_select
from replay.pbs.run import Hooks, RealRuns, WithinSecond, simulate_run
from replay.pbs.vnodes import Vnode

STRICT = SchedulingPolicy(strict_ordering=True, backfill_fuzzy_s=0)


def job(index, ncpus, runtime, eligible=0, walltime=100, soft=None):
    return PbsJob(index, "{}.svr".format(index), "u", "g", "p", "workq", parse_select("1:ncpus={}".format(ncpus)),
                  Place(), walltime, soft, eligible, eligible, runtime)


def machine(ncpus=4):
    return Machine([Vnode("n0", "n0", (("ncpus", ncpus),))])


def starts(runs):
    return {name: run.start for name, run in sorted(runs.items())}


def test_jobs_start_when_resources_come_back():
    """A job that does not fit starts at the end of the one holding the cpus, in the cycle of that end."""
    runs = simulate_run(SchedulingPolicy(), machine(), [job(1, 4, 10), job(2, 4, 5, eligible=3)])
    assert starts(runs) == {"1.svr": 0, "2.svr": 10}
    assert runs["2.svr"].end == 15 and runs["2.svr"].allocation == (("n0", (("ncpus", 4),)),)


def test_latency_delays_the_reuse():
    """With a latency, freed resources are reused that many seconds after the end."""
    runs = simulate_run(SchedulingPolicy(), machine(), [job(1, 4, 10), job(2, 4, 5)], latency_s=2)
    assert starts(runs) == {"1.svr": 0, "2.svr": 12}


def test_an_end_and_a_release_at_one_instant_make_one_cycle():
    """At one instant the end is handled before the release: the released job starts on the freed cpus."""
    runs = simulate_run(STRICT, machine(), [job(1, 4, 10), job(2, 4, 5, eligible=10), job(3, 2, 5)])
    assert starts(runs)["2.svr"] == 10 and starts(runs)["3.svr"] == 15


def test_strict_ordering_backfills_in_front_of_the_top_job():
    """A short job runs ahead of the waiting top job when there is room and it ends before the top job starts."""
    jobs = [job(1, 4, 10, walltime=10), job(2, 4, 10), job(3, 2, 3, eligible=1, walltime=5)]
    assert starts(simulate_run(STRICT, machine(4), jobs)) == {"1.svr": 0, "2.svr": 10, "3.svr": 20}
    wide = [job(1, 2, 10, walltime=10), job(2, 4, 10), job(3, 2, 3, eligible=1, walltime=5)]
    assert starts(simulate_run(STRICT, machine(4), wide)) == {"1.svr": 0, "2.svr": 10, "3.svr": 1}


def test_a_job_that_can_never_run_ends_the_run():
    """A job larger than the machine is never started, and the timer does not tick forever."""
    runs = simulate_run(SchedulingPolicy(), machine(4), [job(1, 8, 10), job(2, 1, 10)], scheduler_iteration_s=60)
    assert starts(runs) == {"2.svr": 0}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 50), st.integers(0, 100)), min_size=1, max_size=12),
       st.integers(0, 3))
def test_every_job_runs_once_and_the_cpus_are_never_overused(specs, latency):
    """Every job fitting the machine starts once, not before its eligible time; at no instant more cpus in use."""
    jobs = [job(index, ncpus, runtime, eligible) for index, (ncpus, runtime, eligible) in enumerate(specs)]
    runs = simulate_run(STRICT, machine(4), jobs, latency_s=latency)
    assert sorted(runs) == sorted(j.name for j in jobs)
    assert all(runs[j.name].start >= j.eligible_time for j in jobs)
    for instant in {run.start for run in runs.values()}:
        busy = sum(j.chunks[0].amount("ncpus") for j in jobs
                   if runs[j.name].start <= instant < runs[j.name].end + latency)
        assert busy <= 4


class _Predicting(Hooks):
    """queuejob gives every job a soft walltime of 2 s; runjob raises it to 4; ends are recorded."""

    def __init__(self):
        self.ended_at = []

    def queued(self, job, now):
        return job._replace(soft_walltime_s=2)

    def started(self, job, now):
        return job._replace(soft_walltime_s=4)

    def ended(self, job, now):
        self.ended_at.append((job.name, now))


def test_hooks_set_soft_walltimes_the_scheduler_plans_with():
    """The soft walltime queuejob sets lets a short job backfill that its walltime alone would not."""
    jobs = [job(1, 2, 10, walltime=10), job(2, 4, 3), job(3, 2, 2, eligible=1, walltime=100)]
    assert starts(simulate_run(STRICT, machine(), jobs))["3.svr"] == 13
    hooks = _Predicting()
    runs = simulate_run(STRICT, machine(), jobs, hooks=hooks)
    assert starts(runs)["3.svr"] == 1
    assert sorted(hooks.ended_at) == sorted((name, run.end) for name, run in runs.items())


def test_an_exiting_job_frees_the_way_for_a_top_job():
    """Once a job's process has ended, the top job is planned one second later and no long job backfills."""
    jobs = [job(1, 4, 10, walltime=100), job(2, 2, 10, walltime=100), job(3, 7, 5, eligible=1),
            job(4, 2, 3, eligible=2, walltime=5)]
    plain = simulate_run(STRICT, machine(8), jobs)
    exiting = simulate_run(STRICT, machine(8), jobs, exiting_after_s={"1.svr": 1, "2.svr": 1})
    assert starts(plain)["4.svr"] == 2 and starts(exiting)["4.svr"] == 15 and starts(exiting)["3.svr"] == 10


def test_a_job_is_exiting_from_its_obit_when_given():
    """With ``obit_after_s`` the job is exiting once the server hears of its end, not from its process's end: until
    then the top job is planned on its walltime and the short job backfills."""
    jobs = [job(1, 4, 10, walltime=100), job(2, 2, 10, walltime=100), job(3, 7, 5, eligible=1),
            job(4, 2, 3, eligible=2, walltime=5)]
    ended = {"1.svr": 1, "2.svr": 1}
    heard_later = simulate_run(STRICT, machine(8), jobs, exiting_after_s=ended, obit_after_s={"1.svr": 3, "2.svr": 3})
    heard_then = simulate_run(STRICT, machine(8), jobs, exiting_after_s=ended, obit_after_s={"1.svr": 2, "2.svr": 2})
    assert starts(heard_later)["4.svr"] == 2 and starts(heard_then)["4.svr"] == 15


class _Reservations(Hooks):
    def __init__(self):
        self.seen = []

    def reserved(self, job, start, now):
        self.seen.append((job.name, start, now))


def test_hooks_hear_of_top_jobs():
    """Each cycle that makes a job a top job tells the hooks its estimated start."""
    hooks = _Reservations()
    simulate_run(STRICT, machine(), [job(1, 4, 10, walltime=10), job(2, 4, 5, eligible=1)], hooks=hooks)
    assert hooks.seen[0] == ("2.svr", 10, 1)


def test_a_cycle_per_release():
    """Per event, each release of an instant has its own cycle: the first released job takes the room before
    a later one the sort formula would put first; in one cycle the formula's order wins."""
    policy = SchedulingPolicy(job_sort_formula="ncpus")
    jobs = [job(0, 2, 10), job(1, 4, 10)]
    assert starts(simulate_run(policy, machine(4), jobs)) == {"0.svr": 10, "1.svr": 0}
    assert starts(simulate_run(policy, machine(4), jobs, cycle_per_event=True)) == {"0.svr": 0, "1.svr": 10}


def test_ends_of_different_seconds_have_their_own_cycles_earliest_first():
    """Per event, ends whose processes ended in different seconds have their own cycles, earliest first."""
    jobs = [job(0, 2, 10), job(1, 2, 10), job(2, 4, 5, eligible=1), job(3, 2, 5, eligible=1)]
    batched = simulate_run(SchedulingPolicy(), machine(4), jobs, exiting_after_s={"0.svr": 8, "1.svr": 9})
    per_event = simulate_run(SchedulingPolicy(), machine(4), jobs, exiting_after_s={"0.svr": 8, "1.svr": 9},
                             cycle_per_event=True)
    assert starts(batched)["2.svr"] == 10 and starts(per_event)["3.svr"] == 10 and starts(per_event)["2.svr"] == 15


def test_a_cycle_per_end_when_processes_ended_in_the_same_second():
    """Per event, each end has its own cycle even when the processes ended in the same second: the first end's
    cycle starts a narrow job in the room it freed, before the wide one the two ends together would fit (on a
    real 23.06.06 server, the ends of one second reached the scheduler one by one)."""
    jobs = [job(0, 2, 10), job(1, 2, 10), job(2, 4, 5, eligible=1), job(3, 2, 5, eligible=2)]
    exiting = {"0.svr": 9, "1.svr": 9}
    batched = simulate_run(SchedulingPolicy(), machine(4), jobs, exiting_after_s=exiting)
    per_event = simulate_run(SchedulingPolicy(), machine(4), jobs, exiting_after_s=exiting, cycle_per_event=True)
    assert starts(batched)["2.svr"] == 10 and starts(batched)["3.svr"] == 15
    assert starts(per_event)["3.svr"] == 10 and starts(per_event)["2.svr"] == 15


def test_ends_of_one_second_take_their_cycles_in_the_order_given():
    """Per event, ``end_order`` decides which of two processes ended in the same second is handled first: the
    room freed by that end alone goes to a queued job it fits, before the two ends together would fit the
    first job in the queue (without it, the job started first ends first)."""
    jobs = [job(0, 2, 10), job(1, 3, 10), job(2, 4, 5, eligible=1), job(3, 3, 5, eligible=2)]
    exiting = {"0.svr": 10, "1.svr": 10}
    start_order = simulate_run(SchedulingPolicy(), machine(5), jobs, exiting_after_s=exiting, cycle_per_event=True)
    log_order = simulate_run(SchedulingPolicy(), machine(5), jobs, exiting_after_s=exiting, cycle_per_event=True,
                             end_order={"0.svr": 8, "1.svr": 7})
    assert starts(start_order)["2.svr"] == 10 and starts(start_order)["3.svr"] == 15
    assert starts(log_order)["3.svr"] == 10 and starts(log_order)["2.svr"] == 15


def test_the_servers_order_can_put_an_end_before_a_release_of_its_second():
    """Per event, a release goes before the ends of its second, unless ``within_second`` has the server's log put
    the end first: then the end's cycle starts the queued job the freed cpus fit, and the released one waits."""
    jobs = [job(0, 2, 10), job(3, 1, 100), job(1, 3, 5, eligible=1), job(2, 1, 5, eligible=10)]
    order = WithinSecond(released={"2.svr": 5}, obit={}, finished={"0.svr": 3}, start={}, end={"0.svr": 10})
    releases_first = simulate_run(SchedulingPolicy(), machine(4), jobs, cycle_per_event=True)
    servers_order = simulate_run(SchedulingPolicy(), machine(4), jobs, cycle_per_event=True, within_second=order)
    assert starts(releases_first)["2.svr"] == 10 and starts(releases_first)["1.svr"] == 15
    assert starts(servers_order)["1.svr"] == 10 and starts(servers_order)["2.svr"] == 15
    elsewhere = order._replace(end={"0.svr": 11})  # the real end was in another second: its position does not apply
    assert starts(simulate_run(SchedulingPolicy(), machine(4), jobs, cycle_per_event=True,
                               within_second=elsewhere)) == starts(releases_first)


def test_ends_the_server_took_in_one_cycle_share_it():
    """With ``within_second``, two ends with no request for a cycle between them in the server's log are one cycle:
    the two together fit the wide job first in the queue; with a request after each, each end has its own."""
    jobs = [job(0, 2, 10), job(1, 2, 10), job(2, 4, 5, eligible=1), job(3, 2, 5, eligible=2)]
    exiting = {"0.svr": 9, "1.svr": 9}
    order = WithinSecond(released={}, obit={}, finished={"0.svr": 1, "1.svr": 3}, start={},
                         end={"0.svr": 10, "1.svr": 10}, cycles=(4,))
    one = simulate_run(SchedulingPolicy(), machine(4), jobs, exiting_after_s=exiting, cycle_per_event=True,
                       within_second=order)
    each = simulate_run(SchedulingPolicy(), machine(4), jobs, exiting_after_s=exiting, cycle_per_event=True,
                        within_second=order._replace(cycles=(2, 4)))
    assert starts(one)["2.svr"] == 10 and starts(one)["3.svr"] == 15
    assert starts(each)["3.svr"] == 10 and starts(each)["2.svr"] == 15


def test_a_job_is_exiting_from_its_obit_in_the_servers_log():
    """With ``within_second``, a job whose process has ended is exiting only in the cycles after its obit: before
    it, the top job is planned at the running jobs' walltimes and a short job backfills."""
    jobs = [job(1, 4, 10, walltime=100), job(2, 2, 10, walltime=100), job(3, 7, 5, eligible=1),
            job(4, 2, 3, eligible=2, walltime=5)]
    exiting = {"1.svr": 1, "2.svr": 1}
    late = WithinSecond(released={"3.svr": 5, "4.svr": 10}, obit={"1.svr": 20, "2.svr": 21}, finished={},
                        start={"1.svr": 0, "2.svr": 0}, end={})
    early = late._replace(obit={"1.svr": 1, "2.svr": 2})
    runs = [simulate_run(STRICT, machine(8), jobs, exiting_after_s=exiting, cycle_per_event=True, within_second=order)
            for order in (late, early)]
    assert starts(runs[0])["4.svr"] == 2 and starts(runs[1])["4.svr"] == 15


def test_starts_of_an_earlier_cycle_of_the_instant_are_seen_a_second_later():
    """Per event, a job started by an earlier cycle of the same instant ends, as PBS sees it, a second later:
    a later top job is planned then, and a job ending at that second backfills."""
    jobs = [job(0, 2, 10, walltime=10), job(1, 2, 3, eligible=10, walltime=3), job(2, 4, 5, eligible=10),
            job(3, 2, 4, eligible=10, walltime=4)]
    runs = simulate_run(STRICT, machine(4), jobs, cycle_per_event=True)
    assert starts(runs)["1.svr"] == 10 and starts(runs)["3.svr"] == 10


def test_a_start_confirmed_before_the_event_of_a_later_cycle_is_planned_from_itself():
    """With ``within_second``, a job an earlier cycle of the instant started at its real start is planned from that
    start in a later cycle asked for by an event its confirmation came before (its S record before that event's
    record): the top job is planned a second earlier and the job ending at that second no longer backfills; with
    the confirmation after the event, it is still seen a second later."""
    jobs = [job(0, 2, 10, walltime=10), job(1, 2, 3, eligible=10, walltime=3), job(2, 4, 5, eligible=10),
            job(3, 2, 4, eligible=10, walltime=4)]
    order = WithinSecond(released={"1.svr": 1, "2.svr": 2, "3.svr": 3}, obit={}, finished={"0.svr": 5},
                         start={"1.svr": 10}, end={"0.svr": 10}, confirmed={"1.svr": 4})
    confirmed = simulate_run(STRICT, machine(4), jobs, cycle_per_event=True, within_second=order)
    later = simulate_run(STRICT, machine(4), jobs, cycle_per_event=True,
                         within_second=order._replace(confirmed={"1.svr": 6}))
    assert starts(confirmed)["1.svr"] == 10 and starts(confirmed)["3.svr"] > 10
    assert starts(later)["3.svr"] == 10
    elsewhere = order._replace(start={"1.svr": 11})  # the job really started in another second: it does not apply
    assert starts(simulate_run(STRICT, machine(4), jobs, cycle_per_event=True, within_second=elsewhere)) == \
        starts(later)


def test_a_job_at_its_real_start_is_charged_what_its_moms_updates_carried():
    """With ``within_second`` holding the MoMs' updates from the server's log, a job that started at its real start
    is charged what its last update before the cycle carried, not what the MoM model gives. ana's job 0 runs from
    0 beside carl's; ana's 1 and bob's 2 wait for carl's end at 20. The model has the MoM measure at 10 (PBS's
    default polls), seen at 12: ana is charged 20 and bob goes first. Updates that reached the server only at 25
    charge ana nothing yet, and her job, submitted first, goes first; an update received at 12 (measured at 10)
    charges her as the model does."""
    from replay.pbs.fairshare import Fairshare
    from replay.pbs.policy import FairsharePolicy

    def user_job(index, user, runtime, eligible):
        return job(index, 2, runtime, eligible)._replace(user=user)

    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10))
    jobs = [user_job(0, "ana", 100, 0), user_job(3, "carl", 20, 0), user_job(1, "ana", 5, 5),
            user_job(2, "bob", 5, 6)]

    def run(updates):
        order = WithinSecond(released={}, obit={}, finished={}, start={"0.svr": 0, "3.svr": 0}, end={},
                             updates=updates)
        return starts(simulate_run(policy, machine(4), jobs, fairshare=Fairshare(policy.fairshare),
                                   cycle_per_event=True, within_second=order))

    assert run({})["2.svr"] == 20 and run({})["1.svr"] == 25
    assert run({"0.svr": [(25, 50, 23)]})["1.svr"] == 20
    assert run({"0.svr": [(12, 40, 10), (25, 50, 23)]})["2.svr"] == 20


def test_a_release_and_an_end_of_one_second_go_in_the_order_that_starts_what_the_server_started():
    """Released at the second a job ends, a short job backfills before the top job if its release is taken first;
    given the real runs, the replay takes the end first when only that order starts what the server started then,
    and keeps the releases first when the state at that second is not the server's."""
    jobs = [job(1, 3, 10, walltime=100), job(2, 4, 5, eligible=1), job(3, 1, 1, eligible=10, walltime=1)]
    ended = dict(exiting_after_s={"1.svr": 10}, obit_after_s={"1.svr": 10}, cycle_per_event=True)
    assert starts(simulate_run(STRICT, machine(4), jobs, **ended)) == {"1.svr": 0, "2.svr": 11, "3.svr": 10}
    end_first = {"1.svr": (0, 10, ()), "2.svr": (10, 15, ()), "3.svr": (15, 16, ())}
    assert starts(simulate_run(STRICT, machine(4), jobs, real_runs=RealRuns(end_first), **ended)) == {
        "1.svr": 0, "2.svr": 10, "3.svr": 15}
    release_first = {"1.svr": (0, 10, ()), "2.svr": (11, 16, ()), "3.svr": (10, 11, ())}
    other_state = dict(end_first, **{"1.svr": (0, 9, ())})  # the server had ended 1 a second before: not its state
    for real in (release_first, other_state):
        assert starts(simulate_run(STRICT, machine(4), jobs, real_runs=RealRuns(real), **ended))["3.svr"] == 10


def test_a_job_ending_later_in_the_second_may_be_read_as_not_yet_exiting():
    """Two jobs end in one second: in the first end's cycle the other is exiting (the top job planned a second
    later, the short job waits) unless the server's starts of that second say it had not yet heard of that end."""
    jobs = [job(1, 2, 10, walltime=100), job(2, 2, 10, walltime=100), job(3, 4, 5, eligible=1),
            job(4, 2, 5, eligible=2, walltime=5)]
    ended = dict(exiting_after_s={"1.svr": 10, "2.svr": 10}, obit_after_s={"1.svr": 10, "2.svr": 10},
                 cycle_per_event=True, end_order={"1.svr": 1, "2.svr": 2})
    assert starts(simulate_run(STRICT, machine(4), jobs, **ended)) == {"1.svr": 0, "2.svr": 0, "3.svr": 10, "4.svr": 15}
    heard_later = RealRuns({"1.svr": (0, 10, ()), "2.svr": (0, 10, ()), "3.svr": (15, 20, ()), "4.svr": (10, 15, ())})
    assert starts(simulate_run(STRICT, machine(4), jobs, real_runs=heard_later, **ended)) == {
        "1.svr": 0, "2.svr": 0, "3.svr": 15, "4.svr": 10}
    assert (heard_later.seconds, heard_later.reordered) == (1, 1)


def test_an_end_placed_by_its_e_record_plans_the_starts_confirmed_before_it_from_themselves():
    """From an accounting log alone (``WithinSecond.recorded_end``), the cycle of an end plans a job an earlier
    cycle of the second started from its start when its S record comes before that end's E record: the top job is
    planned a second earlier and the job ending at that second no longer backfills. With the S record after the E
    record, or no E record placed, the job is seen a second later and the short job backfills."""
    jobs = [job(0, 2, 10, walltime=10), job(5, 2, 10, walltime=10), job(1, 2, 3, eligible=1, walltime=3),
            job(2, 4, 5, eligible=2), job(3, 2, 4, eligible=3, walltime=4)]
    ended = dict(exiting_after_s={"0.svr": 10, "5.svr": 10}, obit_after_s={"0.svr": 10, "5.svr": 10},
                 cycle_per_event=True, end_order={"0.svr": 1, "5.svr": 3})
    order = WithinSecond(released={}, obit={}, finished={}, start={"1.svr": 10}, end={}, confirmed={"1.svr": 2},
                         recorded_end={"0.svr": (10, 1), "5.svr": (10, 3)})
    confirmed = starts(simulate_run(STRICT, machine(4), jobs, within_second=order, **ended))
    assert confirmed["1.svr"] == 10 and confirmed["3.svr"] > 10
    for unknown in (order._replace(confirmed={"1.svr": 4}), order._replace(recorded_end={}), None):
        assert starts(simulate_run(STRICT, machine(4), jobs, within_second=unknown, **ended))["3.svr"] == 10


def test_the_ends_of_one_second_may_be_read_as_one_cycle():
    """Two jobs end in one second: with a cycle for each end, the first end's cycle backfills a short job in front
    of the wide top job; given the real runs, where the server started the wide job then, the replay reads both
    ends as taken in one cycle."""
    jobs = [job(1, 2, 10, walltime=100), job(2, 2, 10, walltime=100), job(3, 4, 5, eligible=1),
            job(4, 2, 1, eligible=2, walltime=1)]
    ended = dict(exiting_after_s={"1.svr": 10, "2.svr": 10}, obit_after_s={"1.svr": 10, "2.svr": 10},
                 cycle_per_event=True, end_order={"1.svr": 1, "2.svr": 2})
    assert starts(simulate_run(STRICT, machine(4), jobs, **ended)) == {"1.svr": 0, "2.svr": 0, "3.svr": 11, "4.svr": 10}
    one_cycle = RealRuns({"1.svr": (0, 10, ()), "2.svr": (0, 10, ()), "3.svr": (10, 15, ()), "4.svr": (15, 16, ())})
    assert starts(simulate_run(STRICT, machine(4), jobs, real_runs=one_cycle, **ended)) == {
        "1.svr": 0, "2.svr": 0, "3.svr": 10, "4.svr": 15}
    assert (one_cycle.seconds, one_cycle.reordered) == (1, 1)


def test_a_job_whose_process_ended_before_its_e_record_may_be_read_as_exiting_already():
    """A job's process ends a second before its E record, in the second a held job is released: the replay takes
    it as still running there (the server heard of most ends with their E record), so the top job is planned at
    its walltime and the released job backfills; given the real runs, where the server did not start the released
    job then, it reads the job as exiting already, as the server had heard of that end."""
    jobs = [job(1, 2, 11, walltime=100), job(2, 4, 5, eligible=1), job(3, 2, 5, eligible=10, walltime=5)]
    ended = dict(exiting_after_s={"1.svr": 10}, obit_after_s={"1.svr": 11}, cycle_per_event=True)
    assert starts(simulate_run(STRICT, machine(4), jobs, **ended)) == {"1.svr": 0, "2.svr": 15, "3.svr": 10}
    heard_early = RealRuns({"1.svr": (0, 11, ()), "2.svr": (11, 16, ()), "3.svr": (16, 21, ())})
    assert starts(simulate_run(STRICT, machine(4), jobs, real_runs=heard_early, **ended)) == {
        "1.svr": 0, "2.svr": 11, "3.svr": 16}
    assert (heard_early.seconds, heard_early.reordered) == (1, 1)


def test_a_release_whose_job_the_server_started_the_next_second_may_be_read_as_taken_then():
    """A job released when cores are free starts in its release's cycle; given the real runs, where the server
    started it only in the next second, the replay reads its release as taken by a cycle of that second, before
    that second's own releases."""
    jobs = [job(1, 2, 100), job(2, 2, 5, eligible=5), job(3, 2, 5, eligible=6)]
    assert starts(simulate_run(STRICT, machine(4), jobs, cycle_per_event=True)) == {"1.svr": 0, "2.svr": 5, "3.svr": 10}
    next_second = RealRuns({"1.svr": (0, 100, ()), "2.svr": (6, 11, ()), "3.svr": (11, 16, ())})
    assert starts(simulate_run(STRICT, machine(4), jobs, cycle_per_event=True, real_runs=next_second)) == {
        "1.svr": 0, "2.svr": 6, "3.svr": 11}
    assert (next_second.seconds, next_second.reordered) == (1, 1)


def test_real_runs_are_not_read_with_hooks():
    """An instant read several ways would call the hooks once for each: refused."""
    with pytest.raises(ValueError):
        simulate_run(STRICT, machine(4), [job(1, 1, 1)], hooks=Hooks(), real_runs=RealRuns({}), cycle_per_event=True)
