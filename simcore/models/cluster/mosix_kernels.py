"""Mosix's balancing (Barak et al. 1996): the compiled rules, stated in ``mosix.py``.
"""

from __future__ import annotations

import math

from numba import jit_module

from simcore.core import jit  # noqa: F401  (numba's cache keyed per kernel file)
from simcore.models.cluster import layout_kernels as L
from simcore.models.cluster import sharing_kernels as S
from simcore.models.cluster.layout_kernels import (
    MF_ALERT, MF_COLS, MF_DUE, MF_MEM, MF_PHASE, MF_SPEED, MF_USED, M_FIRST, M_NPIN, M_NPROC, M_VN, OF_MF,
    OF_PF, OF_VL, OF_VM, O_PI, O_VS, PF_ARRIVAL, PF_COLS, PF_MEMORY, PF_PLACED, P_COLS, P_NEXT, P_PINNED,
    Y_LAZY, Y_N, Y_VSTRIDE, Z_MTHRESH, Z_PERIOD, Z_RESID, Z_THRESH)


def wants(m, CI, CF):
    """``Mosix._wants``."""
    mf = L.fmachine(m, CI)
    mb = L.machine(m, CI)
    return CI[mb + M_NPROC] - CI[mb + M_NPIN] > 0 and (
        S.load(m, CI, CF) > CF[Z_THRESH] or CF[mf + MF_USED] > CF[Z_MTHRESH] * CF[mf + MF_MEM])


def grid(m, k, CI, CF):
    """``Mosix._grid``."""
    return CF[L.fmachine(m, CI) + MF_PHASE] + k * CF[Z_PERIOD]


def next_index(m, now, CI, CF):
    """``Mosix._next_index``."""
    period = CF[Z_PERIOD]
    k = math.floor((now - CF[L.fmachine(m, CI) + MF_PHASE]) / period) + 1
    while grid(m, k, CI, CF) - now < 1e-9 * period:
        k += 1
    return k


def old_enough_index(m, placed_at, now, CI, CF):
    """``Mosix._old_enough_index``."""
    first = next_index(m, now, CI, CF)
    residency = CF[Z_RESID]
    k = max(first, math.ceil((placed_at + residency - CF[L.fmachine(m, CI) + MF_PHASE]) / CF[Z_PERIOD]))
    while grid(m, k, CI, CF) - placed_at < residency:
        k += 1
    while k > first and grid(m, k - 1, CI, CF) - placed_at >= residency:
        k -= 1
    return k


def arm(m, at, CI, CF):
    """``Mosix._arm``: the machine's next wake-up no later than ``at``."""
    due = L.fmachine(m, CI) + MF_DUE
    if at < CF[due]:
        CF[due] = at
        L.set_timer(CI[Y_N] + m, at, CI, CF)


def settle(m, now, woke, CI, CF):
    """``Mosix._settle``."""
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
            p = CI[L.machine(m, CI) + M_FIRST]
            while p >= 0:
                placed = CF[pf + p * PF_COLS + PF_PLACED]
                if not CI[pi + p * P_COLS + P_PINNED] and now - placed < CF[Z_RESID] and placed < young:
                    young = placed
                p = CI[pi + p * P_COLS + P_NEXT]
            if young != math.inf:
                arm(m, grid(m, old_enough_index(m, young, now, CI, CF), CI, CF), CI, CF)
            alert = math.inf
    CF[L.fmachine(m, CI) + MF_ALERT] = alert


def _eligible(p, now, CI, CF):
    """Whether ``p`` may move: not pinned, and on its machine for ``min_residency`` at least."""
    return not CI[L.proc(p, CI) + P_PINNED] and now - CF[L.fproc(p, CI) + PF_PLACED] >= CF[Z_RESID]


def memory_target(m, CI, CF):
    """``Mosix._memory_target``: the known machine with most free memory (the first of them), and
    the room it has below the threshold."""
    V, mf = CI[Y_VSTRIDE], CI[OF_MF]
    vs, vm = CI[O_VS] + m * V, CI[OF_VM] + m * V
    best, best_free, at = -1, 0.0, 0
    for k in range(CI[L.machine(m, CI) + M_VN]):
        j = CI[vs + k]
        free = CF[mf + j * MF_COLS + MF_MEM] - CF[vm + k]
        if best < 0 or free > best_free:
            best, best_free, at = j, free, k
    return best, CF[Z_MTHRESH] * CF[mf + best * MF_COLS + MF_MEM] - CF[vm + at]


def load_target(lo, m, CI, CF):
    """``Mosix._load_target``: (the least-loaded known machine or -1, its free memory, the least
    load known)."""
    V, mf = CI[Y_VSTRIDE], CI[OF_MF]
    vs, vl, vm = CI[O_VS] + m * V, CI[OF_VL] + m * V, CI[OF_VM] + m * V
    vn = CI[L.machine(m, CI) + M_VN]
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
    """``Mosix.choose``: the one move (process, target) machine ``m`` makes now, or (-1, -1)."""
    if not CI[L.machine(m, CI) + M_VN]:
        return -1, -1
    pi, pf, mf = CI[O_PI], CI[OF_PF], L.fmachine(m, CI)
    first = CI[L.machine(m, CI) + M_FIRST]
    p = first
    while p >= 0 and not _eligible(p, now, CI, CF):
        p = CI[pi + p * P_COLS + P_NEXT]
    if p < 0:
        return -1, -1
    if CF[mf + MF_USED] > CF[Z_MTHRESH] * CF[mf + MF_MEM]:      # Mosix._memory_move
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
    target, free, _ = load_target(S.load(m, CI, CF), m, CI, CF)      # Mosix._load_move
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
    p = CI[L.machine(m, CI) + M_FIRST]
    while p >= 0:
        if not CI[pi + p * P_COLS + P_PINNED] and CF[pf + p * PF_COLS + PF_MEMORY] <= room:
            return True
        p = CI[pi + p * P_COLS + P_NEXT]
    return False


def _blocked(m, CI, CF):
    """``Mosix._blocked`` as (None, the load or infinity): None when a move is possible."""
    if not CI[L.machine(m, CI) + M_VN]:
        return False, math.inf
    mf = L.fmachine(m, CI)
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


jit_module(nopython=True, cache=True)
