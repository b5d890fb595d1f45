"""Job (re)assignment policies for the cluster model, and the interface they share.

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

A policy's own timers go through ``cluster.schedule(delay, callback)`` and move processes with
``cluster.migrate(proc, target, self.migration_cost)``. Policies read the cluster's state
(``cluster.machines``: ``procs``, ``load``, ``mem_used``, ``memory``, ``speed``) but change it
only through migrations. A policy that migrates nothing simply keeps the defaults.
"""

from __future__ import annotations

import numpy as np

from simcore.models import Parameter, select
from simcore.models.registry import register


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


@register("cluster", "pvm")
class PVM(Policy):
    """PVM's default transparent mode: round robin over the hosts, no migration."""

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.round_robin = RoundRobin()

    def assign(self, proc, cluster) -> int:
        return self.round_robin(cluster)


@register("cluster", "optimal")
class Optimal(Policy):
    """Free preemptive migration, no residency: at every arrival and completion instant the
    process counts are evened out (per unit of speed), moving the processes with most work left.

    This is the 'optimal' column of Barak et al. 1996, Table 1: with identical machines the
    counts end up differing by at most one.
    """

    def assign(self, proc, cluster) -> int:
        return min(range(len(cluster.machines)),
                   key=lambda i: (len(cluster.machines[i].procs) + 1) / cluster.machines[i].speed)

    def on_arrival(self, procs, cluster):
        return self._rebalance(cluster)

    def on_completion(self, machine, cluster):
        return self._rebalance(cluster)

    def _rebalance(self, cluster):
        machines = cluster.machines
        counts = [len(m.procs) for m in machines]
        movable = [sorted((p for p in m.procs.values() if not p.pinned), key=cluster.remaining)
                   for m in machines]
        moves = []
        while True:
            src = max((i for i in range(len(machines)) if movable[i]),
                      key=lambda i: counts[i] / machines[i].speed, default=None)
            if src is None:
                return moves
            dst = min(range(len(machines)), key=lambda i: (counts[i] + 1) / machines[i].speed)
            if (counts[dst] + 1) / machines[dst].speed >= counts[src] / machines[src].speed * (1 - 1e-12):
                return moves
            moves.append((movable[src].pop(), dst))
            counts[src] -= 1
            counts[dst] += 1


# Register the remaining policies (imported for their decorators).
from simcore.models.cluster import mosix as _mosix  # noqa: E402,F401
from simcore.models.cluster import opportunity as _opportunity  # noqa: E402,F401
