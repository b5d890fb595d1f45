"""Memory a replication needs per unit of the parameter it grows with: the source of
:data:`simcore.resources.MODEL_MEMORY`.

Run: ``python bench/bench_memory.py``. For each model, one child process per size runs a small
replication first (compilation, caches), then one of the size, and reports the growth of its
peak resident memory; the bytes per unit are the difference between two sizes ten times apart
over the difference in units (what the fixed part of a run costs cancels). tracemalloc would miss
the arrays numba allocates, which is why the resident memory is measured.
"""

from __future__ import annotations

import subprocess
import sys

from simcore.resources import MODEL_MEMORY

CASES = {  # model: (parameters beside the size, policy, two sizes)
    "numa": ({"topology": "corr05-4x2"}, "linux-2level", (2_000, 20_000)),
    "cluster": ({"workload": "batch", "demand_kind": "constant", "demand_value": 10}, "mosix", (1_000, 10_000)),
    "pools": ({}, "limited-spanning", (2_000, 20_000)),
}

CHILD = """
import resource, sys, json
from simcore.core.rng import Streams, replication_seed
from simcore.models import get_model
model, key, n, extra, policy = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
m = get_model(model)
m.run_replication({**extra, key: 10}, [policy], Streams(replication_seed(1, "c", 0, 0)))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
m.run_replication({**extra, key: n}, [policy], Streams(replication_seed(1, "c", 0, 1)))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)
"""


def growth(model: str, key: str, n: int, extra: dict, policy: str) -> int:
    import json

    out = subprocess.run([sys.executable, "-c", CHILD, model, key, str(n), json.dumps(extra), policy],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def main() -> None:
    for model, (extra, policy, (small, large)) in CASES.items():
        key, recorded = MODEL_MEMORY[model]
        per = (growth(model, key, large, extra, policy) - growth(model, key, small, extra, policy)) / (large - small)
        print(f"{model}: {per:,.0f} bytes per unit of {key} (recorded, doubled for headroom: {recorded:,})")


if __name__ == "__main__":
    main()
