"""The NUMA system's buffers, slot by slot.

Generated from ``simcore/models/numa/layout.yaml``
by ``python -m simcore.core.layout``: do not edit; edit the table and run that command
(tests/test_slot_layout.py checks that the two match).

The system's state is two flat buffers, SI (int64) and SF (float64): a header of run-wide values
and counters (Y_*, Z_*) and of where each block starts (O_*, OF_*), then blocks per task, per CPU,
per domain, the run queues' lists, the draws, the calendar and the log. The balancer keeps its own
pair, I (int64) and F (float64): a header (H_*, B_*) and blocks per CPU and per domain that
balancer.Balancer lays out. Flat buffers, not a tuple of arrays: numba counts a reference to every
array of a tuple at each call it is passed to.
"""

from __future__ import annotations

from simcore.core.jit import njit

# named numbers the blocks use
N_PRIO = 40              # priorities of a run queue's arrays (static priorities 100..139)
# a CPU's run-queue lists: two arrays (active, expired) x N_PRIO priorities x (first task, last
# task)
Q_COLS = 2 * N_PRIO * 2

# SI (int64): its header
Y_EID = 0       # SimPy's insertion counter: the number the next timer set takes
Y_FIRED = 1     # timers fired by the last call of the loop (system_kernels.drain)
Y_STOP = 2      # 1 once the last task has finished, 2 once SimPy's stop event is set for it
Y_STOPE = 3     # the insertion number of that stop event
Y_UNFIN = 4     # tasks created and not finished
Y_TOFIN = 5     # tasks of the workload
Y_MIGR = 6      # migrations by the balancer, active pushes included
Y_PUSH = 7      # of them, active balancing's pushes
Y_WASTE = 8     # migrations after which the task moved again before it ran
Y_MLEVEL = 9    # distance levels crossed by the migrations, in all
Y_AWAY = 10     # migrations of tasks that were off their home node
Y_HOMEM = 11    # of them, those that took the task home
Y_N = 12        # CPUs
Y_T = 13        # tasks
Y_LOOK = 14     # 1: a lone task's run timer looks ahead (NumaSystem.look_ahead)
Y_INSTANT = 15  # 1: load_average 'instant' (nr_running x 128), 0: 'tick'
Y_IOREST = 16   # 1: io_wait 'rest-of-slice', 0: 'exponential'
Y_ACTIVE = 17   # 1: active_balance
Y_IGNHOT = 18   # 1: idle_ignores_cache_hot
Y_RULES = 19    # 1: the conservative rules of moves apply (policies.Conservative.rules)
# the conservative policies' max_migrations: a task moved that often moves no more
# (migrate_kernels.refusal)
Y_MAXMIG = 20
Y_HOME = 21     # 1: distance_rule 'home', 0: 'hop' (migrate_kernels.refusal)
Y_HARD = 22     # 1: the hard zone (conservative-hard; migrate_kernels.refusal)
Y_SCOPE = 23    # rules_scope: SCOPE_ALL, SCOPE_BUSY or SCOPE_TICKS (layout_kernels)
Y_PARENT = 24   # 1: placement 'parent' (a new task stays on its parent's CPU), 0: exec balancing
Y_STAMP = 25    # the mark of active balancing's last visit (R_VISIT)
Y_HN = 26       # timers on the calendar (its heap's item count)
Y_NODES = 27    # nodes
Y_LEVELS = 28   # distance levels (the machine's distinct SLIT distances)
Y_LIFE = 29     # 1: locality_scope 'lifetime', 0: 'cpu'
Y_LOGCAP = 30   # rows the log holds (0: no log)
Y_NLOG = 31     # rows of log written since Python last read them
Y_ROOM = 32     # rows of log one event may write (layout_kernels.log_room)
Y_STEP = 33     # 1: the loop returns after every event (the invariant checks)
Y_MEMAT = 34    # 1: home_node 'creation', 0: 'start'
Y_AGEMEM = 35   # 1: aged_memory 'moves' (an aged task's memory follows it)
Y_REFAGE = 36   # moves refused because the task was aged
Y_REFDIST = 37  # moves refused by the distance rule
Y_REFZONE = 38  # moves refused by the hard zone
Y_FOUND = 39    # balancing attempts that found an imbalance
Y_MORE = 40     # 1: the loop stopped with timers still due before SimPy's next event
O_TI = 41       # block TI: per task, its ints (T_*)
O_RI = 42       # block RI: per CPU, its ints (R_*)
O_Q = 43        # block Q: per CPU, its run-queue lists (Q_COLS)
O_LORD = 44     # block LORD: per task and distance level, the order in which it first reached the level (-1: never)
O_LV = 45       # block LV: per node pair, the distance level between them
O_DI = 46       # block DI: per domain c * L + k, its ints (D_*)
O_CI = 47       # block CI: per calendar slot, its ints (C_*)
O_H = 48        # block H: the calendar's heap of slots
O_ZN = 49       # block ZN: per CPU and node, whether the node is in the CPU's zone (conservative policies)
O_LOG = 50      # block LOG: per row of log, its ints (LG_*)
OF_TF = 51      # block TF of SF: per task, its floats (F_*)
OF_RF = 52      # block RF of SF: per CPU, its floats (RF_*)
OF_LT = 53      # block LT of SF: per task and distance level, the CPU time it received there (ms)
OF_D = 54       # block D of SF: every task's draws, task by task (task_kernels.workload_draws)
OF_FR = 55      # block FR of SF: per node pair, the slowdown of running on the first with memory on the second
OF_DF = 56      # block DF of SF: per domain, its floats (DF_*)
OF_CT = 57      # block CT of SF: per calendar slot, the time it is set at (inf: not set)
OF_ND = 58      # block ND of SF: per node pair, the SLIT distance (conservative policies)
OF_LOG = 59     # block LOG of SF: per row of log, its time or length (ms)
Y_SIZE = 60     # slots of SI's header

# SF (float64): its header
Z_DELIV = 0   # CPU time delivered to tasks (ms)
Z_WORK = 1    # work done at local-memory speed (ms)
Z_STOPT = 2   # the time of the last completion
Z_MEANIO = 3  # mean of the exponential I/O wait (ms)
Z_MCOST = 4   # migration_cost (ms of work redone after a migration)
Z_ACOST = 5   # lb_attempt_cost (ms of CPU time per balancing attempt)
Z_OVER = 6    # work added by balancing costs (ms)
Z_STEPT = 7   # the time of the event just fired (step mode)
Z_SIZE = 8    # slots of SF's header

# I (int64): its header
H_N = 0              # CPUs
H_L = 1              # domain slots per CPU (L: the domain of CPU c at level k is c * L + k)
H_G = 2              # groups of the domain with the most
H_P = 3              # periodic domains of the CPU with the most
H_INSTANT = 4        # 1: load_average 'instant'
H_SLEEPS = 5         # 1: quiet domains sleep (no attempt is an event while nothing can move)
H_WIDE_SLEEPERS = 6  # sleeping domains that a running task in a wide group may wake
H_ATTEMPTS = 7       # balancing attempts
H_FAILED = 8         # of them, those that moved nothing
H_DEAD = 9           # of those, the certain failures (nothing could move)
H_GROUP = 10         # the last search: the busiest group found (-1: none)
H_IMB = 11           # the last search: the imbalance to move, in tasks
H_BUSIEST = 12       # the last search: the busiest CPU
H_NOUT = 13          # CPUs whose balancing timer moved since Python last read them
O_BUSY = 14          # block: per CPU, 1 while it runs a task
O_FAILED = 15        # block: per domain, nr_balance_failed
O_DORMANT = 16       # block: per domain, 1 while it sleeps
O_BUSYOK = 17        # block: per domain, whether it balances periodically while its CPU is busy
O_LOCAL = 18         # block: per domain, the index of its CPU's own group
O_TOTALN = 19        # block: per domain, the CPUs of its groups
O_IMB = 20           # block: per domain, imbalance_pct as the policy answered it
O_HASWIDE = 21       # block: per domain, whether another of its groups holds several CPUs
O_PD = 22            # block: per CPU, the levels of its periodic domains in order
O_NPD = 23           # block: per CPU, how many periodic domains it has
O_GOF = 24           # block: per domain and CPU, the CPU's group (-1: outside the span)
O_SIZES = 25         # block: per domain and group, the group's CPUs
O_NGROUPS = 26       # block: per domain, its groups
O_SPAN = 27          # block: per domain and CPU, 1 if the CPU is in the span
O_WIDE = 28          # block: per domain and CPU, 1 if the CPU is in another group of several CPUs
O_OUTCPU = 29        # block: the CPUs whose timer moved (H_NOUT of them)
O_NEWIDLE = 30       # block: per domain, whether it balances newly idle
OF_CUR = 31          # block of F: per CPU, nr_running x 128 (the system's load, mirrored)
OF_AVG = 32          # block of F: per CPU, cpu_load
OF_TCK = 33          # block of F: per CPU, the tick cpu_load was settled at
OF_TAT = 34          # block of F: per CPU, when its balancing timer is due
OF_LAST = 35         # block of F: per domain, last_balance
OF_IVL = 36          # block of F: per domain, balance_interval
OF_BF = 37           # block of F: per domain, busy_factor
OF_MAXI = 38         # block of F: per domain, max_interval
OF_OUTAT = 39        # block of F: the due times of the CPUs in O_OUTCPU
O_SPANL = 40         # block: per domain, its span's CPUs in CPU order (a scan reads these, not the machine)
O_SPANN = 41         # block: per domain, how many CPUs its span holds
O_WIDEL = 42         # block: per domain, the CPUs of its other groups of several CPUs, in CPU order
O_WIDEN = 43         # block: per domain, how many O_WIDEL holds
H_SIZE = 44          # slots of I's header

# F (float64): its header
B_TICK = 0  # the jiffy (ms; the one place it is kept: timing_kernels and runqueue_kernels.settle_load read it)
B_SIZE = 1  # slots of F's header

# T_*: a task's ints (block O_TI)
T_PRIO = 0     # static priority (120 + nice)
T_STATE = 1    # NEW, QUEUED, RUNNING, BLOCKED or DONE (layout_kernels)
T_CPU = 2      # its CPU (-1: not yet created)
T_HOME = 3     # its home node (where its memory is)
T_EXP = 4      # 1: in its CPU's expired array
T_MIGR = 5     # migrations by the balancer
T_MOVED = 6    # 1: moved and not run since
T_IO = 7       # 1: its burst ends in I/O
T_IOBOUND = 8  # 1: its bursts end in I/O waits (0: CPU-bound)
T_DI = 9       # its next draw (an index into block D)
T_DEND = 10    # the end of its draws in block D
T_NEXT = 11    # the next task of its run-queue list (-1: none)
T_PREV = 12    # the previous task of its run-queue list (-1: none)
T_NLVL = 13    # distance levels it has reached so far
T_COLS = 14    # columns

# F_*: a task's floats (block OF_TF)
F_SLICE = 0   # its timeslice (ms)
F_SLEFT = 1   # what is left of its slice (ms)
F_DEMAND = 2  # work left after its current burst (ms at local-memory speed)
F_BURST = 3   # work left of its current burst
F_LAST = 4    # when it last stopped running (the cache-hot test)
F_FIN = 5     # when it finished (NaN: not yet)
F_CPUT = 6    # CPU time received (ms)
F_SEG = 7     # when its current segment of the trace began
F_MEANB = 8   # its mean burst (timeslice + burst_nice_ms x nice)
F_SCALE = 9   # the slowdown its bursts are drawn at (locality_scope 'lifetime'; 1 otherwise)
F_DEBT = 10   # migration cost owed and not yet added to its burst
F_COLS = 11   # columns

# R_*: a CPU's ints (block O_RI)
R_CURR = 0     # the task it runs (-1: none)
R_NQ = 1       # tasks queued
R_AVG = 2      # cpu_load
R_LTICK = 3    # the tick cpu_load was settled at
R_PEND = 4     # ends of bursts and slices its look-ahead passed and owes
R_ORDER = 5    # the SimPy priority of its run timer (below NORMAL: by CPU number)
R_NODE = 6     # its node
R_ACT = 7      # which physical array is the active one (0 or 1)
R_BMA = 8      # bitmap of the priorities queued in the active array
R_BME = 9      # bitmap of the priorities queued in the expired array
R_LOADED = 10  # 1: in the set of CPUs with a task
R_OVER = 11    # 1: in the set of CPUs with two tasks or more
R_NDOMS = 12   # its domains
R_VISIT = 13   # the mark of active balancing's last visit (Y_STAMP)
R_COLS = 14    # columns

# RF_*: a CPU's floats (block OF_RF)
RF_START = 0   # when its running task's segment began
RF_FACTOR = 1  # the slowdown of its running task (SLIT distance to the task's memory)
RF_SEGEND = 2  # when its run timer's look-ahead ends
RF_COLS = 3    # columns

# D_*: a domain's ints as the moves read them (block O_DI)
D_PERIODIC = 0  # 1: it balances periodically
D_EXEC = 1      # 1: exec balancing (SD_BALANCE_EXEC)
D_NICE = 2      # cache_nice_tries
D_LEVEL = 3     # its level
D_COLS = 4      # columns

# DF_*: a domain's floats (block OF_DF)
DF_HOT = 0   # cache_hot_time (ms)
DF_MINI = 1  # min_interval (ms)
DF_COLS = 2  # columns

# C_*: a calendar slot's ints (block O_CI); its time is in block OF_CT. Slots 0..n-1 are the CPUs'
# run timers, n..2n-1 their balancing timers, 2n.. the tasks' I/O waits
C_PRIO = 0  # its SimPy priority
C_EID = 1   # its insertion number
C_POS = 2   # its position in the heap (-1: not set)
C_COLS = 3  # columns

# LG_*: a row of the log (block O_LOG; its time or length in block OF_LOG), while SI[Y_LOGCAP] > 0
LG_KIND = 0  # LOG_WAIT, LOG_RUN, LOG_IO or LOG_MOVE (layout_kernels)
LG_TASK = 1  # the task
LG_CPU = 2   # its CPU
LG_DST = 3   # the CPU it moved to (LOG_MOVE)
LG_COLS = 4  # columns


@njit(cache=True)
def layout(n, T, domains, nodes, levels, draws, logcap, head):
    """Every block's offset written into ``head`` (the int header that holds them), each
    buffer's blocks after its header in the table's order; returns the buffers' sizes."""
    slots = 2 * n + T
    at_si = Y_SIZE
    head[O_TI] = at_si
    at_si += T * T_COLS
    head[O_RI] = at_si
    at_si += n * R_COLS
    head[O_Q] = at_si
    at_si += n * Q_COLS
    head[O_LORD] = at_si
    at_si += T * levels
    head[O_LV] = at_si
    at_si += nodes * nodes
    head[O_DI] = at_si
    at_si += domains * D_COLS
    head[O_CI] = at_si
    at_si += slots * C_COLS
    head[O_H] = at_si
    at_si += slots
    head[O_ZN] = at_si
    at_si += n * nodes
    head[O_LOG] = at_si
    at_si += logcap * LG_COLS
    at_sf = Z_SIZE
    head[OF_TF] = at_sf
    at_sf += T * F_COLS
    head[OF_RF] = at_sf
    at_sf += n * RF_COLS
    head[OF_LT] = at_sf
    at_sf += T * levels
    head[OF_D] = at_sf
    at_sf += draws
    head[OF_FR] = at_sf
    at_sf += nodes * nodes
    head[OF_DF] = at_sf
    at_sf += domains * DF_COLS
    head[OF_CT] = at_sf
    at_sf += slots
    head[OF_ND] = at_sf
    at_sf += nodes * nodes
    head[OF_LOG] = at_sf
    at_sf += logcap
    return at_si, at_sf


@njit(cache=True, inline="always")
def task_row(i, SI):
    """Where row ``i`` of block O_TI starts in SI."""
    return Y_SIZE + i * T_COLS


@njit(cache=True, inline="always")
def cpu_row(i, SI):
    """Where row ``i`` of block O_RI starts in SI."""
    return SI[O_RI] + i * R_COLS


@njit(cache=True, inline="always")
def domain_row(i, SI):
    """Where row ``i`` of block O_DI starts in SI."""
    return SI[O_DI] + i * D_COLS


@njit(cache=True, inline="always")
def timer_row(i, SI):
    """Where row ``i`` of block O_CI starts in SI."""
    return SI[O_CI] + i * C_COLS


@njit(cache=True, inline="always")
def task_frow(i, SI):
    """Where row ``i`` of block OF_TF starts in SF."""
    return Z_SIZE + i * F_COLS


@njit(cache=True, inline="always")
def cpu_frow(i, SI):
    """Where row ``i`` of block OF_RF starts in SF."""
    return SI[OF_RF] + i * RF_COLS


@njit(cache=True, inline="always")
def domain_frow(i, SI):
    """Where row ``i`` of block OF_DF starts in SF."""
    return SI[OF_DF] + i * DF_COLS


def dims(n, T, domains, nodes, levels, draws, logcap) -> dict:
    """Each block's (rows, width) for ``layout``'s sizes, by its offset's name."""
    slots = 2 * n + T
    return {
        'O_TI': (T, T_COLS),
        'O_RI': (n, R_COLS),
        'O_Q': (n, Q_COLS),
        'O_LORD': (T, levels),
        'O_LV': (nodes, nodes),
        'O_DI': (domains, D_COLS),
        'O_CI': (slots, C_COLS),
        'O_H': (slots, 1),
        'O_ZN': (n, nodes),
        'O_LOG': (logcap, LG_COLS),
        'OF_TF': (T, F_COLS),
        'OF_RF': (n, RF_COLS),
        'OF_LT': (T, levels),
        'OF_D': (draws, 1),
        'OF_FR': (nodes, nodes),
        'OF_DF': (domains, DF_COLS),
        'OF_CT': (slots, 1),
        'OF_ND': (nodes, nodes),
        'OF_LOG': (logcap, 1),
    }


#: per block: its buffer, the buffer whose header holds its offset, and its columns' names
BLOCKS = {
    'O_TI': ('SI', 'SI',
        ('T_PRIO', 'T_STATE', 'T_CPU', 'T_HOME', 'T_EXP', 'T_MIGR', 'T_MOVED', 'T_IO', 'T_IOBOUND', 'T_DI',
         'T_DEND', 'T_NEXT', 'T_PREV', 'T_NLVL')),
    'O_RI': ('SI', 'SI',
        ('R_CURR', 'R_NQ', 'R_AVG', 'R_LTICK', 'R_PEND', 'R_ORDER', 'R_NODE', 'R_ACT', 'R_BMA', 'R_BME',
         'R_LOADED', 'R_OVER', 'R_NDOMS', 'R_VISIT')),
    'O_Q': ('SI', 'SI',
        ()),
    'O_LORD': ('SI', 'SI',
        ()),
    'O_LV': ('SI', 'SI',
        ()),
    'O_DI': ('SI', 'SI',
        ('D_PERIODIC', 'D_EXEC', 'D_NICE', 'D_LEVEL')),
    'O_CI': ('SI', 'SI',
        ('C_PRIO', 'C_EID', 'C_POS')),
    'O_H': ('SI', 'SI',
        ()),
    'O_ZN': ('SI', 'SI',
        ()),
    'O_LOG': ('SI', 'SI',
        ('LG_KIND', 'LG_TASK', 'LG_CPU', 'LG_DST')),
    'OF_TF': ('SF', 'SI',
        ('F_SLICE', 'F_SLEFT', 'F_DEMAND', 'F_BURST', 'F_LAST', 'F_FIN', 'F_CPUT', 'F_SEG', 'F_MEANB',
         'F_SCALE', 'F_DEBT')),
    'OF_RF': ('SF', 'SI',
        ('RF_START', 'RF_FACTOR', 'RF_SEGEND')),
    'OF_LT': ('SF', 'SI',
        ()),
    'OF_D': ('SF', 'SI',
        ()),
    'OF_FR': ('SF', 'SI',
        ()),
    'OF_DF': ('SF', 'SI',
        ('DF_HOT', 'DF_MINI')),
    'OF_CT': ('SF', 'SI',
        ()),
    'OF_ND': ('SF', 'SI',
        ()),
    'OF_LOG': ('SF', 'SI',
        ()),
}
#: per buffer, its header's slots in order
HEADERS = {
    'SI':
        ('Y_EID', 'Y_FIRED', 'Y_STOP', 'Y_STOPE', 'Y_UNFIN', 'Y_TOFIN', 'Y_MIGR', 'Y_PUSH', 'Y_WASTE',
         'Y_MLEVEL', 'Y_AWAY', 'Y_HOMEM', 'Y_N', 'Y_T', 'Y_LOOK', 'Y_INSTANT', 'Y_IOREST', 'Y_ACTIVE',
         'Y_IGNHOT', 'Y_RULES', 'Y_MAXMIG', 'Y_HOME', 'Y_HARD', 'Y_SCOPE', 'Y_PARENT', 'Y_STAMP', 'Y_HN',
         'Y_NODES', 'Y_LEVELS', 'Y_LIFE', 'Y_LOGCAP', 'Y_NLOG', 'Y_ROOM', 'Y_STEP', 'Y_MEMAT', 'Y_AGEMEM',
         'Y_REFAGE', 'Y_REFDIST', 'Y_REFZONE', 'Y_FOUND', 'Y_MORE', 'O_TI', 'O_RI', 'O_Q', 'O_LORD', 'O_LV',
         'O_DI', 'O_CI', 'O_H', 'O_ZN', 'O_LOG', 'OF_TF', 'OF_RF', 'OF_LT', 'OF_D', 'OF_FR', 'OF_DF', 'OF_CT',
         'OF_ND', 'OF_LOG'),
    'SF':
        ('Z_DELIV', 'Z_WORK', 'Z_STOPT', 'Z_MEANIO', 'Z_MCOST', 'Z_ACOST', 'Z_OVER', 'Z_STEPT'),
    'I':
        ('H_N', 'H_L', 'H_G', 'H_P', 'H_INSTANT', 'H_SLEEPS', 'H_WIDE_SLEEPERS', 'H_ATTEMPTS', 'H_FAILED',
         'H_DEAD', 'H_GROUP', 'H_IMB', 'H_BUSIEST', 'H_NOUT', 'O_BUSY', 'O_FAILED', 'O_DORMANT', 'O_BUSYOK',
         'O_LOCAL', 'O_TOTALN', 'O_IMB', 'O_HASWIDE', 'O_PD', 'O_NPD', 'O_GOF', 'O_SIZES', 'O_NGROUPS',
         'O_SPAN', 'O_WIDE', 'O_OUTCPU', 'O_NEWIDLE', 'OF_CUR', 'OF_AVG', 'OF_TCK', 'OF_TAT', 'OF_LAST',
         'OF_IVL', 'OF_BF', 'OF_MAXI', 'OF_OUTAT', 'O_SPANL', 'O_SPANN', 'O_WIDEL', 'O_WIDEN'),
    'F':
        ('B_TICK',),
}
