"""The cluster model compiled with numba: fair sharing, thrashing, migrations, and the policies
pvm, enhanced-pvm, mosix, pvm-on-mosix and enhanced-mosix, on flat buffers, with every timer of
the model in one compiled calendar.

Every function transcribes a method of the Python model (named in its docstring:
``cluster.Cluster``, ``knowledge.Knowledge``, ``mosix.Mosix``, ``opportunity.CostModel``,
``opportunity.EnhancedMosix``, ``opportunity.cheapest``, ``opportunity.least_cost``) with the same
arithmetic in the same order on the same float64 values, and keys every timer as SimPy would key
the Python model's (time, priority, insertion number). State lives in two flat buffers, ``CI``
(int64) and ``CF`` (float64): a header of run-wide values and counters, and blocks whose offsets
the header holds: per machine, its resident processes (a list in arrival order on the machine,
as the Python model's dict keeps them), its heap of finish tags, its view of the others; per
process; the information rounds' recipients; the calendar. ``drain`` fires the calendar's timers
up to a key (SimPy's next event), which is how
:class:`simcore.models.cluster.compiled_cluster.CompiledCluster` runs.

tests/test_cluster_compiled.py holds every run to the Python model's, bit for bit.
"""

from __future__ import annotations

import math

from simcore.core import calendar_kernels as C
from simcore.core.jit import njit

TIE = 1e-9
NORMAL = 1
PVM, ENHANCED_PVM, MOSIX, ENHANCED_MOSIX = 0, 1, 2, 3

# the header of CI: run-wide values and counters ...
(Y_EID, Y_FIRED, Y_STOP, Y_STOPE, Y_UNFIN, Y_N, Y_T, Y_POLICY, Y_RR_INIT, Y_RR, Y_TOKENS, Y_MIGR, Y_HN,
 Y_WINDOW, Y_RLEFT, Y_RNEXT, Y_NEED, Y_LAZY, Y_GREEDY, Y_RUNNING, Y_NDONE, Y_VSTRIDE) = range(22)
# ... and the offsets of the blocks of CI (O_*) and of CF (OF_*)
O_MI, O_PI, O_HEAP, O_VS, O_R, O_CI, O_H, O_MV = range(22, 30)
OF_MF, OF_PF, OF_VL, OF_VM, OF_CT, OF_PR = range(30, 36)
Y_SIZE = 36
# the header of CF
(Z_STOPT, Z_TAU, Z_MAXLOAD, Z_INTERVAL, Z_PERIOD, Z_RESID, Z_THRESH, Z_MTHRESH, Z_COST, Z_LOGBASE, Z_BOUND,
 Z_CTAU, Z_FACTOR) = range(13)
Z_SIZE = 13
# per machine (block O_MI): resident processes, pinned ones, first and last of its list, heap size,
# entries in its view, a mark (news in a round it waits for)
M_NPROC, M_NPIN, M_FIRST, M_LAST, M_HN, M_VN, M_MARK = range(7)
M_COLS = 7
# per machine (block OF_MF)
MF_SPEED, MF_MEM, MF_USED, MF_VCLOCK, MF_STAMP, MF_RATE, MF_WORK, MF_THRASH, MF_PHASE, MF_DUE, MF_ALERT = range(11)
MF_COLS = 11
# per process (block O_PI): machine (-1: none), placement token, next and previous on its machine,
# position in its machine's heap, migrations, home, the token of its stability cost, where a
# delayed migration goes, its place among the completions, the machine it completed on
P_MACHINE, P_TOKEN, P_NEXT, P_PREV, P_HPOS, P_MIGR, P_HOME, P_CTOKEN, P_TARGET, P_DONE, P_ENDED = range(11)
P_COLS = 11
# per process (block OF_PF)
(PF_ARRIVAL, PF_MEMORY, PF_FINV, PF_REMAIN, PF_PLACED, PF_HMEM, PF_HLOAD, PF_COMPL, PF_CBOUND,
 PF_CCOST) = range(10)
PF_COLS = 10
# the calendar: slot s keyed (CF[OF_CT + s], prio, insertion number), with its position in the heap
# (block O_H; -1: not set) in block O_CI. Slots: completion timers of machines 0..n-1, Mosix
# wake-ups of machines n..2n-1, the information round 2n, delayed migrations 2n+1..2n+T.
C_PRIO, C_EID, C_POS = 0, 1, 2
C_COLS = 3
ROUNDS = 64                    # rounds of recipients drawn at a time (Knowledge._recipients)


def layout(n: int, T: int, window: int) -> tuple[dict, int, dict, int]:
    """Offsets and sizes of the blocks of CI and CF: ({O_*: offset}, CI size, {OF_*: offset}, CF size)."""
    slots = 2 * n + 1 + T
    W = max(window, 1)
    ints = [(O_MI, n * M_COLS), (O_PI, T * P_COLS), (O_HEAP, n * max(T, 1)), (O_VS, n * (W + 1)), (O_R, ROUNDS * n * W),
            (O_CI, slots * C_COLS), (O_H, slots), (O_MV, 2 * max(T, 1))]
    floats = [(OF_MF, n * MF_COLS), (OF_PF, T * PF_COLS), (OF_VL, n * (W + 1)), (OF_VM, n * (W + 1)), (OF_CT, slots),
              (OF_PR, 5 * W)]
    io, at = {}, Y_SIZE
    for key, size in ints:
        io[key], at = at, at + size
    fo, fat = {}, Z_SIZE
    for key, size in floats:
        fo[key], fat = fat, fat + size
    return io, at, fo, fat


# -- the calendar and the finish tags: heaps of simcore.core.calendar_kernels -----------------------
@njit(cache=True)
def _calendar(CI):
    ci = CI[O_CI]
    return (Y_HN, CI[O_H], ci + C_POS, C_COLS, CI[OF_CT], 1, ci + C_PRIO, ci + C_EID, C_COLS)


@njit(cache=True)
def cancel(s, CI, CF):
    """Take slot ``s`` off the calendar (``Timer.cancel``)."""
    C.cancel(s, _calendar(CI), CI, CF)


@njit(cache=True)
def set_timer(s, t, CI, CF):
    """Set slot ``s`` at time ``t`` (SimPy's NORMAL priority) with the next insertion number,
    replacing its key if it is set."""
    eid = CI[Y_EID]
    CI[Y_EID] = eid + 1
    C.schedule(s, t, NORMAL, eid, _calendar(CI), CI, CF)


@njit(cache=True)
def set_timer_with(s, t, eid, CI, CF):
    """Set slot ``s`` at the key (``t``, NORMAL, ``eid``) (a timer set before the run)."""
    C.schedule(s, t, NORMAL, eid, _calendar(CI), CI, CF)


@njit(cache=True)
def _tags(m, CI):
    """Machine ``m``'s finish tags: a heap of its processes keyed (tag, token)."""
    pi = CI[O_PI]
    return (CI[O_MI] + m * M_COLS + M_HN, CI[O_HEAP] + m * CI[Y_T], pi + P_HPOS, P_COLS, CI[OF_PF] + PF_FINV, PF_COLS,
            pi + P_TOKEN, pi + P_TOKEN, P_COLS)


# -- the cluster (cluster.Cluster) ------------------------------------------------------------------
@njit(cache=True)
def load(m, CI, CF):
    """``Machine.load``: resident processes per unit of speed."""
    return CI[CI[O_MI] + m * M_COLS + M_NPROC] / CF[CI[OF_MF] + m * MF_COLS + MF_SPEED]


@njit(cache=True)
def _advance(m, now, CI, CF):
    """``Cluster._advance``."""
    mf = CI[OF_MF] + m * MF_COLS
    n = CI[CI[O_MI] + m * M_COLS + M_NPROC]
    if n and now > CF[mf + MF_STAMP]:
        dv = (now - CF[mf + MF_STAMP]) * CF[mf + MF_RATE]
        CF[mf + MF_VCLOCK] += dv
        CF[mf + MF_WORK] += dv * n
        if CF[mf + MF_USED] > CF[mf + MF_MEM]:
            CF[mf + MF_THRASH] += now - CF[mf + MF_STAMP]
    CF[mf + MF_STAMP] = now


@njit(cache=True)
def _refresh(m, now, CI, CF):
    """``Cluster._refresh``: the per-process rate, and the completion timer at the least tag."""
    mb, mf = CI[O_MI] + m * M_COLS, CI[OF_MF] + m * MF_COLS
    cancel(m, CI, CF)
    n = CI[mb + M_NPROC]
    if n == 0:
        CF[mf + MF_RATE] = 0.0
        return
    CF[mf + MF_RATE] = CF[mf + MF_SPEED] / (n * CF[Z_TAU] if CF[mf + MF_USED] > CF[mf + MF_MEM] else n)
    top = CI[CI[O_HEAP] + m * CI[Y_T]]
    d = CF[CI[OF_PF] + top * PF_COLS + PF_FINV] - CF[mf + MF_VCLOCK]
    delay = (0.0 if 0.0 > d else d) / CF[mf + MF_RATE]
    set_timer(m, now + delay, CI, CF)


@njit(cache=True)
def _drop(m, p, CI, CF):
    """``Cluster._drop`` (the process is not pinned: the compiled model has no background ones)."""
    mb, mf, pb, pi = CI[O_MI] + m * M_COLS, CI[OF_MF] + m * MF_COLS, CI[O_PI] + p * P_COLS, CI[O_PI]
    prev, nxt = CI[pb + P_PREV], CI[pb + P_NEXT]
    if prev >= 0:
        CI[pi + prev * P_COLS + P_NEXT] = nxt
    else:
        CI[mb + M_FIRST] = nxt
    if nxt >= 0:
        CI[pi + nxt * P_COLS + P_PREV] = prev
    else:
        CI[mb + M_LAST] = prev
    CI[mb + M_NPROC] -= 1
    C.remove(p, _tags(m, CI), CI, CF)      # the Python model leaves a stale entry no one reads
    CF[mf + MF_USED] = CF[mf + MF_USED] - CF[CI[OF_PF] + p * PF_COLS + PF_MEMORY] if CI[mb + M_NPROC] else 0.0
    CI[pb + P_TOKEN] = -1
    CI[pb + P_MACHINE] = -1


@njit(cache=True)
def place(p, m, now, CI, CF):
    """``Cluster.place``: ``p`` joins machine ``m`` with its remaining demand."""
    mb, mf, pb, pf = CI[O_MI] + m * M_COLS, CI[OF_MF] + m * MF_COLS, CI[O_PI] + p * P_COLS, CI[OF_PF] + p * PF_COLS
    _advance(m, now, CI, CF)
    CI[Y_TOKENS] += 1
    CI[pb + P_TOKEN], CI[pb + P_MACHINE], CF[pf + PF_PLACED] = CI[Y_TOKENS], m, now
    CF[pf + PF_HMEM], CF[pf + PF_HLOAD] = CF[mf + MF_USED], load(m, CI, CF)
    CF[pf + PF_FINV] = CF[mf + MF_VCLOCK] + CF[pf + PF_REMAIN]
    last = CI[mb + M_LAST]                       # the machine's dict: the newest last
    CI[pb + P_PREV], CI[pb + P_NEXT] = last, -1
    if last >= 0:
        CI[CI[O_PI] + last * P_COLS + P_NEXT] = p
    else:
        CI[mb + M_FIRST] = p
    CI[mb + M_LAST] = p
    CI[mb + M_NPROC] += 1
    C.push(p, _tags(m, CI), CI, CF)
    CF[mf + MF_USED] += CF[pf + PF_MEMORY]
    here = load(m, CI, CF)
    if here > CF[Z_MAXLOAD]:
        CF[Z_MAXLOAD] = here
    _refresh(m, now, CI, CF)
    on_change(m, now, CI, CF)


@njit(cache=True)
def detach(p, now, CI, CF):
    """``Cluster.detach``: ``p`` leaves its machine, keeping its remaining demand."""
    m = CI[CI[O_PI] + p * P_COLS + P_MACHINE]
    _advance(m, now, CI, CF)
    pf = CI[OF_PF] + p * PF_COLS
    d = CF[pf + PF_FINV] - CF[CI[OF_MF] + m * MF_COLS + MF_VCLOCK]
    CF[pf + PF_REMAIN] = 0.0 if 0.0 > d else d
    _drop(m, p, CI, CF)
    _refresh(m, now, CI, CF)
    on_change(m, now, CI, CF)


@njit(cache=True)
def migrate(p, target, now, CI, CF):
    """``Cluster.migrate`` (no process is pinned here)."""
    pb = CI[O_PI] + p * P_COLS
    if CI[pb + P_MACHINE] < 0 or CI[pb + P_MACHINE] == target:
        return
    detach(p, now, CI, CF)
    CI[Y_MIGR] += 1
    CI[pb + P_MIGR] += 1
    if CF[Z_COST] > 0:
        CI[pb + P_TARGET] = target
        set_timer(2 * CI[Y_N] + 1 + p, now + CF[Z_COST], CI, CF)
    else:
        place(p, target, now, CI, CF)


@njit(cache=True)
def complete(m, now, CI, CF):
    """``Cluster._complete`` (machine ``m``'s completion timer fired): every process tied with the
    least tag completes; the last one stops the run (``Engine.stop``: a stop event at this
    instant, keyed as SimPy would key it)."""
    mb, mf, pf = CI[O_MI] + m * M_COLS, CI[OF_MF] + m * MF_COLS, CI[OF_PF]
    base = CI[O_HEAP] + m * CI[Y_T]
    tag = CF[pf + CI[base] * PF_COLS + PF_FINV]
    CF[mf + MF_WORK] += (tag - CF[mf + MF_VCLOCK]) * CI[mb + M_NPROC]
    if CF[mf + MF_USED] > CF[mf + MF_MEM]:
        CF[mf + MF_THRASH] += now - CF[mf + MF_STAMP]
    CF[mf + MF_VCLOCK], CF[mf + MF_STAMP] = tag, now
    limit = tag + TIE * max(1.0, abs(tag))
    done = 0
    while CI[mb + M_HN] and CF[pf + CI[base] * PF_COLS + PF_FINV] <= limit:
        p = CI[base]
        _drop(m, p, CI, CF)
        CF[pf + p * PF_COLS + PF_REMAIN] = 0.0
        CF[pf + p * PF_COLS + PF_COMPL] = now
        CI[CI[O_PI] + p * P_COLS + P_DONE] = CI[Y_NDONE]
        CI[CI[O_PI] + p * P_COLS + P_ENDED] = m
        CI[Y_NDONE] += 1
        done += 1
    _refresh(m, now, CI, CF)
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


@njit(cache=True)
def arrive(first, last, now, CI, CF):
    """An arrival group (``model.simulate``'s ``arrive``): processes ``first`` .. ``last`` - 1 placed
    by the policy in turn, then its reassignment."""
    for p in range(first, last):
        place(p, assign(p, CI, CF), now, CI, CF)
    if CI[Y_POLICY] == ENHANCED_MOSIX:
        reassign(now, CI, CF)


# -- the policies' hooks ----------------------------------------------------------------------------
@njit(cache=True)
def on_change(m, now, CI, CF):
    """``Policy.on_change``: Mosix settles the machine's wake-up; the cost policies watch ``L``."""
    policy = CI[Y_POLICY]
    if policy == MOSIX:
        settle(m, now, False, CI, CF)
    elif policy != PVM:
        observe(CI, CF)


@njit(cache=True)
def assign(p, CI, CF):
    """``Policy.assign``: round robin (pvm, pvm-on-mosix), home (mosix), least cost (the others)."""
    policy = CI[Y_POLICY]
    if policy == PVM or (policy == MOSIX and CI[Y_RR_INIT]):
        index = CI[Y_RR] % CI[Y_N]                # base.RoundRobin
        CI[Y_RR] = index + 1
        return index
    if policy == MOSIX:
        return CI[CI[O_PI] + p * P_COLS + P_HOME]
    return least_cost(p, CI, CF)


# -- what each machine knows (knowledge.Knowledge) -----------------------------------------------
@njit(cache=True)
def _view_find(r, s, CI):
    """The position of sender ``s`` in machine ``r``'s view (oldest first), or -1."""
    vs = CI[O_VS] + r * CI[Y_VSTRIDE]
    for k in range(CI[CI[O_MI] + r * M_COLS + M_VN]):
        if CI[vs + k] == s:
            return k
    return -1


@njit(cache=True)
def _view_shift(r, k, CI, CF):
    """Close the gap at position ``k`` of machine ``r``'s view."""
    V = CI[Y_VSTRIDE]
    vs, vl, vm = CI[O_VS] + r * V, CI[OF_VL] + r * V, CI[OF_VM] + r * V
    vn = CI[O_MI] + r * M_COLS + M_VN
    for j in range(k, CI[vn] - 1):
        CI[vs + j], CF[vl + j], CF[vm + j] = CI[vs + j + 1], CF[vl + j + 1], CF[vm + j + 1]
    CI[vn] -= 1


@njit(cache=True)
def view_put(r, s, lo, used, CI, CF):
    """``Knowledge._round`` for one recipient: sender ``s``'s entry goes last (newest); a new
    sender pushes the oldest out of a full window."""
    W, V = CI[Y_WINDOW], CI[Y_VSTRIDE]
    vn = CI[O_MI] + r * M_COLS + M_VN
    k = _view_find(r, s, CI)
    if k >= 0:
        _view_shift(r, k, CI, CF)
    j = CI[vn]
    CI[CI[O_VS] + r * V + j], CF[CI[OF_VL] + r * V + j], CF[CI[OF_VM] + r * V + j] = s, lo, used
    CI[vn] = j + 1
    if k < 0 and CI[vn] > W:
        _view_shift(r, 0, CI, CF)


@njit(cache=True)
def moved(source, target, p, CI, CF):
    """``Knowledge.moved``: ``source`` sent ``p`` to ``target``; its entry for the target grows."""
    k = _view_find(source, target, CI)
    if k >= 0:
        V = CI[Y_VSTRIDE]
        CF[CI[OF_VL] + source * V + k] += 1.0 / CF[CI[OF_MF] + target * MF_COLS + MF_SPEED]
        CF[CI[OF_VM] + source * V + k] += CF[CI[OF_PF] + p * PF_COLS + PF_MEMORY]


@njit(cache=True)
def round_(now, CI, CF):
    """``Knowledge._round`` (its recipients from the batch the Python side drew, see ``drain``),
    then Mosix settles the machines that the news may unblock (``Mosix._on_round``)."""
    if not CI[Y_UNFIN]:
        return
    n, W = CI[Y_N], CI[Y_WINDOW]
    R = CI[O_R] + CI[Y_RNEXT] * n * W
    CI[Y_RNEXT] += 1
    CI[Y_RLEFT] -= 1
    mf, mi = CI[OF_MF], CI[O_MI]
    any_alert = False
    for s in range(n):
        lo = load(s, CI, CF)
        used = CF[mf + s * MF_COLS + MF_USED]
        for k in range(W):
            r = CI[R + s * W + k]
            view_put(r, s, lo, used, CI, CF)
            if lo < CF[mf + r * MF_COLS + MF_ALERT]:
                CI[mi + r * M_COLS + M_MARK] = 1
                any_alert = True
    if any_alert:
        for i in range(n):
            if CI[mi + i * M_COLS + M_MARK]:
                CI[mi + i * M_COLS + M_MARK] = 0
                if CI[Y_POLICY] == MOSIX and CI[Y_LAZY]:
                    settle(i, now, False, CI, CF)
    set_timer(2 * n, now + CF[Z_INTERVAL], CI, CF)


# -- Mosix (mosix.Mosix) ----------------------------------------------------------------------------
@njit(cache=True)
def wants(m, CI, CF):
    """``Mosix._wants``."""
    mf = CI[OF_MF] + m * MF_COLS
    mb = CI[O_MI] + m * M_COLS
    return CI[mb + M_NPROC] - CI[mb + M_NPIN] > 0 and (
        load(m, CI, CF) > CF[Z_THRESH] or CF[mf + MF_USED] > CF[Z_MTHRESH] * CF[mf + MF_MEM])


@njit(cache=True)
def grid(m, k, CI, CF):
    """``Mosix._grid``."""
    return CF[CI[OF_MF] + m * MF_COLS + MF_PHASE] + k * CF[Z_PERIOD]


@njit(cache=True)
def next_index(m, now, CI, CF):
    """``Mosix._next_index``."""
    period = CF[Z_PERIOD]
    k = math.floor((now - CF[CI[OF_MF] + m * MF_COLS + MF_PHASE]) / period) + 1
    while grid(m, k, CI, CF) - now < 1e-9 * period:
        k += 1
    return k


@njit(cache=True)
def old_enough_index(m, placed_at, now, CI, CF):
    """``Mosix._old_enough_index``."""
    first = next_index(m, now, CI, CF)
    residency = CF[Z_RESID]
    k = max(first, math.ceil((placed_at + residency - CF[CI[OF_MF] + m * MF_COLS + MF_PHASE]) / CF[Z_PERIOD]))
    while grid(m, k, CI, CF) - placed_at < residency:
        k += 1
    while k > first and grid(m, k - 1, CI, CF) - placed_at >= residency:
        k -= 1
    return k


@njit(cache=True)
def arm(m, at, CI, CF):
    """``Mosix._arm``: the machine's next wake-up no later than ``at``."""
    due = CI[OF_MF] + m * MF_COLS + MF_DUE
    if at < CF[due]:
        CF[due] = at
        set_timer(CI[Y_N] + m, at, CI, CF)


@njit(cache=True)
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
            p = CI[CI[O_MI] + m * M_COLS + M_FIRST]
            while p >= 0:
                placed = CF[pf + p * PF_COLS + PF_PLACED]
                if now - placed < CF[Z_RESID] and placed < young:
                    young = placed
                p = CI[pi + p * P_COLS + P_NEXT]
            if young != math.inf:
                arm(m, grid(m, old_enough_index(m, young, now, CI, CF), CI, CF), CI, CF)
            alert = math.inf
    CF[CI[OF_MF] + m * MF_COLS + MF_ALERT] = alert


@njit(cache=True)
def tick(m, now, CI, CF):
    """``Mosix._tick`` (the machine's wake-up fired)."""
    CF[CI[OF_MF] + m * MF_COLS + MF_DUE] = math.inf
    if not CI[Y_UNFIN]:
        return
    p, target = choose(m, now, CI, CF)
    if p >= 0:
        moved(m, target, p, CI, CF)
        migrate(p, target, now, CI, CF)
    else:
        settle(m, now, CI[Y_LAZY] != 0, CI, CF)


@njit(cache=True)
def _eligible(p, now, CI, CF):
    return now - CF[CI[OF_PF] + p * PF_COLS + PF_PLACED] >= CF[Z_RESID]


@njit(cache=True)
def memory_target(m, CI, CF):
    """``Mosix._memory_target``: the known machine with most free memory (the first of them), and
    the room it has below the threshold."""
    V, mf = CI[Y_VSTRIDE], CI[OF_MF]
    vs, vm = CI[O_VS] + m * V, CI[OF_VM] + m * V
    best, best_free, at = -1, 0.0, 0
    for k in range(CI[CI[O_MI] + m * M_COLS + M_VN]):
        j = CI[vs + k]
        free = CF[mf + j * MF_COLS + MF_MEM] - CF[vm + k]
        if best < 0 or free > best_free:
            best, best_free, at = j, free, k
    return best, CF[Z_MTHRESH] * CF[mf + best * MF_COLS + MF_MEM] - CF[vm + at]


@njit(cache=True)
def load_target(lo, m, CI, CF):
    """``Mosix._load_target``: (the least-loaded known machine or -1, its free memory, the least
    load known)."""
    V, mf = CI[Y_VSTRIDE], CI[OF_MF]
    vs, vl, vm = CI[O_VS] + m * V, CI[OF_VL] + m * V, CI[OF_VM] + m * V
    vn = CI[CI[O_MI] + m * M_COLS + M_VN]
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


@njit(cache=True)
def choose(m, now, CI, CF):
    """``Mosix.choose``: the one move (process, target) machine ``m`` makes now, or (-1, -1)."""
    if not CI[CI[O_MI] + m * M_COLS + M_VN]:
        return -1, -1
    pi, pf, mf = CI[O_PI], CI[OF_PF], CI[OF_MF] + m * MF_COLS
    first = CI[CI[O_MI] + m * M_COLS + M_FIRST]
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
    target, free, _ = load_target(load(m, CI, CF), m, CI, CF)      # Mosix._load_move
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


@njit(cache=True)
def _fits(m, room, CI, CF):
    """Whether a process of machine ``m`` fits in ``room`` MB."""
    pi, pf = CI[O_PI], CI[OF_PF]
    p = CI[CI[O_MI] + m * M_COLS + M_FIRST]
    while p >= 0:
        if CF[pf + p * PF_COLS + PF_MEMORY] <= room:
            return True
        p = CI[pi + p * P_COLS + P_NEXT]
    return False


@njit(cache=True)
def _blocked(m, CI, CF):
    """``Mosix._blocked`` as (None, the load or infinity): None when a move is possible."""
    if not CI[CI[O_MI] + m * M_COLS + M_VN]:
        return False, math.inf
    mf = CI[OF_MF] + m * MF_COLS
    over = CF[mf + MF_USED] > CF[Z_MTHRESH] * CF[mf + MF_MEM]
    if over and _fits(m, memory_target(m, CI, CF)[1], CI, CF):
        return True, 0.0
    lo = load(m, CI, CF)
    target, free, least = load_target(lo, m, CI, CF)
    if target < 0:
        if over or lo - least > CF[Z_THRESH]:
            return False, math.inf
        return False, lo - CF[Z_THRESH] + 1e-9 * max(1.0, lo)
    if _fits(m, free, CI, CF):
        return True, 0.0
    return False, math.inf


# -- the opportunity cost (opportunity.CostModel, EnhancedMosix, least_cost) ---------------------
@njit(cache=True)
def _exp(x):
    return math.exp(x if x < 700.0 else 700.0)


@njit(cache=True)
def observe(CI, CF):
    """``CostModel.observe``: ``L``, the power of two above the largest load, seen so far or now."""
    if CI[Y_RUNNING]:
        lo = CF[Z_MAXLOAD]
    else:
        lo = load(0, CI, CF)
        for m in range(1, CI[Y_N]):
            here = load(m, CI, CF)
            if here > lo:
                lo = here
    if lo >= CF[Z_BOUND] or not CI[Y_RUNNING]:
        CF[Z_BOUND] = 2.0 ** (math.floor(math.log2(lo)) + 1) if lo > 0 else 1.0


@njit(cache=True)
def marginal(m, used, lo, memory, CI, CF):
    """``CostModel.marginal``."""
    lb, cap, bound, tau = CF[Z_LOGBASE], CF[CI[OF_MF] + m * MF_COLS + MF_MEM], CF[Z_BOUND], CF[Z_CTAU]
    mem = _exp(lb * (used + memory) / cap) - _exp(lb * used / cap)
    before, after = lo, lo + 1.0 / CF[CI[OF_MF] + m * MF_COLS + MF_SPEED]
    if used > cap:
        before *= tau
    if used + memory > cap:
        after *= tau
    cpu = _exp(lb * after / bound) - _exp(lb * before / bound)
    return mem + cpu


@njit(cache=True)
def prices(m, used, lo, k, CI, CF):
    """``CostModel.prices`` of machine ``m`` into slot ``k`` of the scratch block."""
    lb, cap, bound, tau = CF[Z_LOGBASE], CF[CI[OF_MF] + m * MF_COLS + MF_MEM], CF[Z_BOUND], CF[Z_CTAU]
    before, after = lo, lo + 1.0 / CF[CI[OF_MF] + m * MF_COLS + MF_SPEED]
    if used > cap:
        before *= tau
    start = _exp(lb * before / bound)
    pr = CI[OF_PR] + 5 * k
    CF[pr], CF[pr + 1], CF[pr + 2] = cap, used, _exp(lb * used / cap)
    CF[pr + 3], CF[pr + 4] = _exp(lb * after / bound) - start, _exp(lb * (after * tau) / bound) - start


@njit(cache=True)
def cheapest(n_prices, memory, CI, CF):
    """``opportunity.cheapest`` over the scratch block's first ``n_prices`` slots: (the slot of least
    marginal cost, that cost)."""
    lb = CF[Z_LOGBASE]
    best, best_cost = -1, math.inf
    for k in range(n_prices):
        pr = CI[OF_PR] + 5 * k
        used = CF[pr + 1] + memory
        x = lb * used / CF[pr]
        cost = (math.exp(x if x < 700.0 else 700.0) - CF[pr + 2]) + (CF[pr + 4] if used > CF[pr] else CF[pr + 3])
        if best < 0 or cost < best_cost:
            best, best_cost = k, cost
    return best, best_cost


@njit(cache=True)
def least_cost(p, CI, CF):
    """``opportunity.least_cost``: the machine where ``p`` adds the least cost, on the exact state."""
    memory = CF[CI[OF_PF] + p * PF_COLS + PF_MEMORY]
    best, best_cost = 0, math.inf
    for m in range(CI[Y_N]):
        cost = marginal(m, CF[CI[OF_MF] + m * MF_COLS + MF_USED], load(m, CI, CF), memory, CI, CF)
        if cost < best_cost:
            best, best_cost = m, cost
    return best


@njit(cache=True)
def cost_here(m, p, gone, gone_mem, CI, CF):
    """``EnhancedMosix._cost_here``: now without the ``gone`` processes the scan sends away
    (greedy), or when placed (stability; kept while ``L`` stays)."""
    pf, pb = CI[OF_PF] + p * PF_COLS, CI[O_PI] + p * P_COLS
    mf = CI[OF_MF] + m * MF_COLS
    memory = CF[pf + PF_MEMORY]
    if CI[Y_GREEDY]:
        rest = CI[CI[O_MI] + m * M_COLS + M_NPROC] - gone - 1
        return marginal(m, CF[mf + MF_USED] - gone_mem - memory, rest / CF[mf + MF_SPEED], memory, CI, CF)
    if CI[pb + P_CTOKEN] != CI[pb + P_TOKEN] or CF[pf + PF_CBOUND] != CF[Z_BOUND]:
        CF[pf + PF_CCOST] = marginal(m, CF[pf + PF_HMEM], CF[pf + PF_HLOAD], memory, CI, CF)
        CI[pb + P_CTOKEN], CF[pf + PF_CBOUND] = CI[pb + P_TOKEN], CF[Z_BOUND]
    return CF[pf + PF_CCOST]


@njit(cache=True)
def reassign(now, CI, CF):
    """``EnhancedMosix._reassign``: each machine's processes old enough to move, against the
    machines it knows; the moves are made after the scan."""
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
            if now - CF[pf + p * PF_COLS + PF_PLACED] >= CF[Z_RESID]:
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
                    moved(m, target, p, CI, CF)
                    prices(target, CF[vm + k], CF[vl + k], k, CI, CF)
            p = CI[pi + p * P_COLS + P_NEXT]
    for i in range(nmoves):
        migrate(CI[mv + 2 * i], CI[mv + 2 * i + 1], now, CI, CF)


# -- the calendar's timers ----------------------------------------------------------------------
@njit(cache=True)
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
        s = C.first_due(stop_t, stop_p, stop_e, _calendar(CI), CI, CF)
        if s < 0:
            break
        t = CF[CI[OF_CT] + s]
        if s == 2 * n and CI[Y_UNFIN] and not CI[Y_RLEFT]:
            CI[Y_NEED] = 1
            break
        cancel(s, CI, CF)
        fired += 1
        if s < n:
            complete(s, t, CI, CF)
        elif s < 2 * n:
            tick(s - n, t, CI, CF)
        elif s == 2 * n:
            round_(t, CI, CF)
        else:
            p = s - 2 * n - 1
            place(p, CI[CI[O_PI] + p * P_COLS + P_TARGET], t, CI, CF)
    CI[Y_FIRED] = fired
