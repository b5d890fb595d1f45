"""Job (re)assignment on a workstation cluster: PVM, Mosix and opportunity-cost policies (paper 004).

Modules: ``workload`` (job streams), ``system`` (the run: machines, processes, the calendar, views
for policies, monitors and tests), the compiled rules by concern (``layout_kernels`` the state and
the calendar's slots, ``sharing_kernels`` fair sharing and thrashing, ``knowledge_kernels`` the
load vector, ``mosix_kernels``, ``opportunity_kernels``, ``run_kernels`` the policies' hooks and
the timers), the policies' classes, which hold their hyperparameters and make their draws
(``base`` the interface, ``policies`` pvm and optimal, whose rules alone are Python, ``knowledge``,
``mosix`` mosix and pvm-on-mosix, ``opportunity`` enhanced-pvm and enhanced-mosix), and ``model``
(parameters, metrics, runs). The package imports the policy modules, which registers their
classes; no policy module imports another.
"""

from simcore.models.cluster import mosix, opportunity, policies  # noqa: F401  (registers the policies)
from simcore.models.cluster.model import (
    CONSTRAINTS,
    METRICS,
    PARAMETERS,
    full_params,
    make_workload,
    monitor_replication,
    queue_probes,
    run_replication,
    simulate,
)

__all__ = ["CONSTRAINTS", "METRICS", "PARAMETERS", "full_params", "make_workload", "monitor_replication",
           "queue_probes", "run_replication", "simulate"]
