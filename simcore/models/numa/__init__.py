"""Linux-like per-CPU scheduling and sched-domain load balancing on NUMA machines (papers 000, 001).

Modules: ``task`` (task description and state, per-task burst/I-O draws), ``runqueue`` (O(1)
priority arrays, load average), ``scheduler`` (dispatch, timeslices, I/O, placement,
migration), ``balancer`` (periodic, newly idle and active balancing over sched domains),
``policies`` (linux-2level, multilevel, conservative-hard, conservative-soft), ``model``
(parameters, metrics, runs), ``invariants`` and ``trace``.
"""

from simcore.models.numa.model import (CONSTRAINTS, MAX_LEVELS, METRICS, PARAMETERS, full_params, make_workload,
                                       monitor_replication, queue_probes, run_replication, simulate, trace_replication)
from simcore.models.numa.trace import format_trace

__all__ = ["CONSTRAINTS", "MAX_LEVELS", "METRICS", "PARAMETERS", "format_trace", "full_params", "make_workload",
           "monitor_replication", "queue_probes", "run_replication", "simulate", "trace_replication"]
