"""Events per second of the cluster model (amir-table2's spec, four policies) against bare SimPy.

Run: ``python bench/bench_cluster.py [replications]``. Prints the model's event count and rate
(the compiled rules and event loop it runs), the rate of a bare SimPy loop firing the same number
of timeouts, their ratio, and the rate of the same runs driven by SimPy (``model.COMPILED_LOOP =
False``, as a monitored run is). Mosix wakes lazily (only where a move is possible), so its runs fire fewer
events than a Mosix that wakes at every grid point while a threshold is exceeded; the same
runs are also counted under that reference (not timed), and the rate is given again on that
count: the CPU time per replication against the work a polling model would count as events.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from baseline import bare_rate, print_rates

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.cluster import model as cluster_model
from simcore.models.cluster import run_replication
from simcore.models.cluster.mosix import Mosix

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


def polling_events(replications: int) -> int:
    """The events of the same replications with Mosix waking at every grid point (the reference)."""
    lazy, Mosix.lazy = Mosix.lazy, False
    try:
        return model_rate(replications)[0]
    finally:
        Mosix.lazy = lazy


def main(replications: int = 20) -> None:
    model_rate(1)                      # warm-up: the compiled kernels loaded
    events, wall = model_rate(replications)
    print_rates("cluster model", f"{replications} replications x {len(POLICIES)} policies "
                f"({wall / replications:.3f} s per replication)", events, wall)
    cluster_model.COMPILED_LOOP = False
    _, driven = model_rate(replications)
    cluster_model.COMPILED_LOOP = True
    print(f"the same runs driven by SimPy: {events / driven:,.0f} events/s ({driven / replications:.3f} s per "
          f"replication)")
    polled = polling_events(replications)
    bare = polled / bare_rate(polled)
    print(f"on the polling reference's count ({polled} events, same runs): {polled / wall:,.0f} events/s, "
          f"ratio {polled / wall / bare:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
