"""The current task's run on a CPU: accounting, segments at a speed factor, the run timer's
look-ahead over its bursts (``system`` explains it), and charges of the balancer's work.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa import layout_kernels as L
from simcore.models.numa import task_kernels as TK
from simcore.models.numa.layout_kernels import (
    EPS,
    LOG_RUN,
    LOG_WAIT,
    LOOKAHEAD,
    RUNNING,
)
from simcore.models.numa.slots_kernels import (
    F_BURST,
    F_CPUT,
    F_DEBT,
    F_DEMAND,
    F_LAST,
    F_MEANB,
    F_SCALE,
    F_SEG,
    F_SLEFT,
    F_SLICE,
    O_LORD,
    O_LV,
    OF_D,
    OF_FR,
    OF_LT,
    R_CURR,
    R_NODE,
    R_NQ,
    R_ORDER,
    R_PEND,
    RF_FACTOR,
    RF_SEGEND,
    RF_START,
    T_CPU,
    T_DEND,
    T_DI,
    T_HOME,
    T_IO,
    T_MOVED,
    T_NLVL,
    T_STATE,
    Y_LEVELS,
    Y_LIFE,
    Y_LOGCAP,
    Y_LOOK,
    Y_NODES,
    Z_DELIV,
    Z_MCOST,
    Z_OVER,
    Z_WORK,
    cpu_frow,
    cpu_row,
    task_frow,
    task_row,
)


def account(cpu, t, now, SI, SF):
    """Charge task ``t`` the time since its dispatch on ``cpu``: its slice (wall time), its burst
    (work at this CPU's speed for its memory, and any migration refill it owed), its CPU time per
    distance level, and the CPUs' tallies."""
    tb, fb, rf = task_row(t, SI), task_frow(t, SI), cpu_frow(cpu, SI)
    elapsed = now - SF[rf + RF_START]
    f = SF[rf + RF_FACTOR]
    work = elapsed / (f if f >= 0 else -f)
    SF[fb + F_SLEFT] -= elapsed
    SF[fb + F_BURST] -= work
    if SF[Z_MCOST]:
        owed = SF[fb + F_DEBT] - work
        SF[fb + F_DEBT] = owed if owed > 0.0 else 0.0
    SF[fb + F_CPUT] += elapsed
    levels = SI[Y_LEVELS]
    lvl = SI[SI[O_LV] + SI[cpu_row(cpu, SI) + R_NODE] * SI[Y_NODES] + SI[tb + T_HOME]]
    order = SI[O_LORD] + t * levels + lvl
    if SI[order] < 0:
        SI[order] = SI[tb + T_NLVL]
        SI[tb + T_NLVL] += 1
    SF[SI[OF_LT] + t * levels + lvl] += elapsed
    SF[Z_DELIV] += elapsed
    SF[Z_WORK] += work
    SF[fb + F_LAST] = now
    SF[rf + RF_START] = now


def segment(cpu, t, SI, SF):
    """From the run's start (``RF_START``): whether task ``t``'s burst or its slice ends first (the
    sign of ``RF_FACTOR``: negative, the burst) and when (``RF_SEGEND``), at ``cpu``'s speed for
    the task's memory."""
    fb, rf = task_frow(t, SI), cpu_frow(cpu, SI)
    node = SI[cpu_row(cpu, SI) + R_NODE]
    f = SF[SI[OF_FR] + node * SI[Y_NODES] + SI[task_row(t, SI) + T_HOME]]
    wall = SF[fb + F_BURST] * f
    if wall <= SF[fb + F_SLEFT] + EPS:
        SF[rf + RF_FACTOR] = -f
        length = 0.0 if 0.0 > wall else wall
    else:
        SF[rf + RF_FACTOR] = f
        length = SF[fb + F_SLEFT]
    SF[rf + RF_SEGEND] = SF[rf + RF_START] + length


def look_ahead(cpu, t, SI, SF):
    """Set the run timer of task ``t``, alone on ``cpu``, at the first end of burst or slice that
    decides something (at most ``LOOKAHEAD`` ends ahead), counting the ends before it as pending
    (``R_PEND``). The ends are followed on copies of the task's state with the arithmetic of
    ``account``, ``scheduler_kernels.run_end`` and ``segment``, and its coming bursts
    (``task_kernels.burst``) read from its own draws without taking them."""
    tb, fb, rf = task_row(t, SI), task_frow(t, SI), cpu_frow(cpu, SI)
    D = SI[OF_D]
    f = SF[rf + RF_FACTOR]
    ends_burst = f < 0
    f = abs(f)
    start, at = SF[rf + RF_START], SF[rf + RF_SEGEND]
    slice_left, burst_left, io, demand = SF[fb + F_SLEFT], SF[fb + F_BURST], SI[tb + T_IO] != 0, SF[fb + F_DEMAND]
    tslice, meanb, scale = SF[fb + F_SLICE], SF[fb + F_MEANB], SF[fb + F_SCALE]
    di, ddemand = SI[tb + T_DI], SF[fb + F_DEMAND]       # upcoming()'s own draw index and demand
    n = 0
    while n < LOOKAHEAD:
        elapsed = at - start
        slice_left -= elapsed
        burst_left -= elapsed / f
        if ends_burst:
            if demand <= 0.0 or io:
                break
            if di >= SI[tb + T_DEND]:
                raise IndexError("numa compiled system: a look-ahead went past a task's counted draws")
            b, io = TK.burst(SF[D + di], meanb, tslice, scale, ddemand)
            di += 1
            ddemand -= b
            burst_left, demand = b, ddemand
            if slice_left <= EPS:
                slice_left = tslice
        else:
            slice_left = tslice
        wall = burst_left * f
        ends_burst = wall <= slice_left + EPS
        start = at
        at = at + ((0.0 if 0.0 > wall else wall) if ends_burst else slice_left)
        n += 1
    rb = cpu_row(cpu, SI)
    SI[rb + R_PEND] = n
    L.schedule_at(cpu, at, SI[rb + R_ORDER], SI, SF)


def pass_end(cpu, t, SI, SF):
    """Replay the pending end at ``RF_SEGEND`` as ``scheduler_kernels.run_end`` makes it, the CPU's
    queue being empty: a burst over with the slice left goes on with the next burst, a slice over
    is refilled and the task, queued alone, is picked again at once."""
    fb, rf = task_frow(t, SI), cpu_frow(cpu, SI)
    at = SF[rf + RF_SEGEND]
    account(cpu, t, at, SI, SF)
    SI[cpu_row(cpu, SI) + R_PEND] -= 1
    if SF[rf + RF_FACTOR] < 0:
        TK.next_burst(t, SI, SF)
        if SF[fb + F_SLEFT] > EPS:
            segment(cpu, t, SI, SF)
            return
    if SI[Y_LOGCAP]:                 # expired, requeued and dispatched again (a 0-ms wait)
        L.log(LOG_RUN, t, cpu, -1, at - SF[fb + F_SEG], SI, SF)
        L.log(LOG_WAIT, t, cpu, -1, 0.0, SI, SF)
    SF[fb + F_SEG] = at
    SF[fb + F_SLEFT] = SF[fb + F_SLICE]
    segment(cpu, t, SI, SF)


def catch_up(cpu, now, SI, SF):
    """Something touches a CPU whose task has pending ends: replay those up to ``now`` (ends of
    bursts and slices come before any other event of the same instant) and put the timer back at the
    end of the current segment (the queue may not stay empty)."""
    rb, rf = cpu_row(cpu, SI), cpu_frow(cpu, SI)
    t = SI[rb + R_CURR]
    while SI[rb + R_PEND] and SF[rf + RF_SEGEND] <= now:
        pass_end(cpu, t, SI, SF)
    SI[rb + R_PEND] = 0
    L.schedule_at(cpu, SF[rf + RF_SEGEND], SI[rb + R_ORDER], SI, SF)


def run(cpu, t, now, SI, SF):
    """Task ``t`` starts to run on ``cpu`` at ``now`` (its wait segment closed if it was queued):
    under locality_scope 'lifetime' its next bursts serve their wall time at this CPU's speed;
    its segment and run timer are set."""
    tb, rb, rf = task_row(t, SI), cpu_row(cpu, SI), cpu_frow(cpu, SI)
    if SI[tb + T_STATE] != RUNNING:
        seg = task_frow(t, SI) + F_SEG
        if SI[Y_LOGCAP]:
            L.log(LOG_WAIT, t, cpu, -1, now - SF[seg], SI, SF)
        SF[seg] = now
    SI[rb + R_CURR] = t
    SI[tb + T_MOVED] = 0
    SI[tb + T_STATE] = RUNNING
    SI[tb + T_CPU] = cpu
    if SI[Y_LIFE]:
        node = SI[rb + R_NODE]
        SF[task_frow(t, SI) + F_SCALE] = SF[SI[OF_FR] + node * SI[Y_NODES] + SI[tb + T_HOME]]
    SF[rf + RF_START] = now
    segment(cpu, t, SI, SF)
    arm_run(cpu, t, SI, SF)


def arm_run(cpu, t, SI, SF):
    """Set the run timer of the segment just computed (looking ahead if the task is alone)."""
    rb = cpu_row(cpu, SI)
    if SI[Y_LOOK] and not SI[rb + R_NQ]:
        look_ahead(cpu, t, SI, SF)
    else:
        L.schedule_at(cpu, SF[cpu_frow(cpu, SI) + RF_SEGEND], SI[rb + R_ORDER], SI, SF)


def charge(cpu, wall, now, SI, SF):
    """The running task loses ``wall`` ms of its CPU to balancing attempts made there
    (``lb_attempt_cost``): its burst grows by the work that takes, so it ends ``wall`` later."""
    rb = cpu_row(cpu, SI)
    t = SI[rb + R_CURR]
    if SI[rb + R_PEND]:
        catch_up(cpu, now, SI, SF)
    L.cancel(cpu, SI, SF)
    account(cpu, t, now, SI, SF)
    f = SF[cpu_frow(cpu, SI) + RF_FACTOR]
    extra = wall / (f if f >= 0 else -f)
    SF[task_frow(t, SI) + F_BURST] += extra
    SF[Z_OVER] += extra
    segment(cpu, t, SI, SF)
    arm_run(cpu, t, SI, SF)


jit_module(globals(), nopython=True, cache=True)
