"""Events per second of the coscheduling model (solsona-fig6 at pdt 0.5, mit 1.5 and 1.0, every
policy) against bare SimPy.

Run: ``python bench/bench_cosched.py [replications]``. Each replication is a round: the model's
event count and rate, then a bare SimPy loop firing as many timeouts; the result is the median
of the rounds' ratios (``baseline.print_paired_rates``). The node does a lone task's slice ends
in a loop where it can (``Node.lookahead``), so the bench also counts the events of the same
runs with every slice end an event (not timed) and gives the ratio on that count: the CPU time
against the work the reference fires as events.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from baseline import print_paired_rates

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.cosched import run_replication
from simcore.models.cosched.node import Node

SPEC = Path(__file__).resolve().parents[1] / "config/experiments/solsona-fig6.yaml"
LOADS = (1.5, 1.0)   # mit: 60% and 90% load


def replication(spec, rep: int) -> int:
    """Events of one replication: every policy at both loads."""
    events = 0
    for mit in LOADS:
        params = spec.params({"pdt": 0.5, "mit": mit})
        out = run_replication(params, spec.policies, Streams(replication_seed(2024, "bench-cosched", 0, rep)))
        events += sum(int(m["events"]) for m in out.values())
    return events


def rounds(spec, replications: int, fired: list[int]):
    """Per replication: its events and wall seconds (the events also kept in ``fired``)."""
    for rep in range(replications):
        start = time.perf_counter()
        events = replication(spec, rep)
        fired.append(events)
        yield events, time.perf_counter() - start


def reference_events(spec, replications: int) -> list[int]:
    """The same replications' events with every slice end an event (``Node.lookahead = False``)."""
    Node.lookahead = False
    try:
        return [replication(spec, rep) for rep in range(replications)]
    finally:
        Node.lookahead = True


def main(replications: int = 5) -> None:
    spec, fired = load_spec(SPEC), []
    ratios = print_paired_rates("cosched model", f"{replications} replications (8 runs of 10000 tasks each)",
                                rounds(spec, replications, fired))
    reference = reference_events(spec, replications)
    on_reference = [r * ref / n for r, ref, n in zip(ratios, reference, fired)]
    print(f"events with every slice end an event: {sum(reference)} ({sum(fired) / sum(reference):.3f} of them fired)")
    print(f"ratio on that count, median of {replications} rounds: {statistics.median(on_reference):.3f} "
          f"(rounds {min(on_reference):.3f}-{max(on_reference):.3f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
