"""Mosix-style load balancing: stale load vectors, periodic pairwise balancing, memory ushering.

Information: each machine's view of the others (``knowledge.Knowledge``): every
``info_interval`` seconds each machine sends its load and memory in use to
``mosix_known_machines`` others drawn at random, and keeps the latest from that many senders.

Balancing: while a machine holds a process it could give away and either its load exceeds
``load_threshold`` or its memory in use exceeds ``memory_threshold`` of its memory, it wakes
every ``balance_interval`` seconds (on its own grid with a random phase). At each wake-up it
moves at most one process that has stayed at least ``min_residency`` seconds:

* memory-depletion prevention first: when over the memory threshold, the largest process that
  keeps the best-known target (most free memory) under that threshold goes there;
* else load balancing: to the least-loaded known machine if the load difference exceeds
  ``load_threshold`` and the target, with the process added, stays less loaded than the source
  is now; the oldest process (by arrival) whose memory fits in the target goes, since long-lived
  processes are the likeliest to keep running (Harchol-Balter and Downey, cited by both papers).

After a move the sender adds the process to its entry for the target, so it does not send a
whole burst to the same machine on one stale entry.

Wake-ups are lazy: a machine wakes only at a grid point where it could move something. What
``choose`` reads changes only at an information round (the machine's view), at a change of its
own processes, and when a process reaches ``min_residency``. So a change of its processes, or a
round that brings it the news it waits for, arms the next grid point only if ``_blocked`` finds
nothing in the way (some process it may give away fits the target of the memory rule or of the
load rule, whatever its age: a necessary condition for a move). After a wake-up that moves
nothing the machine sleeps, unless that still holds and a process is too young: then it wakes at
the first grid point where one is old enough. A sleeping machine waits for news of a load low
enough when only the least load it knows stood in the way, else for any news (``_blocked``
gives that level, the machine's alert). A wake-up it skips would have moved nothing, so every
run is the one of waking at every grid point while a threshold is exceeded (``Mosix.lazy =
False``), with fewer events.

The rules are compiled, in ``mosix_kernels`` (the names above are its functions); this class
holds the hyperparameters and makes the draws (each machine's phase, the first round's, and the
'random' placement).
"""

from __future__ import annotations

from simcore.models import Parameter
from simcore.models.cluster.base import HOSTS, MIGRATION, SPAWN, Policy
from simcore.models.cluster.knowledge import KNOWLEDGE, Knowledge
from simcore.models.registry import register
from simcore.vocabulary.domains import NONNEGATIVE, POSITIVE, Choice, Real


@register("cluster", "mosix")
class Mosix(Policy):
    """Processes start per ``mosix_initial`` (default: home machine), then Mosix balancing."""

    lazy = True  # False: wake at every grid point while a threshold is exceeded (the reference)

    HYPERPARAMETERS = {
        **KNOWLEDGE,
        "balance_interval": Parameter(
            1.0, "Seconds between load-balancing attempts of a machine that has excess load or memory.", POSITIVE
        ),
        **MIGRATION,
        "load_threshold": Parameter(
            1.0,
            "Migrate only if the load difference exceeds this (one CPU-bound process; Barak 1996 section 4).",
            NONNEGATIVE,
        ),
        "memory_threshold": Parameter(
            0.9,
            "Fraction of memory in use above which Mosix moves a process to a known machine with free memory.",
            Real(gt=0, le=1),
        ),
        "mosix_initial": Parameter(
            "home",
            "Where mosix starts a process: 'home' (its home machine), 'random' (policy's own draw) or 'round-robin'.",
            Choice("home", "random", "round-robin"),
        ),
        **HOSTS,
    }

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.residency = float(self.hp["min_residency"])
        self.threshold = float(self.hp["load_threshold"])
        self.memory_threshold = float(self.hp["memory_threshold"])
        self.period = float(self.hp["balance_interval"])
        self.migration_cost = float(self.hp["migration_cost"])

    @property
    def assigns_in_python(self) -> bool:
        """Whether this policy places processes in Python (its own draw, 'random')."""
        return self.initial == "random"

    @property
    def initial(self) -> str:
        """Where a process starts: 'home', 'random' or 'round-robin'."""
        return self.hp["mosix_initial"]

    def start(self, cluster) -> None:
        """The draws made before the first arrival: every machine's phase, then the first round's."""
        n = len(cluster.machines)
        self.knowledge = Knowledge(n, self.hp["mosix_known_machines"], self.hp["info_interval"], self.rng)
        self.phase = (self.rng.random(n) * self.period).tolist()
        self.knowledge.start(cluster)

    def assign(self, proc, cluster) -> int:
        """'random': the policy's own draw (the kernels place 'home' and 'round-robin')."""
        return int(self.rng.integers(len(cluster.machines)))


@register("cluster", "pvm-on-mosix")
class PVMOnMosix(Mosix):
    """PVM's round-robin placement, each task spawned as PVM spawns it (``spawn_delay``), then
    Mosix balancing (Barak et al. 1996, Table 1 column 6)."""

    HYPERPARAMETERS = {**{k: p for k, p in Mosix.HYPERPARAMETERS.items() if k != "mosix_initial"}, **SPAWN}
    initial = "round-robin"  # PVM's placement, fixed
