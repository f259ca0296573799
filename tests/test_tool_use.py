"""replay.simulation.tool_use: a model run's metrics split between the tool's adopters and the others."""

from replay.shared.predictors import resolved
from replay.simulation.cluster import Cluster
from replay.simulation.engine import SchedulerSettings
from replay.simulation.metrics import ScheduleColumns
from replay.simulation.runs import simulate_all
from replay.simulation.tool_use import COLUMNS, tool_use_table
from replay.traces.trace import Job


def _jobs():
    return [Job(str(index), "u{}".format(index % 5), index * 10, 50 + index, 3600, 1 + index % 3)
            for index in range(40)]


def _table(specs):
    predictors = resolved(specs)
    runs = simulate_all(_jobs(), predictors, Cluster.of_cores(4), SchedulerSettings())
    columns = {name: ScheduleColumns(run, 10) for name, run in runs.items()}
    return tool_use_table(runs, columns, predictors)


def test_no_model_no_table():
    """Without a model predictor there is no split to show."""
    assert _table(("user", "v1")) is None


def test_adopters_and_others_partition_the_jobs():
    """Per run, the adopters' and the others' jobs add up to all jobs; 40 % of 5 users adopt; 'user' is the
    baseline of the wait change."""
    table = _table(("user", "model:adoption=0.4:seed=1"))
    rows = [dict(zip([column.key for column in COLUMNS], row)) for row in table.rows]
    for name in ("user", "model:adoption=0.4:seed=1"):
        mine = [row for row in rows if row["predictor"] == name]
        assert sum(row["jobs"] for row in mine) == 40
        assert [(row["group"], row["users"]) for row in mine] == [("adopters", 2), ("others", 3)]
    assert all(row["wait_mean_change"] in (0.0, None) for row in rows if row["predictor"] == "user")
