"""Job (re)assignment on a workstation cluster: PVM, Mosix and opportunity-cost policies (paper 004).

Modules: ``workload`` (job streams), ``cluster`` (machines, fair sharing, thrashing, migration),
``base`` (the policy interface, round robin), ``knowledge`` (Mosix's load vector), ``policies``
(pvm, optimal), ``mosix`` (mosix, pvm-on-mosix), ``opportunity`` (enhanced-pvm, enhanced-mosix)
and ``model`` (parameters, metrics, runs); ``compiled_cluster`` runs the same rules compiled,
from the ``*_kernels`` modules (``layout``, ``sharing``, ``knowledge``, ``mosix``, ``opportunity``,
``run``). The package imports the policy modules, which registers their classes; no policy
module imports another.
"""

from simcore.models.cluster import mosix, opportunity, policies  # noqa: F401  (registers the policies)
from simcore.models.cluster.model import (CONSTRAINTS, METRICS, PARAMETERS, full_params, make_workload,
                                          monitor_replication, queue_probes, run_replication, simulate)

__all__ = ["CONSTRAINTS", "METRICS", "PARAMETERS", "full_params", "make_workload", "monitor_replication", "queue_probes",
           "run_replication", "simulate"]
