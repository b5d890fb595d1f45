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
from simcore.vocabulary.domains import AnyOf, Choice, Real
from simcore.models.registry import register

#: Hyperparameters of the opportunity cost (``CostModel``).
COST = {
    "cost_base": Parameter("n", "Base of the exponential cost: 'n' = number of machines (Amir section 4) or a number > 1.",
                           AnyOf(Choice("n"), Real(gt=1))),
    "cpu_bound": Parameter("running-max", "Opportunity cost's CPU capacity L: power of two above the largest load 'running-max' (seen so far) or 'current' (now).",
                           Choice("running-max", "current")),
    "cost_cpu_load": Parameter("processes", "CPU load in the opportunity cost: 'processes' (resident processes per unit of speed) or 'effective' (times the thrashing factor while memory in use exceeds the memory).",
                               Choice("processes", "effective")),
}


class CostModel:
    """Marginal costs of placing a process, with the running power-of-two load bound ``L``."""

    def __init__(self, hp: dict, n_machines: int, thrashing_factor: float = 1.0):
        base = hp["cost_base"]
        self.base = float(n_machines if base == "n" else base)
        if self.base <= 1:
            raise InputError("cluster policy: parameter cost_base = 'n' needs a cluster of at least two machines.")
        self.log_base = math.log(self.base)
        self.bound = 1.0
        self.running = hp["cpu_bound"] == "running-max"
        self.tau = float(thrashing_factor) if hp["cost_cpu_load"] == "effective" else 1.0

    def observe(self, cluster) -> None:
        """Set ``L`` to the smallest power of two above the largest load: seen so far, or now."""
        load = cluster.max_load if self.running else max(m.load for m in cluster.machines)
        if load >= self.bound or not self.running:
            self.bound = 2.0 ** (math.floor(math.log2(load)) + 1) if load > 0 else 1.0

    def marginal(self, machine, mem_used: float, load: float, memory: float) -> float:
        """Cost increase of adding a process of ``memory`` MB to ``machine`` at the given state."""
        lb, cap, bound = self.log_base, machine.memory, self.bound
        mem = _exp(lb * (mem_used + memory) / cap) - _exp(lb * mem_used / cap)
        before, after = load, load + 1.0 / machine.speed
        if mem_used > cap:
            before *= self.tau
        if mem_used + memory > cap:
            after *= self.tau
        cpu = _exp(lb * after / bound) - _exp(lb * before / bound)
        return mem + cpu

    def prices(self, machine, mem_used: float, load: float) -> tuple[float, float, float, float, float]:
        """What ``marginal(machine, mem_used, load, memory)`` computes without the process:
        (memory, mem_used, memory-cost term, CPU cost if the process fits, CPU cost if it does
        not). ``cheapest`` finishes the sum for each process, to the bit as ``marginal`` does."""
        lb, cap, bound = self.log_base, machine.memory, self.bound
        before, after = load, load + 1.0 / machine.speed
        if mem_used > cap:
            before *= self.tau
        start = _exp(lb * before / bound)
        after_over = after * self.tau
        return cap, mem_used, _exp(lb * mem_used / cap), _exp(lb * after / bound) - start, _exp(lb * after_over / bound) - start


def cheapest(prices: dict, memory: float, log_base: float) -> tuple[int, float]:
    """The machine of least marginal cost for a process of ``memory`` MB, and that cost, from the
    ``CostModel.prices`` of each candidate (the first in order among equals, as ``min`` picks)."""
    best, best_cost, exp = -1, math.inf, math.exp
    for j, (cap, mem_used, mem_term, fit, over) in prices.items():
        used = mem_used + memory
        x = log_base * used / cap
        cost = (exp(x if x < 700.0 else 700.0) - mem_term) + (over if used > cap else fit)  # _exp, inlined
        if best < 0 or cost < best_cost:
            best, best_cost = j, cost
    return best, best_cost


def _exp(x: float) -> float:
    return math.exp(x if x < 700.0 else 700.0)


@register("cluster", "enhanced-pvm")
class EnhancedPVM(Policy):
    """Each process goes to the machine of least marginal cost (current, exact state); no migration."""

    HYPERPARAMETERS = COST

    def start(self, cluster) -> None:
        self.costs = CostModel(self.hp, len(cluster.machines), cluster.tau)

    def on_change(self, machine, cluster) -> None:
        self.costs.observe(cluster)

    def assign(self, proc, cluster) -> int:
        return least_cost(self.costs, proc, cluster)


def least_cost(costs: CostModel, proc, cluster) -> int:
    """The machine where ``proc`` adds the least cost, judged on the exact current state."""
    best, best_cost = 0, math.inf
    for m in cluster.machines:
        cost = costs.marginal(m, m.mem_used, m.load, proc.memory)
        if cost < best_cost:
            best, best_cost = m.index, cost
    return best


@register("cluster", "enhanced-mosix")
class EnhancedMosix(Policy):
    """Opportunity-cost placement and reassignment under Mosix's knowledge limits.

    Initial assignment is that of ``enhanced-pvm`` (the arrival's marginal cost on every
    machine, exact state): Mosix's knowledge limits concern its migration decisions. After
    every arrival and completion, each machine checks each of its processes that has met
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
        "reassign_factor": Parameter(2.0, "Factor of the stability condition for reassignment (Amir section 3.3).", Real(ge=1)),
        "reassign_rule": Parameter("stability", "enhanced-mosix: 'stability' (section 3.3: cost when placed > factor x cost elsewhere) or 'greedy' (section 4: move when another known machine is cheaper now).",
                                   Choice("stability", "greedy")),
    }

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.factor = float(self.hp["reassign_factor"])
        self.greedy = self.hp["reassign_rule"] == "greedy"
        self.residency = float(self.hp["min_residency"])
        self.migration_cost = float(self.hp["migration_cost"])
        self._placed_cost: dict[int, tuple[float, float]] = {}  # placement token -> (L, cost when placed)

    def start(self, cluster) -> None:
        self.costs = CostModel(self.hp, len(cluster.machines), cluster.tau)
        self.knowledge = Knowledge(cluster, self.hp["mosix_known_machines"], self.hp["info_interval"], self.rng)
        self.knowledge.start()

    def on_change(self, machine, cluster) -> None:
        self.costs.observe(cluster)

    def assign(self, proc, cluster) -> int:
        return least_cost(self.costs, proc, cluster)

    def on_arrival(self, procs, cluster):
        return self._reassign(cluster)

    def on_completion(self, machine, cluster):
        return self._reassign(cluster)

    def _reassign(self, cluster):
        moves = []
        now, machines, costs = cluster.now, cluster.machines, self.costs
        factor = 1.0 if self.greedy else self.factor
        for m in machines:
            known = self.knowledge.known[m.index]
            if not known or m.movable == 0:
                continue
            prices = None  # of the known machines, built at the first process that may move
            gone, gone_mem = 0, 0.0  # the processes this scan already sends away, and their memory
            for p in m.procs.values():  # moves are made after the scan
                if p.pinned or now - p.placed_at < self.residency:
                    continue
                if prices is None:
                    prices = {j: costs.prices(machines[j], e[1], e[0]) for j, e in known.items()}
                target, cost = cheapest(prices, p.memory, costs.log_base)
                if self._cost_here(m, p, gone, gone_mem) > factor * cost:
                    moves.append((p, target))
                    gone, gone_mem = gone + 1, gone_mem + p.memory
                    self.knowledge.moved(m.index, target, p)
                    entry = known[target]
                    prices[target] = costs.prices(machines[target], entry[1], entry[0])
        return moves

    def _cost_here(self, m, p, gone: int, gone_mem: float) -> float:
        """The process's marginal cost on its machine: now, without the ``gone`` processes
        (``gone_mem`` MB) the scan already sends away (greedy), or when it was placed (stability)."""
        if self.greedy:
            rest = len(m.procs) - gone - 1
            return self.costs.marginal(m, m.mem_used - gone_mem - p.memory, rest / m.speed, p.memory)
        bound, cost = self._placed_cost.get(p.token, (None, 0.0))
        if bound != self.costs.bound:  # placed since, or L has grown: compute it again
            cost = self.costs.marginal(m, p.h_mem, p.h_load, p.memory)
            self._placed_cost[p.token] = (self.costs.bound, cost)
        return cost
