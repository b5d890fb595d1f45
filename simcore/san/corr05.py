"""The analytical model of corr05 (section 5, Figure 8) reconstructed as a SAN.

One process P on a NUMA machine, every other process seen only through the processors' states.
Automata (the paper's): ``Proc`` with ``R<i>`` (ready on CPU i), ``Ep<i>`` (expired), ``Ex<i>``
(executing), ``IO<i>`` (waiting for I/O after running on i) and ``En`` (finished); one
``Cpu<i>`` per processor with ``IB`` (idle, balancing), ``Sc`` (scheduling), ``PB`` (periodic
balancing), ``EN`` (running another process), ``Ex`` (running P) and ``Er`` (failed).

The paper's rate tables are lost, so every rate here is a named parameter (:data:`PARAMETERS`,
each with its reason), and the balancing structure is not invented but read from the sched
domains that :mod:`simcore.topology.domains` builds for the NUMA simulator: a CPU enters ``PB``
at the sum over its domains of 1 / (busy balance interval), and in ``PB`` (or ``IB``, with the
idle intervals) it pulls P from CPU j with the probability that a balance at a level, drawn in
proportion to its frequency, finds an imbalance (``imbalance_found``; always when idle), picks
j's group among the other groups (equal expected loads: uniformly), j within it, and P among
the ``movable_tasks`` of j's queue. Running on a CPU at SLIT distance d from P's home node
slows P's work (not its timeslice) by the simulator's factor 1 + m (d/10 - 1).
"""

from __future__ import annotations

import math

from simcore.errors import InputError
from simcore.san.model import Rate, San, SanError
from simcore.topology.domains import DEFAULT_NODE_GROUPS, DEFAULT_NODE_INIT, NODE_GROUPS, NODE_INITS, domains_for
from simcore.topology.loader import load_topology
from simcore.topology.machine import TopologyError
from simcore.vocabulary.domains import NONNEGATIVE, NONNEGATIVE_INTEGER, POSITIVE, PROBABILITY, TEXT, Choice, Real
from simcore.vocabulary.parameters import Parameter

CPU_STATES = ["EN", "Sc", "PB", "IB", "Ex", "Er"]


class Param(Parameter):
    """A reconstructed quantity: its value, why, and the values it may take."""

    @property
    def value(self) -> float:
        return self.default

    @property
    def why(self) -> str:
        return self.doc


PARAMETERS = {
    "demand": Param(0.5, "mean CPU demand of P in s at local-memory speed: corr05's 'average execution time of 500 "
                         "ms'; exponential, so the remaining work is memoryless", POSITIVE),
    "burst": Param(0.1, "mean CPU burst of P in s before an I/O wait: 'timeslice + nice' ms with P at nice 0 "
                        "(timeslice 100 ms)", POSITIVE),
    "timeslice": Param(0.1, "P's timeslice in s (2.6 O(1) scheduler, nice 0: 100 ms); wall time, so not slowed by "
                            "remote memory", POSITIVE),
    "io_wait": Param(1.0, "mean I/O wait in s: corr05's 'average waiting time of 1 second'", POSITIVE),
    "expired_wait": Param(3.06, "mean time in s an expired P waits for its CPU's array switch; not stated anywhere, so "
                                "fitted: least squares over the 16 published points of the 2-sched curve on the 8-CPU "
                                "machine (`simcore san-fit config/san/corr05-fig8-2sched.yaml --parameter expired_wait "
                                "--bounds 2:5 --scale full`: 3.06 s, RMSE 0.022, 7 solutions); the workflow reruns the "
                                "fit at its scale. The 4-sched curve is then a prediction", POSITIVE),
    "memory_stall_fraction": Param(0.25, "m in the slowdown 1 + m (d/10 - 1) at SLIT distance d from home, the NUMA "
                                         "simulator's default", PROBABILITY),
    "pick": Param(0.95, "probability that a scheduling CPU with P ready picks P: P is high priority (nice 0) and only "
                        "9 of 200 tasks are nice 0, so another nice-0 task is rarely ready on the same CPU",
                        PROBABILITY),
    "preempt": Param(0.9, "probability that P's wake-up preempts the task running on its CPU (higher priority unless "
                          "that task is one of the other nice-0 ones)", PROBABILITY),
    "other_run": Param(0.0, "mean run in s of another process before its CPU reschedules: E[min(burst, slice)] "
                            "averaged over nice 1..19 with the simulator's timeslices and 'timeslice + nice' ms bursts "
                            "(0 = derive)", NONNEGATIVE),
    "kernel_path": Param(0.005, "mean time in s a CPU spends in Sc or PB before running a task again: a reschedule or "
                                "balance is acted on at the next tick (1 ms at HZ=1000), then the switch and the cache "
                                "refill follow; assumed 5 ms. A nuisance parameter: 2 against 10 ms moves the curve by "
                                "about 1e-3 (test), but shorter paths make the model stiffer", POSITIVE),
    "idle_share": Param(0.02, "probability that a scheduling CPU finds its run queue empty (P not queued there): 200 "
                              "I/O-bound tasks on 8 CPUs keep queues non-empty most of the time; assumed", PROBABILITY),
    "idle_period": Param(0.01, "mean time in s a CPU stays idle (IB) before a task wakes on it or it pulls one; "
                               "assumed 10 ms", POSITIVE),
    "imbalance_found": Param(0.25, "probability that a busy CPU's periodic balance finds an imbalance above "
                                   "imbalance_pct and moves a task; assumed (equal mean loads, fluctuating queues)",
                                   PROBABILITY),
    "movable_tasks": Param(3.0, "number of tasks on the busiest queue among which the moved one is chosen (P is one of "
                                "them); assumed from a load of 2-4 runnable tasks per CPU", Real(ge=1)),
    "failure": Param(0.0, "failure rate of a processor per s: no failure in corr05's figure ('normal end' reaches 0.85 "
                          "and still rises); Er is then unreachable and drops out of the state space", NONNEGATIVE),
    "repair": Param(1.0, "repair rate of a failed processor per s (used only when failure > 0)", NONNEGATIVE),
}

BUILDERS = {"2": "linux-2level", "n": "multilevel"}


def other_run(nice_min: int = 1, nice_max: int = 19, def_ms: float = 100.0, min_ms: float = 5.0) -> float:
    """Mean run of a non-P task in s: E[min(Exp(slice + nice), slice)] over nice_min..nice_max."""
    from simcore.models.numa.timeslice import timeslice

    runs = []
    for nice in range(nice_min, nice_max + 1):
        s = timeslice(nice, def_ms, min_ms)
        b = s + nice
        runs.append(b * (1 - math.exp(-s / b)))
    return sum(runs) / len(runs) / 1000.0


def _busy_rate(dom) -> float:
    """Periodic balances per second of a busy CPU at this domain (interval in ms)."""
    return 1000 / (dom.min_interval * dom.busy_factor)


def _idle_rate(dom) -> float:
    """Balances per second of an idle CPU at this domain."""
    return 1000 / dom.min_interval


def _pull_weights(domains, cpu: int, n_cpus: int, frequency) -> dict[int, float]:
    """P(a balance of this CPU pulls P from j | P queued on j), per j, weighting levels by ``frequency``."""
    freqs = [frequency(d) for d in domains]
    total = sum(freqs)
    weights = dict.fromkeys(range(n_cpus), 0.0)
    for dom, f in zip(domains, freqs):
        others = [g for g in dom.groups if cpu not in g]
        for group in others:
            for j in group:
                weights[j] += f / total / len(others) / len(group)
    return weights


#: The arguments of a model file's ``generator`` section (``topology`` and ``levels`` are required).
ARGUMENTS = {
    "topology": Parameter(None, "the machine: a topology catalog name or file", TEXT),
    "levels": Parameter(None, "sched-domain levels: '2' (Linux's stock two) or 'n' (one per distance)",
                              Choice(*BUILDERS)),
    "home_cpu": Parameter(0, "the CPU P starts on; its node is P's home", NONNEGATIVE_INTEGER),
    "node_init": Parameter(DEFAULT_NODE_INIT, "SD_NODE_INIT of the node-level domains", Choice(*NODE_INITS)),
    "node_groups": Parameter(DEFAULT_NODE_GROUPS, "groups of the node-level domains (simcore.topology.domains)",
                             Choice(*NODE_GROUPS)),
}


def from_spec(args: dict, params: dict, path: str) -> San:
    """The model of a model file's ``generator`` section (``topology``, ``levels``[, ``home_cpu``, ``node_init``,
    ``node_groups``])."""
    for key in args:
        if key not in ARGUMENTS:
            raise SanError(f"{path}: key 'generator.{key}' is unknown (known: model, {', '.join(ARGUMENTS)}).")
    for key in ("topology", "levels"):
        if key not in args:
            raise SanError(f"{path}: key 'generator.{key}' is missing.")
    args = {k: args.get(k, p.default) for k, p in ARGUMENTS.items()}
    for key, value in args.items():
        _check(ARGUMENTS[key], value, f"{path}: generator.{key}")
    try:
        return build(args["topology"], args["levels"], params, args["home_cpu"], args["node_init"], path,
                     args["node_groups"])
    except TopologyError as err:
        raise SanError(f"{path}: key 'generator.topology': {err}") from None


def _check(param: Parameter, value, where: str) -> None:
    """``param.check``, raising a SanError."""
    try:
        param.check(value, where)
    except InputError as err:
        raise SanError(str(err)) from None


def build(topology: str, levels: str, overrides: dict | None = None, home_cpu: int = 0,
          node_init: str = DEFAULT_NODE_INIT, where: str = "corr05 SAN",
          node_groups: str = DEFAULT_NODE_GROUPS) -> San:
    """The corr05 SAN on ``topology`` with Linux's 2 domain levels (``levels="2"``) or one per distance ("n")."""
    if levels not in BUILDERS:
        raise SanError(f"{where}: key 'generator.levels' must be one of {', '.join(BUILDERS)}, not {levels!r}.")
    p = {k: v.value for k, v in PARAMETERS.items()}
    for key, value in (overrides or {}).items():
        if key not in p:
            raise SanError(f"{where}: key 'parameters.{key}' is unknown (known: {', '.join(p)}).")
        _check(PARAMETERS[key], value, f"{where}: parameters.{key}")
        p[key] = float(value)
    p["other_run"] = p["other_run"] or other_run()
    machine = load_topology(topology)
    doms = domains_for(machine, BUILDERS[levels], node_init, node_groups)
    n = machine.cpus
    if not 0 <= home_cpu < n:
        raise SanError(f"{where}: key 'generator.home_cpu' must be a CPU of {topology} (0..{n - 1}), not {home_cpu}.")
    san = _assemble(p, machine, doms, n, home_cpu)
    san.about.update(topology=topology, builder=BUILDERS[levels], parameters=p,
                     why={k: v.why for k, v in PARAMETERS.items()})
    return san


def _assemble(p: dict, machine, doms, n: int, home_cpu: int) -> San:
    """The automata, then per CPU its own events, P's events with it and its pulls of P."""
    san = San(name="corr05", params={})
    san.automaton("Proc", [f"{s}{i}" for s in ("R", "Ep", "Ex", "IO") for i in range(n)] + ["En"])
    for i in range(n):
        san.automaton(f"Cpu{i}", CPU_STATES)
    san.initial({"Proc": f"R{home_cpu}", f"Cpu{home_cpu}": "Sc"})
    for i in range(n):
        busy, idle = _pull_weights(doms[i], i, n, _busy_rate), _pull_weights(doms[i], i, n, _idle_rate)
        _processor(san, p, i, sum(_busy_rate(dm) for dm in doms[i]), busy, idle)
        _process(san, p, i, 1 + p["memory_stall_fraction"] * (machine.distance(home_cpu, i) / 10 - 1))
        _pulls(san, p, i, busy, idle)
    away = [f"(Proc == {s}{i})" for i in range(n) if machine.cpu_node[i] != machine.cpu_node[home_cpu]
            for s in ("R", "Ep", "Ex", "IO")]
    san.measures.update({"finished": "Proc == En", "away": " + ".join(away) if away else "0"})
    return san


def _processor(san: San, p: dict, i: int, balance_rate: float, busy: dict, idle: dict) -> None:
    """CPU i's own events: switch to another task, balance, schedule (P, another task or idle), fail."""
    cpu, kernel = f"Cpu{i}", 1 / p["kernel_path"]
    queued = f"((Proc == R{i}) + (Proc == Ep{i}))"
    other = f"{kernel} * (1 - {p['pick']} * (Proc == R{i}) - {p['idle_share']} * (1 - {queued}))"
    san.local(cpu, "EN", "Sc", 1 / p["other_run"], name=f"switch{i}")
    san.local(cpu, "EN", "PB", balance_rate, name=f"balance{i}")
    san.local(cpu, "Sc", "EN", Rate(other), name=f"other{i}")
    san.local(cpu, "Sc", "IB", Rate(f"{kernel * p['idle_share']} * (1 - {queued})"), name=f"idle{i}")
    san.local(cpu, "PB", "EN", Rate(f"{kernel} * (1 - {_pull_sum(busy, p, i, 'imbalance_found')})"),
              name=f"balanced{i}")
    san.local(cpu, "IB", "Sc", Rate(f"{1 / p['idle_period']} * (1 - {_pull_sum(idle, p, i, None)})"),
              name=f"wake{i}")
    for src in ("EN", "IB"):
        san.local(cpu, src, "Er", p["failure"], name=f"fail{i}{src}")
    san.local(cpu, "Er", "IB", p["repair"], name=f"repair{i}")
    san.sync(f"dispatch{i}", kernel * p["pick"], {"Proc": [(f"R{i}", f"Ex{i}")], cpu: [("Sc", "Ex")]})


def _process(san: San, p: dict, i: int, slow: float) -> None:
    """P's run on CPU i ends (finished, I/O, slice expired), its I/O ends, its arrays switch."""
    cpu, r = f"Cpu{i}", p["timeslice"] / p["burst"]
    slice_rate = math.exp(-r) / (1 - math.exp(-r)) / p["burst"]   # P(I/O before the slice) = 1 - e^-r
    for name, dst, rate in (("end", "En", 1 / p["demand"] / slow), ("block", f"IO{i}", 1 / p["burst"] / slow),
                            ("expire", f"Ep{i}", slice_rate)):
        san.sync(f"{name}{i}", rate, {"Proc": [(f"Ex{i}", dst)], cpu: [("Ex", "Sc")]})
    pre = p["preempt"]
    wake = [(src, dst, q) for src, dst, q in (("EN", "Sc", pre), ("EN", "EN", 1 - pre)) if q > 0] + \
        [("IB", "Sc"), ("Sc", "Sc"), ("PB", "PB")]
    san.sync(f"wakeup{i}", 1 / p["io_wait"], {"Proc": [(f"IO{i}", f"R{i}")], cpu: wake})
    san.local("Proc", f"Ep{i}", f"R{i}", 1 / p["expired_wait"], name=f"switch_arrays{i}")


def _pulls(san: San, p: dict, i: int, busy: dict, idle: dict) -> None:
    """CPU i, balancing busy (PB) or idle (IB), pulls P, ready or expired, from CPU j."""
    cpu, kernel = f"Cpu{i}", 1 / p["kernel_path"]
    for j in busy:
        moves = [(f"R{j}", f"R{i}"), (f"Ep{j}", f"Ep{i}")]
        if busy[j] > 0:
            rate = kernel * busy[j] * p["imbalance_found"] / p["movable_tasks"]
            san.sync(f"pull{i}_{j}", rate, {"Proc": moves, cpu: [("PB", "Sc")]})
        if idle[j] > 0:
            san.sync(f"idle_pull{i}_{j}", idle[j] / p["idle_period"] / p["movable_tasks"],
                     {"Proc": moves, cpu: [("IB", "Sc")]})


def _pull_sum(weights: dict[int, float], p: dict, i: int, found: str | None) -> str:
    """Expression: the probability that a balance of CPU i moves P (0 when P is on no other CPU's queue)."""
    scale = (p[found] if found else 1.0) / p["movable_tasks"]
    terms = [f"{w * scale:.17g} * ((Proc == R{j}) + (Proc == Ep{j}))" for j, w in weights.items() if w > 0]
    return "(" + " + ".join(terms) + ")" if terms else "0"
