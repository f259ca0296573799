"""The order OpenPBS 23.06's scheduler considers queued jobs in (cmp_sort, sort_jobs, next_job)."""

from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.jobs import PbsJob
from replay.pbs.order import Walk, is_express, job_order, resorted_after_each_run
from replay.pbs.policy import FairsharePolicy, QueuePolicy, SchedulingPolicy, SortKey
from replay.pbs.resources import Place, parse_select


def job(index, queue="workq", ncpus=1, walltime=100, priority=0, user="u"):
    return PbsJob(index, "{}.svr".format(index), user, "g", "p", queue, parse_select("1:ncpus={}".format(ncpus)),
                  Place(), walltime, None, 0, 0, priority=priority)


def names(lists):
    return [[j.name for j in jobs] for jobs in lists]


def flat(policy, jobs):
    return [j.index for jobs_ in job_order(policy, jobs, now=0) for j in jobs_]


QUEUES = (QueuePolicy("low", priority=1), QueuePolicy("high", priority=50), QueuePolicy("mid", priority=10))


def test_default_is_submission_order_within_queue():
    """With PBS's defaults, jobs are in submission order, one list per queue."""
    jobs = [job(3), job(1), job(2)]
    assert flat(SchedulingPolicy(), jobs) == [1, 2, 3]


def test_by_queue_walks_queues_by_priority():
    """by_queue: one list per queue, highest priority first; queues without jobs are left out."""
    policy = SchedulingPolicy(queues=QUEUES)
    jobs = [job(1, "low"), job(2, "mid"), job(3, "high"), job(4, "low")]
    assert names(job_order(policy, jobs, 0)) == [["3.svr"], ["2.svr"], ["1.svr", "4.svr"]]


def test_equal_priority_queues_keep_server_order():
    """Queues of equal priority keep the order the server lists them in."""
    policy = SchedulingPolicy(queues=(QueuePolicy("b"), QueuePolicy("a")))
    assert names(job_order(policy, [job(1, "a"), job(2, "b")], 0)) == [["2.svr"], ["1.svr"]]


def test_without_by_queue_queue_priority_does_not_sort():
    """Without by_queue all jobs form one list and queue priority is not a key."""
    policy = SchedulingPolicy(queues=QUEUES, by_queue=False)
    assert flat(policy, [job(2, "high"), job(1, "low")]) == [1, 2]
    assert len(job_order(policy, [job(2, "high"), job(1, "low")], 0)) == 1


def test_formula_high_first_then_submission_order():
    """The formula sorts high first; ties go to submission order."""
    policy = SchedulingPolicy(job_sort_formula="ncpus")
    jobs = [job(1, ncpus=1), job(2, ncpus=4), job(3, ncpus=4), job(4, ncpus=2)]
    assert flat(policy, jobs) == [2, 3, 4, 1]


def test_job_sort_key_in_order_and_direction():
    """job_sort_key entries apply in turn, HIGH or LOW."""
    policy = SchedulingPolicy(job_sort_key=(SortKey("ncpus", True), SortKey("walltime", False)))
    jobs = [job(1, ncpus=1, walltime=10), job(2, ncpus=2, walltime=50), job(3, ncpus=2, walltime=20)]
    assert flat(policy, jobs) == [3, 2, 1]


def test_job_priority_key():
    """job_priority sorts by the job's Priority attribute."""
    policy = SchedulingPolicy(job_sort_key=(SortKey("job_priority", True),))
    assert flat(policy, [job(1, priority=0), job(2, priority=10)]) == [2, 1]


def test_sort_keys_break_formula_ties():
    """With a formula, job_sort_key still breaks the formula's ties (PBS only warns)."""
    policy = SchedulingPolicy(job_sort_formula="1", job_sort_key=(SortKey("walltime", False),))
    assert flat(policy, [job(1, walltime=50), job(2, walltime=10)]) == [2, 1]


def test_formula_ties_in_single_precision():
    """Formula values equal in single precision tie and fall back to submission order."""
    policy = SchedulingPolicy(job_sort_formula="walltime")
    assert flat(policy, [job(1, walltime=100000001), job(2, walltime=100000002)]) == [1, 2]


def test_express_queue_first_even_without_by_queue():
    """A queue at preempt_queue_prio (150) or above is express: its jobs come first."""
    queues = (QueuePolicy("workq"), QueuePolicy("express", priority=150))
    policy = SchedulingPolicy(queues=queues, by_queue=False, job_sort_formula="ncpus")
    jobs = [job(1, ncpus=8), job(2, "express", ncpus=1)]
    assert is_express(policy, jobs[1]) and flat(policy, jobs) == [2, 1]
    assert flat(policy._replace(preemptive_sched=False), jobs) == [1, 2]


def test_express_jobs_of_equal_queues_sorted_together_by_queue():
    """by_queue without fairshare: express jobs of equal-priority express queues form one sorted list."""
    queues = (QueuePolicy("e1", priority=200), QueuePolicy("e2", priority=200), QueuePolicy("workq"))
    policy = SchedulingPolicy(queues=queues)
    jobs = [job(1, "e1"), job(2, "e2"), job(3, "e1"), job(4)]
    assert names(job_order(policy, jobs, 0)) == [["1.svr", "2.svr", "3.svr"], ["4.svr"]]


def test_resorted_only_with_fairshare():
    """PBS sorts again after each run only with fair_share."""
    assert not resorted_after_each_run(SchedulingPolicy())
    assert resorted_after_each_run(SchedulingPolicy(fairshare=FairsharePolicy()))


def test_walk_by_queue_never_goes_back():
    """The walk takes each queue's jobs in order, then the next queue."""
    policy = SchedulingPolicy(queues=QUEUES)
    walk = Walk(policy, [job(1, "low"), job(2, "high"), job(3, "high")], 0)
    assert [walk.next_job().index for _ in range(3)] == [2, 3, 1] and walk.next_job() is None


def test_walk_round_robin():
    """round_robin: one job from each queue of the top priority in turn, then the next priority."""
    queues = (QueuePolicy("q1", priority=5), QueuePolicy("q2", priority=5), QueuePolicy("q3", priority=1))
    policy = SchedulingPolicy(queues=queues, round_robin=True, by_queue=False)
    jobs = [job(1, "q1"), job(2, "q1"), job(3, "q2"), job(4, "q3"), job(5, "q1"), job(6, "q3")]
    walk = Walk(policy, jobs, 0)
    assert [walk.next_job().index for _ in range(6)] == [1, 3, 2, 5, 4, 6] and walk.next_job() is None


_jobs = st.lists(st.tuples(st.sampled_from(["low", "mid", "high", "other"]), st.integers(1, 4),
                           st.integers(1, 50), st.integers(-2, 2)), max_size=12).map(
    lambda rows: [job(i, q, ncpus=n, walltime=w, priority=p) for i, (q, n, w, p) in enumerate(rows)])
_policies = st.builds(SchedulingPolicy, by_queue=st.booleans(), round_robin=st.booleans(),
                      job_sort_formula=st.sampled_from([None, "ncpus", "walltime/ncpus", "-job_priority"]),
                      job_sort_key=st.sampled_from([(), (SortKey("ncpus", False),)]),
                      queues=st.just(QUEUES + (QueuePolicy("express", priority=200),)))


@given(_policies, _jobs)
def test_order_is_a_deterministic_permutation(policy, jobs):
    """Every queued job appears exactly once, whatever the input order."""
    forward = job_order(policy, jobs, 0)
    backward = job_order(policy, list(reversed(jobs)), 0)
    assert names(forward) == names(backward)
    assert sorted(j.index for jobs_ in forward for j in jobs_) == sorted(j.index for j in jobs)


@given(_policies, _jobs)
def test_walk_considers_every_job_once(policy, jobs):
    """The walk hands out each job exactly once, resorting or not."""
    walk, seen = Walk(policy, jobs, 0), []
    while True:
        picked = walk.next_job()
        if picked is None:
            break
        seen.append(picked.index)
        walk.resort()
    assert sorted(seen) == sorted(j.index for j in jobs)
