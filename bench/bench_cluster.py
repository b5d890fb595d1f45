"""Events per second of the cluster model (amir-table2's spec, four policies) against bare SimPy.

Run: ``python bench/bench_cluster.py [replications]``. Prints the model's event count and rate,
the rate of a bare SimPy loop firing the same number of timeouts, and their ratio.
"""

from __future__ import annotations

import sys
import time

from pathlib import Path

from baseline import bare_rate

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.cluster import run_replication

SPEC = Path(__file__).resolve().parents[1] / "config/experiments/amir-table2.yaml"

POLICIES = ["pvm", "enhanced-pvm", "mosix", "enhanced-mosix"]


def model_rate(replications: int) -> tuple[int, float]:
    """Total events and wall seconds of ``replications`` amir replications of the four policies."""
    params = load_spec(SPEC).params()
    events, start = 0, time.perf_counter()
    for rep in range(replications):
        out = run_replication(params, POLICIES, Streams(replication_seed(2024, "bench-cluster", 0, rep)))
        events += int(sum(m["events"] for m in out.values()))
    return events, time.perf_counter() - start


def main(replications: int = 20) -> None:
    events, wall = model_rate(replications)
    bare = bare_rate(events)
    model_eps, bare_eps = events / wall, events / bare
    print(f"cluster model: {replications} replications x {len(POLICIES)} policies, {events} events "
          f"in {wall:.2f} s ({wall / replications:.3f} s per replication): {model_eps:,.0f} events/s")
    print(f"bare SimPy:    {events} timeouts in {bare:.2f} s: {bare_eps:,.0f} events/s")
    print(f"ratio (model / bare): {model_eps / bare_eps:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
