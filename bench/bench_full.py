"""CPU seconds per replication of every experiment at its full-scale size, and the full-scale
projection computed from them.

Run: ``python bench/bench_full.py [--cells N] [--reps K] [--only PATTERN] [--csv FILE]``.
For each spec it runs K replications (default 1) of up to N cells (default 3) spread over the
full grid, as the workflow's ``simcore run`` would (same parameters and seeds, every policy),
and measures process CPU time, after one replication that is not counted (imports, the NUMA
model's compiled kernel). What a batch job costs before its first replication is measured
apart, once per model, as the CPU time of a ``simcore run`` of one replication less that
replication. The projection: the mean CPU seconds per replication times the cells and
replications of the full scale, plus that start-up cost per batch job; ``upper`` does the same
at the precision mode's largest count (every cell of an undecided claim taken to its maximum,
which is more than any real run adds). The SAN solutions (corr05 Figure 8) are not simulations
and are not included: their times are in ``bench/bench_san.py --corr05``.
"""

from __future__ import annotations

import argparse
import fnmatch
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from simcore.experiments import load_spec
from simcore.experiments.runner import run_batch

ROOT = Path(__file__).resolve().parents[1]
SEED = 2024


def sample(cells: list, n: int) -> list:
    """Up to ``n`` cells spread evenly over ``cells`` (first and last included)."""
    if len(cells) <= n:
        return cells
    step = (len(cells) - 1) / (n - 1) if n > 1 else 0
    return [cells[round(i * step)] for i in range(n)]


def job_start_cost(spec, cell: int) -> float:
    """CPU seconds of a ``simcore run`` of one replication (child process) less that replication's
    own CPU time in this process: what a batch job spends before its first replication."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:   # never /dev/null: outputs are renamed over their path
        subprocess.run([sys.executable, "-m", "simcore.cli", "run", spec.id, "--cell", str(cell), "--reps", "0:1",
                        "--out", str(Path(tmp) / "batch.parquet"), "--progress", "off"], check=True, cwd=ROOT,
                       capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    start = time.process_time()
    run_batch(spec, cell, range(1), SEED)
    return max(total - (time.process_time() - start), 0.0)


def measure(spec, n_cells: int, reps: int, start_cost: float) -> dict:
    """CPU seconds per replication (all policies) over the sampled cells, and the projection."""
    cells = spec.cells("full")
    chosen = sample(cells, n_cells)
    run_batch(spec, chosen[0].index, range(1), SEED + 1)       # warm: imports, compiled kernels
    start = time.process_time()
    for cell in chosen:
        run_batch(spec, cell.index, range(reps), SEED)
    per_rep = (time.process_time() - start) / (len(chosen) * reps)
    full = spec.replications("full")
    precision = spec.precision("full")
    most = int(precision["max_replications"]) if precision else full
    jobs = len(cells) * len(spec.batches("full"))
    return {"experiment": spec.id, "model": spec["model"], "cells": len(cells), "replications": full,
            "jobs": jobs, "cpu_s_per_rep": per_rep, "job_start_s": start_cost,
            "projected_cpu_min": (per_rep * len(cells) * full + jobs * start_cost) / 60,
            "upper_cpu_min": (per_rep * len(cells) * most + jobs * start_cost) / 60}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=3, help="cells measured per experiment (spread over the grid)")
    parser.add_argument("--reps", type=int, default=1, help="replications measured per cell")
    parser.add_argument("--only", default="*", help="experiment ids matching this pattern")
    parser.add_argument("--csv", help="also write the table as CSV")
    args = parser.parse_args(argv)
    rows, start_costs = [], {}
    for path in sorted((ROOT / "config/experiments").glob("*.yaml")):
        if not fnmatch.fnmatch(path.stem, args.only):
            continue
        spec = load_spec(path)
        if spec.source_id != spec.id:     # reads another experiment's rows: nothing to simulate
            continue
        if spec["model"] not in start_costs:
            start_costs[spec["model"]] = job_start_cost(spec, spec.cells("full")[0].index)
        rows.append(measure(spec, args.cells, args.reps, start_costs[spec["model"]]))
        r = rows[-1]
        print(
            f"{r['experiment']:<26} {r['cells']:>4} cells x {r['replications']:>5} reps: {r['cpu_s_per_rep']:8.3f} CPU "
            "s/rep"
            f", {r['jobs']:>4} jobs x {r['job_start_s']:.2f} s start -> {r['projected_cpu_min']:7.1f} CPU min"
            f" (precision at most {r['upper_cpu_min']:7.1f})",
            flush=True,
        )
    total = sum(r["projected_cpu_min"] for r in rows)
    upper = sum(r["upper_cpu_min"] for r in rows)
    print(f"total: {total:.1f} CPU min ({total / 2:.1f} min on 2 cores if nothing idles); "
          f"with every precision cell at its maximum {upper:.1f} CPU min")
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main(sys.argv[1:])
