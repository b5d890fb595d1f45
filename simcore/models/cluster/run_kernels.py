"""A cluster run in compiled code: the policy's hooks around the sharing rules, the arrivals and
the calendar's timers (``drain``), which is how ``compiled_cluster.CompiledCluster`` runs.
"""

from __future__ import annotations

import math

from numba import jit_module

from simcore.core import calendar_kernels as C
from simcore.core import jit  # noqa: F401  (numba's cache keyed per kernel file)
from simcore.models.cluster import knowledge_kernels as K
from simcore.models.cluster import layout_kernels as L
from simcore.models.cluster import mosix_kernels as M
from simcore.models.cluster import opportunity_kernels as O
from simcore.models.cluster import sharing_kernels as S
from simcore.models.cluster.layout_kernels import (
    ENHANCED_MOSIX, MF_DUE, MOSIX, M_COLS, M_MARK, NORMAL, OF_CT, O_MI, O_MV, PVM, P_HOME, P_MACHINE, P_MIGR,
    P_TARGET, Y_EID, Y_FIRED, Y_LAZY, Y_MIGR, Y_N, Y_NEED, Y_POLICY, Y_RLEFT, Y_RR, Y_RR_INIT, Y_STOP, Y_STOPE,
    Y_UNFIN, Z_COST, Z_INTERVAL, Z_STOPT)


def place(p, m, now, CI, CF):
    """``p`` joins machine ``m`` (``sharing_kernels.enter``), then the policy's hook."""
    S.enter(p, m, now, CI, CF)
    on_change(m, now, CI, CF)


def detach(p, now, CI, CF):
    """``p`` leaves its machine keeping its remaining demand, then the policy's hook."""
    on_change(S.leave(p, now, CI, CF), now, CI, CF)


def migrate(p, target, now, CI, CF):
    """``Cluster.migrate`` (no process is pinned here)."""
    pb = L.proc(p, CI)
    if CI[pb + P_MACHINE] < 0 or CI[pb + P_MACHINE] == target:
        return
    detach(p, now, CI, CF)
    CI[Y_MIGR] += 1
    CI[pb + P_MIGR] += 1
    if CF[Z_COST] > 0:
        CI[pb + P_TARGET] = target
        L.set_timer(2 * CI[Y_N] + 1 + p, now + CF[Z_COST], CI, CF)
    else:
        place(p, target, now, CI, CF)


def complete(m, now, CI, CF):
    """Machine ``m``'s completion timer fired: its processes tied with the least tag complete
    (``sharing_kernels.retire``); the last one stops the run (``Engine.stop``: a stop event at
    this instant, keyed as SimPy would key it); then the policy's hooks."""
    done = S.retire(m, now, CI, CF)
    if done:
        CI[Y_UNFIN] -= done
        if not CI[Y_UNFIN]:
            CI[Y_STOP] = 1
            CF[Z_STOPT] = now
            CI[Y_STOPE] = CI[Y_EID]
            CI[Y_EID] += 1
    on_change(m, now, CI, CF)
    if done and CI[Y_POLICY] == ENHANCED_MOSIX:
        reassign(now, CI, CF)


def arrive(first, last, now, CI, CF):
    """An arrival group (``model.simulate``'s ``arrive``): processes ``first`` .. ``last`` - 1 placed
    by the policy in turn, then its reassignment."""
    for p in range(first, last):
        place(p, assign(p, CI, CF), now, CI, CF)
    if CI[Y_POLICY] == ENHANCED_MOSIX:
        reassign(now, CI, CF)


def on_change(m, now, CI, CF):
    """``Policy.on_change``: Mosix settles the machine's wake-up; the cost policies watch ``L``."""
    policy = CI[Y_POLICY]
    if policy == MOSIX:
        M.settle(m, now, False, CI, CF)
    elif policy != PVM:
        O.observe(CI, CF)


def assign(p, CI, CF):
    """``Policy.assign``: round robin (pvm, pvm-on-mosix), home (mosix), least cost (the others)."""
    policy = CI[Y_POLICY]
    if policy == PVM or (policy == MOSIX and CI[Y_RR_INIT]):
        index = CI[Y_RR] % CI[Y_N]                # base.RoundRobin
        CI[Y_RR] = index + 1
        return index
    if policy == MOSIX:
        return CI[L.proc(p, CI) + P_HOME]
    return O.least_cost(p, CI, CF)


def tick(m, now, CI, CF):
    """``Mosix._tick`` (the machine's wake-up fired)."""
    CF[L.fmachine(m, CI) + MF_DUE] = math.inf
    if not CI[Y_UNFIN]:
        return
    p, target = M.choose(m, now, CI, CF)
    if p >= 0:
        K.moved(m, target, p, CI, CF)
        migrate(p, target, now, CI, CF)
    else:
        M.settle(m, now, CI[Y_LAZY] != 0, CI, CF)


def round_(now, CI, CF):
    """The information round (``knowledge_kernels.spread``), then lazy Mosix settles the machines
    that the news may unblock (``Mosix._on_round``), then the next round."""
    if not CI[Y_UNFIN]:
        return
    n = CI[Y_N]
    if K.spread(CI, CF):
        mi = CI[O_MI]
        for i in range(n):
            if CI[mi + i * M_COLS + M_MARK]:
                CI[mi + i * M_COLS + M_MARK] = 0
                if CI[Y_POLICY] == MOSIX and CI[Y_LAZY]:
                    M.settle(i, now, False, CI, CF)
    L.set_timer(2 * n, now + CF[Z_INTERVAL], CI, CF)


def reassign(now, CI, CF):
    """Enhanced-mosix's moves (``opportunity_kernels.reassign``), made after its scan."""
    mv = CI[O_MV]
    for i in range(O.reassign(now, CI, CF)):
        migrate(CI[mv + 2 * i], CI[mv + 2 * i + 1], now, CI, CF)


def drain(stop_t, stop_p, stop_e, CI, CF):
    """Fire, in key order, every timer of the calendar keyed before (``stop_t``, ``stop_p``,
    ``stop_e``) (SimPy's next event) and before the stop of the run once the last process has
    completed. Stops early, with ``CI[Y_NEED]`` set, before an information round whose recipients
    the Python side must draw first. ``CI[Y_FIRED]``: how many fired."""
    n = CI[Y_N]
    fired = 0
    while True:
        if CI[Y_STOP] and C.key_before(CF[Z_STOPT], NORMAL, CI[Y_STOPE], stop_t, stop_p, stop_e):
            stop_t, stop_p, stop_e = CF[Z_STOPT], NORMAL, CI[Y_STOPE]
        s = C.first_due(stop_t, stop_p, stop_e, L.calendar(CI), CI, CF)
        if s < 0:
            break
        t = CF[CI[OF_CT] + s]
        if s == 2 * n and CI[Y_UNFIN] and not CI[Y_RLEFT]:
            CI[Y_NEED] = 1
            break
        L.cancel(s, CI, CF)
        fired += 1
        if s < n:
            complete(s, t, CI, CF)
        elif s < 2 * n:
            tick(s - n, t, CI, CF)
        elif s == 2 * n:
            round_(t, CI, CF)
        else:
            p = s - 2 * n - 1
            place(p, CI[L.proc(p, CI) + P_TARGET], t, CI, CF)
    CI[Y_FIRED] = fired


jit_module(nopython=True, cache=True)
