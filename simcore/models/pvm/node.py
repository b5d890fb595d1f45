"""One PC of the cluster: a single CPU scheduled as Linux 2.2 schedules it (docs/pvm-model.md).

A process holds a *counter* of clock ticks left in its slice and a static *priority* (20 ticks).
Every tick (``tick`` µs) takes one from the running process's counter; at zero the CPU is
rescheduled. ``schedule`` picks the runnable process of greatest goodness: counter + priority
while the counter is positive, 0 once it is spent, 1000 + rt_priority for a real-time process;
the process that was running wins a tie, then the one that became ready first (a simplification of
the kernel's run-queue order). When every
runnable ordinary process has a spent counter, every process's counter becomes counter / 2 +
priority (integer halving), so a process that sleeps a lot gathers up to twice its priority. A
process that wakes up takes the CPU at once if it is real-time or its counter exceeds the running
process's by more than 3 (Linux 2.2's reschedule_idle); otherwise it waits in the ready list.

A process is a sequence of *steps*: ``run(p, need, then)`` says that p needs ``need`` µs of CPU
and then calls ``then()``. A context switch costs ``switch_cost`` µs for the process leaving the
CPU and as much for the one taking it (the paper's W_s and W_w), added to the incoming step.
"""

from __future__ import annotations

import math
from typing import Callable

READY, RUNNING, BLOCKED = "ready", "running", "blocked"
INF = math.inf


class Proc:
    """A process: its scheduling state, its current step and its CPU accounts (µs)."""

    __slots__ = ("name", "counter", "priority", "rt", "state", "stopped", "need", "then", "cpu", "overhead", "owed",
                 "waiting", "spinning", "spun", "blocks")

    def __init__(self, name: str, priority: int, rt: int = 0):
        self.name, self.priority, self.rt = name, priority, rt
        self.counter = priority
        self.state = BLOCKED
        self.stopped = False      # EXPLICIT: held by a STOP signal until CONTINUE
        self.need = 0.0           # CPU left in the current step
        self.then: Callable[[], None] | None = None
        self.cpu = 0.0            # CPU received (steps and switch costs)
        self.overhead = 0.0       # of which context-switch costs
        self.owed = 0.0           # switch cost still to run before the step itself
        self.waiting = None       # what it waits for (the application's business)
        self.spinning = False
        self.spun = 0.0
        self.blocks = 0


def _best(candidates: list[Proc]) -> tuple[Proc, int]:
    """The candidate of greatest goodness and that goodness; strictly greater wins, so the running
    process (listed first), then the one ready longest, wins a tie. Goodness (Linux 2.2): 1000 +
    rt for a real-time process, else counter + priority while the counter lasts, 0 once it is
    spent; never negative."""
    best, top = candidates[0], -1
    for p in candidates:
        good = 1000 + p.rt if p.rt else (p.counter + p.priority if p.counter > 0 else 0)
        if good > top:
            best, top = p, good
    return best, top


class Node:
    """A CPU, its processes and its ready list."""

    def __init__(self, engine, index: int, params: dict, tick_phase: float):
        self.engine, self.index = engine, index
        self.tick, self.switch_cost = params["tick"], params["switch_cost"]
        self.procs: list[Proc] = []
        self.ready: list[Proc] = []
        self.current: Proc | None = None
        self.start = 0.0          # when the current process's stretch began
        self.timer = None
        self.switches = 0
        self._schedule = engine.schedule
        self._done = self._step_done  # bound once: every step's timer calls it
        engine.schedule(tick_phase, self._tick)

    def add(self, p: Proc) -> Proc:
        self.procs.append(p)
        return p

    # -- the running process's steps -------------------------------------------------------------
    def run(self, p: Proc, need: float, then: Callable[[], None]) -> None:
        """p's next step: ``need`` µs of CPU, then ``then()`` (p keeps the CPU if it has it)."""
        p.then = then
        if p is not self.current:
            p.need += need
            return
        self._settle()
        if self.timer is not None:
            self.timer.cancel()
        p.need += need
        self._arm()

    def _arm(self) -> None:
        p = self.current
        self.start = self.engine.now
        self.timer = self._schedule(p.need, self._done) if p.need < INF else None

    def _settle(self) -> None:
        """Charge the running stretch to the current process."""
        p, now = self.current, self.engine.now
        ran = now - self.start
        if ran == 0.0:  # settled at this instant already (a step that follows a step)
            return
        need = p.need
        if need < INF:  # a step of finite length (an endless one is the idle loop)
            if ran > need:
                ran = need
            p.need = need - ran
        p.cpu += ran
        owed = p.owed
        paid = ran if ran < owed else owed
        p.owed = owed - paid
        if p.spinning:
            p.spun += ran - paid
        self.start = now

    def drop_step(self, p: Proc) -> None:
        """Abandon p's current step (a spin whose message came): what ran of it stays charged."""
        if p is self.current:
            self._settle()
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
        p.need, p.then = 0.0, None

    def _step_done(self) -> None:
        p = self.current
        self.timer = None
        self._settle()
        p.need = 0.0
        then, p.then = p.then, None
        then()

    # -- leaving and joining the CPU -------------------------------------------------------------
    def block(self, p: Proc) -> None:
        """p sleeps (waits for something); if it had the CPU, the CPU goes to another."""
        p.state = BLOCKED
        p.blocks += 1
        if p is self.current:
            self.schedule()
        elif p in self.ready:
            self.ready.remove(p)

    def exit(self, p: Proc) -> None:
        """p has finished its program and leaves the CPU for good."""
        p.state = BLOCKED
        if p is self.current:
            self.schedule()

    def wake(self, p: Proc) -> None:
        """p becomes runnable; it preempts the running process as Linux 2.2 decides."""
        p.state = READY
        if p.stopped:
            return
        if p not in self.ready:
            self.ready.append(p)
        cur = self.current
        if cur is None or p.rt > cur.rt or (not p.rt and not cur.rt and p.counter > cur.counter + 3):
            self.schedule()

    def stop(self, p: Proc) -> None:
        """STOP signal: p cannot run until ``cont``."""
        p.stopped = True
        if p is self.current:
            self.schedule()
        elif p in self.ready:
            self.ready.remove(p)

    def cont(self, p: Proc) -> None:
        """CONTINUE signal: p runs again if it is not waiting for something."""
        p.stopped = False
        if p.state != BLOCKED:
            self.wake(p)

    def schedule(self) -> None:
        """Give the CPU to the runnable process of greatest goodness (Linux 2.2's schedule()); when
        every candidate's counter is spent, every process's counter is recalculated first."""
        prev, ready = self.current, self.ready
        keep = False
        if prev is not None:
            self._settle()
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if prev.state == RUNNING:
                prev.state = READY
            keep = prev.state == READY and not prev.stopped
            others = [p for p in ready if p is not prev]
            candidates = [prev, *others] if keep else others
        else:
            candidates = ready
        nxt = None
        if candidates:
            nxt, top = _best(candidates)
            if top == 0:               # every counter spent: recalculate all, sleepers included
                for p in self.procs:
                    p.counter = p.counter // 2 + p.priority
                nxt = _best(candidates)[0]
        if keep and nxt is not prev and prev not in ready:
            ready.append(prev)
        if nxt is not None:
            if nxt in ready:
                ready.remove(nxt)
            nxt.state = RUNNING
        self.current = nxt
        if nxt is not prev:
            self._switch(prev, nxt)
        if nxt is not None:
            self._arm()

    def _switch(self, prev: Proc | None, nxt: Proc | None) -> None:
        """Charge the switch: W for the process leaving the CPU, W for the one taking it (to the incoming step)."""
        cost = self.switch_cost * ((prev is not None) + (nxt is not None))
        self.switches += 1
        if nxt is not None:
            nxt.need += cost
            nxt.overhead += cost
            nxt.owed += cost

    # -- the clock -------------------------------------------------------------------------------
    def _tick(self) -> None:
        p = self.current
        if p is not None and not p.rt:
            p.counter -= 1
            if p.counter <= 0:
                p.counter = 0
                self.schedule()
        self.engine.schedule(self.tick, self._tick)

    def close(self) -> None:
        """The run ends: charge the running process's stretch so far (its accounts are then complete)."""
        if self.current is not None:
            self._settle()

    def runnable(self) -> int:
        """Processes ready or running (a monitor probe)."""
        return len(self.ready) + (self.current is not None)
