"""Linux-like per-CPU scheduling and sched-domain balancing on NUMA machines (papers 000, 001).

Modules: ``model`` (parameters, metrics, runs), ``system`` (the machine under one policy: the
arrivals, the buffers, traces, checks and views), ``balancer`` (the sched domains as the policy
answered for them, and their buffers), ``policies`` (linux-2level, multilevel, conservative-hard,
conservative-soft), ``task`` (task description and draws), ``bursts`` (locality_scope),
``invariants`` and ``trace``; the rules are the ``*_kernels`` modules, compiled with numba
(``system_kernels`` lists them).
"""

from simcore.models.numa.model import (
    CONSTRAINTS,
    MAX_LEVELS,
    METRICS,
    PARAMETERS,
    full_params,
    make_workload,
    monitor_replication,
    queue_probes,
    run_replication,
    simulate,
    trace_replication,
)
from simcore.models.numa.trace import format_trace

__all__ = ["CONSTRAINTS", "MAX_LEVELS", "METRICS", "PARAMETERS", "format_trace", "full_params", "make_workload",
           "monitor_replication", "queue_probes", "run_replication", "simulate", "trace_replication"]
