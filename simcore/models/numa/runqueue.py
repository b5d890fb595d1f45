"""Per-CPU run queue of the O(1) scheduler: active and expired priority arrays, load average.

Only the parts that shape task order and balancing are kept: one FIFO list per priority,
a bitmap to find the highest non-empty priority, the array swap when the active array
empties, and the tick-driven load average of 2.6.11 computed lazily (no tick events).
"""

from __future__ import annotations

import math
from collections import deque

from simcore.models.numa.task import QUEUED, Task

SCHED_LOAD_SCALE = 128
N_PRIO = 40  # static priorities 100..139 (nice -20..19); no real-time tasks


def tick_index(now: float, tick: float) -> int:
    """The number of the last tick at or before ``now``, with the 1e-9 tolerance of the timers'
    ``on_tick`` (``now // tick`` would put an attempt made at tick 10 of a 0.1 ms tick, t = 1.0,
    in tick 9: 1.0 // 0.1 = 9)."""
    return math.floor(now / tick + 1e-9)


def decayed(avg: int, cur: int, k: int) -> int:
    """cpu_load after ``k`` ticks at load ``cur``: 2.6.11 sets cpu_load = (old + now) / 2 each tick
    in integers, rounding up when rising, so the distance to ``cur`` is halved (floor) per tick."""
    d = avg - cur
    return cur + (d >> k) if d >= 0 else cur - ((-d) >> k)


class RunQueue:
    """Queued tasks of one CPU, its current task and its load history."""

    __slots__ = ("cpu", "node", "arrays", "bitmaps", "n_queued", "curr", "load_avg", "load_tick",
                 "tick", "instant", "timer", "run_start", "run_factor", "seg_end", "pending", "end_order", "np_avg", "np_tick", "mirror",
                 "frow", "lrow")

    def __init__(self, cpu: int, node: int, tick: float, instant_load: bool):
        self.cpu = cpu
        self.node = node
        # arrays[0] = active, arrays[1] = expired; each a list of deques by priority
        self.arrays = ([deque() for _ in range(N_PRIO)], [deque() for _ in range(N_PRIO)])
        self.bitmaps = [0, 0]
        self.n_queued = 0
        self.curr: Task | None = None
        self.load_avg = 0       # cpu_load, an integer as in the kernel
        self.load_tick = 0
        self.tick = tick
        self.instant = instant_load
        self.timer = None
        self.run_start = 0.0
        self.run_factor = 1.0
        self.seg_end = 0.0      # when the current task's burst or slice ends (its timer, unless ends are pending)
        self.pending = 0        # ends of the current task passed over by its timer (scheduler._look_ahead)
        self.end_order = 1      # SimPy priority of this CPU's run-end timers (set by the system)
        self.np_avg = None   # machine-wide mirrors (numpy) of load_avg / load_tick, set by the system
        self.np_tick = None
        self.mirror = None   # the system: told (np_dirty) when the mirrors change
        self.frow = None     # the system's slowdown factor and distance level by home node, of this CPU's node
        self.lrow = None

    @property
    def nr_running(self) -> int:
        return self.n_queued + (self.curr is not None)

    # -- load --------------------------------------------------------------------------------
    def settle_load(self, now: float) -> None:
        """Bring the load average up to the last tick at or before ``now`` (call before nr changes)."""
        if self.instant:
            return
        t = tick_index(now, self.tick)
        k = t - self.load_tick
        if k > 0:
            cur = self.nr_running * SCHED_LOAD_SCALE
            self.load_avg = decayed(self.load_avg, cur, k)
            self.load_tick = t
            if self.np_avg is not None:
                self.np_avg[self.cpu] = self.load_avg
                self.np_tick[self.cpu] = t
                self.mirror.np_dirty = True

    def loads(self, now: float) -> tuple[float, float]:
        """(source_load, target_load): min and max of the tick average and the instant load."""
        cur = self.nr_running * SCHED_LOAD_SCALE
        if self.instant:
            return cur, cur
        self.settle_load(now)
        avg = self.load_avg
        return (avg, cur) if avg < cur else (cur, avg)

    # -- queue -------------------------------------------------------------------------------
    def enqueue(self, task: Task, expired: bool = False, head: bool = False) -> None:
        a = 1 if expired else 0
        i = task.prio - 100
        lst = self.arrays[a][i]
        if head:
            lst.appendleft(task)
        else:
            lst.append(task)
        self.bitmaps[a] |= 1 << i
        self.n_queued += 1
        task.expired = expired
        task.state = QUEUED
        task.cpu = self.cpu

    def dequeue(self, task: Task) -> None:
        a = 1 if task.expired else 0
        i = task.prio - 100
        lst = self.arrays[a][i]
        lst.remove(task)
        if not lst:
            self.bitmaps[a] &= ~(1 << i)
        self.n_queued -= 1

    def pick_next(self) -> Task | None:
        """Remove and return the head of the highest-priority active list (swapping arrays if needed)."""
        if not self.n_queued:
            return None
        if not self.bitmaps[0]:
            self.arrays = (self.arrays[1], self.arrays[0])
            bm = self.bitmaps[1]
            self.bitmaps = [bm, 0]
            arr = self.arrays[0]
            b = bm
            while b:            # only the non-empty lists (bitmap bits)
                i = (b & -b).bit_length() - 1
                b &= b - 1
                for t in arr[i]:
                    t.expired = False
        else:
            bm = self.bitmaps[0]
        i = (bm & -bm).bit_length() - 1
        lst = self.arrays[0][i]
        task = lst.popleft()
        if not lst:
            self.bitmaps[0] = bm & ~(1 << i)
        self.n_queued -= 1
        return task

    def migration_candidates(self):
        """Queued tasks in move_tasks order: expired array first, then active; by priority, tail first."""
        for a in (1, 0):
            bm = self.bitmaps[a]
            arr = self.arrays[a]
            while bm:
                i = (bm & -bm).bit_length() - 1
                bm &= bm - 1
                yield from reversed(list(arr[i]))
