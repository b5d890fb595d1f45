"""Tasks: their fixed description (drawn once per replication) and their results.

A task's CPU bursts and I/O waits come from its own generator (numpy's PCG64 seeded with the
task's ``seed``, drawn from the workload stream; compiled in ``simcore.core.pcg64_kernels``), and
are drawn in the task's own order: its first burst at creation, and when a burst ends in I/O, the
next burst and then the I/O wait. What a task draws therefore never depends on the policy or on
other tasks (common random numbers).
"""

from __future__ import annotations

from typing import NamedTuple

from simcore.models.numa.timeslice import timeslice

#: task states
NEW, QUEUED, RUNNING, BLOCKED, DONE = "new", "queued", "running", "blocked", "done"


class TaskSpec(NamedTuple):
    """What the workload fixes about a task (identical under every policy)."""

    tid: int
    created: float      # ms
    nice: int
    demand: float       # CPU ms at local-memory speed
    parent_cpu: int     # CPU of the creating (parent) process
    io_bound: bool      # bursts end in I/O waits (corr05) or the task is CPU-bound
    seed: int           # seed of the task's own burst/I-O generator


class Task:
    """One task of a run: what it is (its spec, priority, timeslice, mean burst) and, once
    the run is over, what became of it (``system.NumaSystem.close``); its trace as the run goes."""

    __slots__ = ("spec", "tid", "prio", "slice", "mean_burst", "state", "cpu", "home", "migrations",
                 "finished", "cpu_time", "level_time", "trace")

    def __init__(self, spec: TaskSpec, params: dict, trace: bool = False):
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
