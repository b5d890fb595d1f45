"""The yardstick of every benchmark here: a bare SimPy loop firing the same number of timeouts."""

from __future__ import annotations

import statistics
import time
from typing import Iterable

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


def print_paired_rates(label: str, what: str, rounds: Iterable[tuple[int, float]]) -> list[float]:
    """Print the model's rate against the bare loop's, round by round: ``rounds`` yields each
    round's events and wall seconds, and the bare loop fires as many timeouts right after it.
    This virtual machine's speed drifts from minute to minute, so a ratio compares two
    measurements made next to each other; the median of the rounds' ratios is the result.
    Returns the rounds' ratios."""
    ratios, events, wall, bare = [], 0, 0.0, 0.0
    for n, seconds in rounds:
        bare_seconds = bare_rate(n)
        ratios.append(bare_seconds / seconds)
        events, wall, bare = events + n, wall + seconds, bare + bare_seconds
        print(f"  round {len(ratios)}: {n} events, model {n / seconds:,.0f}/s, bare {n / bare_seconds:,.0f}/s, "
              f"ratio {ratios[-1]:.3f}", flush=True)
    print(f"{label}: {what}, {events} events in {wall:.2f} s: {events / wall:,.0f} events/s; "
          f"bare SimPy {events / bare:,.0f} events/s")
    print(f"ratio (model / bare), median of {len(ratios)} rounds: {statistics.median(ratios):.3f} "
          f"(rounds {min(ratios):.3f}-{max(ratios):.3f})")
    return ratios
