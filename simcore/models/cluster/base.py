"""The interface every cluster policy implements, and pieces several policies share.

Every policy is a class registered with ``@register("cluster", name)`` and built as
``Policy(params, rng)`` from the model's parameter dict and its own random generator
(``streams.fresh("policy:<name>")``, so its draws never disturb the workload). It reads only
the hyperparameters it declares in ``HYPERPARAMETERS`` (``self.hp``, each checked against its
domain: a bad value is an InputError at construction).

The rules of pvm, enhanced-pvm, mosix, pvm-on-mosix and enhanced-mosix are compiled (the
``*_kernels`` modules; ``system.KINDS`` maps each class to them): their classes hold the
hyperparameters and make the draws. Any other policy (``optimal``, a policy of another package)
decides in Python; the cluster (``system.ClusterSystem``) calls:

``start(cluster)``
    once, before the first arrival;
``assign(proc, cluster) -> int``
    the machine a newly arrived process starts on (its CPU demand is unknown to policies;
    its memory size and home machine are known);
``on_arrival(procs, cluster)`` and ``on_completion(machine, cluster)``
    after arrivals are placed and after foreground processes complete on ``machine``; both
    return an iterable of ``(proc, target_machine)`` migrations for the cluster to carry out,
    each costing ``migration_cost``.

Such a policy's own timers go through ``cluster.schedule(delay, callback)`` (or
``cluster.at(time, callback, arg)`` for an exact instant), and it may move processes with
``cluster.migrate(proc, target, cost)``. It reads the cluster's state through views
(``cluster.machines``: ``procs``, ``load``, ``mem_used``, ``memory``, ``speed``, ``movable``;
``cluster.remaining(proc)``, ``cluster.finishing(proc)``) and changes it only through
migrations. A policy that migrates nothing simply keeps the defaults.
"""

from __future__ import annotations

import numpy as np

from simcore.models import Parameter, select
from simcore.vocabulary.domains import NONNEGATIVE, Choice

#: Hyperparameters of every policy that migrates under Mosix's rules.
MIGRATION = {
    "min_residency": Parameter(1.0, "Seconds a process must stay on a machine before it may migrate (Barak 1996).",
                                    NONNEGATIVE),
    "migration_cost": Parameter(0.0, "Seconds a migrating process makes no progress (it joins the target this much "
                                     "later).", NONNEGATIVE),
}


#: The hyperparameter of every policy that places round robin as PVM spawns (pvm, pvm-on-mosix,
#: mosix 'round-robin').
HOSTS = {
    "host_order": Parameter("listed", "The order of PVM's host list, which its round robin follows: 'listed' (the "
                                      "machines as configured) or 'slowest-first' (by speed, the slowest first; the "
                                      "listed order among equals). Barak 1996 leaves it open.",
                            Choice("listed", "slowest-first")),
}


#: The hyperparameter of the policies whose processes PVM's daemon spawns (pvm, pvm-on-mosix).
SPAWN = {
    "spawn_delay": Parameter(0.0, "Seconds PVM's daemon takes to start one task: the processes of a set that arrives "
                                  "together are started one after another, the k-th (from 1) k * spawn_delay after the "
                                  "set's arrival, which their times are still measured from (Barak 1996, section "
                                  "3.3.2: each task initiation request is served by the local daemon in turn).",
                             NONNEGATIVE),
}


def host_list(order: str, speeds: list[float]) -> list[int]:
    """The machines in the order round robin visits them (``HOSTS``)."""
    machines = list(range(len(speeds)))
    return machines if order == "listed" else sorted(machines, key=lambda m: speeds[m])


class Policy:
    """Defaults: place on machine 0, never migrate; no hyperparameters."""

    name = "base"
    HYPERPARAMETERS: dict[str, Parameter] = {}
    migration_cost = 0.0  # seconds a migration takes; migrating policies declare it

    def __init__(self, params: dict, rng: np.random.Generator):
        self.hp = select(f"cluster policy '{self.name}'", self.HYPERPARAMETERS, params)
        self.rng = rng
        # seconds to start each process of a set arriving together: 0 unless the policy declares SPAWN
        self.spawn_delay = float(self.hp.get("spawn_delay", 0.0))

    def start(self, cluster) -> None:
        pass

    def assign(self, proc, cluster) -> int:
        return 0

    def on_arrival(self, procs, cluster):
        return ()

    def on_completion(self, machine: int, cluster):
        return ()
