"""The PVM-Linux cluster experiments of paper 002 (Solsona et al., section 5.2), modelled.

Modules: ``node`` (one PC's CPU under Linux 2.2's goodness scheduler), ``sintree`` (the
application, its messages and how each mode reads them), ``modes`` (the seven environments,
registered as policies) and ``model`` (parameters, metrics, runs).
"""

from simcore.models.pvm import modes  # noqa: F401  (registers the modes)
from simcore.models.pvm.model import (
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
