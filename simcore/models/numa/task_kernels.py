"""A task's bursts and I/O waits, from its share of the replication's draws (``task``: what a
task draws does not depend on the policy or on other tasks).

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

import numpy as np

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.core.pcg64_kernels import fill_exponential, seed_state
from simcore.models.numa.slots_kernels import (
    F_BURST,
    F_DEMAND,
    F_MEANB,
    F_SCALE,
    F_SLEFT,
    F_SLICE,
    OF_D,
    T_DEND,
    T_DI,
    T_IO,
    T_IOBOUND,
    Y_IOREST,
    Z_MEANIO,
    task_frow,
    task_row,
)


def _draw(t, SI, SF):
    """Task ``t``'s next draw of its share of the replication's draws (an error past the ones
    counted for it)."""
    tb = task_row(t, SI)
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
    tb, fb = task_row(t, SI), task_frow(t, SI)
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
    fb = task_frow(t, SI)
    if SI[Y_IOREST]:
        left = SF[fb + F_SLEFT]
        wait = 0.0 if 0.0 > left else left
        SF[fb + F_SLEFT] = SF[fb + F_SLICE]
        return wait
    return SF[Z_MEANIO] * _draw(t, SI, SF)


def count_draws(D, mean_burst, tslice, demand, io_rest, slowest, first):
    """How many of the draws ``D`` a task of ``demand`` ms takes in its run (``system._draws``:
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


def workload_draws(seeds, mean_burst, tslice, demand, io_bound, io_rest, slowest, first):
    """Every task's draws as one array, and where each task's start (``starts[t]``; the last entry
    is the end): task ``t``'s are the first ``count_draws`` standard exponentials of
    ``numpy.random.Generator(numpy.random.PCG64(seeds[t]))`` (``pcg64_kernels``), as many as
    it can take in its run (none for a CPU-bound task); drawn 128 at first, twice as many each
    time they run out (the generator draws one after another, so the chunks change no value)."""
    T = seeds.shape[0]
    starts = np.zeros(T + 1, dtype=np.int64)
    out = np.empty(128 * T + 1)
    buf = np.empty(128)
    st = np.zeros(4, dtype=np.uint64)
    used = 0
    for t in range(T):
        need = 0
        if io_bound[t]:
            seed_state(seeds[t], st)
            have = 0
            while True:
                if have == buf.shape[0] and have > 0:
                    grown = np.empty(2 * have)
                    grown[:have] = buf
                    buf = grown
                fill_exponential(st, buf, have, buf.shape[0])
                have = buf.shape[0]
                need = count_draws(buf, mean_burst[t], tslice[t], demand[t], io_rest, slowest, first)
                if 0 <= need <= have:       # (the count may end on an I/O wait's draw past the last)
                    break
            if used + need > out.shape[0]:
                grown = np.empty(2 * (used + need))
                grown[:used] = out[:used]
                out = grown
            out[used:used + need] = buf[:need]
        used += need
        starts[t + 1] = used
        if buf.shape[0] > 128:
            buf = np.empty(128)
    return out[:used].copy(), starts


def level_shares(order, LT, LORD, bins):
    """What ``model.measure`` sums over the tasks, in creation ``order``: the CPU time at each
    distance level from home (``LT``; levels from ``bins - 1`` on in the last bin), each task's
    levels added in the order it first reached them (``LORD``; unreached: -1), and per bin the
    tasks that got most of their time there (the lowest such level on a tie; tasks that reached
    none not counted)."""
    share = np.zeros(bins)
    count = np.zeros(bins, dtype=np.int64)
    levels = LT.shape[1]
    for t in order:
        best, most = -1, 0.0
        for lvl in range(levels):               # ascending: the first of equal times is kept
            if LORD[t, lvl] >= 0 and (best < 0 or LT[t, lvl] > most):
                best, most = lvl, LT[t, lvl]
        if best < 0:
            continue
        count[min(best, bins - 1)] += 1
        reached = np.argsort(LORD[t])           # the levels reached, by the time they were first reached
        for j in range(levels):
            lvl = reached[j]
            if LORD[t, lvl] >= 0:
                share[min(lvl, bins - 1)] += LT[t, lvl]
    return share, count


jit_module(globals(), nopython=True, cache=True)
