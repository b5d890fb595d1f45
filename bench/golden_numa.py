"""Golden digest of the numa model's (and the cluster model's) results, for optimisation work.

Run: ``python bench/golden_numa.py --check bench/golden_numa.sha256`` (``--save FILE`` writes the
metrics, ``--record FILE`` the digests). Runs a fixed set of replications and prints one sha256
per case and an overall digest: the sha256 of the JSON of all metrics, with every float written
as its ``repr`` (so any change in the last bit shows). The digest file holds each case's digest,
so a check names the cases that changed (a change of the cluster model leaves the numa cases).
A case that raises ValueError records the message instead ("batch-const-crash" once hit a
negative-delay crash of ``Balancer.arm``, since fixed). The digest file holds the digest of the
current behaviour: a deliberate change of the model's behaviour records a new one.
An optimisation that keeps the model's behaviour must leave the digest unchanged.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from simcore.core.rng import Streams, replication_seed
from simcore.models.numa import run_replication

POLICIES = ["linux-2level", "multilevel", "conservative-hard", "conservative-soft"]

# (name, parameters, seed cell): replication_seed(2024, "golden-numa", cell, 0) draws the workload
CASES: list[tuple[str, dict, int]] = [
    ("superdome-400", {"topology": "superdome-16x4", "n_tasks": 400}, 0),
    ("corr05-4x2-100", {"topology": "corr05-4x2", "n_tasks": 100}, 1),
    ("mehta-s1-100", {"topology": "mehta-s1", "n_tasks": 100}, 2),
    ("instant", {"topology": "superdome-16x4", "n_tasks": 200, "load_average": "instant"}, 3),
    ("parent", {"topology": "superdome-16x4", "n_tasks": 200, "placement": "parent"}, 4),
    ("batch-const", {"topology": "mehta-s1", "n_tasks": 100, "arrival": "batch", "io_task_fraction": 0.0,
                     "demand_dist": "constant", "mean_demand": 200}, 0),
    ("batch-const-crash", {"topology": "mehta-s1", "n_tasks": 100, "arrival": "batch", "io_task_fraction": 0.0,
                           "demand_dist": "constant", "mean_demand": 200}, 5),
    ("no-active", {"topology": "superdome-16x4", "n_tasks": 200, "active_balance": False}, 7),
    ("invariants", {"topology": "corr05-4x2", "n_tasks": 60, "check_invariants": True}, 8),
    ("mehta-usual-idle", {"topology": "mehta-s2", "n_tasks": 150, "arrival": "uniform", "rules_scope": "periodic",
                          "creation_cpu": 0, "placement": "parent", "io_task_fraction": 0.5}, 9),
    ("mehta-zone-all", {"topology": "mehta-s1", "n_tasks": 120, "zone_scope": "all", "rules_scope": "periodic",
                        "arrival": "uniform", "io_task_fraction": 0.5}, 10),
]


def _canon(x):
    if isinstance(x, float):
        return repr(x)
    if isinstance(x, dict):
        return {str(k): _canon(v) for k, v in sorted(x.items())}
    if isinstance(x, (list, tuple)):
        return [_canon(v) for v in x]
    return x


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(_canon(obj), sort_keys=True).encode()).hexdigest()


def cluster_results() -> dict:
    """amir-table2 under the four cluster policies, two replications (the cluster model shares Engine)."""
    from simcore.experiments import load_spec
    from simcore.models.cluster import run_replication as cluster_rep
    spec = Path(__file__).resolve().parents[1] / "config/experiments/amir-table2.yaml"
    params = load_spec(spec).params()
    return {str(rep): cluster_rep(params, ["pvm", "enhanced-pvm", "mosix", "enhanced-mosix"],
                                  Streams(replication_seed(2024, "golden-cluster", 0, rep)))
            for rep in range(2)}


def main(argv: list[str]) -> int:
    results = {}
    for name, params, cell in CASES:
        start = time.perf_counter()
        try:
            results[name] = run_replication(params, POLICIES, Streams(replication_seed(2024, "golden-numa", cell, 0)))
        except ValueError as exc:  # a known crash is behaviour too: it must stay the same
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
        error = results[name].get("error", "")
        print(f"{name:17s} {digest(results[name])[:16]}  ({time.perf_counter() - start:.2f} s) {error}")
    from simcore.models.numa import trace_replication
    results["trace"] = trace_replication({"topology": "corr05-4x2", "n_tasks": 40}, "conservative-soft",
                                         Streams(replication_seed(2024, "golden-trace", 0, 0)))
    print(f"{'trace':17s} {digest(results['trace'])[:16]}")
    start = time.perf_counter()
    results["cluster"] = cluster_results()
    print(f"{'cluster':17s} {digest(results['cluster'])[:16]}  ({time.perf_counter() - start:.2f} s)")
    digests = {name: digest(value) for name, value in results.items()} | {"digest": digest(results)}
    print(f"digest {digests['digest']}")
    if "--save" in argv:
        Path(argv[argv.index("--save") + 1]).write_text(json.dumps(_canon(results), indent=1, sort_keys=True))
    if "--record" in argv:
        Path(argv[argv.index("--record") + 1]).write_text("".join(f"{k} {v}\n" for k, v in digests.items()))
    if "--check" in argv:
        want = dict(
            line.split() for line in Path(argv[argv.index("--check") + 1]).read_text().splitlines() if line.strip()
        )
        changed = [k for k, v in want.items() if digests.get(k) != v]
        if changed:
            print(f"MISMATCH in {', '.join(changed)}: expected {want['digest']}")
            return 1
        print("OK: digest unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
