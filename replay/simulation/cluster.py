"""The simulated machine: a pool of cores, or of whole nodes.

The scheduler only ever needs how many units a job occupies (its ``width``) and
how many the machine has (``capacity``). In core mode a job occupies its
requested cores. In node mode (``--nodes N --cores-per-node C``) a job occupies
whole nodes, as with ``place=excl``: its requested node count, or enough nodes
for its cores, whichever is more. Exclusive nodes keep the pool a plain count,
so the calendar stays one profile whatever the machine size; packing several
jobs on one node is not modelled.
"""

from typing import NamedTuple, Optional

__all__ = ["Cluster"]


class Cluster(NamedTuple):
    """``capacity`` units (cores, or nodes when ``cores_per_node`` is set)."""

    capacity: int
    cores_per_node: Optional[int] = None

    @classmethod
    def of_cores(cls, cores):
        """A machine of ``cores`` interchangeable cores."""
        if cores < 1:
            raise ValueError("the machine needs at least one core, not {}".format(cores))
        return cls(cores)

    @classmethod
    def of_nodes(cls, nodes, cores_per_node):
        """A machine of ``nodes`` nodes, allocated whole."""
        if nodes < 1 or cores_per_node < 1:
            raise ValueError("nodes and cores per node must be >= 1, not {} and {}".format(nodes, cores_per_node))
        return cls(nodes, cores_per_node)

    @property
    def cores(self):
        """Cores in the machine."""
        return self.capacity * (self.cores_per_node or 1)

    def width(self, job):
        """Units ``job`` occupies: cores, or whole nodes in node mode."""
        if self.cores_per_node is None:
            return job.ncpus
        for_cores = -(-job.ncpus // self.cores_per_node)
        return max(job.nodes or 0, for_cores)

    def can_run(self, job):
        """Whether the machine can run ``job`` at all: it occupies 1 to ``capacity`` units for a runtime >= 0."""
        return 1 <= self.width(job) <= self.capacity and job.runtime_s >= 0

    def cores_held(self, width):
        """Cores behind ``width`` units (for utilization)."""
        return width * (self.cores_per_node or 1)
