"""The run queues: the O(1) scheduler's active and expired priority arrays with their bitmaps
(docs/linux26-scheduler.md), and each CPU's load as the balancer reads it (2.6.11's cpu_load,
settled lazily).

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

import math

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa import layout_kernels as L
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa.layout_kernels import QUEUED
from simcore.models.numa.search_kernels import SLS, decayed
from simcore.models.numa.slots_kernels import (
    N_PRIO,
    O_Q,
    Q_COLS,
    R_ACT,
    R_AVG,
    R_BMA,
    R_BME,
    R_CURR,
    R_LTICK,
    R_NQ,
    T_CPU,
    T_EXP,
    T_NEXT,
    T_PREV,
    T_PRIO,
    T_STATE,
    Y_INSTANT,
    cpu_row,
    task_row,
)


def nr_running(cpu, SI):
    """Tasks queued on ``cpu`` plus the one it runs."""
    rb = cpu_row(cpu, SI)
    return SI[rb + R_NQ] + (SI[rb + R_CURR] >= 0)


def tick_index(now, tick):
    """The last tick boundary at or before ``now``, numbered from tick 0 at t = 0 (1e-9 absorbs
    rounding: with 0.1 ms ticks t = 1.0 is tick 10, where ``1.0 // 0.1`` gives 9)."""
    return math.floor(now / tick + 1e-9)


def settle_load(cpu, now, SI, SF, F, I):
    """Bring ``cpu``'s cpu_load up to the tick of ``now`` (lazily, before any change of its count),
    and the balancer's mirrors of it."""
    if SI[Y_INSTANT]:
        return
    rb = cpu_row(cpu, SI)
    t = tick_index(now, F[SL.B_TICK])     # the tick lives in the balancer's buffer
    k = t - SI[rb + R_LTICK]
    if k > 0:
        avg = decayed(SI[rb + R_AVG], nr_running(cpu, SI) * SLS, k)
        SI[rb + R_AVG] = avg
        SI[rb + R_LTICK] = t
        F[I[SL.OF_AVG] + cpu] = avg
        F[I[SL.OF_TCK] + cpu] = t


def loads(cpu, now, SI, SF, F, I):
    """``cpu``'s (source load, target load) as the balancer reads them: the least and the most of
    cpu_load and the instant load (both the instant load under load_average 'instant')."""
    cur = nr_running(cpu, SI) * SLS
    if SI[Y_INSTANT]:
        return cur, cur
    settle_load(cpu, now, SI, SF, F, I)
    avg = SI[cpu_row(cpu, SI) + R_AVG]
    return (avg, cur) if avg < cur else (cur, avg)


def queue_at(cpu, ph, i, SI):
    """Where the first task of a run-queue list is (the last is next to it)."""
    return SI[O_Q] + cpu * Q_COLS + (ph * N_PRIO + i) * 2


def enqueue(cpu, t, expired, head, SI):
    """Queue task ``t`` on ``cpu`` in the active array (or the ``expired`` one), at the tail of its
    priority's list (at the head with ``head``: a preempted task)."""
    rb, tb = cpu_row(cpu, SI), task_row(t, SI)
    a = 1 if expired else 0
    i = SI[tb + T_PRIO] - 100
    q = queue_at(cpu, SI[rb + R_ACT] ^ a, i, SI)
    if head:
        first = SI[q]
        SI[tb + T_PREV] = -1
        SI[tb + T_NEXT] = first
        if first >= 0:
            SI[task_row(first, SI) + T_PREV] = t
        else:
            SI[q + 1] = t
        SI[q] = t
    else:
        last = SI[q + 1]
        SI[tb + T_NEXT] = -1
        SI[tb + T_PREV] = last
        if last >= 0:
            SI[task_row(last, SI) + T_NEXT] = t
        else:
            SI[q] = t
        SI[q + 1] = t
    SI[rb + R_BMA + a] |= 1 << i
    SI[rb + R_NQ] += 1
    SI[tb + T_EXP] = a
    SI[tb + T_STATE] = QUEUED
    SI[tb + T_CPU] = cpu


def dequeue(cpu, t, SI):
    """Take queued task ``t`` off ``cpu``'s lists."""
    rb, tb = cpu_row(cpu, SI), task_row(t, SI)
    a = SI[tb + T_EXP]
    i = SI[tb + T_PRIO] - 100
    q = queue_at(cpu, SI[rb + R_ACT] ^ a, i, SI)
    p, nx = SI[tb + T_PREV], SI[tb + T_NEXT]
    if p >= 0:
        SI[task_row(p, SI) + T_NEXT] = nx
    else:
        SI[q] = nx
    if nx >= 0:
        SI[task_row(nx, SI) + T_PREV] = p
    else:
        SI[q + 1] = p
    if SI[q] < 0:
        SI[rb + R_BMA + a] &= ~(1 << i)
    SI[rb + R_NQ] -= 1


def pick_next(cpu, SI):
    """Remove and return the head of ``cpu``'s highest-priority active list (the arrays swapped when
    the active one is empty), or -1."""
    rb = cpu_row(cpu, SI)
    if not SI[rb + R_NQ]:
        return -1
    bm = SI[rb + R_BMA]
    if not bm:
        SI[rb + R_ACT] ^= 1
        bm = SI[rb + R_BME]
        SI[rb + R_BMA] = bm
        SI[rb + R_BME] = 0
        b = bm
        while b:
            t = SI[queue_at(cpu, SI[rb + R_ACT], L.lowbit(b), SI)]
            b &= b - 1
            while t >= 0:
                SI[task_row(t, SI) + T_EXP] = 0
                t = SI[task_row(t, SI) + T_NEXT]
    i = L.lowbit(bm)
    q = queue_at(cpu, SI[rb + R_ACT], i, SI)
    t = SI[q]
    nx = SI[task_row(t, SI) + T_NEXT]
    SI[q] = nx
    if nx >= 0:
        SI[task_row(nx, SI) + T_PREV] = -1
    else:
        SI[q + 1] = -1
        SI[rb + R_BMA] = bm & ~(1 << i)
    SI[rb + R_NQ] -= 1
    return t


jit_module(globals(), nopython=True, cache=True)
