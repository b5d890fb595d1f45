"""What each machine knows of the others: Mosix's load vector, shared by mosix and enhanced-mosix.

Information: every ``info_interval`` seconds each machine sends its state (load = resident
processes per unit of speed, memory in use) to ``mosix_known_machines`` others drawn at random;
each machine keeps a window of the most recent entries from that many distinct senders and
forgets older ones. All machines send at the same instants (one event per round, at a random
phase), so a machine's view of the others is up to one round old. Speeds and memory sizes of
the machines are static configuration that every machine knows.
"""

from __future__ import annotations

import numpy as np

from simcore.models import Parameter
from simcore.vocabulary.domains import NONNEGATIVE_INTEGER, POSITIVE

#: Hyperparameters of the information dissemination, shared by the Mosix policies.
KNOWLEDGE = {
    "info_interval": Parameter(
        1.0,
        "Seconds between rounds in which every machine sends its load to mosix_known_machines random others.",
        POSITIVE,
    ),
    "mosix_known_machines": Parameter(
        4,
        "Size of a machine's window of other machines' loads (Mosix keeps a small load vector; 4 assumed).",
        NONNEGATIVE_INTEGER,
    ),
}


class Knowledge:
    """The load vector's settings and draws: the window (at most the other machines), the
    interval, the first round's phase and the rounds' recipients; the rounds themselves are
    ``knowledge_kernels``."""

    def __init__(self, n: int, window: int, interval: float, rng: np.random.Generator):
        self.n = n
        self.window = max(0, min(int(window), n - 1))
        self.interval = float(interval)
        self.rng = rng

    def start(self, cluster) -> None:
        """The first round, at a random phase within the interval (none with a window of 0)."""
        if self.window > 0:
            cluster.first_round(self.rng.random() * self.interval)

    def batch(self) -> np.ndarray:
        """The recipients of the next 64 rounds (rounds x senders x window): each sender's
        ``window`` machines with the least random keys, itself excluded."""
        keys = self.rng.random((64, self.n, self.n))
        keys[:, np.arange(self.n), np.arange(self.n)] = np.inf
        return np.argpartition(keys, self.window - 1, axis=2)[:, :, :self.window]
