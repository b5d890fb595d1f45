"""Events per second of the PVM cluster model (solsona-fig4: 3000 sintree iterations, 0 and 2
local tasks per PC, all seven modes) against bare SimPy.

Run: ``python bench/bench_pvm.py [replications]``. Prints the model's event count and rate,
the rate of a bare SimPy loop firing the same number of timeouts, and their ratio.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from baseline import print_rates

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.pvm import run_replication

SPEC = Path(__file__).resolve().parents[1] / "config/experiments/solsona-fig4.yaml"
LOADS = (0, 2)


def model_rate(replications: int) -> tuple[int, float, int]:
    """Total events, wall seconds and runs of ``replications`` replications per load, every mode."""
    spec = load_spec(SPEC)
    events, runs, start = 0, 0, time.perf_counter()
    for rep in range(replications):
        for load in LOADS:
            out = run_replication(spec.params({"local_tasks": load}), spec.policies,
                                  Streams(replication_seed(2024, "bench-pvm", 0, rep)))
            events += sum(int(m["events"]) for m in out.values())
            runs += len(out)
    return events, time.perf_counter() - start, runs


def main(replications: int = 1) -> None:
    events, wall, runs = model_rate(replications)
    print_rates("pvm model", f"{runs} runs of 3000 iterations ({wall / runs:.2f} s per run)", events, wall)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
