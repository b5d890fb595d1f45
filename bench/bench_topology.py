"""Reading and building a large machine: the check of its SLIT table and the sched domains of
both builders, at 128 to 1,024 nodes.

Run: ``python bench/bench_topology.py [--sizes 128,256,512,1024]``. The machine is a tree of
routers (20 within a block of 8 nodes, 30 within a block of 64, 40 beyond; one CPU a node), whose
two-level hierarchy puts every node in a group of its own at the top: n groups for each of n
nodes, the largest output a builder makes. Each step's time is printed with its ratio to
n^2 log2 n, which stays level when the cost grows as the bound in ``simcore/topology/domains.py``
says (the YAML reading is left out: PyYAML costs about 20 microseconds an entry).
"""

from __future__ import annotations

import argparse
import math
import time

from simcore.topology.domains import domains_for
from simcore.topology.machine import make_machine


def tree(nodes: int) -> list[list[int]]:
    def d(i, j):
        return 10 if i == j else 20 if i // 8 == j // 8 else 30 if i // 64 == j // 64 else 40
    return [[d(i, j) for j in range(nodes)] for i in range(nodes)]


def timed(step):
    start = time.perf_counter()
    out = step()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="128,256,512,1024")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    print(f"{'nodes':>6} {'check s':>8} {'2level s':>9} {'multi s':>8}   per n^2 log2 n (us): check, 2level, multi")
    for n in sizes:
        rows = tree(n)
        check, machine = timed(lambda: make_machine("bench", f"tree-{n}", 1, rows))
        flat, _ = timed(lambda: domains_for(machine, "linux-2level"))
        multi, _ = timed(lambda: domains_for(machine, "multilevel"))
        unit = n * n * math.log2(n) / 1e6
        print(f"{n:>6} {check:>8.3f} {flat:>9.3f} {multi:>8.3f}   "
              f"{check / unit:.3f}, {flat / unit:.3f}, {multi / unit:.3f}")


if __name__ == "__main__":
    main()
