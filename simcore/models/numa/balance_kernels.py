"""The balancer's periodic and active balancing: the balancing timer's firing, what follows the
busiest-group search of ``timing_kernels`` (``load_balance``'s moves and books), and active
balancing.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

import math

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa import hook_kernels as HK
from simcore.models.numa import migrate_kernels as MK
from simcore.models.numa import run_kernels as RK
from simcore.models.numa import runqueue_kernels as RQ
from simcore.models.numa import scheduler_kernels as SC
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import timing_kernels as K
from simcore.models.numa.search_kernels import IDLE, NOT_IDLE
from simcore.models.numa.slots_kernels import (
    D_NICE,
    D_PERIODIC,
    DF_MINI,
    R_CURR,
    R_NDOMS,
    R_NQ,
    R_VISIT,
    Y_ACTIVE,
    Y_FOUND,
    Y_PUSH,
    Y_STAMP,
    Z_ACOST,
    cpu_row,
    domain_frow,
    domain_row,
)


def push_one(src, dst, d, idle, now, SI, SF, F, I):
    """``move_tasks`` from ``src`` to ``dst``, at most one task, cache-hot tasks allowed (active
    balancing); ``dst`` then runs it."""
    if MK.move_tasks(src, dst, 1, d, idle, True, now, SI, SF, F, I):
        SC.resched(dst, now, SI, SF, F, I)
        return True
    return False


def active_balance(src, idle, now, SI, SF, F, I):
    """2.6.11 ``active_load_balance``, run at once by the busiest CPU ``src``'s migration thread,
    which preempts the running task (``scheduler_kernels.stop_current``): walk ``src``'s
    balancing domains bottom-up, each one's groups from its own, and push one task to each idle
    CPU not yet visited, the first in ``move_tasks`` order (the preempted task included) that the
    policy allows (cache-hot or not: the target is idle); stop once ``src`` has no task left (the
    kernel's nr_running <= 1 counts the migration thread). The CPU that asked is not looked for:
    the push goes to the idle CPUs nearest ``src``. ``idle``: the asking attempt's kind, for the
    policy."""
    n, L = I[SL.H_N], I[SL.H_L]
    rb = cpu_row(src, SI)
    if SI[rb + R_CURR] >= 0:
        SC.stop_current(src, now, SI, SF)
    pushed = 0
    SI[Y_STAMP] += 1
    stamp = SI[Y_STAMP]
    SI[rb + R_VISIT] = stamp
    for k in range(SI[rb + R_NDOMS]):
        d = src * L + k
        if not SI[domain_row(d, SI) + D_PERIODIC]:
            break
        ng, local, gof = I[I[SL.O_NGROUPS] + d], I[I[SL.O_LOCAL] + d], I[SL.O_GOF] + d * n
        for gi in range(ng):
            g = (local + gi) % ng
            for c in range(n):
                if I[gof + c] != g:
                    continue
                if not SI[rb + R_NQ]:
                    SI[Y_PUSH] += pushed
                    SC.schedule(src, now, SI, SF, F, I)
                    return
                cb = cpu_row(c, SI)
                if SI[cb + R_VISIT] == stamp:
                    continue
                SI[cb + R_VISIT] = stamp
                if SI[cb + R_CURR] < 0 and not SI[cb + R_NQ] and push_one(src, c, d, idle, now, SI, SF, F, I):
                    pushed += 1
    SI[Y_PUSH] += pushed
    SC.schedule(src, now, SI, SF, F, I)


def after_search(this, d, busiest, imb, idle, now, SI, SF, F, I):
    """The rest of ``load_balance`` once the search found the busiest queue: pull up to ``imb``
    tasks to ``cpu``, keep the domain's books (failures, interval), and ask for active balancing
    after repeated failures; returns the number of tasks pulled."""
    failed, ivl = I[SL.O_FAILED] + d, I[SL.OF_IVL] + d
    moved = 0
    if RQ.nr_running(busiest, SI) > 1:
        moved = MK.move_tasks(busiest, this, imb, d, idle, False, now, SI, SF, F, I)
    if moved:
        I[failed] = 0
        F[ivl] = SF[domain_frow(d, SI) + DF_MINI]
        return moved
    I[failed] += 1
    I[SL.H_FAILED] += 1
    nice = SI[domain_row(d, SI) + D_NICE]
    if SI[Y_ACTIVE] and I[failed] > nice + 2:
        active_balance(busiest, idle, now, SI, SF, F, I)
        I[failed] = nice
    if F[ivl] < F[I[SL.OF_MAXI] + d]:
        F[ivl] += 1
    return 0


def carry_on(cpu, j, idle, now, SI, SF, F, I):
    """``load_balance`` after the compiled search found its busiest queue, then the end of
    ``fire``'s step for the domain; returns the number of tasks moved. The attempt of the CPU's
    ``j``-th periodic domain, whose search found a busiest queue (counted: mehta's successful
    attempt), carried on."""
    d = cpu * I[SL.H_L] + I[I[SL.O_PD] + cpu * I[SL.H_P] + j]
    imb, busiest = I[SL.H_IMB], I[SL.H_BUSIEST]
    SI[Y_FOUND] += 1
    moved = after_search(cpu, d, busiest, imb, IDLE if idle else NOT_IDLE, now, SI, SF, F, I)
    F[I[SL.OF_LAST] + d] = now
    if I[SL.H_SLEEPS] and K.quiet(cpu, d, F, I):
        I[I[SL.O_DORMANT] + d] = 1
        if I[I[SL.O_HASWIDE] + d]:
            I[SL.H_WIDE_SLEEPERS] += 1
    return moved


def fire(cpu, now, SI, SF, F, I):
    """``rebalance_tick`` at a tick where some domain of ``cpu`` may be due (the CPU's balancing
    timer fired): ``timing_kernels.periodic`` over its periodic domains, each attempt that found
    a group carried on here (``after_search``), then the CPU's timer set again."""
    busy = I[SL.O_BUSY] + cpu
    was_busy = I[busy] != 0
    made = I[SL.H_ATTEMPTS]
    r = K.periodic(cpu, 0, now, I[busy] == 0, False, F, I)
    made = I[SL.H_ATTEMPTS] - made
    if r < 0:
        idle = I[busy] == 0
        moved_any = False
        while r < 0:
            j = int(-r) - 1
            if carry_on(cpu, j, idle, now, SI, SF, F, I):
                idle = False
                moved_any = True
            a = I[SL.H_ATTEMPTS]           # (a push's newly-idle attempts on another CPU are not this CPU's)
            r = K.periodic(cpu, j + 1, now, idle, moved_any, F, I)
            made += I[SL.H_ATTEMPTS] - a
        charge_attempts(cpu, was_busy, made, now, SI, SF)
        if moved_any:
            SC.resched(cpu, now, SI, SF, F, I)
            HK.arm(cpu, now, SI, SF, F, I)
            return
    else:
        charge_attempts(cpu, was_busy, made, now, SI, SF)
    if r != math.inf:
        HK.set_timer(cpu, r, now, SI, SF)


def charge_attempts(cpu, was_busy, made, now, SI, SF):
    """The end of ``fire``'s loop: a busy CPU's attempts take its running task's time
    (``lb_attempt_cost`` each, ``run_kernels.charge``)."""
    if was_busy and made and SF[Z_ACOST]:
        RK.charge(cpu, made * SF[Z_ACOST], now, SI, SF)


jit_module(globals(), nopython=True, cache=True)
