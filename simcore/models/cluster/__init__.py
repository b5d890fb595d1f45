"""Job (re)assignment on a workstation cluster: PVM, Mosix and opportunity-cost policies (paper 004).

Modules: ``workload`` (job streams), ``cluster`` (machines, fair sharing, thrashing, migration),
``policies`` (the policy interface, pvm, optimal), ``mosix`` (mosix, pvm-on-mosix),
``opportunity`` (enhanced-pvm, enhanced-mosix) and ``model`` (parameters, metrics, runs).
"""

from simcore.models.cluster.model import (CONSTRAINTS, METRICS, PARAMETERS, full_params, make_workload,
                                          run_replication, simulate)

__all__ = ["CONSTRAINTS", "METRICS", "PARAMETERS", "full_params", "make_workload", "run_replication", "simulate"]
