"""The pools' scheduling rules, compiled with numba (the one implementation): round-robin run
queues, context switches and the jobs' three phases, every CPU timer in one compiled calendar.

Time is in the paper's abstract units. A job arrives, its master thread runs INIT in the pool with
the fewest active threads (running or queued; the lowest-numbered on a tie), which becomes its
home pool. When INIT ends the policy places the PARA threads (in Python, ``PoolSystem.fork``); the
master sleeps (it is not an active thread) until the last of them ends, then runs FINAL in its
home pool.

Scheduling in a pool: a new thread takes an idle processor of its pool (the lowest-numbered)
or waits at the tail of the pool's queue. A thread runs for a slice of ``time_slice``; at its
end, if the queue is empty the thread goes on (no switch), otherwise it goes to the tail and
the head runs. A finished thread's processor takes the head of the queue or goes idle. Every
dispatch of a thread onto a processor (a context switch) first costs the processor r (p - p0)
(when p > p0) for the run queue, plus c to load the cache, or t c when the processor last ran a
thread of the same job; the thread's slice starts after it (section 3.3; the PARA threads'
demand inflation is the placement's, in Python).

A CPU has one timer, at the end of its thread's work or, while threads wait in its pool, at the
end of the current slice if that is earlier: a slice ending with nobody waiting changes nothing,
so it is not simulated (lazy; ``S[H_LAZY] = 0`` fires every slice end). Slices of a thread that
runs on without a switch end every ``time_slice`` from when its work began on the CPU. Each
timer is keyed as SimPy would key it: its time, SimPy's NORMAL priority and an insertion number
taken from SimPy's counter (handed in and back in ``S[H_EID]``) when it is set. A CPU has at most
one timer, so the calendar is a scan of the CPUs for the least key.

State: ``S`` (int64) and ``SF`` (float64) hold a header and, per CPU and per pool, fixed blocks;
threads and jobs are rows of ``TI``/``TF`` and ``JI``/``JF``, which Python grows. A thread's row
is on its pool's queue or on the free list through ``T_NEXT``. The placement of a job's PARA
threads stays in Python (the policy's ``place`` and the draws of ``thread_demands``): ``drain``
returns when a master thread ends INIT, with the job in ``S[H_NEED]``, and :func:`fork` queues
the threads Python made.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python (for a debugger, and for mutation testing).
A dispatch and a thread's end are logged when the system is made with room for a log (``H_LOGCAP``),
and ``S[H_STEP]`` makes ``drain`` return after each timer: what the scripted scenarios of
tests/test_pools_model.py read.
"""

from __future__ import annotations

import math

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources

EPS = 1e-9
NORMAL = C.NORMAL            # SimPy's priority of a timer
INIT, PARA, FINAL = 0, 1, 2

# the header of S
(H_EID, H_FIRED, H_STOP, H_STOPE, H_LEFT, H_NSAMPLE, H_BUSY, H_SWITCHES, H_FREE, H_NEED, H_P, H_NPOOLS,
 H_PSIZE, H_LAZY, H_NDONE, H_SERIAL, H_STEP, H_LOGCAP, H_NLOG) = range(19)
H_SIZE = 19
# per CPU (from H_SIZE): the thread on it (-1: none), the job it last ran (-1: none), its timer's
# insertion number (-1: no timer), idle (1) or not
C_ON, C_LAST, C_EID, C_IDLE = range(4)
C_COLS = 4
# per pool (after the CPUs): active threads, queue head and tail (-1: none), queue length, idle CPUs
Q_ACTIVE, Q_HEAD, Q_TAIL, Q_LEN, Q_NIDLE = range(5)
Q_COLS = 5
# the header of SF
F_AREA, F_AREAT, F_STOPT, F_SLICE, F_CONT, F_CACHE, F_SAME, F_FINAL, F_INIT, F_NOW = range(10)
F_SIZE = 10
# per CPU (from F_SIZE): when the running thread's work began, the timer's due time (timer_at,
# inf: none) and its key's time
CF_START, CF_AT, CF_KEY = range(3)
CF_COLS = 3
# per thread (rows of TI; TF holds the work left): its serial number counts the threads made
T_POOL, T_JOB, T_MASTER, T_NEXT, T_SERIAL = range(5)
T_COLS = 5
# per job (rows of JI; JF holds the time its FINAL phase ended)
J_PHASE, J_HOME, J_RUNNING, J_DONE = range(4)
J_COLS = 4
# the log (after the pools in S, after the CPUs in SF), one row per dispatch or thread's end
DISPATCH, END = 0, 1
L_KIND, L_CPU, L_SERIAL, L_JOB, L_MASTER = range(5)
L_COLS = 5
LF_TIME, LF_START = range(2)
LF_COLS = 2


def sizes(P, npools, log):
    """Lengths of S and SF for P CPUs in ``npools`` pools and a log of ``log`` rows."""
    return H_SIZE + P * C_COLS + npools * Q_COLS + log * L_COLS, F_SIZE + P * CF_COLS + log * LF_COLS


def _log(kind, cpu, t, now, S, SF, TI):
    """A row of the log (counted beyond its room, so a full log is seen)."""
    n = S[H_NLOG]
    S[H_NLOG] = n + 1
    if n >= S[H_LOGCAP]:
        return
    li = H_SIZE + S[H_P] * C_COLS + S[H_NPOOLS] * Q_COLS + n * L_COLS
    S[li + L_KIND], S[li + L_CPU], S[li + L_SERIAL] = kind, cpu, TI[t, T_SERIAL]
    S[li + L_JOB], S[li + L_MASTER] = TI[t, T_JOB], TI[t, T_MASTER]
    lf = F_SIZE + S[H_P] * CF_COLS + n * LF_COLS
    SF[lf + LF_TIME], SF[lf + LF_START] = now, SF[_fcpu(cpu) + CF_START]


def _cpu(cpu):
    return H_SIZE + cpu * C_COLS


def _pool(q, S):
    return H_SIZE + S[H_P] * C_COLS + q * Q_COLS


def _fcpu(cpu):
    return F_SIZE + cpu * CF_COLS


# -- queues and the free list --------------------------------------------------------------------
def _append(q, t, S, TI):
    o = _pool(q, S)
    TI[t, T_NEXT] = -1
    if S[o + Q_LEN] == 0:
        S[o + Q_HEAD] = t
    else:
        TI[S[o + Q_TAIL], T_NEXT] = t
    S[o + Q_TAIL] = t
    S[o + Q_LEN] += 1


def _popleft(q, S, TI):
    o = _pool(q, S)
    t = S[o + Q_HEAD]
    S[o + Q_HEAD] = TI[t, T_NEXT]
    S[o + Q_LEN] -= 1
    if S[o + Q_LEN] == 0:
        S[o + Q_TAIL] = -1
    return t


def _new_thread(job, left, pool, master, S, TI, TF):
    """A thread from the free list (``Thread(job, left, pool, master)``); Python keeps it stocked."""
    t = S[H_FREE]
    S[H_FREE] = TI[t, T_NEXT]
    TI[t, T_POOL], TI[t, T_JOB], TI[t, T_MASTER], TI[t, T_NEXT] = pool, job, master, -1
    TI[t, T_SERIAL] = S[H_SERIAL]
    S[H_SERIAL] += 1
    TF[t] = left
    return t


def _free(t, S, TI):
    TI[t, T_NEXT] = S[H_FREE]
    S[H_FREE] = t


# -- the rules --------------------------------------------------------------------------------------
def _account(now, S, SF):
    """Bring the busy-processor integral up to ``now``."""
    SF[F_AREA] += S[H_BUSY] * (now - SF[F_AREAT])
    SF[F_AREAT] = now


def _arm(cpu, now, S, SF, TI, TF):
    """The CPU's timer at the end of its thread's work or, while someone waits
    in the pool (always, when not lazy), at the end of the slice if that comes first."""
    c = _cpu(cpu)
    t = S[c + C_ON]
    if t < 0:
        return
    f = _fcpu(cpu)
    start = SF[f + CF_START]
    at = start + TF[t]
    if S[H_LAZY] == 0 or S[_pool(cpu // S[H_PSIZE], S) + Q_LEN] > 0:
        k = max(1, math.ceil((now - start) / SF[F_SLICE] - EPS))
        at = min(at, start + k * SF[F_SLICE])
    if at < SF[f + CF_AT] - EPS or S[c + C_EID] < 0:
        SF[f + CF_KEY] = now + max(at - now, 0.0)   # engine.call(max(at - now, 0), ...): SimPy's now + delay
        S[c + C_EID] = S[H_EID]
        S[H_EID] += 1
        SF[f + CF_AT] = at


def _dispatch(cpu, t, now, S, SF, TI, TF):
    """Context switch to thread ``t`` on ``cpu``: run-queue contention plus cache loading (a
    fraction when the CPU last ran the same job's thread); its work starts after the switch."""
    c, f = _cpu(cpu), _fcpu(cpu)
    S[H_SWITCHES] += 1
    same = S[c + C_LAST] == TI[t, T_JOB]
    SF[f + CF_START] = now + (SF[F_CONT] + (SF[F_SAME] if same else SF[F_CACHE]))
    S[c + C_LAST] = TI[t, T_JOB]
    S[c + C_ON] = t
    SF[f + CF_AT] = math.inf
    if S[H_LOGCAP] > 0:
        _log(DISPATCH, cpu, t, now, S, SF, TI)
    _arm(cpu, now, S, SF, TI, TF)


def _enqueue(t, now, S, SF, TI, TF):
    """A ready thread joins its pool: an idle processor (the lowest-numbered) runs the thread at once, else
    it waits and the pool's running threads stop at their next slice end."""
    q = TI[t, T_POOL]
    o = _pool(q, S)
    S[o + Q_ACTIVE] += 1
    p = S[H_PSIZE]
    if S[o + Q_NIDLE] > 0:
        _account(now, S, SF)
        S[H_BUSY] += 1
        cpu = q * p
        while S[_cpu(cpu) + C_IDLE] == 0:
            cpu += 1
        S[_cpu(cpu) + C_IDLE] = 0
        S[o + Q_NIDLE] -= 1
        _dispatch(cpu, t, now, S, SF, TI, TF)
        return
    _append(q, t, S, TI)
    if S[o + Q_LEN] == 1 and S[H_LAZY] == 1:
        for cpu in range(q * p, (q + 1) * p):
            _arm(cpu, now, S, SF, TI, TF)


def _finished(t, now, S, SF, TI, TF, JI, JF):
    """Thread ``t``'s work is done (its row freed): the next phase of the thread's job; a master
    ending INIT asks Python for the fork (``S[H_NEED]``)."""
    j, master = TI[t, T_JOB], TI[t, T_MASTER]
    _free(t, S, TI)
    if master == 0:
        JI[j, J_RUNNING] -= 1
        if JI[j, J_RUNNING] == 0:
            JI[j, J_PHASE] = FINAL
            u = _new_thread(j, SF[F_FINAL], JI[j, J_HOME], 1, S, TI, TF)
            _enqueue(u, now, S, SF, TI, TF)
    elif JI[j, J_PHASE] == INIT:
        S[H_NEED] = j
    else:
        JF[j] = now
        JI[j, J_DONE] = S[H_NDONE]
        S[H_NDONE] += 1
        if j < S[H_NSAMPLE]:           # the run's ``done``: its last sampled job stops the engine
            S[H_LEFT] -= 1
            if S[H_LEFT] == 0:
                S[H_STOP] = 1
                S[H_STOPE] = S[H_EID]
                S[H_EID] += 1
                SF[F_STOPT] = now + 0.0


def _slice_end(cpu, now, S, SF, TI, TF, JI, JF):
    """The CPU's timer: its thread's work is done, or a slice ended."""
    c, f = _cpu(cpu), _fcpu(cpu)
    S[c + C_EID] = -1
    SF[f + CF_AT] = math.inf
    t = S[c + C_ON]
    start = SF[f + CF_START]
    done = now - start
    q = cpu // S[H_PSIZE]
    o = _pool(q, S)
    if done >= TF[t] - EPS:
        if S[H_LOGCAP] > 0:
            _log(END, cpu, t, now, S, SF, TI)
        S[o + Q_ACTIVE] -= 1
        S[c + C_ON] = -1
        if S[o + Q_LEN] > 0:
            _dispatch(cpu, _popleft(q, S, TI), now, S, SF, TI, TF)
        else:
            _account(now, S, SF)
            S[H_BUSY] -= 1
            S[c + C_IDLE] = 1
            S[o + Q_NIDLE] += 1
        _finished(t, now, S, SF, TI, TF, JI, JF)
        return
    if S[o + Q_LEN] > 0:              # preempted: to the tail, the head runs
        TF[t] -= done
        _append(q, t, S, TI)
        _dispatch(cpu, _popleft(q, S, TI), now, S, SF, TI, TF)
    else:                              # nobody waits: the thread goes on, no switch
        TF[t] -= done
        SF[f + CF_START] = now
        _arm(cpu, now, S, SF, TI, TF)


# -- entry points ------------------------------------------------------------------------------------
def arrive(j, now, S, SF, TI, TF, JI, JF):
    """A job arrives: job ``j``'s master starts INIT in the pool with the fewest active
    threads (the lowest-numbered on a tie); returns that home pool."""
    home = 0
    for q in range(1, S[H_NPOOLS]):
        if S[_pool(q, S) + Q_ACTIVE] < S[_pool(home, S) + Q_ACTIVE]:
            home = q
    JI[j, J_PHASE], JI[j, J_HOME], JI[j, J_RUNNING], JI[j, J_DONE] = INIT, home, 0, -1
    JF[j] = -1.0
    t = _new_thread(j, SF[F_INIT], home, 1, S, TI, TF)
    _enqueue(t, now, S, SF, TI, TF)
    return home


def fork(j, pools, lefts, now, S, SF, TI, TF, JI, JF):
    """The end of ``PoolSystem.fork``: job ``j``'s PARA threads (``pools[i]``, work ``lefts[i]``, as
    Python placed and drew them) queued in order."""
    JI[j, J_PHASE], JI[j, J_RUNNING] = PARA, len(pools)
    S[H_NEED] = -1
    for i in range(len(pools)):
        t = _new_thread(j, lefts[i], pools[i], 0, S, TI, TF)
        _enqueue(t, now, S, SF, TI, TF)


def enqueue(j, left, pool, master, now, S, SF, TI, TF, JI, JF):
    """A thread of job ``j`` made in Python (scripted scenarios) joins its pool; returns its serial."""
    t = _new_thread(j, left, pool, master, S, TI, TF)
    _enqueue(t, now, S, SF, TI, TF)
    return TI[t, T_SERIAL]


def area(now, S, SF):
    """The busy-processor integral up to ``now``."""
    _account(now, S, SF)
    return SF[F_AREA]


def head(S, SF):
    """The CPU whose timer has the least key (-1: no timer)."""
    best = -1
    for cpu in range(S[H_P]):
        e = S[_cpu(cpu) + C_EID]
        if e < 0:
            continue
        if best < 0:
            best = cpu
            continue
        if C.key_before(SF[_fcpu(cpu) + CF_KEY], NORMAL, e, SF[_fcpu(best) + CF_KEY], NORMAL, S[_cpu(best) + C_EID]):
            best = cpu
    return best


def drain(stop_t, stop_p, stop_e, S, SF, TI, TF, JI, JF):
    """Fire the CPUs' timers keyed before ``(stop_t, stop_p, stop_e)`` (SimPy's next event) in key
    order, counting them in ``S[H_FIRED]``; a stop of the run (the last sampled job's end) lowers
    that bound to the stop's key. Returns early when a job needs its fork (``S[H_NEED]``), and
    after each timer when ``S[H_STEP]`` is set."""
    S[H_FIRED] = 0
    if S[H_STOP] != 0:
        stop_t, stop_p, stop_e = SF[F_STOPT], NORMAL, S[H_STOPE]
    while True:
        cpu = head(S, SF)
        if cpu < 0:
            return
        t = SF[_fcpu(cpu) + CF_KEY]
        if not C.key_before(t, NORMAL, S[_cpu(cpu) + C_EID], stop_t, stop_p, stop_e):
            return
        S[H_FIRED] += 1
        SF[F_NOW] = t
        _slice_end(cpu, t, S, SF, TI, TF, JI, JF)
        if S[H_NEED] >= 0 or S[H_STEP]:
            return
        if S[H_STOP] == 1:
            stop_t, stop_p, stop_e = SF[F_STOPT], NORMAL, S[H_STOPE]


jit_module(globals(), nopython=True, cache=True)
