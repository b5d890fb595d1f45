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
"""

from __future__ import annotations

import math

from simcore.models import Parameter
from simcore.models.cluster.base import MIGRATION, Policy, RoundRobin
from simcore.models.cluster.knowledge import KNOWLEDGE, Knowledge
from simcore.models.domains import NONNEGATIVE, POSITIVE, Choice, Real
from simcore.models.registry import register


@register("cluster", "mosix")
class Mosix(Policy):
    """Processes start per ``mosix_initial`` (default: home machine), then Mosix balancing."""

    HYPERPARAMETERS = {
        **KNOWLEDGE,
        "balance_interval": Parameter(1.0, "Seconds between load-balancing attempts of a machine that has excess load or memory.", POSITIVE),
        **MIGRATION,
        "load_threshold": Parameter(1.0, "Migrate only if the load difference exceeds this (one CPU-bound process; Barak 1996 section 4).", NONNEGATIVE),
        "memory_threshold": Parameter(0.9, "Fraction of memory in use above which Mosix moves a process to a known machine with free memory.", Real(gt=0, le=1)),
        "mosix_initial": Parameter("home", "Where mosix starts a process: 'home' (its home machine), 'random' (policy's own draw) or 'round-robin'.",
                                   Choice("home", "random", "round-robin")),
    }

    def __init__(self, params, rng):
        super().__init__(params, rng)
        self.round_robin = RoundRobin()
        self.residency = float(self.hp["min_residency"])
        self.threshold = float(self.hp["load_threshold"])
        self.memory_threshold = float(self.hp["memory_threshold"])
        self.period = float(self.hp["balance_interval"])
        self.migration_cost = float(self.hp["migration_cost"])

    @property
    def initial(self) -> str:
        """Where a process starts: 'home', 'random' or 'round-robin'."""
        return self.hp["mosix_initial"]

    def start(self, cluster) -> None:
        n = len(cluster.machines)
        self.knowledge = Knowledge(cluster, self.hp["mosix_known_machines"], self.hp["info_interval"], self.rng)
        self.phase = (self.rng.random(n) * self.period).tolist()
        self.timers = [None] * n
        self.cluster = cluster
        self.knowledge.start()

    def assign(self, proc, cluster) -> int:
        if self.initial == "home":
            return proc.home
        if self.initial == "random":
            return int(self.rng.integers(len(cluster.machines)))
        return self.round_robin(cluster)

    # --- timers -------------------------------------------------------------------------

    def _wants(self, m) -> bool:
        return m.movable > 0 and (m.load > self.threshold or m.mem_used > self.memory_threshold * m.memory)

    def on_change(self, machine, cluster) -> None:
        if self.timers[machine] is None and self._wants(cluster.machines[machine]):
            now, phase = cluster.now, self.phase[machine]
            delay = phase + (math.floor((now - phase) / self.period) + 1) * self.period - now
            if delay < 1e-9 * self.period:  # rounding put the next wake-up on this instant
                delay += self.period
            self.timers[machine] = cluster.schedule(delay, lambda: self._tick(machine))

    def _tick(self, machine: int) -> None:
        self.timers[machine] = None
        cluster = self.cluster
        if cluster.finished:
            return
        move = self.choose(machine, cluster)
        if move is not None:
            proc, target = move
            self.knowledge.moved(machine, target, proc)
            cluster.migrate(proc, target, self.migration_cost)  # re-arms through on_change
        else:
            self.on_change(machine, cluster)

    # --- decisions ----------------------------------------------------------------------

    def choose(self, i: int, cluster):
        """The one ``(proc, target)`` move machine ``i`` makes now, or None."""
        m = cluster.machines[i]
        known = self.knowledge.known[i]
        if not known:
            return None
        now = cluster.now
        eligible = [p for p in m.procs.values() if not p.pinned and now - p.placed_at >= self.residency]
        if not eligible:
            return None
        if m.mem_used > self.memory_threshold * m.memory:
            move = self._memory_move(eligible, known, cluster)
            if move is not None:
                return move
        return self._load_move(m, eligible, known, cluster)

    def _memory_move(self, eligible, known, cluster):
        machines = cluster.machines
        target = max(known, key=lambda j: machines[j].memory - known[j][1])
        room = self.memory_threshold * machines[target].memory - known[target][1]
        fitting = [p for p in eligible if p.memory <= room]
        if not fitting:
            return None
        return max(fitting, key=lambda p: p.memory), target

    def _load_move(self, m, eligible, known, cluster):
        machines = cluster.machines
        load = m.load
        if load <= self.threshold:
            return None
        target = min(known, key=lambda j: known[j][0])
        other = known[target][0]
        if load - other <= self.threshold or other + 1.0 / machines[target].speed >= load:
            return None
        free = machines[target].memory - known[target][1]
        for p in sorted(eligible, key=lambda p: p.arrival):
            if p.memory <= free:
                return p, target
        return None


@register("cluster", "pvm-on-mosix")
class PVMOnMosix(Mosix):
    """PVM's round-robin placement, then Mosix balancing (Barak et al. 1996, Table 1 column 6)."""

    HYPERPARAMETERS = {k: p for k, p in Mosix.HYPERPARAMETERS.items() if k != "mosix_initial"}
    initial = "round-robin"  # PVM's placement, fixed
