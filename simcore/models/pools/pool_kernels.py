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
so it is not simulated (lazy; ``S[Y_LAZY] = 0`` fires every slice end). Slices of a thread that
runs on without a switch end every ``time_slice`` from when its work began on the CPU. Each
timer is keyed as SimPy would key it: its time, SimPy's NORMAL priority and an insertion number
taken from SimPy's counter (handed in and back in ``S[Y_EID]``) when it is set. A CPU has at most
one timer, so the calendar is a scan of the CPUs for the least key.

State: ``S`` (int64) and ``SF`` (float64) hold a header and blocks per CPU, per pool and per
row of the log; threads and jobs are rows of ``TI``/``TF`` and ``JI``/``JF``, which Python grows:
every slot named in ``layout.yaml`` (the generated ``slots_kernels``, imported as ``SL``). The placement of a job's PARA
threads stays in Python (the policy's ``place`` and the draws of ``thread_demands``): ``drain``
returns when a master thread ends INIT, with the job in ``S[Y_NEED]``, and :func:`fork` queues
the threads Python made.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python (for a debugger, and for mutation testing).
A dispatch and a thread's end are logged when the system is made with room for a log (``Y_LOGCAP``),
and ``S[Y_STEP]`` makes ``drain`` return after each timer: what the scripted scenarios of
tests/test_pools_model.py read.
"""

from __future__ import annotations

import math

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.pools import slots_kernels as SL

EPS = 1e-9
NORMAL = C.NORMAL            # SimPy's priority of a timer
INIT, PARA, FINAL = 0, 1, 2

DISPATCH, END = 0, 1         # the kinds of a row of the log (LG_KIND)


def _log(kind, cpu, t, now, S, SF, TI):
    """A row of the log (counted beyond its room, so a full log is seen)."""
    n = S[SL.Y_NLOG]
    S[SL.Y_NLOG] = n + 1
    if n >= S[SL.Y_LOGCAP]:
        return
    li, lf = SL.log_row(n, S), SL.log_frow(n, S)
    S[li + SL.LG_KIND], S[li + SL.LG_CPU], S[li + SL.LG_SERIAL] = kind, cpu, TI[t, SL.TH_SERIAL]
    S[li + SL.LG_JOB], S[li + SL.LG_MASTER] = TI[t, SL.TH_JOB], TI[t, SL.TH_MASTER]
    SF[lf + SL.LGF_TIME], SF[lf + SL.LGF_START] = now, SF[SL.cpu_frow(cpu, S) + SL.RF_START]


# -- queues and the free list --------------------------------------------------------------------
def _append(q, t, S, TI):
    o = SL.pool(q, S)
    TI[t, SL.TH_NEXT] = -1
    if S[o + SL.PQ_LEN] == 0:
        S[o + SL.PQ_HEAD] = t
    else:
        TI[S[o + SL.PQ_TAIL], SL.TH_NEXT] = t
    S[o + SL.PQ_TAIL] = t
    S[o + SL.PQ_LEN] += 1


def _popleft(q, S, TI):
    o = SL.pool(q, S)
    t = S[o + SL.PQ_HEAD]
    S[o + SL.PQ_HEAD] = TI[t, SL.TH_NEXT]
    S[o + SL.PQ_LEN] -= 1
    if S[o + SL.PQ_LEN] == 0:
        S[o + SL.PQ_TAIL] = -1
    return t


def _new_thread(job, left, pool, master, S, TI, TF):
    """A thread from the free list (``Thread(job, left, pool, master)``); Python keeps it stocked."""
    t = S[SL.Y_FREE]
    S[SL.Y_FREE] = TI[t, SL.TH_NEXT]
    TI[t, SL.TH_POOL], TI[t, SL.TH_JOB], TI[t, SL.TH_MASTER], TI[t, SL.TH_NEXT] = pool, job, master, -1
    TI[t, SL.TH_SERIAL] = S[SL.Y_SERIAL]
    S[SL.Y_SERIAL] += 1
    TF[t] = left
    return t


def _free(t, S, TI):
    TI[t, SL.TH_NEXT] = S[SL.Y_FREE]
    S[SL.Y_FREE] = t


# -- the rules --------------------------------------------------------------------------------------
def _account(now, S, SF):
    """Bring the busy-processor integral up to ``now``."""
    SF[SL.Z_AREA] += S[SL.Y_BUSY] * (now - SF[SL.Z_AREAT])
    SF[SL.Z_AREAT] = now


def _arm(cpu, now, S, SF, TI, TF):
    """The CPU's timer at the end of its thread's work or, while someone waits
    in the pool (always, when not lazy), at the end of the slice if that comes first."""
    c = SL.cpu(cpu, S)
    t = S[c + SL.R_ON]
    if t < 0:
        return
    f = SL.cpu_frow(cpu, S)
    start = SF[f + SL.RF_START]
    at = start + TF[t]
    if S[SL.Y_LAZY] == 0 or S[SL.pool(cpu // S[SL.Y_PSIZE], S) + SL.PQ_LEN] > 0:
        k = max(1, math.ceil((now - start) / SF[SL.Z_SLICE] - EPS))
        at = min(at, start + k * SF[SL.Z_SLICE])
    if at < SF[f + SL.RF_AT] - EPS or S[c + SL.R_EID] < 0:
        SF[f + SL.RF_KEY] = now + max(at - now, 0.0)   # engine.call(max(at - now, 0), ...): SimPy's now + delay
        S[c + SL.R_EID] = S[SL.Y_EID]
        S[SL.Y_EID] += 1
        SF[f + SL.RF_AT] = at


def _dispatch(cpu, t, now, S, SF, TI, TF):
    """Context switch to thread ``t`` on ``cpu``: run-queue contention plus cache loading (a
    fraction when the CPU last ran the same job's thread); its work starts after the switch."""
    c, f = SL.cpu(cpu, S), SL.cpu_frow(cpu, S)
    S[SL.Y_SWITCHES] += 1
    same = S[c + SL.R_LAST] == TI[t, SL.TH_JOB]
    SF[f + SL.RF_START] = now + (SF[SL.Z_CONT] + (SF[SL.Z_SAME] if same else SF[SL.Z_CACHE]))
    S[c + SL.R_LAST] = TI[t, SL.TH_JOB]
    S[c + SL.R_ON] = t
    SF[f + SL.RF_AT] = math.inf
    if S[SL.Y_LOGCAP] > 0:
        _log(DISPATCH, cpu, t, now, S, SF, TI)
    _arm(cpu, now, S, SF, TI, TF)


def _enqueue(t, now, S, SF, TI, TF):
    """A ready thread joins its pool: an idle processor (the lowest-numbered) runs the thread at once, else
    it waits and the pool's running threads stop at their next slice end."""
    q = TI[t, SL.TH_POOL]
    o = SL.pool(q, S)
    S[o + SL.PQ_ACTIVE] += 1
    p = S[SL.Y_PSIZE]
    if S[o + SL.PQ_NIDLE] > 0:
        _account(now, S, SF)
        S[SL.Y_BUSY] += 1
        cpu = q * p
        while S[SL.cpu(cpu, S) + SL.R_IDLE] == 0:
            cpu += 1
        S[SL.cpu(cpu, S) + SL.R_IDLE] = 0
        S[o + SL.PQ_NIDLE] -= 1
        _dispatch(cpu, t, now, S, SF, TI, TF)
        return
    _append(q, t, S, TI)
    if S[o + SL.PQ_LEN] == 1 and S[SL.Y_LAZY] == 1:
        for cpu in range(q * p, (q + 1) * p):
            _arm(cpu, now, S, SF, TI, TF)


def _finished(t, now, S, SF, TI, TF, JI, JF):
    """Thread ``t``'s work is done (its row freed): the next phase of the thread's job; a master
    ending INIT asks Python for the fork (``S[SL.Y_NEED]``)."""
    j, master = TI[t, SL.TH_JOB], TI[t, SL.TH_MASTER]
    _free(t, S, TI)
    if master == 0:
        JI[j, SL.J_RUNNING] -= 1
        if JI[j, SL.J_RUNNING] == 0:
            JI[j, SL.J_PHASE] = FINAL
            u = _new_thread(j, SF[SL.Z_FINAL], JI[j, SL.J_HOME], 1, S, TI, TF)
            _enqueue(u, now, S, SF, TI, TF)
    elif JI[j, SL.J_PHASE] == INIT:
        S[SL.Y_NEED] = j
    else:
        JF[j] = now
        JI[j, SL.J_DONE] = S[SL.Y_NDONE]
        S[SL.Y_NDONE] += 1
        if j < S[SL.Y_NSAMPLE]:           # the run's ``done``: its last sampled job stops the engine
            S[SL.Y_LEFT] -= 1
            if S[SL.Y_LEFT] == 0:
                S[SL.Y_STOP] = 1
                S[SL.Y_STOPE] = S[SL.Y_EID]
                S[SL.Y_EID] += 1
                SF[SL.Z_STOPT] = now + 0.0


def _slice_end(cpu, now, S, SF, TI, TF, JI, JF):
    """The CPU's timer: its thread's work is done, or a slice ended."""
    c, f = SL.cpu(cpu, S), SL.cpu_frow(cpu, S)
    S[c + SL.R_EID] = -1
    SF[f + SL.RF_AT] = math.inf
    t = S[c + SL.R_ON]
    start = SF[f + SL.RF_START]
    done = now - start
    q = cpu // S[SL.Y_PSIZE]
    o = SL.pool(q, S)
    if done >= TF[t] - EPS:
        if S[SL.Y_LOGCAP] > 0:
            _log(END, cpu, t, now, S, SF, TI)
        S[o + SL.PQ_ACTIVE] -= 1
        S[c + SL.R_ON] = -1
        if S[o + SL.PQ_LEN] > 0:
            _dispatch(cpu, _popleft(q, S, TI), now, S, SF, TI, TF)
        else:
            _account(now, S, SF)
            S[SL.Y_BUSY] -= 1
            S[c + SL.R_IDLE] = 1
            S[o + SL.PQ_NIDLE] += 1
        _finished(t, now, S, SF, TI, TF, JI, JF)
        return
    if S[o + SL.PQ_LEN] > 0:              # preempted: to the tail, the head runs
        TF[t] -= done
        _append(q, t, S, TI)
        _dispatch(cpu, _popleft(q, S, TI), now, S, SF, TI, TF)
    else:                              # nobody waits: the thread goes on, no switch
        TF[t] -= done
        SF[f + SL.RF_START] = now
        _arm(cpu, now, S, SF, TI, TF)


# -- entry points ------------------------------------------------------------------------------------
def arrive(j, now, S, SF, TI, TF, JI, JF):
    """A job arrives: job ``j``'s master starts INIT in the pool with the fewest active
    threads (the lowest-numbered on a tie); returns that home pool."""
    home = 0
    for q in range(1, S[SL.Y_NPOOLS]):
        if S[SL.pool(q, S) + SL.PQ_ACTIVE] < S[SL.pool(home, S) + SL.PQ_ACTIVE]:
            home = q
    JI[j, SL.J_PHASE], JI[j, SL.J_HOME], JI[j, SL.J_RUNNING], JI[j, SL.J_DONE] = INIT, home, 0, -1
    JF[j] = -1.0
    t = _new_thread(j, SF[SL.Z_INIT], home, 1, S, TI, TF)
    _enqueue(t, now, S, SF, TI, TF)
    return home


def fork(j, pools, lefts, now, S, SF, TI, TF, JI, JF):
    """The end of ``PoolSystem.fork``: job ``j``'s PARA threads (``pools[i]``, work ``lefts[i]``, as
    Python placed and drew them) queued in order."""
    JI[j, SL.J_PHASE], JI[j, SL.J_RUNNING] = PARA, len(pools)
    S[SL.Y_NEED] = -1
    for i in range(len(pools)):
        t = _new_thread(j, lefts[i], pools[i], 0, S, TI, TF)
        _enqueue(t, now, S, SF, TI, TF)


def enqueue(j, left, pool, master, now, S, SF, TI, TF, JI, JF):
    """A thread of job ``j`` made in Python (scripted scenarios) joins its pool; returns its serial."""
    t = _new_thread(j, left, pool, master, S, TI, TF)
    _enqueue(t, now, S, SF, TI, TF)
    return TI[t, SL.TH_SERIAL]


def area(now, S, SF):
    """The busy-processor integral up to ``now``."""
    _account(now, S, SF)
    return SF[SL.Z_AREA]


def head(S, SF):
    """The CPU whose timer has the least key (-1: no timer)."""
    best = -1
    for cpu in range(S[SL.Y_P]):
        e = S[SL.cpu(cpu, S) + SL.R_EID]
        if e < 0:
            continue
        if best < 0:
            best = cpu
            continue
        at, best_at = SF[SL.cpu_frow(cpu, S) + SL.RF_KEY], SF[SL.cpu_frow(best, S) + SL.RF_KEY]
        if C.key_before(at, NORMAL, e, best_at, NORMAL, S[SL.cpu(best, S) + SL.R_EID]):
            best = cpu
    return best


def drain(stop_t, stop_p, stop_e, S, SF, TI, TF, JI, JF):
    """Fire the CPUs' timers keyed before ``(stop_t, stop_p, stop_e)`` (SimPy's next event) in key
    order, counting them in ``S[SL.Y_FIRED]``; a stop of the run (the last sampled job's end) lowers
    that bound to the stop's key. Returns early when a job needs its fork (``S[SL.Y_NEED]``), and
    after each timer when ``S[SL.Y_STEP]`` is set."""
    S[SL.Y_FIRED] = 0
    if S[SL.Y_STOP] != 0:
        stop_t, stop_p, stop_e = SF[SL.Z_STOPT], NORMAL, S[SL.Y_STOPE]
    while True:
        cpu = head(S, SF)
        if cpu < 0:
            return
        t = SF[SL.cpu_frow(cpu, S) + SL.RF_KEY]
        if not C.key_before(t, NORMAL, S[SL.cpu(cpu, S) + SL.R_EID], stop_t, stop_p, stop_e):
            return
        S[SL.Y_FIRED] += 1
        SF[SL.Z_NOW] = t
        _slice_end(cpu, t, S, SF, TI, TF, JI, JF)
        if S[SL.Y_NEED] >= 0 or S[SL.Y_STEP]:
            return
        if S[SL.Y_STOP] == 1:
            stop_t, stop_p, stop_e = SF[SL.Z_STOPT], NORMAL, S[SL.Y_STOPE]


jit_module(globals(), nopython=True, cache=True)
