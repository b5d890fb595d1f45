"""Processor pool-based scheduling of fork-join jobs (Zhou and Brecht 1991): parameters, metrics, runs.

One replication runs each policy on the same job stream. Jobs 0..jobs-1 are the run's sample:
arrivals go on until every one of them has finished (so the last ones still see a loaded
machine), then the run stops. The warm-up, a fixed share of the sampled jobs in arrival order,
is deleted (``simcore.stats.warmup``); the metrics are over the jobs kept, the
utilisation over the time from the first kept arrival to the last sampled one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from simcore.core.engine import Engine
from simcore.errors import InputError
from simcore.models import Constraint, Metric, Parameter, with_defaults
from simcore.models.pools.workload import JobStream, largest_mean
from simcore.models.registry import get_policy, with_hyperparameters
from simcore.stats.warmup import fixed_truncation, mser_truncation
from simcore.vocabulary.domains import (
    COUNT,
    NONNEGATIVE,
    NONNEGATIVE_INTEGER,
    POSITIVE,
    PROBABILITY,
    AnyOf,
    Choice,
    Integer,
    Real,
)

if TYPE_CHECKING:     # the kernels load when the first run starts, not when a spec is read
    from simcore.models.pools.system import JobState, PoolSystem

PARAMETERS: dict[str, Parameter] = with_hyperparameters("pools", {
    "processors": Parameter(60, "P, processors of the machine (Table 2).", COUNT),
    "pool_size": Parameter(10, "p, processors per pool; P/p equal pools, so p divides P; 'all': one pool of all P.",
                           AnyOf(Choice("all"), COUNT)),
    "load": Parameter(0.6, "L, utilisation without overheads; sets the arrival rate P L / mean job demand (Table 2).",
                           Real(gt=0, lt=1)),
    "mean_parallelism": Parameter(20.0, "D, true mean of the bounded-geometric desired parallelism d <= P (Table 2).",
                                        Real(ge=1)),
    "time_slice": Parameter(10.0, "T, the round-robin time slice, time units (Table 2).", POSITIVE),
    "pool_threshold": Parameter(10, "p0, the pool size up to which no in-pool or run-queue overhead is charged (Table "
                                    "2).", NONNEGATIVE_INTEGER),
    "in_pool_factor": Parameter(0.005, "W, in-pool overhead w = W (p - p0) for p > p0, a PARA thread demand inflation "
                                       "(Table 2: 0.5%).", NONNEGATIVE),
    "spanning_factor": Parameter(0.01, "S, pool-spanning overhead s = S (k - 1) p for k pools, a PARA thread demand "
                                       "inflation (Table 2: 1.0%).", NONNEGATIVE),
    "contention_factor": Parameter(0.003, "r, run-queue contention r (p - p0) time units per context switch for p > p0 "
                                          "(Table 2).", NONNEGATIVE),
    "cache_cost": Parameter(0.005, "c, cache loading time units per context switch to another job's thread (Table 2).",
                                   NONNEGATIVE),
    "cache_fraction": Parameter(0.25, "t, the share of c charged for a switch between threads of one job (Table 2).",
                                      PROBABILITY),
    "init_demand": Parameter(10.0, "CPU demand of the INIT phase, time units (section 2).", POSITIVE),
    "final_demand": Parameter(10.0, "CPU demand of the FINAL phase, time units (section 2).", POSITIVE),
    "thread_demand": Parameter(100.0, "PARA work per desired thread: the PARA phase needs thread_demand x d in all "
                                      "(section 2).", POSITIVE),
    "thread_spread": Parameter(10.0, "Half-width of a thread's uniform demand around thread_demand d / a (section 2: "
                                     "U(100d/a - 10, 100d/a + 10)).", NONNEGATIVE),
    "jobs": Parameter(4000, "Jobs sampled per run (arrivals continue until all of them have finished).",
                            Integer(ge=10)),
    "warmup": Parameter("fraction",
                        "How the warm-up is deleted: 'fraction' (the first warmup_fraction of the sampled jobs), "
                        "'mser-5' (the MSER-5 rule on each run's response times; biased low under load) or 'none'.",
                        Choice("fraction", "mser-5", "none")),
    "warmup_fraction": Parameter(0.1, "Share of the sampled jobs, first in arrival order, deleted as warm-up (warmup "
                                      "'fraction').",
                                 Real(ge=0, le=0.5)),
})  # then the policies' own hyperparameters (F and G)

CONSTRAINTS = (
    Constraint(
        ("processors", "pool_size"),
        "pool_size divides processors (equal pools)",
        lambda p: (
            p["pool_size"] == "all" or (p["pool_size"] <= p["processors"] and p["processors"] % p["pool_size"] == 0)
        ),
    ),
    Constraint(
        ("mean_parallelism", "processors"),
        "mean_parallelism < (processors + 1) / 2 "
        "(the largest mean of a parallelism bounded by P), or mean_parallelism = 1",
        lambda p: p["mean_parallelism"] == 1 or p["mean_parallelism"] < largest_mean(p["processors"]),
    ),
    Constraint(
        ("thread_spread", "thread_demand"),
        "thread_spread < thread_demand (thread demands stay positive)",
        lambda p: p["thread_spread"] < p["thread_demand"],
    ),
)

METRICS: dict[str, Metric] = {
    "mean_response": Metric("Mean response time (FINAL end - arrival) of the kept jobs, time units.", "positive"),
    "actual_parallelism": Metric("A, mean actual parallelism (PARA threads created) of the kept jobs.", "positive"),
    "utilization": Metric("U, busy processor time (work, overheads, switches) over P x the kept time span.", "share"),
    "spanning_share": Metric("Share of the kept jobs whose PARA threads used more than one pool.", "share"),
    "jobs": Metric("Jobs kept after the warm-up.", "nonnegative"),
    "warmup_jobs": Metric("Jobs deleted as warm-up.", "nonnegative"),
    "events": Metric("Simulation events fired in this policy's run.", "nonnegative"),
}


class Run(NamedTuple):
    """One policy's run: its metrics and the sampled jobs in arrival order."""

    metrics: dict[str, float]
    jobs: list[JobState]
    system: PoolSystem


def full_params(params: dict) -> dict:
    """Defaults overridden by ``params``; unknown names, values outside domains, broken relations: errors."""
    return with_defaults("pools", PARAMETERS, params, CONSTRAINTS)


def simulate(params: dict, policy: str, streams, attach=None) -> Run:
    """Run ``policy`` on the replication's job stream until the sampled jobs have all finished.
    ``attach(engine, system)``, if given, is called before the run starts (e.g. a monitor)."""
    engine = Engine()
    impl = get_policy("pools", policy)(params, streams.fresh(f"policy:{policy}"))
    n = params["jobs"]
    sampled: list[JobState] = []
    areas: list[float] = []
    left = [n]

    def done(state: JobState) -> None:
        if state.job.index < n:
            left[0] -= 1
            if left[0] == 0:
                engine.stop()

    from simcore.models.pools.system import PoolSystem

    system = PoolSystem(engine, params, impl, done)
    stream = JobStream(params, streams)

    def arrive(job) -> None:
        state = system.arrive(job)
        if job.index < n:
            sampled.append(state)
            areas.append(system.area())
        following = stream.next()
        engine.call(following.arrival - engine.now, arrive, following)

    first = stream.next()
    engine.call(first.arrival, arrive, first)
    if attach is not None:
        attach(engine, system)
    engine.run()
    system.close()
    if left[0]:
        raise RuntimeError(f"pools model: {left[0]} sampled job(s) never finished under {policy}.")
    return Run(measure(params, sampled, areas, engine.events), sampled, system)


def measure(params: dict, sampled: list[JobState], areas: list[float], events: int) -> dict[str, float]:
    """The METRICS of one run from its sampled jobs (in arrival order) and the busy integral at their arrivals."""
    response = [s.done_at - s.job.arrival for s in sampled]
    cut = warmup_cut(params, response)
    kept = sampled[cut:]
    span = kept[-1].job.arrival - kept[0].job.arrival
    busy = areas[-1] - areas[cut]
    return {
        "mean_response": math.fsum(response[cut:]) / len(kept),
        "actual_parallelism": sum(s.a for s in kept) / len(kept),
        "utilization": busy / (params["processors"] * span) if span > 0 else math.nan,
        "spanning_share": sum(s.k > 1 for s in kept) / len(kept),
        "jobs": float(len(kept)),
        "warmup_jobs": float(cut),
        "events": float(events),
    }


def warmup_cut(params: dict, response: list[float]) -> int:
    """How many of the sampled jobs, first in arrival order, the warm-up rule deletes."""
    rule = params["warmup"]
    if rule == "fraction":
        return fixed_truncation(len(response), params["warmup_fraction"])
    if rule == "mser-5":
        return mser_truncation(response)
    if rule == "none":
        return 0
    raise InputError(f"parameter 'warmup': unknown value {rule!r} (use 'fraction', 'mser-5' or 'none').")


def run_replication(params: dict, policies: list[str], streams) -> dict[str, dict[str, float]]:
    """Metrics of every policy on one common job stream."""
    params = full_params(params)
    for name in policies:   # fail before any work on an unknown policy or a bad hyperparameter
        get_policy("pools", name)(params, streams.fresh(f"policy:{name}"))
    return {name: simulate(params, name, streams).metrics for name in policies}


def queue_probes(system: PoolSystem) -> dict:
    """The queues a monitor samples: each pool's run queue (threads waiting) and active threads."""
    probes = {}
    for pool in system.pools:
        probes[f"pool{pool.index}.queue"] = (lambda q: lambda: q.waiting)(pool)
        probes[f"pool{pool.index}.active"] = (lambda q: lambda: q.active)(pool)
    return probes


def monitor_replication(params: dict, policy: str, streams, period: float, duration: float):
    """One replication of ``policy`` with its queues sampled every ``period`` for ``duration``
    time units (a table time, queue, value; see simcore.core.monitor)."""
    from simcore.core.monitor import monitored

    params = full_params(params)
    return monitored(lambda attach: simulate(params, policy, streams, attach=attach), queue_probes, period, duration)
