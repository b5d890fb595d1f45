"""Job assignment and reassignment on a workstation cluster (Amir et al.; Barak et al. 1996).

``run_replication`` draws one workload and runs every requested policy on it. Slowdown is
(completion - arrival) / demand, with the demand in CPU seconds on a speed-1.0 machine, so a
process alone on a speed-1.0 machine has slowdown 1 and one alone on a half-speed machine 2.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from simcore.core.engine import Engine
from simcore.core.rng import Streams
from simcore.errors import InputError
from simcore.models import Metric, Parameter, with_defaults
from simcore.models.cluster import workload as wl
from simcore.models.registry import get_policy, with_hyperparameters
from simcore.vocabulary.domains import (
    COUNT,
    NONNEGATIVE,
    NONNEGATIVE_INTEGER,
    POSITIVE,
    PROBABILITY,
    TEXT,
    AnyOf,
    Choice,
    Real,
    Structured,
    records,
)

if TYPE_CHECKING:     # the kernels load when the first run starts, not when a spec is read
    from simcore.models.cluster.system import ClusterSystem, Proc

AMIR_MACHINES = [
    {"name": "pentium-pro", "count": 3, "speed": 1.0, "memory_mb": 64},
    {"name": "pentium", "count": 2, "speed": 133 / 200, "memory_mb": 32},
    {"name": "laptop", "count": 1, "speed": 90 / 200, "memory_mb": 24},
]

MACHINE_GROUP = {
    "name": (TEXT, False),
    "count": (COUNT, False),
    "speed": (POSITIVE, True),
    "memory_mb": (POSITIVE, True),
}

PARAMETERS: dict[str, Parameter] = with_hyperparameters("cluster", {
    "machines": Parameter(AMIR_MACHINES, "Machine groups {name, count, speed (relative), memory_mb}; default Amir "
                                         "Table 1, speed = clock / 200 MHz.",
                          Structured("list of machine groups {name, count >= 1, speed > 0, memory_mb > 0}",
                                     records(MACHINE_GROUP))),
    "thrashing_factor": Parameter(10.0, "Slowdown factor of every process on a machine whose memory in use exceeds its "
                                        "memory.", Real(ge=1)),
    "workload": Parameter("amir", "Job stream: 'amir' (section 5), 'batch' (Barak 1996: all start at t=0) or 'poisson' "
                                  "(validation).",
                          Choice("amir", "batch", "poisson")),
    # amir workload
    "arrival_window": Parameter(1000.0, "Jobs arrive as a Poisson process during [0, arrival_window) seconds (amir, "
                                        "poisson).", POSITIVE),
    "mean_interarrival": Parameter(10.0, "Mean time between job arrivals, s (amir).", POSITIVE),
    "parallel_fraction": Parameter(0.05, "Probability that a job is a parallel job (amir).", PROBABILITY),
    "parallel_procs_max": Parameter(20, "A parallel job has U{1..parallel_procs_max} identical processes (amir).",
                                        COUNT),
    "single_cpu_scale": Parameter(2.0, "Single-process demand is single_cpu_scale / r CPU s, r ~ U(0,1) (amir).",
                                       POSITIVE),
    "parallel_cpu_scale": Parameter(20.0, "Parallel-process demand is parallel_cpu_scale / r CPU s, r ~ U(0,1) (amir).",
                                          POSITIVE),
    "single_cpu_cap": Parameter(1000.0, "Largest demand of a single-process job, CPU s (amir).", POSITIVE),
    "parallel_cpu_cap": Parameter(10000.0, "Largest demand of a process of a parallel job, CPU s (amir).", POSITIVE),
    "reference_memory_mb": Parameter(64.0, "Memory of which a process needs (1/m)%, m ~ U(0,1), MB (amir: a Pentium "
                                           "Pro).", NONNEGATIVE),
    "memory_cap_percent": Parameter(100.0, "Largest memory of a process, percent of reference_memory_mb (amir).",
                                           POSITIVE),
    "parallel_draws": Parameter("job", "'job': the processes of a parallel job share one r and one m (identical "
                                       "processes); 'process': each draws its own (amir).",
                                Choice("job", "process")),
    "slowdown_demand": Parameter("reference", "t(j) of the slowdown: 'reference', CPU s on a speed-1.0 machine; "
                                              "'machine', CPU s on the machine the process completed on (demand / its "
                                              "speed).",
                                 Choice("reference", "machine")),
    "measure_until": Parameter("last-completion", "When an execution's measurement ends: 'last-completion' (every job "
                                                  "measured to its completion) or seconds (only jobs, for 'job' "
                                                  "slowdowns their last process, completed by then are measured: an "
                                                  "execution cut at that time). The run itself always goes on to its "
                                                  "last completion.",
                               AnyOf(Choice("last-completion"), POSITIVE)),
    "parallel_job_slowdown": Parameter("process", "'process': each process of a parallel job counts as one job; 'job': "
                                                  "one slowdown per job from its last completion.",
                                       Choice("process", "job")),
    # batch workload
    "n_procs": Parameter(16, "Number of processes started at t=0 (batch).", COUNT),
    "demand_kind": Parameter("constant", "'constant' (demand_value) or 'uniform' (U(0, demand_max)) demands (batch).",
                                         Choice("constant", "uniform")),
    "demand_value": Parameter(300.0, "Demand of every process for demand_kind 'constant', CPU s (batch).", POSITIVE),
    "demand_max": Parameter(600.0, "Upper end of uniform demands, CPU s (batch).", POSITIVE),
    "home_machine": Parameter(0, "Machine where batch processes are created (their home, used by mosix 'home' "
                                 "placement); taken modulo the number of machines.", NONNEGATIVE_INTEGER),
    "background_procs": Parameter(0, "Background processes, the k-th pinned to machine k mod n; they count as load, "
                                     "not in metrics (batch).", NONNEGATIVE_INTEGER),
    "background_max_period": Parameter(30.0, "Background bursts (CPU s) and idle periods (s) are each U(0, this), "
                                             "starting with a burst.", POSITIVE),
    # poisson workload
    "arrival_rate": Parameter(0.5, "Poisson arrival rate, jobs/s (poisson).", POSITIVE),
    "mean_demand": Parameter(1.0, "Mean of the exponential demands, CPU s (poisson).", POSITIVE),
    "warmup": Parameter(0.0, "Only jobs arriving at or after warmup seconds are measured (poisson).", NONNEGATIVE),
})  # then the policies' own hyperparameters (simcore params lists which policies read them)

CONSTRAINTS = ()  # no relation between the cluster's parameters beyond their domains

METRICS: dict[str, Metric] = {
    "mean_slowdown": Metric("Mean slowdown (completion - arrival) / demand over the measured jobs of the run.",
                            "positive"),
    "slowdown_sum": Metric("Sum of the slowdowns of the measured jobs (slowdown by job = sum / jobs over runs).",
                           "nonnegative"),
    "jobs": Metric("Number of measured jobs.", "nonnegative"),
    "max_slowdown": Metric("Largest slowdown of a measured job.", "positive"),
    "makespan": Metric("Completion of the last measured process minus the first measured arrival, s (Barak's execution "
                       "time).", "positive"),
    "migrations": Metric("Number of process migrations.", "nonnegative"),
    "thrashing_share": Metric("Share of the machine-time from 0 to the last completion that machines spent thrashing "
                              "(memory in use above their memory, with processes to run).", "share"),
    "events": Metric("Simulation events fired (engine callbacks) in this policy's run.", "nonnegative"),
    # the split by whether one job alone needs more memory than the cluster has (Table 2 with and
    # without those executions: a spec's ratio metric, e.g. [oversized_slowdown, oversized])
    "oversized": Metric("1 if some job's processes together need more memory than all machines have, else 0 (the same "
                        "for every policy of a replication).", "share"),
    "fitting": Metric("1 - oversized: every job fits the cluster's memory.", "share"),
    "oversized_slowdown": Metric("mean_slowdown in a run with an oversized job, else 0.", "nonnegative"),
    "fitting_slowdown": Metric("mean_slowdown in a run where every job fits, else 0.", "nonnegative"),
    "oversized_slowdown_sum": Metric("slowdown_sum in a run with an oversized job, else 0.", "nonnegative"),
    "fitting_slowdown_sum": Metric("slowdown_sum in a run where every job fits, else 0.", "nonnegative"),
    "oversized_jobs": Metric("jobs in a run with an oversized job, else 0.", "nonnegative"),
    "fitting_jobs": Metric("jobs in a run where every job fits, else 0.", "nonnegative"),
}


#: Run a replication that nothing in Python observes (no monitor, no policy deciding in Python)
#: in the kernels' own event loop (``ClusterSystem.run_compiled``); False: every run driven by
#: SimPy. Both give the same bytes (tests/test_cluster_system.py).
COMPILED_LOOP = True


class Result(NamedTuple):
    """One policy's run: its metrics and its finished foreground processes."""

    metrics: dict[str, float]
    procs: list[Proc]
    cluster: ClusterSystem


def full_params(params: dict) -> dict:
    """Defaults overridden by ``params``; unknown names are an error."""
    return with_defaults("cluster", PARAMETERS, params, CONSTRAINTS)


def simulate(params: dict, workload: wl.Workload, policy: str, streams: Streams, attach=None) -> Result:
    """Run ``policy`` on ``workload`` until every foreground process has completed.
    ``attach(engine, cluster)``, if given, is called before the run starts (e.g. a monitor)."""
    from simcore.models.cluster.system import ClusterSystem, expand_machines

    engine = Engine()
    machines = expand_machines(params["machines"])
    impl = get_policy("cluster", policy)(params, streams.fresh(f"policy:{policy}"))
    done: list[Proc] = []
    cluster = ClusterSystem(engine, machines, params["thrashing_factor"], impl, done.append)
    cluster.unfinished = len(workload.procs)
    impl.start(cluster)
    cluster.expect(workload.procs, workload.background)
    groups = spawned(workload.arrival_groups(), impl.spawn_delay)
    if attach is None and COMPILED_LOOP and not cluster.observed:
        cluster.run_compiled(groups)
    else:
        _run_on_simpy(engine, cluster, groups, attach)
    cluster.close()
    if cluster.unfinished:
        raise RuntimeError(f"cluster model: {cluster.unfinished} process(es) never completed under {policy}.")
    return Result(measure(done, params, cluster, engine), done, cluster)


def _run_on_simpy(engine: Engine, cluster: ClusterSystem, groups: list, attach) -> None:
    """The run driven by SimPy: each arrival group a SimPy event that schedules the next, the
    kernels' timers fired between them (``ClusterSystem``'s proxies), ``attach`` called first."""
    def arrive(g: int) -> None:
        cluster.arrive(groups[g][1])
        if g + 1 < len(groups):
            engine.schedule(groups[g + 1][0] - groups[g][0], lambda: arrive(g + 1))

    if groups:
        engine.schedule(groups[0][0], lambda: arrive(0))
    if attach is not None:
        attach(engine, cluster)
    engine.run()


def spawned(groups: list[tuple[float, tuple]], delay: float) -> list[tuple[float, tuple]]:
    """The arrival groups as the cluster receives them: each group at once, or, with a spawn
    delay (a policy whose processes PVM's daemon starts in turn), one process at a time, the k-th
    (from 1) k * delay after its group's arrival, in time order (ties: the workload's order)."""
    if delay <= 0:
        return groups
    return sorted(((t + k * delay, (spec,)) for t, specs in groups for k, spec in enumerate(specs, start=1)),
                  key=lambda g: g[0])


def measure(done: list[Proc], params: dict, cluster: ClusterSystem, engine: Engine) -> dict[str, float]:
    """The METRICS of one run from its finished processes."""
    measured = [p for p in done if p.measured]
    own = own_time(params, cluster)
    until = math.inf if params["measure_until"] == "last-completion" else float(params["measure_until"])
    if params["parallel_job_slowdown"] == "job":
        jobs: dict[int, tuple[float, float, float]] = {}
        for p in measured:
            a, d, c = jobs.get(p.job, (p.arrival, own(p), p.completion))
            jobs[p.job] = (a, d, max(c, p.completion))
        slowdowns = [(c - a) / d for a, d, c in jobs.values() if c <= until]
        measured = [p for p in measured if jobs[p.job][2] <= until]
    elif params["parallel_job_slowdown"] == "process":
        measured = [p for p in measured if p.completion <= until]
        slowdowns = [(p.completion - p.arrival) / own(p) for p in measured]
    else:
        raise InputError(f"parameter 'parallel_job_slowdown': unknown value {params['parallel_job_slowdown']!r} "
                         "(use 'process' or 'job').")
    n = len(slowdowns)
    total = math.fsum(slowdowns)
    metrics = {
        "mean_slowdown": total / n if n else math.nan,
        "slowdown_sum": total,
        "jobs": float(n),
        "max_slowdown": max(slowdowns) if n else math.nan,
        "makespan": (max(p.completion for p in measured) - min(p.arrival for p in measured)) if n else math.nan,
        "migrations": float(cluster.migrations),
        "thrashing_share": thrashing_share(cluster, max((p.completion for p in done), default=0.0)),
        "events": float(engine.events),
    }
    return {**metrics, **split_by_oversized(metrics, oversized(done, cluster))}


def oversized(done: list[Proc], cluster: ClusterSystem) -> bool:
    """Whether some job's processes together need more memory than all the machines have."""
    jobs: dict[int, float] = {}
    for p in done:
        jobs[p.job] = jobs.get(p.job, 0.0) + p.memory
    return max(jobs.values(), default=0.0) > math.fsum(m.memory for m in cluster.machines)


def split_by_oversized(metrics: dict[str, float], over: bool) -> dict[str, float]:
    """The run's slowdowns and jobs under ``oversized_*`` or ``fitting_*`` (0 under the other),
    and the two indicators."""
    side, other = ("oversized", "fitting") if over else ("fitting", "oversized")
    split = {side: 1.0, other: 0.0}
    for name, key in (("slowdown", "mean_slowdown"), ("slowdown_sum", "slowdown_sum"), ("jobs", "jobs")):
        split[f"{side}_{name}"], split[f"{other}_{name}"] = metrics[key], 0.0
    return split


def own_time(params: dict, cluster: ClusterSystem):
    """t(j) of a finished process: its demand (CPU s on a speed-1.0 machine) or, for
    ``slowdown_demand: machine``, its demand at the speed of the machine it completed on."""
    if params["slowdown_demand"] == "reference":
        return lambda p: p.demand
    if params["slowdown_demand"] == "machine":
        speeds = [m.speed for m in cluster.machines]
        return lambda p: p.demand / speeds[p.ended_on]
    raise InputError(f"parameter 'slowdown_demand': unknown value {params['slowdown_demand']!r} (use 'reference' or "
                     "'machine').")


def thrashing_share(cluster: ClusterSystem, end: float) -> float:
    """Machine-seconds spent thrashing over all machine-seconds of [0, end]."""
    if end <= 0:
        return 0.0
    return math.fsum(m.thrashed for m in cluster.machines) / (len(cluster.machines) * end)


def make_workload(params: dict, streams: Streams) -> wl.Workload:
    """The replication's workload (drawn once, shared by all policies)."""
    from simcore.models.cluster.system import expand_machines

    return wl.generate(params, streams, len(expand_machines(params["machines"])))


def run_replication(params: dict, policies: list[str], streams: Streams) -> dict[str, dict[str, float]]:
    """Metrics of every policy on one common workload."""
    params = full_params(params)
    for name in policies:  # fail before any work on an unknown policy or a bad hyperparameter
        get_policy("cluster", name)(params, streams.fresh(f"policy:{name}"))
    workload = make_workload(params, streams)
    return {name: simulate(params, workload, name, streams).metrics for name in policies}


def queue_probes(cluster: ClusterSystem) -> dict:
    """The queues a monitor samples: each machine's processes (foreground and background)."""
    return {f"machine{i}.procs": (lambda m: lambda: len(m.procs))(m) for i, m in enumerate(cluster.machines)}


def monitor_replication(params: dict, policy: str, streams: Streams, period: float, duration: float):
    """One replication of ``policy`` with every machine's process count sampled every ``period``
    seconds for ``duration`` or until the last completion ends the run (a table time, queue,
    value; see simcore.core.monitor); the run's metrics are not reported."""
    from simcore.core.monitor import monitored

    params = full_params(params)
    return monitored(lambda attach: simulate(params, make_workload(params, streams), policy, streams, attach=attach),
                     queue_probes, period, duration)
