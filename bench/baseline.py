"""The yardstick of every benchmark here: a bare SimPy loop firing the same number of timeouts."""

from __future__ import annotations

import time

import simpy


def bare_rate(events: int) -> float:
    """Wall seconds of a bare SimPy process yielding ``events`` timeouts."""
    env = simpy.Environment()

    def loop():
        for _ in range(events):
            yield env.timeout(1.0)

    env.process(loop())
    start = time.perf_counter()
    env.run()
    return time.perf_counter() - start
