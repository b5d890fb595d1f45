"""PVM (its rule compiled) and the optimal bound (its rules here, in Python); the policy interface is in ``base``."""

from __future__ import annotations

from simcore.models.cluster.base import HOSTS, SPAWN, Policy
from simcore.models.registry import register


@register("cluster", "pvm")
class PVM(Policy):
    """PVM's default transparent mode: round robin over the hosts in the order of its host list
    (``host_order``), no migration (``run_kernels.assign``); each task started ``spawn_delay``
    after the previous one (``model.spawned``)."""

    HYPERPARAMETERS = {**HOSTS, **SPAWN}


@register("cluster", "optimal")
class Optimal(Policy):
    """Free preemptive migration, no residency: at every arrival and completion instant the
    process counts are evened out (per unit of speed), moving the processes with most work left.
    Processes that complete at this instant (their completion event may come later in the same
    instant) neither count nor move.

    This is the 'optimal' column of Barak et al. 1996, Table 1: with identical machines the
    counts end up differing by at most one.
    """

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.migration_cost = 0.0

    def assign(self, proc, cluster) -> int:
        return min(range(len(cluster.machines)),
                   key=lambda i: (len(cluster.machines[i].procs) + 1) / cluster.machines[i].speed)

    def on_arrival(self, procs, cluster):
        return self._rebalance(cluster)

    def on_completion(self, machine, cluster):
        return self._rebalance(cluster)

    def _rebalance(self, cluster):
        machines = cluster.machines
        staying = [[p for p in m.procs.values() if not cluster.finishing(p)] for m in machines]
        counts = [len(procs) for procs in staying]
        movable = [sorted((p for p in procs if not p.pinned), key=cluster.remaining) for procs in staying]
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

