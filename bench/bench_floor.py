"""What an event costs at the least in this architecture, against the bare SimPy loop of every bench.

Run: ``python bench/bench_floor.py [events]``. Fires the same number of events four ways in one
process and prints each rate and its ratio to the bare loop:

- the bare loop (``baseline.bare_rate``: one process yielding timeouts);
- the engine's timers (``Engine.call``), each callback setting the next timer and doing nothing
  else: the calendar the models use;
- the same, each callback also calling one numba function on two arrays (a compiled model step,
  its state in flat buffers as ``numa/timing_kernels.py`` keeps it, doing one addition);
- the same, each callback also reading one result back and writing one attribute (the least
  Python glue a model step has).

A model whose every event ran compiled would still pay the last rate, so it bounds what
compiling the per-event logic can reach.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from baseline import bare_rate
from numba import njit

from simcore.core.engine import Engine


@njit(cache=True)
def step(F, I, x):
    """One compiled model step: two buffers in, one number out."""
    F[0] += x
    I[0] += 1
    return F[0]


class _State:
    value = 0.0


def engine_rate(events: int, how: str) -> float:
    """Seconds for ``events`` engine timers whose callbacks do ``how``: nothing, a compiled
    step, or a compiled step and its result kept."""
    engine = Engine()
    F, I, state = np.zeros(4), np.zeros(4, dtype=np.int64), _State()
    left = [events]

    def plain(arg):
        left[0] -= 1
        if left[0]:
            engine.call(1.0, plain, arg)

    def compiled(arg):
        step(F, I, 1.0)
        left[0] -= 1
        if left[0]:
            engine.call(1.0, compiled, arg)

    def glued(arg):
        state.value = float(step(F, I, 1.0))
        left[0] -= 1
        if left[0]:
            engine.call(1.0, glued, arg)

    callback = {"plain": plain, "compiled": compiled, "glued": glued}[how]
    engine.call(1.0, callback, 0)
    start = time.perf_counter()
    engine.run()
    return time.perf_counter() - start


def main(events: int = 400_000) -> None:
    step(np.zeros(4), np.zeros(4, dtype=np.int64), 1.0)
    bare = bare_rate(events)
    print(f"bare SimPy: {events / bare:,.0f} events/s")
    for how, label in (("plain", "engine timers, empty callbacks"), ("compiled", "+ one numba call on two arrays"),
                       ("glued", "+ its result read back and kept")):
        wall = engine_rate(events, how)
        print(f"{label}: {events / wall:,.0f} events/s, ratio {bare / wall:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400_000)
