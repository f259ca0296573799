"""Job orders: FIFO, shortest soft walltime first, and WFP (seed 001 eq. 5)."""

from replay.simulation.policies import POLICIES, QueuedJob, with_starvation_threshold


def queued(index, submit, planned, width):
    return QueuedJob(index, submit, planned, width, planned)


def order(name, jobs, now):
    return [job.index for job in sorted(jobs, key=lambda job: POLICIES[name].key(job, now))]


JOBS = [queued(0, 0, 3600, 1), queued(1, 10, 60, 1), queued(2, 20, 600, 64)]


def test_fifo_is_submission_order():
    """fifo: by submission (index), whatever the durations."""
    assert order("fifo", JOBS, 100) == [0, 1, 2]


def test_sjf_is_shortest_planned_duration_first():
    """sjf: shortest soft walltime first."""
    assert order("sjf", JOBS, 100) == [1, 2, 0]


def test_wfp_follows_equation_5():
    """wfp: (t_queue / t_req)**3 * n, highest first."""
    # job 1: (90/60)**3 * 1 = 3.375; job 2: (80/600)**3 * 64 = 0.152; job 0: (100/3600)**3 = 0.00002
    assert order("wfp", JOBS, 100) == [1, 2, 0]


def test_wfp_order_changes_with_time():
    """A wide job waiting long enough overtakes a narrow one: the policy is not static."""
    narrow, wide = queued(0, 0, 100, 1), queued(1, 50, 100, 64)
    assert order("wfp", [narrow, wide], 60) == [0, 1]  # 0.216 against (10/100)**3 * 64 = 0.064
    assert order("wfp", [narrow, wide], 200) == [1, 0]  # 8 against 1.5**3 * 64 = 216
    assert not POLICIES["wfp"].static and POLICIES["fifo"].static and POLICIES["sjf"].static


def test_ties_fall_back_to_submission_order():
    """Equal keys keep arrival order."""
    same = [queued(3, 0, 60, 1), queued(1, 0, 60, 1)]
    assert order("sjf", same, 5) == [1, 3] and order("wfp", same, 0) == [1, 3]


def classified(index, submit, small):
    return QueuedJob(index, submit, 3600, 1, 3600, small)


def test_small_first_puts_predicted_small_jobs_first_then_arrival_order():
    """small-first: small jobs in arrival order, then large ones in arrival order."""
    jobs = [classified(0, 0, False), classified(1, 10, True), classified(2, 20, False), classified(3, 30, True)]
    assert order("small-first", jobs, 100) == [1, 3, 0, 2]


def test_small_first_has_no_starvation_threshold_by_default():
    """As the paper's Algorithm 1: a large job waits behind every small one, however long it has waited."""
    jobs = [classified(0, 0, False), classified(1, 10, True)]
    assert order("small-first", jobs, 10 ** 9) == [1, 0]
    assert POLICIES["small-first"].classifies and not POLICIES["small-first"].static


def test_starvation_threshold_sends_a_starving_job_to_the_head():
    """Ours, when asked for: a job waiting the threshold or longer goes before every small job."""
    policy = with_starvation_threshold(POLICIES["small-first"], 86400)
    jobs = [classified(0, 0, False), classified(1, 10, True)]
    assert [job.index for job in sorted(jobs, key=lambda job: policy.key(job, 86399))] == [1, 0]
    assert [job.index for job in sorted(jobs, key=lambda job: policy.key(job, 86400))] == [0, 1]
    assert with_starvation_threshold(POLICIES["fifo"], None) is POLICIES["fifo"]
    assert not with_starvation_threshold(POLICIES["fifo"], 60).static


def test_small_first_over_each_base_order():
    """small-first-sjf, -saf, -wfp: small jobs first, each class in the base order (SPF by planned duration,
    SAF by planned duration x cores, WFP by (wait / planned)^3 x cores, highest first)."""
    jobs = [QueuedJob(0, 0, 100, 8, 100, False), QueuedJob(1, 0, 50, 1, 50, False), QueuedJob(2, 0, 900, 1, 900, True),
            QueuedJob(3, 0, 300, 4, 300, True)]
    assert order("small-first-sjf", jobs, 600) == [3, 2, 1, 0]
    assert order("small-first-saf", jobs, 600) == [2, 3, 1, 0]
    assert order("saf", jobs, 600) == [1, 0, 2, 3]
    assert order("small-first-wfp", jobs, 600) == [3, 2, 0, 1]
    assert all(POLICIES["small-first" + suffix + tail].classifies for suffix in ("", "-sjf", "-saf", "-wfp")
               for tail in ("", "-no-rerun"))


def test_small_first_without_rerun_orders_the_same_and_never_reruns():
    """small-first-no-rerun: the same order and classifier as small-first, without the safeguard."""
    with_rerun, without = POLICIES["small-first"], POLICIES["small-first-no-rerun"]
    assert (without.key, without.static, without.classifier) == (with_rerun.key, with_rerun.static,
                                                                 with_rerun.classifier)
    assert with_rerun.reruns_false_small and not without.reruns_false_small
    assert not any(policy.classifies for name, policy in POLICIES.items() if not name.startswith("small-first"))
