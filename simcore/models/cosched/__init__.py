"""Dynamic coscheduling on a mono-processor node of a non-dedicated cluster (paper 002, Solsona et al.).

Modules: ``workload`` (the task stream: Poisson arrivals, exponential service, distributed tasks
and their messages), ``node`` (the round-robin ready queue, blocking receives, message buffers),
``policies`` (rr, sdca, dynamic, implicit) and ``model`` (parameters, metrics, runs).
"""

from simcore.models.cosched import policies  # noqa: F401  (registers the policies)
from simcore.models.cosched.model import (
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
