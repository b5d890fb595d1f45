"""Processors in pools, one round-robin run queue per pool, and the jobs' three phases.

Time is in the paper's abstract units. A job arrives, its master thread runs INIT in the pool with
the fewest active threads (running or queued; the lowest-numbered on a tie), which becomes its
home pool. When INIT ends the policy places the PARA threads (``place``); the master sleeps
(it is not an active thread) until the last of them ends, then runs FINAL in its home pool.

Scheduling in a pool: a new thread takes an idle processor of its pool (the lowest-numbered)
or waits at the tail of the pool's queue. A thread runs for a slice of ``time_slice``; at its
end, if the queue is empty the thread goes on (no switch), otherwise it goes to the tail and
the head runs. A finished thread's processor takes the head of the queue or goes idle.

Overheads (section 3.3):
- a PARA thread's CPU demand is inflated by (1 + w + s): in-pool w = W (p - p0) when p > p0,
  pool-spanning s = S (k - 1) p for a job whose threads use k pools;
- every dispatch of a thread onto a processor (a context switch) first costs the processor
  r (p - p0) (when p > p0) for the run queue, plus c to load the cache, or t c when the
  processor last ran a thread of the same job; the thread's slice starts after it.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

from simcore.models.pools.workload import Job, thread_demands

INIT, PARA, FINAL = 0, 1, 2
EPS = 1e-9   # work left below this is done (sums of slices round)


class Thread:
    """A master (INIT or FINAL) or PARA thread: its job, work left, pool."""

    __slots__ = ("job", "left", "pool", "master")

    def __init__(self, job: "JobState", left: float, pool: int, master: bool):
        self.job = job
        self.left = left
        self.pool = pool
        self.master = master


class JobState:
    """A job as it runs."""

    __slots__ = ("job", "phase", "home", "a", "k", "running", "done_at")

    def __init__(self, job: Job):
        self.job = job
        self.phase = INIT
        self.home = -1
        self.a = 0            # actual parallelism
        self.k = 0            # pools its PARA threads use
        self.running = 0      # PARA threads not yet finished
        self.done_at = -1.0


class Pool:
    """One pool: its processors, run queue, idle processors (a heap) and active thread count."""

    __slots__ = ("index", "procs", "queue", "idle", "active")

    def __init__(self, index: int, procs: list[int]):
        self.index = index
        self.procs = procs
        self.queue: deque[Thread] = deque()
        self.idle = list(procs)       # a heap: the lowest-numbered idle processor first
        heapq.heapify(self.idle)
        self.active = 0               # threads running or queued


class PoolSystem:
    """The machine of P processors in pools of ``pool_size``, run by ``policy``.

    ``on_done(job_state)`` is called when a job's FINAL phase ends. ``busy_area`` is the
    integral of the number of busy processors over time up to ``area_at``.

    A CPU has one timer, at the end of its thread's work or, while threads wait in its pool, at
    the end of the current slice if that is earlier: a slice ending with nobody waiting changes
    nothing, so it is not simulated (``lazy``; False fires every slice end, the reference).
    Slices of a thread that runs on without a switch end every ``time_slice`` from when its
    work began on the CPU.
    """

    lazy = True
    compiled = True   # False: every run on this Python model (the reference), see ``model.system_class``

    def __init__(self, engine, params: dict, policy, on_done):
        self.engine = engine
        self.params = params
        self.policy = policy
        self.on_done = on_done
        P = params["processors"]
        p = P if params["pool_size"] == "all" else params["pool_size"]
        self.p = p
        self.pools = [Pool(i, list(range(i * p, (i + 1) * p))) for i in range(P // p)]
        self.pool_of = [q for q in range(P // p) for _ in range(p)]
        self.slice = float(params["time_slice"])
        excess = max(0, p - params["pool_threshold"])
        self.in_pool = params["in_pool_factor"] * excess
        self.contention = params["contention_factor"] * excess
        self.cache = float(params["cache_cost"])
        self.same_job_cache = params["cache_fraction"] * self.cache
        self.on_cpu: list[Thread | None] = [None] * P
        self.last_job: list[JobState | None] = [None] * P
        self.work_start = [0.0] * P   # when the running thread's work (after its switch) began
        self.timer = [None] * P
        self.timer_at = [math.inf] * P
        self.busy = 0
        self.busy_area = 0.0
        self.area_at = 0.0
        self.switches = 0

    # -- jobs ----------------------------------------------------------------------------------
    def arrive(self, job: Job) -> JobState:
        """A job arrives: its master thread starts INIT in the least loaded pool."""
        state = JobState(job)
        state.home = min(self.pools, key=lambda pool: (pool.active, pool.index)).index
        self.enqueue(Thread(state, float(self.params["init_demand"]), state.home, True))
        return state

    def spanning_overhead(self, k: int) -> float:
        """s = S (k - 1) p for a job using k pools."""
        return self.params["spanning_factor"] * (k - 1) * self.p

    def fork(self, state: JobState) -> None:
        """INIT is over: the policy decides a and the pools; the PARA threads are queued."""
        for q, left in self.placement(state):
            self.enqueue(Thread(state, left, q, False))

    def placement(self, state: JobState) -> list[tuple[int, float]]:
        """The PARA threads of a job whose INIT is over, in the order they are queued: (pool, work)
        each, from the policy's a and pools and the job's draws (its phase, a, k set)."""
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

    def finished(self, thread: Thread) -> None:
        """A thread's work is done: next phase of its job."""
        state = thread.job
        if not thread.master:
            state.running -= 1
            if state.running == 0:
                state.phase = FINAL
                self.enqueue(Thread(state, float(self.params["final_demand"]), state.home, True))
        elif state.phase == INIT:
            self.fork(state)
        else:
            state.done_at = self.engine.now
            self.on_done(state)

    # -- scheduling ----------------------------------------------------------------------------
    def enqueue(self, thread: Thread) -> None:
        """A ready thread joins its pool: an idle processor runs it at once, else it waits (and
        the pool's running threads now stop at their next slice end)."""
        pool = self.pools[thread.pool]
        pool.active += 1
        if pool.idle:
            self._account()
            self.busy += 1
            self.dispatch(heapq.heappop(pool.idle), thread)
            return
        pool.queue.append(thread)
        if len(pool.queue) == 1 and self.lazy:
            for cpu in pool.procs:
                self._arm(cpu)

    def switch_cost(self, cpu: int, thread: Thread) -> float:
        """Run-queue contention plus cache loading (a fraction when the last job was the same)."""
        same = self.last_job[cpu] is thread.job
        return self.contention + (self.same_job_cache if same else self.cache)

    def dispatch(self, cpu: int, thread: Thread) -> None:
        """Context switch to ``thread`` on ``cpu``; its work starts after the switch."""
        self.switches += 1
        self.work_start[cpu] = self.engine.now + self.switch_cost(cpu, thread)
        self.last_job[cpu] = thread.job
        self.on_cpu[cpu] = thread
        self.timer_at[cpu] = math.inf
        self._arm(cpu)

    def _arm(self, cpu: int) -> None:
        """Set the CPU's timer to the end of its thread's work or, while someone waits in the
        pool (always, when not ``lazy``), to the end of the slice if that comes first."""
        thread = self.on_cpu[cpu]
        if thread is None:
            return
        start = self.work_start[cpu]
        at = start + thread.left
        if not self.lazy or self.pools[self.pool_of[cpu]].queue:
            k = max(1, math.ceil((self.engine.now - start) / self.slice - EPS))
            at = min(at, start + k * self.slice)
        if at < self.timer_at[cpu] - EPS or self.timer[cpu] is None:
            if self.timer[cpu] is not None:
                self.timer[cpu].cancel()
            self.timer[cpu] = self.engine.call(max(at - self.engine.now, 0.0), self._slice_end, cpu)
            self.timer_at[cpu] = at

    def _slice_end(self, cpu: int) -> None:
        """The CPU's timer: the thread's work is done, or a slice ended."""
        self.timer[cpu] = None
        self.timer_at[cpu] = math.inf
        now = self.engine.now
        thread = self.on_cpu[cpu]
        start = self.work_start[cpu]
        done = now - start
        pool = self.pools[self.pool_of[cpu]]
        if done >= thread.left - EPS:
            pool.active -= 1
            self.on_cpu[cpu] = None
            if pool.queue:
                self.dispatch(cpu, pool.queue.popleft())
            else:
                self._account()
                self.busy -= 1
                heapq.heappush(pool.idle, cpu)
            self.finished(thread)
            return
        if pool.queue:                         # preempted: to the tail, the head runs
            thread.left -= done
            pool.queue.append(thread)
            self.dispatch(cpu, pool.queue.popleft())
        else:                                  # nobody waits: the thread goes on, no switch
            thread.left -= done
            self.work_start[cpu] = now
            self._arm(cpu)

    def _account(self) -> None:
        """Bring the busy-processor integral up to now."""
        now = self.engine.now
        self.busy_area += self.busy * (now - self.area_at)
        self.area_at = now

    def close(self) -> None:
        """At the end of a run (the compiled system copies its state back here)."""

    def area(self) -> float:
        """The busy-processor integral up to now."""
        self._account()
        return self.busy_area
