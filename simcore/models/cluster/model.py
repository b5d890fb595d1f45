"""Job assignment and reassignment on a workstation cluster (Amir et al.; Barak et al. 1996).

``run_replication`` draws one workload and runs every requested policy on it. Slowdown is
(completion - arrival) / demand, with the demand in CPU seconds on a speed-1.0 machine, so a
process alone on a speed-1.0 machine has slowdown 1 and one alone on a half-speed machine 2.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from simcore.core.engine import Engine
from simcore.core.rng import Streams
from simcore.errors import InputError
from simcore.models import Metric, Parameter, with_defaults
from simcore.models.cluster import workload as wl
from simcore.models.cluster.cluster import Background, Cluster, Proc, expand_machines
from simcore.models.registry import get_policy

AMIR_MACHINES = [
    {"name": "pentium-pro", "count": 3, "speed": 1.0, "memory_mb": 64},
    {"name": "pentium", "count": 2, "speed": 133 / 200, "memory_mb": 32},
    {"name": "laptop", "count": 1, "speed": 90 / 200, "memory_mb": 24},
]

PARAMETERS: dict[str, Parameter] = {
    "machines": Parameter(AMIR_MACHINES, "Machine groups {name, count, speed (relative), memory_mb}; default Amir Table 1, speed = clock / 200 MHz."),
    "thrashing_factor": Parameter(10.0, "Slowdown factor of every process on a machine whose memory in use exceeds its memory."),
    "workload": Parameter("amir", "Job stream: 'amir' (section 5), 'batch' (Barak 1996: all start at t=0) or 'poisson' (validation)."),
    # amir workload
    "arrival_window": Parameter(1000.0, "Jobs arrive as a Poisson process during [0, arrival_window) seconds (amir, poisson)."),
    "mean_interarrival": Parameter(10.0, "Mean time between job arrivals, s (amir)."),
    "parallel_fraction": Parameter(0.05, "Probability that a job is a parallel job (amir)."),
    "parallel_procs_max": Parameter(20, "A parallel job has U{1..parallel_procs_max} identical processes (amir)."),
    "single_cpu_scale": Parameter(2.0, "Single-process demand is single_cpu_scale / r CPU s, r ~ U(0,1) (amir)."),
    "parallel_cpu_scale": Parameter(20.0, "Parallel-process demand is parallel_cpu_scale / r CPU s, r ~ U(0,1) (amir)."),
    "single_cpu_cap": Parameter(1000.0, "Largest demand of a single-process job, CPU s (amir)."),
    "parallel_cpu_cap": Parameter(10000.0, "Largest demand of a process of a parallel job, CPU s (amir)."),
    "reference_memory_mb": Parameter(64.0, "Memory of which a process needs (1/m)%, m ~ U(0,1), MB (amir: a Pentium Pro)."),
    "memory_cap_percent": Parameter(100.0, "Largest memory of a process, percent of reference_memory_mb (amir)."),
    "parallel_job_slowdown": Parameter("process", "'process': each process of a parallel job counts as one job; 'job': one slowdown per job from its last completion."),
    # batch workload
    "n_procs": Parameter(16, "Number of processes started at t=0 (batch)."),
    "demand_kind": Parameter("constant", "'constant' (demand_value) or 'uniform' (U(0, demand_max)) demands (batch)."),
    "demand_value": Parameter(300.0, "Demand of every process for demand_kind 'constant', CPU s (batch)."),
    "demand_max": Parameter(600.0, "Upper end of uniform demands, CPU s (batch)."),
    "home_machine": Parameter(0, "Machine where batch processes are created (their home, used by mosix 'home' placement)."),
    "background_procs": Parameter(0, "Background processes, the k-th pinned to machine k mod n; they count as load, not in metrics (batch)."),
    "background_max_period": Parameter(30.0, "Background bursts (CPU s) and idle periods (s) are each U(0, this), starting with a burst."),
    # poisson workload
    "arrival_rate": Parameter(0.5, "Poisson arrival rate, jobs/s (poisson)."),
    "mean_demand": Parameter(1.0, "Mean of the exponential demands, CPU s (poisson)."),
    "warmup": Parameter(0.0, "Only jobs arriving at or after warmup seconds are measured (poisson)."),
    # Mosix
    "info_interval": Parameter(1.0, "Seconds between rounds in which every machine sends its load to mosix_known_machines random others."),
    "mosix_known_machines": Parameter(4, "Size of a machine's window of other machines' loads (Mosix keeps a small load vector; 4 assumed)."),
    "balance_interval": Parameter(1.0, "Seconds between load-balancing attempts of a machine that has excess load or memory."),
    "min_residency": Parameter(1.0, "Seconds a process must stay on a machine before it may migrate (Barak 1996)."),
    "load_threshold": Parameter(1.0, "Migrate only if the load difference exceeds this (one CPU-bound process; Barak 1996 section 4)."),
    "memory_threshold": Parameter(0.9, "Fraction of memory in use above which Mosix moves a process to a known machine with free memory."),
    "migration_cost": Parameter(0.0, "Seconds a migrating process makes no progress (it joins the target this much later)."),
    "mosix_initial": Parameter("home", "Where mosix starts a process: 'home' (its home machine), 'random' (policy's own draw) or 'round-robin'."),
    # opportunity cost
    "cost_base": Parameter("n", "Base of the exponential cost: 'n' = number of machines (Amir section 4) or a number > 1."),
    "reassign_factor": Parameter(2.0, "Factor of the stability condition for reassignment (Amir section 3.3)."),
    "cpu_bound": Parameter("running-max", "Opportunity cost's CPU capacity L: power of two above the largest load 'running-max' (seen so far) or 'current' (now)."),
    "reassign_rule": Parameter("stability", "enhanced-mosix: 'stability' (section 3.3: cost when placed > factor x cost elsewhere) or 'greedy' (section 4: move when another known machine is cheaper now)."),
}

METRICS: dict[str, Metric] = {
    "mean_slowdown": Metric("Mean slowdown (completion - arrival) / demand over the measured jobs of the run.", "positive"),
    "slowdown_sum": Metric("Sum of the slowdowns of the measured jobs (slowdown by job = sum / jobs over runs).", "nonnegative"),
    "jobs": Metric("Number of measured jobs.", "nonnegative"),
    "max_slowdown": Metric("Largest slowdown of a measured job.", "positive"),
    "makespan": Metric("Completion of the last measured process minus the first measured arrival, s (Barak's execution time).", "positive"),
    "migrations": Metric("Number of process migrations.", "nonnegative"),
    "events": Metric("Simulation events fired (engine callbacks) in this policy's run.", "nonnegative"),
}


class Result(NamedTuple):
    """One policy's run: its metrics and its finished foreground processes."""

    metrics: dict[str, float]
    procs: list[Proc]
    cluster: Cluster


def full_params(params: dict) -> dict:
    """Defaults overridden by ``params``; unknown names are an error."""
    return with_defaults("cluster", PARAMETERS, params)


def simulate(params: dict, workload: wl.Workload, policy: str, streams: Streams) -> Result:
    """Run ``policy`` on ``workload`` until every foreground process has completed."""
    engine = Engine()
    machines = expand_machines(params["machines"])
    impl = get_policy("cluster", policy)(params, streams.fresh(f"policy:{policy}"))
    done: list[Proc] = []
    cluster = Cluster(engine, machines, params["thrashing_factor"], impl, done.append)
    cluster.unfinished = len(workload.procs)
    impl.start(cluster)
    for k, spec in enumerate(workload.background):
        Background(cluster, spec, -1 - k).start()
    groups = workload.arrival_groups()

    def arrive(g: int) -> None:
        procs = [Proc(spec) for spec in groups[g][1]]
        for proc in procs:
            cluster.place(proc, impl.assign(proc, cluster))
        cluster.apply(impl.on_arrival(procs, cluster), impl.migration_cost)
        if g + 1 < len(groups):
            engine.schedule(groups[g + 1][0] - groups[g][0], lambda: arrive(g + 1))

    if groups:
        engine.schedule(groups[0][0], lambda: arrive(0))
    engine.run()
    if cluster.unfinished:
        raise RuntimeError(f"cluster model: {cluster.unfinished} process(es) never completed under {policy}.")
    return Result(measure(done, params, cluster, engine), done, cluster)


def measure(done: list[Proc], params: dict, cluster: Cluster, engine: Engine) -> dict[str, float]:
    """The METRICS of one run from its finished processes."""
    measured = [p for p in done if p.measured]
    if params["parallel_job_slowdown"] == "job":
        jobs: dict[int, tuple[float, float, float]] = {}
        for p in measured:
            a, d, c = jobs.get(p.job, (p.arrival, p.demand, p.completion))
            jobs[p.job] = (a, d, max(c, p.completion))
        slowdowns = [(c - a) / d for a, d, c in jobs.values()]
    elif params["parallel_job_slowdown"] == "process":
        slowdowns = [(p.completion - p.arrival) / p.demand for p in measured]
    else:
        raise InputError(f"parameter 'parallel_job_slowdown': unknown value {params['parallel_job_slowdown']!r} "
                         "(use 'process' or 'job').")
    n = len(slowdowns)
    total = math.fsum(slowdowns)
    return {
        "mean_slowdown": total / n if n else math.nan,
        "slowdown_sum": total,
        "jobs": float(n),
        "max_slowdown": max(slowdowns) if n else math.nan,
        "makespan": (max(p.completion for p in measured) - min(p.arrival for p in measured)) if n else math.nan,
        "migrations": float(cluster.migrations),
        "events": float(engine.events),
    }


def make_workload(params: dict, streams: Streams) -> wl.Workload:
    """The replication's workload (drawn once, shared by all policies)."""
    return wl.generate(params, streams, len(expand_machines(params["machines"])))


def run_replication(params: dict, policies: list[str], streams: Streams) -> dict[str, dict[str, float]]:
    """Metrics of every policy on one common workload."""
    params = full_params(params)
    workload = make_workload(params, streams)
    return {name: simulate(params, workload, name, streams).metrics for name in policies}
