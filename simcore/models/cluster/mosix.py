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
gives that level; ``Knowledge.alert`` holds it). A wake-up it skips would have moved nothing, so every run is the one of waking at every grid point
while a threshold is exceeded (``Mosix.lazy = False``, the reference that the tests compare
with, process by process), with fewer events.
"""

from __future__ import annotations

import math

from simcore.models import Parameter
from simcore.models.cluster.base import MIGRATION, Policy, RoundRobin
from simcore.models.cluster.knowledge import KNOWLEDGE, Knowledge
from simcore.vocabulary.domains import NONNEGATIVE, POSITIVE, Choice, Real
from simcore.models.registry import register


@register("cluster", "mosix")
class Mosix(Policy):
    """Processes start per ``mosix_initial`` (default: home machine), then Mosix balancing."""

    lazy = True  # False: wake at every grid point while a threshold is exceeded (the reference)

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
    def assigns_in_python(self) -> bool:
        """Whether this policy places processes in Python (its own draw, 'random')."""
        return self.initial == "random"

    @property
    def initial(self) -> str:
        """Where a process starts: 'home', 'random' or 'round-robin'."""
        return self.hp["mosix_initial"]

    def start(self, cluster) -> None:
        n = len(cluster.machines)
        self.knowledge = Knowledge(cluster, self.hp["mosix_known_machines"], self.hp["info_interval"], self.rng)
        self.phase = (self.rng.random(n) * self.period).tolist()
        self.timers = [None] * n
        self.due = [math.inf] * n
        self.cluster = cluster
        if self.lazy:
            self.knowledge.on_round = self._on_round
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

    def _grid(self, machine: int, k: int) -> float:
        """The ``k``-th wake-up time of ``machine``'s grid: phase + k * balance_interval."""
        return self.phase[machine] + k * self.period

    def _next_index(self, machine: int, now: float) -> int:
        """The first grid index strictly after ``now`` (within 1e-9 balance intervals counts as now)."""
        k = math.floor((now - self.phase[machine]) / self.period) + 1
        while self._grid(machine, k) - now < 1e-9 * self.period:
            k += 1
        return k

    def _arm(self, machine: int, at: float) -> None:
        """Make ``machine``'s next wake-up no later than ``at``."""
        if at < self.due[machine]:
            if self.timers[machine] is not None:
                self.timers[machine].cancel()
            self.due[machine] = at
            self.timers[machine] = self.cluster.at(at, self._tick, machine)

    def _settle(self, machine: int, m, woke: bool = False) -> None:
        """After a change (``woke``: a wake-up that moved nothing), while ``machine`` wants to
        balance: arm the next grid point if it could move now (lazy; the reference always does),
        or after a wake-up the first grid point where a process now too young has stayed
        ``min_residency``; else tell the rounds what news could open a move (``_blocked``)."""
        alert = -math.inf
        if self._wants(m):
            blocked = self._blocked(machine, m) if self.lazy else None
            if blocked is not None:
                alert = blocked
            elif not woke:
                self._arm(machine, self._grid(machine, self._next_index(machine, self.cluster.now)))
            else:
                now = self.cluster.now
                young = [p.placed_at for p in m.procs.values() if not p.pinned and now - p.placed_at < self.residency]
                if young:
                    self._arm(machine, self._grid(machine, self._old_enough_index(machine, min(young), now)))
                alert = math.inf  # a round may offer a target that an old enough process fits
        self.knowledge.alert[machine] = alert

    def on_change(self, machine, cluster) -> None:
        self._settle(machine, cluster.machines[machine])

    def _on_round(self, alerted: list[int]) -> None:
        """A round brought these machines news they asked for: arm those that could now move."""
        machines = self.cluster.machines
        for i in sorted(set(alerted)):
            self._settle(i, machines[i])

    def _tick(self, machine: int) -> None:
        self.timers[machine], self.due[machine] = None, math.inf
        cluster = self.cluster
        if cluster.finished:
            return
        move = self.choose(machine, cluster)
        if move is not None:
            proc, target = move
            self.knowledge.moved(machine, target, proc)
            cluster.migrate(proc, target, self.migration_cost)  # re-arms through on_change
        else:
            self._settle(machine, cluster.machines[machine], woke=self.lazy)

    def _old_enough_index(self, machine: int, placed_at: float, now: float) -> int:
        """The first grid index after ``now`` at which a process placed at ``placed_at`` has stayed
        ``min_residency`` (as ``choose`` tests it)."""
        first = self._next_index(machine, now)
        k = max(first, math.ceil((placed_at + self.residency - self.phase[machine]) / self.period))
        while self._grid(machine, k) - placed_at < self.residency:
            k += 1
        while k > first and self._grid(machine, k - 1) - placed_at >= self.residency:
            k -= 1
        return k

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

    def _memory_target(self, known, machines) -> tuple[int, float]:
        """The known machine with most free memory, and the room (MB) it has below the threshold."""
        target = max(known, key=lambda j: machines[j].memory - known[j][1])
        return target, self.memory_threshold * machines[target].memory - known[target][1]

    def _memory_move(self, eligible, known, cluster):
        target, room = self._memory_target(known, cluster.machines)
        fitting = [p for p in eligible if p.memory <= room]
        if not fitting:
            return None
        return max(fitting, key=lambda p: p.memory), target

    def _blocked(self, i: int, m) -> float | None:
        """None if ``choose`` could move something with this view and these processes, whatever
        their ages (a necessary condition for a move): a process it may give away fits the room
        of the memory rule's target (memory above its threshold) or the load rule's target. Else
        the load below which news from a round could open a move: when the least load known is
        too close to its own (and memory is under its threshold) nothing but a lower load can;
        otherwise (an empty view, memory over its threshold, the target's speed or free memory)
        any news can (inf)."""
        known = self.knowledge.known[i]
        if not known:
            return math.inf
        over = m.mem_used > self.memory_threshold * m.memory
        if over:
            room = self._memory_target(known, self.cluster.machines)[1]
            if any(p.memory <= room and not p.pinned for p in m.procs.values()):
                return None
        load = m.load
        target, free, least = self._load_target(load, known, self.cluster.machines)
        if target is None:
            if over or load - least > self.threshold:
                return math.inf
            return load - self.threshold + 1e-9 * max(1.0, load)  # a margin for rounding
        if any(p.memory <= free and not p.pinned for p in m.procs.values()):
            return None
        return math.inf

    def _load_target(self, load: float, known, machines) -> tuple[int | None, float, float]:
        """The load rule on this view: (the least-loaded known machine, its free memory, the
        least load known), the target None when the rule allows no move (the least load within
        ``load_threshold`` of ``load``, or the target as loaded as the source with the process
        added). Loads are never negative, so a load within the threshold moves nothing."""
        least = min(known.values())[0]  # entries are (load, memory)
        if load - least <= self.threshold:
            return None, 0.0, least
        target = next(j for j, entry in known.items() if entry[0] == least)  # the first with it
        if least + 1.0 / machines[target].speed >= load:
            return None, 0.0, least
        return target, machines[target].memory - known[target][1], least

    def _load_move(self, m, eligible, known, cluster):
        target, free, _ = self._load_target(m.load, known, cluster.machines)
        if target is None:
            return None
        for p in sorted(eligible, key=lambda p: p.arrival):
            if p.memory <= free:
                return p, target
        return None


@register("cluster", "pvm-on-mosix")
class PVMOnMosix(Mosix):
    """PVM's round-robin placement, then Mosix balancing (Barak et al. 1996, Table 1 column 6)."""

    HYPERPARAMETERS = {k: p for k, p in Mosix.HYPERPARAMETERS.items() if k != "mosix_initial"}
    initial = "round-robin"  # PVM's placement, fixed
