"""The balancer's timing: a periodic attempt's loop over a CPU's domains up to the busiest queue,
the timers' due times, the sleeping domains (when a domain is quiet, its wake-ups and the attempts
counted while it slept), and the newly-idle attempts up to the busiest queue. The moves are in
``migrate_kernels`` and ``balance_kernels``; :class:`simcore.models.numa.balancer.Balancer` builds
the buffers. State lives in two flat buffers so that a call passes two arrays (numba unboxes each
array argument on every call):

- ``I`` (int64): a header of sizes, flags, counters, results and the offsets of the blocks below
  (``H_*`` and ``O_*``, ``OF_*``: header slots);
- ``F`` (float64): the tick (``B_TICK``), then per CPU the load mirrors of the system
  (nr_running x 128, cpu_load, the tick it was settled at) and the timer's due time, and per
  domain its ``last``, ``interval`` and constants.

Their slots are named in ``slots_kernels`` (generated from ``layout.yaml``).

A domain of CPU ``c`` at level ``k`` is number ``c * L + k``; ``PD`` lists per CPU the levels of
its periodic domains in order (``Balancer.pdoms``).

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

import math

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa.search_kernels import IDLE, NEWLY_IDLE, NOT_IDLE, SLS, busiest_group, decayed
from simcore.models.numa.slots_kernels import (
    B_TICK,
    H_ATTEMPTS,
    H_BUSIEST,
    H_DEAD,
    H_FAILED,
    H_G,
    H_GROUP,
    H_IMB,
    H_INSTANT,
    H_L,
    H_N,
    H_NOUT,
    H_P,
    H_SLEEPS,
    H_WIDE_SLEEPERS,
    O_BUSY,
    O_BUSYOK,
    O_DORMANT,
    O_GOF,
    O_HASWIDE,
    O_IMB,
    O_LOCAL,
    O_NEWIDLE,
    O_NGROUPS,
    O_NPD,
    O_OUTCPU,
    O_PD,
    O_SIZES,
    O_SPAN,
    O_SPANL,
    O_SPANN,
    O_TOTALN,
    O_WIDE,
    O_WIDEL,
    O_WIDEN,
    OF_AVG,
    OF_BF,
    OF_CUR,
    OF_IVL,
    OF_LAST,
    OF_MAXI,
    OF_OUTAT,
    OF_TAT,
    OF_TCK,
)


def due(last, interval, busy_factor, idle, tick):
    """The tick of a domain's attempt after one at ``last``: rebalance_tick's interval later, i.e.
    ``balance_interval``, times ``busy_factor`` unless the CPU is idle, at least one tick;
    rounded up to a tick boundary as ``on_tick`` does. ``due(0.0, ...)``: the interval in whole
    ticks. The one place of this arithmetic: the timers, the due test and the counting of a
    sleeping domain's attempts must agree, or a CPU re-arms at the instant it fired."""
    ivl = interval if idle else interval * busy_factor
    return math.ceil((last + (ivl if ivl > tick else tick)) / tick - 1e-9) * tick


def on_tick(t, tick):
    """The first tick boundary at or after ``t`` (1e-9 ms absorbs rounding)."""
    return math.ceil(t / tick - 1e-9) * tick


def quiet(cpu, d, F, I):
    """Whether every periodic attempt of ``cpu`` on domain ``d`` finds it balanced while this holds
    (so it fails, doubles the interval and leaves the failure count alone, as ``settle`` counts):
    no other CPU of the span has two runnable tasks, and no CPU of another group of several CPUs
    has any (from the load mirror: nr_running x 128). Then the busiest group, if any, is one CPU
    with source load m <= 128, and whatever the local group's load t < m over n CPUs and the
    average a > 0: the imbalance min(m - a, (a - t) n) is at most m - a < 128, the gap m - t
    below 2 x 128, the power test finds no gain (after the move n min(128, t + m/n) <= n t + m,
    the power now), and m > 128 fails for the idle rule. Anything else is left to a real attempt:
    a group of several CPUs running one task each may be the busiest with a real imbalance, and
    nothing but active balancing can then move a task."""
    n = I[H_N]
    cur, span, wide = I[OF_CUR], I[O_SPANL] + d * n, I[O_WIDEL] + d * n
    for i in range(I[I[O_SPANN] + d]):
        c = I[span + i]
        if c != cpu and F[cur + c] >= 2 * SLS:
            return False
    for i in range(I[I[O_WIDEN] + d]):
        if F[cur + I[wide + i]] >= SLS:
            return False
    return True


def settle(d, until, idle, F, I):
    """Count the attempts dormant domain ``d`` would have made up to ``until``: each finds the
    domain balanced (it is quiet), counts as failed, and doubles the interval (capped). ``idle``:
    the CPU's state meanwhile."""
    if not (idle or I[I[O_BUSYOK] + d]):
        return
    tick = F[B_TICK]
    last, ivl, bf, maxi = I[OF_LAST] + d, I[OF_IVL] + d, F[I[OF_BF] + d], F[I[OF_MAXI] + d]
    t = F[last]
    k = 0
    limit = until + 1e-9
    while True:
        at = due(t, F[ivl], bf, idle, tick)
        if at > limit:
            break
        if F[ivl] >= maxi:
            step = due(0.0, F[ivl], bf, idle, tick)
            m = int((until + 1e-9 - t) // step)
            t += m * step
            k += m
            break
        t = at
        k += 1
        F[ivl] *= 2
    F[last] = t
    if k:
        I[H_ATTEMPTS] += k
        I[H_FAILED] += k
        I[H_DEAD] += k


def overdue(d, now, F, I):
    """A sleeping domain of a CPU that just went idle: if its idle attempt is already overdue, the
    kernel makes it at the next tick (as ``arm`` does for a domain awake); set ``last`` so that this
    is when it falls due."""
    tick = F[B_TICK]
    last, ivl, bf = I[OF_LAST] + d, F[I[OF_IVL] + d], F[I[OF_BF] + d]
    if due(F[last], ivl, bf, True, tick) < now:
        F[last] = on_tick(now, tick) - due(0.0, ivl, bf, True, tick)


def arm(cpu, now, F, I):
    """(Re)set ``cpu``'s timer to its earliest due domain if that is earlier than the current one:
    the due time to set it at (its slot in ``F`` updated), or infinity when the timer stays as it
    is."""
    tick = F[B_TICK]
    idle = not I[I[O_BUSY] + cpu]
    L, P = I[H_L], I[H_P]
    dormant, busy_ok, last, ivl, bf = I[O_DORMANT], I[O_BUSYOK], I[OF_LAST], I[OF_IVL], I[OF_BF]
    at = math.inf
    for j in range(I[I[O_NPD] + cpu]):
        d = cpu * L + I[I[O_PD] + cpu * P + j]
        if not I[dormant + d] and (idle or I[busy_ok + d]):
            t = due(F[last + d], F[ivl + d], F[bf + d], idle, tick)
            if t < at:
                at = t
    if at == math.inf:
        return math.inf
    if now > at:
        at = on_tick(now, tick)
    tat = I[OF_TAT] + cpu
    if at < F[tat] - 1e-9:
        F[tat] = at
        return at
    return math.inf


def busiest_queue(d, g, t_now, F, I):
    """2.6.11 ``find_busiest_queue``: the CPU of group ``g`` of domain ``d`` with the highest source
    load (the first in CPU order at a tie), from the load mirrors. The kernel settles each run
    queue's load average on the way; settling is exact in any number of steps (an integer
    distance halved and floored k1 then k2 times is halved and floored k1 + k2 times), so
    skipping it changes no later reading."""
    n = I[H_N]
    gof, cur, avg, tck = I[O_GOF] + d * n, I[OF_CUR], I[OF_AVG], I[OF_TCK]
    span = I[O_SPANL] + d * n
    instant = I[H_INSTANT] != 0
    best, best_load = -1, -1.0
    for i in range(I[I[O_SPANN] + d]):
        c = I[span + i]
        if I[gof + c] != g:
            continue
        x = F[cur + c]
        load = x
        if not instant:
            v = decayed(F[avg + c], x, int(min(t_now - F[tck + c], 64.0)))
            load = v if v < x else x
        if load > best_load:
            best, best_load = c, load
    return best


def _search(cpu, d, t_now, kind, F, I):
    """``find_busiest_group`` for domain ``d`` (``search_kernels.busiest_group``) and,
    when it finds a group, ``find_busiest_queue``: the group, imbalance and busiest CPU are left in
    the header; returns whether a group was found."""
    n, G = I[H_N], I[H_G]
    gof = I[I[O_GOF] + d * n:I[O_GOF] + (d + 1) * n]
    span = I[I[O_SPANL] + d * n:I[O_SPANL] + d * n + I[I[O_SPANN] + d]]
    sizes = I[I[O_SIZES] + d * G:I[O_SIZES] + d * G + I[I[O_NGROUPS] + d]]
    cur, avg, tck = F[I[OF_CUR]:I[OF_CUR] + n], F[I[OF_AVG]:I[OF_AVG] + n], F[I[OF_TCK]:I[OF_TCK] + n]
    g, imb = busiest_group(span, gof, sizes, I[I[O_LOCAL] + d], I[I[O_TOTALN] + d], cur, avg, tck, t_now,
                           I[H_INSTANT] != 0, I[I[O_IMB] + d], kind)
    if g < 0:
        return False
    I[H_GROUP], I[H_IMB], I[H_BUSIEST] = g, imb, busiest_queue(d, g, t_now, F, I)
    return True


def newidle(cpu, k, now, F, I):
    """``idle_balance`` from ``cpu``'s level ``k``: each newly-idle domain makes its attempt as far
    as the search (an attempt with nothing movable in the span fails for certain; no domain state
    changes: 2.6.11's load_balance_newidle keeps no books but the counters). Returns ``k`` + 1 of
    the first domain whose search found a group (group, imbalance and busiest CPU in the header:
    ``migrate_kernels.newidle`` tries the move, and calls again from ``k`` + 1 if nothing moved),
    or 0 when every attempt failed."""
    tick = F[B_TICK]
    L, n = I[H_L], I[H_N]
    t_now = float(math.floor(now / tick + 1e-9))
    cur = I[OF_CUR]
    while k < L:
        d = cpu * L + k
        k += 1
        if not I[I[O_NEWIDLE] + d]:
            continue
        I[H_ATTEMPTS] += 1
        span = I[O_SPANL] + d * n
        movable = False
        for i in range(I[I[O_SPANN] + d]):
            c = I[span + i]
            if c != cpu and F[cur + c] >= 2 * SLS:
                movable = True
                break
        if not movable:
            I[H_FAILED] += 1
            I[H_DEAD] += 1
            continue
        if _search(cpu, d, t_now, NEWLY_IDLE, F, I):
            return k
        I[H_FAILED] += 1
    return 0


def periodic(cpu, j, now, idle, moved_any, F, I):
    """``rebalance_tick``'s loop from ``cpu``'s ``j``-th periodic domain (``j`` = 0: the timer has
    just fired, and is marked unset): each due domain makes its attempt (``load_balance``) as far
    as the search for the busiest group and queue; a quiet domain's attempt fails without it
    (``quiet`` proves the search finds no group). Returns ``-(j + 1)`` for the first domain
    ``j`` whose search found a group (its group, imbalance and busiest CPU in the header;
    ``balance_kernels.fire`` carries that attempt on); else every due domain failed and,
    unless ``moved_any``, the CPU is armed: the due time to set its timer at, or infinity (leave
    it, or ``moved_any``). Times are never negative, so the sign tells the two apart."""
    tick = F[B_TICK]
    L, P, sleeps = I[H_L], I[H_P], I[H_SLEEPS] != 0
    dormant, busy_ok, last, ivl, bf = I[O_DORMANT], I[O_BUSYOK], I[OF_LAST], I[OF_IVL], I[OF_BF]
    t_now = float(math.floor(now / tick + 1e-9))
    npd = I[I[O_NPD] + cpu]
    if j == 0:
        F[I[OF_TAT] + cpu] = math.inf
    while j < npd:
        d = cpu * L + I[I[O_PD] + cpu * P + j]
        if (
            I[dormant + d]
            or not (idle or I[busy_ok + d])
            or now + 1e-9 < due(F[last + d], F[ivl + d], F[bf + d], idle, tick)
        ):
            j += 1
            continue
        q = quiet(cpu, d, F, I)
        if q:
            I[H_DEAD] += 1
        I[H_ATTEMPTS] += 1
        if not q and _search(cpu, d, t_now, IDLE if idle else NOT_IDLE, F, I):     # quiet: it fails
            return -(j + 1.0)
        if F[ivl + d] < F[I[OF_MAXI] + d]:
            F[ivl + d] *= 2
        I[H_FAILED] += 1
        F[last + d] = now
        if sleeps and q:
            I[dormant + d] = 1
            if I[I[O_HASWIDE] + d]:
                I[H_WIDE_SLEEPERS] += 1
        j += 1
    return math.inf if moved_any else arm(cpu, now, F, I)


def _any_dormant(cpu, I):
    """Whether a periodic domain of ``cpu`` sleeps."""
    L, P, dormant = I[H_L], I[H_P], I[O_DORMANT]
    for j in range(I[I[O_NPD] + cpu]):
        if I[dormant + cpu * L + I[I[O_PD] + cpu * P + j]]:
            return True
    return False


def wake(src, wide, now, F, I):
    """Settle and wake the dormant domains of other CPUs whose span (``wide``: whose wide set) holds
    ``src``, in CPU order: they are no longer quiet. Returns how many CPUs got a new due time;
    their numbers and times are in the output blocks, in that order."""
    tick = F[B_TICK]
    n, L, P = I[H_N], I[H_L], I[H_P]
    dormant, busy_ok, last, ivl, bf = I[O_DORMANT], I[O_BUSYOK], I[OF_LAST], I[OF_IVL], I[OF_BF]
    member = I[O_WIDE] if wide else I[O_SPAN]
    limit = now + 1e-9
    out = 0
    for cpu in range(n):
        if cpu == src:
            continue
        woke = False
        idle = not I[I[O_BUSY] + cpu]
        for j in range(I[I[O_NPD] + cpu]):
            d = cpu * L + I[I[O_PD] + cpu * P + j]
            if I[dormant + d] and I[member + d * n + src]:
                if not (idle or I[busy_ok + d]) or due(F[last + d], F[ivl + d], F[bf + d], idle, tick) <= limit:
                    settle(d, now, idle, F, I)
                I[dormant + d] = 0
                if I[I[O_HASWIDE] + d]:
                    I[H_WIDE_SLEEPERS] -= 1
                woke = True
        if woke:
            at = arm(cpu, now, F, I)
            if at != math.inf:
                I[I[O_OUTCPU] + out] = cpu
                F[I[OF_OUTAT] + out] = at
                out += 1
    I[H_NOUT] = out
    return out


def on_state(cpu, idle, now, F, I):
    """``cpu`` went idle or busy (its mirror is set here): settle its dormant domains under the old
    state, and when it went idle, move their overdue attempts and arm it. Returns the due time to
    set its timer at (infinity: leave it)."""
    I[I[O_BUSY] + cpu] = 0 if idle else 1
    if _any_dormant(cpu, I):
        tick = F[B_TICK]
        L, P = I[H_L], I[H_P]
        dormant, busy_ok, last, ivl, bf = I[O_DORMANT], I[O_BUSYOK], I[OF_LAST], I[OF_IVL], I[OF_BF]
        was_idle = not idle
        limit = now + 1e-9
        for j in range(I[I[O_NPD] + cpu]):
            d = cpu * L + I[I[O_PD] + cpu * P + j]
            if I[dormant + d] and (not (was_idle or I[busy_ok + d])
                                   or due(F[last + d], F[ivl + d], F[bf + d], was_idle, tick) <= limit):
                settle(d, now, was_idle, F, I)
            if I[dormant + d] and idle:
                overdue(d, now, F, I)
    if idle:
        return arm(cpu, now, F, I)
    return math.inf


def close(until, F, I):
    """The run ends at ``until``: count every periodic domain's attempts due by then that were not
    made, those of sleeping domains and of an idle CPU's awake domains from its timer on (none
    without a timer), as ``settle`` does (nothing is left to move). Attempt counts then cover the
    whole run, as a tick-driven kernel's would."""
    L, P = I[H_L], I[H_P]
    for cpu in range(I[H_N]):
        idle = not I[I[O_BUSY] + cpu]
        for j in range(I[I[O_NPD] + cpu]):
            d = cpu * L + I[I[O_PD] + cpu * P + j]
            if idle and not I[I[O_DORMANT] + d]:
                at = F[I[OF_TAT] + cpu]
                if at == math.inf:
                    continue
                overdue(d, at, F, I)
            settle(d, until, idle, F, I)


jit_module(globals(), nopython=True, cache=True)
