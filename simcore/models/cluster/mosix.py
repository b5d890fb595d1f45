"""Mosix-style load balancing: stale load vectors, periodic pairwise balancing, memory ushering.

Information: every ``info_interval`` seconds each machine sends its state (load = resident
processes per unit of speed, memory in use) to ``mosix_known_machines`` others drawn at random;
each machine keeps a window of the most recent entries from that many distinct senders and
forgets older ones. All machines send at the same instants (one event per round, at a random
phase), so a machine's view of the others is up to one round old. Speeds and memory sizes of
the machines are static configuration that every machine knows.

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

import numpy as np

from simcore.models import Parameter
from simcore.models.cluster.policies import Policy, RoundRobin
from simcore.models.domains import NONNEGATIVE, NONNEGATIVE_INTEGER, POSITIVE, Choice, Real
from simcore.models.registry import register

#: Hyperparameters of the information dissemination (``Knowledge``), shared by the Mosix policies.
KNOWLEDGE = {
    "info_interval": Parameter(1.0, "Seconds between rounds in which every machine sends its load to mosix_known_machines random others.", POSITIVE),
    "mosix_known_machines": Parameter(4, "Size of a machine's window of other machines' loads (Mosix keeps a small load vector; 4 assumed).", NONNEGATIVE_INTEGER),
}
#: Hyperparameters of every policy that migrates under Mosix's rules.
MIGRATION = {
    "min_residency": Parameter(1.0, "Seconds a process must stay on a machine before it may migrate (Barak 1996).", NONNEGATIVE),
    "migration_cost": Parameter(0.0, "Seconds a migrating process makes no progress (it joins the target this much later).", NONNEGATIVE),
}


class Knowledge:
    """Per machine, a window of recently received (load, memory in use) of other machines."""

    def __init__(self, cluster, window: int, interval: float, rng: np.random.Generator):
        self.cluster = cluster
        self.n = len(cluster.machines)
        self.window = max(0, min(int(window), self.n - 1))
        self.interval = float(interval)
        self.rng = rng
        self.known: list[dict[int, list[float]]] = [{} for _ in range(self.n)]
        self._draws: list = []

    def start(self) -> None:
        if self.window > 0:
            self.cluster.schedule(self.rng.random() * self.interval, self._round)

    def _recipients(self):
        if not self._draws:
            keys = self.rng.random((64, self.n, self.n))
            keys[:, np.arange(self.n), np.arange(self.n)] = np.inf
            self._draws = np.argpartition(keys, self.window - 1, axis=2)[:, :, :self.window].tolist()[::-1]
        return self._draws.pop()

    def _round(self) -> None:
        if self.cluster.finished:
            return
        machines, window = self.cluster.machines, self.window
        for s, to in enumerate(self._recipients()):
            m = machines[s]
            for r in to:
                view = self.known[r]
                view.pop(s, None)
                view[s] = [m.load, m.mem_used]
                if len(view) > window:
                    del view[next(iter(view))]
        self.cluster.schedule(self.interval, self._round)

    def moved(self, source: int, target: int, proc) -> None:
        """``source`` sent ``proc`` to ``target``: update its entry for the target."""
        entry = self.known[source].get(target)
        if entry is not None:
            entry[0] += 1.0 / self.cluster.machines[target].speed
            entry[1] += proc.memory


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
