"""Tasks: their fixed description (drawn once per replication) and their run-time state.

A task's CPU bursts and I/O waits come from its own generator, seeded from the workload
stream, and are drawn in the task's own order: its first burst at creation, and when a burst
ends in I/O, the next burst and then the I/O wait. What a task draws therefore never depends on
the policy or on other tasks (common random numbers).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: task states
NEW, QUEUED, RUNNING, BLOCKED, DONE = "new", "queued", "running", "blocked", "done"

_BATCH = 32


class TaskSpec(NamedTuple):
    """What the workload fixes about a task (identical under every policy)."""

    tid: int
    created: float      # ms
    nice: int
    demand: float       # CPU ms at local-memory speed
    parent_cpu: int     # CPU of the creating (parent) process
    io_bound: bool      # bursts end in I/O waits (corr05) or the task is CPU-bound
    seed: int           # seed of the task's own burst/I-O generator


def timeslice(nice: int, def_timeslice: float, min_timeslice: float) -> float:
    """O(1) scheduler timeslice in ms: max(base * (140 - static_prio) / 20, MIN_TIMESLICE)."""
    base = 4 * def_timeslice if nice < 0 else def_timeslice
    return max(base * (20 - nice) / 20, min_timeslice)


class Draws:
    """The draws of one task's own generator (seeded from its spec), in batches of ``_BATCH``
    standard exponentials, each drawn on first use and kept: the runs of several policies on one
    workload read the same batches instead of re-creating the generator and re-drawing them."""

    __slots__ = ("seed", "rng", "batches", "flat")

    def __init__(self, seed: int):
        self.seed = seed
        self.flat = None       # (key, array): the draws a run takes, kept by compiled_system
        self.rng: np.random.Generator | None = None
        self.batches: list[list[float]] = []

    def batch(self, j: int) -> list[float]:
        """Batch ``j`` (0, 1, ...): the generator's (j+1)-th ``standard_exponential(_BATCH)``."""
        b = self.batches
        while len(b) <= j:
            if self.rng is None:
                self.rng = np.random.Generator(np.random.PCG64(self.seed))
            b.append(self.rng.standard_exponential(_BATCH).tolist())
        return b[j]


class Task:
    """Run-time state of one task under one policy."""

    __slots__ = ("spec", "tid", "prio", "slice", "slice_left", "demand_left", "burst_left", "burst_io",
                 "state", "cpu", "home", "expired", "last_ran", "migrations", "finished", "mean_burst",
                 "mean_io", "io_rest", "_draws", "_i", "_b", "_src", "cpu_time", "level_time", "trace", "seg_start",
                 "moved_unrun")

    def __init__(self, spec: TaskSpec, params: dict, trace: bool = False, draws: dict | None = None):
        """``draws``: a dict shared by the runs on one workload, seed -> :class:`Draws` (optional)."""
        self.spec = spec
        self.tid = spec.tid
        self.prio = 120 + spec.nice  # static priority; no sleep-average bonus (see model docs)
        self.slice = timeslice(spec.nice, params["def_timeslice"], params["min_timeslice"])
        self.slice_left = self.slice
        self.demand_left = spec.demand
        self.mean_burst = self.slice + spec.nice * params["burst_nice_ms"]
        self.mean_io = params["mean_io"]
        self.io_rest = params["io_wait"] == "rest-of-slice"
        self.state = NEW
        self.cpu = -1
        self.home = -1
        self.expired = False
        self.last_ran = -1e18
        self.migrations = 0
        self.moved_unrun = False     # migrated and not yet run on the destination
        self.finished = float("nan")
        self.cpu_time = 0.0          # wall CPU time received (ms)
        self.level_time: dict[int, float] = {}
        self.trace: list | None = [] if trace else None
        self.seg_start = spec.created
        src = None if draws is None else draws.get(spec.seed)
        if src is None:
            src = Draws(spec.seed)
            if draws is not None:
                draws[spec.seed] = src
        self._src = src
        self._draws: list[float] = []
        self._i = 0
        self._b = -1                 # index of the current batch in ``_src``
        self.burst_left = 0.0
        self.burst_io = False
        self.next_burst()

    def _exp(self) -> float:
        if self._i >= len(self._draws):
            self._b += 1
            self._draws = self._src.batch(self._b)
            self._i = 0
        self._i += 1
        return self._draws[self._i - 1]

    def next_burst(self) -> None:
        """Draw the next CPU burst (work, ms); it ends in I/O iff it is shorter than the timeslice."""
        if self.spec.io_bound:
            i = self._i                  # self._exp(), inlined
            if i >= len(self._draws):
                self._b += 1
                self._draws = self._src.batch(self._b)
                i = 0
            self._i = i + 1
            b, io = self._shape(self._draws[i])
        else:
            b, io = self.demand_left, False
        if b >= self.demand_left:
            b, io = self.demand_left, False
        self.burst_left, self.burst_io = b, io
        self.demand_left -= b  # demand beyond the current burst (exactly 0.0 after the last one)

    def _shape(self, x: float) -> tuple[float, bool]:
        """The burst of a standard exponential draw ``x``: min(mean_burst x, slice), and whether it
        ends in I/O (shorter than the slice)."""
        b = self.mean_burst * x
        return (b, True) if b < self.slice else (self.slice, False)

    def upcoming(self):
        """The bursts that ``next_burst`` will draw from here on, as (burst, ends in I/O, demand
        left after it), computed from the same draws without taking them. Only for I/O-bound tasks
        (a CPU-bound task's one burst is its whole demand); the I/O waits that would come between
        are not skipped over, so a caller stops at the first burst that ends in I/O, or at the
        last one (cut to the demand left, after which nothing follows)."""
        demand, i, j, draws = self.demand_left, self._i, self._b, self._draws
        while True:
            if i >= len(draws):
                j += 1
                draws = self._src.batch(j)
                i = 0
            b, io = self._shape(draws[i])
            i += 1
            b = min(b, demand)
            demand -= b
            yield b, io, demand

    def draw_io(self) -> float:
        """Length of the I/O wait that follows the burst just ended, ms: an exponential draw, or
        (io_wait 'rest-of-slice') the rest of the timeslice, which is then refilled."""
        if self.io_rest:
            wait, self.slice_left = max(self.slice_left, 0.0), self.slice
            return wait
        return self.mean_io * self._exp()

