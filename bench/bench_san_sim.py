"""Speed of the SAN Monte Carlo simulation (:mod:`simcore.san.simulate`) on the corr05 SAN.

Run: ``python bench/bench_san_sim.py [--reps 50] [--topologies corr05-4x1,corr05-4x2]``

For each topology (Linux's 2 domain levels) it simulates ``--reps`` trajectories of the measure
``finished = Proc == En`` over 0..30 s, with and without the early stop, and prints the wall
time per trajectory, the events fired per trajectory and the events per second.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import simpy

from simcore.san.corr05 import build
from simcore.san.simulate import _Model, _Walker

TIMES = np.array([0, 0.1, 0.2, 0.3, 0.4, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 25, 30.0])


def run(topology: str, reps: int, stop_early: bool) -> tuple[float, float]:
    """Seconds and events per trajectory (one rate memo for all trajectories, as in ``simulate``)."""
    model = _Model(build(topology, "2"), {"finished": "Proc == En"})
    spent, steps = 0.0, 0
    for r in range(reps):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(1, spawn_key=(r,))))
        start = time.perf_counter()
        walker = _Walker(model, TIMES, rng, stop_early)
        env = simpy.Environment()
        env.process(walker.run(env))
        env.run()
        spent, steps = spent + time.perf_counter() - start, steps + walker.steps
    return spent / reps, steps / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--topologies", default="corr05-4x1,corr05-4x2")
    args = parser.parse_args()
    for topology in args.topologies.split(","):
        for stop_early in (True, False):
            seconds, steps = run(topology, args.reps, stop_early)
            print(f"{topology} stop_early={stop_early!s:5}: {seconds * 1000:7.1f} ms/trajectory, "
                  f"{steps:8.0f} events/trajectory, {steps / seconds:9.0f} events/s", flush=True)


if __name__ == "__main__":
    main()
