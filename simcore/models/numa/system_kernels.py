"""The whole NUMA scheduler compiled with numba: run queues, tasks, dispatch, the run timer's
look-ahead, I/O, migrations and the balancer's moves, on flat arrays, with every timer of the
model in one compiled calendar.

Every function transcribes a method of the Python model (named in its docstring:
``scheduler.NumaSystem``, ``runqueue.RunQueue``, ``task.Task``, ``balancer.Balancer``,
``compiled.CompiledBalancer``, the policies' ``can_migrate`` and ``place``) with the same
arithmetic in the same order on the same float64 values, and sets every timer at the key SimPy
would give the Python model's: (time, priority, insertion number). The balancer's own kernels
(:mod:`timing_kernels`) run on its buffers ``F`` and ``I`` as they do for the Python scheduler;
this module adds the scheduler's state in two more flat buffers, ``SI`` (int64) and ``SF``
(float64): a header of run-wide values and counters (``Y_*``, ``Z_*``), and blocks whose offsets
the header holds (``O_*`` in ``SI``, ``OF_*`` in ``SF``): per task, per CPU, per domain, the
run queues' lists, the draws, the calendar (built by ``compiled_system``). Flat buffers, not a
tuple of arrays: numba counts a reference to every array of a tuple at each call it is passed to.
``drain`` fires the calendar's timers up to a key (SimPy's next event), which is how :class:`simcore.models.numa.compiled_system.CompiledSystem` runs.

tests/test_numa_system.py holds every run to the Python model's, bit for bit.
"""

from __future__ import annotations

import math

from numba.cpython.unsafe.numbers import trailing_zeros

from simcore.core import calendar_kernels as C
from simcore.core.jit import njit
from simcore.models.numa import timing_kernels as K

EPS = 1e-9
LOOKAHEAD = 64
SLS = 128
N_PRIO = 40
NOT_IDLE, IDLE, NEWLY_IDLE = 0, 1, 2
NORMAL = 1

# task states (task.NEW ... task.DONE)
NEW, QUEUED, RUNNING, BLOCKED, DONE = 0, 1, 2, 3, 4

# the header of SI: run-wide values and counters ...
(Y_EID, Y_FIRED, Y_STOP, Y_STOPE, Y_UNFIN, Y_TOFIN, Y_MIGR, Y_PUSH, Y_WASTE, Y_MLEVEL, Y_AWAY, Y_HOMEM, Y_N, Y_T, Y_LOOK, Y_INSTANT, Y_IOREST,
 Y_ACTIVE, Y_IGNHOT, Y_RULES, Y_MAXMIG, Y_HOME, Y_HARD, Y_SCOPE, Y_PARENT, Y_STAMP, Y_HN, Y_NODES, Y_LEVELS,
 Y_LIFE) = range(30)
# ... and the offsets of the blocks of SI (O_*) and of SF (OF_*)
O_TI, O_RI, O_Q, O_LORD, O_LV, O_DI, O_CI, O_H, O_ZN = range(Y_LIFE + 1, Y_LIFE + 10)
OF_TF, OF_RF, OF_LT, OF_D, OF_FR, OF_DF, OF_CT, OF_ND = range(O_ZN + 1, O_ZN + 9)
Y_SIZE = OF_ND + 1
# the header of SF
Z_DELIV, Z_WORK, Z_STOPT, Z_TICK, Z_MEANIO, Z_MCOST, Z_ACOST, Z_OVER = range(8)
Z_SIZE = 8
# per task (block O_TI, T_COLS each): priority, state, CPU, home node, in the expired array,
# migrations, moved and not yet run, burst ends in I/O, I/O-bound, next draw and end of its draws,
# next and previous task of its run-queue list, levels of level_time so far
(T_PRIO, T_STATE, T_CPU, T_HOME, T_EXP, T_MIGR, T_MOVED, T_IO, T_IOBOUND, T_DI, T_DEND, T_NEXT, T_PREV,
 T_NLVL) = range(14)
T_COLS = 14
# per task (block OF_TF)
(F_SLICE, F_SLEFT, F_DEMAND, F_BURST, F_LAST, F_FIN, F_CPUT, F_SEG, F_MEANB, F_SCALE, F_DEBT) = range(11)
F_COLS = 11
# per CPU (block O_RI): current task (-1: none), queued count, cpu_load and its tick, pending ends,
# SimPy priority of the run timer, node, physical index of the active array, bitmaps of the active
# and expired arrays, in the loaded / overloaded sets, number of domains, a mark (active balancing)
(R_CURR, R_NQ, R_AVG, R_LTICK, R_PEND, R_ORDER, R_NODE, R_ACT, R_BMA, R_BME, R_LOADED, R_OVER, R_NDOMS,
 R_VISIT) = range(14)
R_COLS = 14
# per CPU (block OF_RF)
RF_START, RF_FACTOR, RF_SEGEND = range(3)
RF_COLS = 3
# per domain c * L + k (blocks O_DI, OF_DF): what the moves read of a domain
D_PERIODIC, D_EXEC, D_NICE, D_LEVEL = range(4)
D_COLS = 4
DF_HOT, DF_MINI = range(2)
DF_COLS = 2
# the run queues' lists (block O_Q): per CPU, physical array, priority: first and last task
Q_COLS = 2 * N_PRIO * 2
# the calendar: slot s keyed (SF[OF_CT + s], prio, insertion number), with its position in the heap
# (block O_H; -1: not set) in block O_CI. Slots: run timers of CPUs 0..n-1, balancing timers of
# CPUs n..2n-1, I/O waits of tasks 2n..2n+T-1.
C_PRIO, C_EID, C_POS = 0, 1, 2
C_COLS = 3


def layout(n: int, T: int, domains: int, nodes: int, levels: int, draws: int) -> tuple[dict, int, dict, int]:
    """Offsets and sizes of the blocks of SI and SF: ({O_*: offset}, SI size, {OF_*: offset}, SF size)."""
    slots = 2 * n + T
    ints = [(O_TI, T * T_COLS), (O_RI, n * R_COLS), (O_Q, n * Q_COLS), (O_LORD, T * levels), (O_LV, nodes * nodes),
            (O_DI, domains * D_COLS), (O_CI, slots * C_COLS), (O_H, slots), (O_ZN, n * nodes)]
    floats = [(OF_TF, T * F_COLS), (OF_RF, n * RF_COLS), (OF_LT, T * levels), (OF_D, draws), (OF_FR, nodes * nodes),
              (OF_DF, domains * DF_COLS), (OF_CT, slots), (OF_ND, nodes * nodes)]
    io, at = {}, Y_SIZE
    for key, size in ints:
        io[key], at = at, at + size
    fo, fat = {}, Z_SIZE
    for key, size in floats:
        fo[key], fat = fat, fat + size
    return io, at, fo, fat


# -- the calendar: a heap of simcore.core.calendar_kernels -----------------------------------------
@njit(cache=True)
def _calendar(SI):
    ci = SI[O_CI]
    return (Y_HN, SI[O_H], ci + C_POS, C_COLS, SI[OF_CT], 1, ci + C_PRIO, ci + C_EID, C_COLS)


@njit(cache=True)
def cancel(s, SI, SF):
    """Take slot ``s`` off the calendar (``Timer.cancel``)."""
    C.cancel(s, _calendar(SI), SI, SF)


@njit(cache=True)
def schedule_at(s, t, prio, SI, SF):
    """Set slot ``s`` at time ``t`` with SimPy priority ``prio`` and the next insertion number
    (replacing its key if it is set)."""
    eid = SI[Y_EID]
    SI[Y_EID] = eid + 1
    C.schedule(s, t, prio, eid, _calendar(SI), SI, SF)


@njit(cache=True)
def schedule_with(s, t, prio, eid, SI, SF):
    """Set slot ``s`` at the key (``t``, ``prio``, ``eid``) (a timer set before the run, whose
    insertion number SimPy's counter gave)."""
    C.schedule(s, t, prio, eid, _calendar(SI), SI, SF)


@njit(cache=True)
def _lowbit(bm):
    """The index of the lowest set bit of ``bm`` > 0 (``(bm & -bm).bit_length() - 1``)."""
    return trailing_zeros(bm)


# -- tasks (task.Task) -------------------------------------------------------------------------
@njit(cache=True)
def _draw(t, SI, SF):
    tb = SI[O_TI] + t * T_COLS
    i = SI[tb + T_DI]
    if i >= SI[tb + T_DEND]:
        raise IndexError("numa compiled system: a task drew more than its counted draws")
    SI[tb + T_DI] = i + 1
    return SF[SI[OF_D] + i]


@njit(cache=True)
def next_burst(t, SI, SF):
    """``Task.next_burst``."""
    tb, fb = SI[O_TI] + t * T_COLS, SI[OF_TF] + t * F_COLS
    demand = SF[fb + F_DEMAND]
    if SI[tb + T_IOBOUND]:
        b = SF[fb + F_MEANB] * _draw(t, SI, SF)
        io = b < SF[fb + F_SLICE]
        if not io:
            b = SF[fb + F_SLICE]
        b = b / SF[fb + F_SCALE]           # bursts.WallBurstTask (1.0 under locality_scope 'cpu': exact)
    else:
        b, io = demand, False
    if b >= demand:
        b, io = demand, False
    SF[fb + F_BURST] = b
    SI[tb + T_IO] = io
    SF[fb + F_DEMAND] = demand - b


@njit(cache=True)
def draw_io(t, SI, SF):
    """``Task.draw_io``."""
    fb = SI[OF_TF] + t * F_COLS
    if SI[Y_IOREST]:
        left = SF[fb + F_SLEFT]
        wait = 0.0 if 0.0 > left else left
        SF[fb + F_SLEFT] = SF[fb + F_SLICE]
        return wait
    return SF[Z_MEANIO] * _draw(t, SI, SF)


# -- run queues (runqueue.RunQueue) ------------------------------------------------------------
@njit(cache=True)
def nr_running(cpu, SI):
    rb = SI[O_RI] + cpu * R_COLS
    return SI[rb + R_NQ] + (SI[rb + R_CURR] >= 0)


@njit(cache=True)
def settle_load(cpu, now, SI, SF, F, I):
    """``RunQueue.settle_load`` (and its numpy mirrors)."""
    if SI[Y_INSTANT]:
        return
    rb = SI[O_RI] + cpu * R_COLS
    t = math.floor(now / SF[Z_TICK] + 1e-9)
    k = t - SI[rb + R_LTICK]
    if k > 0:
        cur = nr_running(cpu, SI) * SLS
        d = SI[rb + R_AVG] - cur               # runqueue.decayed; a shift of 63 or more leaves 0
        k = min(k, 63)
        avg = cur + (d >> k) if d >= 0 else cur - ((-d) >> k)
        SI[rb + R_AVG] = avg
        SI[rb + R_LTICK] = t
        F[I[K.OF_AVG] + cpu] = avg
        F[I[K.OF_TCK] + cpu] = t


@njit(cache=True)
def loads(cpu, now, SI, SF, F, I):
    """``RunQueue.loads``: (source load, target load)."""
    cur = nr_running(cpu, SI) * SLS
    if SI[Y_INSTANT]:
        return cur, cur
    settle_load(cpu, now, SI, SF, F, I)
    avg = SI[SI[O_RI] + cpu * R_COLS + R_AVG]
    return (avg, cur) if avg < cur else (cur, avg)


@njit(cache=True)
def _list(cpu, ph, i, SI):
    """Where the first task of a run-queue list is (the last is next to it)."""
    return SI[O_Q] + cpu * Q_COLS + (ph * N_PRIO + i) * 2


@njit(cache=True)
def enqueue(cpu, t, expired, head, SI):
    """``RunQueue.enqueue``."""
    rb, tb, ti = SI[O_RI] + cpu * R_COLS, SI[O_TI] + t * T_COLS, SI[O_TI]
    a = 1 if expired else 0
    i = SI[tb + T_PRIO] - 100
    q = _list(cpu, SI[rb + R_ACT] ^ a, i, SI)
    if head:
        first = SI[q]
        SI[tb + T_PREV] = -1
        SI[tb + T_NEXT] = first
        if first >= 0:
            SI[ti + first * T_COLS + T_PREV] = t
        else:
            SI[q + 1] = t
        SI[q] = t
    else:
        last = SI[q + 1]
        SI[tb + T_NEXT] = -1
        SI[tb + T_PREV] = last
        if last >= 0:
            SI[ti + last * T_COLS + T_NEXT] = t
        else:
            SI[q] = t
        SI[q + 1] = t
    SI[rb + R_BMA + a] |= 1 << i
    SI[rb + R_NQ] += 1
    SI[tb + T_EXP] = a
    SI[tb + T_STATE] = QUEUED
    SI[tb + T_CPU] = cpu


@njit(cache=True)
def dequeue(cpu, t, SI):
    """``RunQueue.dequeue``."""
    rb, tb, ti = SI[O_RI] + cpu * R_COLS, SI[O_TI] + t * T_COLS, SI[O_TI]
    a = SI[tb + T_EXP]
    i = SI[tb + T_PRIO] - 100
    q = _list(cpu, SI[rb + R_ACT] ^ a, i, SI)
    p, nx = SI[tb + T_PREV], SI[tb + T_NEXT]
    if p >= 0:
        SI[ti + p * T_COLS + T_NEXT] = nx
    else:
        SI[q] = nx
    if nx >= 0:
        SI[ti + nx * T_COLS + T_PREV] = p
    else:
        SI[q + 1] = p
    if SI[q] < 0:
        SI[rb + R_BMA + a] &= ~(1 << i)
    SI[rb + R_NQ] -= 1


@njit(cache=True)
def pick_next(cpu, SI):
    """``RunQueue.pick_next``: the head of the highest-priority active list (arrays swapped when
    the active one is empty), or -1."""
    rb, ti = SI[O_RI] + cpu * R_COLS, SI[O_TI]
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
            t = SI[_list(cpu, SI[rb + R_ACT], _lowbit(b), SI)]
            b &= b - 1
            while t >= 0:
                SI[ti + t * T_COLS + T_EXP] = 0
                t = SI[ti + t * T_COLS + T_NEXT]
    i = _lowbit(bm)
    q = _list(cpu, SI[rb + R_ACT], i, SI)
    t = SI[q]
    nx = SI[ti + t * T_COLS + T_NEXT]
    SI[q] = nx
    if nx >= 0:
        SI[ti + nx * T_COLS + T_PREV] = -1
    else:
        SI[q + 1] = -1
        SI[rb + R_BMA] = bm & ~(1 << i)
    SI[rb + R_NQ] -= 1
    return t


# -- the balancer's hooks (compiled.CompiledBalancer) -------------------------------------------
@njit(cache=True)
def set_timer(cpu, at, now, SI, SF):
    """``CompiledBalancer._set_timer``: the CPU's balancing timer at ``at`` as ``Engine.call``
    puts it (``now + max(at - now, 0)``)."""
    d = at - now
    schedule_at(SI[Y_N] + cpu, now + (d if d > 0.0 else 0.0), NORMAL, SI, SF)


@njit(cache=True)
def arm(cpu, now, SI, SF, F, I):
    at = K.arm(cpu, now, F, I)
    if at != math.inf:
        set_timer(cpu, at, now, SI, SF)


@njit(cache=True)
def on_state(cpu, idle, now, SI, SF, F, I):
    at = K.on_state(cpu, idle, now, F, I)
    if at != math.inf:
        set_timer(cpu, at, now, SI, SF)


@njit(cache=True)
def wake_domains(src, wide, now, SI, SF, F, I):
    """``CompiledBalancer._wake``."""
    out = K.wake(src, wide, now, F, I)
    for i in range(out):
        set_timer(I[I[K.O_OUTCPU] + i], F[I[K.OF_OUTAT] + i], now, SI, SF)


@njit(cache=True)
def nr_changed(cpu, now, SI, SF, F, I):
    """``NumaSystem.nr_changed``: the load mirror, the loaded and overloaded sets, and the
    balancer's wake-ups (``Balancer.on_loaded``, ``on_overload``)."""
    rb = SI[O_RI] + cpu * R_COLS
    n = nr_running(cpu, SI)
    F[I[K.OF_CUR] + cpu] = n * 128.0
    if n:
        if not SI[rb + R_LOADED]:
            SI[rb + R_LOADED] = 1
            if I[K.H_WIDE_SLEEPERS]:
                wake_domains(cpu, True, now, SI, SF, F, I)
        if n >= 2:
            if not SI[rb + R_OVER]:
                SI[rb + R_OVER] = 1
                wake_domains(cpu, False, now, SI, SF, F, I)
            return
    else:
        SI[rb + R_LOADED] = 0
    SI[rb + R_OVER] = 0


# -- the scheduler (scheduler.NumaSystem) -------------------------------------------------------
@njit(cache=True)
def account(cpu, t, now, SI, SF):
    """``NumaSystem._account``."""
    tb, fb, rf = SI[O_TI] + t * T_COLS, SI[OF_TF] + t * F_COLS, SI[OF_RF] + cpu * RF_COLS
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
    lvl = SI[SI[O_LV] + SI[SI[O_RI] + cpu * R_COLS + R_NODE] * SI[Y_NODES] + SI[tb + T_HOME]]
    order = SI[O_LORD] + t * levels + lvl
    if SI[order] < 0:
        SI[order] = SI[tb + T_NLVL]
        SI[tb + T_NLVL] += 1
    SF[SI[OF_LT] + t * levels + lvl] += elapsed
    SF[Z_DELIV] += elapsed
    SF[Z_WORK] += work
    SF[fb + F_LAST] = now
    SF[rf + RF_START] = now


@njit(cache=True)
def segment(cpu, t, SI, SF):
    """``NumaSystem._segment``."""
    fb, rf = SI[OF_TF] + t * F_COLS, SI[OF_RF] + cpu * RF_COLS
    node = SI[SI[O_RI] + cpu * R_COLS + R_NODE]
    f = SF[SI[OF_FR] + node * SI[Y_NODES] + SI[SI[O_TI] + t * T_COLS + T_HOME]]
    wall = SF[fb + F_BURST] * f
    if wall <= SF[fb + F_SLEFT] + EPS:
        SF[rf + RF_FACTOR] = -f
        length = 0.0 if 0.0 > wall else wall
    else:
        SF[rf + RF_FACTOR] = f
        length = SF[fb + F_SLEFT]
    SF[rf + RF_SEGEND] = SF[rf + RF_START] + length


@njit(cache=True)
def look_ahead(cpu, t, SI, SF):
    """``NumaSystem._look_ahead`` (``Task.upcoming`` read from the task's draws)."""
    tb, fb, rf = SI[O_TI] + t * T_COLS, SI[OF_TF] + t * F_COLS, SI[OF_RF] + cpu * RF_COLS
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
            b = meanb * SF[D + di]
            di += 1
            io = b < tslice
            if not io:
                b = tslice
            b = b / scale
            if ddemand < b:
                b = ddemand
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
    rb = SI[O_RI] + cpu * R_COLS
    SI[rb + R_PEND] = n
    schedule_at(cpu, at, SI[rb + R_ORDER], SI, SF)


@njit(cache=True)
def pass_end(cpu, t, SI, SF):
    """``NumaSystem._pass_end``."""
    fb, rf = SI[OF_TF] + t * F_COLS, SI[OF_RF] + cpu * RF_COLS
    at = SF[rf + RF_SEGEND]
    account(cpu, t, at, SI, SF)
    SI[SI[O_RI] + cpu * R_COLS + R_PEND] -= 1
    if SF[rf + RF_FACTOR] < 0:
        next_burst(t, SI, SF)
        if SF[fb + F_SLEFT] > EPS:
            segment(cpu, t, SI, SF)
            return
    SF[fb + F_SEG] = at
    SF[fb + F_SLEFT] = SF[fb + F_SLICE]
    segment(cpu, t, SI, SF)


@njit(cache=True)
def catch_up(cpu, now, SI, SF):
    """``NumaSystem._catch_up``."""
    rb, rf = SI[O_RI] + cpu * R_COLS, SI[OF_RF] + cpu * RF_COLS
    t = SI[rb + R_CURR]
    while SI[rb + R_PEND] and SF[rf + RF_SEGEND] <= now:
        pass_end(cpu, t, SI, SF)
    SI[rb + R_PEND] = 0
    schedule_at(cpu, SF[rf + RF_SEGEND], SI[rb + R_ORDER], SI, SF)


@njit(cache=True)
def run(cpu, t, now, SI, SF):
    """``NumaSystem.run``."""
    tb, rb, rf = SI[O_TI] + t * T_COLS, SI[O_RI] + cpu * R_COLS, SI[OF_RF] + cpu * RF_COLS
    if SI[tb + T_STATE] != RUNNING:
        SF[SI[OF_TF] + t * F_COLS + F_SEG] = now
    SI[rb + R_CURR] = t
    SI[tb + T_MOVED] = 0
    SI[tb + T_STATE] = RUNNING
    SI[tb + T_CPU] = cpu
    if SI[Y_LIFE]:
        node = SI[rb + R_NODE]
        SF[SI[OF_TF] + t * F_COLS + F_SCALE] = SF[SI[OF_FR] + node * SI[Y_NODES] + SI[tb + T_HOME]]
    SF[rf + RF_START] = now
    segment(cpu, t, SI, SF)
    arm_run(cpu, t, SI, SF)


@njit(cache=True)
def arm_run(cpu, t, SI, SF):
    """``NumaSystem._arm_run``."""
    rb = SI[O_RI] + cpu * R_COLS
    if SI[Y_LOOK] and not SI[rb + R_NQ]:
        look_ahead(cpu, t, SI, SF)
    else:
        schedule_at(cpu, SF[SI[OF_RF] + cpu * RF_COLS + RF_SEGEND], SI[rb + R_ORDER], SI, SF)


@njit(cache=True)
def charge(cpu, wall, now, SI, SF):
    """``NumaSystem.charge``."""
    rb = SI[O_RI] + cpu * R_COLS
    t = SI[rb + R_CURR]
    if SI[rb + R_PEND]:
        catch_up(cpu, now, SI, SF)
    cancel(cpu, SI, SF)
    account(cpu, t, now, SI, SF)
    f = SF[SI[OF_RF] + cpu * RF_COLS + RF_FACTOR]
    extra = wall / (f if f >= 0 else -f)
    SF[SI[OF_TF] + t * F_COLS + F_BURST] += extra
    SF[Z_OVER] += extra
    segment(cpu, t, SI, SF)
    arm_run(cpu, t, SI, SF)


@njit(cache=True)
def schedule(cpu, now, SI, SF, F, I):
    """``NumaSystem.schedule``."""
    nq = SI[O_RI] + cpu * R_COLS + R_NQ
    busy = I[K.O_BUSY] + cpu
    if not SI[nq]:
        newidle(cpu, now, SI, SF, F, I)
        if not SI[nq]:
            if I[busy]:
                on_state(cpu, True, now, SI, SF, F, I)
            return
    t = pick_next(cpu, SI)
    run(cpu, t, now, SI, SF)
    if not I[busy]:
        on_state(cpu, False, now, SI, SF, F, I)


@njit(cache=True)
def resched(cpu, now, SI, SF, F, I):
    """``NumaSystem.resched``."""
    rb = SI[O_RI] + cpu * R_COLS
    curr = SI[rb + R_CURR]
    if curr < 0:
        if SI[rb + R_NQ]:
            schedule(cpu, now, SI, SF, F, I)
    else:
        bm = SI[rb + R_BMA]
        if bm and 100 + _lowbit(bm) < SI[SI[O_TI] + curr * T_COLS + T_PRIO]:
            stop_current(cpu, now, SI, SF)
            schedule(cpu, now, SI, SF, F, I)


@njit(cache=True)
def stop_current(cpu, now, SI, SF):
    """``NumaSystem.stop_current``."""
    rb = SI[O_RI] + cpu * R_COLS
    t = SI[rb + R_CURR]
    fb = SI[OF_TF] + t * F_COLS
    if SI[rb + R_PEND]:
        catch_up(cpu, now, SI, SF)
    cancel(cpu, SI, SF)
    account(cpu, t, now, SI, SF)
    SF[fb + F_SEG] = now
    SI[rb + R_CURR] = -1
    if SF[fb + F_SLEFT] <= EPS:
        SF[fb + F_SLEFT] = SF[fb + F_SLICE]
        enqueue(cpu, t, True, False, SI)
    else:
        enqueue(cpu, t, False, True, SI)


@njit(cache=True)
def activate(t, cpu, now, SI, SF, F, I):
    """``NumaSystem.activate``."""
    if SI[SI[O_RI] + cpu * R_COLS + R_PEND]:
        catch_up(cpu, now, SI, SF)
    settle_load(cpu, now, SI, SF, F, I)
    enqueue(cpu, t, False, False, SI)
    SF[SI[OF_TF] + t * F_COLS + F_SEG] = now
    nr_changed(cpu, now, SI, SF, F, I)
    resched(cpu, now, SI, SF, F, I)


@njit(cache=True)
def run_end(cpu, now, SI, SF, F, I):
    """``NumaSystem.run_end`` (the CPU's run timer fired)."""
    rb = SI[O_RI] + cpu * R_COLS
    t = SI[rb + R_CURR]
    tb, fb = SI[O_TI] + t * T_COLS, SI[OF_TF] + t * F_COLS
    while SI[rb + R_PEND]:
        pass_end(cpu, t, SI, SF)
    account(cpu, t, now, SI, SF)
    if SF[SI[OF_RF] + cpu * RF_COLS + RF_FACTOR] < 0:
        SF[fb + F_BURST] = 0.0
        if SF[fb + F_DEMAND] <= 0.0:
            finish(cpu, t, now, SI, SF, F, I)
            return
        if SI[tb + T_IO]:
            block(cpu, t, now, SI, SF, F, I)
            return
        next_burst(t, SI, SF)
        if SF[fb + F_SLEFT] > EPS:
            run(cpu, t, now, SI, SF)
            return
    else:
        SF[fb + F_SLEFT] = 0.0
    SF[fb + F_SEG] = now
    settle_load(cpu, now, SI, SF, F, I)
    SI[rb + R_CURR] = -1
    SF[fb + F_SLEFT] = SF[fb + F_SLICE]
    enqueue(cpu, t, True, False, SI)
    schedule(cpu, now, SI, SF, F, I)


@njit(cache=True)
def finish(cpu, t, now, SI, SF, F, I):
    """``NumaSystem._finish``: the run stops once the workload's last task is done (``Engine.stop``:
    a stop event at this instant, keyed as SimPy would key it)."""
    SF[SI[OF_TF] + t * F_COLS + F_FIN] = now
    SI[Y_UNFIN] -= 1
    SI[Y_TOFIN] -= 1
    if not SI[Y_TOFIN]:
        SI[Y_STOP] = 1
        SF[Z_STOPT] = now
        SI[Y_STOPE] = SI[Y_EID]
        SI[Y_EID] += 1
    vacate(cpu, t, now, DONE, SI, SF, F, I)


@njit(cache=True)
def block(cpu, t, now, SI, SF, F, I):
    """``NumaSystem._block``."""
    fb = SI[OF_TF] + t * F_COLS
    next_burst(t, SI, SF)
    delay = draw_io(t, SI, SF)
    schedule_at(2 * SI[Y_N] + t, now + delay, NORMAL, SI, SF)
    if SF[fb + F_SLEFT] <= EPS:
        SF[fb + F_SLEFT] = SF[fb + F_SLICE]
    vacate(cpu, t, now, BLOCKED, SI, SF, F, I)


@njit(cache=True)
def vacate(cpu, t, now, state, SI, SF, F, I):
    """``NumaSystem._vacate``."""
    SF[SI[OF_TF] + t * F_COLS + F_SEG] = now
    settle_load(cpu, now, SI, SF, F, I)
    SI[SI[O_RI] + cpu * R_COLS + R_CURR] = -1
    SI[SI[O_TI] + t * T_COLS + T_STATE] = state
    nr_changed(cpu, now, SI, SF, F, I)
    schedule(cpu, now, SI, SF, F, I)


@njit(cache=True)
def pull(t, src, dst, now, SI, SF, F, I):
    """``NumaSystem.pull``."""
    tb = SI[O_TI] + t * T_COLS
    if SI[SI[O_RI] + dst * R_COLS + R_PEND]:
        catch_up(dst, now, SI, SF)
    settle_load(src, now, SI, SF, F, I)
    settle_load(dst, now, SI, SF, F, I)
    dequeue(src, t, SI)
    SF[SI[OF_TF] + t * F_COLS + F_SEG] = now
    enqueue(dst, t, SI[tb + T_EXP] != 0, False, SI)
    SI[tb + T_MIGR] += 1
    SI[Y_MIGR] += 1
    if SF[Z_MCOST]:
        fb = SI[OF_TF] + t * F_COLS
        extra = SF[Z_MCOST] - SF[fb + F_DEBT]
        SF[fb + F_BURST] += extra
        SF[Z_OVER] += extra
        SF[fb + F_DEBT] = SF[Z_MCOST]
    nodes, home = SI[Y_NODES], SI[tb + T_HOME]
    sn, dn = SI[SI[O_RI] + src * R_COLS + R_NODE], SI[SI[O_RI] + dst * R_COLS + R_NODE]
    SI[Y_MLEVEL] += SI[SI[O_LV] + sn * nodes + dn]
    if sn != home:
        SI[Y_AWAY] += 1
        if dn == home:
            SI[Y_HOMEM] += 1
    if SI[tb + T_MOVED]:
        SI[Y_WASTE] += 1
    SI[tb + T_MOVED] = 1
    nr_changed(src, now, SI, SF, F, I)
    nr_changed(dst, now, SI, SF, F, I)


# -- placement (policies.LinuxPolicy.place, NumaSystem.exec_balance) -----------------------------
@njit(cache=True)
def exec_balance(parent, now, SI, SF, F, I):
    """``NumaSystem.exec_balance``."""
    if nr_running(parent, SI) == 0:
        return parent
    n, L = I[K.H_N], I[K.H_L]
    d = -1
    for k in range(SI[SI[O_RI] + parent * R_COLS + R_NDOMS] - 1, -1, -1):
        if SI[SI[O_DI] + (parent * L + k) * D_COLS + D_EXEC]:
            d = parent * L + k
            break
    if d < 0:
        return parent
    min_load, min_cpu = math.inf, parent
    span = I[K.O_SPAN] + d * n
    for c in range(n):
        if not I[span + c]:
            continue
        load = loads(c, now, SI, SF, F, I)[1]
        if load < min_load:
            min_load, min_cpu = load, c
            if load == 0:
                break
    this = loads(parent, now, SI, SF, F, I)[0] + SLS
    if min_load * (100 + (I[I[K.O_IMB] + d] - 100) // 2) < this * 100:
        return min_cpu
    return parent


@njit(cache=True)
def create(t, parent, now, SI, SF, F, I):
    """``NumaSystem.create`` for a task of the compiled system (the policy's placement, then
    ``activate``)."""
    SI[Y_UNFIN] += 1
    cpu = parent if SI[Y_PARENT] else exec_balance(parent, now, SI, SF, F, I)
    SI[SI[O_TI] + t * T_COLS + T_HOME] = SI[SI[O_RI] + cpu * R_COLS + R_NODE]
    activate(t, cpu, now, SI, SF, F, I)
    return cpu


# -- the balancer's moves (balancer.Balancer, compiled.CompiledBalancer) -------------------------
@njit(cache=True)
def policy_allows(t, src, dst, idle, SI, SF):
    """The policy's ``can_migrate``: Linux allows every move; the conservative policies
    (``policies.Conservative.can_migrate``) refuse aged tasks, moves away from home, and (hard)
    tasks whose home lies outside the zone of the pulling CPU."""
    if not SI[Y_RULES]:
        return True
    if idle != NOT_IDLE and SI[Y_SCOPE]:
        return True
    tb = SI[O_TI] + t * T_COLS
    if SI[tb + T_MIGR] >= SI[Y_MAXMIG]:
        return False
    home, nodes = SI[tb + T_HOME], SI[Y_NODES]
    ns, nd = SI[SI[O_RI] + src * R_COLS + R_NODE], SI[SI[O_RI] + dst * R_COLS + R_NODE]
    ND = SI[OF_ND]
    if SI[Y_HOME]:
        if SF[ND + nd * nodes + home] > SF[ND + ns * nodes + home]:
            return False
    elif SF[ND + ns * nodes + nd] > SF[ND + ns * nodes + home]:
        return False
    if SI[Y_HARD] and not SI[SI[O_ZN] + dst * nodes + home]:
        return False
    return True


@njit(cache=True)
def can_migrate(t, src, dst, d, idle, ignore_hot, now, SI, SF, I):
    """``Balancer.can_migrate``."""
    if not policy_allows(t, src, dst, idle, SI, SF):
        return False
    if ignore_hot or I[I[K.O_FAILED] + d] > SI[SI[O_DI] + d * D_COLS + D_NICE]:
        return True
    if SI[Y_IGNHOT] and idle != NOT_IDLE:
        return True
    return now - SF[SI[OF_TF] + t * F_COLS + F_LAST] >= SF[SI[OF_DF] + d * DF_COLS + DF_HOT]


@njit(cache=True)
def move_tasks(src, dst, max_nr, d, idle, now, SI, SF, F, I):
    """``Balancer.move_tasks`` over ``RunQueue.migration_candidates``: the expired array, then the
    active one, by priority, each list from its tail."""
    rb, ti = SI[O_RI] + src * R_COLS, SI[O_TI]
    moved = 0
    for a in (1, 0):
        bm = SI[rb + R_BMA + a]
        ph = SI[rb + R_ACT] ^ a
        while bm:
            i = _lowbit(bm)
            bm &= bm - 1
            t = SI[_list(src, ph, i, SI) + 1]
            while t >= 0:
                before = SI[ti + t * T_COLS + T_PREV]
                if moved >= max_nr:
                    return moved
                if can_migrate(t, src, dst, d, idle, False, now, SI, SF, I):
                    pull(t, src, dst, now, SI, SF, F, I)
                    moved += 1
                t = before
    return moved


@njit(cache=True)
def push_one(src, dst, d, idle, now, SI, SF, F, I):
    """``Balancer._push_one``."""
    rb, ti = SI[O_RI] + src * R_COLS, SI[O_TI]
    for a in (1, 0):
        bm = SI[rb + R_BMA + a]
        ph = SI[rb + R_ACT] ^ a
        while bm:
            i = _lowbit(bm)
            bm &= bm - 1
            t = SI[_list(src, ph, i, SI) + 1]
            while t >= 0:
                if can_migrate(t, src, dst, d, idle, True, now, SI, SF, I):
                    pull(t, src, dst, now, SI, SF, F, I)
                    resched(dst, now, SI, SF, F, I)
                    return True
                t = SI[ti + t * T_COLS + T_PREV]
    return False


@njit(cache=True)
def active_balance(src, idle, now, SI, SF, F, I):
    """``Balancer.active_balance``."""
    n, L = I[K.H_N], I[K.H_L]
    ri = SI[O_RI]
    rb = ri + src * R_COLS
    if SI[rb + R_CURR] >= 0:
        stop_current(src, now, SI, SF)
    pushed = 0
    SI[Y_STAMP] += 1
    stamp = SI[Y_STAMP]
    SI[rb + R_VISIT] = stamp
    for k in range(SI[rb + R_NDOMS]):
        d = src * L + k
        if not SI[SI[O_DI] + d * D_COLS + D_PERIODIC]:
            break
        ng, local, gof = I[I[K.O_NGROUPS] + d], I[I[K.O_LOCAL] + d], I[K.O_GOF] + d * n
        for gi in range(ng):
            g = (local + gi) % ng
            for c in range(n):
                if I[gof + c] != g:
                    continue
                if not SI[rb + R_NQ]:
                    SI[Y_PUSH] += pushed
                    schedule(src, now, SI, SF, F, I)
                    return
                cb = ri + c * R_COLS
                if SI[cb + R_VISIT] == stamp:
                    continue
                SI[cb + R_VISIT] = stamp
                if SI[cb + R_CURR] < 0 and not SI[cb + R_NQ] and push_one(src, c, d, idle, now, SI, SF, F, I):
                    pushed += 1
    SI[Y_PUSH] += pushed
    schedule(src, now, SI, SF, F, I)


@njit(cache=True)
def after_search(this, d, busiest, imb, idle, now, SI, SF, F, I):
    """``Balancer._after_search``."""
    failed, ivl = I[K.O_FAILED] + d, I[K.OF_IVL] + d
    moved = 0
    if nr_running(busiest, SI) > 1:
        moved = move_tasks(busiest, this, imb, d, idle, now, SI, SF, F, I)
    if moved:
        I[failed] = 0
        F[ivl] = SF[SI[OF_DF] + d * DF_COLS + DF_MINI]
        return moved
    I[failed] += 1
    I[K.H_FAILED] += 1
    nice = SI[SI[O_DI] + d * D_COLS + D_NICE]
    if SI[Y_ACTIVE] and I[failed] > nice + 2:
        active_balance(busiest, idle, now, SI, SF, F, I)
        I[failed] = nice
    if F[ivl] < F[I[K.OF_MAXI] + d]:
        F[ivl] += 1
    return 0


@njit(cache=True)
def carry_on(cpu, j, idle, now, SI, SF, F, I):
    """``CompiledBalancer._carry_on``: the attempt of the CPU's ``j``-th periodic domain, whose
    search found a busiest queue, carried on."""
    d = cpu * I[K.H_L] + I[I[K.O_PD] + cpu * I[K.H_P] + j]
    imb, busiest, was_quiet = I[K.H_IMB], I[K.H_BUSIEST], I[K.H_QUIET]
    moved = after_search(cpu, d, busiest, imb, IDLE if idle else NOT_IDLE, now, SI, SF, F, I)
    F[I[K.OF_LAST] + d] = now
    if I[K.H_SLEEPS] and (was_quiet or K.quiet(cpu, d, F, I)):
        I[I[K.O_DORMANT] + d] = 1
        if I[I[K.O_HASWIDE] + d]:
            I[K.H_WIDE_SLEEPERS] += 1
    return moved


@njit(cache=True)
def fire(cpu, now, SI, SF, F, I):
    """``Balancer.fire`` (the CPU's balancing timer fired): ``timing_kernels.periodic``, with the
    attempts that found a group carried on (``CompiledBalancer._found``)."""
    busy = I[K.O_BUSY] + cpu
    was_busy = I[busy] != 0
    made = I[K.H_ATTEMPTS]
    r = K.periodic(cpu, 0, now, I[busy] == 0, False, F, I)
    made = I[K.H_ATTEMPTS] - made
    if r < 0:
        idle = I[busy] == 0
        moved_any = False
        while r < 0:
            j = int(-r) - 1
            if carry_on(cpu, j, idle, now, SI, SF, F, I):
                idle = False
                moved_any = True
            a = I[K.H_ATTEMPTS]           # (a push's newly-idle attempts on another CPU are not this CPU's)
            r = K.periodic(cpu, j + 1, now, idle, moved_any, F, I)
            made += I[K.H_ATTEMPTS] - a
        charge_attempts(cpu, was_busy, made, now, SI, SF)
        if moved_any:
            resched(cpu, now, SI, SF, F, I)
            arm(cpu, now, SI, SF, F, I)
            return
    else:
        charge_attempts(cpu, was_busy, made, now, SI, SF)
    if r != math.inf:
        set_timer(cpu, r, now, SI, SF)


@njit(cache=True)
def charge_attempts(cpu, was_busy, made, now, SI, SF):
    """The end of ``Balancer.fire``'s loop: a busy CPU's attempts take its running task's time."""
    if was_busy and made and SF[Z_ACOST]:
        charge(cpu, made * SF[Z_ACOST], now, SI, SF)


@njit(cache=True)
def newidle(cpu, now, SI, SF, F, I):
    """``CompiledBalancer.newidle``."""
    L = I[K.H_L]
    k = K.newidle(cpu, 0, now, F, I)
    while k:
        busiest = I[K.H_BUSIEST]
        if nr_running(busiest, SI) > 1 and move_tasks(busiest, cpu, I[K.H_IMB], cpu * L + k - 1, NEWLY_IDLE, now,
                                                      SI, SF, F, I):
            return
        I[K.H_FAILED] += 1
        k = K.newidle(cpu, k, now, F, I)


# -- the calendar's timers ----------------------------------------------------------------------
@njit(cache=True)
def drain(stop_t, stop_p, stop_e, SI, SF, F, I):
    """Fire, in key order, every timer of the calendar keyed before (``stop_t``, ``stop_p``,
    ``stop_e``) (SimPy's next event) and before the stop of the run if the workload's last task
    has finished (``SI[Y_STOP]``, at ``SF[Z_STOPT]``, ``SI[Y_STOPE]``). ``SI[Y_FIRED]``: how many."""
    n = SI[Y_N]
    fired = 0
    while True:
        if SI[Y_STOP] and C.key_before(SF[Z_STOPT], NORMAL, SI[Y_STOPE], stop_t, stop_p, stop_e):
            stop_t, stop_p, stop_e = SF[Z_STOPT], NORMAL, SI[Y_STOPE]
        s = C.first_due(stop_t, stop_p, stop_e, _calendar(SI), SI, SF)
        if s < 0:
            break
        t = SF[SI[OF_CT] + s]
        cancel(s, SI, SF)
        fired += 1
        if s < n:
            run_end(s, t, SI, SF, F, I)
        elif s < 2 * n:
            fire(s - n, t, SI, SF, F, I)
        else:
            task = s - 2 * n
            activate(task, SI[SI[O_TI] + task * T_COLS + T_CPU], t, SI, SF, F, I)     # NumaSystem.wake
    SI[Y_FIRED] = fired
