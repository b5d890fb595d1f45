"""The PVM-Linux cluster of Solsona et al. (section 5.2), modelled: parameters, metrics, runs.

Four PCs, each running one process of the sintree application and ``local_tasks`` CPU-bound
local tasks (the paper's compilations). A run ends when the root has finished its iterations.
These are models of measurements the paper made on real hardware: the costs of the hardware are
parameters, and every one the paper does not give is a named assumption (docs/pvm-model.md).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from simcore.core.engine import Engine
from simcore.models import Constraint, Metric, Parameter, with_defaults
from simcore.models.pvm.node import Node, Proc
from simcore.models.pvm.sintree import Sintree
from simcore.models.registry import get_policy, with_hyperparameters
from simcore.vocabulary.domains import COUNT, NONNEGATIVE, POSITIVE, Choice, Integer

MODEL = "pvm"

PARAMETERS: dict[str, Parameter] = with_hyperparameters(
    MODEL,
    {
        "nodes": Parameter(4, "PCs, one sintree process each (section 5: four; sintree's M = 4).", Integer(ge=2)),
        "iterations": Parameter(30000, "sintree iterations N (section 5: 30 000 by default).", COUNT),
        "local_tasks": Parameter(0, "CPU-bound local tasks per node (Figure 4: 0 to 3).", Integer(ge=0, le=16)),
        "compute": Parameter(
            50.0, "Mean CPU µs a process computes per iteration (exponential; not given).", NONNEGATIVE
        ),
        "send_cost": Parameter(30.0, "CPU µs to send one message (not given).", NONNEGATIVE),
        "read_cost": Parameter(15.0, "CPU µs of one read of a fragment (not given).", NONNEGATIVE),
        "latency": Parameter(
            120.0, "µs from a send to its head fragment's arrival, at least (not given).", NONNEGATIVE
        ),
        "jitter": Parameter(20.0, "Mean of the exponential µs added to the latency (not given).", NONNEGATIVE),
        "fragment_gap": Parameter(
            10.0, "Mean exponential µs between a message's head and body fragments (not given).", NONNEGATIVE
        ),
        "delays": Parameter(
            "exponential",
            "How compute, jitter and fragment gap vary: 'exponential' draws around their "
            "means, 'fixed' takes the means (scripted scenarios).",
            Choice("exponential", "fixed"),
        ),
        "switch_cost": Parameter(
            5.0, "W, µs to suspend or to wake a process (W_s = W_w; T_im = 2 W = 10 µs, section 5.2).", NONNEGATIVE
        ),
        "spin": Parameter(10.0, "sp, µs a spinning read waits before it blocks (section 5.2: 10).", POSITIVE),
        "tick": Parameter(10000.0, "µs between clock ticks (Linux 2.2 on x86: HZ = 100).", POSITIVE),
        "priority": Parameter(
            20,
            "Ticks of a process's static priority (Linux 2.2: DEF_PRIORITY = 20; nice values give "
            "1 to 40, so an ordinary goodness stays far below a real-time one's 1000).",
            Integer(ge=1, le=40),
        ),
    },
)  # then the modes' own hyperparameters (EXPLICIT's periods and signal cost)

CONSTRAINTS = (
    Constraint(("explicit_run", "explicit_stop", "signal_cost", "switch_cost"),
               "explicit_run and explicit_stop each exceed signal_cost + 2 switch_cost (a daemon's signal ends "
               "before its next one)",
               lambda p: min(p["explicit_run"], p["explicit_stop"]) > p["signal_cost"] + 2 * p["switch_cost"]),
)

METRICS: dict[str, Metric] = {
    "exec_time": Metric("Execution time of the sintree application (the root's last iteration), s.", "positive"),
    "local_stretch": Metric("Elapsed time per unit of CPU work a local task got during the run (its execution time "
                            "per second of work; undefined without local tasks).", "positive"),
    "blocks": Metric("Times a distributed process blocked, per iteration and process.", "nonnegative"),
    "spin_time": Metric("µs a distributed process spent spinning, per iteration and process.", "nonnegative"),
    "switch_time": Metric("µs of context switches on all nodes, per iteration.", "nonnegative"),
    "events": Metric("Simulation events fired in this mode's run.", "nonnegative"),
}


class Run(NamedTuple):
    metrics: dict[str, float]
    nodes: list[Node]
    app: Sintree


def full_params(params: dict) -> dict:
    """Defaults overridden by ``params``; unknown names and values outside domains are errors."""
    return with_defaults(MODEL, PARAMETERS, params, CONSTRAINTS)


def simulate(params: dict, mode: str, streams, attach=None) -> Run:
    """Run sintree under ``mode`` until the root finishes; ``attach(engine, nodes)`` before it starts."""
    engine = Engine()
    impl = get_policy(MODEL, mode)(params, streams.fresh(f"policy:{mode}"))
    phases = streams.fresh("ticks").uniform(0.0, params["tick"], params["nodes"])
    nodes = [Node(engine, i, params, float(phases[i])) for i in range(params["nodes"])]
    app = Sintree(engine, nodes, params, impl, streams, engine.stop)
    for node in nodes:
        for j in range(params["local_tasks"]):
            local = node.add(Proc(f"local{node.index}.{j}", params["priority"]))
            node.run(local, math.inf, None)
    app.start()
    for node in nodes:
        for p in node.procs:
            if p.name.startswith("local"):
                node.wake(p)
    impl.attach(engine, nodes, app.dps, params)
    if attach is not None:
        attach(engine, nodes)
    engine.run()
    return Run(measure(params, nodes, app, engine), nodes, app)


def measure(params: dict, nodes: list[Node], app: Sintree, engine: Engine) -> dict[str, float]:
    """The METRICS of one run."""
    n, span = params["iterations"], engine.now
    for node in nodes:
        node.close()
    locals_ = [p for node in nodes for p in node.procs if p.name.startswith("local")]
    work = [p.cpu - (p.overhead - p.owed) for p in locals_]   # switch costs not yet run are not work either
    return {
        "exec_time": span / 1e6,
        "local_stretch": span * len(work) / math.fsum(work) if work and all(w > 0 for w in work) else math.nan,
        "blocks": sum(p.blocks for p in app.dps) / (n * len(app.dps)),
        "spin_time": math.fsum(p.spun for p in app.dps) / (n * len(app.dps)),
        "switch_time": math.fsum(p.overhead for node in nodes for p in node.procs) / n,
        "events": float(engine.events),
    }


def run_replication(params: dict, policies: list[str], streams) -> dict[str, dict[str, float]]:
    """Metrics of every mode on common random numbers."""
    params = full_params(params)
    for name in policies:
        get_policy(MODEL, name)(params, streams.fresh(f"policy:{name}"))
    return {name: simulate(params, name, streams).metrics for name in policies}


def queue_probes(nodes: list[Node]) -> dict:
    """Runnable processes per node."""
    return {f"node{node.index}.runnable": node.runnable for node in nodes}


def monitor_replication(params: dict, mode: str, streams, period: float, duration: float):
    """One replication of ``mode`` with every node's runnable processes sampled every ``period`` µs for ``duration``."""
    from simcore.core.monitor import monitored

    params = full_params(params)
    return monitored(lambda attach: simulate(params, mode, streams, attach=attach), queue_probes, period, duration)
