"""The cluster system's buffers, slot by slot.

Generated from ``simcore/models/cluster/layout.yaml``
by ``python -m simcore.core.layout``: do not edit; edit the table and run that command
(tests/test_slot_layout.py checks that the two match).

The system's state is two flat buffers, CI (int64) and CF (float64): a header of run-wide values
and counters (Y_*, Z_*) and of where each block starts (O_*, OF_*), then blocks per machine (its
resident processes as a list in arrival order, its heap of finish tags, its view of the others),
per process, the information rounds' recipients, the calendar, the opportunity cost's scratch and
the background processes' draws. The calendar has a slot per timer: the completion timers of
machines 0..n-1, the Mosix wake-ups n..2n-1, the information round 2n and per process p the slot
2n+1+p (its delayed migration, or the end of a background process's idle period).
"""

from __future__ import annotations

from simcore.core.jit import njit

# named numbers the blocks use
ROUNDS = 64  # rounds of recipients drawn at a time (knowledge.Knowledge.batch)
DRAWS = 64   # a background process's draws handed over at a time (its batch)

# CI (int64): its header
Y_EID = 0       # SimPy's insertion counter: the number the next timer set takes
Y_FIRED = 1     # timers fired by the last call of the loop
Y_STOP = 2      # 1 once the last process has completed, 2 once SimPy's stop event is set for it
Y_STOPE = 3     # the insertion number of that stop event
Y_UNFIN = 4     # processes not completed
Y_N = 5         # machines
Y_T = 6         # foreground processes
Y_POLICY = 7    # the policy's rules: PVM, ENHANCED_PVM, MOSIX, ENHANCED_MOSIX or PYTHON (layout_kernels)
Y_RR_INIT = 8   # 1: the first placement is round robin (PVM, or Mosix's 'round-robin' initial)
Y_RR = 9        # round robin's next index
Y_TOKENS = 10   # placements so far (each placement's token)
Y_MIGR = 11     # migrations
Y_HN = 12       # timers on the calendar (its heap's item count)
Y_WINDOW = 13   # machines in a view (the load vector's window)
Y_RLEFT = 14    # rounds of recipients left of the batch drawn
Y_RNEXT = 15    # the next round of the batch
Y_NEED = 16     # why the loop returned early: NEED_ROUNDS, NEED_DRAWS or NEED_HOOK (0: it did not)
Y_LAZY = 17     # 1: Mosix migrates lazily (a delayed migration)
Y_GREEDY = 18   # 1: enhanced Mosix's greedy rule
Y_RUNNING = 19  # 1: the cost's bound L follows the running maximum of the loads
Y_NDONE = 20    # processes completed
Y_VSTRIDE = 21  # a view's row: the window plus one
Y_NP = 22       # processes, foreground and background
Y_BLOW = 23     # background draws used up (how many batches Python handed over)
Y_HOOKM = 24    # the machine whose completion Python's hook handles (NEED_HOOK)
Y_KNOWN = 25    # 1: enhanced Mosix places within its known window
O_MI = 26       # block MI: per machine, its ints (M_*)
O_PI = 27       # block PI: per process, its ints (P_*)
O_HEAP = 28     # block HEAP: per machine, its heap of finish tags (processes)
O_VS = 29       # block VS: per machine, its view of the others (machines; a row of Y_VSTRIDE)
O_R = 30        # block R: the information rounds' recipients, ROUNDS rounds at a time
O_CI = 31       # block CI: per calendar slot, its ints (C_*)
O_H = 32        # block H: the calendar's heap of slots
O_MV = 33       # block MV: the moves of the run (process, machine)
O_DONE = 34     # block DONE: the processes in the order they completed
O_HOSTS = 35    # block HOSTS: the machines in round robin's order
OF_MF = 36      # block MF of CF: per machine, its floats (MF_*)
OF_PF = 37      # block PF of CF: per process, its floats (PF_*)
OF_VL = 38      # block VL of CF: per machine, the loads of its view
OF_VM = 39      # block VM of CF: per machine, the free memory of its view
OF_CT = 40      # block CT of CF: per calendar slot, the time it is set at (inf: not set)
OF_PR = 41      # block PR of CF: the opportunity cost's scratch, per machine priced (PR_*)
OF_BD = 42      # block BD of CF: per background process, its draws handed over (DRAWS)
Y_SIZE = 43     # slots of CI's header

# CF (float64): its header
Z_STOPT = 0     # the time of the last completion
Z_TAU = 1       # the thrashing factor of a machine whose memory is overcommitted
Z_MAXLOAD = 2   # the largest load seen so far (the opportunity cost's running bound)
Z_INTERVAL = 3  # the information rounds' interval
Z_PERIOD = 4    # Mosix's balancing period
Z_RESID = 5     # the least residency before a process may migrate
Z_THRESH = 6    # the load above which a machine is overloaded
Z_MTHRESH = 7   # the share of its memory in use above which a machine is overloaded
Z_COST = 8      # migration_cost (s)
Z_LOGBASE = 9   # the log of the opportunity cost's base
Z_BOUND = 10    # the opportunity cost's bound L on the loads
Z_CTAU = 11     # the thrashing factor the opportunity cost uses (1 unless 'effective')
Z_FACTOR = 12   # the factor a move's gain must exceed (non-greedy enhanced Mosix)
Z_SIZE = 13     # slots of CF's header

# M_*: a machine's ints (block O_MI)
M_NPROC = 0  # resident processes
M_NPIN = 1   # of them, pinned ones (background processes)
M_FIRST = 2  # the first of its list of processes (-1: none)
M_LAST = 3   # the last of that list
M_HN = 4     # processes in its heap of finish tags
M_VN = 5     # entries in its view
M_MARK = 6   # 1: news reached it in the round it waits for
M_COLS = 7   # columns

# MF_*: a machine's floats (block OF_MF)
MF_SPEED = 0   # its speed
MF_MEM = 1     # its memory (MB)
MF_USED = 2    # its memory in use (MB)
MF_VCLOCK = 3  # its virtual clock (service per process so far)
MF_STAMP = 4   # when the virtual clock was last advanced
MF_RATE = 5    # service per process per second now (its speed over its processes, thrashing counted)
MF_WORK = 6    # work done so far
MF_THRASH = 7  # time spent thrashing
MF_PHASE = 8   # the phase of its Mosix balancing period
MF_DUE = 9     # when its Mosix wake-up is due (inf: none)
MF_ALERT = 10  # the load below which news of it alerts a recipient (enhanced Mosix)
MF_COLS = 11   # columns

# P_*: a process's ints (block O_PI)
P_MACHINE = 0  # its machine (-1: none yet)
P_TOKEN = 1    # its placement's token
P_NEXT = 2     # the next process on its machine (-1: none)
P_PREV = 3     # the previous one (-1: none)
P_HPOS = 4     # its position in its machine's heap of finish tags
P_MIGR = 5     # its migrations
P_HOME = 6     # its home machine
P_CTOKEN = 7   # the token its cached stability cost was computed at
P_TARGET = 8   # where its delayed migration goes
P_DONE = 9     # its place among the completions
P_ENDED = 10   # the machine it completed on
P_PINNED = 11  # 1: a background process (never migrates)
P_DRAW = 12    # its next draw (a background process)
P_COLS = 13    # columns

# PF_*: a process's floats (block OF_PF)
PF_ARRIVAL = 0  # its arrival time
PF_MEMORY = 1   # its memory (MB)
PF_FINV = 2     # its finish tag on its machine's virtual clock
PF_REMAIN = 3   # its demand left (s of a unit-speed machine)
PF_PLACED = 4   # when it was last placed
PF_HMEM = 5     # its machine's memory in use without it (the stability cost's cache)
PF_HLOAD = 6    # its machine's load without it (the same cache)
PF_COMPL = 7    # its completion time
PF_CBOUND = 8   # the bound L its cached cost was computed at
PF_CCOST = 9    # its cached stability cost
PF_COLS = 10    # columns

# C_*: a calendar slot's ints (block O_CI); its time is in block OF_CT
C_PRIO = 0  # its SimPy priority
C_EID = 1   # its insertion number
C_POS = 2   # its position in the heap (-1: not set)
C_COLS = 3  # columns

# PR_*: a machine priced for the opportunity cost (block OF_PR; opportunity_kernels.prices)
PR_MEM = 0        # the machine's memory
PR_USED = 1       # its memory in use
PR_MEMTERM = 2    # the memory term before the process
PR_CPUFIT = 3     # the CPU term if the process fits in memory
PR_CPUTHRASH = 4  # the CPU term if it makes the machine thrash
PR_COLS = 5       # columns


@njit(cache=True)
def layout(n, T, B, window, head):
    """Every block's offset written into ``head`` (the int header that holds them), each
    buffer's blocks after its header in the table's order; returns the buffers' sizes."""
    P = T + B
    slots = 2 * n + 1 + P
    W = max(window, 1)
    at_ci = Y_SIZE
    head[O_MI] = at_ci
    at_ci += n * M_COLS
    head[O_PI] = at_ci
    at_ci += P * P_COLS
    head[O_HEAP] = at_ci
    at_ci += n * max(P, 1)
    head[O_VS] = at_ci
    at_ci += n * (W + 1)
    head[O_R] = at_ci
    at_ci += (ROUNDS * n) * W
    head[O_CI] = at_ci
    at_ci += slots * C_COLS
    head[O_H] = at_ci
    at_ci += slots
    head[O_MV] = at_ci
    at_ci += (2 * max(T, 1))
    head[O_DONE] = at_ci
    at_ci += max(P, 1)
    head[O_HOSTS] = at_ci
    at_ci += n
    at_cf = Z_SIZE
    head[OF_MF] = at_cf
    at_cf += n * MF_COLS
    head[OF_PF] = at_cf
    at_cf += P * PF_COLS
    head[OF_VL] = at_cf
    at_cf += n * (W + 1)
    head[OF_VM] = at_cf
    at_cf += n * (W + 1)
    head[OF_CT] = at_cf
    at_cf += slots
    head[OF_PR] = at_cf
    at_cf += W * PR_COLS
    head[OF_BD] = at_cf
    at_cf += B * DRAWS
    return at_ci, at_cf


@njit(cache=True, inline="always")
def machine(i, CI):
    """Where row ``i`` of block O_MI starts in CI."""
    return Y_SIZE + i * M_COLS


@njit(cache=True, inline="always")
def proc(i, CI):
    """Where row ``i`` of block O_PI starts in CI."""
    return CI[O_PI] + i * P_COLS


@njit(cache=True, inline="always")
def fmachine(i, CI):
    """Where row ``i`` of block OF_MF starts in CF."""
    return Z_SIZE + i * MF_COLS


@njit(cache=True, inline="always")
def fproc(i, CI):
    """Where row ``i`` of block OF_PF starts in CF."""
    return CI[OF_PF] + i * PF_COLS


def dims(n, T, B, window) -> dict:
    """Each block's (rows, width) for ``layout``'s sizes, by its offset's name."""
    P = T + B
    slots = 2 * n + 1 + P
    W = max(window, 1)
    return {
        'O_MI': (n, M_COLS),
        'O_PI': (P, P_COLS),
        'O_HEAP': (n, max(P, 1)),
        'O_VS': (n, W + 1),
        'O_R': (ROUNDS * n, W),
        'O_CI': (slots, C_COLS),
        'O_H': (slots, 1),
        'O_MV': (2 * max(T, 1), 1),
        'O_DONE': (max(P, 1), 1),
        'O_HOSTS': (n, 1),
        'OF_MF': (n, MF_COLS),
        'OF_PF': (P, PF_COLS),
        'OF_VL': (n, W + 1),
        'OF_VM': (n, W + 1),
        'OF_CT': (slots, 1),
        'OF_PR': (W, PR_COLS),
        'OF_BD': (B, DRAWS),
    }


#: per block: its buffer, the buffer whose header holds its offset, and its columns' names
BLOCKS = {
    'O_MI': ('CI', 'CI',
        ('M_NPROC', 'M_NPIN', 'M_FIRST', 'M_LAST', 'M_HN', 'M_VN', 'M_MARK')),
    'O_PI': ('CI', 'CI',
        ('P_MACHINE', 'P_TOKEN', 'P_NEXT', 'P_PREV', 'P_HPOS', 'P_MIGR', 'P_HOME', 'P_CTOKEN', 'P_TARGET',
         'P_DONE', 'P_ENDED', 'P_PINNED', 'P_DRAW')),
    'O_HEAP': ('CI', 'CI',
        ()),
    'O_VS': ('CI', 'CI',
        ()),
    'O_R': ('CI', 'CI',
        ()),
    'O_CI': ('CI', 'CI',
        ('C_PRIO', 'C_EID', 'C_POS')),
    'O_H': ('CI', 'CI',
        ()),
    'O_MV': ('CI', 'CI',
        ()),
    'O_DONE': ('CI', 'CI',
        ()),
    'O_HOSTS': ('CI', 'CI',
        ()),
    'OF_MF': ('CF', 'CI',
        ('MF_SPEED', 'MF_MEM', 'MF_USED', 'MF_VCLOCK', 'MF_STAMP', 'MF_RATE', 'MF_WORK', 'MF_THRASH',
         'MF_PHASE', 'MF_DUE', 'MF_ALERT')),
    'OF_PF': ('CF', 'CI',
        ('PF_ARRIVAL', 'PF_MEMORY', 'PF_FINV', 'PF_REMAIN', 'PF_PLACED', 'PF_HMEM', 'PF_HLOAD', 'PF_COMPL',
         'PF_CBOUND', 'PF_CCOST')),
    'OF_VL': ('CF', 'CI',
        ()),
    'OF_VM': ('CF', 'CI',
        ()),
    'OF_CT': ('CF', 'CI',
        ()),
    'OF_PR': ('CF', 'CI',
        ('PR_MEM', 'PR_USED', 'PR_MEMTERM', 'PR_CPUFIT', 'PR_CPUTHRASH')),
    'OF_BD': ('CF', 'CI',
        ()),
}
#: per buffer, its header's slots in order
HEADERS = {
    'CI':
        ('Y_EID', 'Y_FIRED', 'Y_STOP', 'Y_STOPE', 'Y_UNFIN', 'Y_N', 'Y_T', 'Y_POLICY', 'Y_RR_INIT', 'Y_RR',
         'Y_TOKENS', 'Y_MIGR', 'Y_HN', 'Y_WINDOW', 'Y_RLEFT', 'Y_RNEXT', 'Y_NEED', 'Y_LAZY', 'Y_GREEDY',
         'Y_RUNNING', 'Y_NDONE', 'Y_VSTRIDE', 'Y_NP', 'Y_BLOW', 'Y_HOOKM', 'Y_KNOWN', 'O_MI', 'O_PI', 'O_HEAP',
         'O_VS', 'O_R', 'O_CI', 'O_H', 'O_MV', 'O_DONE', 'O_HOSTS', 'OF_MF', 'OF_PF', 'OF_VL', 'OF_VM', 'OF_CT',
         'OF_PR', 'OF_BD'),
    'CF':
        ('Z_STOPT', 'Z_TAU', 'Z_MAXLOAD', 'Z_INTERVAL', 'Z_PERIOD', 'Z_RESID', 'Z_THRESH', 'Z_MTHRESH',
         'Z_COST', 'Z_LOGBASE', 'Z_BOUND', 'Z_CTAU', 'Z_FACTOR'),
}
