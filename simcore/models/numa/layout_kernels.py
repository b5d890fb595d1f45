"""The compiled NUMA system's state and calendar: the layout of the flat buffers ``SI`` (int64) and
``SF`` (float64) (a header of run-wide values and counters, ``Y_*``, ``Z_*``, and blocks whose offsets
the header holds, ``O_*`` in ``SI``, ``OF_*`` in ``SF``: per task, per CPU, per domain, the run queues'
lists, the draws, the calendar), and the calendar of every timer (a heap of
simcore.core.calendar_kernels), each keyed as SimPy keys an event (time, priority, insertion number).
Flat buffers, not a tuple of arrays: numba counts a reference to every array of a tuple at each call
it is passed to.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from numba import config
from numba.cpython.unsafe.numbers import trailing_zeros

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources

EPS = 1e-9
LOOKAHEAD = 64
SLS = 128
N_PRIO = 40
NOT_IDLE, IDLE, NEWLY_IDLE = 0, 1, 2
NORMAL = C.NORMAL            # SimPy's priority of a timer

# task states (task.NEW ... task.DONE)
NEW, QUEUED, RUNNING, BLOCKED, DONE = 0, 1, 2, 3, 4

# the header of SI: run-wide values and counters ...
(
    Y_EID,
    Y_FIRED,
    Y_STOP,
    Y_STOPE,
    Y_UNFIN,
    Y_TOFIN,
    Y_MIGR,
    Y_PUSH,
    Y_WASTE,
    Y_MLEVEL,
    Y_AWAY,
    Y_HOMEM,
    Y_N,
    Y_T,
    Y_LOOK,
    Y_INSTANT,
    Y_IOREST,
    Y_ACTIVE,
    Y_IGNHOT,
    Y_RULES,
    Y_MAXMIG,
    Y_HOME,
    Y_HARD,
    Y_SCOPE,
    Y_PARENT,
    Y_STAMP,
    Y_HN,
    Y_NODES,
    Y_LEVELS,
    Y_LIFE,
    Y_LOGCAP,
    Y_NLOG,
    Y_ROOM,
    Y_STEP,
    Y_MEMAT,
    Y_AGEMEM,
    Y_REFAGE,
    Y_REFDIST,
    Y_REFZONE,
    Y_FOUND,
    Y_MORE,
) = range(41)
# Y_SCOPE: which balancing the conservative rules of moves govern (policies.SCOPES)
SCOPE_ALL, SCOPE_BUSY, SCOPE_TICKS = range(3)
# why the policy refused a move (migrate_kernels.refusal): 0 = allowed; REF_k counts in Y_REFAGE + k - 1
REF_AGED, REF_DISTANCE, REF_ZONE = 1, 2, 3
# ... and the offsets of the blocks of SI (O_*) and of SF (OF_*)
O_TI, O_RI, O_Q, O_LORD, O_LV, O_DI, O_CI, O_H, O_ZN, O_LOG = range(Y_MORE + 1, Y_MORE + 11)
OF_TF, OF_RF, OF_LT, OF_D, OF_FR, OF_DF, OF_CT, OF_ND, OF_LOG = range(O_LOG + 1, O_LOG + 10)
Y_SIZE = OF_LOG + 1
# the header of SF
Z_DELIV, Z_WORK, Z_STOPT, Z_TICK, Z_MEANIO, Z_MCOST, Z_ACOST, Z_OVER, Z_STEPT = range(9)
Z_SIZE = 9
# per task (block O_TI, T_COLS each): priority, state, CPU, home node, in the expired array,
# migrations, moved and not yet run, burst ends in I/O, I/O-bound, next draw and end of its draws,
# next and previous task of its run-queue list, levels of level_time so far
(T_PRIO, T_STATE, T_CPU, T_HOME, T_EXP, T_MIGR, T_MOVED, T_IO, T_IOBOUND, T_DI, T_DEND, T_NEXT, T_PREV,
 T_NLVL) = range(14)
T_COLS = 14
# per task (block OF_TF)
(F_SLICE, F_SLEFT, F_DEMAND, F_BURST, F_LAST, F_FIN, F_CPUT, F_SEG, F_MEANB, F_SCALE, F_DEBT) = range(11)
F_COLS = 11
# per CPU (block O_RI): current task (-1: none), queued count, cpu_load and its tick, pending ends,
# SimPy priority of the run timer, node, physical index of the active array, bitmaps of the active
# and expired arrays, in the loaded / overloaded sets, number of domains, a mark (active balancing)
(R_CURR, R_NQ, R_AVG, R_LTICK, R_PEND, R_ORDER, R_NODE, R_ACT, R_BMA, R_BME, R_LOADED, R_OVER, R_NDOMS,
 R_VISIT) = range(14)
R_COLS = 14
# per CPU (block OF_RF)
RF_START, RF_FACTOR, RF_SEGEND = range(3)
RF_COLS = 3
# per domain c * L + k (blocks O_DI, OF_DF): what the moves read of a domain
D_PERIODIC, D_EXEC, D_NICE, D_LEVEL = range(4)
D_COLS = 4
DF_HOT, DF_MINI = range(2)
DF_COLS = 2
# the run queues' lists (block O_Q): per CPU, physical array, priority: first and last task
Q_COLS = 2 * N_PRIO * 2
# the calendar: slot s keyed (SF[OF_CT + s], prio, insertion number), with its position in the heap
# (block O_H; -1: not set) in block O_CI. Slots: run timers of CPUs 0..n-1, balancing timers of
# CPUs n..2n-1, I/O waits of tasks 2n..2n+T-1.
C_PRIO, C_EID, C_POS = 0, 1, 2
C_COLS = 3
# the log (blocks O_LOG, OF_LOG; rows only while SI[Y_LOGCAP] > 0): per row a kind, the task, its CPU
# and the CPU it moved to (LOG_MOVE); in SF the segment's length (LOG_WAIT, LOG_RUN, LOG_IO) or the
# move's time (LOG_MOVE)
LG_KIND, LG_TASK, LG_CPU, LG_DST = range(4)
LG_COLS = 4
LOG_WAIT, LOG_RUN, LOG_IO, LOG_MOVE = range(4)


def layout(n, T, domains, nodes, levels, draws, logcap, head):
    """The blocks' offsets for ``n`` CPUs, ``T`` tasks, ``domains`` domains, ``nodes`` nodes, ``levels``
    levels of distance, ``draws`` draws and ``logcap`` rows of log, written into ``head`` (the
    header of SI: O_* and OF_*); returns the sizes of SI and SF."""
    slots = 2 * n + T
    at = Y_SIZE
    for key, size in ((O_TI, T * T_COLS), (O_RI, n * R_COLS), (O_Q, n * Q_COLS), (O_LORD, T * levels),
                      (O_LV, nodes * nodes), (O_DI, domains * D_COLS), (O_CI, slots * C_COLS), (O_H, slots),
                      (O_ZN, n * nodes), (O_LOG, logcap * LG_COLS)):
        head[key] = at
        at += size
    fat = Z_SIZE
    for key, size in ((OF_TF, T * F_COLS), (OF_RF, n * RF_COLS), (OF_LT, T * levels), (OF_D, draws),
                      (OF_FR, nodes * nodes), (OF_DF, domains * DF_COLS), (OF_CT, slots), (OF_ND, nodes * nodes),
                      (OF_LOG, logcap)):
        head[key] = fat
        fat += size
    return at, fat


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
