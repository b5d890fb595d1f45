"""What each machine knows of the others: Mosix's load vector, shared by mosix and enhanced-mosix.

Information: every ``info_interval`` seconds each machine sends its state (load = resident
processes per unit of speed, memory in use) to ``mosix_known_machines`` others drawn at random;
each machine keeps a window of the most recent entries from that many distinct senders and
forgets older ones. All machines send at the same instants (one event per round, at a random
phase), so a machine's view of the others is up to one round old. Speeds and memory sizes of
the machines are static configuration that every machine knows.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from simcore.models import Parameter
from simcore.vocabulary.domains import NONNEGATIVE_INTEGER, POSITIVE

#: Hyperparameters of the information dissemination, shared by the Mosix policies.
KNOWLEDGE = {
    "info_interval": Parameter(1.0, "Seconds between rounds in which every machine sends its load to mosix_known_machines random others.", POSITIVE),
    "mosix_known_machines": Parameter(4, "Size of a machine's window of other machines' loads (Mosix keeps a small load vector; 4 assumed).", NONNEGATIVE_INTEGER),
}


class Knowledge:
    """Per machine, a window of recently received (load, memory in use) of other machines."""

    def __init__(self, cluster, window: int, interval: float, rng: np.random.Generator):
        self.cluster = cluster
        self.n = len(cluster.machines)
        self.window = max(0, min(int(window), self.n - 1))
        self.interval = float(interval)
        self.rng = rng
        self.known: list[dict[int, tuple[float, float]]] = [{} for _ in range(self.n)]
        self._draws: list = []
        self.on_round: Callable[[list[int]], None] | None = None
        self.alert = [-math.inf] * self.n

    def start(self) -> None:
        if self.window > 0:
            self.cluster.schedule(self.rng.random() * self.interval, self._round)

    def batch(self) -> np.ndarray:
        """The recipients of the next 64 rounds (rounds x senders x window): each sender's
        ``window`` machines with the least random keys, itself excluded."""
        keys = self.rng.random((64, self.n, self.n))
        keys[:, np.arange(self.n), np.arange(self.n)] = np.inf
        return np.argpartition(keys, self.window - 1, axis=2)[:, :, :self.window]

    def _recipients(self):
        if not self._draws:
            self._draws = self.batch().tolist()[::-1]
        return self._draws.pop()

    def _round(self) -> None:
        if self.cluster.finished:
            return
        machines, window, known, alert = self.cluster.machines, self.window, self.known, self.alert
        alerted = []
        for s, to in enumerate(self._recipients()):
            m = machines[s]
            load = len(m.procs) / m.speed
            entry = (load, m.mem_used)  # shared by the recipients
            for r in to:
                view = known[r]
                if view.pop(s, None) is None:  # a new sender: the oldest leaves a full window
                    view[s] = entry
                    if len(view) > window:
                        del view[next(iter(view))]
                else:  # re-inserted last: a view lists its senders from oldest to newest
                    view[s] = entry
                if load < alert[r]:
                    alerted.append(r)
        if alerted and self.on_round is not None:
            self.on_round(alerted)
        self.cluster.schedule(self.interval, self._round)

    def moved(self, source: int, target: int, proc) -> None:
        """``source`` sent ``proc`` to ``target``: update its entry for the target."""
        view = self.known[source]
        entry = view.get(target)
        if entry is not None:
            view[target] = (entry[0] + 1.0 / self.cluster.machines[target].speed, entry[1] + proc.memory)
