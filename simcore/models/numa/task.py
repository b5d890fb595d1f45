"""Tasks: their fixed description (drawn once per replication) and their results.

A task's CPU bursts and I/O waits come from its own generator (numpy's PCG64 seeded with the
task's ``seed``, drawn from the workload stream; compiled in ``simcore.core.pcg64_kernels``), and
are drawn in the task's own order: its first burst at creation, and when a burst ends in I/O, the
next burst and then the I/O wait. What a task draws therefore never depends on the policy or on
other tasks (common random numbers).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

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
        self.prio, self.slice, self.mean_burst = derived(spec.nice, params)
        self.state = NEW
        self.cpu = -1
        self.home = -1
        self.migrations = 0
        self.finished = float("nan")
        self.cpu_time = 0.0          # wall CPU time received (ms)
        self.level_time: dict[int, float] = {}
        self.trace: list | None = [] if trace else None


def derived(nice: int, params: dict) -> tuple[int, float, float]:
    """A task's static priority (no sleep-average bonus, see the model's docs), timeslice and mean
    CPU burst, from its nice value."""
    tslice = timeslice(nice, params["def_timeslice"], params["min_timeslice"])
    return 120 + nice, tslice, tslice + nice * params["burst_nice_ms"]


class TaskColumns(NamedTuple):
    """A workload's tasks as arrays, by the task's index in the workload: what the kernels' buffers
    are filled from, built once for every policy's run of the workload (``columns``)."""

    created: np.ndarray      # creation time, ms
    parent: np.ndarray       # the creating process's CPU
    prio: np.ndarray         # static priority
    slice: np.ndarray        # timeslice, ms
    mean_burst: np.ndarray   # mean CPU burst, ms
    demand: np.ndarray       # CPU ms at local-memory speed
    io_bound: np.ndarray     # bursts end in I/O waits
    seed: np.ndarray         # the task's own generator's seed
    order: np.ndarray        # the tasks in creation order (ties by index)

    def __len__(self) -> int:
        return len(self.created)


#: the parameters ``derived`` reads (a workload's columns are kept per their values: ``columns``)
DERIVED_FROM = ("def_timeslice", "min_timeslice", "burst_nice_ms")


def columns(workload: list[TaskSpec], params: dict, shared: dict | None = None) -> TaskColumns:
    """The workload as ``TaskColumns``; ``shared``: a dict kept by the runs of one workload, where
    they are found again by the next policy's run."""
    key = ("columns", *(params[name] for name in DERIVED_FROM))
    if shared is not None and key in shared:
        return shared[key]
    by_nice = {nice: derived(nice, params) for nice in {spec.nice for spec in workload}}
    prio, tslice, mean = (np.array([by_nice[spec.nice][k] for spec in workload], dtype=dtype)
                          for k, dtype in ((0, np.int64), (1, np.float64), (2, np.float64)))
    created = np.array([spec.created for spec in workload], dtype=np.float64)
    found = TaskColumns(created, np.array([spec.parent_cpu for spec in workload], dtype=np.int64), prio, tslice, mean,
                        np.array([spec.demand for spec in workload], dtype=np.float64),
                        np.array([spec.io_bound for spec in workload], dtype=np.bool_),
                        np.array([spec.seed for spec in workload], dtype=np.int64),
                        np.argsort(created, kind="stable").astype(np.int64))
    if shared is not None:
        shared[key] = found
    return found
