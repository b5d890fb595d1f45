"""The cluster kernels' calendar and heaps of finish tags, and the constants they share. The
state lives in two flat buffers, ``CI`` (int64) and ``CF`` (float64), laid out slot by slot in
``slots_kernels`` (generated from ``layout.yaml``): a header of run-wide values and counters, and
blocks whose offsets the header holds (per machine, per process, the information rounds'
recipients, the calendar).

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
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.slots_kernels import (
    C_COLS,
    C_EID,
    C_POS,
    C_PRIO,
    M_HN,
    O_CI,
    O_H,
    O_HEAP,
    O_PI,
    OF_CT,
    OF_PF,
    P_COLS,
    P_HPOS,
    P_TOKEN,
    PF_COLS,
    PF_FINV,
    Y_EID,
    Y_HN,
    Y_NP,
)

TIE = 1e-9                     # relative tolerance under which finish tags count as simultaneous
NORMAL = C.NORMAL            # SimPy's priority of a timer
PVM, ENHANCED_PVM, MOSIX, ENHANCED_MOSIX, PYTHON = 0, 1, 2, 3, 4   # PYTHON: the policy decides in Python
NEED_ROUNDS, NEED_DRAWS, NEED_HOOK = 1, 2, 3   # why drain returned early (CI[Y_NEED])


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
    return (CS.machine(m, CI) + M_HN, CI[O_HEAP] + m * CI[Y_NP], pi + P_HPOS, P_COLS, CI[OF_PF] + PF_FINV, PF_COLS,
            pi + P_TOKEN, pi + P_TOKEN, P_COLS)


jit_module(globals(), nopython=True, cache=True)
