"""The simulation engine: golden micro-traces computed by hand, and properties on random traces."""

from functools import partial
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from reference_scheduler import reference_schedule
from strategies import classified_traces, scheduler_settings, simulated_predictors, simulation_cases, small_traces

from replay.classification import SizeClassifier
from replay.shared.predictors import PREDICTORS
from replay.simulation.cluster import Cluster
from replay.simulation.engine import Kind, SchedulerSettings, simulate_jobs
from replay.simulation.policies import POLICIES
from replay.traces.trace import Job

NO_TIMER = SchedulerSettings(cycle_interval_s=0)


def job(job_id, submit, runtime, walltime, ncpus, soft=None, user="alice"):
    return Job(job_id, user, submit, runtime, walltime, ncpus, soft_walltime_s=soft)


def schedule(jobs, cores=10, predictor="recorded", settings=NO_TIMER):
    """``{job_id: ScheduledJob}``."""
    return {done.job.job_id: done for done in simulate_jobs(jobs, PREDICTORS[predictor], Cluster.of_cores(cores),
                                                             settings)}


def times(result):
    return {job_id: (done.start_time, done.end_time) for job_id, done in result.items()}


def test_same_instant_order_is_end_then_submit_then_cycle():
    """Kinds order same-instant events: ends free cores before submissions, both before the cycle."""
    assert Kind.END < Kind.SUBMIT < Kind.CYCLE


def test_easy_one_top_job_and_a_backfilled_job():
    """EASY: b waits as the top job reserved at a's end; c backfills in front; d waits behind b."""
    result = schedule([job("a", 0, 100, 100, 6), job("b", 1, 50, 100, 8), job("c", 2, 50, 60, 4),
                       job("d", 3, 50, 200, 4)], predictor="user")
    assert times(result) == {"a": (0, 100), "b": (100, 150), "c": (2, 52), "d": (150, 200)}
    assert result["b"].reservation_time == 100
    assert result["c"].reservation_time is None
    assert result["d"].reservation_time == 200  # top job once b ran: after b's walltime


def test_several_top_jobs_queue_back_to_back_on_soft_walltimes():
    """backfill_depth 2: two top jobs reserved one after the other at their soft walltimes, not walltimes."""
    jobs = [job("r", 0, 100, 1000, 10, soft=100), job("t1", 1, 50, 1000, 10, soft=50),
            job("t2", 2, 50, 1000, 10, soft=50), job("t3", 3, 50, 1000, 10, soft=50)]
    result = schedule(jobs, settings=NO_TIMER._replace(backfill_depth=2))
    assert {name: result[name].reservation_time for name in ("t1", "t2", "t3")} == {"t1": 100, "t2": 150, "t3": 200}
    assert times(result) == {"r": (0, 100), "t1": (100, 150), "t2": (150, 200), "t3": (200, 250)}


def test_depth_one_reserves_only_the_first_blocked_job():
    """backfill_depth 1: the second blocked job gets no reservation while the first waits."""
    jobs = [job("r", 0, 100, 1000, 10, soft=100), job("t1", 1, 50, 1000, 10, soft=50),
            job("t2", 2, 50, 1000, 10, soft=50)]
    result = schedule(jobs)
    assert result["t1"].reservation_time == 100
    assert result["t2"].reservation_time == 150  # given at t=100, once t1 ran


def test_filler_fits_in_front_of_top_job_only_by_its_soft_walltime():
    """f (soft 90 s, walltime 500 s) backfills before the top job's reservation at 100; by walltime it cannot."""
    jobs = [job("r", 0, 100, 100, 6), job("t", 1, 50, 100, 8), job("f", 2, 40, 500, 4, soft=90)]
    assert times(schedule(jobs, predictor="recorded"))["f"] == (2, 42)
    assert times(schedule(jobs, predictor="user"))["f"] == (150, 190)


def test_filler_ending_after_reservation_may_use_spare_cores():
    """A long filler may start if the top job leaves enough cores free at its reservation."""
    jobs = [job("r", 0, 100, 100, 6), job("t", 1, 50, 100, 5), job("f", 2, 300, 500, 1)]
    result = schedule(jobs, predictor="user")
    assert times(result) == {"r": (0, 100), "t": (100, 150), "f": (2, 302)}


def test_soft_walltime_extended_until_it_reaches_the_walltime():
    """pbs extension: plans 70, 140, 210, 280 then the walltime 300; a top job's first reservation breaks."""
    jobs = [job("x", 0, 350, 300, 10, soft=70), job("y", 1, 10, 50, 10)]
    result = schedule(jobs, settings=NO_TIMER._replace(cycle_interval_s=50))
    assert result["x"].extensions == 4
    assert result["x"].killed and result["x"].end_time == 300
    assert result["y"].reservation_time == 70  # planned on x's soft walltime
    assert result["y"].start_time == 300  # x outlived every plan: the reservation was broken


def test_extended_plan_stops_at_the_walltime():
    """An extension never plans a job past its walltime, so no filler takes the cores it frees there.

    10 cores, no timer. x (6 cores, soft 70 s, walltime 300 s, runs 350 s) starts at 0;
    t (8 cores, planned 100 s) is reserved at 70. f (4 cores, planned 60 s) arrives at 285:
    x has outlived 70, 140, 210 and 280, so its next plan is min(300, 350) = 300 and t is
    reserved at 300, where only 10 - 8 = 2 cores are spare; f would end at 345, past 300,
    so it waits. x is killed at 300 and t starts there; f starts when t ends at 350.
    Planned to 350 instead, x would let f start at 285 (65 s early) and hold t back to 335.
    """
    jobs = [job("x", 0, 350, 300, 6, soft=70), job("t", 1, 50, 100, 8), job("f", 285, 50, 60, 4)]
    result = schedule(jobs)
    assert times(result) == {"x": (0, 300), "t": (300, 350), "f": (350, 400)}
    assert result["x"].killed and result["t"].reservation_time == 70


def test_plan_ending_at_this_instant_is_extended_in_this_cycle():
    """A cycle at the very second a running job's plan ends extends the plan before reserving on it.

    10 cores, no timer. x (6 cores, soft 70 s, runs 400 s) starts at 0; t (8 cores,
    planned 100 s) is reserved at 70. f (4 cores, planned 60 s) arrives at 70, the instant
    x's plan ends: x is still running, so its plan becomes 140 and t is reserved at 140;
    f ends at 130, before that, and starts at 70 on the 4 free cores. t starts when x ends
    at 400. Left at 70, x's stale plan would put t's reservation at 70, now, where only 2
    cores are spare: f would wait for t to end, until 450.
    """
    jobs = [job("x", 0, 400, 1000, 6, soft=70), job("t", 1, 50, 100, 8), job("f", 70, 50, 60, 4)]
    result = schedule(jobs)
    assert times(result) == {"x": (0, 400), "t": (400, 450), "f": (70, 120)}
    assert result["t"].reservation_time == 70 and result["x"].extensions == 5


def test_double_extension_doubles_the_plan():
    """double extension: plans 70, 140, 280 then the walltime 300: three extensions."""
    jobs = [job("x", 0, 350, 300, 10, soft=70)]
    result = schedule(jobs, settings=NO_TIMER._replace(extension="double"))
    assert result["x"].extensions == 3


def test_extension_on_the_timer_opens_a_backfill_window():
    """x outlives its soft walltime 100; the 600 s cycle plans it to 700, and f (100 s) fits before t's reservation."""
    jobs = [job("x", 0, 1000, 2000, 6, soft=100), job("t", 1, 50, 100, 8), job("f", 2, 50, 100, 4)]
    # At 2, f would end at 102, past t's reservation at 100 where only 2 cores are spare: it waits.
    with_timer = schedule(jobs, settings=NO_TIMER._replace(cycle_interval_s=600))
    assert times(with_timer)["f"] == (600, 650)
    assert with_timer["t"].reservation_time == 100 and with_timer["t"].start_time == 1000
    # Without the timer no cycle sees the extension before x ends; f then waits behind t.
    assert times(schedule(jobs))["f"] == (1050, 1100)


def test_runjob_soft_walltime_counts_from_the_next_timed_cycle():
    """J is started on its queuejob soft walltime (10 s); runjob re-predicts 155 s, seen at the 350 s tick."""
    jobs = [job("h1", 0, 10, 1000, 1), job("L", 0, 300, 1000, 9), job("J", 20, 400, 1000, 5),
            job("T", 21, 10, 1000, 10, user="bob"), job("F", 22, 10, 100, 5, user="bob")]
    result = schedule(jobs, predictor="v1", settings=NO_TIMER._replace(cycle_interval_s=50))
    assert (result["J"].soft_walltime_queued_s, result["J"].soft_walltime_started_s) == (10, 155)
    assert result["J"].start_time == 300
    # In the 300 s cycle T is reserved at 310 (J's queuejob plan) and F (100 s) does not fit; at the
    # 350 s tick T's reservation is at 455 (J's runjob plan) and F, ending at 450, backfills.
    assert result["T"].reservation_time == 310
    assert result["F"].start_time == 350


def test_timer_meeting_a_submission_makes_one_cycle(monkeypatch):
    """A scheduler_iteration tick at a submission instant does not add a second cycle there."""
    from replay.simulation.scheduler import Scheduler
    cycles = []
    real_cycle = Scheduler.cycle
    monkeypatch.setattr(Scheduler, "cycle", lambda self, now: cycles.append(now) or real_cycle(self, now))
    # x outlives its soft walltime at 100, so the timer is armed at 600, when b is submitted.
    jobs = [job("x", 0, 1000, 2000, 6, soft=100), job("t", 1, 50, 100, 8), job("b", 600, 10, 10, 1)]
    schedule(jobs, settings=NO_TIMER._replace(cycle_interval_s=600))
    assert cycles.count(600) == 1


def test_killed_job_is_cut_at_its_walltime_and_teaches_the_predictor():
    """A job past its walltime ends there; the next job of its user is predicted from the cut runtime."""
    jobs = [job("k", 0, 500, 300, 10), job("n", 400, 10, 1000, 10)]
    result = schedule(jobs, predictor="v1")
    assert result["k"].killed and result["k"].runtime_s == 300 and result["k"].end_time == 300
    assert result["n"].soft_walltime_queued_s == 300
    assert not result["n"].killed


def test_job_without_walltime_uses_the_default_walltime():
    """--default-walltime: kill there; without it, PBS plans 5 years and never kills."""
    jobs = [job("w", 0, 500, None, 10)]
    assert schedule(jobs, settings=NO_TIMER._replace(default_walltime_s=200))["w"].end_time == 200
    assert schedule(jobs)["w"].end_time == 500


def test_soft_walltime_predicted_at_start_from_jobs_ended_meanwhile():
    """runjob re-predicts: history of jobs ended between submission and start counts."""
    jobs = [job("a", 0, 100, 1000, 10), job("b", 1, 30, 1000, 10)]
    result = schedule(jobs, predictor="v1")
    assert result["b"].soft_walltime_queued_s == 1000  # no history at submission
    assert result["b"].soft_walltime_started_s == 100  # a ended at 100 after 100 s


def test_backfill_depth_zero_lets_nothing_pass_a_blocked_job():
    """backfill_depth 0 with strict ordering: a small job behind a blocked one waits."""
    jobs = [job("a", 0, 100, 100, 6), job("b", 1, 50, 100, 8), job("c", 2, 10, 10, 1)]
    result = schedule(jobs, predictor="user", settings=NO_TIMER._replace(backfill_depth=0))
    assert times(result)["c"] == (100, 110)


def test_without_strict_ordering_any_job_that_fits_runs():
    """strict_ordering off: no top jobs; a long small job starts though it delays the big one."""
    jobs = [job("a", 0, 100, 100, 6), job("b", 1, 50, 100, 8), job("c", 2, 500, 500, 4)]
    result = schedule(jobs, predictor="user", settings=NO_TIMER._replace(strict_ordering=False))
    assert times(result) == {"a": (0, 100), "b": (502, 552), "c": (2, 502)}
    assert result["b"].reservation_time is None


def test_selective_plans_running_jobs_with_their_walltime():
    """--selective: r is planned to its walltime 1000, so the top job's reservation is 1000, not 100."""
    jobs = [job("r", 0, 100, 1000, 10, soft=100), job("t", 1, 50, 1000, 10, soft=50)]
    assert schedule(jobs)["t"].reservation_time == 100
    assert schedule(jobs, settings=NO_TIMER._replace(selective=True))["t"].reservation_time == 1000


def test_selective_start_that_invades_a_reservation_moves_it_next_cycle():
    """--selective: f, judged by its soft walltime 50, runs planned to its walltime 502 through t's reservation
    at 100; the next cycle re-plans t at 502, so g (1 core, 300 s) backfills at its submission."""
    jobs = [job("r", 0, 100, 100, 5), job("t", 1, 50, 100, 8), job("f", 2, 40, 500, 4, soft=50),
            job("g", 3, 10, 300, 1)]
    result = schedule(jobs, settings=NO_TIMER._replace(selective=True))
    assert times(result)["f"] == (2, 42)
    assert times(result)["g"] == (3, 13)


def test_zero_runtime_job_frees_its_cores_at_the_same_instant():
    """A job ending as it starts triggers another cycle at that instant."""
    jobs = [job("z", 0, 0, 10, 10), job("b", 0, 5, 10, 10)]
    assert times(schedule(jobs, predictor="user")) == {"z": (0, 0), "b": (0, 5)}


def _machine_load(result):
    events = sorted([(done.start_time, 1, done.width) for done in result] +
                    [(done.end_time, 0, -done.width) for done in result])
    load, peak = 0, 0
    for _, _, change in events:
        load += change
        peak = max(peak, load)
    return peak


@given(small_traces(), scheduler_settings(), simulated_predictors)
@settings(max_examples=300)
def test_capacity_is_never_exceeded(trace, scheduler, predictor):
    """At no instant do running jobs hold more cores than the machine has."""
    cores, jobs = trace
    assert _machine_load(simulate_jobs(jobs, PREDICTORS[predictor], Cluster.of_cores(cores), scheduler)) <= cores


@given(small_traces(), scheduler_settings(), simulated_predictors)
@settings(max_examples=200)
def test_jobs_start_after_submission_and_run_their_runtime(trace, scheduler, predictor):
    """start >= submit, and each job holds its cores for its occupancy (else runtime), cut at its walltime if
    its runtime outlived it."""
    cores, jobs = trace
    for done in simulate_jobs(jobs, PREDICTORS[predictor], Cluster.of_cores(cores), scheduler):
        assert done.start_time >= done.job.submit_time
        job = done.job
        held = job.runtime_s if job.occupancy_s is None else job.occupancy_s
        killed = done.walltime_s is not None and job.runtime_s > done.walltime_s
        assert done.end_time - done.start_time == (min(held, done.walltime_s) if killed else held)


@given(small_traces(), st.sampled_from([0, 7, 600]))
@settings(max_examples=300)
def test_clairvoyant_top_jobs_start_by_their_reservation(trace, interval):
    """FIFO, strict ordering, depth 1, true runtimes: no top job starts after its first reservation.

    Jobs hold their cores for their runtime here: clairvoyant knows the runtime, not how much longer PBS may
    keep a job's cores."""
    cores, jobs = trace
    jobs = [job._replace(occupancy_s=None) for job in jobs]
    scheduler = SchedulerSettings(cycle_interval_s=interval)
    for done in simulate_jobs(jobs, PREDICTORS["clairvoyant"], Cluster.of_cores(cores), scheduler):
        if done.reservation_time is not None:
            assert done.start_time <= done.reservation_time


@given(simulation_cases(max_jobs=30))
@settings(max_examples=600)
def test_reference_scheduler_gives_the_same_schedule(case):
    """The slow reference (full recomputation at every instant and tick) agrees on every job, also where
    soft-walltime plans end at the instant of a cycle or are extended up to the walltime."""
    (cores, jobs), scheduler, predictor = case
    cluster = Cluster.of_cores(cores)
    assert simulate_jobs(jobs, PREDICTORS[predictor], cluster, scheduler) == \
        reference_schedule(jobs, PREDICTORS[predictor], cluster, scheduler)


@given(small_traces(), small_traces(), scheduler_settings(), simulated_predictors)
@settings(max_examples=100)
def test_a_simulation_leaves_nothing_behind_for_the_next(trace, other, scheduler, predictor):
    """A schedule is the same after another trace was simulated in between: no state outlives a run."""
    cores, jobs = trace
    cluster, predictor = Cluster.of_cores(cores), PREDICTORS[predictor]
    first = simulate_jobs(jobs, predictor, cluster, scheduler)
    simulate_jobs(other[1], predictor, Cluster.of_cores(other[0]), scheduler)
    assert simulate_jobs(jobs, predictor, cluster, scheduler) == first


def test_job_wider_than_the_machine_is_refused():
    """A job that could never run is a ValueError naming it, not a silent hang."""
    try:
        simulate_jobs([job("huge", 0, 1, 1, 11)], PREDICTORS["user"], Cluster.of_cores(10))
    except ValueError as err:
        assert "huge" in str(err)
    else:
        raise AssertionError("expected ValueError")


WEEK = 7 * 86400


def first_week():
    """Six jobs of week 0 on one core, all submitted in the same minute: alice's (walltime 5000) ran 100 s,
    bob's (walltime 10000) 5000 s. Divider for week 1: median(100 x 3, 5000 x 3) = 2550; the requested
    walltime is the only feature that tells them apart, so week 1 classifies by it."""
    return [job("a{}".format(number), number, 100, 5000, 1) for number in range(3)] + \
        [job("b{}".format(number), 10 + number, 5000, 10000, 1, user="bob") for number in range(3)]


def test_small_first_runs_a_job_predicted_small_before_an_earlier_large_one():
    """Week 1: bob's big job holds the core; L (bob, large) and then S (alice, small) wait; small-first
    runs S first when the core frees, fifo runs L first."""
    jobs = first_week() + [job("big", WEEK, 3000, 10000, 1, user="bob"), job("L", WEEK + 1, 50, 10000, 1, user="bob"),
                           job("S", WEEK + 2, 100, 5000, 1)]
    fifo = schedule(jobs, cores=1)
    small_first = schedule(jobs, cores=1, settings=NO_TIMER._replace(policy="small-first"))
    assert (fifo["L"].start_time, fifo["S"].start_time) == (WEEK + 3000, WEEK + 3050)
    assert (small_first["S"].start_time, small_first["L"].start_time) == (WEEK + 3000, WEEK + 3100)


def test_safeguard_reruns_a_false_small_job_as_large_at_the_divider():
    """F (alice, predicted small) runs 4000 s; S (alice, small, 100 s) waits behind it on one core.

    small-first: F is killed at WEEK + 2550 (the divider) and queued again as large; S runs from 2550 to
    2650; F starts again at 2650 and runs its whole 4000 s. small-first-no-rerun: F runs to 4000, then S.
    """
    jobs = first_week() + [job("F", WEEK, 4000, 5000, 1), job("S", WEEK + 1, 100, 5000, 1)]
    rerun = schedule(jobs, cores=1, settings=NO_TIMER._replace(policy="small-first"))
    assert times(rerun) == {**times(schedule(first_week(), cores=1)),
                            "F": (WEEK + 2650, WEEK + 6650), "S": (WEEK + 2550, WEEK + 2650)}
    assert (rerun["F"].reruns, rerun["S"].reruns, rerun["F"].runtime_s) == (1, 0, 4000)
    no_rerun = schedule(jobs, cores=1, settings=NO_TIMER._replace(policy="small-first-no-rerun"))
    assert (times(no_rerun)["F"], times(no_rerun)["S"]) == ((WEEK, WEEK + 4000), (WEEK + 4000, WEEK + 4100))
    assert no_rerun["F"].reruns == 0


def test_safeguard_lets_a_job_ending_at_the_divider_finish():
    """A job predicted small that ends exactly at the divider is not killed."""
    jobs = first_week() + [job("F", WEEK, 2550, 5000, 1)]
    result = schedule(jobs, cores=1, settings=NO_TIMER._replace(policy="small-first"))
    assert (times(result)["F"], result["F"].reruns) == ((WEEK, WEEK + 2550), 0)


@given(st.one_of(small_traces(max_jobs=20), classified_traces()),
       scheduler_settings(policy=st.sampled_from(["small-first", "small-first-no-rerun"])), simulated_predictors)
@settings(max_examples=150, deadline=None)
def test_reference_scheduler_agrees_with_a_short_classification_week(trace, scheduler, predictor):
    """With 60 s weeks the classifier learns within the tiny traces; the reference, which kills and
    requeues on its own, still gives the same schedule, reruns included (about one example in six has one)."""
    cores, jobs = trace
    short_week = {name: POLICIES[name]._replace(classifier=partial(SizeClassifier, week_s=60))
                  for name in ("small-first", "small-first-no-rerun")}
    cluster = Cluster.of_cores(cores)
    with mock.patch.dict(POLICIES, short_week):
        assert simulate_jobs(jobs, PREDICTORS[predictor], cluster, scheduler) == \
            reference_schedule(jobs, PREDICTORS[predictor], cluster, scheduler)
