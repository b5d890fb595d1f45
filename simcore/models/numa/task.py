"""Tasks: their fixed description (drawn once per replication), their draws and their results.

A task's CPU bursts and I/O waits come from its own generator, seeded from the workload
stream, and are drawn in the task's own order: its first burst at creation, and when a burst
ends in I/O, the next burst and then the I/O wait. What a task draws therefore never depends on
the policy or on other tasks (common random numbers).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simcore.models.numa.timeslice import timeslice

#: task states
NEW, QUEUED, RUNNING, BLOCKED, DONE = "new", "queued", "running", "blocked", "done"

_CHUNK = 64           # the fewest draws a task's generator is asked for at once


class TaskSpec(NamedTuple):
    """What the workload fixes about a task (identical under every policy)."""

    tid: int
    created: float      # ms
    nice: int
    demand: float       # CPU ms at local-memory speed
    parent_cpu: int     # CPU of the creating (parent) process
    io_bound: bool      # bursts end in I/O waits (corr05) or the task is CPU-bound
    seed: int           # seed of the task's own burst/I-O generator


class Draws:
    """The draws of one task's own generator (seeded from its spec): its standard exponentials in
    the order drawn, drawn on first use and kept: the runs of several policies on one workload read
    the same draws instead of re-creating the generator and re-drawing them. (Numpy's generator
    draws them one after another, so how many are asked for at a time changes none.)"""

    __slots__ = ("seed", "rng", "values", "flat")

    def __init__(self, seed: int):
        self.seed = seed
        self.flat = None       # (key, array): the draws a run takes, kept by system._task_draws
        self.rng: np.random.Generator | None = None
        self.values = np.zeros(0)

    def take(self, k: int) -> np.ndarray:
        """The first ``k`` draws (a view: not to be written)."""
        have = len(self.values)
        if have < k:
            if self.rng is None:
                self.rng = np.random.Generator(np.random.PCG64(self.seed))
            more = self.rng.standard_exponential(max(k - have, have, _CHUNK))
            self.values = np.concatenate([self.values, more])
        return self.values[:k]


class Task:
    """One task of a run: what it is (its spec, priority, timeslice, mean burst, draws) and, once
    the run is over, what became of it (``system.NumaSystem.close``); its trace as the run goes."""

    __slots__ = ("spec", "tid", "prio", "slice", "mean_burst", "_src", "state", "cpu", "home", "migrations",
                 "finished", "cpu_time", "level_time", "trace")

    def __init__(self, spec: TaskSpec, params: dict, trace: bool = False, draws: dict | None = None):
        """``draws``: a dict shared by the runs on one workload, seed -> :class:`Draws` (optional)."""
        self.spec = spec
        self.tid = spec.tid
        self.prio = 120 + spec.nice  # static priority; no sleep-average bonus (see model docs)
        self.slice = timeslice(spec.nice, params["def_timeslice"], params["min_timeslice"])
        self.mean_burst = self.slice + spec.nice * params["burst_nice_ms"]
        self.state = NEW
        self.cpu = -1
        self.home = -1
        self.migrations = 0
        self.finished = float("nan")
        self.cpu_time = 0.0          # wall CPU time received (ms)
        self.level_time: dict[int, float] = {}
        self.trace: list | None = [] if trace else None
        src = None if draws is None else draws.get(spec.seed)
        if src is None:
            src = Draws(spec.seed)
            if draws is not None:
                draws[spec.seed] = src
        self._src = src
