"""The O(1) scheduler's timeslice, apart from the tasks: corr05's SAN reads it too, and a SAN fit
is keyed by the files it reads (``experiments.fingerprint.SAN_IMPORTS``), not by the whole task
model."""

from __future__ import annotations


def timeslice(nice: int, def_timeslice: float, min_timeslice: float) -> float:
    """O(1) scheduler timeslice in ms: max(base * (140 - static_prio) / 20, MIN_TIMESLICE)."""
    base = 4 * def_timeslice if nice < 0 else def_timeslice
    return max(base * (20 - nice) / 20, min_timeslice)
