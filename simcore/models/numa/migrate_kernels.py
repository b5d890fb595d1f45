"""Moving tasks between CPUs: a pull, the rules a move must pass (the policy's, then cache
hotness), ``move_tasks`` and the newly-idle balance.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa import hook_kernels as HK
from simcore.models.numa import layout_kernels as L
from simcore.models.numa import run_kernels as RK
from simcore.models.numa import runqueue_kernels as RQ
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import timing_kernels as K
from simcore.models.numa.layout_kernels import (
    LOG_MOVE,
    LOG_WAIT,
    REF_AGED,
    REF_DISTANCE,
    REF_ZONE,
    SCOPE_BUSY,
)
from simcore.models.numa.search_kernels import NEWLY_IDLE, NOT_IDLE
from simcore.models.numa.slots_kernels import (
    D_NICE,
    DF_HOT,
    F_BURST,
    F_DEBT,
    F_LAST,
    F_SEG,
    O_LV,
    O_ZN,
    OF_ND,
    R_ACT,
    R_BMA,
    R_NODE,
    R_PEND,
    T_EXP,
    T_HOME,
    T_MIGR,
    T_MOVED,
    T_PREV,
    Y_AGEMEM,
    Y_AWAY,
    Y_FOUND,
    Y_HARD,
    Y_HOME,
    Y_HOMEM,
    Y_IGNHOT,
    Y_LOGCAP,
    Y_MAXMIG,
    Y_MIGR,
    Y_MLEVEL,
    Y_NODES,
    Y_REFAGE,
    Y_RULES,
    Y_SCOPE,
    Y_WASTE,
    Z_MCOST,
    Z_OVER,
    cpu_row,
    domain_frow,
    domain_row,
    task_frow,
    task_row,
)


def pull(t, src, dst, now, SI, SF, F, I):
    """Move a queued task from ``src`` to the same array of ``dst`` (no dispatch here)."""
    tb = task_row(t, SI)
    if SI[cpu_row(dst, SI) + R_PEND]:
        RK.catch_up(dst, now, SI, SF)
    RQ.settle_load(src, now, SI, SF, F, I)
    RQ.settle_load(dst, now, SI, SF, F, I)
    RQ.dequeue(src, t, SI)
    seg = task_frow(t, SI) + F_SEG
    if SI[Y_LOGCAP]:                 # the wait on the source CPU closes; the move
        L.log(LOG_WAIT, t, src, -1, now - SF[seg], SI, SF)
        L.log(LOG_MOVE, t, src, dst, now, SI, SF)
    SF[seg] = now
    RQ.enqueue(dst, t, SI[tb + T_EXP] != 0, False, SI)
    SI[tb + T_MIGR] += 1
    SI[Y_MIGR] += 1
    if SF[Z_MCOST]:
        fb = task_frow(t, SI)
        extra = SF[Z_MCOST] - SF[fb + F_DEBT]
        SF[fb + F_BURST] += extra
        SF[Z_OVER] += extra
        SF[fb + F_DEBT] = SF[Z_MCOST]
    nodes, home = SI[Y_NODES], SI[tb + T_HOME]
    sn, dn = SI[cpu_row(src, SI) + R_NODE], SI[cpu_row(dst, SI) + R_NODE]
    SI[Y_MLEVEL] += SI[SI[O_LV] + sn * nodes + dn]
    if sn != home:
        SI[Y_AWAY] += 1
        if dn == home:
            SI[Y_HOMEM] += 1
    if SI[tb + T_MOVED]:
        SI[Y_WASTE] += 1
    SI[tb + T_MOVED] = 1
    if SI[Y_AGEMEM] and SI[tb + T_MIGR] == SI[Y_MAXMIG]:   # aged here: its memory pages follow it
        SI[tb + T_HOME] = dn
    HK.nr_changed(src, now, SI, SF, F, I)
    HK.nr_changed(dst, now, SI, SF, F, I)


def refusal(t, src, dst, idle, SI, SF):
    """The policy's rule of moves (``policies.LinuxPolicy.rules``): 0 if it allows moving task ``t``
    from ``src`` to ``dst`` in balancing of kind ``idle``, else why not (``REF_*``). Linux allows
    every move; the conservative policies refuse aged tasks (``max_migrations``: REF_AGED), moves
    away from home (``distance_rule``: REF_DISTANCE) and (hard) tasks whose home lies outside the
    zone of the pulling CPU (REF_ZONE), in the balancing ``rules_scope`` names: every kind, a busy
    CPU's periodic balancing, or every CPU's periodic balancing (not newly-idle)."""
    if not SI[Y_RULES]:
        return 0
    scope = SI[Y_SCOPE]
    if idle != NOT_IDLE and scope and (scope == SCOPE_BUSY or idle == NEWLY_IDLE):
        return 0
    tb = task_row(t, SI)
    if SI[tb + T_MIGR] >= SI[Y_MAXMIG]:
        return REF_AGED
    home, nodes = SI[tb + T_HOME], SI[Y_NODES]
    ns, nd = SI[cpu_row(src, SI) + R_NODE], SI[cpu_row(dst, SI) + R_NODE]
    ND = SI[OF_ND]
    if SI[Y_HOME]:
        if SF[ND + nd * nodes + home] > SF[ND + ns * nodes + home]:
            return REF_DISTANCE
    elif SF[ND + ns * nodes + nd] > SF[ND + ns * nodes + home]:
        return REF_DISTANCE
    if SI[Y_HARD] and not SI[SI[O_ZN] + dst * nodes + home]:
        return REF_ZONE
    return 0


def policy_allows(t, src, dst, idle, SI, SF):
    """Whether the policy's rule of moves allows the move (``refusal`` is 0)."""
    return refusal(t, src, dst, idle, SI, SF) == 0


def can_migrate(t, src, dst, d, idle, ignore_hot, now, SI, SF, I):
    """2.6.11 ``can_migrate_task`` for task ``t`` from ``src`` to ``dst`` in domain ``d``: the
    policy's rule of moves first (a refusal counted by its reason), then cache hotness (a task that ran less than the
    domain's
    ``cache_hot_time`` ago stays, unless the domain failed more than ``cache_nice_tries`` times,
    or an idle CPU pulls with ``idle_ignores_cache_hot``, or ``ignore_hot``: active balancing)."""
    why = refusal(t, src, dst, idle, SI, SF)
    if why:
        SI[Y_REFAGE + why - 1] += 1
        return False
    if ignore_hot or I[I[SL.O_FAILED] + d] > SI[domain_row(d, SI) + D_NICE]:
        return True
    if SI[Y_IGNHOT] and idle != NOT_IDLE:
        return True
    return now - SF[task_frow(t, SI) + F_LAST] >= SF[domain_frow(d, SI) + DF_HOT]


def move_tasks(src, dst, max_nr, d, idle, ignore_hot, now, SI, SF, F, I):
    """2.6.11 ``move_tasks``: pull up to ``max_nr`` tasks from ``src`` to ``dst`` that
    ``can_migrate`` allows (cache-hot ones too with ``ignore_hot``), the expired array first, then
    the active one, best priority first, each list from its tail; returns how many moved."""
    rb = cpu_row(src, SI)
    moved = 0
    for a in (1, 0):
        bm = SI[rb + R_BMA + a]
        ph = SI[rb + R_ACT] ^ a
        while bm:
            i = L.lowbit(bm)
            bm &= bm - 1
            t = SI[RQ.queue_at(src, ph, i, SI) + 1]
            while t >= 0:
                before = SI[task_row(t, SI) + T_PREV]
                if moved >= max_nr:
                    return moved
                if can_migrate(t, src, dst, d, idle, ignore_hot, now, SI, SF, I):
                    pull(t, src, dst, now, SI, SF, F, I)
                    moved += 1
                t = before
    return moved


def newidle(cpu, now, SI, SF, F, I):
    """2.6.11 ``idle_balance``: ``cpu`` has nothing to run; its newly-idle domains, bottom-up, each
    make their attempt (``timing_kernels.newidle``), and the first whose busiest queue has more
    than one task and gives up a task ends it."""
    levels = I[SL.H_L]                  # domain slots per CPU
    k = K.newidle(cpu, 0, now, F, I)
    while k:
        SI[Y_FOUND] += 1
        busiest = I[SL.H_BUSIEST]
        if RQ.nr_running(busiest, SI) > 1 and move_tasks(
            busiest, cpu, I[SL.H_IMB], cpu * levels + k - 1, NEWLY_IDLE, False, now, SI, SF, F, I
        ):
            return
        I[SL.H_FAILED] += 1
        k = K.newidle(cpu, k, now, F, I)


jit_module(globals(), nopython=True, cache=True)
