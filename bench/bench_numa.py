"""Events per second of the numa model on the 64-CPU HP Superdome (16 cells x 4) with 400 tasks,
against a bare SimPy loop firing the same number of timeouts in the same run.

Run: ``python bench/bench_numa.py [replications] [topology]``. Prints the model's events and rate
(its compiled kernels and event loop), the bare rate, their ratio, the rate of the same runs
driven by SimPy (``model.COMPILED_LOOP = False``, as a monitored or traced run is), the same ratio on the events the
model would fire with an event at every end of burst or slice (``NumaSystem.look_ahead = False``: the count
the look-ahead shrinks), and the mean wall time of a corr05-fig13-like replication (400 tasks,
linux-2level and multilevel; five seeds); then what the compiled code costs a batch job:
importing it and running a 20-task replication with numba's cache on disk, and compiling it
without one (each in a fresh process).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from baseline import bare_rate

from simcore.core.rng import Streams, replication_seed
from simcore.models.numa import model as numa_model
from simcore.models.numa import run_replication
from simcore.models.numa.system import NumaSystem

POLICIES = ["linux-2level", "multilevel", "conservative-hard", "conservative-soft"]


def model_rate(replications: int, topology: str) -> tuple[int, float]:
    """Total events and wall seconds of ``replications`` replications of the four policies."""
    events, start = 0, time.perf_counter()
    for rep in range(replications):
        out = run_replication({"topology": topology, "n_tasks": 400}, POLICIES,
                              Streams(replication_seed(2024, "bench-numa", 0, rep)))
        events += int(sum(m["events"] for m in out.values()))
    return events, time.perf_counter() - start


def main(replications: int = 3, topology: str = "superdome-16x4") -> None:
    run_replication({"topology": topology, "n_tasks": 20}, POLICIES[:1], Streams(replication_seed(1, "warm-up", 0, 0)))
    events, wall = model_rate(replications, topology)
    bare = bare_rate(events)
    model_eps, bare_eps = events / wall, events / bare
    numa_model.COMPILED_LOOP = False
    _, driven = model_rate(replications, topology)
    numa_model.COMPILED_LOOP = True
    NumaSystem.look_ahead = False
    every_end, _ = model_rate(replications, topology)
    NumaSystem.look_ahead = True
    fig13 = fig13_like(topology)
    print(f"machine: {topology}")
    print(f"numa model: {replications} replications x {len(POLICIES)} policies x 400 tasks, {events} events "
          f"in {wall:.2f} s: {model_eps:,.0f} events/s")
    print(f"bare SimPy: {events} timeouts in {bare:.2f} s: {bare_eps:,.0f} events/s")
    print(f"ratio (model / bare): {model_eps / bare_eps:.3f}")
    print(f"the same runs driven by SimPy: {events / driven:,.0f} events/s, ratio {events / driven / bare_eps:.3f}")
    print(f"with an event at every end of burst or slice: {every_end} events; ratio on that count "
          f"{every_end / wall / bare_eps:.3f}")
    print(
        f"a corr05-fig13-like replication (400 tasks, linux-2level + multilevel; mean of {FIG13_REPS}): {fig13:.3f} s"
    )
    warm, cold = kernel_start(None), kernel_start(tempfile.mkdtemp())
    print(f"compiled system per job: {warm:.2f} s to import the model and run a 20-task replication with "
          f"numba's cache, {cold:.2f} s compiling it")


FIG13_REPS = 5


def fig13_like(topology: str) -> float:
    """Mean wall seconds of ``FIG13_REPS`` corr05-fig13-like replications (one replication alone
    varies too much from seed to seed)."""
    start = time.perf_counter()
    for rep in range(FIG13_REPS):
        run_replication({"topology": topology, "n_tasks": 400}, ["linux-2level", "multilevel"],
                        Streams(replication_seed(2024, "bench-numa-fig13", 0, rep)))
    return (time.perf_counter() - start) / FIG13_REPS


KERNEL_CALL = """
import time
start = time.perf_counter()
from simcore.core.rng import Streams, replication_seed
from simcore.models.numa import run_replication
run_replication({"topology": "corr05-4x2", "n_tasks": 20}, ["linux-2level"], Streams(replication_seed(1, "w", 0, 0)))
print(time.perf_counter() - start)
"""


def kernel_start(cache_dir: str | None) -> float:
    """Seconds a fresh process takes to import the model and run a small replication;
    ``cache_dir``: an empty numba cache (the compilation is measured), None: the project's cache
    folder (simcore.core.jit keys it per kernel file)."""
    env = dict(os.environ, **({"NUMBA_CACHE_DIR": cache_dir} if cache_dir else {}))
    out = subprocess.run([sys.executable, "-c", KERNEL_CALL], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1])


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, sys.argv[2] if len(sys.argv) > 2 else "superdome-16x4")
