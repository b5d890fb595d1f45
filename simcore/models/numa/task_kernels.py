"""A task's bursts and I/O waits, from its share of the replication's draws (``task``: what a
task draws does not depend on the policy or on other tasks).

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa.layout_kernels import (
    F_BURST,
    F_COLS,
    F_DEMAND,
    F_MEANB,
    F_SCALE,
    F_SLEFT,
    F_SLICE,
    O_TI,
    OF_D,
    OF_TF,
    T_COLS,
    T_DEND,
    T_DI,
    T_IO,
    T_IOBOUND,
    Y_IOREST,
    Z_MEANIO,
)


def _draw(t, SI, SF):
    """Task ``t``'s next draw of its share of the replication's draws (an error past the ones
    counted for it)."""
    tb = SI[O_TI] + t * T_COLS
    i = SI[tb + T_DI]
    if i >= SI[tb + T_DEND]:
        raise IndexError("numa compiled system: a task drew more than its counted draws")
    SI[tb + T_DI] = i + 1
    return SF[SI[OF_D] + i]


def burst(x, mean_burst, tslice, scale, demand):
    """The burst an I/O-bound task draws from its standard exponential ``x`` with ``demand`` ms
    of work left: (work in ms, whether it ends in I/O). Exp(mean_burst) capped at the timeslice,
    ending in I/O iff shorter; served at the slowdown ``scale`` (bursts.py: 1.0 under
    locality_scope 'cpu', exact); the last one is what is left, and ends the task."""
    b = mean_burst * x
    io = b < tslice
    if not io:
        b = tslice
    b = b / scale
    if b >= demand:
        return demand, False
    return b, io


def next_burst(t, SI, SF):
    """Draw the next CPU burst (work, ms); it ends in I/O iff it is shorter than the timeslice."""
    tb, fb = SI[O_TI] + t * T_COLS, SI[OF_TF] + t * F_COLS
    demand = SF[fb + F_DEMAND]
    if SI[tb + T_IOBOUND]:
        b, io = burst(_draw(t, SI, SF), SF[fb + F_MEANB], SF[fb + F_SLICE], SF[fb + F_SCALE], demand)
    else:
        b, io = demand, False
    SF[fb + F_BURST] = b
    SI[tb + T_IO] = io
    SF[fb + F_DEMAND] = demand - b


def draw_io(t, SI, SF):
    """Length of the I/O wait that follows the burst just ended, ms: an exponential draw, or
    (io_wait 'rest-of-slice') the rest of the timeslice, which is then refilled."""
    fb = SI[OF_TF] + t * F_COLS
    if SI[Y_IOREST]:
        left = SF[fb + F_SLEFT]
        wait = 0.0 if 0.0 > left else left
        SF[fb + F_SLEFT] = SF[fb + F_SLICE]
        return wait
    return SF[Z_MEANIO] * _draw(t, SI, SF)


def count_draws(D, mean_burst, tslice, demand, io_rest, slowest, first):
    """How many of the draws ``D`` a task of ``demand`` ms takes in its run (``system._count_draws``:
    ``next_burst`` and ``draw_io`` replayed from its creation, its first burst drawn at the
    slowdown ``first``, the others at ``slowest``); -1 if it would take more than ``D`` holds."""
    i, scale, io = 0, first, False
    n = D.shape[0]
    while demand > 0.0:
        if i >= n:
            return -1
        b, nxt_io = burst(D[i], mean_burst, tslice, scale, demand)
        i += 1
        if io and not io_rest:
            i += 1
        demand -= b
        io, scale = nxt_io, slowest
    return i


jit_module(globals(), nopython=True, cache=True)
