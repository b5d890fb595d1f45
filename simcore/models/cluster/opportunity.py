"""Opportunity-cost assignment and reassignment (Amir et al., sections 3.3 and 4).

A machine's cost is ``b**(mem_used/memory) + b**(cpu_load/L)`` with base ``b`` = ``cost_base``
(``"n"``: the number of machines). The CPU load is resident processes per unit of speed: a
process on machine ``i`` with ``k`` others gets ``speed_i/(k+1)`` of a reference CPU, so ``1/speed_i``
is the load one more process adds there (the related-machines load of section 3.2). With
``cost_cpu_load: effective`` that load is multiplied by the thrashing factor while the machine's
memory in use exceeds its memory (section 2's effective CPU load), so the cost sees the cliff. ``L`` is the
smallest power of two above the largest CPU load seen so far anywhere in the cluster. A process
goes where its marginal cost (the cost increase it causes) is least; its memory is known on
arrival, its CPU demand never is.
"""

from __future__ import annotations

import math

from simcore.errors import InputError
from simcore.models import Parameter
from simcore.models.cluster.base import MIGRATION, Policy
from simcore.models.cluster.knowledge import KNOWLEDGE, Knowledge
from simcore.models.registry import register
from simcore.vocabulary.domains import AnyOf, Choice, Real

#: Hyperparameters of the opportunity cost (``CostModel``).
COST = {
    "cost_base": Parameter("n",
                           "Base of the exponential cost: 'n' = number of machines (Amir section 4) or a number > 1.",
                           AnyOf(Choice("n"), Real(gt=1))),
    "cpu_bound": Parameter("running-max", "Opportunity cost's CPU capacity L: power of two above the largest load "
                                          "'running-max' (seen so far) or 'current' (now).",
                           Choice("running-max", "current")),
    "cost_cpu_load": Parameter("processes", "CPU load in the opportunity cost: 'processes' (resident processes per "
                                            "unit of speed) or 'effective' (times the thrashing factor while memory in "
                                            "use exceeds the memory).",
                               Choice("processes", "effective")),
}


class CostModel:
    """The opportunity cost's settings: the base and its log, the starting bound ``L`` = 1,
    whether ``L`` follows the largest load seen so far (``running``) or now, and the factor of a
    thrashing machine's load (1: none). The costs are ``opportunity_kernels``."""

    def __init__(self, hp: dict, n_machines: int, thrashing_factor: float = 1.0):
        base = hp["cost_base"]
        self.base = float(n_machines if base == "n" else base)
        if self.base <= 1:
            raise InputError("cluster policy: parameter cost_base = 'n' needs a cluster of at least two machines.")
        self.log_base = math.log(self.base)
        self.bound = 1.0
        self.running = hp["cpu_bound"] == "running-max"
        self.tau = float(thrashing_factor) if hp["cost_cpu_load"] == "effective" else 1.0


@register("cluster", "enhanced-pvm")
class EnhancedPVM(Policy):
    """Each process goes to the machine of least marginal cost (current, exact state); no migration."""

    HYPERPARAMETERS = COST

    def start(self, cluster) -> None:
        self.costs = CostModel(self.hp, len(cluster.machines), cluster.tau)


@register("cluster", "enhanced-mosix")
class EnhancedMosix(Policy):
    """Opportunity-cost placement and reassignment under Mosix's knowledge limits.

    Section 4: Enhanced Mosix "has the same limits on its knowledge as unenhanced Mosix". With
    ``placement_knowledge`` 'window' (the default) a job is placed where Mosix starts it, at its
    home machine, by what that machine knows: each process goes to the machine of least marginal
    cost among the home (its exact state) and the machines of the home's window (their load and
    memory as last heard; the home wins a tie); the home's view then counts the process on the
    machine it went to. 'exact' places as ``enhanced-pvm`` does, on every machine's exact state
    (a reading: the text gives Enhanced Mosix no such knowledge). After every arrival and completion, each machine
    checks each of its processes that has met
    ``min_residency`` against the machines in its window. Rule ``stability`` (section 3.3): the
    marginal cost the process had when placed here must not exceed ``reassign_factor`` times
    its marginal cost on a known machine. Rule ``greedy`` (section 4, "minimise the sum of the
    costs"): the process moves when a known machine is cheaper for it than staying is now, the
    machine's state counted without the processes the same scan already sends away (so only as
    many leave as make staying no dearer than going). A violator moves to the known machine
    where its marginal cost is least; that machine's known state grows by it at once.
    """

    HYPERPARAMETERS = {
        **KNOWLEDGE,
        **MIGRATION,
        **COST,
        "reassign_factor": Parameter(2.0, "Factor of the stability condition for reassignment (Amir section 3.3).",
                                          Real(ge=1)),
        "placement_knowledge": Parameter("window", "enhanced-mosix's first placement: 'window' (section 4: Mosix's "
                                                   "knowledge limits: the home machine and the machines its window "
                                                   "holds) or 'exact' (every machine's exact state, as enhanced-pvm).",
                                         Choice("window", "exact")),
        "reassign_rule": Parameter("stability", "enhanced-mosix: 'stability' (section 3.3: cost when placed > factor x "
                                                "cost elsewhere) or 'greedy' (section 4: move when another known "
                                                "machine is cheaper now).",
                                   Choice("stability", "greedy")),
    }

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.factor = float(self.hp["reassign_factor"])
        self.greedy = self.hp["reassign_rule"] == "greedy"
        self.placement_window = self.hp["placement_knowledge"] == "window"
        self.residency = float(self.hp["min_residency"])
        self.migration_cost = float(self.hp["migration_cost"])

    def start(self, cluster) -> None:
        self.costs = CostModel(self.hp, len(cluster.machines), cluster.tau)
        self.knowledge = Knowledge(
            len(cluster.machines), self.hp["mosix_known_machines"], self.hp["info_interval"], self.rng
        )
        self.knowledge.start(cluster)
