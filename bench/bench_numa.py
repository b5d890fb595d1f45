"""Events per second of the numa model on the 64-CPU HP Superdome (16 nodes x 4) with 400 tasks,
against a bare SimPy loop firing the same number of timeouts in the same run.

Run: ``python bench/bench_numa.py [replications] [topology]``. Prints the model's events and rate,
the bare rate, their ratio, and the wall time of one corr05-fig13-like replication (400 tasks,
linux-2level and multilevel). If ``simcore.topology`` cannot load the machine, a stand-in
Superdome (SLIT 10 / 17 same 4-cell block / 20) with its own 2-level and multilevel domains is
used and the output says so.
"""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace

import numpy as np
import simpy

from simcore.core.rng import Streams, replication_seed
from simcore.models.numa import run_replication

POLICIES = ["linux-2level", "multilevel", "conservative-hard", "conservative-soft"]
NAMES = ["superdome-16x4", "hp-superdome-64", "superdome"]


def stand_in():
    """A Superdome-like machine and domain builder (ia64 2.6.11 SD_*_INIT values)."""
    d = np.full((16, 16), 20.0)
    for i in range(16):
        for j in range(16):
            if i // 4 == j // 4:
                d[i, j] = 17.0
        d[i, i] = 10.0
    cpu_node = tuple(c // 4 for c in range(64))
    machine = SimpleNamespace(name="superdome-stand-in", nodes=16, cpus=64, cpus_per_node=(4,) * 16, distances=d,
                              cpu_node=cpu_node, levels=(10.0, 17.0, 20.0),
                              node_cpus=lambda n: tuple(range(4 * n, 4 * n + 4)))
    cpu = dict(min_interval=1, max_interval=4, busy_factor=64, imbalance_pct=125, cache_nice_tries=1,
               flags=("LOAD_BALANCE", "BALANCE_NEWIDLE", "BALANCE_EXEC"))
    node = dict(min_interval=80, max_interval=320, busy_factor=320, imbalance_pct=125, cache_nice_tries=1,
                flags=("LOAD_BALANCE", "BALANCE_NEWIDLE", "BALANCE_EXEC"))

    def domains_for(m, builder):
        out = []
        for c in range(64):
            n = c // 4
            own = frozenset(m.node_cpus(n))
            doms = [SimpleNamespace(level=0, name="cpu", span=own, groups=tuple(frozenset([x]) for x in sorted(own)), **cpu)]
            cuts = [17.0, 20.0] if builder == "multilevel" else [20.0]
            for cut in cuts:
                nodes = [k for k in range(16) if d[n, k] <= cut]
                doms.append(SimpleNamespace(level=len(doms), name=f"node{cut:.0f}",
                                            span=frozenset(x for k in nodes for x in m.node_cpus(k)),
                                            groups=tuple(frozenset(m.node_cpus(k)) for k in nodes), **node))
            out.append(doms)
        return out

    return machine, domains_for


def machine_and_domains(name: str | None):
    try:
        from simcore.topology import load_topology
        from simcore.topology.domains import domains_for
        for candidate in ([name] if name else NAMES):
            try:
                return load_topology(candidate), domains_for, candidate
            except Exception:  # noqa: BLE001 - try the next catalog name
                continue
    except ImportError:
        pass
    machine, domains_for = stand_in()
    return machine, domains_for, "stand-in Superdome (simcore.topology unavailable)"


def model_rate(replications: int, machine, domains_for) -> tuple[int, float]:
    events, start = 0, time.perf_counter()
    for rep in range(replications):
        out = run_replication({"topology": "bench", "n_tasks": 400}, POLICIES,
                              Streams(replication_seed(2024, "bench-numa", 0, rep)), machine=machine,
                              domains_for=domains_for)
        events += int(sum(m["events"] for m in out.values()))
    return events, time.perf_counter() - start


def bare_rate(events: int) -> float:
    """Wall seconds of a bare SimPy process yielding ``events`` timeouts."""
    env = simpy.Environment()

    def loop():
        for _ in range(events):
            yield env.timeout(1.0)

    env.process(loop())
    start = time.perf_counter()
    env.run()
    return time.perf_counter() - start


def main(replications: int = 3, name: str | None = None) -> None:
    machine, domains_for, label = machine_and_domains(name)
    events, wall = model_rate(replications, machine, domains_for)
    bare = bare_rate(events)
    model_eps, bare_eps = events / wall, events / bare
    start = time.perf_counter()
    run_replication({"topology": "bench", "n_tasks": 400}, ["linux-2level", "multilevel"],
                    Streams(replication_seed(2024, "bench-numa-fig13", 0, 0)), machine=machine, domains_for=domains_for)
    fig13 = time.perf_counter() - start
    print(f"machine: {label}")
    print(f"numa model: {replications} replications x {len(POLICIES)} policies x 400 tasks, {events} events "
          f"in {wall:.2f} s: {model_eps:,.0f} events/s")
    print(f"bare SimPy: {events} timeouts in {bare:.2f} s: {bare_eps:,.0f} events/s")
    print(f"ratio (model / bare): {model_eps / bare_eps:.3f}")
    print(f"one corr05-fig13-like replication (400 tasks, linux-2level + multilevel): {fig13:.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, sys.argv[2] if len(sys.argv) > 2 else None)
