"""Memory and CPU time a replication needs as the parameter it grows with grows, and a SAN
descriptor's building time per product-space state: the source of
:data:`simcore.resources.MODEL_MEMORY`, :data:`~simcore.resources.MODEL_TIME` and
:data:`~simcore.resources.SAN_BUILD_SECONDS`.

Run: ``python bench/bench_resources.py``. For each model, one child process per size runs a small
replication first (compilation, caches), then one of the size, and reports the growth of its
peak resident memory and the CPU time of that replication. The bytes per unit are the difference
between two sizes ten times apart over the difference in units (what the fixed part of a run costs
cancels); the time is the larger size's, and its growth exponent log10(t_large / t_small).
tracemalloc would miss the arrays numba allocates, which is why the resident memory is measured.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

from simcore.resources import MODEL_MEMORY, MODEL_TIME, SAN_BUILD_SECONDS

CASES = {  # model: (parameters beside the size, policy, two sizes)
    "numa": ({"topology": "corr05-4x2"}, "linux-2level", (2_000, 20_000)),
    "cluster": ({"workload": "batch", "demand_kind": "uniform", "demand_max": 600}, "mosix", (2_000, 20_000)),
    "pools": ({}, "limited-spanning", (2_000, 20_000)),
}

CHILD = """
import resource, sys, json, time
from simcore.core.rng import Streams, replication_seed
from simcore.models import get_model
model, key, n, extra, policy = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
m = get_model(model)
m.run_replication({**extra, key: 10}, [policy], Streams(replication_seed(1, "c", 0, 0)))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
m.run_replication({**extra, key: n}, [policy], Streams(replication_seed(1, "c", 0, 1)))
cpu = time.process_time() - start
print(json.dumps([(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024, cpu]))
"""


def growth(model: str, key: str, n: int, extra: dict, policy: str) -> tuple[int, float]:
    """(growth of the peak resident memory in bytes, CPU seconds) of one replication of size n."""
    out = subprocess.run([sys.executable, "-c", CHILD, model, key, str(n), json.dumps(extra), policy],
                         capture_output=True, text=True, check=True)
    memory, cpu = json.loads(out.stdout.split("\n")[-2])
    return int(memory), float(cpu)


def san_build(automata: int) -> float:
    """CPU seconds per product-space state of building the descriptor of ``automata``
    independent two-state automata."""
    import time

    from simcore.san.descriptor import Descriptor
    from simcore.san.model import San

    san = San(name="bench")
    for i in range(automata):
        san.automaton(f"a{i}", ["down", "up"])
        san.local(f"a{i}", "down", "up", 1.0)
        san.local(f"a{i}", "up", "down", 2.0)
    start = time.process_time()
    Descriptor(san)
    return (time.process_time() - start) / 2 ** automata


def main() -> None:
    for model, (extra, policy, (small, large)) in CASES.items():
        key, recorded = MODEL_MEMORY[model]
        (m_small, t_small), (m_large, t_large) = (growth(model, key, n, extra, policy) for n in (small, large))
        per = (m_large - m_small) / (large - small)
        print(f"{model}: {per:,.0f} bytes per unit of {key} (recorded, doubled for headroom: {recorded:,}); "
              f"{t_large:.2f} CPU s at {key} = {large:,}, {t_small:.3f} s at {small:,}: exponent "
              f"{math.log(t_large / t_small) / math.log(large / small):.2f} (recorded: {MODEL_TIME[model][1:]})")
    for automata in (21, 23):
        print(f"san: {san_build(automata) * 1e6:.2f} µs a state to build a descriptor over 2^{automata} states "
              f"(recorded: {SAN_BUILD_SECONDS * 1e6:.2f})")


if __name__ == "__main__":
    main()
