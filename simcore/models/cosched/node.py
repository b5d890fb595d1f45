"""One mono-processor DCNDC node: a round-robin ready queue, blocking receives, a message buffer per task.

The local scheduler is the paper's Algorithm 1: the head of the ready queue (RQ) runs for at
most one ``quantum``; a task that leaves the CPU for any reason other than ending or blocking
(its slice expired, or a coscheduling decision took the CPU from it) goes to the bottom of the
RQ. A task that reaches the point where it reads message j (``Task.points``) takes it from its
message buffer queue (MBQ) if it has arrived; otherwise it waits for it (the policy says how:
block at once, or spin first) and leaves the RQ. When a message arrives for a task that is not
running, the task joins the bottom of the RQ if it was blocked (Algorithm 2, line 3) and the
policy may then reorder the RQ or give it the CPU (``Policy.on_message``).

NodeCoDe counts, over every message that arrives, those whose receiver holds the CPU once the
arrival has been handled: it was running (or spinning for it), or it was given the CPU because
of the message (docs/cosched-model.md).
"""

from __future__ import annotations

from simcore.models.cosched.workload import Task

READY, RUNNING, SPINNING, BLOCKED, DONE = "ready", "running", "spinning", "blocked", "done"


class TaskState:
    """A task's progress on the node (``points`` and ``service`` are its task's, kept at hand)."""

    __slots__ = ("task", "points", "service", "state", "executed", "consumed", "arrived", "overtaken", "ready_since",
                 "waited", "done_at", "spun")

    def __init__(self, task: Task):
        self.task, self.points, self.service = task, task.points, task.service
        self.state = READY
        self.executed = 0.0       # CPU time of program progress (spinning excluded)
        self.consumed = 0         # messages read
        self.arrived = 0          # messages arrived (pending in the MBQ: arrived - consumed)
        self.overtaken = 0        # times another task overtook it in the RQ (SDCA's cap)
        self.ready_since = task.arrival
        self.waited = 0.0         # time spent ready in the RQ
        self.done_at = float("nan")
        self.spun = 0.0           # CPU time spent spinning

    @property
    def pending(self) -> int:
        """Messages in the MBQ."""
        return self.arrived - self.consumed


class Node:
    """The node's CPU, RQ and counters; ``policy`` decides on waits and message arrivals.

    A task alone on the node runs slice after slice, and each slice end decides nothing: it goes
    to the bottom of the empty RQ and comes back at once. With ``lookahead`` (the default), the
    slice ends of a lone task that come before the next event already on SimPy's queue are done
    in a loop when its previous slice ends, with the same arithmetic, instead of as events: nothing
    can reach the node before that next event, since every event that could (an arrival, a
    message, a monitor's sample) is queued before it fires. Only the event count changes; with
    ``lookahead = False`` every slice end is an event (the reference, for the tests).
    """

    lookahead = True

    def __init__(self, engine, params: dict, policy, done):
        self.engine, self.policy, self.done = engine, policy, done
        self.quantum = params["quantum"]
        self.rq: list[TaskState] = []
        self.blocked = 0
        self.running: TaskState | None = None
        self.timer = None
        self.start = 0.0          # when the running task's current stretch began
        self.slice_end = 0.0
        self.messages = self.coscheduled = self.switches = 0
        self.busy = 0.0           # CPU time of progress and spinning, up to the last stretch that ended
        self.spun = 0.0           # of which spinning
        self._schedule = engine.schedule
        self._on_reach, self._on_slice_end = self._reach, self._slice_end   # bound once: every stretch's timer
        self._own_timer = False   # handling a stretch's timer: whatever it does ends with the next timer

    # -- arrivals -------------------------------------------------------------------------------
    def arrive(self, task: Task) -> TaskState:
        """A new task joins the bottom of the RQ; its messages are scheduled to arrive."""
        state = TaskState(task)
        for at in task.sends:
            self.engine.call(at - self.engine.now, self.message, state)
        self.rq.append(state)
        if self.running is None:
            self.dispatch_head()
        return state

    def message(self, t: TaskState) -> None:
        """A message arrives for ``t``: buffered; a spinning receiver takes it; otherwise the policy acts."""
        t.arrived += 1
        self.messages += 1
        if t.state == SPINNING:
            self._stop_spin(t)
            t.consumed += 1
            t.state = RUNNING
            self._go()
        elif t.state in (READY, BLOCKED):
            if t.state == BLOCKED:
                self.blocked -= 1
                self._to_bottom(t)
            if self.running is None:
                self.dispatch_head()
            else:
                self.policy.on_message(self, t)
        if self.running is t:
            self.coscheduled += 1

    # -- the CPU --------------------------------------------------------------------------------
    def dispatch_head(self) -> None:
        """Give the idle CPU to the head of the RQ, if any."""
        if self.rq:
            self.dispatch(self.rq.pop(0))

    def dispatch(self, t: TaskState) -> None:
        """Give the idle CPU to ``t`` (already out of the RQ) for a new slice."""
        now = self.engine.now
        t.waited += now - t.ready_since
        t.state = RUNNING
        self.running, self.slice_end = t, now + self.quantum
        self._go()

    def executed_now(self, t: TaskState) -> float:
        """``t``'s executed CPU time at this instant (its current stretch included)."""
        if t is self.running and t.state == RUNNING:
            return t.executed + (self.engine.now - self.start)
        return t.executed

    def preempt_for(self, t: TaskState) -> None:
        """A coscheduling decision: the running task goes to the bottom of the RQ and ``t`` (in the RQ) runs."""
        out = self.running
        if out.state == SPINNING:
            self._stop_spin(out)
        else:
            self.timer.cancel()
            self._settle(out)
        self._to_bottom(out)
        self.rq.remove(t)
        self.running = None
        self.switches += 1
        self.dispatch(t)

    def _go(self) -> None:
        """The running task reads what has arrived, then runs to its next read, its end or the slice end."""
        t = self.running
        points, executed, k = t.points, t.executed, t.consumed
        n = len(points)
        while k < n and points[k] <= executed:
            if t.arrived == k:            # message k is not in the MBQ
                t.consumed = k
                self._wait(t)
                return
            k += 1
        t.consumed = k
        if executed >= t.service:
            self._finish(t)
            return
        now = self.engine.now
        left = self.slice_end - now
        if left <= 0.0:
            self._expire(t)
            return
        target = points[k] if k < n else t.service
        need = target - executed
        self.start, self.target = now, target
        if need <= left:
            self.timer = self._schedule(need, self._on_reach)
        elif self._own_timer and not self.rq and self.lookahead:
            self._lone_slices(t, now, left, target)
        else:
            self.timer = self._schedule(left, self._on_slice_end)

    def _lone_slices(self, t: TaskState, now: float, left: float, target: float) -> None:
        """``t`` runs alone from ``now``, its slice ending after ``left`` and before its target:
        the slice ends before the next queued event are done here, as ``_slice_end`` and
        ``_expire`` would do them (a slice end that would bring ``t`` to its target stays an
        event); the timer of the next reach or slice end is placed where they would place it."""
        horizon = self.engine.env.peek()
        executed, busy, quantum = t.executed, self.busy, self.quantum
        at = now + left                       # when the slice's timer fires (SimPy adds the delay to now)
        while at < horizon:
            ran, room = at - now, target - executed   # the slice end at ``at``: _slice_end's settle
            if room < ran:
                ran = room
            done, slice_end = executed + ran, at + quantum
            if done >= target or done >= t.service or slice_end <= at:   # then _go would read, finish or expire
                break
            now, left, executed, busy = at, slice_end - at, done, busy + ran
            self.slice_end = slice_end
            if target - executed <= left:     # the task reaches its target in this slice
                t.executed, self.busy, self.start = executed, busy, now
                self.timer = self.engine.call_at(now + (target - executed), self._reach, None)
                return
            at = now + left
        t.executed, self.busy, self.start = executed, busy, now
        self.timer = self.engine.call_at(at, self._slice_end, None)

    def _reach(self, _=None) -> None:
        """The running task has reached its target (a read point or its end). (A timer placed by
        ``_lone_slices`` passes None.)"""
        self._own_timer = True
        t = self.running
        self.busy += self.target - t.executed
        t.executed = self.target
        self._go()
        self._own_timer = False

    def _slice_end(self, _=None) -> None:
        """The running task's slice is over before its target: what it ran is settled, then it
        expires. (A timer placed by ``_lone_slices`` passes None.)"""
        self._own_timer = True
        t = self.running
        self._settle(t)
        self._expire(t)
        self._own_timer = False

    def _settle(self, t: TaskState) -> None:
        """Add the running stretch to ``t``'s executed time (never past its target)."""
        ran = min(self.engine.now - self.start, self.target - t.executed)
        t.executed += ran
        self.busy += ran

    def _expire(self, t: TaskState) -> None:
        """``t``'s slice is over: it goes to the bottom of the RQ and the head runs a new slice
        (``t`` itself when the RQ was empty: its round trip through the RQ is skipped)."""
        rq, now = self.rq, self.engine.now
        if rq:
            t.state, t.ready_since = READY, now
            rq.append(t)
            t = self.running = rq.pop(0)
            t.waited += now - t.ready_since
            t.state = RUNNING
        self.slice_end = now + self.quantum
        self._go()

    def _wait(self, t: TaskState) -> None:
        """``t`` needs a message that has not arrived: spin (if the policy says so) or block."""
        spin = min(self.policy.spin, self.slice_end - self.engine.now)
        if spin > 0.0:
            t.state, self.start = SPINNING, self.engine.now
            self.timer = self.engine.schedule(spin, self._spin_over)
        else:
            self._block(t)

    def _stop_spin(self, t: TaskState) -> None:
        self.timer.cancel()
        self._account_spin(t)

    def _spin_over(self) -> None:
        t = self.running
        self._account_spin(t)
        self._block(t)

    def _account_spin(self, t: TaskState) -> None:
        spun = self.engine.now - self.start
        t.spun += spun
        self.spun += spun
        self.busy += spun

    def _block(self, t: TaskState) -> None:
        t.state = BLOCKED
        self.blocked += 1
        self.running = None
        self.dispatch_head()

    def _finish(self, t: TaskState) -> None:
        t.state, t.done_at = DONE, self.engine.now
        self.running = None
        self.done(t)
        self.dispatch_head()

    def _to_bottom(self, t: TaskState) -> None:
        t.state, t.ready_since = READY, self.engine.now
        self.rq.append(t)

    def pending_messages(self) -> int:
        """Messages in every MBQ of the node (a monitor probe)."""
        tasks = self.rq + ([self.running] if self.running else [])
        return sum(t.pending for t in tasks)
