"""What each machine knows of the others (Mosix's load vector): the compiled rules.

Every ``info_interval`` seconds each machine sends its load and memory in use to
``mosix_known_machines`` others (recipients drawn in Python, a batch of rounds at a time,
``knowledge.Knowledge.batch``); a machine's view keeps the latest entry of that many senders,
oldest first, a new sender pushing the oldest out. A machine that sends a process adds it to its
entry for the target.
"""

from __future__ import annotations

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.cluster import sharing_kernels as S
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.slots_kernels import (
    M_COLS,
    M_MARK,
    M_VN,
    MF_ALERT,
    MF_COLS,
    MF_SPEED,
    MF_USED,
    O_MI,
    O_R,
    O_VS,
    OF_MF,
    OF_VL,
    OF_VM,
    PF_MEMORY,
    Y_N,
    Y_RLEFT,
    Y_RNEXT,
    Y_VSTRIDE,
    Y_WINDOW,
)


def _view_find(r, s, CI):
    """The position of sender ``s`` in machine ``r``'s view (oldest first), or -1."""
    vs = CI[O_VS] + r * CI[Y_VSTRIDE]
    for k in range(CI[CS.machine(r, CI) + M_VN]):
        if CI[vs + k] == s:
            return k
    return -1


def _view_shift(r, k, CI, CF):
    """Close the gap at position ``k`` of machine ``r``'s view."""
    V = CI[Y_VSTRIDE]
    vs, vl, vm = CI[O_VS] + r * V, CI[OF_VL] + r * V, CI[OF_VM] + r * V
    vn = CS.machine(r, CI) + M_VN
    for j in range(k, CI[vn] - 1):
        CI[vs + j], CF[vl + j], CF[vm + j] = CI[vs + j + 1], CF[vl + j + 1], CF[vm + j + 1]
    CI[vn] -= 1


def view_put(r, s, lo, used, CI, CF):
    """A round's news for recipient ``r``: sender ``s``'s entry goes last (newest); a new
    sender pushes the oldest out of a full window."""
    W, V = CI[Y_WINDOW], CI[Y_VSTRIDE]
    vn = CS.machine(r, CI) + M_VN
    k = _view_find(r, s, CI)
    if k >= 0:
        _view_shift(r, k, CI, CF)
    j = CI[vn]
    CI[CI[O_VS] + r * V + j], CF[CI[OF_VL] + r * V + j], CF[CI[OF_VM] + r * V + j] = s, lo, used
    CI[vn] = j + 1
    if k < 0 and CI[vn] > W:
        _view_shift(r, 0, CI, CF)


def moved(source, target, p, CI, CF):
    """``source`` sent process ``p`` to ``target``: its entry for the target (if it holds one) grows
    by one process per unit of the target's speed and by the process's memory."""
    k = _view_find(source, target, CI)
    if k >= 0:
        V = CI[Y_VSTRIDE]
        CF[CI[OF_VL] + source * V + k] += 1.0 / CF[CS.fmachine(target, CI) + MF_SPEED]
        CF[CI[OF_VM] + source * V + k] += CF[CS.fproc(p, CI) + PF_MEMORY]


def spread(CI, CF):
    """An information round: every machine sends its load and memory in use to its recipients
    of this round (from the batch Python drew); a recipient whose alert level the load is below
    gets a mark. Returns whether any machine was marked."""
    n, W = CI[Y_N], CI[Y_WINDOW]
    R = CI[O_R] + CI[Y_RNEXT] * n * W
    CI[Y_RNEXT] += 1
    CI[Y_RLEFT] -= 1
    mf, mi = CI[OF_MF], CI[O_MI]
    any_alert = False
    for s in range(n):
        lo = S.load(s, CI, CF)
        used = CF[mf + s * MF_COLS + MF_USED]
        for k in range(W):
            r = CI[R + s * W + k]
            view_put(r, s, lo, used, CI, CF)
            if lo < CF[mf + r * MF_COLS + MF_ALERT]:
                CI[mi + r * M_COLS + M_MARK] = 1
                any_alert = True
    return any_alert


jit_module(globals(), nopython=True, cache=True)
