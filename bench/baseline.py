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


def print_rates(label: str, what: str, events: int, wall: float) -> None:
    """Print the model's event rate (``what``: the runs measured), the bare loop's on as many
    events, and their ratio."""
    bare = bare_rate(events)
    model_eps, bare_eps = events / wall, events / bare
    width = max(len(label), len("bare SimPy")) + 1
    print(f"{label + ':':<{width}} {what}, {events} events in {wall:.2f} s: {model_eps:,.0f} events/s")
    print(f"{'bare SimPy:':<{width}} {events} timeouts in {bare:.2f} s: {bare_eps:,.0f} events/s")
    print(f"ratio (model / bare): {model_eps / bare_eps:.3f}")
