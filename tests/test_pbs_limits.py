"""Hard run limits as OpenPBS 23.06's scheduler checks them (check_limits)."""

from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.jobs import PbsJob
from replay.pbs.limits import LimitEvent, Totals, limit_failure, normalise, over_limit
from replay.pbs.policy import Limit, QueuePolicy, SchedulingPolicy
from replay.pbs.resources import Place, parse_select

_count = iter(range(10 ** 9))


def job(user="ana", group="g1", project="p1", queue="workq", ncpus=1, walltime=100):
    index = next(_count)
    return PbsJob(index, "{}.svr".format(index), user, group, project, queue,
                  parse_select("1:ncpus={}".format(ncpus)), Place(), walltime, None, 0, 0)


def server(*limits):
    return SchedulingPolicy(server_limits=tuple(limits))


def test_no_limits_never_hold_back():
    """Without limits any job may start."""
    assert over_limit(SchedulingPolicy(), job(), [job() for _ in range(50)]) is None


def test_generic_user_run_limit():
    """[u:PBS_GENERIC=2]: a user running two jobs may not start a third; another user may."""
    policy = server(Limit("max_run", "u", "PBS_GENERIC", 2))
    running = [job(), job()]
    assert over_limit(policy, job(), running) == "server max_run [u:PBS_GENERIC=2] for user ana"
    assert over_limit(policy, job(user="bob"), running) is None
    assert over_limit(policy, job(), running[:1]) is None


def test_individual_limit_overrides_generic_even_when_higher():
    """[u:ana=5] replaces [u:PBS_GENERIC=1] for ana, who may then run five jobs."""
    policy = server(Limit("max_run", "u", "PBS_GENERIC", 1), Limit("max_run", "u", "ana", 5))
    assert over_limit(policy, job(), [job() for _ in range(4)]) is None
    assert over_limit(policy, job(), [job() for _ in range(5)]) == "server max_run [u:ana=5] for user ana"
    assert over_limit(policy, job(user="bob"), [job(user="bob")]) is not None


def test_overall_limit_counts_everyone():
    """[o:PBS_ALL=3] counts every running job."""
    policy = server(Limit("max_run", "o", "PBS_ALL", 3))
    running = [job(user="a"), job(user="b"), job(user="c")]
    assert over_limit(policy, job(user="d"), running) == "server max_run [o:PBS_ALL=3]"


def test_old_style_attributes():
    """max_user_run, max_group_res.ncpus and max_running are the generic and overall new-style limits."""
    assert normalise(Limit("max_user_run", "", "", 2)) == Limit("max_run", "u", "PBS_GENERIC", 2)
    assert normalise(Limit("max_group_res.ncpus", "", "", 8)) == Limit("max_run_res.ncpus", "g", "PBS_GENERIC", 8)
    assert normalise(Limit("max_running", "", "", 4)) == Limit("max_run", "o", "PBS_ALL", 4)
    policy = server(Limit("max_user_run", "u", "PBS_GENERIC", 1))
    assert over_limit(policy, job(), [job()]) == "server max_run [u:PBS_GENERIC=1] for user ana"


def test_resource_limit_counts_requests_plus_this_job():
    """max_run_res.ncpus: running requests plus this job's may reach the limit but not exceed it."""
    policy = server(Limit("max_run_res.ncpus", "g", "PBS_GENERIC", 8))
    running = [job(ncpus=4), job(user="bob", ncpus=2)]
    assert over_limit(policy, job(ncpus=2), running) is None
    assert over_limit(policy, job(ncpus=3), running) == "server max_run_res.ncpus [g:PBS_GENERIC=8] for group g1"


def test_resource_limit_on_walltime():
    """A limit on walltime counts the requested walltimes; a job without one is never held back by it."""
    policy = server(Limit("max_run_res.walltime", "u", "PBS_GENERIC", 250))
    assert over_limit(policy, job(walltime=100), [job(walltime=100)]) is None
    assert over_limit(policy, job(walltime=151), [job(walltime=100)]) is not None
    assert over_limit(policy, job(walltime=None), [job(walltime=300)]) is None


def test_queue_limit_counts_only_its_queue():
    """A queue's max_run counts the jobs of that queue only, and names the queue."""
    policy = SchedulingPolicy(queues=(QueuePolicy("small", limits=(Limit("max_run", "o", "PBS_ALL", 1),)),))
    assert over_limit(policy, job(queue="small"), [job(queue="workq")]) is None
    assert over_limit(policy, job(queue="small"), [job(queue="small")]) == "queue small max_run [o:PBS_ALL=1]"
    assert over_limit(policy, job(queue="workq"), [job(queue="small")]) is None


def test_queue_limits_are_checked_before_server_limits():
    """When a queue and a server run limit both fail, the queue's is the reason."""
    policy = SchedulingPolicy(queues=(QueuePolicy("workq", limits=(Limit("max_run", "u", "PBS_GENERIC", 1),)),),
                              server_limits=(Limit("max_run", "g", "PBS_GENERIC", 1),))
    assert over_limit(policy, job(), [job()]) == "queue workq max_run [u:PBS_GENERIC=1] for user ana"


def test_run_limits_are_checked_before_resource_limits():
    """A server run limit is the reason before a queue resource limit; group, project before user."""
    policy = SchedulingPolicy(
        queues=(QueuePolicy("workq", limits=(Limit("max_run_res.ncpus", "u", "PBS_GENERIC", 1),)),),
        server_limits=(Limit("max_run", "u", "PBS_GENERIC", 1), Limit("max_run", "p", "PBS_GENERIC", 1)))
    assert over_limit(policy, job(), [job()]) == "server max_run [p:PBS_GENERIC=1] for project p1"


def test_soft_and_queued_limits_do_not_hold_back():
    """max_run_soft and max_queued never stop a job from running."""
    policy = server(Limit("max_run_soft", "u", "PBS_GENERIC", 1), Limit("max_queued", "u", "PBS_GENERIC", 1))
    assert over_limit(policy, job(), [job(), job()]) is None


def test_look_ahead_to_a_top_job_start():
    """A top job of the same user planned to start while this job runs counts against the limit."""
    policy = server(Limit("max_run", "u", "PBS_GENERIC", 2))
    top = job()
    events = [LimitEvent(50, top, True), LimitEvent(150, top, False)]
    assert over_limit(policy, job(walltime=100), [job()], now=0, events=events) is not None
    assert over_limit(policy, job(walltime=40), [job()], now=0, events=events) is None


def test_look_ahead_as_seen_on_a_real_server():
    """[u:PBS_GENERIC=1]: ben runs nothing, his top job starts when ana's job ends; his 300 s job may not
    backfill, cai's identical job may (OpenPBS 23.06.06)."""
    policy = server(Limit("max_run", "u", "PBS_GENERIC", 1))
    running, top = job(user="ana", ncpus=2, walltime=100), job(user="ben", ncpus=3, walltime=100)
    events = [LimitEvent(100, running, False), LimitEvent(100, top, True), LimitEvent(200, top, False)]
    assert over_limit(policy, job(user="ben", walltime=300), [running], now=0, events=events) is not None
    assert over_limit(policy, job(user="cai", walltime=300), [running], now=0, events=events) is None


def test_look_ahead_counts_planned_ends():
    """A running job planned to end before the top job starts frees its place."""
    policy = server(Limit("max_run", "u", "PBS_GENERIC", 2))
    ending, top = job(), job()
    events = [LimitEvent(20, ending, False), LimitEvent(50, top, True)]
    assert over_limit(policy, job(walltime=100), [ending], now=0, events=events) is None


def test_look_ahead_takes_an_uncounted_end_off_only_what_the_entity_has():
    """PBS's look-ahead takes an ending job's resources off its entity's counts only where the entity already
    has an amount of that resource. An exiting job is not counted, yet its end (now + 1 s) is in the calendar:
    when none of the user's counted jobs asked for mem, that end takes no mem off, and the top job's 8gb then
    fill the user's 8gb limit; when one did, the end takes its 8gb off the user's mem and the job may run.
    Seen on a real OpenPBS 23.06.06 (max_user_res.mem 8gb on the queue): fid_cai's 1gb job of walltime 43 s
    "per-user limit reached on resource mem", her identical job of 12 s run beside it."""
    gb = 1024 * 1024
    policy = server(Limit("max_run_res.mem", "u", "PBS_GENERIC", 8 * gb))

    def asking(mem, walltime=100, user="cai"):
        return job(user=user, walltime=walltime)._replace(chunks=parse_select("1:ncpus=1:mem={}".format(mem)))

    exiting, top = asking("8gb"), asking("8gb")
    events = [LimitEvent(1, exiting, False), LimitEvent(15, top, True), LimitEvent(20, top, False)]
    without_mem = [job(user="cai", walltime=22)]
    assert over_limit(policy, asking("1gb", walltime=43), without_mem, now=0, events=events) is not None
    assert over_limit(policy, asking("1gb", walltime=12), without_mem, now=0, events=events) is None
    with_mem = [asking("512mb", walltime=22)]
    assert over_limit(policy, asking("1gb", walltime=43), with_mem, now=0, events=events) is None
    assert over_limit(policy, asking("1gb", walltime=43, user="dan"), without_mem, now=0, events=events) is None


@given(st.integers(0, 6), st.integers(0, 6), st.integers(1, 5))
def test_individual_limit_decides_whenever_set(generic, individual, running):
    """With both set, the result for ana depends only on her individual limit."""
    both = server(Limit("max_run", "u", "PBS_GENERIC", generic), Limit("max_run", "u", "ana", individual))
    alone = server(Limit("max_run", "u", "ana", individual))
    jobs = [job() for _ in range(running)]
    assert (over_limit(both, job(), jobs) is None) == (over_limit(alone, job(), jobs) is None)


@given(st.integers(0, 10), st.integers(0, 10))
def test_run_limit_is_a_count_of_running_jobs(limit, running):
    """max_run holds a job back exactly when the entity already runs at least the limit."""
    policy = server(Limit("max_run", "u", "PBS_GENERIC", limit))
    jobs = [job() for _ in range(running)] + [job(user="other") for _ in range(3)]
    assert (over_limit(policy, job(), jobs) is not None) == (running >= limit)


def test_the_failure_names_the_kind_of_limit_checked_first():
    """The first limit broken, in PBS's order (group, project, overall, user), gives the kind: the overall limit
    before the user's when both are reached."""
    policy = server(Limit("max_run", "u", "PBS_GENERIC", 1), Limit("max_run", "o", "PBS_ALL", 1))
    assert limit_failure(policy, job(), [job()]).kind == "o"
    assert limit_failure(server(Limit("max_run", "u", "PBS_GENERIC", 1)), job(), [job()]).kind == "u"
    assert limit_failure(policy, job(), []) is None


def test_totals_count_the_jobs_considered_and_started():
    """The cycle's total counts: running jobs, then jobs started and jobs considered, each counted once."""
    policy = server(Limit("max_run_res.ncpus", "u", "PBS_GENERIC", 4))
    totals = Totals(policy, [job(ncpus=1)])
    assert totals.failure(job(ncpus=3)) is None
    totals.considered(job(ncpus=2))
    assert totals.failure(job(ncpus=1)) is None and totals.failure(job(ncpus=2)).kind == "u"
    totals.started(job(ncpus=1))
    assert totals.failure(job(ncpus=1)).kind == "u"
    assert totals.failure(job(user="bob", ncpus=4)) is None
