"""The opportunity cost (Amir et al., sections 3-4): enhanced-pvm's placement and enhanced-mosix's
reassignment, compiled; the rules are stated in ``opportunity.py``.
"""

from __future__ import annotations

import math

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.cluster import knowledge_kernels as KN
from simcore.models.cluster import sharing_kernels as S
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.slots_kernels import (
    M_COLS,
    M_FIRST,
    M_NPIN,
    M_NPROC,
    M_VN,
    MF_MEM,
    MF_SPEED,
    MF_USED,
    O_MI,
    O_MV,
    O_PI,
    O_VS,
    OF_PF,
    OF_PR,
    OF_VL,
    OF_VM,
    P_COLS,
    P_CTOKEN,
    P_HOME,
    P_NEXT,
    P_PINNED,
    P_TOKEN,
    PF_CBOUND,
    PF_CCOST,
    PF_COLS,
    PF_HLOAD,
    PF_HMEM,
    PF_MEMORY,
    PF_PLACED,
    PR_COLS,
    PR_CPUFIT,
    PR_CPUTHRASH,
    PR_MEM,
    PR_MEMTERM,
    PR_USED,
    Y_GREEDY,
    Y_N,
    Y_RUNNING,
    Y_VSTRIDE,
    Z_BOUND,
    Z_CTAU,
    Z_FACTOR,
    Z_LOGBASE,
    Z_MAXLOAD,
    Z_RESID,
)


def _exp(x):
    return math.exp(x if x < 700.0 else 700.0)


def observe(CI, CF):
    """``L``, the smallest power of two above the largest load: seen so far (running-max) or now."""
    if CI[Y_RUNNING]:
        lo = CF[Z_MAXLOAD]
    else:
        lo = S.load(0, CI, CF)
        for m in range(1, CI[Y_N]):
            here = S.load(m, CI, CF)
            if here > lo:
                lo = here
    if lo >= CF[Z_BOUND] or not CI[Y_RUNNING]:
        CF[Z_BOUND] = 2.0 ** (math.floor(math.log2(lo)) + 1) if lo > 0 else 1.0


def marginal(m, used, lo, memory, CI, CF):
    """The cost a process of ``memory`` MB adds to machine ``m`` at ``used`` MB in use and load
    ``lo``: ``b**(mem/memory)`` and ``b**(cpu load/L)`` after minus before, each exponent capped
    at 700; the CPU load times the thrashing factor (Z_CTAU, 1 unless 'effective') while the
    memory in use exceeds the memory."""
    lb, cap, bound, tau = CF[Z_LOGBASE], CF[CS.fmachine(m, CI) + MF_MEM], CF[Z_BOUND], CF[Z_CTAU]
    mem = _exp(lb * (used + memory) / cap) - _exp(lb * used / cap)
    before, after = lo, lo + 1.0 / CF[CS.fmachine(m, CI) + MF_SPEED]
    if used > cap:
        before *= tau
    if used + memory > cap:
        after *= tau
    cpu = _exp(lb * after / bound) - _exp(lb * before / bound)
    return mem + cpu


def prices(m, used, lo, k, CI, CF):
    """What ``marginal`` computes of machine ``m`` without the process, into slot ``k`` of the
    scratch block: its memory, the memory in use, the memory term, the CPU cost if the process
    fits and if it does not. ``cheapest`` finishes the sum, to the bit as ``marginal`` does."""
    lb, cap, bound, tau = CF[Z_LOGBASE], CF[CS.fmachine(m, CI) + MF_MEM], CF[Z_BOUND], CF[Z_CTAU]
    before, after = lo, lo + 1.0 / CF[CS.fmachine(m, CI) + MF_SPEED]
    if used > cap:
        before *= tau
    start = _exp(lb * before / bound)
    pr = CI[OF_PR] + PR_COLS * k
    CF[pr + PR_MEM], CF[pr + PR_USED], CF[pr + PR_MEMTERM] = cap, used, _exp(lb * used / cap)
    CF[pr + PR_CPUFIT] = _exp(lb * after / bound) - start
    CF[pr + PR_CPUTHRASH] = _exp(lb * (after * tau) / bound) - start


def cheapest(n_prices, memory, CI, CF):
    """Over the scratch block's first ``n_prices`` slots (``prices``): (the slot of least
    marginal cost, that cost)."""
    lb = CF[Z_LOGBASE]
    best, best_cost = -1, math.inf
    for k in range(n_prices):
        pr = CI[OF_PR] + PR_COLS * k
        used = CF[pr + PR_USED] + memory
        x = lb * used / CF[pr + PR_MEM]
        cpu = CF[pr + PR_CPUTHRASH] if used > CF[pr + PR_MEM] else CF[pr + PR_CPUFIT]
        cost = (math.exp(x if x < 700.0 else 700.0) - CF[pr + PR_MEMTERM]) + cpu
        if best < 0 or cost < best_cost:
            best, best_cost = k, cost
    return best, best_cost


def least_cost(p, CI, CF):
    """The machine where ``p`` adds the least cost, on the exact state (the first among equals)."""
    memory = CF[CS.fproc(p, CI) + PF_MEMORY]
    best, best_cost = 0, math.inf
    for m in range(CI[Y_N]):
        cost = marginal(m, CF[CS.fmachine(m, CI) + MF_USED], S.load(m, CI, CF), memory, CI, CF)
        if cost < best_cost:
            best, best_cost = m, cost
    return best


def least_known(p, CI, CF):
    """The machine where ``p`` adds the least cost as its home machine knows the cluster: the home
    on its exact state, each machine of its view at the load and memory in use last heard (oldest
    first). The home wins a tie, then the older entry."""
    home = CI[CS.proc(p, CI) + P_HOME]
    memory = CF[CS.fproc(p, CI) + PF_MEMORY]
    best = home
    best_cost = marginal(home, CF[CS.fmachine(home, CI) + MF_USED], S.load(home, CI, CF), memory, CI, CF)
    V = CI[Y_VSTRIDE]
    vs, vl, vm = CI[O_VS] + home * V, CI[OF_VL] + home * V, CI[OF_VM] + home * V
    for k in range(CI[CS.machine(home, CI) + M_VN]):
        cost = marginal(CI[vs + k], CF[vm + k], CF[vl + k], memory, CI, CF)
        if cost < best_cost:
            best, best_cost = CI[vs + k], cost
    return best


def cost_here(m, p, gone, gone_mem, CI, CF):
    """Process ``p``'s marginal cost on its machine ``m``: now, without the ``gone`` processes
    (``gone_mem`` MB) the scan already sends away (greedy), or when it was placed (stability;
    kept per placement while ``L`` stays)."""
    pf, pb = CS.fproc(p, CI), CS.proc(p, CI)
    mf = CS.fmachine(m, CI)
    memory = CF[pf + PF_MEMORY]
    if CI[Y_GREEDY]:
        rest = CI[CS.machine(m, CI) + M_NPROC] - gone - 1
        return marginal(m, CF[mf + MF_USED] - gone_mem - memory, rest / CF[mf + MF_SPEED], memory, CI, CF)
    if CI[pb + P_CTOKEN] != CI[pb + P_TOKEN] or CF[pf + PF_CBOUND] != CF[Z_BOUND]:
        CF[pf + PF_CCOST] = marginal(m, CF[pf + PF_HMEM], CF[pf + PF_HLOAD], memory, CI, CF)
        CI[pb + P_CTOKEN], CF[pf + PF_CBOUND] = CI[pb + P_TOKEN], CF[Z_BOUND]
    return CF[pf + PF_CCOST]


def reassign(now, CI, CF):
    """Enhanced-mosix's scan: each machine's processes that may move (not pinned, ``min_residency``
    met), in their order on it, against the machines it knows. A process moves to the known
    machine where its marginal cost is least when its cost here exceeds ``reassign_factor`` times
    that (stability) or that (greedy); the sender's view counts it at once. The moves go into
    the block O_MV; returns how many (made after the scan, ``run_kernels.reassign``)."""
    n, V = CI[Y_N], CI[Y_VSTRIDE]
    factor = 1.0 if CI[Y_GREEDY] else CF[Z_FACTOR]
    mi, pi, pf, mv = CI[O_MI], CI[O_PI], CI[OF_PF], CI[O_MV]
    nmoves = 0
    for m in range(n):
        vn = CI[mi + m * M_COLS + M_VN]
        if not vn or CI[mi + m * M_COLS + M_NPROC] - CI[mi + m * M_COLS + M_NPIN] == 0:
            continue
        vs, vl, vm = CI[O_VS] + m * V, CI[OF_VL] + m * V, CI[OF_VM] + m * V
        built = False
        gone, gone_mem = 0, 0.0
        p = CI[mi + m * M_COLS + M_FIRST]
        while p >= 0:
            if not CI[pi + p * P_COLS + P_PINNED] and now - CF[pf + p * PF_COLS + PF_PLACED] >= CF[Z_RESID]:
                if not built:
                    for k in range(vn):
                        prices(CI[vs + k], CF[vm + k], CF[vl + k], k, CI, CF)
                    built = True
                k, cost = cheapest(vn, CF[pf + p * PF_COLS + PF_MEMORY], CI, CF)
                if cost_here(m, p, gone, gone_mem, CI, CF) > factor * cost:
                    target = CI[vs + k]
                    CI[mv + 2 * nmoves], CI[mv + 2 * nmoves + 1] = p, target
                    nmoves += 1
                    gone, gone_mem = gone + 1, gone_mem + CF[pf + p * PF_COLS + PF_MEMORY]
                    KN.moved(m, target, p, CI, CF)
                    prices(target, CF[vm + k], CF[vl + k], k, CI, CF)
            p = CI[pi + p * P_COLS + P_NEXT]
    return nmoves


jit_module(globals(), nopython=True, cache=True)
