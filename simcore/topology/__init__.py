"""NUMA machines from SLIT distance matrices, and the sched-domain hierarchies built on them."""

from simcore.topology.loader import catalog, load_topology, this_machine
from simcore.topology.machine import Machine, TopologyError

__all__ = ["Machine", "TopologyError", "catalog", "load_topology", "this_machine"]
