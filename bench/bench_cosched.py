"""Events per second of the coscheduling model (solsona-fig6 at pdt 0.5, mit 1.5 and 1.0, every
policy) against bare SimPy.

Run: ``python bench/bench_cosched.py [replications]``. Prints the model's event count and rate,
the rate of a bare SimPy loop firing the same number of timeouts, and their ratio.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from baseline import print_rates

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.cosched import run_replication

SPEC = Path(__file__).resolve().parents[1] / "config/experiments/solsona-fig6.yaml"
LOADS = (1.5, 1.0)   # mit: 60% and 90% load


def model_rate(replications: int) -> tuple[int, float, int]:
    """Total events, wall seconds and runs of ``replications`` replications per load, every policy."""
    spec = load_spec(SPEC)
    events, runs, start = 0, 0, time.perf_counter()
    for rep in range(replications):
        for mit in LOADS:
            params = spec.params({"pdt": 0.5, "mit": mit})
            out = run_replication(params, spec.policies, Streams(replication_seed(2024, "bench-cosched", 0, rep)))
            events += sum(int(m["events"]) for m in out.values())
            runs += len(out)
    return events, time.perf_counter() - start, runs


def main(replications: int = 3) -> None:
    events, wall, runs = model_rate(replications)
    print_rates("cosched model", f"{runs} runs of 10000 tasks ({wall / runs:.2f} s per run)", events, wall)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
