"""Speed of the SAN Monte Carlo simulation (:mod:`simcore.san.simulate`) on the corr05 SAN.

Run: ``python bench/bench_san_sim.py [--reps 50] [--topologies corr05-4x1,corr05-4x2]``

For each topology (Linux's 2 domain levels) it simulates ``--reps`` trajectories of the measure
``finished = Proc == En`` over 0..30 s, with and without the early stop, on the compiled walker
(:mod:`simcore.san.compiled_walk`, what ``simulate`` runs) and on the Python walker (the
reference), and prints the wall time per trajectory, the events fired per trajectory and the
events per second. The compiled walker's rate tables are filled on a first pass of the same
trajectories, so its times are those of a long run (``simulate``'s 4000 trajectories share one).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import simpy

from simcore.san.compiled_walk import CompiledWalker, Tables
from simcore.san.corr05 import build
from simcore.san.simulate import BLOCK, _Model, _Walker

TIMES = np.array([0, 0.1, 0.2, 0.3, 0.4, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 25, 30.0])


def _walk(model, tables, reps: int, stop_early: bool, compiled: bool) -> tuple[float, int]:
    """Seconds and events over ``reps`` trajectories."""
    spent, steps = 0.0, 0
    for r in range(reps):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(1, spawn_key=(r,))))
        start = time.perf_counter()
        walker = (CompiledWalker(tables, TIMES, rng, stop_early, BLOCK) if compiled
                  else _Walker(model, TIMES, rng, stop_early))
        env = simpy.Environment()
        env.process(walker.run(env))
        env.run()
        spent, steps = spent + time.perf_counter() - start, steps + walker.steps
    return spent, steps


def run(topology: str, reps: int, stop_early: bool, compiled: bool) -> tuple[float, float]:
    """Seconds and events per trajectory (one rate memo for all trajectories, as in ``simulate``;
    the compiled walker's tables are filled by a first, untimed pass)."""
    san = build(topology, "2")
    model = _Model(san, {"finished": "Proc == En"})
    tables = Tables(model, [len(s) for s in san.automata.values()])
    if compiled:
        _walk(model, tables, reps, stop_early, compiled)
    spent, steps = _walk(model, tables, reps, stop_early, compiled)
    return spent / reps, steps / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--topologies", default="corr05-4x1,corr05-4x2")
    args = parser.parse_args()
    for topology in args.topologies.split(","):
        for stop_early in (True, False):
            for compiled in (True, False):
                seconds, steps = run(topology, args.reps, stop_early, compiled)
                print(f"{topology} stop_early={stop_early!s:5} {'compiled' if compiled else 'python':8}: "
                      f"{seconds * 1000:7.1f} ms/trajectory, {steps:8.0f} events/trajectory, "
                      f"{steps / seconds:9.0f} events/s", flush=True)


if __name__ == "__main__":
    main()
