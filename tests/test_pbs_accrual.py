"""Eligible time as PBS accrues it: which jobs a cycle leaves accruing ineligible time, and what the formula
then reads."""

from hypothesis import given, settings
from hypothesis import strategies as st

from replay.pbs.accrual import Accrual, tracks_accrual
from replay.pbs.cycle import Running, State, decide
from replay.pbs.formula import formula_values
from replay.pbs.jobs import PbsJob
from replay.pbs.placement import Machine
from replay.pbs.policy import Limit, QueuePolicy, SchedulingPolicy
from replay.pbs.resources import parse_place, parse_select
from replay.pbs.run import simulate_run
from replay.pbs.vnodes import Vnode

AGING = SchedulingPolicy(strict_ordering=True, backfill_fuzzy_s=0, eligible_time_enable=True,
                         job_sort_formula="eligible_time + 10 * ncpus")
PER_USER_2 = AGING._replace(server_limits=(Limit("max_run", "u", "PBS_GENERIC", 2),))


def job(index, ncpus=1, user="ana", group="red", eligible=0, runtime=10, walltime=100, queue="workq"):
    return PbsJob(index, "{}.svr".format(index), user, group, "p", queue, parse_select("1:ncpus={}".format(ncpus)),
                  parse_place("free"), walltime, None, eligible, eligible, runtime)


def machine(ncpus):
    return Machine([Vnode("n0", "n0", (("ncpus", ncpus),))])


def running(j, start=0):
    return Running(j, start, (("n0", (("ncpus", j.chunks[0].amount("ncpus")),)),))


def test_tracked_only_where_a_job_can_accrue_ineligible_time():
    """Accrual is followed with eligible_time_enable, a formula, and limits per entity or a threshold."""
    assert tracks_accrual(PER_USER_2)
    assert tracks_accrual(AGING._replace(job_sort_formula_threshold=5.0))
    assert not tracks_accrual(AGING)
    assert not tracks_accrual(AGING._replace(server_limits=(Limit("max_run", "o", "PBS_ALL", 2),)))
    assert not tracks_accrual(PER_USER_2._replace(eligible_time_enable=False))


def test_a_user_s_jobs_beyond_the_limit_accrue_ineligible_time():
    """Under max_run 2 per user, with one of ana's jobs running, only ana's first queued job in sort order is
    counted within the limit; her later ones are over it (running plus considered), ben's are not."""
    state = State(50, (running(job(0, 4)),), (job(1, 4), job(2, 4), job(3, 4), job(4, 4, user="ben")))
    decision = decide(PER_USER_2, machine(4), state)
    assert decision.started == ()
    assert decision.ineligible == {"2.svr", "3.svr"}


def test_jobs_started_in_the_cycle_count_in_the_totals():
    """A job the cycle starts counts for the later jobs of its user: 2 starts (its formula value is highest),
    3 is counted next, so 1 (sorted last, 2 ncpus) is over the limit."""
    state = State(50, (), (job(1, 2), job(2, 4), job(3, 4)))
    decision = decide(PER_USER_2, machine(4), state)
    assert [j.name for j, _ in decision.started] == ["2.svr"]
    assert decision.ineligible == {"1.svr"}


def test_a_limit_for_everyone_leaves_jobs_eligible():
    """Over a limit for everyone (o:PBS_ALL) a job still accrues eligible time."""
    policy = PER_USER_2._replace(server_limits=(Limit("max_run", "o", "PBS_ALL", 1), Limit("max_run", "u",
                                                                                             "PBS_GENERIC", 5)))
    state = State(50, (running(job(0, 1)),), (job(1, 1), job(2, 1)))
    decision = decide(policy, machine(4), state)
    assert decision.started == () and decision.ineligible == frozenset()


def test_a_group_limit_counts_the_group_s_jobs():
    """max_run 1 per group: ana's job is counted first, so ben's (same group) is over, cai's (other group) not."""
    policy = AGING._replace(server_limits=(Limit("max_run", "g", "PBS_GENERIC", 1),))
    state = State(50, (running(job(0, 4, user="dan", group="green")),),
                  (job(1, 4), job(2, 4, user="ben"), job(3, 4, user="cai", group="blue")))
    assert decide(policy, machine(4), state).ineligible == {"2.svr"}


def test_failed_jobs_count_in_the_server_totals_only_when_the_server_has_limits():
    """PBS adds a job it could not run to the server's totals when the server has limits, else to its queue's
    (update_total_counts): a per-user limit of the queue then does not see the server-counted jobs."""
    queue_limit = (QueuePolicy("workq", limits=(Limit("max_run", "u", "PBS_GENERIC", 1),)),)
    queued = (job(1, 4), job(2, 4))
    state = State(50, (running(job(0, 4, user="ben")),), queued)
    alone = AGING._replace(queues=queue_limit)
    assert decide(alone, machine(4), state).ineligible == {"2.svr"}
    with_server = alone._replace(server_limits=(Limit("max_run", "g", "PBS_GENERIC", 9),))
    assert decide(with_server, machine(4), state).ineligible == frozenset()


def test_jobs_at_or_under_the_threshold_accrue_ineligible_time():
    """A job whose formula value is at or below job_sort_formula_threshold accrues ineligible time."""
    policy = AGING._replace(job_sort_formula_threshold=15.0)
    state = State(0, (running(job(0, 4)),), (job(1, 1), job(2, 2)))
    assert decide(policy, machine(4), state).ineligible == {"1.svr"}


def test_the_formula_reads_the_accrued_eligible_time():
    """Eligible time stops while a job accrues ineligible time and resumes after; accrue_type says which."""
    accrual, queued = Accrual(), job(1, 1, eligible=100)
    assert formula_values(AGING, queued, 130, accrual=accrual)["eligible_time"] == 30
    accrual.after_cycle(130, [queued], {"1.svr"})
    values = formula_values(AGING, queued, 170, accrual=accrual)
    assert (values["eligible_time"], values["accrue_type"]) == (30, 1)
    accrual.after_cycle(170, [queued], set())
    values = formula_values(AGING, queued, 200, accrual=accrual)
    assert (values["eligible_time"], values["accrue_type"]) == (60, 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 50), st.booleans()), min_size=1, max_size=20))
def test_eligible_time_is_the_sum_of_the_eligible_stretches(steps):
    """Over any sequence of cycles, a job's eligible time is the time between cycles that left it eligible,
    counted from its eligible time, and never more than the time since."""
    accrual, queued, now, expected, eligible = Accrual(), job(1, eligible=7), 7, 0, True
    for gap, ineligible in steps:
        expected += gap if eligible else 0
        now += gap
        accrual.after_cycle(now, [queued], {"1.svr"} if ineligible else set())
        eligible = not ineligible
        assert accrual.eligible_s(queued, now) == expected <= now - 7


def test_a_job_held_back_by_its_user_s_limit_loses_its_place():
    """In a whole run, ana's job released at 1 waits without ageing while her two others run (to 50), so ben's
    job of the same size, released at 20, goes first when they end; counted from etime, ana's would."""
    jobs = [job(0, 1, runtime=50), job(1, 1, runtime=50), job(2, 2, eligible=1),
            job(3, 2, user="ben", eligible=20), job(4, 2, user="cai", runtime=100)]
    runs = simulate_run(PER_USER_2, machine(4), jobs, scheduler_iteration_s=0)
    assert (runs["3.svr"].start, runs["2.svr"].start) == (50, 60)
    counted_from_etime = simulate_run(PER_USER_2, machine(4), jobs, scheduler_iteration_s=0,
                                      decide=lambda policy, vnodes, state: decide(policy, vnodes,
                                                                                  state._replace(accrual=None)))
    assert (counted_from_etime["2.svr"].start, counted_from_etime["3.svr"].start) == (50, 60)
