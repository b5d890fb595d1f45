"""Balancing policies of the numa model, and the small interface they share.

A policy is registered with ``@register("numa", name)`` and built as ``Policy(params, rng)``; it
reads only the hyperparameters it declares in ``HYPERPARAMETERS`` (``self.hp``, each checked
against its domain: a bad value is an InputError at construction). The model asks it for its
sched-domain builder (``builder``), calls ``setup(machine, domains)`` once, and then, for each
domain as the balancer is built:

``balances(cpu, level, kind) -> bool``
    whether domain ``level`` of ``cpu`` takes part in ``kind`` balancing: "periodic" (a busy CPU's
    periodic balancing), "idle" (periodic balancing while the CPU is idle) or "newidle";
``imbalance_pct(cpu, level, default) -> int``
    the imbalance threshold of that domain (default: the domain's own).

Those answers depend on the policy's class, its hyperparameters and the domains alone, which
``answers_key()`` names: a batch's replications ask once. A policy whose answers depend on more
(its random stream, say) returns None there and is asked for every run.

Which task may move and where a new task starts are rules of the kernels (``migrate_kernels.
policy_allows``, ``scheduler_kernels.create``); a policy chooses among them and gives their
tables with ``rules()``. A policy with another move or placement rule adds it there, as a new
rule code (docs/extending.md): a subclass that defines ``can_migrate`` or ``place`` is refused.
"""

from __future__ import annotations

import numpy as np

from simcore.models import Parameter, select
from simcore.models.registry import register
from simcore.topology.domains import BUILDERS
from simcore.vocabulary.domains import NONNEGATIVE_INTEGER, Choice, Real

SCOPES = ("all", "periodic", "every-periodic")   # layout_kernels.SCOPE_ALL, SCOPE_BUSY, SCOPE_TICKS


def zone_size(levels: int) -> int:
    """Mehta's load-balancing zone: the nearest S = levels // 2 + 1 of four or more levels, else all."""
    return levels // 2 + 1 if levels >= 4 else levels


class LinuxPolicy:
    """Linux 2.6.11 balancing on the domains of ``builder``; placement by exec balancing."""

    name = "base"
    builder = "linux-2level"
    HYPERPARAMETERS = {
        "placement": Parameter("exec", "New-task placement: 'exec' (2.6.11 sched_balance_exec over the highest exec "
                                       "domain) or 'parent' (stay on the parent's CPU).",
                               Choice("exec", "parent")),
    }

    def __init__(self, params: dict, rng: np.random.Generator):
        self.hp = select(f"numa policy '{self.name}'", self.HYPERPARAMETERS, params)
        self.rng = rng
        self.placement = self.hp["placement"]

    def setup(self, machine, domains) -> None:
        """Called once the machine and every CPU's domains are known (Linux needs neither)."""

    def balances(self, cpu: int, level: int, kind: str) -> bool:
        return True

    def imbalance_pct(self, cpu: int, level: int, default: int) -> int:
        return default

    def answers_key(self):
        """What ``balances`` and ``imbalance_pct`` depend on besides the domains (module docstring):
        the class and the hyperparameters; None: ask for every run."""
        return type(self), repr(sorted(self.hp.items()))

    def rules(self) -> dict:
        """The kernels' rules this policy runs and their tables: new tasks on their parent's CPU
        (``parent``; else 2.6.11 exec balancing) and, for the conservative policies, the rules of
        ``migrate_kernels.policy_allows``."""
        return {"parent": self.placement == "parent", "conservative": False}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("can_migrate", "place"):
            if name in vars(cls):
                raise TypeError(f"numa policy class {cls.__name__} defines {name}: the numa model's moves and "
                                "placements are rules of its kernels, chosen by rules() (docs/extending.md)")


@register("numa", "linux-2level")
class Linux2Level(LinuxPolicy):
    """Stock Linux: a CPU domain per node and one node domain over the machine (corr05, mehta)."""

    builder = "linux-2level"


@register("numa", "multilevel")
class Multilevel(LinuxPolicy):
    """Corrêa et al.'s n-level domains from the SLIT, one level per distinct distance."""

    builder = "multilevel"


class Conservative(LinuxPolicy):
    """Mehta and Kanungo's conservative balancer on multilevel domains.

    Zone: for a CPU with L >= 4 domain levels the load-balancing zone is its lowest
    S = L // 2 + 1 levels (all levels when L < 4). The hard policy balances only inside the
    zone; the soft one also outside it, with the imbalance threshold multiplied by
    ``soft_threshold_factor`` (25% -> 50%). Both refuse migrations that take a task farther
    from its home node and migrations of *aged* tasks (``max_migrations`` reached); the hard
    policy also refuses tasks whose home node lies outside the pulling CPU's zone.
    """

    builder = "multilevel"
    hard = True
    HYPERPARAMETERS = {
        **LinuxPolicy.HYPERPARAMETERS,
        "conservative_domains": Parameter("multilevel", "Domain builder under the conservative policies (mehta's "
                                                        "levels I-VI are multilevel domains).",
                                          Choice(*BUILDERS)),
        "max_migrations": Parameter(3, "Ageing: a task migrated this many times is never migrated again (mehta gives "
                                       "no value; assumed).", NONNEGATIVE_INTEGER),
        "rules_scope": Parameter("all", "Balancing the selection rules (distance, ageing, hard zone of the home node) "
                                        "apply to: 'all' (every balancer migration: mehta IV.B-C state the rules for "
                                        "any migration), 'periodic' (a busy CPU's periodic balancing) or "
                                        "'every-periodic' (every CPU's periodic balancing, busy or idle, not "
                                        "newly-idle balancing: Algorithm 1 is 'for periodic load balancing' and its "
                                        "balancing processor 'is the idle processor or the first processor'; 'idle "
                                        "load balancing', on becoming idle, is 'done in the usual manner').",
                                 Choice(*SCOPES)),
        "aged_memory": Parameter("stays", "Where an aged task's memory is once it is frozen (mehta IV.C: 'its memory "
                                          "pages can be migrated to that node'): 'stays' on its home node, or 'moves' "
                                          "to the node of the migration that aged it, which becomes its home (memory "
                                          "speed, distance rule, zone).",
                                 Choice("stays", "moves")),
        "distance_rule": Parameter("home", "Refused migrations: 'home' = destination farther from the task's home node "
                                           "than the source; 'hop' = hop distance greater than the source's distance "
                                           "from home (literal reading of mehta IV.B).",
                                   Choice("home", "hop")),
    }

    def __init__(self, params, rng):
        super().__init__(params, rng)
        hp = self.hp
        self.builder = hp["conservative_domains"]
        self.max_migrations = int(hp["max_migrations"])
        self.rule = hp["distance_rule"]
        self.rules_scope = hp["rules_scope"]

    def setup(self, machine, domains) -> None:
        self.zone = [zone_size(len(doms)) for doms in domains]
        self.node_of = [int(n) for n in machine.cpu_node]
        self.dist = [[float(x) for x in row] for row in machine.distances]
        first = {}
        for c, n in enumerate(self.node_of):
            first.setdefault(n, c)
        # home node inside the zone of CPU c  <=>  a CPU of that node is in c's top zone domain
        self.in_zone = [[first[n] in domains[c][self.zone[c] - 1].span if domains[c] else True
                         for n in range(len(self.dist))] for c in range(len(domains))]

    def rules(self) -> dict:
        """``LinuxPolicy.rules`` with the conservative rules of moves (``migrate_kernels.policy_allows``:
        aged tasks, moves away from home by ``distance_rule``, the hard zone) and their tables."""
        return {"parent": self.placement == "parent", "conservative": True, "max_migrations": self.max_migrations,
                "home": self.rule == "home", "hard": self.hard, "scope": SCOPES.index(self.rules_scope),
                "aged_memory": self.hp["aged_memory"] == "moves", "dist": self.dist, "in_zone": self.in_zone}

    def balances(self, cpu, level, kind):
        """The hard zone: levels beyond it take no part in the kinds of balancing ``zone_scope``
        names (a busy CPU's periodic balancing; every CPU's; or every kind)."""
        if not self.hard or kind not in ZONE_KINDS[self.scope]:
            return True
        return level < self.zone[cpu]

    def imbalance_pct(self, cpu, level, default):
        if self.hard or level < self.zone[cpu]:
            return default
        return int(round(100 + self.factor * (default - 100)))


ZONE_KINDS = {"periodic": ("periodic",), "every-periodic": ("periodic", "idle"), "all": ("periodic", "idle", "newidle")}


@register("numa", "conservative-hard")
class ConservativeHard(Conservative):
    hard = True
    HYPERPARAMETERS = {
        **Conservative.HYPERPARAMETERS,
        "zone_scope": Parameter("periodic", "Balancing the hard zone restricts: 'periodic' (a busy CPU's periodic "
                                            "balancing only), 'every-periodic' (every CPU's periodic balancing, busy "
                                            "or idle: Algorithm 1's balancing processor 'is the idle processor or the "
                                            "first processor') or 'all' (also newly-idle balancing: 'strictly no "
                                            "balancing is done out of the load balancing zone').",
                                Choice(*ZONE_KINDS)),
    }

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.scope = self.hp["zone_scope"]


@register("numa", "conservative-soft")
class ConservativeSoft(Conservative):
    hard = False
    HYPERPARAMETERS = {
        **Conservative.HYPERPARAMETERS,
        "soft_threshold_factor": Parameter(2.0, "Soft policy: outside the zone the imbalance threshold (imbalance_pct "
                                                "- 100) is multiplied by this (mehta: 25% -> 50%); at least 1, as the "
                                                "soft policy balances far levels less eagerly.",
                                           Real(ge=1)),
    }

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.factor = float(self.hp["soft_threshold_factor"])
