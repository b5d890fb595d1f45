"""The NUMA balancer's timing compiled with numba: a periodic attempt's loop over a CPU's domains,
the timers' due times, the sleeping domains' wake-ups and counted attempts, and the newly-idle
attempts.

Every function is a transcription of a method of ``simcore.models.numa.balancer.Balancer`` (named
in its docstring), with the same arithmetic in the same order on the same float64 values; the
Python class :class:`simcore.models.numa.compiled.CompiledBalancer` keeps what it does not cover (the
moves, active balancing, the SimPy timers). State lives in two flat buffers so that a call
passes two arrays (numba unboxes each array argument on every call):

- ``I`` (int64): a header of sizes, flags, counters, results and the offsets of the blocks below
  (``H_*`` and ``O_*`` are header slots);
- ``F`` (float64): the tick and a result slot, then per CPU the load mirrors of the system (nr_running x 128,
  cpu_load, the tick it was settled at) and the timer's due time, and per domain its ``last``,
  ``interval`` and constants.

A domain of CPU ``c`` at level ``k`` is number ``c * L + k``; ``PD`` lists per CPU the levels of
its periodic domains in order (``Balancer.pdoms``).
"""

from __future__ import annotations

import math

from simcore.core.jit import njit
from simcore.models.numa.kernels import busiest_group

SLS = 128.0
NOT_IDLE, IDLE, NEWLY_IDLE = 0, 1, 2

# header slots of I
H_N, H_L, H_G, H_P, H_INSTANT, H_SLEEPS, H_WIDE_SLEEPERS = 0, 1, 2, 3, 4, 5, 6
H_ATTEMPTS, H_FAILED, H_DEAD = 7, 8, 9          # counters the Python side moves to the system
H_GROUP, H_IMB, H_QUIET, H_BUSIEST, H_NOUT = 10, 11, 12, 13, 14   # an attempt that found a group; CPUs armed
# offsets of the int blocks (per CPU, per domain, per domain x CPU, per domain x group)
O_BUSY, O_FAILED, O_DORMANT, O_BUSYOK, O_LOCAL, O_TOTALN, O_IMB, O_HASWIDE = 15, 16, 17, 18, 19, 20, 21, 22
O_PD, O_NPD, O_GOF, O_SIZES, O_NGROUPS, O_SPAN, O_WIDE, O_OUTCPU, O_NEWIDLE = 23, 24, 25, 26, 27, 28, 29, 30, 31
# offsets of the float blocks
OF_CUR, OF_AVG, OF_TCK, OF_TAT, OF_LAST, OF_IVL, OF_BF, OF_MAXI, OF_OUTAT = 32, 33, 34, 35, 36, 37, 38, 39, 40
# the calendar of the CPUs' timers: per CPU its time (OF_CALT, infinity: none) and SimPy insertion
# number (O_CALEID); the next number to give, the attempts a drain made, the CPU and periodic
# domain of an attempt that found a group (its time in F[F_FOUND]), and the calendar's first CPU
O_CALEID, OF_CALT, H_EID, H_FIRED, H_FCPU, H_FJ, H_HEAD = 41, 42, 43, 44, 45, 46, 47
HEADER = 48
F_TICK, F_FOUND, F_HEADER = 0, 1, 2     # slots of F before its blocks
NORMAL = 1                              # SimPy's priority of the timers (simpy.events.NORMAL)


@njit(cache=True)
def due(last, interval, busy_factor, idle, tick):
    """``balancer.due``: the tick of the attempt after one at ``last``."""
    ivl = interval if idle else interval * busy_factor
    return math.ceil((last + (ivl if ivl > tick else tick)) / tick - 1e-9) * tick


@njit(cache=True)
def on_tick(t, tick):
    """``balancer.on_tick``."""
    return math.ceil(t / tick - 1e-9) * tick


@njit(cache=True)
def quiet(cpu, d, F, I):
    """``Balancer.quiet``: no other CPU of the span has two runnable tasks, and no CPU of
    another group of several CPUs has one (from the load mirror: nr_running x 128)."""
    n = I[H_N]
    cur, span, wide = I[OF_CUR], I[O_SPAN] + d * n, I[O_WIDE] + d * n
    for c in range(n):
        if c != cpu and I[span + c] and F[cur + c] >= 2 * SLS:
            return False
    if I[I[O_HASWIDE] + d]:
        for c in range(n):
            if I[wide + c] and F[cur + c] >= SLS:
                return False
    return True


@njit(cache=True)
def settle(d, until, idle, F, I):
    """``Balancer._settle``: count the attempts a dormant domain would have made up to ``until``."""
    if not (idle or I[I[O_BUSYOK] + d]):
        return
    tick = F[0]
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


@njit(cache=True)
def overdue(d, now, F, I):
    """``Balancer._overdue``."""
    tick = F[0]
    last, ivl, bf = I[OF_LAST] + d, F[I[OF_IVL] + d], F[I[OF_BF] + d]
    if due(F[last], ivl, bf, True, tick) < now:
        F[last] = on_tick(now, tick) - due(0.0, ivl, bf, True, tick)


@njit(cache=True)
def arm(cpu, now, F, I):
    """``Balancer.arm`` without the SimPy timer: the due time to set the CPU's timer at (its slot
    in ``F`` updated), or infinity when the timer stays as it is."""
    tick = F[0]
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


@njit(cache=True)
def busiest_queue(d, g, t_now, F, I):
    """``Balancer.find_busiest_queue``: the CPU of group ``g`` of domain ``d`` with the highest source
    load (the first in CPU order at a tie), from the load mirrors. The reference settles each run
    queue's load average on the way; settling is exact in any number of steps (an integer distance
    halved and floored k1 then k2 times is halved and floored k1 + k2 times), so skipping it
    changes no later reading."""
    n = I[H_N]
    gof, cur, avg, tck = I[O_GOF] + d * n, I[OF_CUR], I[OF_AVG], I[OF_TCK]
    instant = I[H_INSTANT] != 0
    best, best_load = -1, -1.0
    for c in range(n):
        if I[gof + c] != g:
            continue
        x = F[cur + c]
        load = x
        if not instant:
            dd = F[avg + c] - x
            a = math.floor(math.ldexp(abs(dd), -int(min(t_now - F[tck + c], 64.0))))
            v = x + a if dd >= 0 else x - a
            load = v if v < x else x
        if load > best_load:
            best, best_load = c, load
    return best


@njit(cache=True)
def _search(cpu, d, t_now, kind, F, I):
    """``find_busiest_group`` for domain ``d`` (the kernel of simcore/models/numa/kernels.py) and,
    when it finds a group, ``find_busiest_queue``: the group, imbalance and busiest CPU are left in
    the header; returns whether a group was found."""
    n, G = I[H_N], I[H_G]
    gof = I[I[O_GOF] + d * n:I[O_GOF] + (d + 1) * n]
    sizes = I[I[O_SIZES] + d * G:I[O_SIZES] + d * G + I[I[O_NGROUPS] + d]]
    cur, avg, tck = F[I[OF_CUR]:I[OF_CUR] + n], F[I[OF_AVG]:I[OF_AVG] + n], F[I[OF_TCK]:I[OF_TCK] + n]
    g, imb = busiest_group(gof, sizes, I[I[O_LOCAL] + d], I[I[O_TOTALN] + d], cur, avg, tck, t_now,
                           I[H_INSTANT] != 0, I[I[O_IMB] + d], kind)
    if g < 0:
        return False
    I[H_GROUP], I[H_IMB], I[H_BUSIEST] = g, imb, busiest_queue(d, g, t_now, F, I)
    return True


@njit(cache=True)
def newidle(cpu, k, now, F, I):
    """``Balancer.newidle`` from the CPU's level ``k``: each newly-idle domain makes its attempt as
    far as the search (an attempt with nothing movable in the span fails for certain). Returns
    ``k`` + 1 of the first domain whose search found a group (group, imbalance and busiest CPU in
    the header: the Python side tries the move, and calls again from ``k`` + 1 if nothing moved),
    or 0 when every attempt failed."""
    tick = F[0]
    L, n = I[H_L], I[H_N]
    t_now = float(math.floor(now / tick + 1e-9))
    cur = I[OF_CUR]
    while k < L:
        d = cpu * L + k
        k += 1
        if not I[I[O_NEWIDLE] + d]:
            continue
        I[H_ATTEMPTS] += 1
        span = I[O_SPAN] + d * n
        movable = False
        for c in range(n):
            if c != cpu and I[span + c] and F[cur + c] >= 2 * SLS:
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


@njit(cache=True)
def periodic(cpu, j, now, idle, moved_any, F, I):
    """The loop of ``Balancer.fire`` from the CPU's ``j``-th periodic domain (``j`` = 0: the timer has
    just fired, and is marked unset): each due domain makes its attempt (``load_balance``) as far
    as the search for the busiest group and queue. Returns ``-(j + 1)`` for the first domain ``j``
    whose search found a group (its group, imbalance, busiest CPU and quiet test in the header;
    the Python side carries that attempt on); else every due domain failed and,
    unless ``moved_any``, the CPU is armed: the due time to set its timer at, or infinity (leave
    it, or ``moved_any``). Times are never negative, so the sign tells the two apart."""
    tick = F[0]
    L, P, sleeps = I[H_L], I[H_P], I[H_SLEEPS] != 0
    dormant, busy_ok, last, ivl, bf = I[O_DORMANT], I[O_BUSYOK], I[OF_LAST], I[OF_IVL], I[OF_BF]
    t_now = float(math.floor(now / tick + 1e-9))
    npd = I[I[O_NPD] + cpu]
    if j == 0:
        F[I[OF_TAT] + cpu] = math.inf
    while j < npd:
        d = cpu * L + I[I[O_PD] + cpu * P + j]
        if I[dormant + d] or not (idle or I[busy_ok + d]) or now + 1e-9 < due(F[last + d], F[ivl + d], F[bf + d], idle, tick):
            j += 1
            continue
        q = quiet(cpu, d, F, I)
        if q:
            I[H_DEAD] += 1
        I[H_ATTEMPTS] += 1
        if _search(cpu, d, t_now, IDLE if idle else NOT_IDLE, F, I):
            I[H_QUIET] = q
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


@njit(cache=True)
def _any_dormant(cpu, I):
    L, P, dormant = I[H_L], I[H_P], I[O_DORMANT]
    for j in range(I[I[O_NPD] + cpu]):
        if I[dormant + cpu * L + I[I[O_PD] + cpu * P + j]]:
            return True
    return False


@njit(cache=True)
def wake(src, wide, now, F, I):
    """``Balancer._wake``: settle and wake the dormant domains of other CPUs whose span (``wide``:
    whose wide set) holds ``src``, in CPU order. Returns how many CPUs got a new due time; their
    numbers and times are in the output blocks, in that order."""
    tick = F[0]
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


@njit(cache=True)
def on_state(cpu, idle, now, F, I):
    """``Balancer.on_state``: the CPU went idle or busy (its mirror is set here); settle its dormant
    domains under the old state, and when it went idle, move their overdue attempts and arm it.
    Returns the due time to set its timer at (infinity: leave it)."""
    I[I[O_BUSY] + cpu] = 0 if idle else 1
    if _any_dormant(cpu, I):
        tick = F[0]
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


@njit(cache=True)
def close(until, F, I):
    """``Balancer.close``: at the run's end, count every periodic domain's attempts due by
    ``until`` (an awake domain of an idle CPU from its timer on, none if it has no timer)."""
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


@njit(cache=True)
def head(F, I):
    """The calendar's first CPU (earliest time, then lowest insertion number), also left in
    ``I[H_HEAD]``; -1 when no timer is set."""
    calt, cale = I[OF_CALT], I[O_CALEID]
    best, best_t, best_e = -1, math.inf, 0
    for c in range(I[H_N]):
        t = F[calt + c]
        if t < best_t or (t == best_t and t != math.inf and I[cale + c] < best_e):
            best, best_t, best_e = c, t, I[cale + c]
    I[H_HEAD] = best
    return best


@njit(cache=True)
def drain(stop_t, stop_p, stop_e, limit, F, I):
    """``Balancer.fire`` for every CPU timer of the calendar that SimPy would fire before the event
    keyed (``stop_t``, ``stop_p``, ``stop_e``) (its time, priority and insertion number: the
    timers are keyed (time, NORMAL, number)), in that order, at most ``limit`` of them. A timer
    whose attempt finds a busiest group stops the drain: returns 1 with the CPU, the domain and
    the time in ``H_FCPU``, ``H_FJ`` and ``F[F_FOUND]`` (the Python side carries it on), else 0.
    A timer re-armed here gets the next insertion number from ``I[H_EID]``, at
    ``now + max(at - now, 0)`` as ``Engine.call`` would put it. ``I[H_FIRED]``: the timers fired."""
    calt, cale = I[OF_CALT], I[O_CALEID]
    fired = 0
    I[H_FIRED] = 0
    while True:
        c = head(F, I)
        if c < 0 or fired >= limit:
            return 0
        t = F[calt + c]
        if t > stop_t or (t == stop_t and (NORMAL > stop_p or (NORMAL == stop_p and I[cale + c] > stop_e))):
            return 0
        F[calt + c] = math.inf
        fired += 1
        I[H_FIRED] = fired
        r = periodic(c, 0, t, not I[I[O_BUSY] + c], False, F, I)
        if r < 0:
            I[H_FCPU], I[H_FJ] = c, int(-r) - 1
            F[F_FOUND] = t
            return 1
        if r != math.inf:
            delay = r - t
            F[calt + c] = t + (delay if delay > 0.0 else 0.0)
            I[cale + c] = I[H_EID]
            I[H_EID] += 1
