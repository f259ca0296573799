"""replay.fidelity.sched_log: the scheduler's cycles read from its log, and their orders against the model's."""

import gzip
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from predictor.cmdline.rejects import RejectPrinter
from replay.fidelity.decisions import DecisionCheck, Group
from replay.fidelity.sched_log import SchedulerCycle, check_orders, read_sched_log
from replay.pbs.cycle import Decision, State

LOG = """11/28/2026 22:03:50;0080;pbs_sched;Job;9.pbshost;Considering job to run
11/28/2026 22:03:51;0080;pbs_sched;Req;;Starting Scheduling Cycle
11/28/2026 22:03:51;0080;pbs_sched;Job;0.pbshost;Considering job to run
11/28/2026 22:03:51;0040;pbs_sched;Job;0.pbshost;Job run
11/28/2026 22:03:51;0080;pbs_sched;Job;1.pbshost;Considering job to run
11/28/2026 22:03:51;0400;pbs_sched;Job;1.pbshost;Insufficient amount of resource: ncpus
short;line
11/28/2026 22:03:51;0080;pbs_sched;Req;;Leaving Scheduling Cycle
11/28/2026 22:03:53;0080;pbs_sched;Req;;Starting Scheduling Cycle
11/28/2026 22:03:53;0080;pbs_sched;Req;;Leaving Scheduling Cycle
"""


def test_cycles_hold_the_jobs_considered_and_run_in_order(tmp_path):
    """A cycle per "Starting Scheduling Cycle" line, with its "Considering job to run" and "Job run" jobs in
    log order; other lines, short ones and a job's lines before the first cycle are left alone."""
    path = tmp_path / "sched.log"
    path.write_text(LOG)
    assert read_sched_log([str(path)], RejectPrinter(0)) == [
        SchedulerCycle(("0.pbshost", "1.pbshost"), ("0.pbshost",)), SchedulerCycle((), ())]


def test_a_directorys_days_are_read_in_date_order_and_only_the_days_asked(tmp_path):
    """A sched_logs directory: its YYYYMMDD files in date order, compressed or not; with ``days``, no other."""
    lines = LOG.splitlines()
    (tmp_path / "20261129").write_text("\n".join(lines[8:]) + "\n")
    with gzip.open(str(tmp_path / "20261128.gz"), "wt") as stream:
        stream.write("\n".join(lines[:8]) + "\n")
    (tmp_path / "20200101").write_text(lines[1] + "\n")
    cycles = read_sched_log([str(tmp_path)], RejectPrinter(0), days={"20261128", "20261129"})
    assert [cycle.considered for cycle in cycles] == [("0.pbshost", "1.pbshost"), ()]


def _job(name, eligible_time=0):
    return SimpleNamespace(name=name, eligible_time=eligible_time)


def _check(started, considered, queued, now=100, agrees=True):
    jobs = {job.name: job for job in queued}
    decision = Decision(tuple((jobs[name], None) for name in started), (), {}, frozenset(), tuple(considered))
    return DecisionCheck(Group(now, 0, tuple(started)), tuple(started), agrees, False, 0,
                         State(now, (), tuple(queued)), decision)


def test_a_job_only_the_model_considered_counts_only_if_eligible_before_that_second():
    """A job the model considered and the scheduler did not is left out when it became eligible that very second
    (a release the scheduler had not yet seen); from an earlier second, the orders differ."""
    queued = [_job("1"), _job("2"), _job("3", eligible_time=100)]
    cycles = [SchedulerCycle(("1", "2"), ("1",))]
    (order,) = check_orders([_check(["1"], ["1", "2", "3"], queued)], cycles)
    assert order.in_order and order.model_only == ("3",)
    queued[2] = _job("3", eligible_time=99)
    (order,) = check_orders([_check(["1"], ["1", "2", "3"], queued)], cycles)
    assert not order.in_order


def test_a_job_only_the_scheduler_considered_makes_the_orders_differ():
    (order,) = check_orders([_check(["1"], ["1"], [_job("1")])], [SchedulerCycle(("1", "2"), ("1",))])
    assert not order.in_order and order.real_only == ("2",)


def test_only_agreeing_decisions_with_one_cycle_of_their_jobs_are_compared():
    """A disagreeing decision, one whose jobs no cycle ran, and one whose jobs two cycles ran, are not compared."""
    queued = [_job("1"), _job("2")]
    cycles = [SchedulerCycle(("1", "2"), ("1",)), SchedulerCycle(("2",), ("2",)), SchedulerCycle(("2",), ("2",)),
              SchedulerCycle(("1", "2"), ())]
    checks = [_check(["1"], ["1", "2"], queued, agrees=False), _check(["2"], ["2"], queued),
              _check(["1", "2"], ["1", "2"], queued)]
    assert check_orders(checks, cycles) == []


@given(st.permutations(["1", "2", "3", "4", "5"]), st.data())
def test_the_same_jobs_in_the_same_order_agree_and_one_swap_does_not(order, data):
    queued = [_job(name) for name in order]
    cycles = [SchedulerCycle(tuple(order), (order[0],))]
    (same,) = check_orders([_check([order[0]], order, queued)], cycles)
    assert same.in_order and same.real_only == same.model_only == ()
    at = data.draw(st.integers(0, len(order) - 2))
    swapped = list(order)
    swapped[at], swapped[at + 1] = swapped[at + 1], swapped[at]
    (other,) = check_orders([_check([order[0]], swapped, queued)], cycles)
    assert not other.in_order
