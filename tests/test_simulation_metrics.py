"""Simulation metrics on a hand-made schedule."""

import numpy as np
import pytest

from replay.simulation.cluster import Cluster
from replay.simulation.engine import ScheduledJob
from replay.simulation.metrics import (
    GROUP_COLUMNS,
    ScheduleColumns,
    group_metrics,
    machine_metrics,
    schedule_tables,
)
from replay.traces.trace import Job


def done(job_id, submit, start, end, ncpus=1, reservation=None, extensions=0, killed=False, queue=None, soft=None):
    job = Job(job_id, "u", submit, end - start, 1000, ncpus, queue=queue)
    return ScheduledJob(job, start, end, end - start, ncpus, 1000, soft, soft, reservation, extensions, killed)


SCHEDULE = [done("a", 0, 0, 100, ncpus=2), done("b", 0, 100, 105, reservation=90, extensions=2),
            done("c", 50, 60, 7260, reservation=60, killed=True, queue="long")]


def test_bounded_slowdown_uses_tau_for_short_jobs():
    """b waited 100 s and ran 5 s: (100 + 5) / max(5, 10) = 10.5; a never waited: 1."""
    assert ScheduleColumns(SCHEDULE, 10).bsld.tolist() == pytest.approx([1.0, 10.5, (10 + 7200) / 7200])


def test_group_metrics_count_waits_extensions_reservations_and_kills():
    """Waits 0, 100, 10; b broke its reservation by 10 s; c was killed."""
    columns = ScheduleColumns(SCHEDULE, 10)
    values = group_metrics(columns, np.ones(3, dtype=bool))
    jobs, wait_mean, wait_median, _, wait_max = values[:5]
    assert (jobs, wait_mean, wait_median, wait_max) == (3, pytest.approx(110 / 3), 10.0, 100.0)
    top_jobs, broken, delay, killed = values[-4:]
    assert (top_jobs, broken, delay, killed) == (2, 1, 10.0, 1)


def test_utilization_is_core_seconds_over_machine_and_makespan():
    """(2*100 + 5 + 7200) core-s on 4 cores over 7260 s."""
    columns = ScheduleColumns(SCHEDULE, 10)
    utilization, makespan = machine_metrics(columns, Cluster.of_cores(4))
    assert makespan == 7260 and utilization == pytest.approx(7405 / (4 * 7260))


def test_tables_split_by_runtime_class_and_queue():
    """c (2 h ran) is <=2h; two queues give a by-queue table."""
    tables, _ = schedule_tables({"user": SCHEDULE}, 10, Cluster.of_cores(4))
    assert [table.key for table in tables] == ["summary", "by_runtime_class", "by_queue"]
    by_class = {row[1]: row[2] for row in tables[1].rows}
    assert by_class == {"<=2h": 3, "2-24h": 0, ">24h": 0}
    assert sorted(row[1] for row in tables[2].rows) == ["-", "long"]


def test_share_past_soft_walltime_and_median_ratio_of_those_jobs():
    """a ran 2x its soft walltime, c 120x, b within it, d had none: 50 % past, median ratio (2 + 120) / 2."""
    schedule = [done("a", 0, 0, 100, soft=50, extensions=1), done("b", 0, 0, 5, soft=10),
                done("c", 0, 0, 7200, soft=60, extensions=119), done("d", 0, 0, 100)]
    values = dict(zip([column.key for column in GROUP_COLUMNS],
                      group_metrics(ScheduleColumns(schedule, 10), np.ones(4, dtype=bool))))
    assert (values["past_soft_walltime"], values["past_soft_walltime_ratio_median"]) == (0.5, 61.0)
    assert "extensions_per_job" not in values


def test_no_job_past_its_soft_walltime_has_no_ratio():
    """Nobody ran past: 0 %, and the ratio is shown as '-'."""
    values = dict(zip([column.key for column in GROUP_COLUMNS],
                      group_metrics(ScheduleColumns([done("a", 0, 0, 5, soft=10)], 10), np.ones(1, dtype=bool))))
    assert (values["past_soft_walltime"], values["past_soft_walltime_ratio_median"]) == (0.0, None)


def test_runtime_is_the_scheduled_jobs_own():
    """The metrics take each job's simulated runtime from its ScheduledJob, the one place the engine decides it."""
    scheduled = [SCHEDULE[0], SCHEDULE[1]._replace(runtime_s=3)]
    assert ScheduleColumns(scheduled, 10).runtime.tolist() == [100, 3]
