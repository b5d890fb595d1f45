"""Dynamic coscheduling on a non-dedicated cluster node (Solsona et al., DCNDC): parameters, metrics, runs.

One replication runs each policy on the same task stream, from an empty node until ``nst``
tasks have been served (the paper's stopping rule; it names no warm-up, and none is deleted).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from simcore.core.engine import Engine
from simcore.models import Constraint, Metric, Parameter, with_defaults
from simcore.models.cosched.node import Node, TaskState
from simcore.models.cosched.workload import TaskStream
from simcore.models.registry import get_policy, with_hyperparameters
from simcore.vocabulary.domains import NONNEGATIVE_INTEGER, POSITIVE, PROBABILITY, Integer

MODEL = "cosched"

PARAMETERS: dict[str, Parameter] = with_hyperparameters(
    MODEL,
    {
        "mit": Parameter(2.0, "Mean inter-arrival time of tasks (exponential), time units (section 5.3).", POSITIVE),
        "mst": Parameter(0.9, "Mean service time of a task (exponential), time units (section 5.3: 0.9).", POSITIVE),
        "pdt": Parameter(0.5, "Probability that a task is distributed (section 5.3).", PROBABILITY),
        "mm": Parameter(
            5, "A distributed task receives k messages, k uniform on 0..mm (section 5.3: 5).", NONNEGATIVE_INTEGER
        ),
        "nst": Parameter(10000, "Served tasks after which a run ends (section 5.3: 10000).", Integer(ge=1)),
        "quantum": Parameter(
            0.1, "Round-robin time slice, time units (not given by the paper; docs/cosched-model.md).", POSITIVE
        ),
    },
)  # then the policies' own hyperparameters (overtake_cap, share, spin)

CONSTRAINTS = (
    Constraint(("mst", "mit"), "mst < mit (the node's load mst / mit is below 1)", lambda p: p["mst"] < p["mit"]),
)

METRICS: dict[str, Metric] = {
    "node_code": Metric("NodeCoDe: messages whose receiver held the CPU once the arrival was handled, over all "
                        "messages (undefined without messages).", "share"),
    "local_wait": Metric("Mean time a local task spent ready in the RQ, time units.", "nonnegative"),
    "distributed_wait": Metric("Mean time a distributed task spent ready in the RQ, time units.", "nonnegative"),
    "mean_response": Metric("Mean response time (end - arrival) of the served tasks, time units.", "positive"),
    "spin_share": Metric("CPU time spent spinning over the run's length.", "share"),
    "utilization": Metric("CPU time busy (progress and spinning) over the run's length.", "share"),
    "cosched_switches": Metric("Context switches made for a message (SDCA, DYNAMIC) per served task.", "nonnegative"),
    "messages": Metric("Messages that arrived during the run.", "nonnegative"),
    "events": Metric("Simulation events fired in this policy's run.", "nonnegative"),
}


class Run(NamedTuple):
    """One policy's run: its metrics, the served tasks in completion order, the node."""

    metrics: dict[str, float]
    served: list[TaskState]
    node: Node


def full_params(params: dict) -> dict:
    """Defaults overridden by ``params``; unknown names, values outside domains, broken relations: errors."""
    return with_defaults(MODEL, PARAMETERS, params, CONSTRAINTS)


def simulate(params: dict, policy: str, streams, attach=None, tasks=None) -> Run:
    """Run ``policy`` until ``nst`` tasks are served. ``tasks`` (an iterator of Task) replaces the
    random stream (a scripted scenario); ``attach(engine, node)`` is called before the run starts."""
    engine = Engine()
    impl = get_policy(MODEL, policy)(params, streams.fresh(f"policy:{policy}"))
    served: list[TaskState] = []

    def done(state: TaskState) -> None:
        served.append(state)
        if len(served) == params["nst"]:
            engine.stop()

    node = Node(engine, params, impl, done)
    source = iter(tasks) if tasks is not None else _stream(TaskStream(params, streams))

    def arrive(task) -> None:
        node.arrive(task)
        following = next(source, None)
        if following is not None:
            engine.call(following.arrival - engine.now, arrive, following)

    first = next(source, None)
    if first is not None:
        engine.call(first.arrival, arrive, first)
    if attach is not None:
        attach(engine, node)
    engine.run()
    return Run(measure(served, node, engine), served, node)


def _stream(stream: TaskStream):
    while True:
        yield stream.next()


def measure(served: list[TaskState], node: Node, engine: Engine) -> dict[str, float]:
    """The METRICS of one run."""
    def mean(values: list[float]) -> float:
        return math.fsum(values) / len(values) if values else math.nan

    span = engine.now
    return {
        "node_code": node.coscheduled / node.messages if node.messages else math.nan,
        "local_wait": mean([t.waited for t in served if not t.task.distributed]),
        "distributed_wait": mean([t.waited for t in served if t.task.distributed]),
        "mean_response": mean([t.done_at - t.task.arrival for t in served]),
        "spin_share": node.spun / span if span > 0 else math.nan,
        "utilization": node.busy / span if span > 0 else math.nan,
        "cosched_switches": node.switches / len(served) if served else math.nan,
        "messages": float(node.messages),
        "events": float(engine.events),
    }


def run_replication(params: dict, policies: list[str], streams) -> dict[str, dict[str, float]]:
    """Metrics of every policy on one common task stream."""
    params = full_params(params)
    for name in policies:   # fail before any work on an unknown policy or a bad hyperparameter
        get_policy(MODEL, name)(params, streams.fresh(f"policy:{name}"))
    return {name: simulate(params, name, streams).metrics for name in policies}


def queue_probes(node: Node) -> dict:
    """The queues a monitor samples: the ready queue, the blocked receivers, the messages buffered."""
    return {"rq": node.rq.__len__, "blocked": lambda: node.blocked, "mbq": node.pending_messages}


def monitor_replication(params: dict, policy: str, streams, period: float, duration: float):
    """One replication of ``policy`` with its queues sampled every ``period`` for ``duration``
    time units (a table time, queue, value; see simcore.core.monitor)."""
    from simcore.core.monitor import monitored

    params = full_params(params)
    return monitored(lambda attach: simulate(params, policy, streams, attach=attach), queue_probes, period, duration)
