"""The compiled NUMA system's calendar and log: the calendar of every timer (a heap of
simcore.core.calendar_kernels), each keyed as SimPy keys an event (time, priority, insertion number),
the log a trace reads, and the constants the kernels share. The buffers ``SI`` and ``SF`` they live
in are laid out slot by slot in ``slots_kernels`` (generated from ``layout.yaml``).

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from numba import config
from numba.cpython.unsafe.numbers import trailing_zeros

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa.slots_kernels import (
    C_COLS,
    C_EID,
    C_POS,
    C_PRIO,
    LG_COLS,
    LG_CPU,
    LG_DST,
    LG_KIND,
    LG_TASK,
    O_CI,
    O_H,
    O_LOG,
    OF_CT,
    OF_LOG,
    Y_EID,
    Y_HN,
    Y_LOGCAP,
    Y_NLOG,
)

EPS = 1e-9
LOOKAHEAD = 64
NORMAL = C.NORMAL            # SimPy's priority of a timer

# task states (task.NEW ... task.DONE)
NEW, QUEUED, RUNNING, BLOCKED, DONE = 0, 1, 2, 3, 4

# Y_SCOPE: which balancing the conservative rules of moves govern (policies.SCOPES)
SCOPE_ALL, SCOPE_BUSY, SCOPE_TICKS = range(3)
# why the policy refused a move (migrate_kernels.refusal): 0 = allowed; REF_k counts in Y_REFAGE + k - 1
REF_AGED, REF_DISTANCE, REF_ZONE = 1, 2, 3
# the kinds of a row of the log (LG_KIND)
LOG_WAIT, LOG_RUN, LOG_IO, LOG_MOVE = range(4)


if config.DISABLE_JIT:     # numba's intrinsic compiles only: the same count, in Python
    def trailing_zeros(x):  # noqa: F811
        x = int(x)
        return (x & -x).bit_length() - 1


def calendar(SI):
    """The calendar's descriptor for ``core.calendar_kernels``: where its heap, positions, times,
    priorities and insertion numbers are in the buffers."""
    ci = SI[O_CI]
    return (Y_HN, SI[O_H], ci + C_POS, C_COLS, SI[OF_CT], 1, ci + C_PRIO, ci + C_EID, C_COLS)


def cancel(s, SI, SF):
    """Take slot ``s`` off the calendar (``Timer.cancel``)."""
    C.cancel(s, calendar(SI), SI, SF)


def schedule_at(s, t, prio, SI, SF):
    """Set slot ``s`` at time ``t`` with SimPy priority ``prio`` and the next insertion number
    (replacing its key if it is set)."""
    eid = SI[Y_EID]
    SI[Y_EID] = eid + 1
    C.schedule(s, t, prio, eid, calendar(SI), SI, SF)


def schedule_with(s, t, prio, eid, SI, SF):
    """Set slot ``s`` at the key (``t``, ``prio``, ``eid``) (a timer set before the run, whose
    insertion number SimPy's counter gave)."""
    C.schedule(s, t, prio, eid, calendar(SI), SI, SF)


def log_room(n, T):
    """Rows of log one event can write at most, on ``n`` CPUs with ``T`` tasks: a wait and a move
    per migration (a task moves at most once per domain level, at most ``n`` of them), a run and a
    wait per end a catch-up replays (``LOOKAHEAD`` per CPU), a run and a wait per dispatch."""
    return 2 * n * T + (2 * LOOKAHEAD + 4) * n + 16


def log(kind, t, cpu, dst, x, SI, SF):
    """One row of the log (a count beyond its room is kept: the system reports it as an error)."""
    r = SI[Y_NLOG]
    SI[Y_NLOG] = r + 1
    if r < SI[Y_LOGCAP]:
        b = SI[O_LOG] + r * LG_COLS
        SI[b + LG_KIND], SI[b + LG_TASK], SI[b + LG_CPU], SI[b + LG_DST] = kind, t, cpu, dst
        SF[SI[OF_LOG] + r] = x


def lowbit(bm):
    """The index of the lowest set bit of ``bm`` > 0 (``(bm & -bm).bit_length() - 1``)."""
    return trailing_zeros(bm)


jit_module(globals(), nopython=True, cache=True)
