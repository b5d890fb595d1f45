"""Events per second of the numa model on the 64-CPU HP Superdome (16 cells x 4) with 400 tasks,
against a bare SimPy loop firing the same number of timeouts in the same run.

Run: ``python bench/bench_numa.py [replications] [topology]``. Prints the model's events and rate,
the bare rate, their ratio, and the wall time of one corr05-fig13-like replication (400 tasks,
linux-2level and multilevel).
"""

from __future__ import annotations

import sys
import time

from baseline import bare_rate

from simcore.core.rng import Streams, replication_seed
from simcore.models.numa import run_replication

POLICIES = ["linux-2level", "multilevel", "conservative-hard", "conservative-soft"]


def model_rate(replications: int, topology: str) -> tuple[int, float]:
    """Total events and wall seconds of ``replications`` replications of the four policies."""
    events, start = 0, time.perf_counter()
    for rep in range(replications):
        out = run_replication({"topology": topology, "n_tasks": 400}, POLICIES,
                              Streams(replication_seed(2024, "bench-numa", 0, rep)))
        events += int(sum(m["events"] for m in out.values()))
    return events, time.perf_counter() - start


def main(replications: int = 3, topology: str = "superdome-16x4") -> None:
    events, wall = model_rate(replications, topology)
    bare = bare_rate(events)
    model_eps, bare_eps = events / wall, events / bare
    start = time.perf_counter()
    run_replication({"topology": topology, "n_tasks": 400}, ["linux-2level", "multilevel"],
                    Streams(replication_seed(2024, "bench-numa-fig13", 0, 0)))
    fig13 = time.perf_counter() - start
    print(f"machine: {topology}")
    print(f"numa model: {replications} replications x {len(POLICIES)} policies x 400 tasks, {events} events "
          f"in {wall:.2f} s: {model_eps:,.0f} events/s")
    print(f"bare SimPy: {events} timeouts in {bare:.2f} s: {bare_eps:,.0f} events/s")
    print(f"ratio (model / bare): {model_eps / bare_eps:.3f}")
    print(f"one corr05-fig13-like replication (400 tasks, linux-2level + multilevel): {fig13:.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, sys.argv[2] if len(sys.argv) > 2 else "superdome-16x4")
