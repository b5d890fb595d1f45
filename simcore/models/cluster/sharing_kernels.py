"""Fair sharing of a machine among its processes, with thrashing: the compiled rules (the one
implementation).

Each of the ``L`` processes on machine ``i`` progresses at ``speed_i / L_eff`` CPU seconds (of a
speed-1.0 machine) per second, where ``L_eff = L`` while the memory in use fits the machine and
``L * thrashing_factor`` once it does not. Processor sharing is event-driven: per machine a
virtual clock holds the service attained by every resident process, each process finishes when
the clock reaches its finish tag (a heap keyed (tag, token)), and one timer waits for the least
tag. Any change of a machine's process set (hence of its rate) advances the clock and re-arms
that timer. A process that leaves keeps its remaining demand.

A machine's processes are a list in the order they joined it (what the policies scan).
"""

from __future__ import annotations

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.cluster import layout_kernels as L
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.layout_kernels import (
    TIE,
)
from simcore.models.cluster.slots_kernels import (
    M_FIRST,
    M_HN,
    M_LAST,
    M_NPIN,
    M_NPROC,
    MF_MEM,
    MF_RATE,
    MF_SPEED,
    MF_STAMP,
    MF_THRASH,
    MF_USED,
    MF_VCLOCK,
    MF_WORK,
    O_DONE,
    O_HEAP,
    O_PI,
    OF_PF,
    P_COLS,
    P_ENDED,
    P_MACHINE,
    P_NEXT,
    P_PINNED,
    P_PREV,
    P_TOKEN,
    PF_COLS,
    PF_COMPL,
    PF_FINV,
    PF_HLOAD,
    PF_HMEM,
    PF_MEMORY,
    PF_PLACED,
    PF_REMAIN,
    Y_NP,
    Y_TOKENS,
    Z_MAXLOAD,
    Z_TAU,
)


def load(m, CI, CF):
    """Machine ``m``'s load: resident processes per unit of speed."""
    return CI[CS.machine(m, CI) + M_NPROC] / CF[CS.fmachine(m, CI) + MF_SPEED]


def advance(m, now, CI, CF):
    """Machine ``m``'s virtual clock, work and thrashed time brought to ``now``."""
    mf = CS.fmachine(m, CI)
    n = CI[CS.machine(m, CI) + M_NPROC]
    if n and now > CF[mf + MF_STAMP]:
        dv = (now - CF[mf + MF_STAMP]) * CF[mf + MF_RATE]
        CF[mf + MF_VCLOCK] += dv
        CF[mf + MF_WORK] += dv * n
        if CF[mf + MF_USED] > CF[mf + MF_MEM]:
            CF[mf + MF_THRASH] += now - CF[mf + MF_STAMP]
    CF[mf + MF_STAMP] = now


def refresh(m, now, CI, CF):
    """Machine ``m``'s per-process rate, and its completion timer at the least tag."""
    mb, mf = CS.machine(m, CI), CS.fmachine(m, CI)
    L.cancel(m, CI, CF)
    n = CI[mb + M_NPROC]
    if n == 0:
        CF[mf + MF_RATE] = 0.0
        return
    CF[mf + MF_RATE] = CF[mf + MF_SPEED] / (n * CF[Z_TAU] if CF[mf + MF_USED] > CF[mf + MF_MEM] else n)
    top = CI[CI[O_HEAP] + m * CI[Y_NP]]
    d = CF[CS.fproc(top, CI) + PF_FINV] - CF[mf + MF_VCLOCK]
    delay = (0.0 if 0.0 > d else d) / CF[mf + MF_RATE]
    L.set_timer(m, now + delay, CI, CF)


def drop(m, p, CI, CF):
    """Take ``p`` off machine ``m``'s list, heap and memory."""
    mb, mf, pb, pi = CS.machine(m, CI), CS.fmachine(m, CI), CS.proc(p, CI), CI[O_PI]
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
    CI[mb + M_NPIN] -= CI[pb + P_PINNED]
    C.remove(p, L.tags(m, CI), CI, CF)
    CF[mf + MF_USED] = CF[mf + MF_USED] - CF[CS.fproc(p, CI) + PF_MEMORY] if CI[mb + M_NPROC] else 0.0
    CI[pb + P_TOKEN] = -1
    CI[pb + P_MACHINE] = -1


def enter(p, m, now, CI, CF):
    """``p`` joins machine ``m`` with its remaining demand, last of its list; the machine's rate
    and completion timer follow."""
    mb, mf, pb, pf = CS.machine(m, CI), CS.fmachine(m, CI), CS.proc(p, CI), CS.fproc(p, CI)
    advance(m, now, CI, CF)
    CI[Y_TOKENS] += 1
    CI[pb + P_TOKEN], CI[pb + P_MACHINE], CF[pf + PF_PLACED] = CI[Y_TOKENS], m, now
    CF[pf + PF_HMEM], CF[pf + PF_HLOAD] = CF[mf + MF_USED], load(m, CI, CF)
    CF[pf + PF_FINV] = CF[mf + MF_VCLOCK] + CF[pf + PF_REMAIN]
    last = CI[mb + M_LAST]                       # the machine's dict: the newest last
    CI[pb + P_PREV], CI[pb + P_NEXT] = last, -1
    if last >= 0:
        CI[CS.proc(last, CI) + P_NEXT] = p
    else:
        CI[mb + M_FIRST] = p
    CI[mb + M_LAST] = p
    CI[mb + M_NPROC] += 1
    CI[mb + M_NPIN] += CI[pb + P_PINNED]
    C.push(p, L.tags(m, CI), CI, CF)
    CF[mf + MF_USED] += CF[pf + PF_MEMORY]
    here = load(m, CI, CF)
    if here > CF[Z_MAXLOAD]:
        CF[Z_MAXLOAD] = here
    refresh(m, now, CI, CF)


def leave(p, now, CI, CF):
    """``p`` leaves its machine, keeping its remaining demand; returns the machine."""
    m = CI[CS.proc(p, CI) + P_MACHINE]
    advance(m, now, CI, CF)
    pf = CS.fproc(p, CI)
    d = CF[pf + PF_FINV] - CF[CS.fmachine(m, CI) + MF_VCLOCK]
    CF[pf + PF_REMAIN] = 0.0 if 0.0 > d else d
    drop(m, p, CI, CF)
    refresh(m, now, CI, CF)
    return m


def tied(tag, clock):
    """Whether finish tag ``tag`` counts as reached at virtual time ``clock``: within ``TIE`` of
    it, relative above 1 and absolute below."""
    return tag <= clock + TIE * max(1.0, abs(clock))


def virtual(m, now, CI, CF):
    """Machine ``m``'s virtual clock at ``now``."""
    mf = CS.fmachine(m, CI)
    return CF[mf + MF_VCLOCK] + (now - CF[mf + MF_STAMP]) * CF[mf + MF_RATE]


def remaining(p, now, CI, CF):
    """Process ``p``'s remaining demand at ``now`` (its kept demand while it is on no machine)."""
    m = CI[CS.proc(p, CI) + P_MACHINE]
    if m < 0:
        return CF[CS.fproc(p, CI) + PF_REMAIN]
    d = CF[CS.fproc(p, CI) + PF_FINV] - virtual(m, now, CI, CF)
    return d if d > 0.0 else 0.0


def finishing(p, now, CI, CF):
    """Whether resident ``p`` completes at ``now``: its tag is tied with its machine's clock (its
    completion timer may still be pending behind another event of the same instant)."""
    return tied(CF[CS.fproc(p, CI) + PF_FINV], virtual(CI[CS.proc(p, CI) + P_MACHINE], now, CI, CF))


def retire(m, now, CI, CF):
    """Machine ``m``'s completion timer fired: every process whose tag lies within ``TIE``
    (relative, absolute below 1) of the least tag completes; they go, in tag order, into the
    block O_DONE. Returns how many."""
    mb, mf, pf = CS.machine(m, CI), CS.fmachine(m, CI), CI[OF_PF]
    base = CI[O_HEAP] + m * CI[Y_NP]
    tag = CF[pf + CI[base] * PF_COLS + PF_FINV]
    CF[mf + MF_WORK] += (tag - CF[mf + MF_VCLOCK]) * CI[mb + M_NPROC]
    if CF[mf + MF_USED] > CF[mf + MF_MEM]:
        CF[mf + MF_THRASH] += now - CF[mf + MF_STAMP]
    CF[mf + MF_VCLOCK], CF[mf + MF_STAMP] = tag, now
    done = 0
    while CI[mb + M_HN] and tied(CF[pf + CI[base] * PF_COLS + PF_FINV], tag):
        p = CI[base]
        drop(m, p, CI, CF)
        CF[pf + p * PF_COLS + PF_REMAIN] = 0.0
        CF[pf + p * PF_COLS + PF_COMPL] = now
        CI[CS.proc(p, CI) + P_ENDED] = m
        CI[CI[O_DONE] + done] = p
        done += 1
    refresh(m, now, CI, CF)
    return done


jit_module(globals(), nopython=True, cache=True)
