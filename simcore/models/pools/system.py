"""The machine of P processors in pools, run by the compiled rules of :mod:`pool_kernels`.

The scheduling rules (run queues, slices, context switches, the jobs' phases) live once, in
``pool_kernels.py``, whose docstring states them. What stays in Python is what only Python does:
the policy's placement of a job's PARA threads and their demands (``PoolSystem.fork``), the
arrivals, and read-only views of the state (``pools``, ``on_cpu``, ``log``) for the policies,
the monitors and the scripted scenarios.

SimPy stays the calendar that orders the run: the arrivals are SimPy events, and so is a *proxy*
event at the key of the compiled calendar's first timer (``ProxyCalendar``). When a proxy fires,
the kernels fire every timer keyed before SimPy's next event, in key order; they stop when a job
ends INIT, and Python places its PARA threads and hands them back.
"""

from __future__ import annotations

import math
from heapq import heappop

import numpy as np
from simpy.events import NORMAL

from simcore.core.engine import END, ProxyCalendar
from simcore.models.pools import pool_kernels as PK
from simcore.models.pools import slots_kernels as SL
from simcore.models.pools.workload import Job, thread_demands

INIT, PARA, FINAL = PK.INIT, PK.PARA, PK.FINAL
EPS = PK.EPS


class Thread:
    """A thread a scripted scenario makes: its job, work left, pool, whether it is the master."""

    __slots__ = ("job", "left", "pool", "master")

    def __init__(self, job: "JobState", left: float, pool: int, master: bool):
        self.job, self.left, self.pool, self.master = job, left, pool, master


class JobState:
    """A job as it runs (the compiled state is copied back by ``PoolSystem.close``)."""

    __slots__ = ("job", "phase", "home", "a", "k", "running", "done_at")

    def __init__(self, job: Job):
        self.job = job
        self.phase = INIT
        self.home = -1
        self.a = 0            # actual parallelism
        self.k = 0            # pools its PARA threads use
        self.running = 0      # PARA threads not yet finished
        self.done_at = -1.0


class ThreadView:
    """A thread of the compiled state (row ``row``): its job, work left, pool, master, serial."""

    __slots__ = ("system", "row")

    def __init__(self, system: "PoolSystem", row: int):
        self.system, self.row = system, row

    job = property(lambda self: self.system._states[int(self.system.TI[self.row, SL.TH_JOB])])
    left = property(lambda self: float(self.system.TF[self.row]))
    pool = property(lambda self: int(self.system.TI[self.row, SL.TH_POOL]))
    master = property(lambda self: bool(self.system.TI[self.row, SL.TH_MASTER]))
    serial = property(lambda self: int(self.system.TI[self.row, SL.TH_SERIAL]))


class PoolView:
    """What a policy, a monitor or a test reads of a pool: its processors, active threads
    (running or queued), idle processors (lowest first) and queue (head first)."""

    __slots__ = ("system", "index", "at", "procs")

    def __init__(self, system: "PoolSystem", index: int, at: int):
        self.system, self.index, self.at = system, index, at
        self.procs = list(range(index * system.p, (index + 1) * system.p))

    @property
    def active(self) -> int:
        return int(self.system.S[self.at + SL.PQ_ACTIVE])

    @property
    def waiting(self) -> int:
        return int(self.system.S[self.at + SL.PQ_LEN])

    @property
    def n_idle(self) -> int:
        return int(self.system.S[self.at + SL.PQ_NIDLE])

    @property
    def idle(self) -> list[int]:
        S = self.system.S
        return [c for c in self.procs if S[SL.cpu(c, S) + SL.R_IDLE]]

    @property
    def queue(self) -> list[ThreadView]:
        out, t = [], int(self.system.S[self.at + SL.PQ_HEAD])
        for _ in range(self.waiting):
            out.append(ThreadView(self.system, t))
            t = int(self.system.TI[t, SL.TH_NEXT])
        return out


class PoolSystem(ProxyCalendar):
    """The machine of P processors in pools of ``pool_size``, run by ``policy``.

    ``on_done(job_state)`` is called, at the end of the run, for each job whose FINAL phase
    ended, in the order they ended. ``log``: room for that many rows of dispatches and threads'
    ends (``log_rows``); ``check(system)``, if set, is called after every event."""

    MODEL = "pools"
    lazy = True       # False: every slice end is fired (the same run, more events)

    def __init__(self, engine, params: dict, policy, on_done, log: int = 0):
        self.engine, self.params, self.policy, self.on_done = engine, params, policy, on_done
        P = params["processors"]
        self.p = P if params["pool_size"] == "all" else params["pool_size"]
        npools = P // self.p
        excess = max(0, self.p - params["pool_threshold"])
        self.in_pool = params["in_pool_factor"] * excess
        self.check = None
        self.S, self.SF = self._buffers_for(params, npools, excess, log)
        self.TI, self.TF = np.zeros((0, SL.TH_COLS), dtype=np.int64), np.zeros(0)
        self.JI, self.JF = np.zeros((0, SL.J_COLS), dtype=np.int64), np.zeros(0)
        self.pools = [PoolView(self, q, int(SL.pool(q, self.S))) for q in range(npools)]
        self._states: list[JobState] = []
        self._rows: dict[int, int] = {}      # id of a job's state -> its row
        self._start_proxies()

    def _buffers_for(self, params: dict, npools: int, excess: int, log: int) -> tuple:
        P = params["processors"]
        head = np.zeros(SL.Y_SIZE, dtype=np.int64)
        ssize, fsize = SL.layout(P, npools, log, head)
        S, SF = np.zeros(ssize, dtype=np.int64), np.zeros(fsize)
        S[:SL.Y_SIZE] = head
        S[SL.Y_NSAMPLE] = S[SL.Y_LEFT] = params["jobs"]
        S[SL.Y_NEED], S[SL.Y_P], S[SL.Y_NPOOLS], S[SL.Y_PSIZE], S[SL.Y_LAZY] = -1, P, npools, self.p, int(self.lazy)
        S[SL.Y_FREE], S[SL.Y_LOGCAP] = -1, log
        for cpu in range(P):
            at = SL.cpu(cpu, S)
            S[at + SL.R_ON], S[at + SL.R_LAST], S[at + SL.R_EID], S[at + SL.R_IDLE] = -1, -1, -1, 1
            SF[SL.cpu_frow(cpu, S) + SL.RF_AT] = math.inf
        for q in range(npools):
            at = SL.pool(q, S)
            S[at + SL.PQ_HEAD], S[at + SL.PQ_TAIL], S[at + SL.PQ_NIDLE] = -1, -1, self.p
        SF[SL.Z_SLICE], SF[SL.Z_CONT] = float(params["time_slice"]), params["contention_factor"] * excess
        SF[SL.Z_CACHE] = float(params["cache_cost"])
        SF[SL.Z_SAME] = params["cache_fraction"] * SF[SL.Z_CACHE]
        SF[SL.Z_FINAL], SF[SL.Z_INIT] = float(params["final_demand"]), float(params["init_demand"])
        return S, SF

    # -- what the state shows ------------------------------------------------------------------------
    def set_lazy(self, lazy: bool) -> None:
        """Fire only the slice ends someone waits for (True), or every one."""
        self.S[SL.Y_LAZY] = int(lazy)

    @property
    def on_cpu(self) -> list[ThreadView | None]:
        """Each processor's thread (None: idle)."""
        on = [int(self.S[SL.cpu(c, self.S) + SL.R_ON]) for c in range(int(self.S[SL.Y_P]))]
        return [ThreadView(self, t) if t >= 0 else None for t in on]

    busy = property(lambda self: int(self.S[SL.Y_BUSY]), doc="processors busy now")
    switches = property(lambda self: int(self.S[SL.Y_SWITCHES]), doc="context switches so far")
    busy_area = property(lambda self: float(self.SF[SL.Z_AREA]), doc="the busy integral up to its last update")

    def area(self) -> float:
        """The busy-processor integral up to now."""
        return float(PK.area(self.engine.now, self.S, self.SF))

    def log_rows(self) -> list[tuple]:
        """The log: (kind, time, cpu, thread serial, job state, master, work start) per dispatch
        (kind ``PK.DISPATCH``) or thread's end (``PK.END``), in the order they happened."""
        n, cap = int(self.S[SL.Y_NLOG]), int(self.S[SL.Y_LOGCAP])
        if n > cap:
            raise RuntimeError(f"pools model: the log holds {cap} rows and the run made {n}.")
        li, lf = int(self.S[SL.O_LG]), int(self.S[SL.OF_LG])
        L = self.S[li:li + n * SL.LG_COLS].reshape(n, SL.LG_COLS)
        LF = self.SF[lf:lf + n * SL.LGF_COLS].reshape(n, SL.LGF_COLS)
        return [(int(r[SL.LG_KIND]), float(f[SL.LGF_TIME]), int(r[SL.LG_CPU]), int(r[SL.LG_SERIAL]),
                 self._states[int(r[SL.LG_JOB])], bool(r[SL.LG_MASTER]), float(f[SL.LGF_START]))
                for r, f in zip(L, LF)]

    # -- jobs ------------------------------------------------------------------------------------------
    def arrive(self, job: Job) -> JobState:
        """A job arrives (a SimPy event): its master starts INIT in the least loaded pool."""
        state = JobState(job)
        self._room(1)
        j = self._rows[id(state)] = len(self._states)
        self._states.append(state)
        state.home = int(self._call(PK.arrive, j))
        return state

    def spanning_overhead(self, k: int) -> float:
        """s = S (k - 1) p for a job using k pools."""
        return self.params["spanning_factor"] * (k - 1) * self.p

    def placement(self, state: JobState) -> list[tuple[int, float]]:
        """The PARA threads of a job whose INIT is over, in the order they are queued: (pool, work)
        each, from the policy's a and pools and the job's draws (its phase, a, k set). A PARA
        thread's demand is inflated by (1 + w + s): in-pool w = W (p - p0) when p > p0,
        pool-spanning s = S (k - 1) p for a job whose threads use k pools (section 3.3)."""
        job = state.job
        a, counts = self.policy.place(job.d, state.home, self)
        used = [(q, n) for q, n in counts if n > 0]
        if a < 1 or sum(n for _, n in used) != a:
            raise RuntimeError(f"pools policy {self.policy.name!r} placed {counts} for a = {a}")
        state.phase, state.a, state.k, state.running = PARA, a, len(used), a
        inflation = 1.0 + self.in_pool + self.spanning_overhead(len(used))
        demands = thread_demands(self.params, job.d, a, job.u)
        pools = [q for q, n in used for _ in range(n)]
        return [(q, demands[i] * inflation) for i, q in enumerate(pools)]

    def fork(self, state: JobState) -> None:
        """INIT is over: the policy decides a and the pools; the PARA threads are queued."""
        self._fork(self._row(state), self.engine.now)
        self._after()

    def enqueue(self, thread: Thread) -> int:
        """A ready thread made in Python (scripted scenarios) joins its pool; returns its serial."""
        j = self._row(thread.job)
        self._room(1)
        return int(self._call(PK.enqueue, j, float(thread.left), thread.pool, int(thread.master)))

    def _row(self, state: JobState) -> int:
        """Job ``state``'s row, made when first seen (with its phase, home and PARA threads left)."""
        if id(state) in self._rows:
            return self._rows[id(state)]
        self._room(1)
        j = self._rows[id(state)] = len(self._states)
        self._states.append(state)
        self.JI[j] = (state.phase, state.home, state.running, -1)
        self.JF[j] = -1.0
        return j

    def _room(self, threads: int) -> None:
        """At least ``threads`` rows on the free list and a row for one more job."""
        free, t = 0, int(self.S[SL.Y_FREE])
        while t >= 0 and free < threads:
            free, t = free + 1, int(self.TI[t, SL.TH_NEXT])
        if free < threads:
            old = len(self.TF)
            new = max(2 * old, old + threads, 64)
            self.TI, self.TF = _grown(self.TI, new), _grown(self.TF, new)
            self.TI[old:, SL.TH_NEXT] = np.arange(old + 1, new + 1)
            self.TI[new - 1, SL.TH_NEXT] = self.S[SL.Y_FREE]
            self.S[SL.Y_FREE] = old
        if len(self._states) >= len(self.JF):
            new = max(2 * len(self.JF), 256)
            self.JI, self.JF = _grown(self.JI, new), _grown(self.JF, new)

    # -- the run ---------------------------------------------------------------------------------------
    def _call(self, kernel, *args):
        """A kernel call at ``engine.now``, then a proxy at the calendar's first timer."""
        out = self.handing(self.S, SL.Y_EID, kernel, *args, self.engine.now, *self._buffers())
        self._after()
        return out

    def _after(self) -> None:
        if self.check is not None:
            self.check(self)
        self._push_head()

    def _buffers(self) -> tuple:
        return self.S, self.SF, self.TI, self.TF, self.JI, self.JF

    def _on_proxy(self, _event) -> None:
        """Fire every compiled timer keyed before SimPy's next event (and before the run's stop),
        making the forks the kernels ask for; then keep a proxy at or before the first timer left.
        With ``check`` set the kernels return after each timer, and ``check`` runs."""
        now = heappop(self._proxies)[0]          # the proxy firing: SimPy's clock
        engine, S = self.engine, self.S
        engine.now = now
        queue = self._simpy_queue
        S[SL.Y_STEP] = self.check is not None
        while True:
            stop = queue[0] if queue else END
            self.handing(S, SL.Y_EID, PK.drain, stop[0], stop[1], stop[2], *self._buffers())
            engine.events += int(S[SL.Y_FIRED])
            if self.check is not None and S[SL.Y_FIRED]:
                self.check(self)
            if S[SL.Y_NEED] >= 0:
                self._fork(int(S[SL.Y_NEED]), float(self.SF[SL.Z_NOW]))
                if self.check is not None:
                    self.check(self)
            elif not (S[SL.Y_STEP] and S[SL.Y_FIRED]):
                break
        if S[SL.Y_STOP] == 1:          # the last sampled job's end: SimPy's stop event, keyed as Engine.stop's
            S[SL.Y_STOP] = 2
            self._stop_at(float(self.SF[SL.Z_STOPT]), int(S[SL.Y_STOPE]))
        self._push_head()

    def _fork(self, j: int, now: float) -> None:
        """Job ``j``'s PARA threads: placed and drawn in Python (:meth:`placement`), queued by the kernels."""
        threads = self.placement(self._states[j])
        pools = np.array([q for q, _ in threads], dtype=np.int64)
        lefts = np.array([left for _, left in threads])
        self._room(len(threads))
        self.handing(self.S, SL.Y_EID, PK.fork, j, pools, lefts, now, *self._buffers())

    def _push_head(self) -> None:
        """A proxy at the key of the first CPU timer: the pools keep one timer per CPU, found by
        a scan (``pool_kernels.head``), not a heap, so this replaces ``ProxyCalendar._push_head``."""
        cpu = PK.head(self.S, self.SF)
        if cpu >= 0:
            self._proxy_at((float(self.SF[SL.cpu_frow(cpu, self.S) + SL.RF_KEY]), NORMAL,
                            int(self.S[SL.cpu(cpu, self.S) + SL.R_EID])))

    def close(self) -> None:
        """At the end of the run: each job's end and phase back into its ``JobState``; ``on_done``
        hears of the finished jobs in the order they finished."""
        JI, JF = self.JI, self.JF
        for j, state in enumerate(self._states):
            state.phase, state.running = int(JI[j, SL.J_PHASE]), int(JI[j, SL.J_RUNNING])
            state.done_at = float(JF[j])
        done = sorted((int(JI[j, SL.J_DONE]), j) for j in range(len(self._states)) if JI[j, SL.J_DONE] >= 0)
        for _, j in done:
            self.on_done(self._states[j])


def _grown(a: np.ndarray, rows: int) -> np.ndarray:
    """``a`` with ``rows`` rows, the new ones zero."""
    out = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
    out[:len(a)] = a
    return out
