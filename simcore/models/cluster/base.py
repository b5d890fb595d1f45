"""The interface every cluster policy implements, and pieces several policies share.

Every policy is a class registered with ``@register("cluster", name)`` and built as
``Policy(params, rng)`` from the model's parameter dict and its own random generator
(``streams.fresh("policy:<name>")``, so its draws never disturb the workload). It reads only
the hyperparameters it declares in ``HYPERPARAMETERS`` (``self.hp``, each checked against its
domain: a bad value is an InputError at construction). The cluster calls:

``start(cluster)``
    once, before the first arrival (e.g. to start information dissemination);
``assign(proc, cluster) -> int``
    the machine a newly arrived process starts on (its CPU demand is unknown to policies;
    its memory size and home machine are known);
``on_arrival(procs, cluster)`` and ``on_completion(machine, cluster)``
    after arrivals are placed and after foreground processes complete on ``machine``; both
    return an iterable of ``(proc, target_machine)`` migrations for the cluster to carry out;
``on_change(machine, cluster)``
    after any change of a machine's process set (a notification, e.g. to arm a timer).

A policy's own timers go through ``cluster.schedule(delay, callback)`` (or ``cluster.at(time,
callback, arg)`` for an exact instant) and move processes with
``cluster.migrate(proc, target, self.migration_cost)``. Policies read the cluster's state
(``cluster.machines``: ``procs``, ``load``, ``mem_used``, ``memory``, ``speed``) but change it
only through migrations. A policy that migrates nothing simply keeps the defaults.
"""

from __future__ import annotations

import numpy as np

from simcore.models import Parameter, select
from simcore.vocabulary.domains import NONNEGATIVE

#: Hyperparameters of every policy that migrates under Mosix's rules.
MIGRATION = {
    "min_residency": Parameter(1.0, "Seconds a process must stay on a machine before it may migrate (Barak 1996).", NONNEGATIVE),
    "migration_cost": Parameter(0.0, "Seconds a migrating process makes no progress (it joins the target this much later).", NONNEGATIVE),
}


class Policy:
    """Defaults: place on machine 0, never migrate; no hyperparameters."""

    name = "base"
    HYPERPARAMETERS: dict[str, Parameter] = {}
    migration_cost = 0.0  # seconds a migration takes; migrating policies declare it

    def __init__(self, params: dict, rng: np.random.Generator):
        self.hp = select(f"cluster policy '{self.name}'", self.HYPERPARAMETERS, params)
        self.rng = rng

    def start(self, cluster) -> None:
        pass

    def assign(self, proc, cluster) -> int:
        return 0

    def on_arrival(self, procs, cluster):
        return ()

    def on_completion(self, machine: int, cluster):
        return ()

    def on_change(self, machine: int, cluster) -> None:
        pass


class RoundRobin:
    """Machines in their listed order, cyclically."""

    def __init__(self) -> None:
        self.next = 0

    def __call__(self, cluster) -> int:
        index = self.next % len(cluster.machines)
        self.next = index + 1
        return index
