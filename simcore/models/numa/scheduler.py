"""The machine under one policy: per-CPU run queues, dispatch, timeslices, I/O, placement.

Everything is an event: a running task's end of burst or of timeslice is one timer per CPU
(cancelled on preemption), an I/O completion is one timer per blocked task, balancing timers
live in :mod:`balancer`. No scheduler tick is simulated; the tick-driven load average is
computed lazily by each run queue.

A task alone on its CPU crosses ends of bursts that do not block and ends of slices that give
the CPU straight back to it: nothing anyone can see changes there. Its timer is set at the
first end that decides something (a block, the task's end; at most ``LOOKAHEAD`` ends ahead),
and the ends before it are *pending*: they are replayed in order, with the arithmetic they
would have had as events, when the timer fires or when anything touches the CPU first (a task
queued on it, a preemption by active balancing); see ``_look_ahead`` and ``_catch_up``. The
results are those of an event at every end (``NumaSystem.look_ahead = False``, the reference
the tests compare with). This holds because events of the same instant fire in a fixed order:
the ends of bursts and slices first, by CPU number (their timers' SimPy priority is below
NORMAL), then the others in the order they were scheduled; so an end due at the instant of
another event always comes before it, whether it is pending or not, and no end of one CPU
touches another CPU whose task is alone. (2.6.11's ``scheduler_tick`` likewise charges the
running task's slice, and requeues it when the slice is over, before ``rebalance_tick``.)
"""

from __future__ import annotations

import math

import numpy as np

from simcore.core.engine import Engine
from simcore.models.numa.runqueue import SCHED_LOAD_SCALE, RunQueue
from simcore.models.numa.task import BLOCKED, DONE, RUNNING, Task

EPS = 1e-9
LOOKAHEAD = 64   # most pending ends of one dispatch (a long CPU-bound task re-arms every 64 slices)


def balancer_class():
    """The balancer a system builds: the compiled one (``compiled.CompiledBalancer``) unless
    ``Balancer.compiled`` is off or numba is missing, then the pure-Python reference."""
    from simcore.models.numa.balancer import Balancer
    if Balancer.compiled:
        try:
            from simcore.models.numa.compiled import CompiledBalancer
        except ImportError:
            return Balancer
        return CompiledBalancer
    return Balancer


class NumaSystem:
    """Run queues of all CPUs, the tasks, the balancer and the counters of one run: the Python
    model, the reference. The model runs ``compiled_system.CompiledSystem`` (the same decisions
    compiled) wherever it can; traces, invariant checks and monitors run here."""

    compiled = True     # the model runs compiled_system.CompiledSystem where it can (model.system_class); False: this class
    look_ahead = True   # timers skip the ends that decide nothing (module docstring); False: an event at each

    def __init__(self, engine: Engine, machine, domains, policy, params: dict):
        self.engine = engine
        self.machine = machine
        self.params = params
        self.policy = policy
        self.ncpus = int(machine.cpus)
        self.cpu_node = [int(n) for n in machine.cpu_node]
        self.tick = float(params["tick"])
        self.rqs = self._run_queues(params["load_average"] == "instant")
        dist = [[float(x) for x in row] for row in machine.distances]
        levels = sorted({d for row in dist for d in row})
        self.levels = levels
        self.dist = dist
        self.level_of = [[levels.index(d) for d in row] for row in dist]
        m = float(params["memory_stall_fraction"])
        self.factor = [[1.0 + m * (d / 10.0 - 1.0) for d in row] for row in dist]
        self.lifetime = params["locality_scope"] == "lifetime"   # bursts drawn as wall time (bursts.py)
        self.migration_cost = float(params["migration_cost"])   # work redone after a migration (pull)
        self.attempt_cost = float(params["lb_attempt_cost"])    # CPU time of a balancing attempt (charge)
        self.overhead = 0.0                   # work added by both costs (local-speed ms)
        self.debt: dict[int, float] = {}      # per task: the refill work of its last migration not yet done
        self.np_avg = np.zeros(self.ncpus)
        self.np_tick = np.zeros(self.ncpus)
        self.np_cur = np.zeros(self.ncpus)
        self.np_dirty = True                  # the mirrors changed since the balancer last read them
        for rq in self.rqs:
            rq.np_avg, rq.np_tick, rq.mirror = self.np_avg, self.np_tick, self
        self.overloaded: set[int] = set()     # CPUs with two or more runnable tasks
        self.loaded: set[int] = set()         # CPUs with a runnable task
        self.busy = [False] * self.ncpus      # CPU running a task (not the idle task)
        self.migrations = 0
        self.active_pushes = 0                # migrations made by active balancing
        self.wasted_migrations = 0            # migrations followed by another before the task ran
        self.migration_levels = 0             # sum over migrations of the distance level crossed
        self.away_moves = 0                   # migrations of a task that was off its home node
        self.home_moves = 0                   # of those, the ones that took it back home
        self.lb_attempts = 0
        self.lb_failed = 0
        self.lb_dead = 0                      # attempts sure to fail (Balancer.quiet; newly idle: no queued task)
        self.delivered = 0.0                  # CPU ms delivered (wall, at any speed)
        self.work = 0.0                       # work ms consumed (local-speed ms)
        self.done: list[Task] = []
        self.tasks: list[Task] = []
        self.unfinished = 0
        self.to_finish = -1                   # tasks of the workload not finished; the run ends at 0 (set by the model)
        self.check = None                     # invariant checker, set by the model when asked
        self._run_end = self.run_end          # bound once: timers call it with their run queue
        self._wake = self.wake
        for rq in self.rqs:
            rq.end_order = rq.cpu - self.ncpus   # run ends first at equal times, in CPU order (module docstring)
            rq.frow = self.factor[rq.node]
            rq.lrow = self.level_of[rq.node]
        self.balancer = self.balancer_class()(self, domains, policy, params)
        self._on_state = self.balancer.on_state
        self._on_overload = self.balancer.on_overload
        self._on_loaded = self.balancer.on_loaded
        self._newidle = self.balancer.newidle

    def _run_queues(self, instant: bool) -> list[RunQueue]:
        """Every CPU's run queue."""
        return [RunQueue(c, self.cpu_node[c], self.tick, instant) for c in range(self.ncpus)]

    def runnable(self, cpu: int) -> int:
        """Tasks queued on ``cpu`` plus the one it runs."""
        rq = self.rqs[cpu]
        return rq.n_queued + (rq.curr is not None)

    def balancer_class(self):
        """The balancer's class (see the module's ``balancer_class``); the Python one when attempts
        cost time (the compiled timing kernels make failed attempts without returning to Python,
        so they could not charge them)."""
        if self.attempt_cost:
            from simcore.models.numa.balancer import Balancer
            return Balancer
        return balancer_class()

    def expect(self, tasks: list) -> None:
        """The workload's tasks, before the first is created: the run ends when all have finished."""
        self.to_finish = len(tasks)

    @property
    def now(self) -> float:
        return self.engine.now

    def lb_counts(self) -> tuple[int, int, int]:
        """Balancing attempts, failed attempts and certain failures so far (the compiled balancer
        adds its own counts to the counters only at the end of the run)."""
        extra = self.balancer.unflushed()
        return self.lb_attempts + extra[0], self.lb_failed + extra[1], self.lb_dead + extra[2]

    # -- nr_running bookkeeping ---------------------------------------------------------------
    def nr_changed(self, rq: RunQueue) -> None:
        """After a change of ``rq``'s runnable count: keep the loaded and overloaded sets, wake
        balancers."""
        n = rq.n_queued + (rq.curr is not None)
        cpu = rq.cpu
        self.np_cur[cpu] = n * SCHED_LOAD_SCALE
        self.np_dirty = True
        if n:
            if cpu not in self.loaded:
                self.loaded.add(cpu)
                self._on_loaded(cpu)
            if n >= 2:
                if cpu not in self.overloaded:
                    self.overloaded.add(cpu)
                    self._on_overload(cpu)
                return
        else:
            self.loaded.discard(cpu)
        self.overloaded.discard(cpu)

    # -- task arrival, wake-up, placement ------------------------------------------------------
    def create(self, task: Task) -> None:
        """A new task: place it (policy; Linux exec balancing), allocate memory there, enqueue."""
        self.tasks.append(task)
        self.unfinished += 1
        cpu = self.policy.place(task, task.spec.parent_cpu, self)
        task.home = self.cpu_node[cpu]
        if task.trace is not None and cpu != task.spec.parent_cpu:
            task.trace.append(("wait", task.spec.parent_cpu, 0.0))
        self.activate(task, cpu)
        if self.check is not None:
            self.check(self)

    def wake(self, task: Task) -> None:
        """I/O completion: the task is woken on the CPU it last ran on (no waker task to pull it)."""
        if task.trace is not None:
            task.trace.append(("io", -1, self.engine.now - task.seg_start))
        self.activate(task, task.cpu)
        if self.check is not None:
            self.check(self)

    def activate(self, task: Task, cpu: int) -> None:
        """Queue ``task`` on ``cpu`` (in the active array) and let it preempt or start there."""
        rq = self.rqs[cpu]
        now = self.engine.now
        if rq.pending:
            self._catch_up(rq, now)
        rq.settle_load(now)
        rq.enqueue(task)
        task.seg_start = now
        self.nr_changed(rq)
        self.resched(rq)

    def resched(self, rq: RunQueue) -> None:
        """Run something if idle; preempt the current task if a queued one has higher priority."""
        curr = rq.curr
        if curr is None:
            if rq.n_queued:
                self.schedule(rq)
        else:
            bm = rq.bitmaps[0]   # the best queued priority is 100 + the index of the lowest set bit
            if bm and 100 + (bm & -bm).bit_length() - 1 < curr.prio:
                self.preempt(rq)

    # -- dispatch ------------------------------------------------------------------------------
    def schedule(self, rq: RunQueue) -> None:
        """``schedule()`` on an idle CPU: newly-idle balancing if the queue is empty, then dispatch."""
        if not rq.n_queued:
            self._newidle(rq)
            if not rq.n_queued:
                cpu = rq.cpu
                if self.busy[cpu]:
                    self.busy[cpu] = False
                    self._on_state(cpu, True)
                return
        task = rq.pick_next()
        self.run(rq, task)
        cpu = rq.cpu
        busy = self.busy
        if not busy[cpu]:
            busy[cpu] = True
            self._on_state(cpu, False)

    def run(self, rq: RunQueue, task: Task) -> None:
        now = self.engine.now
        cpu = rq.cpu
        if task.state != RUNNING:   # close the wait segment
            if task.trace is not None:
                task.trace.append(("wait", cpu, now - task.seg_start))
            task.seg_start = now
        rq.curr = task
        task.moved_unrun = False
        task.state = RUNNING
        task.cpu = cpu
        if self.lifetime:                # its next bursts serve their wall time at this CPU's speed
            task.scale = rq.frow[task.home]
        rq.run_start = now
        self._segment(rq, task)
        self._arm_run(rq, task)

    def _arm_run(self, rq: RunQueue, task: Task) -> None:
        """Set the run timer of the segment just computed (looking ahead if the task is alone)."""
        if self.look_ahead and not rq.n_queued:
            self._look_ahead(rq, task)
        else:
            rq.timer = self.engine.call_at(rq.seg_end, self._run_end, rq, rq.end_order)

    def charge(self, rq: RunQueue, wall: float) -> None:
        """The running task loses ``wall`` ms of its CPU to balancing attempts made there
        (``lb_attempt_cost``): its burst grows by the work that takes, so it ends ``wall`` later."""
        task = rq.curr
        now = self.engine.now
        if rq.pending:
            self._catch_up(rq, now)
        rq.timer.cancel()
        self._account(rq, task, now)
        f = rq.run_factor
        extra = wall / (f if f >= 0 else -f)
        task.burst_left += extra
        self.overhead += extra
        self._segment(rq, task)
        self._arm_run(rq, task)

    @staticmethod
    def _segment(rq: RunQueue, task: Task) -> None:
        """From ``rq.run_start``: whether the burst or the slice ends first (sign of ``run_factor``:
        negative, the burst) and when (``seg_end``), at this CPU's speed for the task's memory."""
        f = rq.frow[task.home]
        wall_burst = task.burst_left * f
        if wall_burst <= task.slice_left + EPS:   # equal up to rounding: the burst ends (no 0-ms leftover)
            rq.run_factor = -f          # sign marks "ends with the burst"
            length = max(wall_burst, 0.0)   # a burst preempted at its very end may be -1e-14 left
        else:
            rq.run_factor = f
            length = task.slice_left
        rq.seg_end = rq.run_start + length

    def _look_ahead(self, rq: RunQueue, task: Task) -> None:
        """Set the timer of a task alone on its CPU at the first end of burst or slice that decides
        something, counting the ends before it as pending (``rq.pending``). The ends are
        followed on copies of the task's state with the arithmetic of ``_account``, ``run_end``
        and ``_segment``, and its coming bursts from its own draws (``Task.upcoming``)."""
        f = rq.run_factor
        ends_burst, f = f < 0, abs(f)
        start, at = rq.run_start, rq.seg_end
        slice_left, burst_left, io, demand = task.slice_left, task.burst_left, task.burst_io, task.demand_left
        bursts = None
        n = 0
        while n < LOOKAHEAD:
            elapsed = at - start
            slice_left -= elapsed
            burst_left -= elapsed / f
            if ends_burst:
                if demand <= 0.0 or io:      # the task ends or blocks: decided
                    break
                if bursts is None:
                    bursts = task.upcoming()
                burst_left, io, demand = next(bursts)
                if slice_left <= EPS:        # the slice ended with the burst: a new one
                    slice_left = task.slice
            else:
                slice_left = task.slice
            wall_burst = burst_left * f
            ends_burst = wall_burst <= slice_left + EPS
            start, at = at, at + (max(wall_burst, 0.0) if ends_burst else slice_left)
            n += 1
        rq.pending = n
        rq.timer = self.engine.call_at(at, self._run_end, rq, rq.end_order)

    def _pass_end(self, rq: RunQueue, task: Task) -> None:
        """Replay the pending end at ``rq.seg_end`` as ``run_end`` makes it, the CPU's queue being
        empty: a burst over with the slice left goes on with the next burst, a slice over is
        refilled and the task, queued alone, is picked again at once."""
        t = rq.seg_end
        self._account(rq, task, t)
        rq.pending -= 1
        if rq.run_factor < 0:            # the burst is over (next_burst replaces what is left of it)
            task.next_burst()
            if task.slice_left > EPS:
                self._segment(rq, task)
                return
        if task.trace is not None:       # expired, requeued and dispatched again (a 0-ms wait)
            task.trace.append(("run", rq.cpu, t - task.seg_start))
            task.trace.append(("wait", rq.cpu, 0.0))
        task.seg_start = t
        task.slice_left = task.slice
        self._segment(rq, task)

    def _catch_up(self, rq: RunQueue, now: float) -> None:
        """Something touches a CPU whose task has pending ends: replay those up to ``now`` (ends of
        bursts and slices come before any other event of the same instant) and put the timer back
        at the end of the current segment (the queue may not stay empty)."""
        task = rq.curr
        while rq.pending and rq.seg_end <= now:
            self._pass_end(rq, task)
        rq.pending = 0
        rq.timer.cancel()
        rq.timer = self.engine.call_at(rq.seg_end, self._run_end, rq, rq.end_order)

    def _account(self, rq: RunQueue, task: Task, now: float) -> None:
        """Charge the time since dispatch to ``task``: slice (wall) and burst (work at this speed)."""
        elapsed = now - rq.run_start
        f = rq.run_factor
        work = elapsed / (f if f >= 0 else -f)
        task.slice_left -= elapsed
        task.burst_left -= work
        if self.migration_cost:              # the refill is the first work done after a move
            owed = self.debt.get(task.tid, 0.0) - work
            self.debt[task.tid] = owed if owed > 0.0 else 0.0
        task.cpu_time += elapsed
        lvl = rq.lrow[task.home]
        lt = task.level_time
        lt[lvl] = lt.get(lvl, 0.0) + elapsed
        self.delivered += elapsed
        self.work += work
        task.last_ran = now
        rq.run_start = now

    def preempt(self, rq: RunQueue) -> None:
        """Stop the current task and put it back at the head of its active list."""
        self.stop_current(rq)
        self.schedule(rq)

    def stop_current(self, rq: RunQueue) -> None:
        """Stop the current task and queue it (no dispatch here): at the head of its active list,
        or at the tail of the expired array with a new slice if its slice is used up."""
        task = rq.curr
        now = self.engine.now
        if rq.pending:
            self._catch_up(rq, now)
        rq.timer.cancel()
        self._account(rq, task, now)
        if task.trace is not None:
            task.trace.append(("run", rq.cpu, now - task.seg_start))
        task.seg_start = now
        rq.curr = None
        if task.slice_left <= EPS:
            task.slice_left = task.slice
            rq.enqueue(task, expired=True)
        else:
            rq.enqueue(task, head=True)

    def run_end(self, rq: RunQueue) -> None:
        """The current task's burst or timeslice is over (after the pending ends before it)."""
        task = rq.curr
        while rq.pending:
            self._pass_end(rq, task)
        now = self.engine.now
        self._account(rq, task, now)
        if rq.run_factor < 0:      # the burst is over (see run)
            task.burst_left = 0.0
            if task.demand_left <= 0.0:
                self._finish(rq, task, now)
                return
            if task.burst_io:
                self._block(rq, task, now)
                return
            task.next_burst()
            if task.slice_left > EPS:   # keeps the CPU: the next burst continues at once
                self.run(rq, task)
                if self.check is not None:
                    self.check(self)
                return
        else:
            task.slice_left = 0.0
        # timeslice used up: refill and move to the expired array (still runnable: the load
        # average is brought up to date while the task counts)
        if task.trace is not None:
            task.trace.append(("run", rq.cpu, now - task.seg_start))
        task.seg_start = now
        rq.settle_load(now)
        rq.curr = None
        task.slice_left = task.slice
        rq.enqueue(task, expired=True)
        self.schedule(rq)
        if self.check is not None:
            self.check(self)

    def _finish(self, rq: RunQueue, task: Task, now: float) -> None:
        """The current task has served its whole demand."""
        task.finished = now
        self.done.append(task)
        self.unfinished -= 1
        self.to_finish -= 1
        if not self.to_finish:           # the run ends with the workload's last task
            self.engine.stop()
        self._vacate(rq, task, now, DONE)

    def _block(self, rq: RunQueue, task: Task, now: float) -> None:
        """The current task starts an I/O wait; it wakes on this CPU when the wait is over."""
        task.next_burst()
        self.engine.call(task.draw_io(), self._wake, task)
        if task.slice_left <= EPS:       # a slice used up by the burst is refilled (as at expiry)
            task.slice_left = task.slice
        self._vacate(rq, task, now, BLOCKED)

    def _vacate(self, rq: RunQueue, task: Task, now: float, state: str) -> None:
        """The current task leaves the CPU and its run queue (``state``: done or blocked); run the next."""
        if task.trace is not None:
            task.trace.append(("run", rq.cpu, now - task.seg_start))
        task.seg_start = now
        rq.settle_load(now)
        rq.curr = None
        task.state = state
        self.nr_changed(rq)
        self.schedule(rq)
        if self.check is not None:
            self.check(self)

    def close(self) -> None:
        """At the end of the run: count the attempts still owed to sleeping domains (see
        ``Balancer.close``). No end is pending then: the run ends with the last task."""
        self.balancer.close(self.engine.now)

    # -- migration -----------------------------------------------------------------------------
    def pull(self, task: Task, src: RunQueue, dst: RunQueue) -> None:
        """Move a queued task from ``src`` to the same array of ``dst`` (no dispatch here)."""
        now = self.engine.now
        if dst.pending:
            self._catch_up(dst, now)
        src.settle_load(now)
        dst.settle_load(now)
        src.dequeue(task)
        if task.trace is not None:   # close the wait segment on the source CPU
            task.trace.append(("wait", src.cpu, now - task.seg_start))
        task.seg_start = now
        dst.enqueue(task, task.expired)
        task.migrations += 1
        self.migrations += 1
        if self.migration_cost:          # a cold cache on dst: the refill owed is one migration_cost
            extra = self.migration_cost - self.debt.get(task.tid, 0.0)
            task.burst_left += extra
            self.overhead += extra
            self.debt[task.tid] = self.migration_cost
        self.migration_levels += self.level_of[src.node][dst.node]
        if src.node != task.home:
            self.away_moves += 1
            if dst.node == task.home:
                self.home_moves += 1
        if task.moved_unrun:
            self.wasted_migrations += 1
        task.moved_unrun = True
        self.nr_changed(src)
        self.nr_changed(dst)

    # -- placement -------------------------------------------------------------------------------
    def exec_balance(self, task: Task, parent: int) -> int:
        """2.6.11 ``sched_balance_exec``: from a CPU with other work, go to the idlest CPU of the
        highest exec-balancing domain if it is enough less loaded."""
        rq = self.rqs[parent]
        if rq.nr_running == 0:          # the new task would be alone on its parent's CPU
            return parent
        dom = self.balancer.exec_domain(parent)
        if dom is None:
            return parent
        now = self.engine.now
        min_load, min_cpu = math.inf, parent
        for c in dom.cpus:
            load = self.rqs[c].loads(now)[1]
            if load < min_load:
                min_load, min_cpu = load, c
                if load == 0:
                    break
        this = self.rqs[parent].loads(now)[0] + SCHED_LOAD_SCALE
        if min_load * (100 + (dom.imbalance_pct - 100) // 2) < this * 100:
            return min_cpu
        return parent
