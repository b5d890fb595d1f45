"""The scheduler: dispatch, preemption, a run's end (burst, I/O, exit), wake-ups, and the
creation and placement of new tasks (their parent's CPU, or 2.6.11 exec balancing).

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

import math

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa import hook_kernels as HK
from simcore.models.numa import layout_kernels as L
from simcore.models.numa import migrate_kernels as MK
from simcore.models.numa import run_kernels as RK
from simcore.models.numa import runqueue_kernels as RQ
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import task_kernels as TK
from simcore.models.numa.layout_kernels import (
    BLOCKED,
    DONE,
    EPS,
    LOG_IO,
    LOG_RUN,
    LOG_WAIT,
    NORMAL,
)
from simcore.models.numa.search_kernels import SLS
from simcore.models.numa.slots_kernels import (
    D_EXEC,
    F_BURST,
    F_DEMAND,
    F_FIN,
    F_SCALE,
    F_SEG,
    F_SLEFT,
    F_SLICE,
    OF_FR,
    R_BMA,
    R_CURR,
    R_NDOMS,
    R_NODE,
    R_NQ,
    R_PEND,
    RF_FACTOR,
    T_CPU,
    T_HOME,
    T_IO,
    T_PRIO,
    T_STATE,
    Y_EID,
    Y_LIFE,
    Y_LOGCAP,
    Y_MEMAT,
    Y_N,
    Y_NODES,
    Y_PARENT,
    Y_STOP,
    Y_STOPE,
    Y_TOFIN,
    Y_UNFIN,
    Z_STOPT,
    cpu_frow,
    cpu_row,
    domain_row,
    task_frow,
    task_row,
)


def schedule(cpu, now, SI, SF, F, I):
    """``schedule()`` on an idle CPU: newly-idle balancing if the queue is empty, then dispatch."""
    nq = cpu_row(cpu, SI) + R_NQ
    busy = I[SL.O_BUSY] + cpu
    if not SI[nq]:
        MK.newidle(cpu, now, SI, SF, F, I)
        if not SI[nq]:
            if I[busy]:
                HK.on_state(cpu, True, now, SI, SF, F, I)
            return
    t = RQ.pick_next(cpu, SI)
    RK.run(cpu, t, now, SI, SF)
    if not I[busy]:
        HK.on_state(cpu, False, now, SI, SF, F, I)


def resched(cpu, now, SI, SF, F, I):
    """Run something if idle; preempt the current task if a queued one has higher priority."""
    rb = cpu_row(cpu, SI)
    curr = SI[rb + R_CURR]
    if curr < 0:
        if SI[rb + R_NQ]:
            schedule(cpu, now, SI, SF, F, I)
    else:
        bm = SI[rb + R_BMA]
        if bm and 100 + L.lowbit(bm) < SI[task_row(curr, SI) + T_PRIO]:
            stop_current(cpu, now, SI, SF)
            schedule(cpu, now, SI, SF, F, I)


def stop_current(cpu, now, SI, SF):
    """Stop the current task and queue it (no dispatch here): at the head of its active list, or at
    the tail of the expired array with a new slice if its slice is used up."""
    rb = cpu_row(cpu, SI)
    t = SI[rb + R_CURR]
    fb = task_frow(t, SI)
    if SI[rb + R_PEND]:
        RK.catch_up(cpu, now, SI, SF)
    L.cancel(cpu, SI, SF)
    RK.account(cpu, t, now, SI, SF)
    if SI[Y_LOGCAP]:
        L.log(LOG_RUN, t, cpu, -1, now - SF[fb + F_SEG], SI, SF)
    SF[fb + F_SEG] = now
    SI[rb + R_CURR] = -1
    if SF[fb + F_SLEFT] <= EPS:
        SF[fb + F_SLEFT] = SF[fb + F_SLICE]
        RQ.enqueue(cpu, t, True, False, SI)
    else:
        RQ.enqueue(cpu, t, False, True, SI)


def activate(t, cpu, now, SI, SF, F, I):
    """Queue task ``t`` on ``cpu`` (in the active array) and let it preempt or start there."""
    if SI[cpu_row(cpu, SI) + R_PEND]:
        RK.catch_up(cpu, now, SI, SF)
    RQ.settle_load(cpu, now, SI, SF, F, I)
    RQ.enqueue(cpu, t, False, False, SI)
    SF[task_frow(t, SI) + F_SEG] = now
    HK.nr_changed(cpu, now, SI, SF, F, I)
    resched(cpu, now, SI, SF, F, I)


def wake(t, now, SI, SF, F, I):
    """I/O completion: the task is woken on the CPU it last ran on (no waker task to pull it). The
    I/O wait of ``t`` is over; it is queued on the CPU it last ran on."""
    if SI[Y_LOGCAP]:
        L.log(LOG_IO, t, -1, -1, now - SF[task_frow(t, SI) + F_SEG], SI, SF)
    activate(t, SI[task_row(t, SI) + T_CPU], now, SI, SF, F, I)


def run_end(cpu, now, SI, SF, F, I):
    """``cpu``'s run timer fired: its task's burst or timeslice is over (after the pending ends
    before it): it finishes, blocks for I/O, goes on with its next burst, or goes to the expired
    array."""
    rb = cpu_row(cpu, SI)
    t = SI[rb + R_CURR]
    tb, fb = task_row(t, SI), task_frow(t, SI)
    while SI[rb + R_PEND]:
        RK.pass_end(cpu, t, SI, SF)
    RK.account(cpu, t, now, SI, SF)
    if SF[cpu_frow(cpu, SI) + RF_FACTOR] < 0:
        SF[fb + F_BURST] = 0.0
        if SF[fb + F_DEMAND] <= 0.0:
            finish(cpu, t, now, SI, SF, F, I)
            return
        if SI[tb + T_IO]:
            block(cpu, t, now, SI, SF, F, I)
            return
        TK.next_burst(t, SI, SF)
        if SF[fb + F_SLEFT] > EPS:
            RK.run(cpu, t, now, SI, SF)
            return
    else:
        SF[fb + F_SLEFT] = 0.0
    if SI[Y_LOGCAP]:
        L.log(LOG_RUN, t, cpu, -1, now - SF[fb + F_SEG], SI, SF)
    SF[fb + F_SEG] = now
    RQ.settle_load(cpu, now, SI, SF, F, I)
    SI[rb + R_CURR] = -1
    SF[fb + F_SLEFT] = SF[fb + F_SLICE]
    RQ.enqueue(cpu, t, True, False, SI)
    schedule(cpu, now, SI, SF, F, I)


def finish(cpu, t, now, SI, SF, F, I):
    """Task ``t`` on ``cpu`` has served its whole demand. The run stops once the workload's last
    task is done (``Engine.stop``: a stop event at this instant, keyed as SimPy would key it)."""
    SF[task_frow(t, SI) + F_FIN] = now
    SI[Y_UNFIN] -= 1
    SI[Y_TOFIN] -= 1
    if not SI[Y_TOFIN]:
        SI[Y_STOP] = 1
        SF[Z_STOPT] = now
        SI[Y_STOPE] = SI[Y_EID]
        SI[Y_EID] += 1
    vacate(cpu, t, now, DONE, SI, SF, F, I)


def block(cpu, t, now, SI, SF, F, I):
    """The current task starts an I/O wait; it wakes on this CPU when the wait is over."""
    fb = task_frow(t, SI)
    TK.next_burst(t, SI, SF)
    delay = TK.draw_io(t, SI, SF)
    L.schedule_at(2 * SI[Y_N] + t, now + delay, NORMAL, SI, SF)
    if SF[fb + F_SLEFT] <= EPS:
        SF[fb + F_SLEFT] = SF[fb + F_SLICE]
    vacate(cpu, t, now, BLOCKED, SI, SF, F, I)


def vacate(cpu, t, now, state, SI, SF, F, I):
    """The current task leaves the CPU and its run queue (``state``: done or blocked); run the next."""
    seg = task_frow(t, SI) + F_SEG
    if SI[Y_LOGCAP]:
        L.log(LOG_RUN, t, cpu, -1, now - SF[seg], SI, SF)
    SF[seg] = now
    RQ.settle_load(cpu, now, SI, SF, F, I)
    SI[cpu_row(cpu, SI) + R_CURR] = -1
    SI[task_row(t, SI) + T_STATE] = state
    HK.nr_changed(cpu, now, SI, SF, F, I)
    schedule(cpu, now, SI, SF, F, I)


def exec_balance(parent, now, SI, SF, F, I):
    """2.6.11 ``sched_balance_exec``: from a CPU with other work, go to the idlest CPU of the
    highest exec-balancing domain if it is enough less loaded."""
    if RQ.nr_running(parent, SI) == 0:
        return parent
    n, L = I[SL.H_N], I[SL.H_L]
    d = -1
    for k in range(SI[cpu_row(parent, SI) + R_NDOMS] - 1, -1, -1):
        if SI[domain_row(parent * L + k, SI) + D_EXEC]:
            d = parent * L + k
            break
    if d < 0:
        return parent
    min_load, min_cpu = math.inf, parent
    span = I[SL.O_SPANL] + d * n
    for i in range(I[I[SL.O_SPANN] + d]):
        c = I[span + i]
        load = RQ.loads(c, now, SI, SF, F, I)[1]
        if load < min_load:
            min_load, min_cpu = load, c
            if load == 0:
                break
    this = RQ.loads(parent, now, SI, SF, F, I)[0] + SLS
    if min_load * (100 + (I[I[SL.O_IMB] + d] - 100) // 2) < this * 100:
        return min_cpu
    return parent


def create(t, parent, now, SI, SF, F, I):
    """A new task ``t`` created on CPU ``parent``: its placement (its parent's CPU, or 2.6.11 exec
    balancing), its home node (where it starts, or where it was created), its first burst, then
    ``activate``. Returns its CPU."""
    SI[Y_UNFIN] += 1
    cpu = parent if SI[Y_PARENT] else exec_balance(parent, now, SI, SF, F, I)
    memory = parent if SI[Y_MEMAT] else cpu     # home_node 'creation' (corr05 2.2) or 'start'
    home = SI[cpu_row(memory, SI) + R_NODE]
    SI[task_row(t, SI) + T_HOME] = home
    if SI[Y_LIFE]:                              # its first burst, drawn at the speed where it starts
        node = SI[cpu_row(cpu, SI) + R_NODE]
        SF[task_frow(t, SI) + F_SCALE] = SF[SI[OF_FR] + node * SI[Y_NODES] + home]
    TK.next_burst(t, SI, SF)
    if SI[Y_LOGCAP] and cpu != parent:          # created on its parent's CPU, placed at once elsewhere
        L.log(LOG_WAIT, t, parent, -1, 0.0, SI, SF)
    activate(t, cpu, now, SI, SF, F, I)
    return cpu


jit_module(globals(), nopython=True, cache=True)
