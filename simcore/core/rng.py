"""Named random streams derived from (root seed, experiment, cell, replication).

Replication r of cell c of experiment X uses ``SeedSequence(root, spawn_key=(h(X), c, r))``;
each purpose ("arrivals", "demand", "policy:mosix", ...) gets its own child stream keyed by
the hash of its name, so adding a stream never shifts another and results do not depend on
how replications are batched.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_hash(text: str) -> int:
    """A 32-bit hash of ``text`` that is the same on every machine and Python run."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def replication_seed(root: int, experiment: str, cell: int, rep: int) -> np.random.SeedSequence:
    """The seed sequence of one replication of one cell."""
    return np.random.SeedSequence(root, spawn_key=(stable_hash(experiment), cell, rep))


class Streams:
    """Independent named generators under one replication seed."""

    def __init__(self, seed: np.random.SeedSequence):
        self.seed = seed
        self._cache: dict[str, np.random.Generator] = {}

    @property
    def spawn_key(self) -> str:
        return ".".join(str(k) for k in self.seed.spawn_key)

    def __getitem__(self, name: str) -> np.random.Generator:
        if name not in self._cache:
            child = np.random.SeedSequence(
                self.seed.entropy, spawn_key=tuple(self.seed.spawn_key) + (stable_hash(name),)
            )
            self._cache[name] = np.random.Generator(np.random.PCG64(child))
        return self._cache[name]

    def fresh(self, name: str) -> np.random.Generator:
        """A new generator for ``name`` starting from its first draw (for re-running a policy)."""
        self._cache.pop(name, None)
        return self[name]
