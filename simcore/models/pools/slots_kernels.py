"""The pools system's buffers, slot by slot.

Generated from ``simcore/models/pools/layout.yaml``
by ``python -m simcore.core.layout``: do not edit; edit the table and run that command
(tests/test_slot_layout.py checks that the two match).

The system's state is two flat buffers, S (int64) and SF (float64): a header of run-wide values
and counters (Y_*, Z_*) and of where each block starts (O_*, OF_*), then blocks per CPU, per pool
and per row of the log. Threads and jobs are rows of the arrays TI (int64; TF holds each thread's
work left) and JI (int64; JF holds the time each job's FINAL phase ended), which Python grows. A
thread's row is on its pool's queue or on the free list through TH_NEXT.
"""

from __future__ import annotations

from simcore.core.jit import njit

# S (int64): its header
Y_EID = 0       # SimPy's insertion counter: the number the next timer set takes
Y_FIRED = 1     # timers fired by the last call of drain
Y_STOP = 2      # 1 once the last sampled job has ended, 2 once SimPy's stop event is set for it
Y_STOPE = 3     # the insertion number of that stop event
Y_LEFT = 4      # sampled jobs not yet ended
Y_NSAMPLE = 5   # the jobs sampled (the first ones): the run ends when they have ended
Y_BUSY = 6      # processors busy now
Y_SWITCHES = 7  # context switches so far
Y_FREE = 8      # the first row of TI on the free list (-1: none)
Y_NEED = 9      # the job whose master thread ended INIT and waits for its fork (-1: none)
Y_P = 10        # processors
Y_NPOOLS = 11   # pools
Y_PSIZE = 12    # processors per pool
Y_LAZY = 13     # 1: a slice end with nobody waiting is not simulated
Y_NDONE = 14    # jobs ended so far
Y_SERIAL = 15   # threads made so far (the next thread's serial number)
Y_STEP = 16     # 1: drain returns after each timer (the invariant checks)
Y_LOGCAP = 17   # rows the log has room for (0: no log)
Y_NLOG = 18     # rows logged (counted beyond the room, so a full log is seen)
O_R = 19        # block R: per CPU, its ints (R_*)
O_PQ = 20       # block PQ: per pool, its ints (PQ_*)
O_LG = 21       # block LG: per row of the log, its ints (LG_*)
OF_RF = 22      # block RF of SF: per CPU, its floats (RF_*)
OF_LG = 23      # block LGF of SF: per row of the log, its floats (LGF_*)
Y_SIZE = 24     # slots of S's header

# SF (float64): its header
Z_AREA = 0   # the busy-processor integral up to Z_AREAT
Z_AREAT = 1  # when that integral was last brought up to date
Z_STOPT = 2  # the time of the run's stop (the last sampled job's end)
Z_SLICE = 3  # time_slice
Z_CONT = 4   # a context switch's run-queue contention cost, r (p - p0) (0 when p <= p0)
Z_CACHE = 5  # cache_cost, c: loading the cache at a switch
Z_SAME = 6   # t c: the cache's cost when the processor last ran a thread of the same job
Z_FINAL = 7  # final_demand: the FINAL phase's work
Z_INIT = 8   # init_demand: the INIT phase's work
Z_NOW = 9    # the time of the last timer fired (what Python's fork runs at)
Z_SIZE = 10  # slots of SF's header

# R_*: a CPU's ints (block O_R)
R_ON = 0    # the thread on it (a row of TI; -1: none)
R_LAST = 1  # the job it last ran (-1: none)
R_EID = 2   # its timer's insertion number (-1: no timer)
R_IDLE = 3  # 1: idle
R_COLS = 4  # columns

# PQ_*: a pool's ints (block O_PQ)
PQ_ACTIVE = 0  # active threads (running or queued)
PQ_HEAD = 1    # the first thread of its queue (-1: none)
PQ_TAIL = 2    # the last thread of its queue (-1: none)
PQ_LEN = 3     # threads queued
PQ_NIDLE = 4   # idle processors
PQ_COLS = 5    # columns

# RF_*: a CPU's floats (block OF_RF)
RF_START = 0  # when the running thread's work began (after its switch)
RF_AT = 1     # when its timer is due (inf: none)
RF_KEY = 2    # its timer's key's time, as SimPy computes now + delay
RF_COLS = 3   # columns

# TH_*: a thread's ints (a row of the array TI; TF holds its work left)
TH_POOL = 0    # its pool
TH_JOB = 1     # its job
TH_MASTER = 2  # 1: the job's master thread (INIT and FINAL), 0: a PARA thread
TH_NEXT = 3    # the next thread on its pool's queue or on the free list (-1: none)
TH_SERIAL = 4  # its serial number (the threads made before it)
TH_COLS = 5    # columns

# J_*: a job's ints (a row of the array JI; JF holds when its FINAL phase ended)
J_PHASE = 0    # its phase: INIT, PARA or FINAL
J_HOME = 1     # its home pool (where INIT and FINAL run)
J_RUNNING = 2  # its PARA threads not yet ended
J_DONE = 3     # its place among the jobs ended (-1: not ended)
J_COLS = 4     # columns

# LG_*: a row of the log's ints (block O_LG), while S[Y_LOGCAP] > 0
LG_KIND = 0    # DISPATCH or END
LG_CPU = 1     # the CPU
LG_SERIAL = 2  # the thread's serial number
LG_JOB = 3     # its job
LG_MASTER = 4  # 1: a master thread
LG_COLS = 5    # columns

# LGF_*: a row of the log's floats (block OF_LG)
LGF_TIME = 0   # when it happened
LGF_START = 1  # when the thread's work began on the CPU
LGF_COLS = 2   # columns


@njit(cache=True)
def layout(P, npools, log, head):
    """Every block's offset written into ``head`` (the int header that holds them), each
    buffer's blocks after its header in the table's order; returns the buffers' sizes."""
    at_s = Y_SIZE
    head[O_R] = at_s
    at_s += P * R_COLS
    head[O_PQ] = at_s
    at_s += npools * PQ_COLS
    head[O_LG] = at_s
    at_s += log * LG_COLS
    at_sf = Z_SIZE
    head[OF_RF] = at_sf
    at_sf += P * RF_COLS
    head[OF_LG] = at_sf
    at_sf += log * LGF_COLS
    return at_s, at_sf


@njit(cache=True, inline="always")
def cpu(i, S):
    """Where row ``i`` of block O_R starts in S."""
    return Y_SIZE + i * R_COLS


@njit(cache=True, inline="always")
def pool(i, S):
    """Where row ``i`` of block O_PQ starts in S."""
    return S[O_PQ] + i * PQ_COLS


@njit(cache=True, inline="always")
def log_row(i, S):
    """Where row ``i`` of block O_LG starts in S."""
    return S[O_LG] + i * LG_COLS


@njit(cache=True, inline="always")
def cpu_frow(i, S):
    """Where row ``i`` of block OF_RF starts in SF."""
    return Z_SIZE + i * RF_COLS


@njit(cache=True, inline="always")
def log_frow(i, S):
    """Where row ``i`` of block OF_LG starts in SF."""
    return S[OF_LG] + i * LGF_COLS


def dims(P, npools, log) -> dict:
    """Each block's (rows, width) for ``layout``'s sizes, by its offset's name."""
    return {
        'O_R': (P, R_COLS),
        'O_PQ': (npools, PQ_COLS),
        'O_LG': (log, LG_COLS),
        'OF_RF': (P, RF_COLS),
        'OF_LG': (log, LGF_COLS),
    }


#: per block: its buffer, the buffer whose header holds its offset, and its columns' names
BLOCKS = {
    'O_R': ('S', 'S',
        ('R_ON', 'R_LAST', 'R_EID', 'R_IDLE')),
    'O_PQ': ('S', 'S',
        ('PQ_ACTIVE', 'PQ_HEAD', 'PQ_TAIL', 'PQ_LEN', 'PQ_NIDLE')),
    'O_LG': ('S', 'S',
        ('LG_KIND', 'LG_CPU', 'LG_SERIAL', 'LG_JOB', 'LG_MASTER')),
    'OF_RF': ('SF', 'S',
        ('RF_START', 'RF_AT', 'RF_KEY')),
    'OF_LG': ('SF', 'S',
        ('LGF_TIME', 'LGF_START')),
}
#: per buffer, its header's slots in order
HEADERS = {
    'S':
        ('Y_EID', 'Y_FIRED', 'Y_STOP', 'Y_STOPE', 'Y_LEFT', 'Y_NSAMPLE', 'Y_BUSY', 'Y_SWITCHES', 'Y_FREE',
         'Y_NEED', 'Y_P', 'Y_NPOOLS', 'Y_PSIZE', 'Y_LAZY', 'Y_NDONE', 'Y_SERIAL', 'Y_STEP', 'Y_LOGCAP',
         'Y_NLOG', 'O_R', 'O_PQ', 'O_LG', 'OF_RF', 'OF_LG'),
    'SF':
        ('Z_AREA', 'Z_AREAT', 'Z_STOPT', 'Z_SLICE', 'Z_CONT', 'Z_CACHE', 'Z_SAME', 'Z_FINAL', 'Z_INIT', 'Z_NOW'),
}
