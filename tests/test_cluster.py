"""The machine: core pool, or whole nodes."""

import pytest

from replay.simulation.cluster import Cluster
from replay.traces.trace import Job


def job(ncpus, nodes=None):
    return Job("1", "u", 0, 10, 10, ncpus, nodes=nodes)


def test_core_mode_width_is_the_requested_cores():
    """Without nodes a job occupies its cores."""
    assert Cluster.of_cores(100).width(job(7)) == 7


def test_node_mode_rounds_cores_up_to_whole_nodes():
    """17 cores on 16-core nodes take 2 nodes."""
    assert Cluster.of_nodes(10, 16).width(job(17)) == 2


def test_node_mode_honours_a_larger_node_request():
    """4 cores spread on 3 nodes take 3 nodes."""
    assert Cluster.of_nodes(10, 16).width(job(4, nodes=3)) == 3


def test_cores_counts_every_node():
    """Capacity in nodes, cores for utilization."""
    cluster = Cluster.of_nodes(10, 16)
    assert (cluster.capacity, cluster.cores, cluster.cores_held(2)) == (10, 160, 32)


def test_empty_machine_is_refused():
    """A machine of no core is a configuration error."""
    with pytest.raises(ValueError):
        Cluster.of_cores(0)


@pytest.mark.parametrize("ncpus, runtime, nodes, runs", [(1, 0, None, True), (100, 10, None, True),
                                                         (0, 10, None, False), (101, 10, None, False),
                                                         (4, -1, None, False), (1, 10, 11, False)])
def test_can_run_needs_one_to_capacity_units_and_no_negative_runtime(ncpus, runtime, nodes, runs):
    """A job runs on the machine iff it occupies 1 to capacity units for a runtime >= 0."""
    cluster = Cluster.of_cores(100) if nodes is None else Cluster.of_nodes(10, 16)
    assert cluster.can_run(Job("1", "u", 0, runtime, 10, ncpus, nodes=nodes)) is runs

