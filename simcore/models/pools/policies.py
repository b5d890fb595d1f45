"""Placing a job's PARA threads (section 3.2): which pools, and how many threads.

Candidate pools: the job's home pool first, then the others by increasing load (active threads;
the lowest-numbered on a tie), taken one by one until their idle processors could run all d
desired threads or the policy's number of pools f(d) is reached:
- ``no-spanning``: f(d) = 1 (the home pool only);
- ``limited-spanning``: x = round(F d / p), f(d) = 1 if x < 1, P/p if x > P/p, else x;
- ``unlimited-spanning``: f(d) = P/p.

Actual parallelism a, with p_idle the idle processors of the candidate pools:
- restricted (the three names above): a = min(d, max(p_idle, ceil(G d), 1));
- unrestricted (``-unrestricted`` names): a = d.
Threads take the candidates' idle processors in candidate order; the threads beyond p_idle go
one by one to the candidate pool with the fewest active threads (the first in candidate order
on a tie), which balances the pools' resulting loads as the paper's example does.
"""

from __future__ import annotations

import math

import numpy as np

from simcore.models import Parameter, select
from simcore.models.pools.workload import round_half_up
from simcore.models.registry import register
from simcore.vocabulary.domains import NONNEGATIVE, PROBABILITY

SPANNING_F = {
    "spanning_control": Parameter(0.8, "F of limited spanning: x = round(F d / p) pools (Table 2).", NONNEGATIVE)
}
PARALLELISM_G = {
    "parallelism_control": Parameter(
        0.5, "G of restricted parallelism: at least ceil(G d) threads (Table 2).", PROBABILITY
    )
}


class PoolPolicy:
    """The placement rule; subclasses set ``spanning`` and ``restricted``."""

    name = "base"
    spanning = "none"          # 'none', 'limited' or 'unlimited'
    restricted = True
    HYPERPARAMETERS: dict[str, Parameter] = {}

    def __init__(self, params: dict, rng: np.random.Generator):
        self.hp = select(f"pools policy '{self.name}'", self.HYPERPARAMETERS, params)
        self.rng = rng

    def allowed_pools(self, d: int, p: int, n_pools: int) -> int:
        """f(d): how many pools the job may use."""
        if self.spanning == "none":
            return 1
        if self.spanning == "unlimited":
            return n_pools
        x = round_half_up(self.hp["spanning_control"] * d / p)
        return 1 if x < 1 else min(x, n_pools)

    def parallelism(self, d: int, idle: int) -> int:
        """a from d and the candidates' idle processors."""
        if not self.restricted:
            return d
        return min(d, max(idle, math.ceil(self.hp["parallelism_control"] * d - 1e-12), 1))

    def candidates(self, d: int, home: int, system) -> list[int]:
        """The candidate pools in order, up to f(d), stopping once their idle processors reach d."""
        pools = system.pools
        order = [home] + sorted((q for q in range(len(pools)) if q != home), key=lambda q: (pools[q].active, q))
        out, idle = [], 0
        for q in order[:self.allowed_pools(d, system.p, len(pools))]:
            out.append(q)
            idle += pools[q].n_idle
            if idle >= d:
                break
        return out

    def place(self, d: int, home: int, system) -> tuple[int, list[tuple[int, int]]]:
        """(a, [(pool, threads), ...]) for a job of desired parallelism d."""
        pools = system.pools
        cands = self.candidates(d, home, system)
        idle = [pools[q].n_idle for q in cands]
        a = self.parallelism(d, sum(idle))
        counts, left = [], a
        for n in idle:
            take = min(left, n)
            counts.append(take)
            left -= take
        loads = [pools[q].active + n for q, n in zip(cands, counts)]
        while left:
            i = min(range(len(cands)), key=loads.__getitem__)
            counts[i] += 1
            loads[i] += 1
            left -= 1
        return a, list(zip(cands, counts))


def _policy(name: str, spanning: str, restricted: bool) -> type:
    hyper = {**(SPANNING_F if spanning == "limited" else {}), **(PARALLELISM_G if restricted else {})}
    doc = (f"{'No' if spanning == 'none' else spanning.capitalize()} spanning, "
           f"{'restricted' if restricted else 'unrestricted'} parallelism.")
    cls = type(name.title().replace("-", ""), (PoolPolicy,),
               {"spanning": spanning, "restricted": restricted, "HYPERPARAMETERS": hyper, "__doc__": doc,
                "__module__": __name__})
    return register("pools", name)(cls)


NoSpanning = _policy("no-spanning", "none", True)
LimitedSpanning = _policy("limited-spanning", "limited", True)
UnlimitedSpanning = _policy("unlimited-spanning", "unlimited", True)
NoSpanningUnrestricted = _policy("no-spanning-unrestricted", "none", False)
LimitedSpanningUnrestricted = _policy("limited-spanning-unrestricted", "limited", False)
UnlimitedSpanningUnrestricted = _policy("unlimited-spanning-unrestricted", "unlimited", False)
