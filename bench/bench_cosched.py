"""Events per second of the coscheduling model (solsona-fig6 at pdt 0.5, mit 1.5 and 1.0, every
policy) against bare SimPy.

Run: ``python bench/bench_cosched.py [replications]``. Each replication is a round: the model's
event count and rate, then a bare SimPy loop firing as many timeouts; the result is the median
of the rounds' ratios (``baseline.print_paired_rates``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from baseline import print_paired_rates

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.cosched import run_replication

SPEC = Path(__file__).resolve().parents[1] / "config/experiments/solsona-fig6.yaml"
LOADS = (1.5, 1.0)   # mit: 60% and 90% load


def rounds(replications: int, runs: list[int]):
    """Per replication: the events and wall seconds of every policy at both loads (runs counted in ``runs``)."""
    spec = load_spec(SPEC)
    for rep in range(replications):
        events, start = 0, time.perf_counter()
        for mit in LOADS:
            params = spec.params({"pdt": 0.5, "mit": mit})
            out = run_replication(params, spec.policies, Streams(replication_seed(2024, "bench-cosched", 0, rep)))
            events += sum(int(m["events"]) for m in out.values())
            runs.append(len(out))
        yield events, time.perf_counter() - start


def main(replications: int = 5) -> None:
    runs: list[int] = []
    print_paired_rates("cosched model", f"{replications} replications of 10000 tasks per run",
                       rounds(replications, runs))
    print(f"({sum(runs)} runs)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
