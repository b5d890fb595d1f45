"""Events per second of the pools model (zhou91-fig3's defaults: 60 processors, D = 20, pools of
10 and 60) against bare SimPy.

Run: ``python bench/bench_pools.py [replications]``. Prints the model's event count and rate,
the rate of a bare SimPy loop firing the same number of timeouts, and their ratio.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from baseline import print_rates

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.pools import run_replication

SPEC = Path(__file__).resolve().parents[1] / "config/experiments/zhou91-fig3.yaml"
POOL_SIZES = (10, 60)


def model_rate(replications: int) -> tuple[int, float]:
    """Total events and wall seconds of ``replications`` runs of limited spanning per pool size."""
    spec = load_spec(SPEC)
    events, start = 0, time.perf_counter()
    for rep in range(replications):
        for p in POOL_SIZES:
            params = spec.params({"mean_parallelism": 20, "pool_size": p})
            out = run_replication(params, ["limited-spanning"], Streams(replication_seed(2024, "bench-pools", 0, rep)))
            events += int(out["limited-spanning"]["events"])
    return events, time.perf_counter() - start


def main(replications: int = 3) -> None:
    runs = replications * len(POOL_SIZES)
    model_rate(1)                                   # the compiled kernels loaded before timing
    events, wall = model_rate(replications)
    print_rates("pools model", f"{runs} runs of 2000 jobs ({wall / runs:.2f} s per run)", events, wall)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
