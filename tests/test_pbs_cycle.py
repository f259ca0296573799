"""One PBS scheduling cycle: starts, top jobs, backfilling, strict ordering, equivalence classes."""

from hypothesis import given, settings
from hypothesis import strategies as st

from replay.pbs.cycle import Running, State, decide
from replay.pbs.fairshare import Fairshare
from replay.pbs.jobs import PbsJob, planned_duration, planned_end
from replay.pbs.placement import Machine
from replay.pbs.policy import FairsharePolicy, Limit, QueuePolicy, SchedulingPolicy, ShareGroup
from replay.pbs.resources import parse_place, parse_select
from replay.pbs.vnodes import Vnode

STRICT = SchedulingPolicy(strict_ordering=True, backfill_fuzzy_s=0)


def job(index, ncpus=4, walltime=100, soft=None, queue="workq", place="free", user="u"):
    return PbsJob(index, "{}.svr".format(index), user, "g", "p", queue, parse_select("1:ncpus={}".format(ncpus)),
                  parse_place(place), walltime, soft, 0, 0)


def machine(*sizes):
    return Machine([Vnode("n{}".format(i), "n{}".format(i), (("ncpus", size),)) for i, size in enumerate(sizes)])


def running(j, vnode="n0", start=0):
    return Running(j, start, ((vnode, (("ncpus", j.chunks[0].amount("ncpus")),)),))


def started(decision):
    return [j.name for j, _ in decision.started]


def tops(decision):
    return [(j.name, start) for j, start, _ in decision.top_jobs]


def test_fifo_fills_the_machine():
    """Jobs that fit start in order; the rest wait."""
    d = decide(SchedulingPolicy(), machine(4), State(0, (), (job(1, 2), job(2, 2), job(3, 2))))
    assert started(d) == ["1.svr", "2.svr"] and "3.svr" in d.reasons


def test_without_strict_ordering_no_top_jobs():
    """Without strict_ordering a small later job runs past a big one and nothing is reserved."""
    state = State(0, (running(job(0, 2)),), (job(1, 4), job(2, 2, walltime=10 ** 6)))
    d = decide(SchedulingPolicy(), machine(4), state)
    assert started(d) == ["2.svr"] and d.top_jobs == ()


def test_top_job_at_the_planned_end():
    """The first job that cannot run becomes a top job at the running job's planned end."""
    state = State(10, (running(job(0, 4, walltime=100)),), (job(1, 4),))
    assert tops(decide(STRICT, machine(4), state)) == [("1.svr", 100)]


def test_top_job_after_an_exiting_job():
    """A running job whose process has ended (exiting) is planned to end one second from now."""
    state = State(10, (running(job(0, 4, walltime=1000, soft=50))._replace(exiting=True),), (job(1, 4),))
    assert tops(decide(STRICT, machine(4), state)) == [("1.svr", 11)]


def test_top_job_planned_on_soft_walltime():
    """The running job's soft walltime, not its walltime, sets the top job's start."""
    state = State(10, (running(job(0, 4, walltime=1000, soft=50)),), (job(1, 4),))
    assert tops(decide(STRICT, machine(4), state)) == [("1.svr", 50)]


def test_top_job_after_extended_soft_walltime():
    """A running job past its soft walltime is planned to end at the next whole soft walltime."""
    state = State(60, (running(job(0, 4, walltime=1000, soft=50)),), (job(1, 4),))
    assert tops(decide(STRICT, machine(4), state)) == [("1.svr", 100)]


def test_backfill_that_ends_in_time():
    """A later job runs now if it ends (by its soft walltime) before the top job starts."""
    state = State(0, (running(job(0, 2, walltime=100)),), (job(1, 4), job(2, 2, walltime=500, soft=100)))
    d = decide(STRICT, machine(4), state)
    assert started(d) == ["2.svr"] and tops(d) == [("1.svr", 100)]


def test_no_backfill_that_delays_the_top_job():
    """A later job that would still run when the top job starts does not run."""
    state = State(0, (running(job(0, 2, walltime=100)),), (job(1, 4), job(2, 2, walltime=101)))
    d = decide(STRICT, machine(4), state)
    assert started(d) == [] and "2.svr" in d.reasons


def test_backfill_beside_the_top_job_on_another_vnode():
    """A long job may run now on a vnode the top job does not use."""
    runs = (running(job(0, 4)), running(job(9, 2, walltime=500), "n1"))
    state = State(0, runs, (job(1, 4), job(2, 2, walltime=10 ** 5)))
    d = decide(STRICT, machine(4, 4), state)
    assert started(d) == ["2.svr"] and tops(d) == [("1.svr", 100)]


def test_backfill_depth_limits_top_jobs():
    """Only backfill_depth jobs become top jobs."""
    state = State(0, (running(job(0, 4)),), (job(1, 4), job(2, 4, walltime=50), job(3, 4)))
    assert len(decide(STRICT, machine(4), state).top_jobs) == 1
    assert len(decide(STRICT._replace(backfill_depth=3), machine(4), state).top_jobs) == 3


def test_later_top_jobs_queue_behind_earlier_ones():
    """A second top job starts after the first one's reservation."""
    state = State(0, (running(job(0, 4, walltime=100)),), (job(1, 4, walltime=50), job(2, 4)))
    assert tops(decide(STRICT._replace(backfill_depth=2), machine(4), state)) == [("1.svr", 100), ("2.svr", 150)]


def test_strict_ordering_without_backfill_stops_the_cycle():
    """With backfill_depth 0 the first job that cannot run stops every later one."""
    state = State(0, (running(job(0, 2)),), (job(1, 4), job(2, 1, walltime=1)))
    d = decide(STRICT._replace(backfill_depth=0), machine(4), state)
    assert started(d) == [] and d.top_jobs == () and "2.svr" in d.reasons


def test_queue_backfill_depth_zero_stops_its_queue():
    """A queue whose backfill_depth is 0 stops at its first job that cannot run; other queues go on."""
    policy = STRICT._replace(queues=(QueuePolicy("a", priority=10, backfill_depth=0), QueuePolicy("b")))
    state = State(0, (running(job(0, 2)),), (job(1, 4, queue="a"), job(2, 1, queue="a"), job(3, 1, queue="b")))
    d = decide(policy, machine(4), state)
    assert started(d) == ["3.svr"]


def test_by_queue_walks_queues_by_priority():
    """With by_queue the higher-priority queue's jobs come first."""
    policy = SchedulingPolicy(queues=(QueuePolicy("low", priority=1), QueuePolicy("high", priority=9)))
    state = State(0, (), (job(1, 4, queue="low"), job(2, 4, queue="high")))
    assert started(decide(policy, machine(4), state)) == ["2.svr"]


def test_round_robin_alternates_queues():
    """With round_robin, queues of equal priority take turns."""
    policy = SchedulingPolicy(round_robin=True, by_queue=False, queues=(QueuePolicy("a"), QueuePolicy("b")))
    state = State(0, (), (job(1, 1, queue="a"), job(2, 1, queue="a"), job(3, 1, queue="b"), job(4, 1, queue="b")))
    assert started(decide(policy, machine(4), state)) == ["1.svr", "3.svr", "2.svr", "4.svr"]


def test_can_never_run_is_no_top_job():
    """A job larger than the machine is passed over and does not take the top-job place."""
    state = State(0, (running(job(0, 4)),), (job(1, 16), job(2, 4)))
    d = decide(STRICT, machine(4), state)
    assert tops(d) == [("2.svr", 100)] and "never" in d.reasons["1.svr"]


def test_no_start_found_takes_no_top_job_place():
    """A chunk larger than any vnode finds no start and leaves the top-job place to the next job."""
    state = State(0, (running(job(0, 4)), running(job(9, 4, walltime=200), "n1")), (job(1, 8), job(2, 4)))
    assert tops(decide(STRICT, machine(4, 4), state)) == [("2.svr", 100)]


def test_equivalent_job_skipped_but_may_become_a_top_job():
    """A job identical to one that failed is not tried now, yet becomes a top job if places remain."""
    state = State(0, (running(job(0, 4)),), (job(1, 4), job(2, 4)))
    d = decide(STRICT._replace(backfill_depth=2), machine(4), state)
    assert tops(d) == [("1.svr", 100), ("2.svr", 200)]


def test_soft_walltime_not_in_the_equivalence_class():
    """A job differing from a failed one only in soft walltime is skipped, though it could backfill."""
    queued = (job(1, 4), job(2, 2, walltime=500, soft=400), job(3, 2, walltime=500, soft=50))
    d = decide(STRICT, machine(4), State(0, (running(job(0, 2, walltime=100)),), queued))
    assert started(d) == [] and d.reasons["3.svr"] == d.reasons["2.svr"]
    alone = decide(STRICT, machine(4), State(0, (running(job(0, 2, walltime=100)),), (queued[0], queued[2])))
    assert started(alone) == ["3.svr"]


def test_started_jobs_end_in_the_calendar():
    """A job started in this cycle ends at now + its planned duration for later top jobs."""
    state = State(0, (), (job(1, 4, walltime=300, soft=30), job(2, 4)))
    d = decide(STRICT, machine(4), state)
    assert started(d) == ["1.svr"] and tops(d) == [("2.svr", 30)]


def test_fuzzy_rounds_the_estimate_window():
    """With opt_backfill_fuzzy low the estimate is the last end inside the 60 s window."""
    state = State(0, (running(job(0, 2, walltime=70)), running(job(9, 2, walltime=110))), (job(1, 2),))
    assert tops(decide(STRICT._replace(backfill_fuzzy_s=60), machine(4), state)) == [("1.svr", 110)]


def test_planned_end_of_an_overrun_job():
    """A running job past its walltime without soft walltime is expected to end one second from now."""
    state = State(500, (running(job(0, 4, walltime=100)),), (job(1, 4),))
    assert tops(decide(STRICT, machine(4), state)) == [("1.svr", planned_end(job(0), 0, 500))]


jobs_strategy = st.lists(st.tuples(st.integers(1, 6), st.integers(1, 300), st.one_of(st.none(), st.integers(1, 300)),
                                   st.sampled_from(["free", "scatter", "pack", "excl"])), max_size=8)


@st.composite
def states(draw):
    sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=3))
    m = machine(*sizes)
    queued = tuple(job(i + 1, n, max(w, s or 0), s, place=p) for i, (n, w, s, p) in enumerate(draw(jobs_strategy)))
    runs = []
    for k, size in enumerate(sizes):
        if draw(st.booleans()):
            runs.append(running(job(100 + k, draw(st.integers(1, size)), draw(st.integers(1, 400))),
                                "n{}".format(k), start=draw(st.integers(0, 50))))
    policy = SchedulingPolicy(strict_ordering=draw(st.booleans()), backfill_depth=draw(st.integers(0, 3)),
                              backfill_fuzzy_s=draw(st.sampled_from([0, 60, 300])))
    return policy, m, State(100, tuple(runs), queued)


def held(m, state, decision):
    total = {}
    pieces = [p for r in state.running for p in r.allocation] + [p for _, a in decision.started for p in a]
    for vnode, amounts in pieces:
        total[vnode] = total.get(vnode, 0) + dict(amounts).get("ncpus", 0)
    return total


@settings(max_examples=150, deadline=None)
@given(states())
def test_never_over_allocates(case):
    """No vnode ever holds more cpus than it has, running and started jobs together."""
    policy, m, state = case
    d = decide(policy, m, state)
    assert all(m.by_name[v].amount("ncpus") >= n for v, n in held(m, state, d).items())


@settings(max_examples=150, deadline=None)
@given(states())
def test_top_jobs_only_with_strict_ordering(case):
    """Top jobs exist only with strict_ordering, at most backfill_depth of them, never before now."""
    policy, m, state = case
    d = decide(policy, m, state)
    assert len(d.top_jobs) <= (policy.backfill_depth if policy.strict_ordering else 0)
    assert all(start >= state.now for _, start, _ in d.top_jobs)


@settings(max_examples=100, deadline=None)
@given(states())
def test_deterministic_and_pure(case):
    """The same state gives the same decision, and deciding changes nothing it was given."""
    policy, m, state = case
    before = repr(state)
    assert decide(policy, m, state) == decide(policy, m, state)
    assert repr(state) == before


@settings(max_examples=100, deadline=None)
@given(states())
def test_every_job_accounted_for(case):
    """Each queued job is either started or has a reason; top jobs are among the not started."""
    policy, m, state = case
    d = decide(policy, m, state)
    names = set(started(d))
    assert names.isdisjoint(d.reasons) and names | set(d.reasons) == {j.name for j in state.queued}
    assert all(j.name in d.reasons for j, _, _ in d.top_jobs)


def test_over_a_run_limit_does_not_run_but_may_be_a_top_job():
    """A job over max_run waits; with strict ordering it becomes a top job when the user's job ends."""
    policy = STRICT._replace(server_limits=(Limit("max_run", "u", "PBS_GENERIC", 1),))
    state = State(0, (running(job(0, 1, walltime=100, user="ana")),), (job(1, 1, user="ana"), job(2, 1, user="bo")))
    d = decide(policy, machine(8), state)
    assert started(d) == ["2.svr"] and "max_run" in d.reasons["1.svr"] and tops(d) == [("1.svr", 100)]


def test_no_room_now_is_found_before_the_run_limits():
    """PBS's quick test of the free amounts over all vnodes comes before the run limits: a job over its user's
    limit that could not fit now anyway fails for want of room; one that could fit fails on the limit."""
    policy = STRICT._replace(server_limits=(Limit("max_run", "u", "PBS_GENERIC", 1),))
    state = State(0, (running(job(0, 4, user="ana"), "n0"), running(job(5, 2, user="bo"), "n1")),
                  (job(1, 4, user="ana"), job(2, 2, user="ana")))
    d = decide(policy, machine(4, 4), state)
    assert d.reasons["1.svr"] == "not enough free resources on the vnodes"
    assert "max_run" in d.reasons["2.svr"]


def test_the_quick_test_counts_no_vnode_below_nothing():
    """A vnode held beyond its size (as a rebuilt state may hold it) leaves nothing, not less, to the sum."""
    state = State(0, (running(job(0, 6), "n0"),), (job(1, 2),))
    assert started(decide(SchedulingPolicy(), machine(4, 2), state)) == ["1.svr"]


def test_run_limit_counts_jobs_started_in_the_cycle():
    """Jobs started earlier in the cycle count against the limit."""
    policy = SchedulingPolicy(server_limits=(Limit("max_run", "u", "PBS_GENERIC", 2),))
    d = decide(policy, machine(8), State(0, (), (job(1, 1), job(2, 1), job(3, 1))))
    assert started(d) == ["1.svr", "2.svr"]


def test_user_in_the_class_when_limits_are_per_user():
    """With per-user limits one user's failure does not skip another user's identical job."""
    policy = SchedulingPolicy(server_limits=(Limit("max_run", "u", "PBS_GENERIC", 1),))
    state = State(0, (running(job(0, 1, user="ana")),), (job(1, 1, user="ana"), job(2, 1, user="bo")))
    assert started(decide(policy, machine(8), state)) == ["2.svr"]


def test_under_formula_threshold_not_considered():
    """A job at or below job_sort_formula_threshold neither runs nor becomes a top job."""
    policy = STRICT._replace(job_sort_formula="ncpus", job_sort_formula_threshold=2.0)
    state = State(0, (running(job(0, 4)),), (job(1, 2), job(2, 3)))
    d = decide(policy, machine(4), state)
    assert "threshold" in d.reasons["1.svr"] and tops(d) == [("2.svr", 100)]


def fairshare_policy(**more):
    tree = (ShareGroup("ana", 10, "root", 1), ShareGroup("bo", 11, "root", 1))
    return SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus", tree=tree, **more), by_queue=False)


def test_fairshare_charges_each_start_and_resorts():
    """With fairshare, each started job's requested usage makes its user less deserving for the next."""
    policy = fairshare_policy()
    queued = (job(1, 1, user="ana"), job(2, 1, user="ana"), job(3, 1, user="bo"), job(4, 1, user="bo"))
    d = decide(policy, machine(8), State(0, (), queued, Fairshare(policy.fairshare)))
    assert started(d) == ["1.svr", "3.svr", "2.svr", "4.svr"]


def test_formula_values_are_kept_through_the_cycle():
    """PBS evaluates job_sort_formula once per cycle and sorts by the stored values after each start: with a
    formula of fairshare_factor, ana (less usage) stays ahead of bo for the whole cycle, though her first job's
    charge leaves her less deserving than bo by then (evaluated again, bo's job would come second)."""
    policy = fairshare_policy()._replace(job_sort_formula="fairshare_factor")
    fairshare = Fairshare(policy.fairshare)
    fairshare.charge("bo", 0.5)
    queued = (job(1, 1, user="ana"), job(2, 1, user="ana"), job(3, 1, user="bo"), job(4, 1, user="bo"))
    d = decide(policy, machine(8), State(0, (), queued, fairshare))
    assert started(d) == ["1.svr", "2.svr", "3.svr", "4.svr"]


def test_fairshare_of_the_caller_unchanged():
    """decide charges a copy: the caller's fairshare usage is what it was."""
    policy = fairshare_policy()
    fairshare = Fairshare(policy.fairshare)
    decide(policy, machine(8), State(0, (), (job(1, 1, user="ana"),), fairshare))
    assert fairshare.usage("ana") == 1


def test_no_shares_never_run():
    """With enforce_no_shares, a user outside the share tree (unknown_shares 0) never runs."""
    policy = fairshare_policy()
    d = decide(policy, machine(8), State(0, (), (job(1, 1, user="zed"),), Fairshare(policy.fairshare)))
    assert started(d) == [] and "shares" in d.reasons["1.svr"]


def occupancy_at(moment, state, decision):
    """ncpus held per vnode at ``moment`` by running, started and top jobs as PBS plans them."""
    held = {}
    spans = [(r.start, planned_end(r.job, r.start, state.now), r.allocation) for r in state.running]
    spans += [(state.now, state.now + planned_duration(j), a) for j, a in decision.started]
    spans += [(start, start + planned_duration(j), a) for j, start, a in decision.top_jobs]
    for begin, end, allocation in spans:
        if begin <= moment < end:
            for vnode, amounts in allocation:
                held[vnode] = held.get(vnode, 0) + dict(amounts).get("ncpus", 0)
    return held


@settings(max_examples=150, deadline=None)
@given(states())
def test_backfill_never_delays_a_top_job(case):
    """At each top job's planned start, its vnodes hold no more than they have, all plans together."""
    policy, m, state = case
    d = decide(policy, m, state)
    for _, start, _ in d.top_jobs:
        held = occupancy_at(start, state, d)
        assert all(m.by_name[v].amount("ncpus") >= n for v, n in held.items())


def test_strict_stop_follows_the_server_job_list():
    """Without backfilling, a blocked job stops only jobs after it in the server's list, not by queue."""
    policy = STRICT._replace(backfill_depth=0, queues=(QueuePolicy("high", priority=9), QueuePolicy("low")))
    state = State(0, (running(job(0, 2)),), (job(1, 1, queue="low"), job(2, 4, queue="high"), job(3, 1, queue="low")))
    assert started(decide(policy, machine(4), state)) == ["1.svr"]


def test_exiting_jobs_do_not_count_towards_run_limits():
    """A user at max_run with one job exiting may start another: PBS counts running jobs only."""
    from replay.pbs.policy import Limit
    policy = SchedulingPolicy(server_limits=(Limit("max_run", "u", "PBS_GENERIC", 1),))
    state = State(10, (running(job(0, 2))._replace(exiting=True),), (job(1, 2),))
    assert started(decide(policy, machine(4), state)) == ["1.svr"]
    state = State(10, (running(job(0, 2)),), (job(1, 2),))
    assert started(decide(policy, machine(4), state)) == []


def test_jobs_of_a_queue_not_started_wait():
    """A queue whose started is False is skipped whole; the other queues' jobs run."""
    policy = SchedulingPolicy(queues=(QueuePolicy("stopped", started=False), QueuePolicy("workq")))
    decision = decide(policy, machine(8), State(0, (), (job(1, queue="stopped"), job(2))))
    assert started(decision) == ["2.svr"]
