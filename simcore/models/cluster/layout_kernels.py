"""The cluster kernels' state: two flat buffers, ``CI`` (int64) and ``CF`` (float64), and the
calendar that holds every timer of the model.

Each buffer has a header of run-wide values and counters, and blocks whose offsets the header
holds: per machine, its resident processes (a list in arrival order on the machine), its heap of
finish tags, its view of the others; per process; the information rounds' recipients; the
calendar. ``layout`` gives the blocks' offsets and sizes for a cluster.

The calendar (one heap of simcore.core.calendar_kernels) has a slot per timer: the completion
timers of machines 0..n-1, the Mosix wake-ups of machines n..2n-1, the information round 2n and
the delayed migrations 2n+1..2n+T. Every timer is keyed as SimPy keys an event: its time, SimPy's
NORMAL priority and an insertion number from SimPy's counter (handed in and back in ``CI[Y_EID]``).

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources

TIE = 1e-9                     # relative tolerance under which finish tags count as simultaneous
NORMAL = C.NORMAL            # SimPy's priority of a timer
PVM, ENHANCED_PVM, MOSIX, ENHANCED_MOSIX, PYTHON = 0, 1, 2, 3, 4   # PYTHON: the policy decides in Python
NEED_ROUNDS, NEED_DRAWS, NEED_HOOK = 1, 2, 3   # why drain returned early (CI[Y_NEED])

# the header of CI: run-wide values and counters ...
(Y_EID, Y_FIRED, Y_STOP, Y_STOPE, Y_UNFIN, Y_N, Y_T, Y_POLICY, Y_RR_INIT, Y_RR, Y_TOKENS, Y_MIGR, Y_HN,
 Y_WINDOW, Y_RLEFT, Y_RNEXT, Y_NEED, Y_LAZY, Y_GREEDY, Y_RUNNING, Y_NDONE, Y_VSTRIDE, Y_NP, Y_BLOW,
 Y_HOOKM, Y_KNOWN) = range(26)
# ... and the offsets of the blocks of CI (O_*; O_HOSTS: the machines in round robin's order) and of CF (OF_*)
O_MI, O_PI, O_HEAP, O_VS, O_R, O_CI, O_H, O_MV, O_DONE, O_HOSTS = range(26, 36)
OF_MF, OF_PF, OF_VL, OF_VM, OF_CT, OF_PR, OF_BD = range(36, 43)
Y_SIZE = 43
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
# delayed migration goes, its place among the completions, the machine it completed on, pinned
# (a background process), the next of its draws (a background process)
(P_MACHINE, P_TOKEN, P_NEXT, P_PREV, P_HPOS, P_MIGR, P_HOME, P_CTOKEN, P_TARGET, P_DONE, P_ENDED, P_PINNED,
 P_DRAW) = range(13)
P_COLS = 13
# per process (block OF_PF)
(PF_ARRIVAL, PF_MEMORY, PF_FINV, PF_REMAIN, PF_PLACED, PF_HMEM, PF_HLOAD, PF_COMPL, PF_CBOUND,
 PF_CCOST) = range(10)
PF_COLS = 10
# the calendar: slot s keyed (CF[OF_CT + s], prio, insertion number), with its position in the heap
# (block O_H; -1: not set) in block O_CI. Slots: the completion timers of machines 0..n-1, the
# Mosix wake-ups n..2n-1, the information round 2n, then per process p the slot 2n+1+p: its
# delayed migration (foreground) or the end of its idle period (background)
C_PRIO, C_EID, C_POS = 0, 1, 2
C_COLS = 3
ROUNDS = 64                    # rounds of recipients drawn at a time (knowledge.Knowledge.batch)
DRAWS = 64                     # a background process's draws handed over at a time (its batch)


def layout(n, T, B, window, head):
    """The blocks' offsets for ``n`` machines, ``T`` foreground and ``B`` background processes and a
    view of ``window`` machines, written into ``head`` (the header of CI: O_* and OF_*); returns
    the sizes of CI and CF."""
    P = T + B
    slots = 2 * n + 1 + P
    W = max(window, 1)
    at = Y_SIZE
    for key, size in ((O_MI, n * M_COLS), (O_PI, P * P_COLS), (O_HEAP, n * max(P, 1)), (O_VS, n * (W + 1)),
                      (O_R, ROUNDS * n * W), (O_CI, slots * C_COLS), (O_H, slots), (O_MV, 2 * max(T, 1)),
                      (O_DONE, max(P, 1)), (O_HOSTS, n)):
        head[key] = at
        at += size
    fat = Z_SIZE
    for key, size in ((OF_MF, n * MF_COLS), (OF_PF, P * PF_COLS), (OF_VL, n * (W + 1)), (OF_VM, n * (W + 1)),
                      (OF_CT, slots), (OF_PR, 5 * W), (OF_BD, B * DRAWS)):
        head[key] = fat
        fat += size
    return at, fat


def machine(m, CI):
    """Where machine ``m``'s row of CI starts."""
    return CI[O_MI] + m * M_COLS


def fmachine(m, CI):
    """Where machine ``m``'s row of CF starts."""
    return CI[OF_MF] + m * MF_COLS


def proc(p, CI):
    """Where process ``p``'s row of CI starts."""
    return CI[O_PI] + p * P_COLS


def fproc(p, CI):
    """Where process ``p``'s row of CF starts."""
    return CI[OF_PF] + p * PF_COLS


# -- the calendar and the finish tags: heaps of simcore.core.calendar_kernels -----------------------
def calendar(CI):
    ci = CI[O_CI]
    return (Y_HN, CI[O_H], ci + C_POS, C_COLS, CI[OF_CT], 1, ci + C_PRIO, ci + C_EID, C_COLS)


def cancel(s, CI, CF):
    """Take slot ``s`` off the calendar (``Timer.cancel``)."""
    C.cancel(s, calendar(CI), CI, CF)


def set_timer(s, t, CI, CF):
    """Set slot ``s`` at time ``t`` (SimPy's NORMAL priority) with the next insertion number,
    replacing its key if it is set."""
    eid = CI[Y_EID]
    CI[Y_EID] = eid + 1
    C.schedule(s, t, NORMAL, eid, calendar(CI), CI, CF)


def set_timer_with(s, t, eid, CI, CF):
    """Set slot ``s`` at the key (``t``, NORMAL, ``eid``) (a timer set before the run)."""
    C.schedule(s, t, NORMAL, eid, calendar(CI), CI, CF)


def tags(m, CI):
    """Machine ``m``'s finish tags: a heap of its processes keyed (tag, token)."""
    pi = CI[O_PI]
    return (machine(m, CI) + M_HN, CI[O_HEAP] + m * CI[Y_NP], pi + P_HPOS, P_COLS, CI[OF_PF] + PF_FINV, PF_COLS,
            pi + P_TOKEN, pi + P_TOKEN, P_COLS)


jit_module(globals(), nopython=True, cache=True)
