"""The machine under one policy: per-CPU run queues, dispatch, timeslices, I/O, placement.

Everything is an event: a running task's end of burst or of timeslice is one timer per CPU
(cancelled on preemption), an I/O completion is one timer per blocked task, balancing timers
live in :mod:`balancer`. No scheduler tick is simulated; the tick-driven load average is
computed lazily by each run queue.
"""

from __future__ import annotations

import math

import numpy as np

from simcore.core.engine import Engine
from simcore.models.numa.runqueue import SCHED_LOAD_SCALE, RunQueue
from simcore.models.numa.task import BLOCKED, DONE, RUNNING, Task

EPS = 1e-9


class NumaSystem:
    """Run queues of all CPUs, the tasks, the balancer and the counters of one run."""

    def __init__(self, engine: Engine, machine, domains, policy, params: dict):
        self.engine = engine
        self.machine = machine
        self.params = params
        self.policy = policy
        self.ncpus = int(machine.cpus)
        self.cpu_node = [int(n) for n in machine.cpu_node]
        self.tick = float(params["tick"])
        instant = params["load_average"] == "instant"
        self.rqs = [RunQueue(c, self.cpu_node[c], self.tick, instant) for c in range(self.ncpus)]
        dist = [[float(x) for x in row] for row in machine.distances]
        levels = sorted({d for row in dist for d in row})
        self.levels = levels
        self.dist = dist
        self.level_of = [[levels.index(d) for d in row] for row in dist]
        m = float(params["memory_stall_fraction"])
        self.factor = [[1.0 + m * (d / 10.0 - 1.0) for d in row] for row in dist]
        self.np_avg = np.zeros(self.ncpus)
        self.np_tick = np.zeros(self.ncpus)
        self.np_cur = np.zeros(self.ncpus)
        for rq in self.rqs:
            rq.np_avg, rq.np_tick = self.np_avg, self.np_tick
        self.overloaded: set[int] = set()     # CPUs with two or more runnable tasks
        self.busy = [False] * self.ncpus      # CPU running a task (not the idle task)
        self.migrations = 0
        self.wasted_migrations = 0            # migrations followed by another before the task ran
        self.lb_attempts = 0
        self.lb_failed = 0
        self.delivered = 0.0                  # CPU ms delivered (wall, at any speed)
        self.work = 0.0                       # work ms consumed (local-speed ms)
        self.done: list[Task] = []
        self.tasks: list[Task] = []
        self.unfinished = 0
        self.check = None                     # invariant checker, set by the model when asked
        self._end_cb = [self._make_end(rq) for rq in self.rqs]
        from simcore.models.numa.balancer import Balancer
        self.balancer = Balancer(self, domains, policy, params)

    @property
    def now(self) -> float:
        return self.engine.env.now

    def _make_end(self, rq: RunQueue):
        return lambda: self.run_end(rq)

    # -- nr_running bookkeeping ---------------------------------------------------------------
    def nr_changed(self, rq: RunQueue) -> None:
        """After a change of ``rq``'s runnable count: keep the overloaded set, wake balancers."""
        self.np_cur[rq.cpu] = rq.nr_running * SCHED_LOAD_SCALE
        if rq.nr_running >= 2:
            if rq.cpu not in self.overloaded:
                self.overloaded.add(rq.cpu)
                self.balancer.on_overload(rq.cpu)
        else:
            self.overloaded.discard(rq.cpu)

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
        self._checked()

    def wake(self, task: Task) -> None:
        """I/O completion: the task is woken on the CPU it last ran on (no waker task to pull it)."""
        task.io_wait = 0.0
        task.record("io", -1, self.now)
        self.activate(task, task.cpu)
        self._checked()

    def activate(self, task: Task, cpu: int, expired: bool = False) -> None:
        rq = self.rqs[cpu]
        rq.settle_load(self.now)
        rq.enqueue(task, expired)
        task.seg_start = self.now
        self.nr_changed(rq)
        self.resched(rq)

    def resched(self, rq: RunQueue) -> None:
        """Run something if idle; preempt the current task if a queued one has higher priority."""
        if rq.curr is None:
            if rq.n_queued:
                self.schedule(rq)
        elif rq.best_prio() < rq.curr.prio:
            self.preempt(rq)

    # -- dispatch ------------------------------------------------------------------------------
    def schedule(self, rq: RunQueue) -> None:
        """``schedule()`` on an idle CPU: newly-idle balancing if the queue is empty, then dispatch."""
        if not rq.n_queued:
            self.balancer.newidle(rq)
        task = rq.pick_next()
        if task is None:
            if self.busy[rq.cpu]:
                self.busy[rq.cpu] = False
                self.balancer.on_state(rq.cpu, idle=True)
            return
        self.run(rq, task)
        if not self.busy[rq.cpu]:
            self.busy[rq.cpu] = True
            self.balancer.on_state(rq.cpu, idle=False)

    def run(self, rq: RunQueue, task: Task) -> None:
        now = self.now
        if task.state != RUNNING:
            task.record("wait", rq.cpu, now)
        rq.curr = task
        task.moved_unrun = False
        task.state = RUNNING
        task.cpu = rq.cpu
        f = self.factor[rq.node][task.home]
        wall_burst = task.burst_left * f
        if wall_burst <= task.slice_left:
            rq.run_factor = -f          # sign marks "ends with the burst"
            length = max(wall_burst, 0.0)   # a burst preempted at its very end may be -1e-14 left
        else:
            rq.run_factor = f
            length = task.slice_left
        rq.run_start = now
        rq.timer = self.engine.schedule(length, self._end_cb[rq.cpu])

    def _account(self, rq: RunQueue, task: Task) -> None:
        """Charge the time since dispatch to ``task``: slice (wall) and burst (work at this speed)."""
        now = self.now
        elapsed = now - rq.run_start
        f = abs(rq.run_factor)
        work = elapsed / f
        task.slice_left -= elapsed
        task.burst_left -= work
        task.cpu_time += elapsed
        lvl = self.level_of[rq.node][task.home]
        task.level_time[lvl] = task.level_time.get(lvl, 0.0) + elapsed
        self.delivered += elapsed
        self.work += work
        task.last_ran = now
        rq.run_start = now

    def preempt(self, rq: RunQueue) -> None:
        """Stop the current task and put it back at the head of its active list."""
        task = rq.curr
        rq.timer.cancel()
        self._account(rq, task)
        task.record("run", rq.cpu, self.now)
        rq.curr = None
        if task.slice_left <= EPS:
            task.slice_left = task.slice
            rq.enqueue(task, expired=True)
        else:
            rq.enqueue(task, head=True)
        self.schedule(rq)

    def run_end(self, rq: RunQueue) -> None:
        """The current task's burst or timeslice is over."""
        task = rq.curr
        burst_end = rq.run_factor < 0
        self._account(rq, task)
        if burst_end:
            task.burst_left = 0.0
        else:
            task.slice_left = 0.0
        if burst_end:
            if task.demand_left <= 0.0:
                self._finish(rq, task)
                return
            if task.burst_io:
                if task.slice_left <= EPS:
                    task.slice_left = task.slice
                self._block(rq, task)
                return
            task.next_burst()
            if task.slice_left > EPS:   # keeps the CPU: the next burst continues at once
                self.run(rq, task)
                self._checked()
                return
        # timeslice used up: refill and move to the expired array
        task.record("run", rq.cpu, self.now)
        rq.curr = None
        task.slice_left = task.slice
        rq.settle_load(self.now)
        rq.enqueue(task, expired=True)
        self.schedule(rq)
        self._checked()

    def _finish(self, rq: RunQueue, task: Task) -> None:
        task.record("run", rq.cpu, self.now)
        rq.settle_load(self.now)
        rq.curr = None
        task.state = DONE
        task.finished = self.now
        self.done.append(task)
        self.unfinished -= 1
        self.nr_changed(rq)
        self.schedule(rq)
        self._checked()

    def _block(self, rq: RunQueue, task: Task) -> None:
        task.record("run", rq.cpu, self.now)
        rq.settle_load(self.now)
        rq.curr = None
        task.state = BLOCKED
        task.next_burst()
        wait = task.draw_io()
        task.io_wait = wait
        self.nr_changed(rq)
        self.engine.schedule(wait, lambda: self.wake(task))
        self.schedule(rq)
        self._checked()

    # -- migration -----------------------------------------------------------------------------
    def pull(self, task: Task, src: RunQueue, dst: RunQueue) -> None:
        """Move a queued task from ``src`` to the same array of ``dst`` (no dispatch here)."""
        now = self.now
        src.settle_load(now)
        dst.settle_load(now)
        src.dequeue(task)
        task.record("wait", src.cpu, now)
        dst.enqueue(task, task.expired)
        task.migrations += 1
        self.migrations += 1
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
        now = self.now
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

    def _checked(self) -> None:
        if self.check is not None:
            self.check(self)
