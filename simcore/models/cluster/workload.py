"""Job streams for the cluster model, drawn once per replication and shared by every policy.

A workload is immutable: each policy run builds its own mutable processes from it, so all
policies of one replication see the same arrivals, demands, memory sizes and home machines
(common random numbers). Each quantity comes from its own named stream ("arrivals", "jobs",
"demand", "memory", "home", "background", and "process-demand", "process-memory" for
parallel processes drawn one by one), so changing how one is drawn never shifts another.

Demands are CPU seconds on a speed-1.0 machine; memory sizes are in MB.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simcore.core.rng import Streams
from simcore.errors import InputError


class ProcSpec(NamedTuple):
    """One process of the job stream."""

    pid: int
    job: int
    arrival: float
    demand: float
    memory: float
    home: int
    measured: bool


class BackgroundSpec(NamedTuple):
    """A background process pinned to ``machine``; ``seed`` drives its run/sleep cycle."""

    machine: int
    seed: int
    max_period: float


class Workload(NamedTuple):
    """The processes sorted by arrival, and the background processes."""

    procs: tuple[ProcSpec, ...]
    background: tuple[BackgroundSpec, ...] = ()

    def arrival_groups(self) -> list[tuple[float, tuple[ProcSpec, ...]]]:
        """Processes grouped by identical arrival time, in time order."""
        groups: list[tuple[float, list[ProcSpec]]] = []
        for spec in self.procs:
            if groups and groups[-1][0] == spec.arrival:
                groups[-1][1].append(spec)
            else:
                groups.append((spec.arrival, [spec]))
        return [(t, tuple(ps)) for t, ps in groups]


def poisson_times(rng: np.random.Generator, mean_gap: float, window: float) -> np.ndarray:
    """Arrival instants of a Poisson process with mean gap ``mean_gap`` on [0, window)."""
    expected = window / mean_gap
    times = np.cumsum(rng.exponential(mean_gap, int(expected + 6 * np.sqrt(expected) + 16)))
    while times[-1] < window:
        more = np.cumsum(rng.exponential(mean_gap, int(expected) + 16)) + times[-1]
        times = np.concatenate([times, more])
    return times[times < window]


def amir(params: dict, streams: Streams, n_machines: int) -> Workload:
    """Amir et al. section 5: single jobs (2/r s, (1/m)% memory) and 5% parallel jobs (20/r s)."""
    times = poisson_times(streams["arrivals"], float(params["mean_interarrival"]), float(params["arrival_window"]))
    n = times.size
    jobs = streams["jobs"]
    parallel = jobs.random(n) < float(params["parallel_fraction"])
    width = np.where(parallel, jobs.integers(1, int(params["parallel_procs_max"]) + 1, n), 1)
    r = np.maximum(streams["demand"].random(n), np.finfo(float).tiny)
    scale = np.where(parallel, float(params["parallel_cpu_scale"]), float(params["single_cpu_scale"]))
    cap = np.where(parallel, float(params["parallel_cpu_cap"]), float(params["single_cpu_cap"]))
    demand = np.minimum(scale / r, cap)
    m = np.maximum(streams["memory"].random(n), np.finfo(float).tiny)
    percent = np.minimum(1.0 / m, float(params["memory_cap_percent"]))
    memory = float(params["reference_memory_mb"]) * percent / 100.0
    home = streams["home"].integers(0, n_machines, n)
    own = _own_draws(params, streams, parallel, width)
    procs, pid = [], 0
    for j in range(n):
        for k in range(int(width[j])):
            d, mem = own(j, k) if own and parallel[j] else (demand[j], memory[j])
            procs.append(ProcSpec(pid, j, float(times[j]), float(d), float(mem), int(home[j]), True))
            pid += 1
    return Workload(tuple(procs))


def _own_draws(params: dict, streams: Streams, parallel: np.ndarray, width: np.ndarray):
    """``parallel_draws: process``: (job, k) -> the demand and memory of the k-th process of a
    parallel job, each process with its own r and m (streams "process-demand" and
    "process-memory", so the jobs' own draws do not move); None for one draw per job."""
    if params["parallel_draws"] == "job":
        return None
    if params["parallel_draws"] != "process":
        raise InputError(
            f"parameter 'parallel_draws': unknown value {params['parallel_draws']!r} (use 'job' or 'process')."
        )
    count = int(width[parallel].sum())
    r = np.maximum(streams["process-demand"].random(count), np.finfo(float).tiny)
    m = np.maximum(streams["process-memory"].random(count), np.finfo(float).tiny)
    demand = np.minimum(float(params["parallel_cpu_scale"]) / r, float(params["parallel_cpu_cap"]))
    memory = float(params["reference_memory_mb"]) * np.minimum(1.0 / m, float(params["memory_cap_percent"])) / 100.0
    first = np.concatenate([[0], np.cumsum(np.where(parallel, width, 0))])
    return lambda j, k: (demand[first[j] + k], memory[first[j] + k])


def batch(params: dict, streams: Streams, n_machines: int) -> Workload:
    """Barak et al. 1996: ``n_procs`` CPU-bound processes started together on the home machine."""
    n = int(params["n_procs"])
    kind = params["demand_kind"]
    if kind == "constant":
        demand = np.full(n, float(params["demand_value"]))
    elif kind == "uniform":
        demand = float(params["demand_max"]) * (1.0 - streams["demand"].random(n))
    else:
        raise InputError(f"parameter 'demand_kind': unknown value {kind!r} (use 'constant' or 'uniform').")
    home = int(params["home_machine"]) % n_machines
    procs = tuple(ProcSpec(i, i, 0.0, float(demand[i]), 0.0, home, True) for i in range(n))
    seeds = streams["background"].integers(0, 2**63 - 1, int(params["background_procs"]))
    period = float(params["background_max_period"])
    background = tuple(BackgroundSpec(k % n_machines, int(s), period) for k, s in enumerate(seeds))
    return Workload(procs, background)


def poisson(params: dict, streams: Streams, n_machines: int) -> Workload:
    """Poisson arrivals with exponential demands and no memory, for checks against queueing formulas."""
    times = poisson_times(streams["arrivals"], 1.0 / float(params["arrival_rate"]), float(params["arrival_window"]))
    demand = streams["demand"].exponential(float(params["mean_demand"]), times.size)
    demand = np.maximum(demand, 1e-12)
    warmup = float(params["warmup"])
    return Workload(tuple(ProcSpec(i, i, float(t), float(d), 0.0, 0, bool(t >= warmup))
                          for i, (t, d) in enumerate(zip(times, demand))))


GENERATORS = {"amir": amir, "batch": batch, "poisson": poisson}


def generate(params: dict, streams: Streams, n_machines: int) -> Workload:
    """The workload named by ``params['workload']``."""
    kind = params["workload"]
    if kind not in GENERATORS:
        raise InputError(f"parameter 'workload': unknown value {kind!r} (use one of {', '.join(GENERATORS)}).")
    return GENERATORS[kind](params, streams, n_machines)
