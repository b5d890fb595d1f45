"""Simulation kernel pieces shared by every model: engine, random streams, atomic output."""

from simcore.core.engine import Engine, Timer
from simcore.core.rng import Streams, replication_seed, stable_hash

__all__ = ["Engine", "Timer", "Streams", "replication_seed", "stable_hash"]
