"""Linux-like per-CPU scheduling with sched-domain balancing on NUMA machines (papers 000, 001).

``run_replication`` draws one task set and runs every requested policy on it. Time is in ms.
A task is created on its parent's CPU, placed by the policy (Linux: exec balancing), gets its
memory on the node it starts on or, with ``home_node`` 'creation', on its parent's node (its
*home*), and alternates CPU bursts and I/O waits until its
CPU demand is served; running on a CPU whose node is at SLIT distance d from home slows it by
1 + memory_stall_fraction * (d/10 - 1).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from simcore.core.engine import Engine
from simcore.core.rng import Streams
from simcore.errors import InputError
from simcore.models import Constraint, Metric, Parameter, with_defaults
from simcore.models.numa.bursts import check_machine
from simcore.models.numa.policies import zone_size  # importing registers the policies
from simcore.models.numa.task import Task, TaskSpec
from simcore.models.numa.task import columns as task_columns
from simcore.models.numa.timeslice import timeslice
from simcore.models.numa.trace import format_trace
from simcore.models.registry import get_policy, with_hyperparameters
from simcore.topology.domains import DEFAULT_NODE_GROUPS, NODE_GROUPS, NODE_INITS, SD_CPU_INIT
from simcore.vocabulary.domains import (
    BOOLEAN,
    COUNT,
    NONNEGATIVE,
    NONNEGATIVE_INTEGER,
    POSITIVE,
    PROBABILITY,
    TEXT,
    AnyOf,
    Choice,
    Integer,
    Real,
    Structured,
)

if TYPE_CHECKING:     # the kernels load when the first run starts, not when a spec is read
    from simcore.models.numa.system import NumaSystem

MAX_LEVELS = 6
NICE = Integer(ge=-20, le=19)


def _topology(value) -> str | None:
    """A catalog name or a topology file (loaded, and so checked, before a run), or a Machine (Python)."""
    return None if TEXT.admits(value) or hasattr(value, "distances") else "not a non-empty string"


def _optional(domain):
    return AnyOf(Choice(None), domain)


PARAMETERS: dict[str, Parameter] = with_hyperparameters(
    "numa",
    {
        "topology": Parameter(
            "superdome-16x4",
            "Machine: a topology catalog name or a SLIT file (simcore.topology.load_topology).",
            Structured("topology catalog name or file", _topology),
        ),
        # workload (drawn once per replication from named streams, shared by all policies)
        "n_tasks": Parameter(200, "Number of tasks created (corr05: 50-500; mehta: 50-400).", COUNT),
        "arrival": Parameter(
            "poisson",
            "Creation times: 'poisson' (rate creation_rate), 'uniform' (U(0, creation_window)) "
            "or 'batch' (all at t=0).",
            Choice("poisson", "uniform", "batch"),
        ),
        "creation_rate": Parameter(
            10.0,
            "Task creations per second (poisson). corr05 names an average creation rate but "
            "not its value; its preset fits 200/s to the rise of its Fig. 9 "
            "(config/presets/corr05.yaml).",
            POSITIVE,
        ),
        "creation_window": Parameter(
            1000.0,
            "Length of the creation window, ms (uniform; mehta's 'random' and 'almost same time' arrivals).",
            NONNEGATIVE,
        ),
        "n_nice0": Parameter(
            9,
            "Tasks with nice 0, chosen at random among all (corr05: nine); the rest draw nice "
            "uniformly from nice_min..nice_max.",
            NONNEGATIVE_INTEGER,
        ),
        "nice_min": Parameter(1, "Smallest nice of the other tasks (corr05: 1).", NICE),
        "nice_max": Parameter(19, "Largest nice of the other tasks (corr05: 19).", NICE),
        "demand_dist": Parameter(
            "exponential",
            "Total CPU demand: 'exponential' (mean mean_demand), 'constant' "
            "(mean_demand), 'uniform' (demand_min..demand_max) or 'around-mean' "
            "(uniform within demand_spread of mean_demand).",
            Choice("exponential", "constant", "uniform", "around-mean"),
        ),
        "demand_spread": Parameter(
            0.2,
            "For demand_dist 'around-mean': demands uniform on mean_demand x (1 - spread, 1 + "
            "spread) (mehta's 'average execution time').",
            Real(ge=0, lt=1),
        ),
        "mean_demand": Parameter(
            500.0, "Mean CPU demand of a task at local-memory speed, ms (corr05: 500 ms 'execution time').", POSITIVE
        ),
        "demand_min": Parameter(50.0, "Smallest demand for demand_dist 'uniform', ms (mehta S2 W3: 50).", POSITIVE),
        "demand_max": Parameter(400.0, "Largest demand for demand_dist 'uniform', ms (mehta S2 W3: 400).", POSITIVE),
        "io_task_fraction": Parameter(
            1.0,
            "Fraction of tasks whose bursts end in I/O (corr05: all); the others are "
            "CPU-bound and only lose the CPU at slice ends.",
            PROBABILITY,
        ),
        "burst_nice_ms": Parameter(
            1.0,
            "A CPU burst is min(Exp(mean = timeslice + burst_nice_ms * nice), timeslice) ms of "
            "work (corr05: 'timeslice + nice ms'); shorter than the slice means it ends in I/O.",
            NONNEGATIVE,
        ),
        "io_wait": Parameter(
            "exponential",
            "Length of the I/O wait after a burst: 'exponential' (mean mean_io; corr05) or "
            "'rest-of-slice' (what is left of the task's timeslice when the burst ends, "
            "after which the task wakes with a new slice; mehta's traces, where run + IO = "
            "100 ms).",
            Choice("exponential", "rest-of-slice"),
        ),
        "mean_io": Parameter(
            1000.0, "Mean of the exponential I/O wait after a burst, ms (corr05: 1 s; io_wait 'exponential').", POSITIVE
        ),
        "creation_cpu": Parameter(
            "random",
            "CPU of each task's parent: 'random' (uniform, workload stream), 'round-robin', or a CPU number.",
            AnyOf(Choice("random", "round-robin"), NONNEGATIVE_INTEGER),
        ),
        "home_node": Parameter(
            "start",
            "Node of a task's memory (its home): 'start' (the node of the CPU it is placed on: "
            "2.6.11 balances at exec, before the new program allocates its memory) or "
            "'creation' (the node of the CPU that created it, before placement: corr05 section "
            "2.2, 'The memory area of a process is allocated in the same node of the processor "
            "in which this process was created').",
            Choice("start", "creation"),
        ),
        # machine and scheduler
        "memory_stall_fraction": Parameter(
            0.25,
            "m in the slowdown 1 + m (d/10 - 1) at SLIT distance d from home: the "
            "share of local run time spent on memory, whose latency scales with d/10 "
            "(SLIT is relative latency). Assumed; neither paper states it.",
            PROBABILITY,
        ),
        "locality_scope": Parameter(
            "cpu",
            "What running far from the task's memory stretches "
            "(simcore/models/numa/bursts.py): 'cpu' (a burst is work at local speed, its "
            "wall time stretched by the slowdown; as many bursts and I/O waits anywhere) or "
            "'lifetime' (corr05 section 4: a burst is the wall time run without losing the "
            "CPU, at most the timeslice, and serves that time over the slowdown in work, so "
            "a task far from home needs more bursts and I/O waits).",
            Choice("cpu", "lifetime"),
        ),
        "def_timeslice": Parameter(100.0, "DEF_TIMESLICE, ms (2.6: 100 ms at HZ=1000).", POSITIVE),
        "min_timeslice": Parameter(5.0, "MIN_TIMESLICE, ms (2.6: 5 ms).", POSITIVE),
        "tick": Parameter(
            1.0,
            "Jiffy, ms (HZ=1000): balancing happens on tick boundaries; the load average decays per tick.",
            POSITIVE,
        ),
        "load_average": Parameter(
            "tick",
            "'tick': 2.6.11 cpu_load = (old + now)/2 per tick in integers, rounded up when "
            "rising (computed lazily; integer loads also make every sum exact, whatever the "
            "order), source/target = min/max with now; 'instant': nr_running * 128.",
            Choice("tick", "instant"),
        ),
        "idle_ignores_cache_hot": Parameter(
            True, "2.6.11 can_migrate_task: an idle CPU pulls cache-hot tasks too.", BOOLEAN
        ),
        "domain_init": Parameter(
            "ia64-2.6.12",
            "SD_NODE_INIT of the node-level domains (docs/linux26-scheduler.md): "
            "'ia64-2.6.12' (the papers' Itanium machines: 80-320 ms intervals, busy "
            "factor 320) or 'x86_64-2.6.12' (8-32 ms, 32).",
            Choice(*NODE_INITS),
        ),
        "node_groups": Parameter(
            DEFAULT_NODE_GROUPS,
            "Groups of the node-level domains (simcore/topology/domains.py): "
            "'per-node' (one group per node at every level, as Linux 2.6.11 "
            "builds its node domain: docs/linux26-scheduler.md, 'Building NUMA "
            "domains') or 'child-spans' (the child level's spans, cut to stay "
            "disjoint; corr05 section 2.2 does not say how its extra levels' "
            "groups are built).",
            Choice(*NODE_GROUPS),
        ),
        "cache_hot_time_cpu": Parameter(
            2.5, "cache_hot_time of the CPU (node-internal) domain, ms (2.6.11/12 SD_CPU_INIT: 2.5 ms).", NONNEGATIVE
        ),
        "cache_hot_time_node": Parameter(
            10.0, "cache_hot_time of node domains, ms (2.6.11/12 SD_NODE_INIT: 10 ms).", NONNEGATIVE
        ),
        **{
            f"{level}_{field}": Parameter(
                None,
                f"{field} of the {what} domains; None keeps the value of "
                f"SD_{level.upper()}_INIT "
                f"({'2.6.12' if level == 'cpu' else 'of domain_init'}).",
                _optional(domain),
            )
            for level, what in (("cpu", "CPU (node-internal)"), ("node", "node-level"))
            for field, domain in (
                ("min_interval", POSITIVE),
                ("max_interval", POSITIVE),
                ("busy_factor", COUNT),
                ("imbalance_pct", Integer(ge=100)),
                ("cache_nice_tries", NONNEGATIVE_INTEGER),
            )
        },
        "periodic_balancer": Parameter(
            "every-cpu",
            "Which CPUs balance periodically while busy: 'every-cpu' (2.6.11 "
            "rebalance_tick: each CPU over its own domains) or 'node-first' "
            "(mehta's Algorithm 1, whose balancing processor 'is the idle "
            "processor or the first processor': a busy CPU balances periodically "
            "only if it is its node's first CPU; every CPU still balances "
            "periodically while idle and on becoming idle).",
            Choice("every-cpu", "node-first"),
        ),
        "active_balance": Parameter(
            True,
            "When a periodic attempt that found an imbalance moves nothing and the domain's "
            "failure count (nr_balance_failed) then exceeds cache_nice_tries + 2, the "
            "busiest CPU's migration thread preempts its running task and pushes tasks to "
            "idle CPUs (2.6.11 active_load_balance): over its own balancing domains "
            "bottom-up, one task, cache-hot or not, to each idle CPU, nearest first, while "
            "it has a task left; the first task in move_tasks order that the policy allows, "
            "the preempted one included. The CPU that asked is not sought out; the failure "
            "count goes back to cache_nice_tries. Pushes count as migrations (also "
            "active_pushes). False: no push.",
            BOOLEAN,
        ),
        "lb_attempt_cost": Parameter(
            0.0,
            "CPU time of one balancing attempt, ms (mehta: 'storms of load balancing "
            "attempts ... involving large overheads of time', no value given). A periodic "
            "attempt of a busy CPU delays its running task by this much (its burst is "
            "lengthened so that it ends that much later; the slice runs on meanwhile, as 2.6 "
            "charges softirq time to the task it interrupts); an idle CPU's attempts delay "
            "no one. Above 0, no domain sleeps (every attempt is an event at its own tick) "
            "and a Python system balances in Python. 0: attempts are free.",
            NONNEGATIVE,
        ),
        "migration_cost": Parameter(
            0.0,
            "Work a task does again after each migration by the balancer, ms at local-memory "
            "speed (its cache refilled on the new CPU; run at that CPU's speed for the task's "
            "memory, like all its work): added to the moved task's burst. mehta names the "
            "overhead of process migration without a value; 2.6.16 sets cache_hot_time to "
            "twice the migration cost it measures. 0: migrations are free.",
            NONNEGATIVE,
        ),
        "check_invariants": Parameter(False, "Check the model's invariants after every event (tests).", BOOLEAN),
    },
)  # then the policies' own hyperparameters (simcore params lists which policies read them)


def _interval_order(level: str):
    def holds(p: dict) -> bool:
        init = SD_CPU_INIT if level == "cpu" else NODE_INITS[p["domain_init"]]
        low, high = (p[f"{level}_{f}"] if p[f"{level}_{f}"] is not None else init[f] for f in ("min_interval",
                                                                                               "max_interval"))
        return low <= high
    return Constraint((f"{level}_min_interval", f"{level}_max_interval", "domain_init"),
                      f"{level}_min_interval <= {level}_max_interval (None: the domain_init value)", holds)


def _bursts_positive(p: dict) -> bool:
    return all(timeslice(n, p["def_timeslice"], p["min_timeslice"]) + n * p["burst_nice_ms"] > 0
               for n in range(p["nice_min"], p["nice_max"] + 1))


CONSTRAINTS = (
    Constraint(("nice_min", "nice_max"), "nice_min <= nice_max", lambda p: p["nice_min"] <= p["nice_max"]),
    Constraint(("demand_min", "demand_max"), "demand_min <= demand_max", lambda p: p["demand_min"] <= p["demand_max"]),
    Constraint(("nice_min",
                "nice_max", "burst_nice_ms"), "a positive mean burst (timeslice + burst_nice_ms * nice) at every nice",
               _bursts_positive),
    _interval_order("cpu"),
    _interval_order("node"),
)

METRICS: dict[str, Metric] = {
    "mean_turnaround": Metric("Mean turnaround (completion - creation) of the tasks, ms.", "positive"),
    "mean_turnaround_s": Metric("The same in seconds (corr05 reports its execution times in seconds).", "positive"),
    "makespan": Metric("Last completion - first creation, ms.", "positive"),
    "lb_attempts": Metric("Load-balancing attempts (periodic, incl. those counted while their domain slept, and newly "
                          "idle).", "nonnegative"),
    "lb_failed": Metric("Attempts that moved no task.", "nonnegative", part_of="lb_attempts"),
    "lb_attempts_live": Metric("Attempts that could move a task (lb_attempts less the certain failures): newly-idle "
                               "ones while another CPU of the domain had a queued task; periodic ones while another "
                               "CPU of the domain had a queued task or a CPU in another group of several CPUs ran a "
                               "task (active balancing may push it).", "nonnegative"),
    "lb_failed_live": Metric("Of those, the attempts that moved no task (imbalance under the threshold, cache-hot or "
                             "refused tasks, a busiest CPU with nothing queued).",
                             "nonnegative", part_of="lb_attempts_live"),
    "lb_imbalanced": Metric("Attempts whose search found a busiest queue more loaded than their own CPU beyond the "
                            "threshold (2.6.11 find_busiest_group and find_busiest_queue found a group): mehta's "
                            "successful attempt, whether or not a task then moved.",
                            "nonnegative", part_of="lb_attempts"),
    "lb_no_imbalance": Metric("Attempts that found no busiest queue more loaded than their own CPU (lb_attempts less "
                              "lb_imbalanced): mehta II.A's unsuccessful attempt, 'the busiest processor of the "
                              "busiest scheduling group ... not found overloaded'.",
                              "nonnegative", part_of="lb_attempts"),
    "lb_no_imbalance_live": Metric("Of the attempts that could move a task (lb_attempts_live), those that found no "
                                   "imbalance.", "nonnegative", part_of="lb_attempts_live"),
    "refused_moves": Metric("Tasks the policy's rule of moves refused when a balancing attempt (or an active push) "
                            "examined them for a move: 0 under Linux; a task refused in several attempts counts each "
                            "time.", "nonnegative"),
    **{f"refused_{why}": Metric(f"Of the refused moves, those refused {text}.", "nonnegative", part_of="refused_moves")
       for why, text in (("aged", "because the task was aged (max_migrations)"),
                         ("distance", "because the move would take the task farther from home (distance_rule)"),
                         ("zone", "because the task's home lies outside the pulling CPU's zone (hard policy)"))},
    "migrations": Metric("Tasks moved by the balancer, active balancing included (initial placement not counted).",
                         "nonnegative"),
    "active_pushes": Metric("Of the migrations, those made by active balancing.", "nonnegative", part_of="migrations"),
    "mean_migrations": Metric("Migrations per task.", "nonnegative"),
    "tasks_migrated": Metric("Share of tasks migrated at least once by the balancer.", "share"),
    "wasted_migrations": Metric("Share of migrations after which the task was migrated again before it ran (mehta "
                                "II.B: successful balancing, unsuccessful migration).", "share"),
    "mean_migration_level": Metric("Mean distance level a migration crosses (0 = within a node; levels are the "
                                   "machine's sorted distinct SLIT distances): how far the balancer moves tasks "
                                   "(corr05's mechanism: tasks migrated to distant nodes).", "nonnegative"),
    "home_return_share": Metric("Of the migrations of tasks that were off their home node, the share that took them "
                                "back home (corr05: 'the probability they return back to their original nodes'); 0 "
                                "without such migrations.", "share"),
    "lb_attempts_per_s": Metric("Balancing attempts per second of the run (lb_attempts over the time from t=0 to the "
                                "last completion, when the run ends): mehta's overheads of balancing attempts.",
                                "nonnegative"),
    "share_far": Metric("Share of CPU time at distance levels beyond the conservative balancer's zone (levels >= S = L "
                        "// 2 + 1 of L >= 4 levels; 0 on machines with fewer than four levels): mehta's 'No Load "
                        "Balancing Zone'.", "share"),
    **{f"share_level_{k}": Metric(f"Share of CPU time executed at distance level {k} from the task's home node (0 = "
                                  "own node; levels are the machine's sorted distinct SLIT distances; the last bin "
                                  "holds all farther ones).", "share") for k in range(MAX_LEVELS)},
    **{f"task_share_level_{k}": Metric(f"Share of tasks that received most of their CPU time at distance level {k} "
                                       "from home (mehta Table 2 counts tasks per level).",
                                       "share") for k in range(MAX_LEVELS)},
    **{f"task_share_from_level_{k}": Metric("Share of tasks that received most of their CPU time at distance level "
                                            f"{k} or farther from home (mehta: 'far' nodes are levels IV-VI, level 3 "
                                            "on).", "share") for k in range(1, MAX_LEVELS)},
    "overhead_per_task": Metric("Work added per task by balancing costs (lb_attempt_cost, migration_cost), ms at "
                                "local-memory speed; 0 when both are 0.", "nonnegative"),
    "events": Metric("Simulation events fired (engine callbacks) in this policy's run; a lone task's timer skips the "
                     "ends of bursts and slices that decide nothing (docs/linux26-scheduler.md, 'The run timer').",
                     "nonnegative"),
}


class Result(NamedTuple):
    """One policy's run: its metrics, its tasks (with traces if asked) and the final system."""

    metrics: dict[str, float]
    tasks: list[Task]
    system: NumaSystem


def full_params(params: dict) -> dict:
    """Defaults overridden by ``params``; unknown names are an error. Checked once per distinct
    ``params`` (by their repr: a batch's replications share theirs); each call gets its own dict."""
    key = repr(sorted(params.items(), key=lambda item: str(item[0])))
    full = _FULL.get(key)
    if full is None:
        full = with_defaults("numa", PARAMETERS, params, CONSTRAINTS)
        if len(_FULL) >= 16:
            _FULL.clear()
        _FULL[key] = full
    return dict(full)


_FULL: dict[str, dict] = {}


# -- machine ------------------------------------------------------------------------------------
def load_machine(topology):
    """A Machine from a catalog name or path (or a Machine-like object, returned as is). A file
    already read is not parsed again while it is unchanged (a batch job's replications share it)."""
    if hasattr(topology, "distances"):
        return topology
    try:
        from simcore.topology import load_topology
    except ImportError as exc:  # pragma: no cover - only while simcore.topology is being written
        raise InputError(
            f"numa model: cannot load topology {topology!r}: simcore.topology unavailable ({exc})"
        ) from exc
    try:
        key = _file_key(topology)
        if key is None or key not in _MACHINES:
            machine = load_topology(topology)
            if key is None:
                return machine
            _MACHINES[key] = machine
        return _MACHINES[key]
    except InputError:
        raise
    except (KeyError, FileNotFoundError, ValueError) as exc:
        raise InputError(f"numa model: parameter 'topology': unknown or bad topology {topology!r} ({exc})") from exc


_MACHINES: dict = {}


def _file_key(topology) -> tuple | None:
    """(name, file, modification time, size) of a topology's file, or None if it cannot be found
    (``load_topology`` then says why)."""
    from simcore.topology.loader import CATALOG, _path
    try:
        path = _path(topology, CATALOG)
        stat = path.stat()
    except (InputError, OSError, TypeError):
        return None
    return str(topology), str(path.resolve()), stat.st_mtime_ns, stat.st_size


def default_domains_for(machine, builder: str, init: str = "ia64-2.6.12", node_groups: str = DEFAULT_NODE_GROUPS):
    from simcore.topology.domains import BUILDERS, domains_for
    if builder not in BUILDERS:
        raise InputError(f"numa model: unknown sched-domain builder {builder!r} (known: {', '.join(sorted(BUILDERS))})")
    for name, value, known in (("domain_init", init, NODE_INITS), ("node_groups", node_groups, NODE_GROUPS)):
        if value not in known:
            raise InputError(f"numa model: parameter '{name}' must be one of {', '.join(known)}, not {value!r}")
    return domains_for(machine, builder, init, node_groups)


TUNED_FIELDS = ("min_interval", "max_interval", "busy_factor", "imbalance_pct", "cache_nice_tries")


def tune_domains(domains, params: dict):
    """The domains with the model's overrides applied: cache-hot times always, the other
    SD_*_INIT fields where the parameter is set (not None). The CPU level is the one named 'cpu'."""
    fields = TUNED_FIELDS
    tuned = {}
    for level in ("cpu", "node"):
        over = {f: params[f"{level}_{f}"] for f in fields if params[f"{level}_{f}"] is not None}
        over["cache_hot_time"] = float(params[f"cache_hot_time_{level}"])
        tuned[level] = over
    memo: dict = {}

    def tune(d):
        if id(d) not in memo:
            memo[id(d)] = dataclasses.replace(d, **tuned["cpu" if d.name == "cpu" else "node"])
        return memo[id(d)]

    return [[tune(d) for d in doms] for doms in domains]


TUNING = tuple(f"{level}_{f}" for level in ("cpu", "node") for f in TUNED_FIELDS) + (
    "cache_hot_time_cpu", "cache_hot_time_node")             # the parameters tune_domains reads
_DOMAINS: dict = {}


def batch_domains(machine, builder: str, params: dict):
    """``tune_domains(default_domains_for(...))``, built once per machine, builder, node init, node
    groups and tuning: a batch's replications share the lists (the domains are frozen, and the
    balancer keeps what it derives from them per list: ``balancer.Static``)."""
    key = (id(machine), builder, params["domain_init"], params["node_groups"], tuple(params[name] for name in TUNING))
    hit = _DOMAINS.get(key)
    if hit is None or hit[0] is not machine:
        if len(_DOMAINS) >= 16:
            _DOMAINS.clear()
        domains = default_domains_for(machine, builder, params["domain_init"], params["node_groups"])
        hit = _DOMAINS[key] = (machine, tune_domains(domains, params))
    return hit[1]


# -- workload -----------------------------------------------------------------------------------
def make_workload(params: dict, streams: Streams, ncpus: int) -> list[TaskSpec]:
    """The replication's tasks, drawn once from named streams (every array drawn in full, so a
    mode switch never shifts another stream)."""
    n = int(params["n_tasks"])
    if n < 1:
        raise InputError("numa model: parameter 'n_tasks' must be at least 1")
    arr = streams["arrivals"]
    gaps = arr.exponential(1000.0 / float(params["creation_rate"]), n)
    window = arr.uniform(0.0, float(params["creation_window"]), n)
    mode = params["arrival"]
    if mode == "poisson":
        created = np.cumsum(gaps)
    elif mode == "uniform":
        created = np.sort(window)
    elif mode == "batch":
        created = np.zeros(n)
    else:
        raise InputError(f"numa model: parameter 'arrival' must be poisson, uniform or batch, not {mode!r}")
    ns = streams["nice"]
    nice = ns.integers(int(params["nice_min"]), int(params["nice_max"]) + 1, n)
    zero = ns.permutation(n)[: min(int(params["n_nice0"]), n)]
    nice[zero] = 0
    ds = streams["demand"]
    exp_d = ds.exponential(float(params["mean_demand"]), n)
    uni_d = ds.uniform(float(params["demand_min"]), float(params["demand_max"]), n)
    around = float(params["mean_demand"]) * (1.0 + float(params["demand_spread"]) * ds.uniform(-1.0, 1.0, n))
    dd = params["demand_dist"]
    if dd == "exponential":
        demand = exp_d
    elif dd == "uniform":
        demand = uni_d
    elif dd == "constant":
        demand = np.full(n, float(params["mean_demand"]))
    elif dd == "around-mean":
        demand = around
    else:
        raise InputError("numa model: parameter 'demand_dist' must be exponential, uniform, constant or around-mean, "
                         f"not {dd!r}")
    parents_random = streams["placement"].integers(0, ncpus, n)
    cc = params["creation_cpu"]
    if cc == "random":
        parents = parents_random
    elif cc == "round-robin":
        parents = np.arange(n) % ncpus
    elif isinstance(cc, (int, np.integer)) and 0 <= int(cc) < ncpus:
        parents = np.full(n, int(cc))
    else:
        raise InputError("numa model: parameter 'creation_cpu' must be random, round-robin or a CPU in "
                         f"0..{ncpus - 1}, not {cc!r}")
    io = streams["io"].random(n) < float(params["io_task_fraction"])
    seeds = streams["bursts"].integers(0, 2**63 - 1, n)
    return [TaskSpec(i, float(created[i]), int(nice[i]), float(demand[i]), int(parents[i]), bool(io[i]), int(seeds[i]))
            for i in range(n)]


# -- one run ------------------------------------------------------------------------------------
def make_policy(name: str, params: dict, streams: Streams):
    """Policy ``name`` built on ``params`` with its own stream (InputError for an unknown name or a bad value)."""
    return get_policy("numa", name)(params, streams.fresh(f"policy:{name}"))


def simulate(params: dict, workload: list[TaskSpec], policy: str, streams: Streams, *, machine=None,
             domains_for=None, trace: bool = False, draws: dict | None = None, scripted: dict | None = None,
             attach=None, fill_tasks: bool = True) -> Result:
    """Run ``policy`` on ``workload`` until every task has finished. ``draws``: a dict shared by
    the runs of one workload, where the tasks' burst/I-O draws are kept; ``scripted``: draws given
    by hand, task seed -> standard exponentials in the order the task takes them (scenario tests;
    ``system._draws``). ``fill_tasks`` False: only the metrics are wanted (``run_replication``), so
    the tasks' result fields are left unset, and a compiled run makes no Task objects at all (the
    result's ``tasks`` is None).
    ``attach(engine, system)``, if given, is called before the run starts (e.g. a monitor)."""
    from simcore.models.numa import invariants
    from simcore.models.numa.system import NumaSystem

    machine = load_machine(params["topology"] if machine is None else machine)
    impl = make_policy(policy, params, streams)
    try:
        if domains_for is None:
            domains = batch_domains(machine, impl.builder, params)
        else:
            domains = tune_domains(domains_for(machine, impl.builder), params)
    except KeyError as exc:
        raise InputError(f"numa model: unknown sched-domain builder {impl.builder!r}") from exc
    impl.setup(machine, domains)
    check_machine(params, machine)
    engine = Engine()
    system = NumaSystem(engine, machine, domains, impl, params)
    if params["check_invariants"]:
        system.check = invariants.check
    compiled = attach is None and COMPILED_LOOP and not trace and not params["check_invariants"]
    tasks = [Task(spec, params, trace) for spec in workload] if fill_tasks or not compiled else None
    cols = task_columns(workload, params, draws)
    system.expect(tasks, draws, scripted, cols)
    if compiled and not system.observed:
        system.run_compiled()
    else:
        _run_on_simpy(engine, system, tasks, cols.order.tolist(), attach)
    system.close(fill_tasks or params["check_invariants"])
    if params["check_invariants"]:
        invariants.check_final(system)
    elif system.unfinished:
        raise RuntimeError(f"numa model: {system.unfinished} task(s) never finished under {policy}")
    return Result(measure(system, engine), tasks, system)


def _run_on_simpy(engine: Engine, system: NumaSystem, tasks: list, order: list[int], attach) -> None:
    """The run driven by SimPy: each task's creation a SimPy event that schedules the next, the
    kernels' timers fired between them (``NumaSystem``'s proxies), ``attach`` called first."""
    def arrive(j: int) -> None:
        system.create(tasks[order[j]])
        if j + 1 < len(order):
            engine.schedule(tasks[order[j + 1]].spec.created - engine.now, lambda: arrive(j + 1))

    engine.schedule(tasks[order[0]].spec.created, lambda: arrive(0))
    if attach is not None:
        attach(engine, system)
    engine.run()


#: Run a replication that nothing in Python observes (no monitor, trace or invariant checks) in
#: the kernels' own event loop (``NumaSystem.run_compiled``); False: every run driven by SimPy.
#: Both give the same bytes (tests/test_numa_system.py).
COMPILED_LOOP = True


def measure(system: NumaSystem, engine: Engine) -> dict[str, float]:
    """The METRICS of one finished run (from the arrays ``NumaSystem.close`` reads out)."""
    from simcore.models.numa.task_kernels import level_shares

    done = system.outcome
    n = len(done.order)
    finished, created = done.finished[done.order], done.created[done.order]
    turn = math.fsum((finished - created).tolist()) / n
    share_, task_count_ = level_shares(done.order, done.level_time, done.reached, MAX_LEVELS)
    share, task_count = share_.tolist(), task_count_.tolist()   # counted, then divided: n times 1/n may exceed 1
    total = math.fsum(share) or 1.0
    out = {
        "mean_turnaround": turn,
        "mean_turnaround_s": turn / 1000.0,
        "makespan": float(finished.max() - created.min()),
        "lb_attempts": float(system.lb_attempts),
        "lb_failed": float(system.lb_failed),
        "lb_attempts_live": float(system.lb_attempts - system.lb_dead),
        "lb_failed_live": float(system.lb_failed - system.lb_dead),
        "lb_imbalanced": float(system.lb_found),
        "lb_no_imbalance": float(system.lb_attempts - system.lb_found),
        "lb_no_imbalance_live": float(system.lb_attempts - system.lb_found - system.lb_dead),
        "refused_moves": float(sum(system.refused.values())),
        **{f"refused_{why}": float(k) for why, k in system.refused.items()},
        "migrations": float(system.migrations),
        "active_pushes": float(system.active_pushes),
        "mean_migrations": system.migrations / n,
        "tasks_migrated": int((done.migrations > 0).sum()) / n,
        "wasted_migrations": system.wasted_migrations / system.migrations if system.migrations else 0.0,
        "mean_migration_level": system.migration_levels / system.migrations if system.migrations else 0.0,
        "home_return_share": system.home_moves / system.away_moves if system.away_moves else 0.0,
    }
    out["overhead_per_task"] = system.overhead / n
    out["lb_attempts_per_s"] = out["lb_attempts"] / (float(finished.max()) / 1000.0)   # the run starts at t=0
    zone = zone_size(len(system.levels))
    out["share_far"] = math.fsum(share[zone:]) / total
    out.update({f"share_level_{k}": share[k] / total for k in range(MAX_LEVELS)})
    out.update({f"task_share_level_{k}": task_count[k] / n for k in range(MAX_LEVELS)})
    out.update({f"task_share_from_level_{k}": sum(task_count[k:]) / n for k in range(1, MAX_LEVELS)})
    out["events"] = float(engine.events)
    return out


def run_replication(params: dict, policies: list[str], streams: Streams, *, machine=None,
                    domains_for=None) -> dict[str, dict[str, float]]:
    """Metrics of every policy on one common task set."""
    params = full_params(params)
    for name in policies:  # fail before any work on an unknown policy
        make_policy(name, params, streams)
    machine = load_machine(params["topology"] if machine is None else machine)
    workload = make_workload(params, streams, int(machine.cpus))
    draws: dict = {}
    return {name: simulate(params, workload, name, streams, machine=machine, domains_for=domains_for,
                           draws=draws, fill_tasks=False).metrics
            for name in policies}


def trace_replication(params: dict, policy: str, streams: Streams, *, migrated_only: bool = False) -> list[str]:
    """One line per task, in creation order: ``T<i> nice <n>: P3.wait(12) - P3.run(79) - IO(21) ...``.
    Segments on CPUs beyond the zone of the task's home node (mehta's 'No LB Zone') are in ``**``;
    ``migrated_only`` keeps the tasks the balancer moved."""
    params = full_params(params)
    machine = load_machine(params["topology"])
    workload = make_workload(params, streams, int(machine.cpus))
    result = simulate(params, workload, policy, streams, machine=machine, trace=True)
    tasks, system = result.tasks, result.system
    zone = zone_size(len(system.levels))

    def far(task, cpu):
        return cpu >= 0 and system.level_of[system.cpu_node[cpu]][task.home] >= zone

    order = sorted(range(len(tasks)), key=lambda i: (tasks[i].spec.created, i))
    return [format_trace(tasks[i], f"T{k} nice {tasks[i].spec.nice}", far=lambda c, t=tasks[i]: far(t, c))
            for k, i in enumerate(order) if tasks[i].migrations or not migrated_only]


def queue_probes(system) -> dict:
    """The queues a monitor samples: each CPU's runnable tasks (queued plus the running one)."""
    return {f"cpu{cpu}.runqueue": (lambda c: lambda: system.runnable(c))(cpu) for cpu in range(system.ncpus)}


def monitor_replication(params: dict, policy: str, streams: Streams, period: float, duration: float):
    """One replication of ``policy`` with every CPU's run queue sampled every ``period`` ms for
    ``duration`` ms (a table time, queue, value; see simcore.core.monitor). The monitor's own
    events keep the run going to ``duration`` at least, so its metrics are not reported."""
    from simcore.core.monitor import monitored

    params = full_params(params)
    machine = load_machine(params["topology"])
    workload = make_workload(params, streams, int(machine.cpus))
    return monitored(lambda attach: simulate(params, workload, policy, streams, machine=machine, attach=attach),
                     queue_probes, period, duration)
