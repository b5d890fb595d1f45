"""The numa model (papers 000, 001): degenerate cases, invariants, common random numbers, policies."""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

import numpy as np
import pytest
import yaml
from numa_script import Hand, corrupt_queue, corrupt_running, set_task

from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.experiments import load_spec
from simcore.models import get_model
from simcore.models.numa import METRICS, PARAMETERS, format_trace, full_params, make_workload, run_replication, simulate
from simcore.models.numa import layout_kernels as LK
from simcore.models.numa import search_kernels as SRK
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa.system import NumaSystem
from simcore.models.registry import policy_names
from simcore.topology.domains import domains_for as build_domains
from simcore.topology.machine import make_machine

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ["linux-2level", "multilevel", "conservative-hard", "conservative-soft"]


# -- machines ---------------------------------------------------------------------------------------
def domains_for(machine, builder: str):
    """The real builders, with the x86_64 node intervals so that node balancing happens often."""
    return build_domains(machine, builder, "x86_64-2.6.12")


def Machine(name: str, distances, cpus_per_node: tuple):  # noqa: N802 - reads like the class it builds
    return make_machine("test", name, list(cpus_per_node), np.asarray(distances).astype(int).tolist())


def slit(rows):
    return np.array(rows, dtype=float)


ONE_CPU = Machine("one", slit([[10]]), (1,))
ONE_NODE = Machine("one-node", slit([[10]]), (4,))
FLAT = Machine("flat", slit([[10, 20, 20, 20], [20, 10, 20, 20], [20, 20, 10, 20], [20, 20, 20, 10]]), (2, 2, 2, 2))
# corr05 Fig. 7 style: 4 nodes, 2 CPUs each, four memory access levels
FOUR = Machine("four", slit([[10, 13, 16, 19], [13, 10, 19, 16], [16, 19, 10, 13], [19, 16, 13, 10]]), (2, 2, 2, 2))
# 8 nodes, four levels (10/15/18/21): the hard zone (S = 3) leaves out level 3
EIGHT = Machine("eight", slit([[10 if i == j else 12 + 3 * ((i ^ j).bit_length()) for j in range(8)]
                               for i in range(8)]), (2,) * 8)


def streams(rep: int = 0) -> Streams:
    return Streams(replication_seed(777, "test-numa", 0, rep))


def run(machine, params, policies=POLICIES, rep=0):
    return run_replication({"topology": "stand-in", **params}, policies, streams(rep), machine=machine,
                           domains_for=domains_for)


# -- tests ----------------------------------------------------------------------------------------
def test_interface():
    assert set(POLICIES) <= set(policy_names("numa"))
    assert get_model("numa").run_replication is run_replication
    for name in ("mean_turnaround", "lb_attempts", "lb_failed", "migrations", "makespan", "events", "share_level_0"):
        assert name in METRICS
    for name, p in PARAMETERS.items():
        assert p.doc, name
    out = run(FOUR, {"n_tasks": 30})
    for pol in POLICIES:
        assert all(isinstance(v, float) for v in out[pol].values())


@pytest.mark.parametrize("machine", [FOUR, EIGHT])
def test_metrics_lie_in_their_declared_ranges(machine):
    """The ranges the intervals rely on: shares in [0, 1], counts >= 0, a part never above its whole."""
    out = run(machine, {"n_tasks": 40, "io_task_fraction": 0.5})
    for pol in POLICIES:
        assert {k for k, v in out[pol].items() if not METRICS[k].admits(v)} == set(), pol
        for name, metric in METRICS.items():
            if metric.part_of:
                assert out[pol][name] <= out[pol][metric.part_of], (pol, name)
        assert out[pol]["events"] > 0
        assert abs(sum(out[pol][f"share_level_{k}"] for k in range(6)) - 1) < 1e-9
        assert 0 <= out[pol]["wasted_migrations"] <= 1 and 0 <= out[pol]["tasks_migrated"] <= 1
        m = out[pol]
        assert 0 <= m["lb_failed_live"] <= m["lb_attempts_live"] <= m["lb_attempts"]
        assert m["lb_attempts"] - m["lb_attempts_live"] == m["lb_failed"] - m["lb_failed_live"]  # the certain failures
        assert m["lb_attempts_live"] - m["lb_failed_live"] > 0                                   # some attempts moved
        assert m["lb_imbalanced"] + m["lb_no_imbalance"] == m["lb_attempts"]
        assert m["lb_imbalanced"] >= m["lb_attempts_live"] - m["lb_failed_live"]   # every attempt that moved found one
        assert m["refused_moves"] == m["refused_aged"] + m["refused_distance"] + m["refused_zone"]
        assert out[pol]["share_far"] == pytest.approx(out[pol]["share_level_3"])   # 4 levels: zone of 3
    assert run(FLAT, {"n_tasks": 30})["multilevel"]["share_far"] == 0.0           # 2 levels: all in zone


def rr_completions(demands, quantum):
    """Independent round robin: all tasks present at 0 in order, quantum ``quantum``."""
    q = deque(range(len(demands)))
    left = list(demands)
    t, done = 0.0, {}
    while q:
        i = q.popleft()
        run_ = min(quantum, left[i])
        t += run_
        left[i] -= run_
        if left[i] <= 1e-12:
            done[i] = t
        else:
            q.append(i)
    return [done[i] for i in range(len(demands))]


@pytest.mark.parametrize("dist", ["constant", "exponential"])
def test_single_cpu_is_round_robin(dist):
    params = full_params({"topology": "x", "n_tasks": 5, "arrival": "batch", "io_task_fraction": 0.0,
                          "n_nice0": 5, "demand_dist": dist, "mean_demand": 250.0, "creation_cpu": 0,
                          "check_invariants": True})
    work = make_workload(params, streams(), 1)
    res = simulate(params, work, "linux-2level", streams(), machine=ONE_CPU, domains_for=domains_for)
    expect = rr_completions([s.demand for s in work], 100.0)
    got = [t.finished for t in res.tasks]
    assert got == pytest.approx(expect, abs=1e-6)
    assert res.metrics["migrations"] == 0
    assert res.metrics["mean_turnaround"] == pytest.approx(sum(expect) / 5)


@pytest.mark.parametrize("rep, first_nice", [(0, 10), (1, 0)])
def test_single_cpu_nice_slices(rep, first_nice):
    """Unequal nice on one CPU, 200 ms each: nice 0 gets 100 ms slices at priority 120, nice 10
    50 ms slices at 130. Nice 0 first: it runs 0-100 and expires, nice 10 runs 100-150 and
    expires, the arrays swap, nice 0 runs 150-250 and ends, nice 10 runs 250-400 in three slices.
    Nice 10 first: nice 0, created next at t=0, preempts it at once, and the same schedule follows.
    Replications 0 and 1 of the test streams draw the two creation orders."""
    params = full_params({"topology": "x", "n_tasks": 2, "arrival": "batch", "io_task_fraction": 0.0,
                          "n_nice0": 1, "nice_min": 10, "nice_max": 10, "demand_dist": "constant",
                          "mean_demand": 200.0, "creation_cpu": 0, "check_invariants": True})
    work = make_workload(params, streams(rep), 1)
    assert work[0].nice == first_nice
    res = simulate(params, work, "linux-2level", streams(rep), machine=ONE_CPU, domains_for=domains_for)
    finished = {t.spec.nice: t.finished for t in res.tasks}
    assert finished == {0: pytest.approx(250.0), 10: pytest.approx(400.0)}


@pytest.mark.parametrize("machine", [ONE_NODE, FLAT])
def test_multilevel_equals_two_level_when_levels_do_not_differ(machine):
    params = {"n_tasks": 60, "creation_rate": 40.0}
    out = run(machine, params, ["linux-2level", "multilevel"])
    assert out["linux-2level"] == out["multilevel"]


def test_multilevel_differs_on_four_levels():
    out = run(FOUR, {"n_tasks": 80, "creation_rate": 40.0}, ["linux-2level", "multilevel"])
    assert out["linux-2level"] != out["multilevel"]


@pytest.mark.slow
@pytest.mark.parametrize("machine", [FOUR, EIGHT])
def test_invariants_hold_for_every_policy(machine):
    for rep in range(2):
        out = run(machine, {"n_tasks": 60, "creation_rate": 50.0, "check_invariants": True}, rep=rep)
        for pol in POLICIES:
            assert out[pol]["lb_attempts"] >= out[pol]["lb_failed"] >= 0
    out = run(machine, {"n_tasks": 40, "arrival": "batch", "io_task_fraction": 0.0, "creation_cpu": 0,
                        "placement": "parent", "check_invariants": True})
    assert all(out[p]["migrations"] > 0 for p in POLICIES)


@pytest.mark.slow
def test_common_random_numbers():
    params = full_params({"topology": "x", "n_tasks": 40, "creation_rate": 40.0})
    w1 = make_workload(params, streams(3), FOUR.cpus)
    w2 = make_workload(params, streams(3), FOUR.cpus)
    assert w1 == w2
    assert sum(s.nice == 0 for s in w1) == 9 and all(s.nice == 0 or 1 <= s.nice <= 19 for s in w1)
    seen = {}
    for pol in POLICIES:
        res = simulate({**params, "check_invariants": True}, w1, pol, streams(3), machine=FOUR,
                       domains_for=domains_for, trace=True)
        seen[pol] = [(t.spec, t.finished) for t in res.tasks]
        # the bursts a task ran: from its own generator, independent of the policy
        for t in res.tasks:
            assert t.spec == w1[t.tid]
    assert len({tuple(s for s, _ in v) for v in seen.values()}) == 1
    # the order of policies in one call changes nothing
    a = run(FOUR, {"n_tasks": 40}, ["linux-2level", "conservative-soft"], rep=3)
    b = run(FOUR, {"n_tasks": 40}, ["conservative-soft", "linux-2level"], rep=3)
    assert a == b


def test_burst_sequence_is_policy_independent():
    """The k-th burst and I/O wait of a task are the same under every policy."""
    params = full_params({"topology": "x", "n_tasks": 30, "creation_rate": 40.0})
    work = make_workload(params, streams(5), FOUR.cpus)
    runs = {}
    for pol in ("linux-2level", "conservative-hard"):
        res = simulate(params, work, pol, streams(5), machine=FOUR, domains_for=domains_for, trace=True)
        runs[pol] = {t.tid: [round(d, 6) for kind, _, d in t.trace if kind == "io"] for t in res.tasks}
    assert runs["linux-2level"] == runs["conservative-hard"]


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["conservative-hard", "conservative-soft"])
def test_conservative_never_moves_away_from_home(policy):
    """Every move of the conservative policies (the runs' logs of moves) goes to a node no farther
    from the task's home than the one it leaves, and no task moves more than max_migrations = 2
    times; the stock balancer does move tasks away from home on the same workload."""
    busy = {"n_tasks": 80, "creation_rate": 80.0, "max_migrations": 2, "check_invariants": True}
    batch = {"n_tasks": 60, "arrival": "batch", "io_task_fraction": 0.0, "creation_cpu": 0, "placement": "parent"}
    moves = [m for machine in (FOUR, EIGHT) for params in (busy, {**batch, "max_migrations": 2})
             for m in _moves(machine, params, policy)]
    assert moves
    for src_far, dst_far, before in moves:
        assert dst_far <= src_far
        assert before < 2
    assert any(dst_far > src_far for src_far, dst_far, _ in _moves(EIGHT, batch, "linux-2level"))


def _moves(machine, params: dict, policy: str) -> list[tuple[float, float, int]]:
    """Each move of one run: the distances of its source and destination nodes from the task's
    home, and the task's migrations before it."""
    params = full_params({"topology": "x", **params})
    res = simulate(params, make_workload(params, streams(), machine.cpus), policy, streams(), machine=machine,
                   domains_for=domains_for, trace=True)
    system, out, seen = res.system, [], {}
    dist, node = system.dist, system.cpu_node
    for _, tid, src, dst in system.moves:
        home = res.tasks[tid].home
        out.append((dist[node[src]][home], dist[node[dst]][home], seen.get(tid, 0)))
        seen[tid] = seen.get(tid, 0) + 1
    return out


def test_conservative_zone():
    from simcore.models.numa.policies import zone_size
    assert [zone_size(n) for n in (1, 2, 3, 4, 5, 6)] == [1, 2, 3, 3, 3, 4]
    # hard: on EIGHT (4 levels, zone of 3) nothing runs at level 3; the stock balancer does use it
    out = run(EIGHT, {"n_tasks": 60, "arrival": "batch", "io_task_fraction": 0.0, "creation_cpu": 0,
                      "placement": "parent"}, ["conservative-hard", "linux-2level"])
    hard = out["conservative-hard"]
    assert hard["share_level_3"] == 0 and hard["share_level_4"] == 0
    assert out["linux-2level"]["share_level_3"] + out["linux-2level"]["share_level_4"] > 0


def test_trace_format():
    params = full_params({"topology": "x", "n_tasks": 20, "creation_rate": 40.0})
    work = make_workload(params, streams(), FOUR.cpus)
    res = simulate(params, work, "linux-2level", streams(), machine=FOUR, domains_for=domains_for, trace=True)
    text = format_trace(res.tasks[0])
    assert re.fullmatch(r"(P\d+\.(wait|run)\(\d+\)|IO\(\d+\))( - (P\d+\.(wait|run)\(\d+\)|IO\(\d+\)))*", text)
    for t in res.tasks:
        ran = sum(d for kind, _, d in t.trace if kind == "run")
        assert ran == pytest.approx(t.cpu_time)
        assert sum(d for _, _, d in t.trace) == pytest.approx(t.finished - t.spec.created)


def test_errors_are_clear():
    with pytest.raises(InputError, match="unknown policy 'nope'"):
        run(FOUR, {"n_tasks": 5}, ["nope"])
    with pytest.raises(InputError, match="unknown parameter"):
        run(FOUR, {"n_taskz": 5}, ["multilevel"])
    with pytest.raises(InputError, match="arrival"):
        run(FOUR, {"arrival": "sometimes"}, ["multilevel"])
    with pytest.raises(InputError, match="topology"):
        run_replication({"topology": "no-such-machine"}, ["multilevel"], streams())


ROOT_SEED = yaml.safe_load((ROOT / "config/config.yaml").read_text())["seed"]
NUMA_SPECS = sorted(p.stem for p in ROOT.glob("config/experiments/*.yaml")
                    if p.stem.startswith(("corr05", "mehta")))


@pytest.mark.slow
@pytest.mark.parametrize("name", NUMA_SPECS)
def test_every_numa_experiment_keeps_the_invariants(name):
    """Each NUMA spec's workload (tasks capped at 60 to keep the per-event checks cheap) runs every
    policy with the invariants checked after every event, on the workflow's seed for replication 0
    (mehta-table4-w3 once crashed there on a -1e-14 timer delay)."""
    spec = load_spec(ROOT / "config/experiments" / f"{name}.yaml")
    for cell in spec.cells("smoke")[:2]:
        params = spec.params(cell.values)
        params.update(n_tasks=min(int(params["n_tasks"]), 60), check_invariants=True)
        seed = replication_seed(ROOT_SEED, spec.id, cell.index, 0)   # the workflow's first replication
        out = run_replication(params, spec.policies, Streams(seed))
        assert set(out) == set(spec.policies)
        assert all(m["mean_turnaround"] > 0 for m in out.values())


@pytest.mark.slow
def test_conservative_rules_on_busy_periodic_balancing_only():
    """rules_scope 'periodic' (mehta: idle balancing 'in the usual manner'): idle CPUs may pull tasks
    away from home, so tasks created on one CPU spread; with 'all' they never leave their home node."""
    params = {"n_tasks": 40, "arrival": "batch", "io_task_fraction": 0.0, "creation_cpu": 0,
              "placement": "parent", "check_invariants": True}
    for policy in ("conservative-hard", "conservative-soft"):
        strict = run(EIGHT, {**params, "rules_scope": "all"}, [policy, "multilevel"])
        usual = run(EIGHT, {**params, "rules_scope": "periodic"}, [policy])
        assert strict[policy]["share_level_0"] == 1.0
        assert usual[policy]["share_level_0"] < 0.8
        assert usual[policy]["mean_turnaround"] < 0.5 * strict[policy]["mean_turnaround"]
        assert usual[policy]["mean_turnaround"] < 1.5 * strict["multilevel"]["mean_turnaround"]


def test_every_domain_field_is_a_named_parameter():
    """SD_*_INIT values are defaults that a spec can override per level; None keeps the kernel's."""
    from simcore.models.numa.model import default_domains_for, tune_domains
    from simcore.topology import load_topology

    machine = load_topology("corr05-4x2")
    params = full_params({"node_busy_factor": 4, "node_imbalance_pct": 150, "cpu_max_interval": 8})
    tuned = tune_domains(default_domains_for(machine, "multilevel", params["domain_init"]), params)
    for doms in tuned:
        cpu, *nodes = doms
        assert (cpu.name, cpu.max_interval, cpu.busy_factor, cpu.imbalance_pct) == ("cpu", 8, 64, 125)
        assert all((d.busy_factor, d.imbalance_pct, d.min_interval, d.cache_hot_time) == (4, 150, 80, 10.0)
                   for d in nodes)
    base = run_replication({"topology": "corr05-4x2", "n_tasks": 60, "creation_rate": 100.0}, ["multilevel"], streams())
    x86 = run_replication({"topology": "corr05-4x2", "n_tasks": 60, "creation_rate": 100.0,
                           "domain_init": "x86_64-2.6.12"}, ["multilevel"], streams())
    assert base["multilevel"]["lb_attempts"] != x86["multilevel"]["lb_attempts"]
    with pytest.raises(InputError, match="domain_init"):
        run_replication({"topology": "corr05-4x2", "domain_init": "sparc"}, ["multilevel"], streams())


def test_load_average_is_the_kernels_integer_recurrence():
    """cpu_load after k ticks (``runqueue_kernels.decayed``) equals k steps of 2.6.11's
    (old + now) / 2, rounded up when rising."""
    from simcore.models.numa.runqueue_kernels import decayed

    rng = np.random.default_rng(1)
    for _ in range(500):
        avg, cur, k = int(rng.integers(0, 6000)), 128 * int(rng.integers(0, 40)), int(rng.integers(1, 70))
        x = avg
        for _ in range(k):
            x = ((x + 1 if cur > x else x) + cur) // 2
        assert decayed(avg, cur, k) == x


@pytest.mark.parametrize("params", [
    # busy: 100 creations/s and 100 ms I/O give ~100 migrations and active pushes in 0.4 s
    {"topology": "corr05-4x2", "n_tasks": 40, "creation_rate": 100.0, "mean_io": 100.0},
    pytest.param({"topology": "corr05-4x2", "n_tasks": 40}, marks=pytest.mark.slow),  # mostly idle CPUs, 3 s
    pytest.param({"topology": "superdome-16x4", "n_tasks": 50, "placement": "parent", "mean_demand": 300.0},
                 marks=pytest.mark.slow),  # ~25 s: in make test, out of make mutation
])
def test_sleeping_domains_count_the_attempts_the_kernel_makes(monkeypatch, params):
    """A quiet domain sleeps and its attempts are counted arithmetically when it wakes (and at the
    end of the run); making every attempt for real instead must give the same results: the same
    attempts, failures, migrations and times, under every policy. (Balancing ticks of two CPUs
    at the same instant fire in the order their timers were set, which the two ways set
    differently; where that order decides which CPU pulls a task, as in I/O-heavy runs, both
    outcomes are valid and the runs part. These workloads have no such tie.)"""
    from simcore.models.numa.balancer import Balancer

    policies = ["linux-2level", "multilevel", "conservative-hard", "conservative-soft"]
    sleeping = run_replication(params, policies, streams(3))
    monkeypatch.setattr(Balancer, "sleeps", False)
    awake = run_replication(params, policies, streams(3))
    # events differ by design; the split of attempts into live and certain failures can differ by
    # one attempt (an open question recorded on issue 10), every other number must be identical
    skip = {"events", "lb_attempts_live", "lb_failed_live"}
    for policy in policies:
        a, b = sleeping[policy], awake[policy]
        assert {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}, policy
        assert abs(a["lb_attempts_live"] - b["lb_attempts_live"]) <= 1, policy


def test_trace_replication_lines_follow_the_tasks():
    """`simcore trace`'s lines, checked against the tasks of the same run (same streams):
    one line per task in creation order, named T<k> with its nice; segments P<cpu>.wait(ms),
    P<cpu>.run(ms) and IO(ms), rounded to ms; a segment is in ** exactly
    when it is not the first, not I/O, and on a node whose distance level from the task's home
    is at least mehta's zone (S = 6 // 2 + 1 = 4 of mehta-8-4-6's six levels); migrated_only
    keeps the lines of the tasks that moved, in the same order."""
    from simcore.models.numa import trace_replication
    from simcore.models.numa.model import load_machine

    params = full_params({"topology": "mehta-8-4-6", "n_tasks": 40, "arrival": "uniform", "creation_window": 50.0,
                          "creation_cpu": 0, "placement": "parent", "max_migrations": 20})
    lines = trace_replication(params, "linux-2level", streams(3))
    machine = load_machine("mehta-8-4-6")
    res = simulate(params, make_workload(params, streams(3), machine.cpus), "linux-2level", streams(3),
                   machine=machine, trace=True)
    levels = sorted({d for row in machine.distances for d in row})
    assert len(levels) == 6
    node = [n for n, k in enumerate(machine.cpus_per_node) for _ in range(k)]
    order = sorted(res.tasks, key=lambda t: (t.spec.created, t.tid))
    assert len(lines) == len(order) == 40
    bold = 0
    for k, (line, task) in enumerate(zip(lines, order)):
        head, body = line.split(": ", 1)
        assert head == f"T{k} nice {task.spec.nice}"
        segments = body.split(" - ")
        assert len(segments) == len(task.trace)
        for i, (segment, (kind, cpu, d)) in enumerate(zip(segments, task.trace)):
            level = levels.index(machine.distances[node[cpu]][task.home]) if kind != "io" else -1
            far = i > 0 and kind != "io" and level >= 4
            text = f"IO({d:.0f})" if kind == "io" else f"P{cpu}.{kind}({d:.0f})"
            assert segment == (f"**{text}**" if far else text), (line, i)
            bold += far
    assert bold > 0  # the stock balancer does send tasks beyond the zone here
    moved = [line for line, task in zip(lines, order) if task.migrations]
    assert 0 < len(moved) < len(lines)
    assert trace_replication(params, "linux-2level", streams(3), migrated_only=True) == moved


@pytest.mark.parametrize("given,ok", [
    ({"cpu_min_interval": 4}, True),                # 4 <= SD_CPU_INIT's max 4
    ({"cpu_min_interval": 5}, False),               # 5 > 4
    ({"cpu_max_interval": 0.5}, False),             # SD_CPU_INIT's min 1 > 0.5
    ({"cpu_min_interval": 6, "cpu_max_interval": 8}, True),
    ({"node_min_interval": 320}, True),             # ia64 node: 80..320
    ({"node_min_interval": 321}, False),
    ({"node_max_interval": 79}, False),
    ({"node_max_interval": 79, "domain_init": "x86_64-2.6.12"}, True),   # x86_64 node: 8..32
    ({"node_min_interval": 33, "domain_init": "x86_64-2.6.12"}, False),
    ({"node_min_interval": 40, "node_max_interval": 30}, False),
])
def test_balancing_intervals_must_be_ordered_with_none_read_as_the_domain_init(given, ok):
    """min_interval <= max_interval per level, a bound left None taking the value the domain
    init gives it: SD_CPU_INIT 1..4 ms for CPUs; for nodes the chosen domain_init (ia64 80..320,
    x86_64 8..32 ms). The message names both bounds."""
    if ok:
        full_params(given)
        return
    level = next(iter(given)).split("_")[0]
    with pytest.raises(InputError, match=rf"{level}_min_interval <= {level}_max_interval .*does not hold"):
        full_params(given)


def _finished_system():
    """A small run's final state (every task done, every queue empty): consistent, so each
    corruption below breaks exactly one invariant."""
    params = full_params({"topology": "x", "n_tasks": 6, "creation_rate": 40.0})
    res = simulate(params, make_workload(params, streams(), FOUR.cpus), "linux-2level", streams(), machine=FOUR,
                   domains_for=domains_for)
    return res.system


def _bump(buf, at: int, by: float) -> None:
    buf[at] += by


CORRUPTIONS = {       # each writes the compiled state (layout_kernels) by hand
    "work delivered": (lambda s: _bump(s.SF, SL.Z_WORK, 1.0), "work consumed by tasks"),
    "cpu time delivered": (lambda s: _bump(s.SF, SL.Z_DELIV, 1.0), "CPU time received"),
    "unknown state": (lambda s: set_task(s, 0, T_STATE=7), "task 0 has state 7 after creation"),
    "over-served": (lambda s: set_task(s, 1, F_BURST=-0.01), "task 1 over-served"),
    "done but queued": (lambda s: corrupt_queue(s, 2), "task 2 queued on CPU 0 has state done"),
    "queue count": (lambda s: _bump(s.block("O_RI", 8)[1], SL.R_NQ, 1), "CPU 1 counts 1 queued tasks but holds 0"),
    "bitmap": (lambda s: _bump(s.block("O_RI", 8)[2], SL.R_BME, 4), "CPU 2 bitmap 100 != 0"),
    "busy flag": (lambda s: _bump(s.I, int(s.I[SL.O_BUSY]) + 3, 1), "CPU 3 busy flag is stale"),
    "loaded set": (lambda s: _bump(s.block("O_RI", 8)[4], SL.R_LOADED, 1), "CPU 4 loaded mark is stale"),
    "overloaded set": (lambda s: _bump(s.block("O_RI", 8)[5], SL.R_OVER, 1), "CPU 5 overloaded mark is stale"),
    "load mirror": (lambda s: _bump(s.F, int(s.I[SL.OF_CUR]) + 6, 128.0), "CPU 6 load mirror 128.0 != 0"),
    "done but running": (lambda s: corrupt_running(s, 3, 6), "task 3 current on CPU 6 has state done"),
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_the_invariant_checker_catches_each_corruption(case):
    """The checker is silent on a consistent final state and names the broken invariant."""
    from simcore.models.numa.invariants import InvariantError, check, check_final

    system = _finished_system()
    check_final(system)
    corrupt, message = CORRUPTIONS[case]
    corrupt(system)
    with pytest.raises(InvariantError, match=re.escape(message)):
        check(system)


def test_the_invariant_checker_follows_each_task_to_one_place():
    """A task queued twice, running while queued, queued with the wrong CPU, array or priority
    slot, or runnable on no queue: each is named. A queued task must sit on its own CPU's
    queue, in the expired array iff expired, at index prio - 100."""
    from simcore.models.numa.invariants import InvariantError, check

    def broken(setup, message):
        system = _finished_system()
        set_task(system, 0, T_STATE=LK.QUEUED, T_CPU=0, T_EXP=0)
        setup(system, 0)
        with pytest.raises(InvariantError, match=re.escape(message)):
            check(system)

    prio = int(_finished_system().block("O_TI", 6)[0, SL.T_PRIO])
    broken(
        lambda s, t: (corrupt_queue(s, t), corrupt_queue(s, t, cpu=1)),
        "task 0 is both queued on CPU 0 and queued on CPU 1",
    )
    broken(lambda s, t: (corrupt_queue(s, t), corrupt_running(s, t, 2)), "task 0 runs on CPU 2 and is queued on CPU 0")
    broken(lambda s, t: corrupt_queue(s, t, cpu=3), "task 0 queued on CPU 3 has state queued, cpu 0")
    broken(lambda s, t: corrupt_queue(s, t, expired=True), "task 0 queued on CPU 0 has state queued")
    broken(lambda s, t: corrupt_queue(s, t, prio=prio + 1), "task 0 queued on CPU 0 has state queued")
    broken(lambda s, t: None, "task 0 is queued but on no queue or CPU")
    broken(lambda s, t: (set_task(s, t, T_STATE=LK.RUNNING), corrupt_running(s, t, 1)),
           "task 0 current on CPU 1 has state running, cpu 0")
    # consistent: queued where it says, with the CPU's marks
    system = _finished_system()
    set_task(system, 0, T_STATE=LK.QUEUED, T_CPU=0, T_EXP=0)
    corrupt_queue(system, 0)
    check(system)


def test_the_final_check_wants_every_task_done_and_all_demand_served():
    """A blocked task is a consistent state mid-run but not at the end; demand the CPUs never
    delivered (a task left with 1 ms and the CPUs' tally 1 ms short, consistent with each
    other) is caught only by the final comparison with the tasks' demands."""
    from simcore.models.numa.invariants import InvariantError, check, check_final
    from simcore.models.numa.task import BLOCKED

    system = _finished_system()
    system.tasks[0].state = BLOCKED
    set_task(system, 0, T_STATE=LK.BLOCKED)
    check(system)
    with pytest.raises(InvariantError, match="never finished"):
        check_final(system)
    system = _finished_system()
    system.unfinished = 1
    with pytest.raises(InvariantError, match=re.escape("1 task(s) never finished")):
        check_final(system)
    system = _finished_system()
    set_task(system, 0, F_DEMAND=float(system.block("OF_TF", 6)[0, SL.F_DEMAND]) + 1.0)
    system.SF[SL.Z_WORK] -= 1.0
    system.work -= 1.0
    check(system)
    with pytest.raises(InvariantError, match=r"demand .* != work delivered"):
        check_final(system)


def test_the_invariant_checker_wakes_on_a_sleeping_domain_with_work_to_balance():
    """At the end every domain sleeps (nothing to balance). Two tasks queued on CPU 0 make the
    sibling CPU 1's domain able to find an imbalance, so its sleep is an error; with one task
    (running on CPU 0, nothing queued) no attempt could move anything and sleeping stays right."""
    from simcore.models.numa.invariants import InvariantError, check

    system = _finished_system()
    assert all(d.dormant for d in system.balancer.pdoms[1])
    set_task(system, 0, T_STATE=LK.RUNNING, T_CPU=0)
    corrupt_running(system, 0, 0)
    check(system)
    set_task(system, 1, T_STATE=LK.QUEUED, T_CPU=0, T_EXP=0)
    corrupt_queue(system, 1)
    with pytest.raises(InvariantError, match=r"CPU \d's domain .* sleeps while an attempt could find an imbalance"):
        check(system)


@pytest.mark.parametrize("key", ["cpu_min_interval", "cpu_max_interval", "node_min_interval", "node_max_interval"])
def test_an_optional_interval_is_none_or_positive(key):
    """None (read from the domain init) or a positive number of ms; anything else is refused
    with the domain's own words."""
    assert full_params({key: None})[key] is None
    for bad in (-1, 0, "x"):
        with pytest.raises(InputError, match=rf"parameter {key} = .* is not null or a positive real\."):
            full_params({key: bad})


def test_demands_around_the_mean_come_from_the_demand_stream():
    """'around-mean': mean_demand x (1 + spread u) with u uniform on (-1, 1), the third draw of
    the 'demand' stream (after the exponential and the uniform demands, which every mode draws);
    spread 0 gives the constant reading."""
    params = full_params({"n_tasks": 50, "demand_dist": "around-mean", "mean_demand": 200.0, "demand_spread": 0.2})
    tasks = make_workload(params, streams(4), 8)
    ds = streams(4)["demand"]
    ds.exponential(200.0, 50), ds.uniform(params["demand_min"], params["demand_max"], 50)
    expected = 200.0 * (1.0 + 0.2 * ds.uniform(-1.0, 1.0, 50))
    assert [t.demand for t in tasks] == pytest.approx(expected.tolist(), rel=1e-15)
    assert min(expected) >= 160.0 and max(expected) <= 240.0 and max(expected) - min(expected) > 60.0
    flat = make_workload({**params, "demand_spread": 0.0}, streams(4), 8)
    assert {t.demand for t in flat} == {200.0}
    with pytest.raises(InputError, match="demand_spread"):
        full_params({"demand_spread": 1.0})


def test_the_invariant_checker_reads_each_priority_slot_and_names_a_running_task():
    """Tasks queued at priorities 120 and 121 on CPU 0 (domains awake) set bits 20 and 21 of the
    active bitmap: consistent. A task running on CPU 0 and queued on CPU 1 is named as both."""
    from simcore.models.numa.invariants import InvariantError, check

    system = _finished_system()
    for doms in system.balancer.pdoms:
        for dom in doms:
            dom.dormant = False
    for t, prio in ((0, 120), (1, 121)):
        set_task(system, t, T_STATE=LK.QUEUED, T_CPU=0, T_EXP=0, T_PRIO=prio)
        corrupt_queue(system, t)
    assert system.block("O_RI", 8)[0, SL.R_BMA] == (1 << 20) | (1 << 21)
    check(system)
    system = _finished_system()
    set_task(system, 0, T_STATE=LK.RUNNING, T_CPU=0)
    corrupt_running(system, 0, 0)
    corrupt_queue(system, 0, cpu=1)
    with pytest.raises(InvariantError, match=re.escape("task 0 is both running on CPU 0 and queued on CPU 1")):
        check(system)


def test_over_service_is_tolerated_up_to_1e_6():
    """Over-service by at most 1e-6 (burst or demand left -1e-6, the other +1e-6: work unchanged)
    is rounding; demand left -1e-3 (burst +1e-3) is an over-served task."""
    from simcore.models.numa.invariants import InvariantError, check

    for burst, demand in ((-1e-6, 1e-6), (1e-6, -1e-6)):
        system = _finished_system()
        set_task(system, 1, F_BURST=burst, F_DEMAND=demand)
        check(system)
    system = _finished_system()
    set_task(system, 1, F_BURST=1e-3, F_DEMAND=-1e-3)
    with pytest.raises(InvariantError, match="task 1 over-served"):
        check(system)


def test_tallies_near_zero_agree_within_1e_6_absolute():
    """With no task, demand, work and CPU time consumed are 0: CPU tallies of 5e-7 are within the
    absolute 1e-6 (a relative tolerance alone would refuse any difference from 0); 2e-6 is not."""
    from simcore.models.numa.invariants import InvariantError, check, check_final

    system = _finished_system()
    system.tasks, system.work, system.delivered = [], 5e-7, 5e-7
    system.SF[SL.Z_WORK], system.SF[SL.Z_DELIV] = 5e-7, 5e-7
    system.block("O_TI", 6)[:, SL.T_STATE] = LK.NEW         # no task created
    check_final(system)
    system.SF[SL.Z_WORK] = 2e-6
    with pytest.raises(InvariantError, match="work consumed by tasks 0.0 != work delivered"):
        check(system)


def test_trace_never_bolds_io():
    """Every CPU far: all segments but the first are bold, except IO, which runs on no CPU."""
    from types import SimpleNamespace

    task = SimpleNamespace(trace=[("run", 0, 5.0), ("wait", 1, 2.0), ("io", 1, 3.0), ("run", 1, 4.0)])
    assert format_trace(task, far=lambda cpu: True) == "P0.run(5) - **P1.wait(2)** - IO(3) - **P1.run(4)**"


# -- make_workload, measure, simulate, run_replication and trace_replication, pinned down exactly --------
def test_make_workload_takes_one_task_and_refuses_none():
    """n_tasks 1 is a workload of one task; 0 is refused with the parameter's name (make_workload
    called directly: full_params already refuses 0 through the COUNT domain)."""
    params = full_params({"n_tasks": 1, "arrival": "batch", "demand_dist": "constant", "mean_demand": 70.0,
                          "creation_cpu": 2})
    (only,) = make_workload(params, streams(), 4)
    assert (only.tid, only.created, only.demand, only.parent_cpu) == (0, 0.0, 70.0, 2)
    with pytest.raises(InputError) as err:
        make_workload({"n_tasks": 0}, streams(), 4)
    assert str(err.value) == "numa model: parameter 'n_tasks' must be at least 1"


def test_creation_times_come_from_the_arrivals_stream():
    """'poisson': the cumulative sums of n exponential gaps of mean 1000 / creation_rate ms, the first
    draw of the 'arrivals' stream; 'uniform': the sorted U(0, creation_window) draws that follow
    them on the same stream; a window of 0 ms creates every task at 0."""
    n = 12
    poisson = full_params({"n_tasks": n, "creation_rate": 40.0})
    arr = streams(2)["arrivals"]
    gaps = arr.exponential(25.0, n)
    window = arr.uniform(0.0, 50.0, n)
    assert [t.created for t in make_workload(poisson, streams(2), 8)] == np.cumsum(gaps).tolist()
    uniform = {**poisson, "arrival": "uniform", "creation_window": 50.0}
    assert [t.created for t in make_workload(uniform, streams(2), 8)] == np.sort(window).tolist()
    assert {t.created for t in make_workload({**uniform, "creation_window": 0.0}, streams(2), 8)} == {0.0}


def test_make_workload_names_a_bad_mode_exactly():
    """Values that full_params would refuse, given to make_workload directly: each message names
    the parameter, its admissible values (CPUs 0..ncpus-1) and the value given."""
    base = full_params({"n_tasks": 3})
    cases = [
        (
            {"arrival": "sometimes"},
            "numa model: parameter 'arrival' must be poisson, uniform or batch, not 'sometimes'",
        ),
        (
            {"demand_dist": "normal"},
            "numa model: parameter 'demand_dist' must be exponential, uniform, constant or around-mean, not 'normal'",
        ),
        (
            {"creation_cpu": 8},
            "numa model: parameter 'creation_cpu' must be random, round-robin or a CPU in 0..7, not 8",
        ),
        (
            {"creation_cpu": 9},
            "numa model: parameter 'creation_cpu' must be random, round-robin or a CPU in 0..7, not 9",
        ),
    ]
    for change, message in cases:
        with pytest.raises(InputError) as err:
            make_workload({**base, **change}, streams(), 8)
        assert str(err.value) == message
    assert {t.parent_cpu for t in make_workload({**base, "creation_cpu": 7}, streams(), 8)} == {7}


def test_uniform_demands_and_parent_cpus_follow_their_parameters():
    """demand_dist 'uniform' with demand_min = demand_max = 120 gives 120 ms to every task, and
    otherwise the second draw of the 'demand' stream, U(demand_min, demand_max); creation_cpu
    'round-robin' gives tasks 0..4 on 2 CPUs the parents 0, 1, 0, 1, 0, and a CPU number (2 of 8)
    is every task's parent."""
    base = full_params({"n_tasks": 5, "demand_dist": "uniform", "demand_min": 120.0, "demand_max": 120.0})
    assert [t.demand for t in make_workload(base, streams(), 2)] == [120.0] * 5
    ds = streams(1)["demand"]
    ds.exponential(500.0, 5)
    expected = ds.uniform(50.0, 400.0, 5).tolist()
    spread = make_workload({**base, "demand_min": 50.0, "demand_max": 400.0}, streams(1), 2)
    assert [t.demand for t in spread] == expected
    assert [t.parent_cpu for t in make_workload({**base, "creation_cpu": "round-robin"}, streams(), 2)] == [
        0,
        1,
        0,
        1,
        0,
    ]
    assert [t.parent_cpu for t in make_workload({**base, "creation_cpu": 2}, streams(), 8)] == [2] * 5


def test_io_flags_and_burst_seeds_come_from_their_streams():
    """Task i is I/O-bound iff u_i < io_task_fraction, u the 'io' stream's uniforms: with the
    fraction set to the 7th smallest of the 12 draws (u_6 in replication 6), the 6 tasks with
    smaller draws are I/O-bound and task 6 itself is not (u_6 < u_6 fails). The burst seeds are
    the 'bursts' stream's integers in [0, 2**63 - 1)."""
    n = 12
    u = streams(6)["io"].random(n)
    k = int(np.argsort(u)[6])
    assert k == 6
    params = full_params({"n_tasks": n, "io_task_fraction": float(u[k])})
    work = make_workload(params, streams(6), 8)
    assert [t.io_bound for t in work] == [bool(x < u[k]) for x in u]
    assert work[k].io_bound is False and sum(t.io_bound for t in work) == 6
    assert [t.seed for t in work] == streams(6)["bursts"].integers(0, 2**63 - 1, n).tolist()


def _two_scripted_tasks():
    """On one CPU, two CPU-bound nice-0 tasks: T0 created at 10 ms needing 50 ms runs 10-60,
    T1 created at 100 ms needing 20 ms runs 100-120 (both shorter than the 100 ms slice)."""
    from simcore.models.numa.task import TaskSpec

    params = full_params({"topology": "x", "n_tasks": 2, "check_invariants": True})
    work = [TaskSpec(0, 10.0, 0, 50.0, 0, False, 1), TaskSpec(1, 100.0, 0, 20.0, 0, False, 2)]
    return params, work


def test_measure_on_a_scripted_single_cpu_run():
    """Turnarounds 50 and 20: mean 35 ms = 0.035 s; makespan 120 - 10 = 110 ms; nothing migrates,
    so tasks_migrated and wasted_migrations are 0; all CPU time at level 0. A run not asked for
    traces keeps none."""
    params, work = _two_scripted_tasks()
    res = simulate(params, work, "linux-2level", streams(), machine=ONE_CPU, domains_for=domains_for)
    assert [t.finished for t in res.tasks] == pytest.approx([60.0, 120.0], abs=1e-9)
    m = res.metrics
    assert m["mean_turnaround"] == pytest.approx(35.0, abs=1e-9)
    assert m["mean_turnaround_s"] == pytest.approx(0.035, rel=1e-12)
    assert m["makespan"] == pytest.approx(110.0, abs=1e-9)
    assert (m["migrations"], m["tasks_migrated"], m["wasted_migrations"], m["mean_migrations"]) == (0.0, 0.0, 0.0, 0.0)
    assert (m["share_level_0"], m["task_share_level_0"]) == (1.0, 1.0)
    assert all(t.trace is None for t in res.tasks)


def test_measure_bins_tasks_by_their_majority_level_and_clamps_far_levels():
    """measure on a hand-made finished system (levels 6 and beyond need a machine with seven
    distances or more): CPU time A {0: 30, 1: 10}, B {0: 5, 2: 20}, C {5: 10}, D {7: 25} (100 ms in
    all; level 7 goes to the last bin, 5). Shares per level: .35 .10 .20 0 0 .35, unused levels
    +0.0; four levels give the zone 3, so share_far = share of levels 3.. = .35. Majority levels
    0, 2, 5, 5: task shares 1/4, 0, 1/4, 0, 0, 2/4. Migrations 0, 1, 2, 0 (3 in all, 1 wasted):
    tasks_migrated 2/4, wasted 1/3, 3/4 per task. Turnarounds 100, 50, 30, 20 from 0, 10, 20, 30.
    The migrations crossed 4 distance levels in all (4/3 each); 2 moved a task off its home node,
    1 of them home (share 1/2). 7 attempts over the 100 ms to the last completion: 70 per second.
    6 ms of work added by balancing costs: 1.5 per task. 3 of the 7 attempts found an imbalance: 4
    found none, 2 of them certain failures, so 2 of the live ones. Refusals 2 + 5 + 1 = 8."""
    import math
    from types import SimpleNamespace

    from simcore.models.numa.model import measure
    from simcore.models.numa.system import Outcome

    rows = [({0: 30.0, 1: 10.0}, 0, 0.0, 100.0), ({0: 5.0, 2: 20.0}, 1, 10.0, 60.0),
            ({5: 10.0}, 2, 20.0, 50.0), ({7: 25.0}, 0, 30.0, 50.0)]
    level_time, reached = np.zeros((4, 8)), np.full((4, 8), -1)
    for i, (lt, *_) in enumerate(rows):
        for order, (lvl, x) in enumerate(lt.items()):
            level_time[i, lvl], reached[i, lvl] = x, order
    outcome = Outcome(np.arange(4), np.array([r[3] for r in rows]), np.array([r[2] for r in rows]), level_time,
                      reached, np.array([r[1] for r in rows]))
    system = SimpleNamespace(outcome=outcome, lb_attempts=7, lb_failed=4, lb_dead=2, migrations=3, active_pushes=1,
                             wasted_migrations=1, levels=[10, 13, 16, 19], migration_levels=4, away_moves=2,
                             home_moves=1, overhead=6.0, lb_found=3, refused={"aged": 2, "distance": 5, "zone": 1})
    m = measure(system, SimpleNamespace(events=11))
    assert [m[f"share_level_{k}"] for k in range(6)] == pytest.approx([0.35, 0.10, 0.20, 0.0, 0.0, 0.35], abs=1e-15)
    assert [math.copysign(1.0, m[f"share_level_{k}"]) for k in (3, 4)] == [1.0, 1.0]
    assert m["share_far"] == pytest.approx(0.35, abs=1e-15)
    assert [m[f"task_share_level_{k}"] for k in range(6)] == [0.25, 0.0, 0.25, 0.0, 0.0, 0.5]
    assert [m[f"task_share_from_level_{k}"] for k in range(1, 6)] == [0.75, 0.75, 0.5, 0.5, 0.5]
    assert (m["tasks_migrated"], m["wasted_migrations"], m["mean_migrations"]) == (0.5, 1 / 3, 0.75)
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"], m["lb_failed_live"]) == (7.0, 4.0, 5.0, 2.0)
    assert (m["mean_turnaround"], m["makespan"], m["events"]) == (50.0, 100.0, 11.0)
    assert (m["mean_migration_level"], m["home_return_share"], m["lb_attempts_per_s"]) == (4 / 3, 0.5, 70.0)
    assert m["overhead_per_task"] == 1.5
    assert (m["lb_imbalanced"], m["lb_no_imbalance"], m["lb_no_imbalance_live"]) == (3.0, 4.0, 2.0)
    assert (m["refused_moves"], m["refused_aged"], m["refused_distance"], m["refused_zone"]) == (8.0, 2.0, 5.0, 1.0)


def test_simulate_loads_the_topology_parameter_when_given_no_machine():
    """Without machine=, simulate runs on params['topology'] (corr05-4x2: 8 CPUs)."""
    params = full_params({"topology": "corr05-4x2", "n_tasks": 3, "arrival": "batch", "demand_dist": "constant",
                          "mean_demand": 20.0, "io_task_fraction": 0.0})
    res = simulate(params, make_workload(params, streams(), 8), "linux-2level", streams())
    assert res.system.ncpus == 8 and all(t.finished > 0 for t in res.tasks)


def test_simulate_reports_an_unknown_builder_and_an_unfinished_run(monkeypatch):
    """A domains_for that knows no domains for the policy's builder (KeyError) is an InputError
    naming the builder; tasks left unfinished at the end (check_invariants off) are a RuntimeError
    naming their number and the policy."""
    params, work = _two_scripted_tasks()
    with pytest.raises(InputError) as err:
        simulate(params, work, "linux-2level", streams(), machine=ONE_CPU, domains_for=lambda m, b: {}[b])
    assert str(err.value) == "numa model: unknown sched-domain builder 'linux-2level'"
    close = NumaSystem.close

    def leave_two(self, *args):
        close(self, *args)
        self.unfinished = 2

    monkeypatch.setattr(NumaSystem, "close", leave_two)
    with pytest.raises(RuntimeError) as err:
        simulate({**params, "check_invariants": False}, work, "linux-2level", streams(), machine=ONE_CPU,
                 domains_for=domains_for)
    assert str(err.value) == "numa model: 2 task(s) never finished under linux-2level"


def test_check_invariants_checks_during_the_run(monkeypatch):
    """check_invariants makes the system call invariants.check after its events, while tasks are
    still unfinished, not only in the final check."""
    from simcore.models.numa import invariants

    unfinished = []
    check = invariants.check

    def spy(system):
        unfinished.append(system.unfinished)
        check(system)

    monkeypatch.setattr(invariants, "check", spy)
    params, work = _two_scripted_tasks()
    simulate(params, work, "linux-2level", streams(), machine=ONE_CPU, domains_for=domains_for)
    assert max(unfinished) == 1 and unfinished[-1] == 0


def test_run_replication_builds_each_policys_domains_with_the_given_function():
    """domains_for given to run_replication is what each policy's run builds its domains with."""
    calls = []

    def spy(machine, builder):
        calls.append(builder)
        return domains_for(machine, builder)

    run_replication({"topology": "stand-in", "n_tasks": 2}, ["linux-2level", "multilevel"], streams(),
                    machine=FOUR, domains_for=spy)
    assert calls == ["linux-2level", "multilevel"]


def test_trace_replication_bolds_segments_on_cpu_0_when_it_is_far():
    """Four one-CPU nodes with FOUR's distances; four CPU-bound tasks created on CPU 3 stay there
    (placement 'parent'), so every home is node 3. Four levels give the zone 3: only node 0 (distance
    19) is far, so exactly the segments on P0 after the first are in **, and the balancer does
    pull a task to CPU 0."""
    from simcore.models.numa import trace_replication

    quad = make_machine(
        "test", "quad", [1, 1, 1, 1], [[10, 13, 16, 19], [13, 10, 19, 16], [16, 19, 10, 13], [19, 16, 13, 10]]
    )
    params = full_params({"topology": quad, "n_tasks": 4, "arrival": "batch", "io_task_fraction": 0.0,
                          "demand_dist": "constant", "mean_demand": 300.0, "creation_cpu": 3, "placement": "parent"})
    lines = trace_replication(params, "linux-2level", streams())
    assert len(lines) == 4
    bold_p0 = 0
    for line in lines:
        segments = line.split(": ", 1)[1].split(" - ")
        assert segments[0].startswith("P3.")
        for segment in segments[1:]:
            on_p0 = segment.strip("*").startswith("P0.")
            assert segment.startswith("**") == on_p0, line
            bold_p0 += on_p0
    assert bold_p0 > 0


# -- the balancer driven by hand: run queues filled directly, the engine never run ----------------------
def _lb_dom(span, groups, flags):
    """A sched domain over ``span`` with ``groups``; intervals of 10 s (the engine never runs anyway)."""
    from simcore.topology.domains import Domain

    return Domain(0, "cpu", frozenset(span), tuple(frozenset(g) for g in groups), 10000, 10000, 1, 125, 0.0, 1,
                  frozenset(flags))


LB_, NI_ = "LOAD_BALANCE", "BALANCE_NEWIDLE"


def test_a_small_imbalance_with_a_power_gain_moves_exactly_one_task():
    """Two CPUs, one domain {0}|{1}, 2.6.11 load averages, 1 ms ticks. At t=0 three tasks arrive on
    CPU 1 (one runs, two queue; cpu_load still 0); at t=1 ms (tick 1, the clock set by hand) CPU 1's
    cpu_load is (0 + 1 + 384) // 2 = 192, so its source load is min(192, 384) = 192; idle CPU 0 has
    target load 0. Busiest {1}: max 192, this 0, average 96, imbalance min(192 - 96, 96 - 0) = 96,
    below one task (x n_all: 192 < 256); the gap 192 is below two tasks (256); the power test:
    now min(128, 192) + min(128, 0) = 128, after a move min(128, 192 - 128) + min(128, 0 + 128) =
    192 > 128: a gain, so the imbalance is ONE task (not two, though CPU 1 has two queued).
    Newly idle, CPU 0 pulls exactly one task: the tail of CPU 1's queue, task 2."""
    d = _lb_dom({0, 1}, [{0}, {1}], (LB_, NI_))
    hand = Hand(2, [[d], [d]], load_average="tick", tick=1.0)
    hand.dispatch(1, 0, 1, 2)
    hand.set_now(1.0)
    assert hand.busiest(0, 0, SRK.IDLE) == ((1,), 1)
    hand.newidle(0)
    assert hand.queued(0) == [2]
    assert (hand.running(1), hand.migrations) == (2, 1)
    assert hand.counts == (1, 0, 0)


def test_newly_idle_balancing_skips_a_lower_domain_without_it_and_pulls_in_a_higher_one():
    """Four CPUs of one node. CPU 0's lower domain {0}|{1} balances periodically only (no
    BALANCE_NEWIDLE), its upper domain {0,1}|{2,3} newly idle too; the other CPUs have no domains.
    CPU 2 runs task 0 with task 1 queued. CPU 0 goes newly idle: the lower domain is passed over
    (no attempt) and the upper one is tried: this {0,1} = 0, busiest {2,3} = 256 over 2 CPUs,
    average 256 / 4 = 64 per CPU; imbalance x n_all = min(256 x 4 - 256 x 2, 256 x 2 - 0) = 512 =
    one task x 4 CPUs: one task, task 1, is pulled. One attempt, not failed, not dead."""
    low = _lb_dom({0, 1}, [{0}, {1}], (LB_,))
    high = _lb_dom(range(4), [{0, 1}, {2, 3}], (LB_, NI_))
    hand = Hand(4, [[low, high], [], [], []])
    hand.dispatch(2, 0, 1)
    hand.newidle(0)
    assert hand.queued(0) == [1]
    assert hand.counts == (1, 0, 0)


def test_newly_idle_attempts_with_nothing_queued_are_certain_failures():
    """Four CPUs; CPU 0 has two newly-idle domains, {0}|{1} and {0,1}|{2,3}. CPUs 1 and 2 run one
    task each, nothing is queued anywhere: each domain's attempt can pull nothing, so each counts
    as an attempt, a failure and a certain ("dead") failure: (2, 2, 2); nothing moves."""
    low = _lb_dom({0, 1}, [{0}, {1}], (LB_, NI_))
    high = _lb_dom(range(4), [{0, 1}, {2, 3}], (LB_, NI_))
    hand = Hand(4, [[low, high], [], [], []])
    hand.dispatch(1, 0)
    hand.dispatch(2, 1)
    hand.newidle(0)
    assert hand.counts == (2, 2, 2)
    assert (hand.running(0), hand.migrations) == (0, 0)


def test_newly_idle_balancing_leaves_a_queue_of_one_task_even_when_it_waits():
    """2.6.11 load_balance_newidle moves tasks only from a busiest queue with nr_running > 1.
    Five CPUs, CPU 0's one domain has groups {0} | {2} | {1,3,4} (newly idle). CPU 1 runs task 0
    with task 1 queued (something is movable in the span); CPU 2 holds task 2 queued but not yet
    running (as a CPU does between a pull and its dispatch): nr_running 1. Loads: {2} 128 / 1 =
    128, {1,3,4} 256 / 3 = 85: the busiest group is {2}; this 0, total 384 over 5 CPUs; imbalance
    x 5 = min(128 x 5 - 384, 384 - 0) = 256 < 640, gap 128 < 256, power now min(128, 128) + 0 = 128,
    after 0 + min(128, 0 + 128) = 128: no gain; newly idle, out_balanced still gives ({2}, 1). The
    busiest queue, CPU 2, has one task: nothing is pulled, the attempt fails (not a certain one)."""
    d = _lb_dom(range(5), [{0}, {2}, {1, 3, 4}], (LB_, NI_))
    hand = Hand(5, [[d], [], [], [], []])
    hand.dispatch(1, 0, 1)
    hand.queue(2, 2)
    assert hand.busiest(0, 0, SRK.NEWLY_IDLE) == ((2,), 1)
    hand.newidle(0)
    assert (hand.running(0), hand.running(2), hand.migrations) == (0, 1, 0)
    assert hand.counts == (1, 1, 0)


def test_queue_probes_read_each_cpus_queued_and_running_tasks():
    """Two CPUs: three tasks dispatched on CPU 0 (one runs, two queue: 3), one queued only on
    CPU 1 (nothing runs there: 1)."""
    from simcore.models.numa.model import queue_probes

    hand = Hand(2, [[_lb_dom({0, 1}, [{0}, {1}], {"LOAD_BALANCE"})]] * 2)
    hand.dispatch(0, 0, 1, 2)
    hand.queue(1, 3)
    assert {name: probe() for name, probe in queue_probes(hand.system).items()} == {
        "cpu0.runqueue": 3,
        "cpu1.runqueue": 1,
    }


def test_a_monitored_numa_replication_samples_every_cpu():
    """corr05-4x1, 8 tasks: every 200 ms for 600 ms, four CPUs at 0, 200, 400, 600 ms; no task
    exists before the first creation, so the first sample reads 0, and no CPU ever holds more
    than the 8 tasks."""
    from simcore.models.numa.model import monitor_replication

    frame = monitor_replication({"topology": "corr05-4x1", "n_tasks": 8}, "linux-2level", streams(), 200.0, 600.0)
    assert sorted(frame.time.unique()) == [0.0, 200.0, 400.0, 600.0]
    assert sorted(frame.queue.unique()) == [f"cpu{c}.runqueue" for c in range(4)]
    assert (frame[frame.time == 0.0].value == 0).all() and frame.groupby("time").value.sum().max() <= 8


@pytest.mark.parametrize("spec_id, cell", [
    ("corr05-fig9", 0),          # corr05: exponential bursts and I/O, Poisson creations
    ("corr05-fig13", 0),         # the 64-CPU Superdome, four policies' hierarchies
    ("mehta-table3-w1", 0),      # CPU-bound 200 ms tasks all created at t=0: ends tie with balancing ticks
    ("mehta-table1-8-2-3-io", 0),  # I/O for the rest of the slice
    pytest.param("mehta-table5-w3", 3, marks=pytest.mark.slow),
])
def test_timers_that_look_ahead_give_the_reference_runs(monkeypatch, spec_id, cell):
    """A lone task's timer set at its next decision (scheduler._look_ahead) gives, on the
    experiments' own workloads, every task the same completion time and the same trace, to the
    bit, as an event at every end of burst or slice, and the same metrics but the event count,
    which is smaller."""
    spec = load_spec(ROOT / f"config/experiments/{spec_id}.yaml")
    params = full_params(spec.params(spec.cell(cell).values))
    from simcore.models.numa.model import load_machine

    workload = make_workload(params, streams(5), int(load_machine(params["topology"]).cpus))
    runs = {}
    for look_ahead in (False, True):
        monkeypatch.setattr(NumaSystem, "look_ahead", look_ahead)
        runs[look_ahead] = [simulate(params, workload, p, streams(5), trace=True) for p in spec.policies]
    for ref, fast in zip(runs[False], runs[True]):
        assert [(t.finished, t.trace) for t in fast.tasks] == [(t.finished, t.trace) for t in ref.tasks]
        assert {k: v for k, v in fast.metrics.items() if k != "events"} == \
            {k: v for k, v in ref.metrics.items() if k != "events"}
        assert fast.metrics["events"] < ref.metrics["events"]
