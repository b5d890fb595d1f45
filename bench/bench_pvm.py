"""Events per second of the PVM cluster model (solsona-fig4: 3000 sintree iterations, 0 and 2
local tasks per PC, all seven modes) against bare SimPy.

Run: ``python bench/bench_pvm.py [replications]``. Each replication is a round: the model's
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
from simcore.models.pvm import run_replication

SPEC = Path(__file__).resolve().parents[1] / "config/experiments/solsona-fig4.yaml"
LOADS = (0, 2)


def rounds(replications: int):
    """Per replication: the events and wall seconds of every mode at both loads."""
    spec = load_spec(SPEC)
    for rep in range(replications):
        events, start = 0, time.perf_counter()
        for load in LOADS:
            out = run_replication(spec.params({"local_tasks": load}), spec.policies,
                                  Streams(replication_seed(2024, "bench-pvm", 0, rep)))
            events += sum(int(m["events"]) for m in out.values())
        yield events, time.perf_counter() - start


def main(replications: int = 5) -> None:
    print_paired_rates("pvm model", f"{replications} replications, 14 runs of 3000 iterations each",
                       rounds(replications))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
