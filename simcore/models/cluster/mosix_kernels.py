"""Mosix's balancing (Barak et al. 1996): the compiled rules, stated in ``mosix.py``.
"""

from __future__ import annotations

import math

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.cluster import layout_kernels as L
from simcore.models.cluster import sharing_kernels as S
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.slots_kernels import (
    M_FIRST,
    M_NPIN,
    M_NPROC,
    M_VN,
    MF_ALERT,
    MF_COLS,
    MF_DUE,
    MF_MEM,
    MF_PHASE,
    MF_SPEED,
    MF_USED,
    O_PI,
    O_VS,
    OF_MF,
    OF_PF,
    OF_VL,
    OF_VM,
    P_COLS,
    P_NEXT,
    P_PINNED,
    PF_ARRIVAL,
    PF_COLS,
    PF_MEMORY,
    PF_PLACED,
    Y_LAZY,
    Y_N,
    Y_VSTRIDE,
    Z_MTHRESH,
    Z_PERIOD,
    Z_RESID,
    Z_THRESH,
)


def wants(m, CI, CF):
    """Whether machine ``m`` wants to balance: it holds a process it may give away (not pinned)
    and its load exceeds ``load_threshold`` or its memory in use ``memory_threshold`` of its memory."""
    mf = CS.fmachine(m, CI)
    mb = CS.machine(m, CI)
    return CI[mb + M_NPROC] - CI[mb + M_NPIN] > 0 and (
        S.load(m, CI, CF) > CF[Z_THRESH] or CF[mf + MF_USED] > CF[Z_MTHRESH] * CF[mf + MF_MEM])


def grid(m, k, CI, CF):
    """The ``k``-th wake-up time of machine ``m``'s grid: its phase + k * balance_interval."""
    return CF[CS.fmachine(m, CI) + MF_PHASE] + k * CF[Z_PERIOD]


def next_index(m, now, CI, CF):
    """The first grid index of machine ``m`` strictly after ``now`` (within 1e-9 balance intervals
    counts as now)."""
    period = CF[Z_PERIOD]
    k = math.floor((now - CF[CS.fmachine(m, CI) + MF_PHASE]) / period) + 1
    while grid(m, k, CI, CF) - now < 1e-9 * period:
        k += 1
    return k


def old_enough_index(m, placed_at, now, CI, CF):
    """The first grid index of machine ``m`` after ``now`` at which a process placed at
    ``placed_at`` has stayed ``min_residency`` (as ``choose`` tests it: from an estimate, corrected
    by that test in floating point)."""
    first = next_index(m, now, CI, CF)
    residency = CF[Z_RESID]
    k = max(first, math.ceil((placed_at + residency - CF[CS.fmachine(m, CI) + MF_PHASE]) / CF[Z_PERIOD]))
    while grid(m, k, CI, CF) - placed_at < residency:
        k += 1
    while k > first and grid(m, k - 1, CI, CF) - placed_at >= residency:
        k -= 1
    return k


def arm(m, at, CI, CF):
    """Make machine ``m``'s next wake-up no later than ``at`` (a wake-up armed earlier stays)."""
    due = CS.fmachine(m, CI) + MF_DUE
    if at < CF[due]:
        CF[due] = at
        L.set_timer(CI[Y_N] + m, at, CI, CF)


def settle(m, now, woke, CI, CF):
    """After a change of machine ``m`` (``woke``: a wake-up that moved nothing), while it wants to
    balance: arm the next grid point if it could move now (always, when not lazy), or after a
    wake-up the first grid point where a process now too young has stayed ``min_residency``;
    else set its alert, the load below which a round's news could open a move (``_blocked``)."""
    alert = -math.inf
    if wants(m, CI, CF):
        none, blocked = True, 0.0
        if CI[Y_LAZY]:
            none, blocked = _blocked(m, CI, CF)
        if not none:
            alert = blocked
        elif not woke:
            arm(m, grid(m, next_index(m, now, CI, CF), CI, CF), CI, CF)
        else:
            young, pi, pf = math.inf, CI[O_PI], CI[OF_PF]
            p = CI[CS.machine(m, CI) + M_FIRST]
            while p >= 0:
                placed = CF[pf + p * PF_COLS + PF_PLACED]
                if not CI[pi + p * P_COLS + P_PINNED] and now - placed < CF[Z_RESID] and placed < young:
                    young = placed
                p = CI[pi + p * P_COLS + P_NEXT]
            if young != math.inf:
                arm(m, grid(m, old_enough_index(m, young, now, CI, CF), CI, CF), CI, CF)
            alert = math.inf
    CF[CS.fmachine(m, CI) + MF_ALERT] = alert


def _eligible(p, now, CI, CF):
    """Whether ``p`` may move: not pinned, and on its machine for ``min_residency`` at least."""
    return not CI[CS.proc(p, CI) + P_PINNED] and now - CF[CS.fproc(p, CI) + PF_PLACED] >= CF[Z_RESID]


def memory_target(m, CI, CF):
    """Memory ushering's target: the machine of ``m``'s view with most free memory (the first of
    them), and the room (MB) it has below the memory threshold."""
    V, mf = CI[Y_VSTRIDE], CI[OF_MF]
    vs, vm = CI[O_VS] + m * V, CI[OF_VM] + m * V
    best, best_free, at = -1, 0.0, 0
    for k in range(CI[CS.machine(m, CI) + M_VN]):
        j = CI[vs + k]
        free = CF[mf + j * MF_COLS + MF_MEM] - CF[vm + k]
        if best < 0 or free > best_free:
            best, best_free, at = j, free, k
    return best, CF[Z_MTHRESH] * CF[mf + best * MF_COLS + MF_MEM] - CF[vm + at]


def load_target(lo, m, CI, CF):
    """The load rule on machine ``m``'s view, at load ``lo``: (the least-loaded known machine, the
    first of them, or -1; its free memory; the least load known). No target when the least load
    is within ``load_threshold`` of ``lo``, or when the target with one more process would be as
    loaded as the source is now."""
    V, mf = CI[Y_VSTRIDE], CI[OF_MF]
    vs, vl, vm = CI[O_VS] + m * V, CI[OF_VL] + m * V, CI[OF_VM] + m * V
    vn = CI[CS.machine(m, CI) + M_VN]
    least = math.inf
    for k in range(vn):
        if CF[vl + k] < least:
            least = CF[vl + k]
    if lo - least <= CF[Z_THRESH]:
        return -1, 0.0, least
    at = 0
    while CF[vl + at] != least:
        at += 1
    target = CI[vs + at]
    if least + 1.0 / CF[mf + target * MF_COLS + MF_SPEED] >= lo:
        return -1, 0.0, least
    return target, CF[mf + target * MF_COLS + MF_MEM] - CF[vm + at], least


def choose(m, now, CI, CF):
    """The one move (process, target) machine ``m`` makes now, or (-1, -1). Only processes that
    may move (not pinned, ``min_residency`` met) go. Above the memory threshold, memory ushering
    first: the largest that fits the room of the machine with most free memory. Else the load
    rule (``load_target``): the oldest (by arrival) that fits the target's free memory."""
    if not CI[CS.machine(m, CI) + M_VN]:
        return -1, -1
    pi, pf, mf = CI[O_PI], CI[OF_PF], CS.fmachine(m, CI)
    first = CI[CS.machine(m, CI) + M_FIRST]
    p = first
    while p >= 0 and not _eligible(p, now, CI, CF):
        p = CI[pi + p * P_COLS + P_NEXT]
    if p < 0:
        return -1, -1
    if CF[mf + MF_USED] > CF[Z_MTHRESH] * CF[mf + MF_MEM]:      # memory ushering
        target, room = memory_target(m, CI, CF)
        best, size = -1, 0.0
        p = first
        while p >= 0:
            memory = CF[pf + p * PF_COLS + PF_MEMORY]
            if _eligible(p, now, CI, CF) and memory <= room and (best < 0 or memory > size):
                best, size = p, memory
            p = CI[pi + p * P_COLS + P_NEXT]
        if best >= 0:
            return best, target
    target, free, _ = load_target(S.load(m, CI, CF), m, CI, CF)      # the load rule
    if target < 0:
        return -1, -1
    best, oldest = -1, 0.0
    p = first
    while p >= 0:
        arrival = CF[pf + p * PF_COLS + PF_ARRIVAL]
        if _eligible(p, now, CI, CF) and CF[pf + p * PF_COLS + PF_MEMORY] <= free and (best < 0 or arrival < oldest):
            best, oldest = p, arrival
        p = CI[pi + p * P_COLS + P_NEXT]
    return (best, target) if best >= 0 else (-1, -1)


def _fits(m, room, CI, CF):
    """Whether a process of machine ``m`` that is not pinned fits in ``room`` MB."""
    pi, pf = CI[O_PI], CI[OF_PF]
    p = CI[CS.machine(m, CI) + M_FIRST]
    while p >= 0:
        if not CI[pi + p * P_COLS + P_PINNED] and CF[pf + p * PF_COLS + PF_MEMORY] <= room:
            return True
        p = CI[pi + p * P_COLS + P_NEXT]
    return False


def _blocked(m, CI, CF):
    """Whether ``choose`` could move something with this view and these processes, whatever their
    ages (a necessary condition for a move), as (True, 0) when it could; else (False, the load
    below which news could open a move): when only the least load known stands in the way, a
    load below ``load - load_threshold`` (plus a rounding margin); otherwise infinity (any news)."""
    if not CI[CS.machine(m, CI) + M_VN]:
        return False, math.inf
    mf = CS.fmachine(m, CI)
    over = CF[mf + MF_USED] > CF[Z_MTHRESH] * CF[mf + MF_MEM]
    if over and _fits(m, memory_target(m, CI, CF)[1], CI, CF):
        return True, 0.0
    lo = S.load(m, CI, CF)
    target, free, least = load_target(lo, m, CI, CF)
    if target < 0:
        if over or lo - least > CF[Z_THRESH]:
            return False, math.inf
        return False, lo - CF[Z_THRESH] + 1e-9 * max(1.0, lo)
    if _fits(m, free, CI, CF):
        return True, 0.0
    return False, math.inf


jit_module(globals(), nopython=True, cache=True)
