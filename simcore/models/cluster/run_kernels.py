"""A cluster run in compiled code: the policy's hooks around the sharing rules, the arrivals and
the calendar's timers (``drain``), which is how ``system.ClusterSystem`` runs; and the whole
run's event loop (``run``) when nothing in Python observes it.
"""

from __future__ import annotations

import math

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.cluster import knowledge_kernels as KN
from simcore.models.cluster import layout_kernels as L
from simcore.models.cluster import mosix_kernels as M
from simcore.models.cluster import opportunity_kernels as O
from simcore.models.cluster import sharing_kernels as S
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.layout_kernels import (
    ENHANCED_MOSIX,
    ENHANCED_PVM,
    MOSIX,
    NEED_DRAWS,
    NEED_HOOK,
    NEED_ROUNDS,
    PVM,
    PYTHON,
)
from simcore.models.cluster.slots_kernels import (
    DRAWS,
    M_COLS,
    M_MARK,
    MF_DUE,
    O_DONE,
    O_HOSTS,
    O_MI,
    O_MV,
    OF_BD,
    OF_CT,
    P_DONE,
    P_DRAW,
    P_HOME,
    P_MACHINE,
    P_MIGR,
    P_PINNED,
    P_TARGET,
    PF_REMAIN,
    Y_BLOW,
    Y_EID,
    Y_FIRED,
    Y_HOOKM,
    Y_KNOWN,
    Y_LAZY,
    Y_MIGR,
    Y_N,
    Y_NDONE,
    Y_NEED,
    Y_NP,
    Y_POLICY,
    Y_RLEFT,
    Y_RR,
    Y_RR_INIT,
    Y_STOP,
    Y_STOPE,
    Y_T,
    Y_UNFIN,
    Z_COST,
    Z_INTERVAL,
    Z_STOPT,
)


def place(p, m, now, CI, CF):
    """``p`` joins machine ``m`` (``sharing_kernels.enter``), then the policy's hook."""
    S.enter(p, m, now, CI, CF)
    on_change(m, now, CI, CF)


def detach(p, now, CI, CF):
    """``p`` leaves its machine keeping its remaining demand, then the policy's hook."""
    on_change(S.leave(p, now, CI, CF), now, CI, CF)


def migrate(p, target, cost, now, CI, CF):
    """Move ``p`` to machine ``target``; with ``cost`` > 0 it leaves at once and joins the target
    ``cost`` seconds later, running nowhere in between. A pinned process, one placed nowhere and
    one already on the target stay."""
    pb = CS.proc(p, CI)
    if CI[pb + P_PINNED] or CI[pb + P_MACHINE] < 0 or CI[pb + P_MACHINE] == target:
        return
    detach(p, now, CI, CF)
    CI[Y_MIGR] += 1
    CI[pb + P_MIGR] += 1
    if cost > 0:
        CI[pb + P_TARGET] = target
        L.set_timer(2 * CI[Y_N] + 1 + p, now + cost, CI, CF)
    else:
        place(p, target, now, CI, CF)


def complete(m, now, CI, CF):
    """Machine ``m``'s completion timer fired: its processes tied with the least tag complete
    (``sharing_kernels.retire``). In that order, a background process starts its idle period
    unless the run is over, and a foreground one counts down the unfinished; the last one stops
    the run (``Engine.stop``: a stop event at this instant, keyed as SimPy would key it). Then
    the policy's hooks, the completion hook only after a foreground completion (a policy deciding
    in Python: ``drain`` returns for it)."""
    done = S.retire(m, now, CI, CF)
    foreground = False
    for k in range(done):
        p = CI[CI[O_DONE] + k]
        if CI[CS.proc(p, CI) + P_PINNED]:
            if CI[Y_UNFIN]:
                L.set_timer(2 * CI[Y_N] + 1 + p, now + draw(p, CI, CF), CI, CF)
        else:
            foreground = True
            CI[Y_UNFIN] -= 1
            CI[CS.proc(p, CI) + P_DONE] = CI[Y_NDONE]
            CI[Y_NDONE] += 1
    if foreground and not CI[Y_UNFIN]:
        CI[Y_STOP] = 1
        CF[Z_STOPT] = now
        CI[Y_STOPE] = CI[Y_EID]
        CI[Y_EID] += 1
    on_change(m, now, CI, CF)
    if foreground and CI[Y_POLICY] == ENHANCED_MOSIX:
        reassign(now, CI, CF)
    elif foreground and CI[Y_POLICY] == PYTHON:
        CI[Y_NEED], CI[Y_HOOKM] = NEED_HOOK, m


def arrive(first, last, now, CI, CF):
    """An arrival group (``model.simulate``'s ``arrive``) of a policy the kernels know: processes
    ``first`` .. ``last`` - 1 placed by the policy in turn, then its reassignment."""
    for p in range(first, last):
        place(p, assign(p, CI, CF), now, CI, CF)
    if CI[Y_POLICY] == ENHANCED_MOSIX:
        reassign(now, CI, CF)


# -- background processes -------------------------------------------------------------------------
def draw(p, CI, CF):
    """Background process ``p``'s next draw (U(0, its max period)) from the batch Python handed
    over; when the batch is used up, ``drain`` returns for the next before it fires a timer."""
    pb = CS.proc(p, CI)
    k = CI[pb + P_DRAW]
    CI[pb + P_DRAW] = k + 1
    if k + 1 == DRAWS:
        CI[Y_BLOW] += 1
    return CF[CI[OF_BD] + (p - CI[Y_T]) * DRAWS + k]


def burst(p, now, CI, CF):
    """Background process ``p`` starts a CPU burst of its next draw on its home machine."""
    CF[CS.fproc(p, CI) + PF_REMAIN] = draw(p, CI, CF)
    place(p, CI[CS.proc(p, CI) + P_HOME], now, CI, CF)


def start_background(now, CI, CF):
    """Every background process starts with a burst, in order."""
    for p in range(CI[Y_T], CI[Y_NP]):
        burst(p, now, CI, CF)


def on_change(m, now, CI, CF):
    """After any change of machine ``m``'s processes: Mosix settles its wake-up; the cost policies
    update ``L``."""
    policy = CI[Y_POLICY]
    if policy == MOSIX:
        M.settle(m, now, False, CI, CF)
    elif policy == ENHANCED_PVM or policy == ENHANCED_MOSIX:
        O.observe(CI, CF)


def assign(p, CI, CF):
    """Where process ``p`` starts: round robin over the host list (pvm, pvm-on-mosix, mosix
    'round-robin'; ``base.host_list``), its home (mosix 'home'), least cost on the exact state (enhanced-pvm,
    enhanced-mosix 'exact') or as its home knows the cluster (enhanced-mosix 'window': the home's
    view then counts the process on the machine it goes to)."""
    policy = CI[Y_POLICY]
    if policy == PVM or (policy == MOSIX and CI[Y_RR_INIT]):
        index = CI[Y_RR] % CI[Y_N]
        CI[Y_RR] = index + 1
        return CI[CI[O_HOSTS] + index]
    if policy == MOSIX:
        return CI[CS.proc(p, CI) + P_HOME]
    if policy == ENHANCED_MOSIX and CI[Y_KNOWN]:
        target = O.least_known(p, CI, CF)
        KN.moved(CI[CS.proc(p, CI) + P_HOME], target, p, CI, CF)
        return target
    return O.least_cost(p, CI, CF)


def tick(m, now, CI, CF):
    """Machine ``m``'s wake-up fired: unless the run is over, the move ``choose`` makes (the view
    counts it), or, when there is none, settle."""
    CF[CS.fmachine(m, CI) + MF_DUE] = math.inf
    if not CI[Y_UNFIN]:
        return
    p, target = M.choose(m, now, CI, CF)
    if p >= 0:
        KN.moved(m, target, p, CI, CF)
        migrate(p, target, CF[Z_COST], now, CI, CF)
    else:
        M.settle(m, now, CI[Y_LAZY] != 0, CI, CF)


def round_(now, CI, CF):
    """The information round (``knowledge_kernels.spread``), then lazy Mosix settles the machines
    that the news may unblock (in machine order), then the next round."""
    if not CI[Y_UNFIN]:
        return
    n = CI[Y_N]
    if KN.spread(CI, CF):
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
        migrate(CI[mv + 2 * i], CI[mv + 2 * i + 1], CF[Z_COST], now, CI, CF)


def drain(stop_t, stop_p, stop_e, CI, CF):
    """Fire, in key order, every timer of the calendar keyed before (``stop_t``, ``stop_p``,
    ``stop_e``) (SimPy's next event) and before the stop of the run once the last process has
    completed. Returns early, with ``CI[Y_NEED]`` set, for what Python must do first: draw the
    recipients of an information round about to fire (NEED_ROUNDS), draw a background process's
    next batch before the next timer (NEED_DRAWS), or run a Python policy's completion hook after
    a completion (NEED_HOOK, machine ``CI[Y_HOOKM]``). ``CI[Y_FIRED]``: how many fired."""
    n = CI[Y_N]
    fired = 0
    while True:
        s = C.first_due_by(stop_t, stop_p, stop_e, CI[Y_STOP], CF[Z_STOPT], CI[Y_STOPE], L.calendar(CI), CI, CF)
        if s < 0:
            break
        if CI[Y_BLOW]:
            CI[Y_NEED] = NEED_DRAWS
            break
        t = CF[CI[OF_CT] + s]
        if s == 2 * n and CI[Y_UNFIN] and not CI[Y_RLEFT]:
            CI[Y_NEED] = NEED_ROUNDS
            break
        L.cancel(s, CI, CF)
        fired += 1
        if s < n:
            complete(s, t, CI, CF)
            if CI[Y_NEED]:
                break
        elif s < 2 * n:
            tick(s - n, t, CI, CF)
        elif s == 2 * n:
            round_(t, CI, CF)
        else:
            p = s - 2 * n - 1
            if CI[CS.proc(p, CI) + P_PINNED]:
                if CI[Y_UNFIN]:
                    burst(p, t, CI, CF)
            else:
                place(p, CI[CS.proc(p, CI) + P_TARGET], t, CI, CF)
    CI[Y_FIRED] = fired


# -- the compiled event loop ----------------------------------------------------------------------
# The arrivals as SimPy would order them (model.simulate): group g at its time, keyed as
# calendar_kernels' arrival cursor says; the next group's time is this one's plus the gap between
# the two (what Engine.schedule adds to the clock).


def run(times, firsts, ends, A, AT, CI, CF):
    """Fire every timer and arrival in SimPy's key order until the run's stop (the last
    completion), as the SimPy-driven run does with ``drain`` between the arrivals: the same
    kernels, in the same order. Returns early with ``CI[Y_NEED]`` set for what Python must draw
    (``drain``); call again after. ``A[C.A_EVENTS]`` counts the timers and arrivals fired."""
    groups = times.shape[0]
    while True:
        g = A[C.A_NEXT]
        ta, pa, ea = C.arrival_key(A, AT, groups)
        drain(ta, pa, ea, CI, CF)
        A[C.A_EVENTS] += CI[Y_FIRED]
        if CI[Y_NEED] or g >= groups or C.stops_before(CI[Y_STOP], CF[Z_STOPT], CI[Y_STOPE], ta, pa, ea):
            return
        A[C.A_EVENTS] += 1
        arrive(firsts[g], ends[g], ta, CI, CF)
        nxt = min(g + 1, groups - 1)
        C.arrived(A, AT, groups, ta + (times[nxt] - times[g]), CI, Y_EID)


jit_module(globals(), nopython=True, cache=True)
