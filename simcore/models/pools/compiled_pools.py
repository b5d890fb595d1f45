"""The pools the model runs: :class:`CompiledPoolSystem` makes every scheduling decision of
:class:`simcore.models.pools.system.PoolSystem` (the Python model, the reference) in compiled code
(:mod:`pool_kernels`, numba).

SimPy stays the calendar that orders the run: the arrivals are SimPy events, and so is a *proxy*
event at the key of the compiled calendar's first timer. Each CPU timer is keyed as SimPy would
key the Python model's (its time, SimPy's NORMAL priority, an insertion number from SimPy's own
counter taken when the Python model would have scheduled it). When a proxy fires, the kernels
fire every timer keyed before SimPy's next event, in key order, so every event happens in the
Python model's order and the events counted are the same. The policy's placement and the
threads' demands stay in Python: the kernels stop when a job ends INIT, Python places its PARA
threads as ``PoolSystem.fork`` does and hands them back.

Monitors (which sample the Python queues) run on the Python model (``model.system_class``).
tests/test_pools_compiled.py holds every run to the Python model's, bit for bit.
"""

from __future__ import annotations

import math
from heapq import heappop

import numpy as np
from simpy.events import NORMAL

from simcore.core.engine import END, ProxyCalendar
from simcore.models.pools import pool_kernels as K
from simcore.models.pools import policies
from simcore.models.pools.system import JobState, PoolSystem
from simcore.models.pools.workload import Job

#: the policies whose ``place`` reads only what :class:`_PoolView` shows (pools' active threads
#: and idle processors, the pool size)
KNOWN = tuple(cls for cls in vars(policies).values()
              if isinstance(cls, type) and issubclass(cls, policies.PoolPolicy) and cls is not policies.PoolPolicy)


class _PoolView:
    """What a policy reads of a pool: its active threads and its idle processors (their count)."""

    __slots__ = ("S", "at")

    def __init__(self, S: np.ndarray, at: int):
        self.S, self.at = S, at

    @property
    def active(self) -> int:
        return int(self.S[self.at + K.Q_ACTIVE])

    @property
    def idle(self) -> range:
        return range(int(self.S[self.at + K.Q_NIDLE]))


class CompiledPoolSystem(ProxyCalendar, PoolSystem):
    """``PoolSystem`` run by the kernels of :mod:`pool_kernels`; every decision the same."""

    MODEL = "pools"

    @staticmethod
    def runs(policy) -> bool:
        """Whether the kernels can run ``policy`` (one of this package's placement rules)."""
        return type(policy) in KNOWN

    def __init__(self, engine, params: dict, policy, on_done):
        super().__init__(engine, params, policy, on_done)
        P, npools = params["processors"], len(self.pools)
        ssize, fsize = K.sizes(P, npools)
        S, SF = np.zeros(ssize, dtype=np.int64), np.zeros(fsize)
        S[K.H_NSAMPLE] = S[K.H_LEFT] = params["jobs"]
        S[K.H_NEED], S[K.H_P], S[K.H_NPOOLS], S[K.H_PSIZE], S[K.H_LAZY] = -1, P, npools, self.p, int(self.lazy)
        S[K.H_FREE] = -1
        for cpu in range(P):
            at = K.H_SIZE + cpu * K.C_COLS
            S[at + K.C_ON], S[at + K.C_LAST], S[at + K.C_EID], S[at + K.C_IDLE] = -1, -1, -1, 1
            SF[K.F_SIZE + cpu * K.CF_COLS + K.CF_AT] = math.inf
        base = K.H_SIZE + P * K.C_COLS
        for q in range(npools):
            at = base + q * K.Q_COLS
            S[at + K.Q_HEAD], S[at + K.Q_TAIL], S[at + K.Q_NIDLE] = -1, -1, self.p
        SF[K.F_SLICE], SF[K.F_CONT], SF[K.F_CACHE] = self.slice, self.contention, self.cache
        SF[K.F_SAME], SF[K.F_FINAL] = self.same_job_cache, float(params["final_demand"])
        SF[K.F_INIT] = float(params["init_demand"])
        self.S, self.SF = S, SF
        self.TI, self.TF = np.zeros((0, K.T_COLS), dtype=np.int64), np.zeros(0)
        self.JI, self.JF = np.zeros((0, K.J_COLS), dtype=np.int64), np.zeros(0)
        self.pools = [_PoolView(S, base + q * K.Q_COLS) for q in range(npools)]   # what the policy reads
        self._states: list[JobState] = []
        self._start_proxies()

    # -- room for threads and jobs ---------------------------------------------------------------------
    def _room(self, threads: int) -> None:
        """At least ``threads`` rows on the free list and a row for one more job."""
        free, t = 0, int(self.S[K.H_FREE])
        while t >= 0 and free < threads:
            free, t = free + 1, int(self.TI[t, K.T_NEXT])
        if free < threads:
            old = len(self.TF)
            new = max(2 * old, old + threads, 64)
            TI = np.zeros((new, K.T_COLS), dtype=np.int64)
            TI[:old] = self.TI
            TI[old:, K.T_NEXT] = np.arange(old + 1, new + 1)
            TI[new - 1, K.T_NEXT] = self.S[K.H_FREE]
            self.S[K.H_FREE] = old
            TF = np.zeros(new)
            TF[:old] = self.TF
            self.TI, self.TF = TI, TF
        if len(self._states) >= len(self.JF):
            old = len(self.JF)
            new = max(2 * old, 256)
            JI = np.zeros((new, K.J_COLS), dtype=np.int64)
            JI[:old] = self.JI
            JF = np.zeros(new)
            JF[:old] = self.JF
            self.JI, self.JF = JI, JF

    # -- the run -------------------------------------------------------------------------------------
    def arrive(self, job: Job) -> JobState:
        """A job arrives (a SimPy event): the kernels start its master's INIT in the least loaded pool."""
        state = JobState(job)
        self._room(1)
        j = len(self._states)
        self._states.append(state)
        state.home = int(self._call(K.arrive, j))
        return state

    def enqueue(self, thread) -> None:
        """A ready thread made in Python (scripted scenarios): its job gets a row when first seen."""
        state = thread.job
        j = next((i for i, s in enumerate(self._states) if s is state), None)
        self._room(1)
        if j is None:
            j = len(self._states)
            self._states.append(state)
            self.JI[j] = (state.phase, thread.pool, state.running, -1)
            self.JF[j] = -1.0
        self._call(K.enqueue, j, float(thread.left), thread.pool, int(thread.master))

    def area(self) -> float:
        """The busy-processor integral up to now."""
        return float(K.area(self.engine.now, self.S, self.SF))

    def _call(self, kernel, *args):
        """A kernel call at ``engine.now``, then a proxy at the calendar's first timer."""
        out = self.handing(self.S, K.H_EID, kernel, *args, self.engine.now, *self._buffers())
        self._push_head()
        return out

    def _buffers(self) -> tuple:
        return self.S, self.SF, self.TI, self.TF, self.JI, self.JF

    def _on_proxy(self, _event) -> None:
        """Fire every compiled timer keyed before SimPy's next event (and before the run's stop),
        making the forks the kernels ask for; then keep a proxy at or before the first timer left."""
        now = heappop(self._proxies)[0]          # the proxy firing: SimPy's clock
        engine, S = self.engine, self.S
        engine.now = now
        queue = self._simpy_queue
        while True:
            stop = queue[0] if queue else END
            self.handing(S, K.H_EID, K.drain, stop[0], stop[1], stop[2], *self._buffers())
            engine.events += int(S[K.H_FIRED])
            if S[K.H_NEED] < 0:
                break
            self._fork(int(S[K.H_NEED]), float(self.SF[K.F_NOW]))
        if S[K.H_STOP] == 1:          # the last sampled job's end: SimPy's stop event, keyed as Engine.stop's
            S[K.H_STOP] = 2
            self._stop_at(float(self.SF[K.F_STOPT]), int(S[K.H_STOPE]))
        self._push_head()

    def _fork(self, j: int, now: float) -> None:
        """``PoolSystem.fork`` for job ``j`` at ``now``: the placement in Python
        (``PoolSystem.placement``), the threads queued by the kernels."""
        threads = self.placement(self._states[j])
        pools = np.array([q for q, _ in threads], dtype=np.int64)
        lefts = np.array([left for _, left in threads])
        self._room(len(threads))
        self.handing(self.S, K.H_EID, K.fork, j, pools, lefts, now, *self._buffers())

    def _push_head(self) -> None:
        """A proxy at the key of the calendar's first timer (see ``ProxyCalendar``)."""
        cpu = K.head(self.S, self.SF)
        if cpu >= 0:
            self._proxy_at((float(self.SF[K.F_SIZE + cpu * K.CF_COLS + K.CF_KEY]), NORMAL,
                            int(self.S[K.H_SIZE + cpu * K.C_COLS + K.C_EID])))

    def close(self) -> None:
        """At the end of the run: each job's end and phase, and the counters, back into the Python
        objects; ``on_done`` hears of the finished jobs in the order they finished."""
        S, JI, JF = self.S, self.JI, self.JF
        for j, state in enumerate(self._states):
            state.phase, state.running = int(JI[j, K.J_PHASE]), int(JI[j, K.J_RUNNING])
            state.done_at = float(JF[j])
        self.busy, self.switches = int(S[K.H_BUSY]), int(S[K.H_SWITCHES])
        self.busy_area, self.area_at = float(self.SF[K.F_AREA]), float(self.SF[K.F_AREAT])
        done = sorted((int(JI[j, K.J_DONE]), j) for j in range(len(self._states)) if JI[j, K.J_DONE] >= 0)
        for _, j in done:
            self.on_done(self._states[j])
