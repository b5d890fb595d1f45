"""Processor pool-based scheduling of fork-join parallel jobs on a NUMA multiprocessor (paper 003, Zhou and Brecht
1991).

Modules: ``workload`` (the job stream: Poisson arrivals, bounded-geometric parallelism),
``pool_kernels`` (the scheduling rules, compiled: round-robin run queues, switches, the jobs'
phases), ``system`` (the machine that runs them: placement in Python, views of the state),
``policies`` (where a job's threads go and how many there are) and ``model`` (parameters,
metrics, runs).
"""

from simcore.models.pools import policies  # noqa: F401  (registers the policies)
from simcore.models.pools.model import (
    CONSTRAINTS,
    METRICS,
    PARAMETERS,
    full_params,
    monitor_replication,
    queue_probes,
    run_replication,
    simulate,
)

__all__ = ["CONSTRAINTS", "METRICS", "PARAMETERS", "full_params", "monitor_replication", "queue_probes",
           "run_replication", "simulate"]
