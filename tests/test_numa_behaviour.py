"""The numa model's decision rules, one scripted scenario each, outcomes derived by hand.

Every scenario builds a tiny machine, gives each CPU the sched domains it needs (a CPU with no
domain never balances), creates CPU-bound tasks at given times on given CPUs and runs the model
to the end. Unless a test says otherwise: loads are instantaneous (nr_running x 128), memory is
not slower anywhere, new tasks stay on their parent's CPU, nothing is cache-hot, a nice-0
timeslice is 100 ms, and the invariants are checked after every event.

Timing facts the derivations use (docs/linux26-scheduler.md, "Periodic balancing"):
- a domain's first attempt is due ``min_interval`` after its ``last`` balance, which starts at
  ``-floor(1000 * cpu / ncpus)`` (the kernel's stagger): on two CPUs CPU 0 starts at 0 and CPU 1
  at -500, so CPU 1's first attempt happens at t = 0, before any task exists;
- while the CPU runs a task the interval is multiplied by ``busy_factor``;
- at one instant, the ends of bursts and slices come first (by CPU number), then the other
  events in the order they were scheduled; the balancing timers set up with the machine come
  before the first task's creation.

``pulls`` lists every migration as (time, task, from CPU, to CPU).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np
import pytest

from simcore.core.rng import Streams, replication_seed
from simcore.models.numa import full_params, invariants, simulate
from simcore.models.numa import layout_kernels as LK
from simcore.models.numa import search_kernels as SRK
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa.balancer import Balancer
from simcore.models.numa.system import NumaSystem
from simcore.models.numa.task import TaskSpec
from simcore.topology.domains import Domain
from simcore.topology.machine import Machine, make_machine

LB, NI, EX = "LOAD_BALANCE", "BALANCE_NEWIDLE", "BALANCE_EXEC"


# -- scenario building ------------------------------------------------------------------------
class T(NamedTuple):
    """A scripted task: created at ``at`` ms on CPU ``cpu`` with ``demand`` ms of CPU work."""

    at: float
    cpu: int
    demand: float
    nice: int = 0
    io: bool = False


def dom(span, groups, *, flags=(LB,), interval=(50, 50), busy_factor=1, imbalance_pct=125, cache_nice_tries=1,
        name="cpu") -> Domain:
    """A sched domain; ``interval`` is (min_interval, max_interval) in ms. Its cache-hot time comes
    from the run's parameters (``cache_hot_time_cpu`` for a domain named "cpu")."""
    return Domain(0, name, frozenset(span), tuple(frozenset(g) for g in groups), interval[0], interval[1],
                  busy_factor, imbalance_pct, 0.0, cache_nice_tries, frozenset(flags))


def one_node(cpus: int):
    return make_machine("test", f"flat-{cpus}", [cpus], [[10]])


def nodes(n: int, remote: int = 20):
    """``n`` nodes of one CPU each, every remote distance ``remote``."""
    return make_machine("test", f"nodes-{n}", [1] * n, [[10 if i == j else remote for j in range(n)] for i in range(n)])


def near_5() -> Machine:
    """One node whose own SLIT distance is 5: no valid table (make_machine refuses a diagonal
    other than 10), built directly to reach the model's memory arithmetic at half speed."""
    import numpy as np

    return Machine("near-5", "own distance 5", "test", (1,), np.array([[5]]))


class Outcome(NamedTuple):
    tasks: list
    metrics: dict
    pulls: list        # (time, task, from CPU, to CPU) of every migration
    counts: list       # (time, task, lb_attempts, lb_failed, lb_dead) right after each task's creation


@pytest.fixture
def scenario(monkeypatch):
    """``scenario(machine, domains, tasks, policy="linux-2level", draws=None, **params) -> Outcome``,
    run on the compiled system, the one the experiments run."""
    counts = []
    create = NumaSystem.create

    def spy_create(self, task):
        create(self, task)
        counts.append((self.now, task.tid, *self.lb_counts()))

    monkeypatch.setattr(NumaSystem, "create", spy_create)

    def once(machine, domains, tasks, policy, draws, params, look_ahead):
        counts.clear()
        monkeypatch.setattr(NumaSystem, "look_ahead", look_ahead)
        specs = [TaskSpec(i, float(t.at), t.nice, float(t.demand), t.cpu, t.io, i) for i, t in enumerate(tasks)]
        res = simulate(params, specs, policy, Streams(replication_seed(1, "scripted", 0, 0)), machine=machine,
                       domains_for=lambda m, builder: domains, trace=True, scripted=draws)
        assert type(res.system) is NumaSystem
        return Outcome(res.tasks, res.metrics, list(res.system.moves), list(counts))

    def run(machine, domains, tasks, policy="linux-2level", draws=None, **params):
        """The scenario with an event at every end of burst or slice, then as the model runs by
        default, with the timers of lone tasks looking ahead: the two must agree in everything
        but the number of events."""
        params = full_params({"topology": "scripted", "n_tasks": len(tasks), "memory_stall_fraction": 0.0,
                              "placement": "parent", "load_average": "instant", "cache_hot_time_cpu": 0.0,
                              "cache_hot_time_node": 0.0, "check_invariants": True, **params})
        ref = once(machine, domains, tasks, policy, draws, params, False)
        out = once(machine, domains, tasks, policy, draws, params, True)
        assert [(t.finished, t.trace) for t in out.tasks] == [(t.finished, t.trace) for t in ref.tasks]
        assert (out.pulls, out.counts) == (ref.pulls, ref.counts)
        assert {k: v for k, v in out.metrics.items() if k != "events"} == \
            {k: v for k, v in ref.metrics.items() if k != "events"}
        return out

    return run


@pytest.fixture
def each_event(monkeypatch):
    """``each_event(fn)``: ``fn(system)`` runs after every event of the scenario's runs (after the
    invariants' check, which the scenarios turn on: the kernels return after each event)."""
    def register(fn) -> None:
        check = invariants.check

        def then(system):
            check(system)
            fn(system)

        monkeypatch.setattr(invariants, "check", then)
    return register


def segments(task) -> list[tuple[str, int, float, float]]:
    """The task's trace as (kind, cpu, start, end), times in ms."""
    out, t = [], task.spec.created
    for kind, cpu, d in task.trace:
        out.append((kind, cpu, t, t + d))
        t += d
    return out


def runs(task) -> list[tuple[int, float, float]]:
    """(cpu, start, end) of each stretch the task ran (zero-length ones left out)."""
    return [(cpu, pytest.approx(a), pytest.approx(b)) for kind, cpu, a, b in segments(task) if kind == "run" and b > a]


# -- newly-idle balancing -------------------------------------------------------------------------
def test_newly_idle_cpu_pulls_at_once(scenario):
    """Two CPUs, one domain {0}|{1} with newly-idle balancing and a fixed 200 ms interval.
    t=0: CPU 1's first periodic attempt finds nothing (it goes dormant); task 0 (30 ms) starts on
    CPU 1, tasks 1 and 2 (1000 ms each) on CPU 0, where task 2 waits.
    t=30: task 0 ends, CPU 1 is newly idle: this load 0, CPU 0's 256, average 128, imbalance
    min(256-128, 128-0) = 128 -> one task; CPU 0's only queued task, 2, is pulled at once.
    Without newly-idle balancing CPU 1 would wait for its periodic attempt at t=200.
    Then each task is alone: 1 ends at 1000, 2 at 30 + 1000."""
    d = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(200, 200))
    out = scenario(one_node(2), [[d], [d]], [T(0, 1, 30), T(0, 0, 1000), T(0, 0, 1000)])
    assert out.pulls == [(30.0, 2, 0, 1)]
    assert [t.finished for t in out.tasks] == [30.0, 1000.0, 1030.0]


def test_a_newly_idle_cpu_pulls_one_task_from_a_group_that_is_not_busier(scenario):
    """Four CPUs of one node; CPU 0 alone balances, over {0,1}|{2,3}, newly idle only (its
    periodic interval is 10 s). Task 0 (10 ms) runs on CPU 0, tasks 1-4 (1000 ms) on CPU 1,
    tasks 5-7 (1000 ms) on CPU 2; CPU 3 has none.
    t=10: CPU 0 is newly idle. Its own group {0,1} holds 0 + 512 = 512 over 2 CPUs (256), the
    other {2,3} 384 + 0 over 2 (192): the own group is the busier, so the domain is balanced
    (this x n_busiest >= max x n_this), but a newly idle CPU still takes one task (2.6.11's
    out_balanced: NEWLY_IDLE returns imbalance 1) from the busiest group's busiest queue, CPU 2:
    task 7, the tail of its queue; one task, not two."""
    d = dom(range(4), [{0, 1}, {2, 3}], flags=(LB, NI), interval=(10000, 10000))
    tasks = [T(0, 0, 10)] + [T(0, 1, 1000)] * 4 + [T(0, 2, 1000)] * 3
    out = scenario(one_node(4), [[d], [], [], []], tasks)
    assert [p for p in out.pulls if p[0] <= 10.0] == [(10.0, 7, 2, 0)]


def test_a_newly_idle_cpu_pulls_one_task_while_its_group_is_above_the_average(scenario):
    """Four CPUs of one node; CPU 0 alone balances, newly idle only, over {0,1}|{2}|{3} (its
    periodic interval is 10 s). Task 0 (10 ms) runs on CPU 0, tasks 1-3 (1000 ms) on CPU 1, tasks
    4 and 5 (1000 ms) on CPU 2; CPU 3 has none.
    t=10: CPU 0 is newly idle. Its group {0,1} holds 0 + 384 over 2 CPUs (192); the busiest
    group is {2} at 256 ({3}: 0). The own group is below the busiest but not below the average,
    640 / 4 = 160: balanced (2.6.11: this_load >= avg_load), yet a newly idle CPU still takes one
    task from the busiest group's busiest queue: task 5, CPU 2's queued task."""
    d = dom(range(4), [{0, 1}, {2}, {3}], flags=(LB, NI), interval=(10000, 10000))
    tasks = [T(0, 0, 10)] + [T(0, 1, 1000)] * 3 + [T(0, 2, 1000)] * 2
    out = scenario(one_node(4), [[d], [], [], []], tasks)
    assert [p for p in out.pulls if p[0] <= 10.0] == [(10.0, 5, 2, 0)]


def test_newly_idle_balancing_stops_at_the_first_domain_that_pulls(scenario):
    """CPU 0 has two newly-idle domains, {0}|{1} below {0,1}|{2,3}; the other CPUs do not balance.
    Task 0 (10 ms) runs on CPU 0, tasks 1-2 on CPU 1, tasks 3-5 on CPU 2 (1000 ms each).
    t=10: CPU 0 is newly idle. Lower domain: 0 against 256, imbalance 128 -> pulls task 2 (tail of
    CPU 1's queue) and stops. Had it gone on, the upper domain would see {0,1} at (128+128)/2 = 128
    against {2,3} at 384/2 = 192 and, newly idle, take one more task from CPU 2."""
    low = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(10000, 10000))
    high = dom({0, 1, 2, 3}, [{0, 1}, {2, 3}], flags=(LB, NI), interval=(10000, 10000))
    tasks = [T(0, 0, 10)] + [T(0, 1, 1000)] * 2 + [T(0, 2, 1000)] * 3
    out = scenario(one_node(4), [[low, high], [], [], []], tasks)
    assert [p for p in out.pulls if p[0] < 1000] == [(10.0, 2, 1, 0)]


def test_newly_idle_balancing_climbs_past_certain_failures_other_kinds_and_refused_moves():
    """``idle_balance`` level by level, on the kernels' state built by hand: CPU 0 (no task) has
    four domains, bottom-up: {0}|{1} newly idle, {0,1}|{2} periodic only, {0,1,2}|{3} newly
    idle with a 10 ms cache-hot time, {0,1,2,3}|{4} newly idle with none. CPU 1 runs task 5; CPU 3 runs task 0, task 1
    queued; CPU 4 runs task 2, tasks 3 and 4 queued; task 1 last ran at 0 (now), the others never, and hot tasks are not
    ignored. Level 0: CPU 1 has one task, nothing can move: a certain failure (attempt, failed, dead).
    Level 1 is not a newly-idle domain: skipped.
    Level 2: {0,1,2} at 128 / 3 against {3} at 256: imbalance min(256 x 4 - 384, 384 x 3 - 128
    x 4) = 640 >= 128 x 4: one task, from CPU 3; its queued task 1 is cache-hot and the domain has
    not failed more than cache_nice_tries times: refused, a failed attempt.
    Level 3: {0,1,2,3} at 384 / 4 against {4} at 384: imbalance min(384 x 5 - 768, 768 x 4 - 384
    x 5) = 1152, one task (1152 // 640): task 4, the tail of CPU 4's queue, pulled.
    Counts: 3 attempts, 2 failed, 1 certain; 2 found an imbalance (levels 2 and 3: the refused
    cache-hot pull is a failed attempt but, in mehta's terms, a successful one)."""
    from numa_script import Hand, set_task

    low = dom({0, 1}, [{0}, {1}], flags=(LB, NI))
    periodic = dom({0, 1, 2}, [{0, 1}, {2}])
    hot = dataclasses.replace(dom({0, 1, 2, 3}, [{0, 1, 2}, {3}], flags=(LB, NI)), cache_hot_time=10.0)
    cold = dom(range(5), [{0, 1, 2, 3}, {4}], flags=(LB, NI), name="node")
    hand = Hand(one_node(5), [[low, periodic, hot, cold], [], [], [], []], tasks=6, trace=True,
                idle_ignores_cache_hot=False)
    hand.dispatch(1, 5)
    hand.dispatch(3, 0, 1)
    hand.dispatch(4, 2, 3, 4)
    set_task(hand.system, 1, F_LAST=0.0)
    hand.newidle(0)
    assert hand.moves() == [(0.0, 4, 4, 0)]
    assert hand.counts == (3, 2, 1)
    assert hand.found == 2          # levels 2 and 3 found an imbalance (mehta: successful attempts)


# -- exec balancing (placement of new tasks) ------------------------------------------------------
EXEC_TASKS = [T(0, 1, 1000), T(0, 0, 1000), T(0, 0, 1000), T(0, 0, 1000)]


def exec_machine(imbalance_pct=125):
    """Two nodes of one CPU, one exec-balancing node domain; periodic balancing far away."""
    d = dom({0, 1}, [{0}, {1}], flags=(LB, EX), interval=(10000, 10000), imbalance_pct=imbalance_pct, name="node")
    return nodes(2), [[d], [d]]


def test_exec_balancing_places_a_new_task_on_the_idlest_cpu(scenario):
    """sched_exec at t=0 for tasks created in this order (loads are task counts x 128):
    task 0 on CPU 1 and task 1 on CPU 0 find their CPU empty and stay;
    task 2 on CPU 0 (one task there): the idlest CPU by target load is CPU 0 itself (128, met
    first; CPU 1 also 128), so it stays;
    task 3 on CPU 0 (two tasks): idlest is CPU 1 at 128, and 128 x (100 + 25/2) = 14336 <
    (256 + 128) x 100 = 38400, so it starts on CPU 1, and its memory (home) is node 1."""
    machine, domains = exec_machine()
    out = scenario(machine, domains, EXEC_TASKS, placement="exec")
    assert [t.home for t in out.tasks] == [1, 0, 0, 1]
    assert out.pulls == []                     # placement is not a migration
    parent = scenario(machine, domains, EXEC_TASKS, placement="parent")
    assert [t.home for t in parent.tasks] == [1, 0, 0, 0]


@pytest.mark.parametrize("pct, home", [(500, 0), (498, 1)])
def test_exec_balancing_uses_half_the_imbalance_threshold(scenario, pct, home):
    """Task 3 of the previous scenario moves iff 128 x (100 + (pct - 100) // 2) < 384 x 100:
    pct 500 gives 128 x 300 = 38400, not below: it stays on CPU 0; pct 498 gives 128 x 299 =
    38272 < 38400: it goes to CPU 1."""
    machine, domains = exec_machine(pct)
    out = scenario(machine, domains, EXEC_TASKS, placement="exec")
    assert [t.home for t in out.tasks] == [1, 0, 0, home]


def test_exec_balancing_halves_the_threshold_in_integers(scenario):
    """17 tasks created on CPU 1 at t=0 (instant loads, n0 and n1 tasks on CPUs 0 and 1). The
    first finds CPU 1 empty and stays. Then CPU 0 is the idlest (met first on ties) while
    n0 <= n1, and the task goes there iff 128 n0 x (100 + 25 // 2) < 128 (n1 + 1) x 100, i.e.
    112 n0 < 100 (n1 + 1): so tasks alternate, 1 and 2 to CPU 0, 3 stays, 4 goes, ... up to
    (8, 8), and task 16 finds 8 x 112 = 896 < 900: it goes to node 0. With the exact half
    (112.5) it would stay: 900 is not below 900."""
    machine, domains = exec_machine()
    out = scenario(machine, domains, [T(0, 1, 1000)] * 17, placement="exec")
    assert [t.home for t in out.tasks] == [1, 0, 0] + [1, 0] * 7


def test_exec_balancing_compares_the_parents_source_load(scenario):
    """2.6.11 load averages; created in this order at t=0: task 0 on CPU 0, task 1 (10 ms) on
    CPU 1, task 2 on CPU 0, task 3 on CPU 1 (each finds its own CPU the idlest or alone: they
    stay), so CPU 0 runs two tasks and CPU 1 two, with task 1 first. Both cpu_loads rise to
    256 by tick 9. Task 1 ends at t=10: CPU 1's average is 256, its instant load 128.
    Task 4 is created on CPU 1 at t=10.5: the idlest CPU by target load is CPU 0 (256, met
    first; CPU 1's target load max(256, 128) = 256 too), and the parent's load is its source
    load min(256, 128) = 128 plus the new task: 256 x 112 = 28672 is not below 256 x 100, so
    task 4 stays on CPU 1. (With the parent's target load, 384 x 100, it would go to CPU 0.)"""
    machine, domains = exec_machine()
    tasks = [T(0, 0, 1000), T(0, 1, 10), T(0, 0, 1000), T(0, 1, 1000), T(10.5, 1, 1000)]
    out = scenario(machine, domains, tasks, placement="exec", load_average="tick")
    assert [t.home for t in out.tasks] == [0, 1, 0, 1, 1]


def test_exec_balancing_looks_past_a_nearly_idle_cpu(scenario):
    """2.6.11 load averages; three nodes of one CPU, one exec domain {0}|{1}|{2}. Task 0 runs
    0-20 on CPU 0 (its cpu_load reaches 128), task 1 runs on CPU 2 from 0. Task 2 is created on
    CPU 2 at t=27.5: CPU 0's load has halved for 7 ticks, 128 >> 7 = 1; CPU 1 has never run: 0.
    The search goes on past CPU 0 (target load 1) and stops at CPU 1 (0): task 2 starts on node 1,
    since 0 x 112 is below anything."""
    d = dom({0, 1, 2}, [{0}, {1}, {2}], flags=(LB, EX), interval=(10000, 10000), name="node")
    out = scenario(nodes(3), [[d], [d], [d]], [T(0, 0, 20), T(0, 2, 1000), T(27.5, 2, 1000)],
                   placement="exec", load_average="tick")
    assert [t.home for t in out.tasks] == [0, 2, 1]


def test_exec_balancing_keeps_a_task_alone_on_its_parents_cpu(scenario):
    """2.6.11 load averages. Task 0 runs 0-10 on CPU 0, so CPU 0's cpu_load is 128 at t=10 and
    decays to 64 one tick later. Task 1 is created on CPU 0 at t=11: CPU 0 runs nothing, so the
    kernel keeps it there. (Were the rule off, CPU 1, target load 0, would beat CPU 0's 64, and
    0 < (0 + 128) x 100 would send the task to node 1.)"""
    machine, domains = exec_machine()
    out = scenario(machine, domains, [T(0, 0, 10), T(11, 0, 10)], placement="exec", load_average="tick")
    assert [t.home for t in out.tasks] == [0, 0]


def test_exec_balancing_uses_the_highest_exec_domain(scenario):
    """Two nodes of two CPUs; CPU 0 has exec domains {0}|{1} and, above it, {0,1}|{2,3}.
    Tasks 0 and 1 start alone on CPUs 0 and 1; task 2 is created on CPU 0 (busy). The highest
    exec domain spans all four CPUs: CPU 2 has target load 0, so task 2 starts there (node 1).
    The lower domain alone would find CPUs 0 and 1 equal and keep it on CPU 0."""
    machine = make_machine("test", "2x2", [2, 2], [[10, 20], [20, 10]])
    low = dom({0, 1}, [{0}, {1}], flags=(LB, EX), interval=(10000, 10000))
    high = dom({0, 1, 2, 3}, [{0, 1}, {2, 3}], flags=(LB, EX), interval=(10000, 10000), name="node")
    out = scenario(machine, [[low, high], [], [], []], [T(0, 0, 100), T(0, 1, 100), T(0, 0, 100)], placement="exec")
    assert [t.home for t in out.tasks] == [0, 0, 1]


@pytest.mark.parametrize("exec_level, cpu", [(0, 3), (1, 0)])
def test_exec_balancing_of_a_later_cpu_finds_its_exec_domain_at_either_level(scenario, exec_level, cpu):
    """One node of four CPUs; CPU 2 alone has domains: {2}|{3} below {0,1}|{2,3}, exec balancing
    at one level only. Task 0 starts alone on CPU 2; task 1 is created on CPU 2 (busy) at t=1.
    Exec balancing at the lower level: the idlest CPU of {2,3} is CPU 3 (CPUs 0 and 1, outside
    that span, are not looked at); at the upper level: CPU 0, the first CPU of load 0. Either is
    enough less loaded than CPU 2 (0 x 112 < 256 x 100)."""
    flags = [(LB, EX) if level == exec_level else (LB,) for level in (0, 1)]
    low = dom({2, 3}, [{2}, {3}], flags=flags[0], interval=(10000, 10000))
    high = dom(range(4), [{0, 1}, {2, 3}], flags=flags[1], interval=(10000, 10000), name="node")
    out = scenario(one_node(4), [[], [], [low, high], []], [T(0, 2, 100), T(1, 2, 100)], placement="exec")
    assert runs(out.tasks[1])[0][0] == cpu


# -- find_busiest_group: thresholds, small imbalances, the power test ------------------------------
# Four CPUs, two groups {0,1} and {2,3}; 2, 2, 2, 4 tasks of 300 ms. Until the first task ends
# (t=500: two tasks sharing a CPU in 100 ms slices) the loads are 256 per CPU in {0,1} and
# 384 in {2,3}: 100 x 384 = 38400 against imbalance_pct x 256.
ZONE_TASKS = [T(0, 0, 300)] * 2 + [T(0, 1, 300)] * 2 + [T(0, 2, 300)] * 2 + [T(0, 3, 300)] * 4


def zone_domains(imbalance_pct=125):
    """Four levels per CPU: three that do not balance, then {0,1}|{2,3} every 50 ms. With four
    levels the conservative zone is the lowest three, so the balancing level lies outside it."""
    quiet = dom(range(4), [{0, 1}, {2, 3}], flags=())
    top = dom(range(4), [{0, 1}, {2, 3}], interval=(50, 50), imbalance_pct=imbalance_pct)
    return [[quiet, quiet, quiet, top] for _ in range(4)]


def test_imbalance_pct_threshold(scenario):
    """imbalance_pct 149: 38400 > 149 x 256 = 38144, an imbalance; average 320, imbalance
    min((384-320) x 2, (320-256) x 2) = 128 -> one task. At t=50 CPU 0 (first timer) pulls from
    the busiest queue of {2,3}, CPU 3 (512 against 256), its queue tail, task 9; then both
    groups hold 320 and every later attempt before t=500 is balanced.
    imbalance_pct 150: 38400 <= 150 x 256: balanced, nothing moves before t=500."""
    out = scenario(one_node(4), zone_domains(149), ZONE_TASKS)
    assert [p for p in out.pulls if p[0] < 500] == [(50.0, 9, 3, 0)]
    out = scenario(one_node(4), zone_domains(150), ZONE_TASKS)
    assert [p for p in out.pulls if p[0] < 500] == []


@pytest.mark.parametrize("factor, pulls", [(2.0, []), (1.0, [(50.0, 9, 3, 0)])])
def test_soft_policy_raises_the_threshold_outside_its_zone(scenario, factor, pulls):
    """conservative-soft, default imbalance_pct 125, on the level outside the zone: threshold
    100 + factor x 25. Factor 2 (mehta's 25% -> 50%) gives 150: balanced, as above, nothing moves
    before t=500; factor 1 keeps 125 and the same pull as under Linux happens at t=50."""
    out = scenario(one_node(4), zone_domains(), ZONE_TASKS, "conservative-soft", soft_threshold_factor=factor)
    assert [p for p in out.pulls if p[0] < 500] == pulls


def test_hard_policy_does_not_balance_outside_its_zone_while_busy(scenario):
    """conservative-hard on the same machine: the only balancing level is outside the zone, and
    every CPU is busy until t=500, so nothing moves (Linux pulls at t=50, as above)."""
    out = scenario(one_node(4), zone_domains(), ZONE_TASKS, "conservative-hard")
    assert [p for p in out.pulls if p[0] < 500] == []
    linux = scenario(one_node(4), zone_domains(), ZONE_TASKS, "linux-2level")
    assert [p for p in linux.pulls if p[0] < 500] == [(50.0, 9, 3, 0)]


def test_power_gain_moves_a_task_to_a_partly_idle_group(scenario):
    """Only CPU 0 balances, groups {0,1} | {2} | {3}, every 50 ms. Task 0 runs on CPU 0; tasks 1
    and 2 share CPU 2; CPUs 1 and 3 stay idle. At t=50 (CPU 0 busy): this = (128+0)/2 = 64,
    busiest {2} = 256, average 384/4 = 96; imbalance min((256-96) x 1, (96-64) x 2) = 64, below
    one task, and 256 - 64 < 2 x 128. The power test: now = (128 x 128 + 256 x 64)/128 = 256,
    after the move (128 x min(128, 256-128) + 256 x min(128, 64+64))/128 = 384 > 256: move one,
    task 2 from CPU 2. After it {0,1} is at 128 and nothing else moves."""
    d = dom(range(4), [{0, 1}, {2}, {3}])
    out = scenario(one_node(4), [[d], [], [], []], [T(0, 0, 1000), T(0, 2, 1000), T(0, 2, 1000)])
    assert out.pulls == [(50.0, 2, 2, 0)]


def test_the_imbalance_is_computed_exactly(scenario):
    """Only CPU 0 balances, every 50 ms, groups {0..3} | {4..13}. CPU 0 runs task 0; CPU 4 runs
    tasks 1 and 2, CPUs 5-8 one task each. At t=50 (CPU 0 busy): this = 128/4 = 32, busiest
    768/10 = 76.8, average 896/14 = 64; imbalance min((76.8-64) x 10, (64-32) x 4) = 128: exactly
    one task, so CPU 4's queued task 2 moves. (In floats 76.8 - 64 is 12.799999999999997 and the
    imbalance falls just below one task; the gap and the power test then find it balanced.)"""
    d = dom(range(14), [range(4), range(4, 14)])
    tasks = [T(0, 0, 1000)] + [T(0, 4, 1000)] * 2 + [T(0, c, 1000) for c in range(5, 9)]
    out = scenario(one_node(14), [[d]] + [[]] * 13, tasks)
    assert [p for p in out.pulls if p[0] < 1000] == [(50.0, 2, 4, 0)]


def test_a_gap_of_two_tasks_moves_one(scenario):
    """Only CPU 0 balances, groups {0} | {1} | {2}: CPU 0 runs 1 task, CPUs 1 and 2 three each.
    At t=50: this 128, busiest {1} = 384 (ahead of {2}), average 896/3; imbalance
    min(384 - 298.7, 298.7 - 128) = 85.3, below one task, but 384 - 128 >= 2 x 128: move one,
    task 3 (CPU 1's queue tail). Then 256 against 384: imbalance 42.7, gap 128, no power gain
    for a busy CPU: balanced until the first task ends (after t=1000)."""
    d = dom(range(3), [{0}, {1}, {2}])
    tasks = [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3 + [T(0, 2, 1000)] * 3
    out = scenario(one_node(3), [[d], [], []], tasks)
    assert [p for p in out.pulls if p[0] < 1000] == [(50.0, 3, 1, 0)]


def test_the_gap_of_two_tasks_compares_loads_per_cpu(scenario):
    """Only CPU 0 balances, every 50 ms, groups {0,1} | {2} | {3}. CPUs 0 and 1 run one task each
    (tasks 0, 1), CPU 2 three (tasks 2-4), CPU 3 none. At t=50 (CPU 0 busy): this = 256/2 = 128,
    busiest {2} = 384, average 640/4 = 160; imbalance min((384 - 160) x 1, (160 - 128) x 2) = 64,
    below one task. The gap per CPU, 384 - 128 = 256, is exactly two tasks: move one, task 4
    (CPU 2's queue tail). (The group sums, 384 against 256, differ by one task only, and the
    power test finds no gain: 128 + 256 before and after.) Then this = (256 + 128)/2 = 192 is
    above the average 160: balanced until the first task ends, at t=1000."""
    d = dom(range(4), [{0, 1}, {2}, {3}])
    tasks = [T(0, 0, 1000), T(0, 1, 1000)] + [T(0, 2, 1000)] * 3
    out = scenario(one_node(4), [[d], [], [], []], tasks)
    assert [p for p in out.pulls if p[0] < 1000] == [(50.0, 4, 2, 0)]


def test_a_small_imbalance_from_a_group_of_two_cpus_moves_nothing(scenario):
    """Only CPU 0 balances, every 50 ms, groups {0} | {1,2} | {3}. CPU 0 runs task 0, CPU 1 tasks
    1-3, CPU 2 tasks 4 and 5, CPU 3 none. At every attempt before t=1000 (CPU 0 busy): this 128,
    busiest {1,2} = 640/2 = 320, average 768/4 = 192; imbalance min((320 - 192) x 2,
    (192 - 128) x 1) = 64, below one task; the gap per CPU 320 - 128 = 192 is below two tasks;
    the power test: now min(256, 640) + min(128, 128) = 384, after the move min(256, 512) +
    min(128, 256) = 384: no gain. Balanced: nothing moves until CPU 0's task ends at t=1000."""
    d = dom(range(4), [{0}, {1, 2}, {3}])
    tasks = [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3 + [T(0, 2, 1000)] * 2
    out = scenario(one_node(4), [[d], [], [], []], tasks)
    assert [p for p in out.pulls if p[0] < 1000] == []


def test_the_imbalance_weighs_the_busiest_groups_excess_by_its_cpus(scenario):
    """Only CPU 0 balances, every 50 ms, groups {0} | {1,2} | {3}; CPU 0 idle, CPUs 1, 2 and 3
    three tasks each (tasks 0-2 on CPU 1). At t=50: this 0, busiest {1,2} = 768/2 = 384 (met
    before {3}, also 384), average 1152/4 = 288; imbalance min((384 - 288) x 2, (288 - 0) x 1) =
    192: one task (1.5 rounded down), CPU 1's queue tail, task 2; not two."""
    d = dom(range(4), [{0}, {1, 2}, {3}])
    tasks = [T(0, 1, 1000)] * 3 + [T(0, 2, 1000)] * 3 + [T(0, 3, 1000)] * 3
    out = scenario(one_node(4), [[d], [], [], []], tasks)
    assert [p for p in out.pulls if p[0] == 50.0] == [(50.0, 2, 1, 0)]


def test_instant_loads_count_a_new_task_in_full_at_the_first_tick(scenario):
    """tick 10 ms. Only CPU 0 balances, {0}|{1} every 10 ms. Task 0 runs on CPU 0, tasks 1-3 on
    CPU 1, all from t=0. Instant loads: at t=10 (CPU 0 busy) 128 against 384, average 256,
    imbalance 128: one task, task 3 (CPU 1's queue tail).
    2.6.11 averages instead: CPU 1's cpu_load climbs from 0, 384 - (384 >> k) after k ticks:
    192, 288, 336, 360, 372, 378, 381, 383 at t = 10, ..., 80, against CPU 0's target load 128
    (the larger of its cpu_load and 128). With source load s < 384 the imbalance (s - 128)/2 is
    below one task, the gap s - 128 below two, and a busy CPU gains no power (min(128, s) + 128
    now, min(128, s - 128) + 128 after): balanced. At t=90, 384 >> 9 = 0: 384, and task 3 moves."""
    d = dom({0, 1}, [{0}, {1}], interval=(10, 10))
    tasks = [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3
    out = scenario(one_node(2), [[d], []], tasks, tick=10.0)
    assert out.pulls[0] == (10.0, 3, 1, 0)
    out = scenario(one_node(2), [[d], []], tasks, tick=10.0, load_average="tick")
    assert out.pulls[0] == (90.0, 3, 1, 0)


def test_a_cpu_at_the_average_load_does_not_pull(scenario):
    """Only CPU 0 balances, groups {0} | {1} | {2} | {3}: CPU 0 runs one task, CPU 1 three, CPUs 2
    and 3 none. At t=50 (busy): this 128, busiest 384, average 512/4 = 128: CPU 0 is not below
    the average, so it is balanced (the idle CPUs are the ones to take the work). Were the rule
    off, the imbalance min(384 - 128, 128 - 128) = 0 with a gap of 256 would move one task.
    Nothing moves until CPU 0's task ends at t=1000."""
    d = dom(range(4), [{0}, {1}, {2}, {3}])
    out = scenario(one_node(4), [[d], [], [], []], [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3)
    assert [p for p in out.pulls if p[0] < 1000] == []


# 2.6.11 load averages: CPU 1 runs tasks created at t=0 (its cpu_load settles on 128 per task),
# and one more arrives at t=93; at t=100 cpu_load has climbed 7 ticks: 128 below the new load,
# halved 7 times, is 1 below it.
def test_an_imbalance_just_below_one_task_is_a_small_imbalance(scenario):
    """CPU 0 runs task 0 (target load 128); CPU 1 has tasks 1 and 2, and task 3 from t=93, so
    its source load at t=100 is 383. CPU 0 balances (busy) at t=100: average 255.5, imbalance
    min(383 - 255.5, 255.5 - 128) = 127.5, below one task (128); the gap 255 is under 2 x 128 and
    a busy CPU gains no power: balanced, nothing moves (2.6.12: 127 < 128, the same)."""
    d = dom({0, 1}, [{0}, {1}], interval=(100, 100))
    tasks = [T(0, 0, 1000)] + [T(0, 1, 1000)] * 2 + [T(93, 1, 1000)]
    out = scenario(one_node(2), [[d], [d]], tasks, load_average="tick")
    assert [p for p in out.pulls if p[0] <= 100] == []


def test_an_idle_cpu_moves_one_task_for_an_imbalance_just_below_one(scenario):
    """CPU 0 idle; CPU 1 runs task 0, and task 1 from t=93: source load 255 at t=100. At t=100
    task 0's slice ends first (it waits in the expired array, task 1 runs); then CPU 0 balances:
    average 127.5, imbalance 127.5, below one task (rounded down it would be none); the power
    test gains: now 128, after the move 127 + 128 = 255: one task, the expired one, task 0."""
    d = dom({0, 1}, [{0}, {1}], interval=(100, 100))
    out = scenario(one_node(2), [[d], [d]], [T(0, 1, 1000), T(93, 1, 1000)], load_average="tick")
    assert [p for p in out.pulls if p[0] <= 100] == [(100.0, 0, 1, 0)]


def test_the_imbalance_in_tasks_rounds_down(scenario):
    """CPU 0 idle; CPU 1 has tasks 0-2, and task 3 from t=93: source load 511 at t=100. At t=100
    task 0's slice ends first (expired array; task 1 runs). CPU 0 balances: average 255.5,
    imbalance min(511 - 255.5, 255.5) = 255.5 = 1.996 tasks: one task moves (the expired array
    comes first: task 0), not two."""
    d = dom({0, 1}, [{0}, {1}], interval=(100, 100))
    tasks = [T(0, 1, 1000)] * 3 + [T(93, 1, 1000)]
    out = scenario(one_node(2), [[d], [d]], tasks, load_average="tick")
    assert [p for p in out.pulls if p[0] <= 100] == [(100.0, 0, 1, 0)]


def test_an_idle_cpu_takes_one_task_from_a_busy_group_even_when_balanced(scenario):
    """Only CPU 0 balances, groups {0,1} | {2}; CPU 0 idle, CPUs 1 and 2 two tasks each. At t=50
    (idle): this = (0+256)/2 = 128, busiest 256, average 512/3; imbalance 85.3, gap 128, power
    test 384 against 384: balanced. 2.6.11 still returns one task to an idle CPU when the busiest
    group's load exceeds 128: task 3 moves from CPU 2."""
    d = dom(range(3), [{0, 1}, {2}])
    tasks = [T(0, 1, 1000)] * 2 + [T(0, 2, 1000)] * 2
    out = scenario(one_node(3), [[d], [], []], tasks)
    assert [p for p in out.pulls if p[0] < 1000] == [(50.0, 3, 2, 0)]


def test_busiest_queue_by_load_average_counts_the_task_whose_slice_ran_out(scenario):
    """2.6.11 load averages. Only CPU 0 balances, groups {0} | {1,2}, first at t=101. Tasks 0 and
    1 start on CPU 1 at t=0, tasks 2 and 3 on CPU 2 at t=50. At t=100 task 0's slice runs out:
    it moves to the expired array, still runnable, so CPU 1's cpu_load stays 256 (it rose from 0
    to 256 within 9 ticks of t=0); CPU 2's has been 256 since t=59. At t=101 CPU 0, idle, finds
    {1,2} at 256 against 0 (one task to move); both queues have source load 256, so the busiest
    is CPU 1, met first, and its expired task 0 moves."""
    d = dom(range(3), [{0}, {1, 2}], interval=(101, 101))
    tasks = [T(0, 1, 1000)] * 2 + [T(50, 2, 1000)] * 2
    out = scenario(one_node(3), [[d], [], []], tasks, load_average="tick")
    assert out.pulls[0] == (101.0, 0, 1, 0)


def test_a_newly_idle_cpu_looks_for_a_queue_in_a_group_of_source_load_one(scenario):
    """2.6.11 load averages. Only CPU 0 balances, newly idle, over {0,1}|{2} (periodic attempts
    every 10 s: none in this run). Task 0 runs 0-20 on CPU 2, whose cpu_load reaches 128 and then
    halves each tick: 128 >> 7 = 1 at tick 27. Tasks 1 and 2 (100 ms) share CPU 1 from 0 (until
    200); task 3 runs 0-27.75 on CPU 0; task 4 arrives on CPU 2 at t=27.5 (100 ms).
    t=27.75: CPU 0 is newly idle; CPU 1 has a queued task, so the attempt is made. Its own group
    {0,1} has target load 128 + 256; the other group {2} has source load min(1, 128) = 1, above
    0: it is the busiest. The own group is busier (balanced), but a newly idle CPU still looks at
    the busiest group's busiest queue: CPU 2, source load 1, which runs its only task, so nothing
    moves (CPU 1's queued task is in the own group, out of reach). The run ends at 200 with that
    one attempt, failed and not certain."""
    d = dom({0, 1, 2}, [{0, 1}, {2}], flags=(LB, NI), interval=(10000, 10000))
    tasks = [T(0, 2, 20), T(0, 1, 100), T(0, 1, 100), T(0, 0, 27.75), T(27.5, 2, 100)]
    out = scenario(one_node(3), [[d], [], []], tasks, load_average="tick")
    assert out.pulls == []
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (1, 1, 1)


def test_a_newly_idle_cpu_takes_a_task_from_a_group_of_source_load_one(scenario):
    """2.6.11 load averages. Only CPU 0 balances, newly idle, over {0}|{1} (periodic attempts
    every 10 s: none in this run). Task 0 runs 0-20 on CPU 1, whose cpu_load reaches 128 and then
    halves each tick: 128 >> 7 = 1 at tick 27. Task 1 runs 0-27.75 on CPU 0 (cpu_load 128).
    Tasks 2 and 3 (100 ms) arrive on CPU 1 at t=27.5: task 2 runs, task 3 waits; no tick has
    passed since, so CPU 1's cpu_load is still 1.
    t=27.75: CPU 0 is newly idle; CPU 1 has a queued task, so the attempt is made. The own group
    has target load max(128, 0) = 128; {1} has source load min(1, 256) = 1, above 0: it is the
    busiest. The own group is busier (balanced), but a newly idle CPU takes one task from the
    busiest queue: task 3 moves to CPU 0 and runs 27.75-127.75; task 2 ends on CPU 1 at 127.5."""
    d = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(10000, 10000))
    tasks = [T(0, 1, 20), T(0, 0, 27.75), T(27.5, 1, 100), T(27.5, 1, 100)]
    out = scenario(one_node(2), [[d], []], tasks, load_average="tick")
    assert out.pulls == [(27.75, 3, 1, 0)]
    assert [t.finished for t in out.tasks] == [20.0, 27.75, 127.5, 127.75]


# -- move_tasks: order, count, array ----------------------------------------------------------------
def test_move_tasks_takes_expired_first_then_the_tail_and_as_many_as_the_imbalance(scenario):
    """CPU 1 holds tasks 0-3 (nice 0, 100 ms slices): task 0 ran 0-100 and expired, task 1 runs
    from 100, tasks 2 and 3 wait in the active array. CPU 0, idle, balances first at t=150:
    this 0, busiest 512, average 256, imbalance 256 -> two tasks. The expired array comes first
    (task 0), then the active one from its tail (task 3). A pulled task keeps its array on CPU 0:
    task 3 (active) runs 150-250, then the arrays swap and task 0 runs from 250."""
    d = dom({0, 1}, [{0}, {1}], interval=(150, 150))
    out = scenario(one_node(2), [[d], [d]], [T(0, 1, 1000)] * 4)
    assert [p for p in out.pulls if p[0] < 1000] == [(150.0, 0, 1, 0), (150.0, 3, 1, 0)]
    assert runs(out.tasks[3])[0] == (0, 150, 250)
    assert runs(out.tasks[0])[:2] == [(1, 0, 100), (0, 250, 350)]


def test_a_pulling_cpu_counts_as_busy_for_its_higher_domains(scenario):
    """CPU 0 (idle) has {0}|{1} and {0,1}|{2,3}, both every 50 ms, busy factor 4; CPU 1 runs two
    tasks, CPU 2 three. At t=50 the lower domain pulls task 1 from CPU 1; from then on the CPU
    counts as busy, so the upper domain's interval is 200 ms and it is not due. (Treated as
    idle it would be due and, {0,1} at 128 against {2,3} at 192, would take one more task.)"""
    low = dom({0, 1}, [{0}, {1}], busy_factor=4)
    high = dom(range(4), [{0, 1}, {2, 3}], busy_factor=4)
    tasks = [T(0, 1, 1000)] * 2 + [T(0, 2, 1000)] * 3
    out = scenario(one_node(4), [[low, high], [], [], []], tasks)
    assert [p for p in out.pulls if p[0] == 50.0] == [(50.0, 1, 1, 0)]


@pytest.mark.parametrize("cpu3_tasks", [0, 1])
def test_an_attempt_that_moves_nothing_leaves_the_cpu_idle_for_its_higher_domains(scenario, cpu3_tasks):
    """cache_hot_time 1000 ms (a task that ran is hot); an idle CPU ignores hotness (2.6.11).
    Five CPUs of one node; CPU 0 (idle) balances {0,1}|{2,3} and above it {0..3}|{4}, both every
    50 ms (busy factor 1). Tasks 0 and 1 (nice 19: 5 ms slices) share CPU 4, task 2 runs on CPU 2,
    and task 3 on CPU 3 or nothing.
    t=50, lower domain: with CPU 3 idle, {2,3} = 128/2 = 64 against 0, average 32: imbalance
    min(32 x 2, 32 x 2) = 64, gap 64, no power gain (128 before and after), and for an idle CPU
    the busiest counts only above 128: balanced. With task 3 on CPU 3, {2,3} = 256/2 = 128,
    average 64, imbalance min(64 x 2, 64 x 2) = 128: one task, but the busiest queue, CPU 2
    (first of two equal), only runs its task: nothing moves, a failure. Either way CPU 0 is
    still idle for the upper domain, due at 50 too: {0..3} = 128/4 = 32 (or 256/4 = 64) against
    {4} = 256, average 384/5 (or 512/5); imbalance min(256 - 76.8, (76.8 - 32) x 4) = 179.2 (or
    min(256 - 102.4, (102.4 - 64) x 4) = 153.6): one task. On CPU 4 the slices alternate (task 0
    runs 40-45, task 1 45-50), and task 1's slice ending at 50 comes before the balancing: it
    expires, the arrays swap and task 0 runs, so the queue holds task 1 (ran 45-50) in the active
    array, hot, which an idle CPU takes: task 1 moves. (Were CPU 0 taken for busy after the
    lower attempt, the upper attempt, due at 50 either way, would refuse the hot task.)"""
    low = dom(range(4), [{0, 1}, {2, 3}])
    high = dom(range(5), [{0, 1, 2, 3}, {4}])
    tasks = [T(0, 4, 1000, nice=19)] * 2 + [T(0, 2, 1000)] + [T(0, 3, 1000)] * cpu3_tasks
    out = scenario(one_node(5), [[low, high], [], [], [], []], tasks, cache_hot_time_cpu=1000.0)
    assert [p for p in out.pulls if p[0] == 50.0] == [(50.0, 1, 4, 0)]


# -- timing of periodic balancing -------------------------------------------------------------------
def test_busy_factor_stretches_a_busy_cpus_interval(scenario):
    """Interval 10 ms, busy factor 5. CPU 0 runs task 0; CPU 1 runs tasks 1-3. CPU 0's timer,
    set while it was idle, fires at t=10, but busy its interval is 50: not due. At t=50 it pulls
    (128 against 384: one task), task 3."""
    d = dom({0, 1}, [{0}, {1}], interval=(10, 10), busy_factor=5)
    out = scenario(one_node(2), [[d], [d]], [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3)
    assert out.pulls[0] == (50.0, 3, 1, 0)


def test_the_stagger_offsets_each_cpus_first_balance(scenario):
    """Two CPUs, interval 600 ms: CPU 0's first attempt is due at 600, CPU 1's (last balance
    -500) at 100. Tasks 0 and 1 start on CPU 0; at t=100 task 0's slice ends first (expired
    array; task 1 runs), then CPU 1, idle, pulls the expired task 0."""
    d = dom({0, 1}, [{0}, {1}], interval=(600, 600))
    out = scenario(one_node(2), [[d], [d]], [T(0, 0, 1000)] * 2)
    assert out.pulls[0] == (100.0, 0, 0, 1)


def test_a_successful_pull_resets_the_interval_to_its_minimum(scenario):
    """Two CPUs, interval 10 to 80 ms, busy factor 1. t=0: CPU 1 tries (-> 20) and sleeps; t=10:
    CPU 0 tries (-> 20) and sleeps. t=100: tasks 0-2 start on CPU 1: CPU 1's sleeping attempts at
    20 (-> 40) and 60 (-> 80) are counted when it turns busy, CPU 0's at 30 (-> 40) and 70 (-> 80)
    when CPU 1 gets a second task; CPU 0 is due at 70 + 80 = 150.
    t=150: CPU 0 (idle) pulls task 2 (0 against 384): interval back to 10. Busy now, it finds 128
    against 256 balanced at 160 (-> 20), 180 (-> 40), 220 (-> 80), 300 and 380.
    Counts at t=400, when task 3 starts on busy CPU 1: attempts 2 + 4 + 6 = 12, all failed but
    the pull (11), and the 6 made while nothing could move (t=0, 10 and the four counted)."""
    d = dom({0, 1}, [{0}, {1}], interval=(10, 80))
    out = scenario(one_node(2), [[d], [d]], [T(100, 1, 1000)] * 3 + [T(400, 1, 1000)])
    assert out.pulls[0] == (150.0, 2, 1, 0)
    assert out.counts[-1] == (400.0, 3, 12, 11, 6)


def test_attempts_are_counted_while_a_domain_sleeps(scenario):
    """Two CPUs, domain {0}|{1}, interval 8 to 64 ms, busy factor 2, no newly-idle balancing.
    A domain that cannot move anything sleeps; its attempts are counted when it wakes, each one
    failed and doubling the interval up to 64. Counts right after each creation:
    t=0: CPU 1 tries (interval 8 -> 16) and sleeps; t=8: CPU 0 tries (-> 16) and sleeps.
    t=300: task 0 starts on CPU 0: CPU 0's idle attempts at 24 (-> 32), 56 (-> 64), 120, 184,
    248 are counted: 2 + 5 = 7.
    t=400: task 0 ends; CPU 0 was busy since 300: interval 64 x 2, one attempt at 376 (8 total);
    idle again, still nothing to move, it sleeps on.
    t=1000: task 1 starts on CPU 1: its idle attempts at 16 (-> 32), 48 (-> 64), then every 64 ms
    from 112 to 944 (14) are counted: 8 + 16 = 24. Every attempt failed, none could move a task."""
    d = dom({0, 1}, [{0}, {1}], interval=(8, 64), busy_factor=2)
    out = scenario(one_node(2), [[d], [d]], [T(300, 0, 100), T(1000, 1, 100)])
    assert out.counts == [(300.0, 0, 7, 7, 7), (1000.0, 1, 24, 24, 24)]


def test_attempts_are_counted_up_to_the_end_of_the_run(scenario):
    """The scenario above runs until task 1 ends at t=1100, and every attempt a tick-driven kernel
    makes by then is counted, whether or not its domain was asleep when the run ended:
    CPU 0: 8, 24, 56, 120, 184, 248 idle, 376 busy, then idle every 64 ms from 440 to 1080 (11): 18;
    CPU 1: 0, 16, 48 and 112 to 944 idle (17), then busy from 1000, interval 128: 1072 (18).
    36 attempts, none of which could move a task."""
    d = dom({0, 1}, [{0}, {1}], interval=(8, 64), busy_factor=2)
    out = scenario(one_node(2), [[d], [d]], [T(300, 0, 100), T(1000, 1, 100)])
    assert out.tasks[1].finished == 1100.0
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (36, 36, 0)


@pytest.mark.parametrize("sleeps", [True, False])
def test_each_sleeping_domain_wakes_when_a_cpu_of_its_wide_groups_gets_a_task(scenario, monkeypatch, sleeps):
    """Five CPUs; CPU 0 alone balances, over {0}|{1,2} and above it {0,1,2}|{3,4}, both every
    100 ms. Task 0 starts on CPU 1, task 1 on CPU 3, both at t=150 (1000 ms each: the run ends at
    1150).
    t=100: nothing runs anywhere: both domains are sure to be balanced and sleep.
    t=150: task 0 on CPU 1, in the lower domain's other group of two CPUs: that domain wakes (its
    next attempt is due at 200); task 1 on CPU 3, in the upper domain's other group of two: it
    wakes too. From 200 to 1100 (10 attempts each) CPU 0, idle, finds in the lower domain {1,2} at
    128/2 = 64 against 0, average 128/3: imbalance min((64 - 42.7) x 2, 42.7 x 1) = 42.7, below
    one task, gap 64, no power gain (128 before and after), busiest not above 128: balanced; in
    the upper one {3,4} at 64 against {0,1,2} at 128/3, average 256/5: imbalance 25.6, gap 21.3,
    no power gain (256 and 256): balanced. Yet a group of two CPUs running a task could be the
    busiest with a real imbalance, so these attempts are not certain failures. Attempts 2 + 20 = 22, all failed, 20 of
    them live. (Had the upper domain slept on after the lower one woke, its 10 attempts would all be certain: 10 live.)
    The same with every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    low = dom({0, 1, 2}, [{0}, {1, 2}], interval=(100, 100))
    high = dom(range(5), [{0, 1, 2}, {3, 4}], interval=(100, 100))
    out = scenario(one_node(5), [[low, high], [], [], [], []], [T(150, 1, 1000), T(150, 3, 1000)])
    assert out.pulls == []
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (22, 22, 20)



@pytest.mark.parametrize("sleeps", [True, False])
def test_an_attempt_due_as_a_sleeping_domain_wakes_was_made_before_the_wake(scenario, monkeypatch, sleeps):
    """Two CPUs, domain {0}|{1} on both, a fixed 100 ms interval, busy factor 1. Task 0
    (1000 ms) starts on CPU 1 at t=130, task 1 (1000 ms) on CPU 1 at t=200.
    CPU 1 tries at 0 and 100, CPU 0 first at 100: nothing to move, the domains are sure to be
    balanced and sleep. t=200: CPU 0's attempt due at 200 (its timer set at 100) comes before
    task 1's creation (scheduled at 130, by task 0's): CPU 1 has one task, 128 against 0,
    average 64: imbalance 64, below one task; gap 128 < 256; no power gain (128 before and
    after); for an idle CPU the busiest counts only above 128: balanced, failed. Task 1 then
    queues on CPU 1, which wakes CPU 0's sleeping domain, its attempt at 200 counted as made.
    t=230: task 0's slice ends, task 1 runs. t=300: CPU 0 finds 0 against 256: one task, the
    queued task 0, with 900 ms left: it ends at 1200; task 1, alone on CPU 1, at 1230.
    Attempts: CPU 0 every 100 ms from 100 to 1200 (12), CPU 1 from 0 to 1200 (13): 25, all
    failed but the pull, which is the only one that met a queued task. (Waking without counting
    the attempt at 200 would make it after task 1's creation and pull task 1 at 200.) The same
    with every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    d = dom({0, 1}, [{0}, {1}], interval=(100, 100))
    out = scenario(one_node(2), [[d], [d]], [T(130, 1, 1000), T(200, 1, 1000)])
    assert out.pulls == [(300.0, 0, 1, 0)]
    assert [t.finished for t in out.tasks] == [1200.0, 1230.0]
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (25, 24, 1)


@pytest.mark.parametrize("sleeps", [True, False])
def test_a_task_in_the_local_or_a_one_cpu_group_does_not_wake_a_sleeping_domain(scenario, monkeypatch, sleeps):
    """Six CPUs; CPU 0 alone balances, over {0}|{1}|{2,3}, every 100 ms (busy factor 1). Task 0
    (1000 ms, I/O-bound, draws scripted: a first burst of 0.1 x 100 = 10 ms, then a burst of
    20 x 100 ms, longer than all its demand, and an I/O wait of 0.15 x 1000 = 150 ms) starts on
    CPU 1 at t=10; task 1 (1000 ms) on CPU 5, outside the domain, at 150; task 2 (1000 ms) on
    CPU 1 at 200.
    Task 0 runs 10-20 and waits for I/O until 170. t=100: CPU 0's first attempt finds nothing to
    move and no task in {2,3}: sure to be balanced, the domain sleeps. t=150: task 1 is outside
    the span. t=170: task 0 wakes on CPU 1, a group of one CPU: the domain's attempts still find
    it balanced (below), so it sleeps on. t=200: the attempt due at 200 (the timer set at 100)
    comes before task 2's creation (scheduled at 150, by task 1's): {1} at 128 against 0, the
    average 32: imbalance 32, below one task; gap 128 < 256; no power gain (128 before and
    after); the busiest not above 128: balanced. Then task 2 makes CPU 1 overloaded and wakes
    the domain, the attempt at 200 counted as made. t=260: task 0's slice (90 ms left after its
    first burst) ends, task 2 runs. t=300: CPU 0 finds 256 against 0: one task, the queued task
    0, with 900 ms left: it ends at 1200; task 1 at 1150, task 2 at 1260. Attempts at 100, 200,
    ..., 1200 (busy from 300, the interval unchanged): 12, all failed but the pull, the only one
    that met a queued task. (Woken at 170, the domain would make its attempt at 200 by a timer
    set at 170, after task 2's creation was scheduled, and pull task 2 then.) The same with
    every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    draws = {0: np.array([0.1, 20.0, 0.15] + [1.0] * 29)}
    d = dom({0, 1, 2, 3}, [{0}, {1}, {2, 3}], interval=(100, 100))
    out = scenario(one_node(6), [[d], [], [], [], [], []],
                   [T(10, 1, 1000, io=True), T(150, 5, 1000), T(200, 1, 1000)], draws=draws)
    assert out.pulls == [(300.0, 0, 1, 0)]
    assert [t.finished for t in out.tasks] == [1200.0, 1150.0, 1260.0]
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (12, 11, 1)

# -- can_migrate_task: cache-hot tasks ----------------------------------------------------------------
@pytest.mark.parametrize("hot_time, moved", [(10.0, 3), (5.0, 1)])
def test_cache_hot_task_is_refused(scenario, hot_time, moved):
    """Interval 105 ms. CPU 0 runs task 0; CPU 1 runs task 1 from 0 to 100 (it expires), then
    task 2; task 3 waits. At t=105 CPU 0 (busy) finds 128 against 384: one task. The expired
    task 1 comes first, having run 5 ms ago: with cache_hot_time 10 ms it is hot, refused, and
    task 3 (never ran) moves; with 5 ms it has been off the CPU exactly as long as the hot time:
    no longer hot (hot means less than cache_hot_time ago), and task 1 moves."""
    d = dom({0, 1}, [{0}, {1}], interval=(105, 105))
    out = scenario(one_node(2), [[d], [d]], [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3, cache_hot_time_cpu=hot_time)
    assert out.pulls[0] == (105.0, moved, 1, 0)


def test_cache_hot_tasks_move_after_cache_nice_tries_failures(scenario):
    """cache_hot_time 1000 ms (everything that ran is hot), cache_nice_tries 1, interval 21 to
    40 ms. CPU 0 runs task 0 (nice 0); CPU 1 runs tasks 1-3 of nice 19 (5 ms slices, round robin
    with period 15). Each attempt sees 128 against 384 (one task):
    t=21: tasks 3 and 1 are hot: refused, failures 1, interval 21 + 1 = 22;
    t=43: hot again: failures 2, interval 23;
    t=66: failures 2 > cache_nice_tries: hotness is ignored; the expired array's task 1 (ran
    60-65) moves."""
    d = dom({0, 1}, [{0}, {1}], interval=(21, 40))
    tasks = [T(0, 0, 1000)] + [T(0, 1, 1000, nice=19)] * 3
    out = scenario(one_node(2), [[d], [d]], tasks, cache_hot_time_cpu=1000.0)
    assert out.pulls[0] == (66.0, 1, 1, 0)


def test_newly_idle_success_keeps_the_failure_count(scenario):
    """cache_hot_time 1000 ms, interval 21 to 40 ms, groups {0} | {1} | {2}, with newly-idle
    balancing; only CPU 0 balances. CPU 0 runs task 0 (50 ms); CPUs 1 and 2 run tasks 1-4 and
    5-8 of nice 19 (5 ms slices, period 20, all hot).
    t=21, 43: CPU 0 (busy) finds one task to move from CPU 1, all hot: failures 1, 2.
    t=50: task 0 ends; newly idle, CPU 0 takes the expired task 1 from CPU 1 (hotness ignored).
    2.6.11's newly-idle balancing leaves the failure count alone, so at t=66 (busy: 128 against
    CPU 2's 512, one task) two failures exceed cache_nice_tries and CPU 2's expired task 5 moves."""
    d = dom(range(3), [{0}, {1}, {2}], flags=(LB, NI), interval=(21, 40))
    tasks = [T(0, 0, 50)] + [T(0, 1, 1000, nice=19)] * 4 + [T(0, 2, 1000, nice=19)] * 4
    out = scenario(one_node(3), [[d], [], []], tasks, cache_hot_time_cpu=1000.0)
    assert out.pulls[:2] == [(50.0, 1, 1, 0), (66.0, 5, 2, 0)]


@pytest.mark.parametrize("ignores, first", [(True, (53.0, 1, 1, 0)), (False, (159.0, 0, 1, 0))])
def test_an_idle_cpu_ignores_cache_hotness(scenario, ignores, first):
    """cache_hot_time 1000 ms, interval 53 ms; tasks 0 and 1 (nice 19, 5 ms slices) share CPU 1,
    CPU 0 is idle. At t=53 task 0 runs and task 1 (ran 45-50) is hot. An idle CPU pulls it anyway
    (idle_ignores_cache_hot, 2.6.11). Without that exception the attempts at 53 and 106 fail
    and the one at 159, after two failures, moves the expired task 0 (task 1 runs 155-160)."""
    d = dom({0, 1}, [{0}, {1}], interval=(53, 53))
    out = scenario(one_node(2), [[d], [d]], [T(0, 1, 1000, nice=19)] * 2, cache_hot_time_cpu=1000.0,
                   idle_ignores_cache_hot=ignores)
    assert out.pulls[0] == first


# -- active balancing (2.6.11 active_load_balance) -------------------------------------------------
def two_nodes_of_two():
    """Two nodes of CPUs {0,1} and {2,3}; CPU 0 balances {0,1}|{2,3} every 30 ms. CPU 2 has the
    same domain with a 100 s interval: it never balances, but its migration thread pushes over it."""
    machine = make_machine("test", "2x2", [2, 2], [[10, 20], [20, 10]])
    d = dom(range(4), [{0, 1}, {2, 3}], interval=(30, 30), name="node")
    quiet = dom(range(4), [{0, 1}, {2, 3}], interval=(100_000, 100_000), name="node")
    return machine, [[d], [], [quiet], []]


def test_active_balancing_pushes_the_only_task_of_a_busy_cpu(scenario):
    """Tasks 0 and 1 (1000 ms) start at t=100 on CPUs 2 and 3; CPU 0 is idle, cache_nice_tries 1.
    t=30: CPU 0 finds nothing anywhere: sure to be balanced, the domain sleeps; its attempts at
    60 and 90 are counted (balanced) when task 0 arrives on node 1.
    t=120, 150, 180, 210: this {0,1} = 0, busiest {2,3} = 256/2 = 128, average 64, imbalance
    min(64 x 2, 64 x 2) = 128: one task. The busiest queue, CPU 2 (first of two equal), has one
    runnable task, which it is running: nothing to pull, failures 1, 2, 3, 4.
    t=210: 4 > cache_nice_tries + 2: CPU 2's migration thread preempts task 0 (90 ms of its second
    slice left: back at the head of its list) and walks its domain from its own group: CPU 3 is
    busy, CPU 0 idle: task 0 goes there and runs the rest of its slice; CPU 2 has no task left, the
    walk ends (CPU 1 is not tried) and CPU 2 goes idle. The failure count goes back to 1.
    Then both groups are at 64: balanced, but not quiet (CPU 3 runs a task).
    Attempts: every 30 ms from 30 to 1080 (the run ends at 1100): 36, all failed (the push is not
    the attempt's pull), the first three sure to fail."""
    machine, domains = two_nodes_of_two()
    out = scenario(machine, domains, [T(100, 2, 1000), T(100, 3, 1000)])
    assert out.pulls == [(210.0, 0, 2, 0)]
    assert runs(out.tasks[0])[:3] == [(2, 100, 200), (2, 200, 210), (0, 210, 300)]
    m = out.metrics
    assert (m["migrations"], m["active_pushes"], m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == \
        (1, 1, 36, 36, 33)


def test_the_push_moves_a_cache_hot_task(scenario):
    """The first scenario with cache-hot times of 10 s and idle CPUs bound by them too
    (idle_ignores_cache_hot off). Up to t=210 nothing changes: CPU 2 runs its only task, so no
    attempt reaches move_tasks. At 210 CPU 2's migration thread preempts task 0 (it last ran at
    210: hot for 10 s more) and pushes over its own domain, whose failure count is 0 (it never
    balances): by the cache-hot rule alone task 0 may not go. The push ignores it (the kernel's
    target is idle): task 0 moves to CPU 0 at 210 as before."""
    machine, domains = two_nodes_of_two()
    hot = dict(cache_hot_time_cpu=10_000.0, cache_hot_time_node=10_000.0, idle_ignores_cache_hot=False)
    out = scenario(machine, domains, [T(100, 2, 1000), T(100, 3, 1000)], **hot)
    assert out.pulls == [(210.0, 0, 2, 0)]
    assert out.metrics["active_pushes"] == 1


def test_a_successful_pull_resets_the_failure_count(scenario):
    """The first scenario with task 2 (20 ms) on CPU 2 beside task 0 from t=0: CPU 0's domain is
    not quiet, and at t=30 (idle) it finds {2,3} = 384/2 = 192 against 0, average 96, imbalance
    min(96 x 2, 96 x 2) = 192: one task, task 2 (CPU 2's queue tail), which runs 30-50 on CPU 0.
    The pull sets the failure count to 0. t=60, 90, 120, 150: CPU 0, idle again, finds one task
    to move as in the first scenario, but CPU 2 only runs task 0: failures 1, 2, 3, 4; at 150,
    4 > cache_nice_tries + 2: the push of task 0 to CPU 0. (Had the pull left one failure
    counted, the push would come one attempt earlier, at 120.) Then both groups hold 64: nothing
    else moves."""
    machine, domains = two_nodes_of_two()
    out = scenario(machine, domains, [T(0, 2, 1000), T(0, 3, 1000), T(0, 2, 20)])
    assert out.pulls == [(30.0, 2, 2, 0), (150.0, 0, 2, 0)]


def test_a_cpu_with_two_tasks_of_its_own_makes_only_certain_failures(scenario):
    """Two CPUs; CPU 0 balances {0}|{1} every 50 ms and runs tasks 0 and 1 (410 ms each), CPU 1
    task 2 (790 ms). CPU 0 alternates 100 ms slices: task 0 ends at 810, task 1 at 820 (the run's
    end). Its attempts at 50, 100, ..., 800 (16) all find its own load 256 at least CPU 1's (128,
    then 0 after 790): balanced. Its own queued task cannot be pulled by itself and no other
    CPU has a queued task, so every attempt is a certain failure (quiet, counted dead): 16
    attempts, 16 failures, none live. (Counting its own queue as movable would make them live.)"""
    d = dom({0, 1}, [{0}, {1}], interval=(50, 50))
    out = scenario(one_node(2), [[d], []], [T(0, 0, 410), T(0, 0, 410), T(0, 1, 790)])
    assert [t.finished for t in out.tasks] == [810.0, 820.0, 790.0]
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (16, 16, 0)


def test_without_active_balancing_nothing_is_pushed(scenario):
    """The scenario above with active_balance off: every attempt fails and the running task
    stays on CPU 2; the 36 attempts are the same."""
    machine, domains = two_nodes_of_two()
    out = scenario(machine, domains, [T(100, 2, 1000), T(100, 3, 1000)], active_balance=False)
    assert out.pulls == []
    m = out.metrics
    assert (m["migrations"], m["active_pushes"], m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == \
        (0, 0, 36, 36, 33)


def three_pairs():
    """Three nodes of two CPUs, {0,1} far from {2,3} and {4,5}, which are near each other. CPU 0
    balances {0,1}|{2,3}|{4,5} every 30 ms; CPU 2 has {2,3}|{4,5} below the same top domain, both
    with 100 s intervals."""
    machine = make_machine("test", "3x2", [2, 2, 2], [[10, 20, 20], [20, 10, 15], [20, 15, 10]])
    groups = [{0, 1}, {2, 3}, {4, 5}]
    top = dom(range(6), groups, interval=(30, 30), name="top")
    top_quiet = dom(range(6), groups, interval=(100_000, 100_000), name="top")
    low = dom(range(2, 6), [{2, 3}, {4, 5}], interval=(100_000, 100_000), name="node")
    return machine, [[top], [], [low, top_quiet], [], [], []]


def test_the_push_goes_to_the_idle_cpu_nearest_the_busiest_not_to_the_asker(scenario):
    """Three nodes of two CPUs, {0,1} far from {2,3} and {4,5}, which are near each other. CPU 0
    balances {0,1}|{2,3}|{4,5} every 30 ms; CPU 2 has {2,3}|{4,5} below the same top domain, both
    with 100 s intervals. Tasks 0, 1, 2 (250 ms) start at t=0 on CPUs 2, 3, 4.
    t=30, 60, 90, 120: CPU 0 finds this = 0, busiest {2,3} = 128 (first of the groups with the
    highest load), average 3 x 128 / 6 = 64, imbalance min(64, 64) x 2 = 128: one task; CPU 2 runs
    its only task: failures 1 to 4. t=120: CPU 2's migration thread preempts task 0 and walks its
    lowest domain first: CPU 3 and CPU 4 are busy, CPU 5 idle: task 0 goes to CPU 5, not to CPU 0
    (2.6.16 would push to the CPU that asked). It ends there at 250, with tasks 1 and 2.
    Failures go back to 1; at 150, 180 and 210 {4,5} is the busiest with the same imbalance
    (CPU 4 first): failures 2, 3, 4, and at 210 CPU 4's migration thread, which has no domain to
    walk, preempts task 2 and lets it run on: a second activation that pushes nothing. Total
    active pushes: 1."""
    machine, domains = three_pairs()
    out = scenario(machine, domains, [T(0, 2, 250), T(0, 3, 250), T(0, 4, 250)])
    assert out.pulls == [(120.0, 0, 2, 5)]
    assert runs(out.tasks[0]) == [(2, 0, 100), (2, 100, 120), (5, 120, 200), (5, 200, 250)]
    assert runs(out.tasks[2]) == [(4, 0, 100), (4, 100, 200), (4, 200, 210), (4, 210, 250)]
    assert [t.finished for t in out.tasks] == [250.0, 250.0, 250.0]
    assert out.metrics["active_pushes"] == 1


def test_a_cpu_running_task_0_is_busy_for_the_push(scenario):
    """The scenario above with the tasks numbered in another order: task 1 on CPU 2, task 0 on
    CPU 3, task 2 on CPU 4. CPU 3, met first in the walk, runs task 0: it is busy like any CPU
    running a task, and task 1 goes to the idle CPU 5."""
    machine, domains = three_pairs()
    out = scenario(machine, domains, [T(0, 3, 250), T(0, 2, 250), T(0, 4, 250)])
    assert out.pulls == [(120.0, 1, 2, 5)]


def test_each_activation_of_a_migration_thread_walks_afresh_and_its_pushes_add_up():
    """Four CPUs, each with {0}|{1}|{2}|{3}; ``active_load_balance`` run twice by hand
    (``balance_kernels.active_balance``). CPU 0 runs task 0 with task 1 queued, CPU 3 runs task 2.
    CPU 0's thread preempts task 0 (head of its list) and walks from its own group: task 1 (the
    tail) to idle CPU 1, task 0 to idle CPU 2; it has no task left: done, two pushes. Then CPU 3's
    thread preempts task 2 and walks from its own group: CPU 0, now idle (the CPU the first walk
    started from, so it was marked then), takes task 2; three pushes in all."""
    from numa_script import Hand

    from simcore.models.numa import balance_kernels as BK

    d = dom(range(4), [{0}, {1}, {2}, {3}])
    hand = Hand(4, [[d]] * 4, tasks=3, trace=True)
    hand.dispatch(0, 0, 1)
    hand.dispatch(3, 2)
    BK.active_balance(0, SRK.IDLE, 0.0, *hand.state)
    BK.active_balance(3, SRK.IDLE, 0.0, *hand.state)
    invariants.check(hand.system)
    assert hand.moves() == [(0.0, 1, 0, 1), (0.0, 0, 0, 2), (0.0, 2, 3, 0)]
    assert hand.system.SI[SL.Y_PUSH] == 3


@pytest.mark.parametrize("top_flags", [(LB,), ()])
def test_the_migration_thread_pushes_to_every_idle_cpu_while_it_has_tasks(scenario, top_flags):
    """conservative-soft (tasks may not move farther from their home node). Node A = CPUs 0, 1, 2,
    node B = CPU 3. CPU 3 balances {0}|{1}|{2}|{3} every 30 ms; CPU 0 has {0}|{1}|{2} below the same
    top domain, both never due; CPUs 1 and 2 do not balance. Tasks 0, 1, 2 (1000 ms, home A) start
    on CPU 0 at t=0.
    t=0: CPU 3's first attempt finds no task: quiet, it sleeps until CPU 0 has two tasks.
    t=30, 60, 90, 120: CPU 3: this 0 against {0} = 384, average 96, imbalance min(288, 96) < 128
    but max - this >= 2 x 128: one task. Each queued task of CPU 0 is refused (CPU 3 is on node B,
    farther from home): failures 1 to 4.
    CPU 0 meanwhile: task 0 runs 0-100 and expires, task 1 runs from 100.
    t=120: CPU 0's migration thread preempts task 1 (head of its active list) and walks {0}|{1}|{2}:
    to CPU 1 the first task in move_tasks order, task 0 (expired array first); to CPU 2 the next,
    task 2 (read from the tail of the active list); then the top domain: CPU 3 is idle, but the
    last task, 1, may not go there. CPU 0 runs task 1 again.
    Ends: task 0 has 900 ms left (1020), task 1 980 ms (1100), task 2 1000 ms (1120). Then each CPU
    of node A runs one task; CPU 3 finds no gain (one task against none on single CPUs): quiet.
    Without active balancing CPU 0 runs all three to 3000 ms. A push to the CPU that asked
    (2.6.16) would move nothing. With CPU 0's top domain not load-balancing (no flags), the walk
    stops below it: the same two pushes, and CPU 0 runs task 1 again."""
    machine = make_machine("test", "3+1", [3, 1], [[10, 20], [20, 10]])
    singles = [{0}, {1}, {2}, {3}]
    asker = dom(range(4), singles, interval=(30, 30), name="node")
    top = dom(range(4), singles, flags=top_flags, interval=(100_000, 100_000), name="node")
    low = dom(range(3), singles[:3], interval=(100_000, 100_000))
    tasks = [T(0, 0, 1000), T(0, 0, 1000), T(0, 0, 1000)]
    domains = [[low, top], [], [], [asker]]
    out = scenario(machine, domains, tasks, "conservative-soft")
    assert out.pulls == [(120.0, 0, 0, 1), (120.0, 2, 0, 2)]
    assert [t.finished for t in out.tasks] == [1020.0, 1100.0, 1120.0]
    assert (out.metrics["migrations"], out.metrics["active_pushes"]) == (2, 2)
    off = scenario(machine, domains, tasks, "conservative-soft", active_balance=False)
    assert off.pulls == []
    assert max(t.finished for t in off.tasks) == 3000.0


def test_the_migration_thread_walks_its_own_group_past_itself(scenario):
    """The previous scenario with CPU 0's single domain {0,1,2}|{3}: its own group comes first, and
    after CPU 0 itself (skipped) come the idle CPUs 1 and 2: the same pushes, tasks 0 and 2."""
    machine = make_machine("test", "3+1", [3, 1], [[10, 20], [20, 10]])
    asker = dom(range(4), [{0}, {1}, {2}, {3}], interval=(30, 30), name="node")
    own = dom(range(4), [{0, 1, 2}, {3}], interval=(100_000, 100_000), name="node")
    out = scenario(machine, [[own], [], [], [asker]], [T(0, 0, 1000)] * 3, "conservative-soft")
    assert out.pulls == [(120.0, 0, 0, 1), (120.0, 2, 0, 2)]


@pytest.mark.parametrize("asker_busy, pushed", [(True, False), (False, True)])
def test_pushes_are_judged_as_the_asking_attempts_kind(scenario, asker_busy, pushed):
    """conservative-soft with its rules for a busy CPU's periodic balancing only (rules_scope
    'periodic'). Three nodes of one CPU at distance 20. Tasks 0-2 (home node 0) on CPU 0; CPU 2
    balances {0}|{2} every 30 ms; CPU 0 has {0}|{1} (never due) for the push.
    Busy CPU 2 (task 3 on it): 128 against 384, one task; the rules refuse every queued task
    (node 2 is farther from home): failures at 30, 60, 90, 120, and at 120 the push is judged as
    periodic balancing too: idle CPU 1 is on node 1, farther from home: refused, nothing moves.
    Idle CPU 2 (no task 3): 0 against 384 is idle balancing, done 'in the usual manner': it pulls
    task 2 at 30 (the tail of CPU 0's queue), and no push is needed."""
    machine = nodes(3)
    asker = dom({0, 2}, [{0}, {2}], interval=(30, 30), name="node")
    own = dom({0, 1}, [{0}, {1}], interval=(100_000, 100_000), name="node")
    tasks = [T(0, 0, 1000)] * 3 + ([T(0, 2, 1000)] if asker_busy else [])
    out = scenario(machine, [[own], [], [asker]], tasks, "conservative-soft", rules_scope="periodic")
    early = [p for p in out.pulls if p[0] <= 150]
    assert early == ([] if asker_busy else [(30.0, 2, 0, 2)])
    assert out.metrics["active_pushes"] == 0


def test_active_balancing_pushes_the_running_task_past_a_task_that_may_not_move(scenario):
    """conservative-soft, max_migrations 1, two CPUs of one node, {0}|{1} every 35 ms on both.
    Task 0 (nice -10: 600 ms slice, 550 ms) runs on CPU 1; tasks 1 and 2 (150 ms) and 3 (1000 ms)
    start on CPU 0.
    t=35: CPU 1 (128 against 384, one task) pulls task 3, the tail of CPU 0's queue; having
    migrated once, task 3 may not move again. It waits behind the higher-priority task 0.
    CPU 0 runs tasks 1 and 2 in 100 ms slices: 1 ends at 250, 2 at 300; CPU 0 is then idle.
    t=315, 350, 385, 420: CPU 0 (idle) finds 0 against 256: one task; CPU 1's only queued task,
    3, is refused: failures 1 to 4. At 420 the push: the migration thread preempts task 0, the
    first task in move_tasks order (highest priority) and one that may move, and pushes it to
    CPU 0, where it ends at 550 as it would have on CPU 1; task 3 is refused for CPU 0. Task 3
    starts on CPU 1 at 420 and ends at 1420 (1550 without the push)."""
    d = dom({0, 1}, [{0}, {1}], interval=(35, 35))
    tasks = [T(0, 1, 550, nice=-10), T(0, 0, 150), T(0, 0, 150), T(0, 0, 1000)]
    out = scenario(one_node(2), [[d], [d]], tasks, "conservative-soft", max_migrations=1)
    assert out.pulls == [(35.0, 3, 0, 1), (420.0, 0, 1, 0)]
    assert [t.finished for t in out.tasks] == [550.0, 250.0, 300.0, 1420.0]
    assert out.metrics["migrations"] == 2
    off = scenario(one_node(2), [[d], [d]], tasks, "conservative-soft", max_migrations=1, active_balance=False)
    assert off.pulls == [(35.0, 3, 0, 1)]
    assert [t.finished for t in off.tasks] == [550.0, 250.0, 300.0, 1550.0]


# -- policies: conservative rules -----------------------------------------------------------------
def test_ageing_limit_keeps_a_migrated_task_in_place(scenario):
    """conservative-soft with max_migrations 1. CPU 0 runs task 0 and balances every 50 ms;
    CPU 1 runs tasks 1-3; CPU 2 runs task 4 (60 ms) and has only newly-idle balancing.
    t=50: CPU 0 pulls task 3 (128 against 384), which waits behind task 0.
    t=60: CPU 2 is newly idle: busiest is CPU 0 (256, ahead of CPU 1's 256); imbalance 85 but a
    gap of 256 -> one task; the only candidate, task 3, has migrated once: refused.
    With max_migrations 2 it moves again at t=60."""
    periodic = dom(range(3), [{0}, {1}, {2}])
    newidle = dom(range(3), [{0}, {1}, {2}], flags=(LB, NI), interval=(10000, 10000))
    tasks = [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3 + [T(0, 2, 60)]
    domains = [[periodic], [], [newidle]]
    out = scenario(one_node(3), domains, tasks, "conservative-soft", max_migrations=1)
    assert [p for p in out.pulls if p[0] < 100] == [(50.0, 3, 1, 0)]
    out = scenario(one_node(3), domains, tasks, "conservative-soft", max_migrations=2)
    assert [p for p in out.pulls if p[0] < 100] == [(50.0, 3, 1, 0), (60.0, 3, 0, 2)]
    # task 3 ran on none of the CPUs it was moved to before 60: one wasted migration of all
    assert out.tasks[3].migrations == 2
    assert out.metrics["wasted_migrations"] == pytest.approx(1 / len(out.pulls))


@pytest.mark.parametrize("policy, scope, pulled", [("linux-2level", "all", True), ("conservative-soft", "all", False),
                                                    ("conservative-soft", "periodic", True),
                                                    ("conservative-soft", "every-periodic", False)])
def test_conservative_policy_never_moves_a_task_away_from_home(scenario, policy, scope, pulled):
    """Two nodes of one CPU at distance 20. Tasks 0 and 1 are created on CPU 1 (home node 1); CPU 0
    is idle and balances at t=50: 0 against 256, one task, task 1. Node 0 is farther from its home
    (20 > 10): the conservative policy refuses it (and keeps refusing). With rules_scope
    'periodic' an idle CPU balances 'in the usual manner' and takes it, as Linux does; with
    'every-periodic' the rules govern an idle CPU's periodic balancing too: refused."""
    d = dom({0, 1}, [{0}, {1}], name="node")
    out = scenario(nodes(2), [[d], [d]], [T(0, 1, 1000)] * 2, policy, rules_scope=scope)
    assert out.pulls == ([(50.0, 1, 1, 0)] if pulled else [])


@pytest.mark.parametrize("rule, moved", [("home", False), ("hop", True)])
def test_distance_rule_home_refuses_a_move_farther_from_home_that_hop_allows(scenario, rule, moved):
    """Three nodes of one CPU in a line: d(0,1) = d(1,2) = 20, d(0,2) = 30; conservative-soft,
    rules for a busy CPU's periodic balancing only (rules_scope 'periodic'). CPU 1 balances
    {0}|{1} every 50 ms, CPU 2 {1}|{2} every 200 ms; CPU 0 does not balance.
    t=0: tasks 0, 1 (home node 0) on CPU 0, task 3 (home 2) on CPU 2.
    t=50: CPU 1 is idle (no rules): 0 against 256, one task: it pulls task 1, now on node 1.
    t=60: tasks 2 and 4 (home 1) start on CPU 1 behind task 1; at 150 task 1's slice ends (expired).
    t=200: CPU 2 (busy, rules apply): 128 against CPU 1's 384, one task; move_tasks looks at the
    expired task 1 first. 'home': node 2 is farther from its home than node 1 (30 > 20), refused,
    and so are tasks 4 and 2 (home 1: 20 > 10). 'hop': the hop 1 -> 2 (20) is not longer than
    node 1's distance from home (20), so task 1 moves."""
    machine = make_machine("test", "line-3", [1, 1, 1], [[10, 20, 30], [20, 10, 20], [30, 20, 10]])
    d01 = dom({0, 1}, [{0}, {1}], name="node")
    d12 = dom({1, 2}, [{1}, {2}], interval=(200, 200), name="node")
    tasks = [T(0, 0, 1000), T(0, 0, 1000), T(60, 1, 1000), T(0, 2, 1000), T(60, 1, 1000)]
    out = scenario(machine, [[], [d01], [d12]], tasks, "conservative-soft", rules_scope="periodic", distance_rule=rule)
    assert [p for p in out.pulls if p[0] <= 200] == [(50.0, 1, 0, 1)] + ([(200.0, 1, 1, 2)] if moved else [])


@pytest.mark.parametrize("scope, pulled", [("periodic", True), ("every-periodic", False), ("all", False)])
def test_hard_zone_scope_periodic_leaves_idle_balancing_beyond_the_zone(scenario, scope, pulled):
    """conservative-hard with rules for busy periodic balancing only (rules_scope 'periodic').
    Five nodes of one CPU; CPU 0 has four levels {0}|{1}, {0,1}|{2}, {0,1,2}|{3}, {0..3}|{4}: its
    zone is the lowest 4 // 2 + 1 = 3, the fourth level is outside. Tasks 0 and 1 start on CPU 4.
    t=50: idle CPU 0 balances: the lower levels find nothing; at the fourth level {0..3} = 0
    against {4} = 256, average 51.2, imbalance min(204.8, 4 x 51.2) = 204.8 >= 128: one task.
    zone_scope 'periodic' (default) restricts only a busy CPU's periodic balancing, so the idle
    CPU pulls task 1; 'every-periodic' keeps an idle CPU's periodic balancing inside the zone too,
    and 'all' every kind: nothing moves."""
    machine = nodes(5)
    levels = [dom({0, 1}, [{0}, {1}]), dom({0, 1, 2}, [{0, 1}, {2}]), dom({0, 1, 2, 3}, [{0, 1, 2}, {3}]),
              dom(range(5), [{0, 1, 2, 3}, {4}], name="node")]
    out = scenario(machine, [levels, [], [], [], []], [T(0, 4, 1000), T(0, 4, 1000)], "conservative-hard",
                   rules_scope="periodic", zone_scope=scope)
    assert [p for p in out.pulls if p[0] <= 50] == ([(50.0, 1, 4, 0)] if pulled else [])


@pytest.mark.parametrize("rule, first_pull", [("every-cpu", (50.0, 3, 0, 1)), ("node-first", None)])
def test_a_busy_cpu_that_is_not_its_nodes_first_balances_only_under_every_cpu(scenario, rule, first_pull):
    """``periodic_balancer``. One node of two CPUs, each balancing over {0}|{1} every 50 ms (busy
    factor 1). Task 0 (1000 ms) runs on CPU 1; tasks 1-3 (1000 ms) are on CPU 0, task 1 running.
    t=50: CPU 0 is the busiest and finds nothing. Busy CPU 1: this 128, busiest 384, average 256,
    imbalance min(384 - 256, 256 - 128) = 128, one task: under 'every-cpu' it pulls task 3, the
    tail of CPU 0's queue. Under 'node-first' (mehta's balancing processor is 'the idle processor
    or the first processor') busy CPU 1 is neither and makes no attempt: nothing moves while it
    runs task 0, i.e. before t=1000."""
    d = dom({0, 1}, [{0}, {1}])
    out = scenario(one_node(2), [[d], [d]], [T(0, 1, 1000)] + [T(0, 0, 1000)] * 3, periodic_balancer=rule)
    early = [p for p in out.pulls if p[0] < 1000]
    assert early == ([first_pull] if first_pull else [])


@pytest.mark.parametrize("rule", ["every-cpu", "node-first"])
def test_an_idle_cpu_balances_periodically_whether_or_not_it_is_its_nodes_first(scenario, rule):
    """The other half of mehta's balancing processor, 'the idle processor': CPU 1 has no task, CPU 0
    runs task 0 with task 1 queued; both balance over {0}|{1} every 50 ms. t=50: idle CPU 1
    (this 0, busiest 256, average 128, imbalance 128) pulls task 1, under either rule."""
    d = dom({0, 1}, [{0}, {1}])
    out = scenario(one_node(2), [[d], [d]], [T(0, 0, 1000)] * 2, periodic_balancer=rule)
    assert out.pulls[0] == (50.0, 1, 0, 1)


@pytest.mark.parametrize("avg, cur, k, expected", [
    (384, 128, 1, 256), (384, 128, 2, 192), (0, 256, 1, 128), (0, 384, 2, 288),
    (5, 0, 1, 2), (0, 5, 1, 3), (7, 7, 3, 7), (1000, 0, 64, 0)])
def test_cpu_load_halves_its_distance_to_the_instant_load_each_tick(avg, cur, k, expected):
    """2.6.11: cpu_load = (cpu_load + load_now) / 2 each tick in integers, rounded up while rising:
    the distance d = avg - cur becomes floor(d / 2^k) after k ticks, from above or below
    (so 5 -> 0 gives 2, and 0 -> 5 gives 3)."""
    from simcore.models.numa.runqueue_kernels import decayed

    assert decayed(avg, cur, k) == expected


def test_conservative_rules_by_hand():
    """The conservative policies' rules of moves (``migrate_kernels.policy_allows``) for a task of
    home node h that has migrated m times (max_migrations 1), on five single-CPU nodes.
    Distance rules on a line, d(i, j) = 10 + 10 |i - j|: 'home' refuses iff d(dst, h) > d(src, h),
    'hop' iff d(src, dst) > d(src, h); an aged task (m = 1) is refused either way.
    The hard zone on flat distances (20 between nodes, so the distance rule never refuses a move
    between two nodes that are not home): CPU 0 has four levels {0}|{1}, {0,1}|{2}, {0,1,2}|{3}
    and {0..3}|{4}; its zone is the lowest 4 // 2 + 1 = 3, whose top spans CPUs 0-3, so a task of
    home 4 may not go to CPU 0 while one of home 3 may; CPU 1 has no domains: every node is in
    its zone. With rules_scope 'periodic' only a busy CPU's periodic balancing is judged; with
    'every-periodic' every CPU's periodic balancing, idle or busy, and not newly-idle balancing.
    A refusal names its reason: an aged task first, then distance, then the zone. The soft policy's threshold outside
    the zone: 100 + 2 x (125 - 100) = 150; with factor 1.5, round(137.5) = 138; the hard policy keeps 125."""
    from numa_script import Hand, set_task

    from simcore.models.numa import migrate_kernels as MK

    line = make_machine("test", "line-5", [1] * 5, [[10 + 10 * abs(i - j) for j in range(5)] for i in range(5)])
    flat = nodes(5)
    levels = [dom({0, 1}, [{0}, {1}]), dom({0, 1, 2}, [{0, 1}, {2}]), dom({0, 1, 2, 3}, [{0, 1, 2}, {3}]),
              dom(range(5), [{0, 1, 2, 3}, {4}])]

    def policy(name, machine, **hp):
        return Hand(machine, [levels, [], [], [], []], tasks=1, policy=name, max_migrations=1, **hp)

    def allows(hand, home, src, dst, m=0, kind="periodic"):
        set_task(hand.system, 0, T_HOME=home, T_MIGR=m)
        idle = {"periodic": SRK.NOT_IDLE, "idle": SRK.IDLE, "newidle": SRK.NEWLY_IDLE}[kind]
        return bool(MK.policy_allows(0, src, dst, idle, hand.system.SI, hand.system.SF))

    def why(hand, home, src, dst, m=0):
        set_task(hand.system, 0, T_HOME=home, T_MIGR=m)
        return int(MK.refusal(0, src, dst, SRK.NOT_IDLE, hand.system.SI, hand.system.SF))

    home, hop = policy("conservative-soft", line), policy("conservative-soft", line, distance_rule="hop")
    assert not allows(home, 1, 1, 0)                    # 20 > 10: away from home
    assert allows(home, 0, 2, 1) and not allows(home, 0, 2, 1, m=1)   # towards home; aged
    assert not allows(home, 0, 1, 2) and allows(hop, 0, 1, 2)         # 30 > 20; hop 20 <= 20
    assert allows(home, 1, 2, 0) and not allows(hop, 1, 2, 0)         # 20 <= 20; hop 30 > 20
    assert not allows(hop, 0, 1, 3)                     # hop 30 > 20
    hard = policy("conservative-hard", flat)
    assert not allows(hard, 4, 1, 0) and allows(hard, 3, 1, 0) and allows(hard, 4, 2, 1)
    scoped = policy("conservative-hard", flat, rules_scope="periodic")
    assert allows(scoped, 4, 1, 0, m=1, kind="idle") and not allows(scoped, 4, 1, 0, kind="periodic")
    ticks = policy("conservative-hard", flat, rules_scope="every-periodic")
    assert not allows(ticks, 4, 1, 0, kind="idle") and not allows(ticks, 4, 1, 0, kind="periodic")
    assert allows(ticks, 4, 1, 0, m=1, kind="newidle")
    # the reason of a refusal: ageing comes first, then distance, then the zone
    assert why(home, 0, 2, 1, m=1) == LK.REF_AGED and why(home, 1, 1, 0) == LK.REF_DISTANCE
    assert why(hard, 4, 1, 0) == LK.REF_ZONE and why(hard, 4, 1, 0, m=1) == LK.REF_AGED and why(hard, 3, 1, 0) == 0
    assert [home.policy.imbalance_pct(0, k, 125) for k in range(4)] == [125, 125, 125, 150]
    assert policy("conservative-soft", line, soft_threshold_factor=1.5).policy.imbalance_pct(0, 3, 125) == 138
    assert [hard.policy.imbalance_pct(0, k, 125) for k in range(4)] == [125] * 4


@pytest.mark.parametrize("kind, scope, moved", [
    ("periodic", "all", False), ("periodic", "every-periodic", False), ("periodic", "periodic", True),
    ("newidle", "all", False), ("newidle", "every-periodic", True), ("newidle", "periodic", True)])
def test_an_idle_cpus_attempt_under_each_scope_of_the_conservative_rules(kind, scope, moved):
    """Two nodes of one CPU at distance 20, conservative-soft. CPU 1 runs task 0 with task 1
    queued, both of home node 1; CPU 0 is idle, its one domain {0}|{1} every 8 ms (and newly idle).
    Either CPU 0's periodic attempt at t=8 (idle) or its newly-idle attempt at t=0: 0 against 256,
    imbalance 128: one task, task 1 (the search finds an imbalance: mehta's successful attempt).
    Node 0 is farther from task 1's home than node 1 (20 > 10): the rules refuse it, counted once
    as a refusal for distance, and the attempt moves nothing, wherever they govern that balancing:
    'all' every kind; 'every-periodic' an idle CPU's periodic attempt but not a newly-idle one;
    'periodic' neither (a busy CPU's periodic balancing only). Else task 1 is pulled."""
    from numa_script import Hand, set_task

    from simcore.models.numa import balance_kernels as BK

    flags = (LB, NI) if kind == "newidle" else (LB,)
    d = dom({0, 1}, [{0}, {1}], flags=flags, interval=(8, 64), name="node")
    hand = Hand(nodes(2), [[d], []], tasks=2, trace=True, policy="conservative-soft", rules_scope=scope)
    hand.dispatch(1, 0, 1)
    for t in (0, 1):
        set_task(hand.system, t, T_HOME=1)
    if kind == "newidle":
        hand.newidle(0)
    else:
        hand.set_now(8.0)
        BK.fire(0, 8.0, *hand.state)
    assert hand.moves() == ([(hand.engine.now, 1, 1, 0)] if moved else [])
    assert hand.counts == (1, 0 if moved else 1, 0)
    assert hand.found == 1
    assert hand.refused == (0, 0 if moved else 1, 0)


@pytest.mark.parametrize("scope, pulled", [("periodic", True), ("every-periodic", True), ("all", False)])
def test_hard_zone_scope_leaves_newly_idle_balancing_beyond_the_zone_unless_all(scope, pulled):
    """conservative-hard, rules for busy periodic balancing only. Five nodes of one CPU (every
    remote distance 20); CPU 0 has four newly-idle levels {0}|{1}, {0,1}|{2}, {0,1,2}|{3},
    {0..3}|{4}; its zone is the lowest three. CPU 4 runs task 0 with task 1 queued; CPU 0 goes
    newly idle. The first three levels hold no queued task: three certain failures. The fourth
    lies beyond the zone: 'all' ('strictly no balancing ... out of the load balancing zone') takes
    it out of newly-idle balancing, so nothing more happens: (3, 3, 3). Under 'periodic' and
    'every-periodic' newly-idle balancing is 'done in the usual manner': {0..3} = 0 against {4} =
    256, a newly idle CPU takes one task: task 1 pulled, (4, 3, 3)."""
    from numa_script import Hand

    levels = [
        dom({0, 1}, [{0}, {1}], flags=(LB, NI)),
        dom({0, 1, 2}, [{0, 1}, {2}], flags=(LB, NI)),
        dom({0, 1, 2, 3}, [{0, 1, 2}, {3}], flags=(LB, NI)),
        dom(range(5), [{0, 1, 2, 3}, {4}], flags=(LB, NI), name="node"),
    ]
    hand = Hand(nodes(5), [levels, [], [], [], []], tasks=2, trace=True, policy="conservative-hard",
                rules_scope="periodic", zone_scope=scope)
    hand.dispatch(4, 0, 1)
    hand.newidle(0)
    assert hand.moves() == ([(0.0, 1, 4, 0)] if pulled else [])
    assert hand.counts == ((4, 3, 3) if pulled else (3, 3, 3))


@pytest.mark.parametrize("memory, limit, home, level_0", [("moves", 1, 0, 1.0), ("stays", 1, 1, 0.5),
                                                           ("moves", 2, 1, 0.5)])
def test_an_aged_tasks_memory_follows_it_to_where_it_was_frozen(scenario, memory, limit, home, level_0):
    """Two nodes of one CPU at distance 20, conservative-soft with rules for a busy CPU's periodic
    balancing (an idle CPU balances in the usual manner). Tasks 0 and 1 (1000 ms each) start on
    CPU 1, home node 1; task 0 runs. t=50: idle CPU 0 pulls task 1 (0 against 256), before it
    ever ran, and it runs there to the end. Its first migration: with max_migrations 1 it is now
    aged, and with aged_memory 'moves' its memory moves to node 0, its new home; all CPU time is
    then at level 0 (task 0 at home, task 1 on its new home). With 'stays', or with max_migrations
    2 (not aged), its home stays node 1 and its 1000 ms on node 0 are at level 1: half the time."""
    d = dom({0, 1}, [{0}, {1}], name="node")
    out = scenario(nodes(2), [[d], [d]], [T(0, 1, 1000)] * 2, "conservative-soft", rules_scope="periodic",
                   max_migrations=limit, aged_memory=memory)
    assert out.pulls == [(50.0, 1, 1, 0)]
    assert [t.home for t in out.tasks] == [1, home]
    assert out.metrics["share_level_0"] == pytest.approx(level_0)


@pytest.mark.parametrize("args, gain", [
    ((256, 0, 1, 1), True),     # now 128 + 0; after the move 128 + 128
    ((256, 128, 1, 1), False),  # now 128 + 128; after 128 + 128
    ((128, 0, 1, 2), False),    # one task: now 128 + 0; after 0 + 128
    ((256, 256, 1, 2), False),  # now 128 + 256; after 128 + 256
    ((512, 0, 2, 1), True),     # now 256 + 0; after min(256, 384) + 128
    ((256, 0, 2, 1), False),    # now 256 + 0; after min(256, 128) + 128
])
def test_power_gain_by_hand(args, gain):
    """2.6.11's cpu power test on load sums with cpu_power 128 per CPU (max_sum, this_sum, nb,
    nt): power now min(128 nb, max_sum) + min(128 nt, this_sum); after moving one task
    min(128 nb, max_sum - 128) (0 if max_sum <= 128) + min(128 nt, this_sum + min(max_sum, 128))."""
    from simcore.models.numa.search_kernels import _power_gain

    assert _power_gain(*args) is gain


def _busiest(group_of, cur, local, idle=SRK.NOT_IDLE, avg=None):
    """``search_kernels.busiest_group`` on loads given by hand (cpu_load ``avg`` settled at the
    current tick; instant loads without it), imbalance_pct 125."""
    import numpy as np

    from simcore.models.numa.search_kernels import busiest_group

    group_of = np.array(group_of, dtype=np.int64)
    sizes = np.bincount(group_of).astype(np.int64)
    cur = np.array(cur, dtype=float)
    instant = avg is None
    avg = cur if instant else np.array(avg, dtype=float)
    span = np.flatnonzero(group_of >= 0)
    return busiest_group(span, group_of, sizes, local, len(group_of), cur, avg, np.full(len(cur), 10.0), 10.0,
                         instant, 125, idle)


def test_group_loads_sum_each_cpus_least_and_most_of_cpu_load_and_the_instant_load():
    """Groups {0,1,2} (local), {3,4}; cpu_load settled at this tick. A CPU's source load is the
    least of cpu_load and nr_running x 128, its target load the most: the local group's target
    sum T = 128 + 128 + 64 = 320 (CPUs 0 and 1 rising, CPU 2 falling), the busiest group's
    source sum M = 512 + 512 = 1024 (CPU 3 falling, CPU 4 rising). Not balanced (320 x 2 <
    1024 x 3, 320 x 5 < 1344 x 3, 100 x 1024 x 3 > 125 x 320 x 2); with two groups both terms
    of the imbalance are 3M - 2T = 2432: 2432 // (128 x 5) = 3 tasks. (A group sum of only its
    last CPU, or a target sum of the instant loads, gives 1 or 4.)"""
    assert _busiest([0, 0, 0, 1, 1], cur=[128, 128, 0, 512, 768], avg=[64, 0, 64, 768, 512], local=0) == (1, 3)


@pytest.mark.parametrize("group_of, cur, local, idle, expected", [
    # the busiest group by load per CPU: {4} at 256, not {1,2,3} at 128 (its sum 384 is larger);
    # imbalance min(256 x 5 - 640, 640 - 0) = 640, one task (128 x 5)
    ([0, 1, 1, 1, 2], [0, 128, 128, 128, 256], 0, SRK.NOT_IDLE, (2, 1)),
    # local {0,1} at 256 over 2 CPUs, busiest {2} at 256: imbalance 2 x 256 - 256 = 256 < 128 x 3,
    # and the gap per CPU pair, 256 x 2 - 256 x 1 = 256, below 2 x 128 x 1 x 2 = 512; no power
    # gain (384 now and after): balanced, a busy CPU's attempt fails
    ([0, 0, 1], [128, 128, 256], 0, SRK.NOT_IDLE, (-1, 0)),
    # local {0} idle, busiest {1} at 384, {2,3} idle: imbalance min(384 x 4 - 384, 384 - 0) = 384
    # < 128 x 4; the gap 384 >= 2 x 128: one task
    ([0, 1, 2, 2], [0, 384, 0, 0], 0, SRK.NOT_IDLE, (1, 1)),
    # the busiest group is group 0 and the local one, group 1, as loaded (256 each): balanced,
    # but an idle CPU takes one task from a busiest group above 128
    ([0, 1], [256, 256], 1, SRK.IDLE, (0, 1)),
])
def test_the_busiest_group_and_imbalance_by_hand(group_of, cur, local, idle, expected):
    """``find_busiest_group`` on instant loads given by hand, imbalance_pct 125."""
    assert _busiest(group_of, cur, local, idle) == expected


@pytest.mark.parametrize("load_average, cur, avg, t_now, busiest", [
    # instant loads: the most tasks, at the first tick too (the cpu_load mirrors are not kept)
    ("instant", [0, 128, 384], [0, 0, 0], 0.0, 2),
    # cpu_load settled at this tick: CPU 1 rising, source load min(128, 384) = 128 < CPU 2's 256
    ("tick", [0, 384, 256], [0, 128, 256], 5.0, 2),
    # CPU 1 falling: source load min(512, 256) = 256 < CPU 2's 384
    ("tick", [0, 256, 384], [0, 512, 384], 5.0, 2),
    # settled two ticks ago: CPU 1's cpu_load 0 at 256 becomes 256 - (256 >> 2) = 192 > 128
    ("tick", [0, 256, 128], [0, 0, 128], 7.0, 1),
])
def test_the_busiest_queue_by_hand(load_average, cur, avg, t_now, busiest):
    """2.6.11 ``find_busiest_queue`` (``timing_kernels.busiest_queue``) in group {1,2} of CPU 0's
    domain {0}|{1,2}: the CPU with the highest source load, the least of its cpu_load (brought
    up to the tick ``t_now`` from tick 5, where the mirrors were settled) and its instant load."""
    from numa_script import Hand

    from simcore.models.numa import timing_kernels as K

    d = dom({0, 1, 2}, [{0}, {1, 2}])
    hand = Hand(3, [[d], [d], [d]], tasks=1, load_average=load_average)
    SI, SF, F, I = hand.state
    for c in range(3):
        F[I[K.OF_CUR] + c], F[I[K.OF_AVG] + c], F[I[K.OF_TCK] + c] = cur[c], avg[c], 5.0 * (load_average == "tick")
    assert K.busiest_queue(0, 1, t_now, F, I) == busiest


def test_one_firing_of_the_timer_balances_every_due_domain_bottom_up_as_the_cpu_is_then():
    """``rebalance_tick`` when CPU 0's timer fires at t=8 (``balance_kernels.fire``): CPU 0, idle,
    has {0}|{1} and above it {0,1}|{2,3}, both every 8 ms, both due (CPU 0's stagger is 0). CPU
    1 runs task 0 with task 1 queued; CPUs 2 and 3 run three tasks each (2-4, 5-7).
    Lower domain, idle: 0 against 256, imbalance 128: task 1 pulled. CPU 0 now has a task: the
    upper domain balances as a busy CPU: {0,1} at 256 against {2,3} at 768, imbalance min(768 x 4
    - 1024 x 2, 1024 x 2 - 256 x 4) = 1024, two tasks (1024 // 512) from CPU 2 (first of two
    equal), the tail of its queue first: tasks 4 and 3. Two attempts, none failed."""
    from numa_script import Hand

    from simcore.models.numa import balance_kernels as BK

    low = dom({0, 1}, [{0}, {1}], interval=(8, 64))
    high = dom(range(4), [{0, 1}, {2, 3}], interval=(8, 64), name="node")
    hand = Hand(one_node(4), [[low, high], [], [], []], tasks=8, trace=True)
    hand.dispatch(1, 0, 1)
    hand.dispatch(2, 2, 3, 4)
    hand.dispatch(3, 5, 6, 7)
    hand.set_now(8.0)
    BK.fire(0, 8.0, *hand.state)
    assert hand.moves() == [(8.0, 1, 1, 0), (8.0, 4, 2, 0), (8.0, 3, 2, 0)]
    assert hand.counts[:2] == (2, 0)
    assert hand.found == 2


def test_a_balanced_attempt_doubles_the_interval_a_failed_one_adds_a_tick(scenario):
    """CPU 0 (idle) balances {0}|{1}, interval 10 to 1000 ms; CPU 1 runs one task 0-1000. Every
    attempt of CPU 0 finds one task on a one-CPU group (load 128): no imbalance, no gap, no power
    gain, and for an idle CPU the busiest counts only above 128: balanced. Each balanced attempt
    doubles the interval: attempts at 10, 30, 70, 150, 310, 630 (the next, 1270, is after the
    end at 1000): 6, all failed. (Were it a failed pull, the interval would grow by one instead.)"""
    d = dom({0, 1}, [{0}, {1}], interval=(10, 1000))
    out = scenario(one_node(2), [[d], []], [T(0, 1, 1000)])
    assert (out.metrics["lb_attempts"], out.metrics["lb_failed"]) == (6, 6)
    assert (out.metrics["lb_imbalanced"], out.metrics["lb_no_imbalance"]) == (0, 6)


def test_an_overdue_balance_waits_for_the_next_tick(scenario):
    """tick 10 ms. CPU 0 balances {0}|{1} every 20 ms when idle, 100 x 20 ms when busy. It runs
    task 0 (55 ms) from 0; tasks 1 and 2 run on CPU 1. At t=55 CPU 0 goes idle and its idle
    attempt (due at 20) is overdue: it is made at the next tick boundary, t=60, and pulls task 2
    (0 against 256: one task)."""
    d = dom({0, 1}, [{0}, {1}], interval=(20, 20), busy_factor=100)
    out = scenario(one_node(2), [[d], []], [T(0, 0, 55), T(0, 1, 1000), T(0, 1, 1000)], tick=10.0)
    assert out.pulls[0] == (60.0, 2, 1, 0)


@pytest.mark.parametrize("sleeps", [True, False])
def test_an_idle_attempt_due_as_the_cpu_goes_idle_is_made_then(scenario, monkeypatch, sleeps):
    """tick 10 ms. CPU 0 balances {0}|{1}, interval 15 ms (a due time rounds up to a tick: 20 ms
    idle; busy factor 2: 30 ms busy). Task 0 runs 0-50 on CPU 0, task 1 on CPU 1 from 0, task 2
    is created on CPU 1 at t=52.
    t=20: CPU 0 is busy, not due until 30. t=30: one task on each CPU, nothing queued: sure to be
    balanced, the domain sleeps (last balance 30). t=50: CPU 0 goes idle; its idle attempt is due
    at 30 + 20 = 50, now: not overdue, so it is the attempt at 50 (balanced: CPU 1 still has one
    task), and the next is due at 70. t=52: CPU 1 has two tasks, the domain wakes and the attempt
    at 50 is counted: 2 attempts, both failed and certain. t=70: CPU 0 (idle) finds 0 against 256:
    one task, task 2 (queued on CPU 1). (Treated as overdue, the attempt at 50 would be moved to
    the next tick, 60, and the pull made then.) The same with every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    d = dom({0, 1}, [{0}, {1}], interval=(15, 15), busy_factor=2)
    out = scenario(one_node(2), [[d], []], [T(0, 0, 50), T(0, 1, 1000), T(52, 1, 1000)], tick=10.0)
    assert out.counts[-1] == (52.0, 2, 2, 2, 2)
    assert out.pulls[0] == (70.0, 2, 1, 0)


@pytest.mark.parametrize("sleeps", [True, False])
def test_an_overdue_attempt_with_an_interval_below_a_tick_waits_one_tick(scenario, monkeypatch, sleeps):
    """tick 10 ms. CPU 0 balances {0}|{1}, interval 5 ms: shorter than a tick, so it balances
    every tick while idle (every 500 ms busy, busy factor 100). Task 0 runs on CPU 1 from 0;
    task 1 runs 13-37 on CPU 0; task 2 is created on CPU 1 at t=38.
    t=10: CPU 0 idle, CPU 1 runs one task: sure to be balanced, the domain sleeps (last 10).
    t=37: CPU 0 goes idle; its idle attempt, due at 20, is overdue: it is made at the next tick,
    40. t=38: CPU 1 has two tasks: the domain wakes (nothing due yet: 1 attempt so far, failed and
    certain). t=40: CPU 0 finds 0 against 256: one task, task 2. (Counting the overdue attempt
    one interval, 5 ms, before 40 rather than one tick would put it at 50.) The same with every
    attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    d = dom({0, 1}, [{0}, {1}], interval=(5, 5), busy_factor=100)
    out = scenario(one_node(2), [[d], []], [T(0, 1, 1000), T(13, 0, 24), T(38, 1, 1000)], tick=10.0)
    assert out.counts[-1] == (38.0, 2, 1, 1, 1)
    assert out.pulls[0] == (40.0, 2, 1, 0)


@pytest.mark.parametrize("sleeps", [True, False])
def test_an_overdue_attempt_with_an_interval_of_part_ticks_counts_as_a_real_one(scenario, monkeypatch, sleeps):
    """tick 10 ms. CPU 0 balances {0}|{1}, interval 15 ms (idle: due 20 ms after, a whole number
    of ticks; busy factor 2: 30 ms). Task 0 runs 0-55 on CPU 0, task 1 on CPU 1 from 0, task 2 is
    created on CPU 1 at t=62.
    t=30: CPU 0 busy, one task on each CPU: sure to be balanced, the domain sleeps (last 30).
    t=55: CPU 0 goes idle; its idle attempt, due at 50, is overdue: made at the next tick, 60
    (balanced: failed, certain); the next is due at 60 + 20 = 80. t=62: CPU 1 has two tasks:
    the domain wakes and counts the attempt at 60: 2 attempts, 2 failed, 2 certain. t=80: CPU 0
    finds 0 against 256: one task, task 2. The same with every attempt made for real. (Before
    the fix, the sleeping domain put its overdue attempt one 15 ms interval before 60, off the
    tick grid, and its count of whole intervals missed the attempt at 60.)"""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    d = dom({0, 1}, [{0}, {1}], interval=(15, 15), busy_factor=2)
    out = scenario(one_node(2), [[d], []], [T(0, 0, 55), T(0, 1, 1000), T(62, 1, 1000)], tick=10.0)
    assert out.counts[-1] == (62.0, 2, 2, 2, 2)
    assert out.pulls[0] == (80.0, 2, 1, 0)


def test_the_load_average_at_a_tick_boundary_counts_that_tick_for_any_tick_length(scenario):
    """tick 0.1 ms (not exact in binary), 2.6.11 load averages. CPU 0 balances {0}|{1} every
    1 ms; four tasks start on CPU 1 at t=0. CPU 1's cpu_load rises from 0 towards 512, halving the
    gap each tick and rounding up: 256, 384, 448, 480, 496, 504, 508, 510, 511, 512 at tick 10.
    t=1.0 is tick 10 (the timers put the attempt there): source load 512 against 0, average 256,
    imbalance 256: two tasks, the tail of CPU 1's queue, 3 then 2. (Taking 1.0 // 0.1 = 9 as the
    tick would use 511 and move one.)"""
    d = dom({0, 1}, [{0}, {1}], interval=(1.0, 1.0))
    out = scenario(one_node(2), [[d], []], [T(0, 1, 100)] * 4, tick=0.1, load_average="tick")
    assert [p for p in out.pulls if p[0] <= 1.0 + 1e-9] == [(1.0, 3, 1, 0), (1.0, 2, 1, 0)]


def test_a_domain_whose_groups_leave_out_its_cpu_is_refused(scenario):
    """A sched domain is refused, naming it and the CPU, unless the CPU is in one of its groups
    (find_busiest_group measures the CPU's own group against the others)."""
    from simcore.errors import InputError

    d = dom({0, 1, 2}, [{1}, {2}], interval=(50, 50), name="node")
    with pytest.raises(InputError, match=r"sched domain 'node' \(level 0\) of CPU 0: the CPU is in none of its groups"):
        scenario(one_node(3), [[d], [], []], [T(0, 1, 100)])


@pytest.mark.parametrize("sleeps", [True, False])
def test_sleeping_domains_woken_together_fire_in_cpu_order(scenario, monkeypatch, sleeps):
    """18 CPUs of one node; CPUs 9 and 17 balance {2}|{9}|{17} every 100 ms (both first at t=0:
    their stagger puts their first attempts before 0, at the next tick). Task 0 (1000 ms) runs on
    CPU 2 from 10, task 1 (30 ms) joins it at 20, task 2 (1000 ms) at 140.
    t=0: nothing runs: both domains are sure to be balanced and sleep (last balance 0).
    t=20: CPU 2 has two tasks: both wake, next attempts due at 100, armed in CPU order, 9 then 17.
    t=100: CPU 9 first: 0 against 256, average 85, imbalance 85 below a task but a gap of two
    tasks: it pulls task 1 (queued), which runs 100-130; CPU 17 then finds CPU 2 with one task.
    t=140: task 2 queues on CPU 2; the domains that slept wake, armed again in CPU order for 200.
    t=200: CPU 9 first pulls task 2. The same with every attempt made for real, whose timers are
    set in CPU order. (Waking in the order of a hash set, 17 before 9 after the set was emptied
    and refilled, sent task 2 to CPU 17.)"""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    d = dom({2, 9, 17}, [{2}, {9}, {17}], interval=(100, 100))
    domains = [[d] if c in (9, 17) else [] for c in range(18)]
    out = scenario(one_node(18), domains, [T(10, 2, 1000), T(20, 2, 30), T(140, 2, 1000)])
    assert out.pulls[:2] == [(100.0, 1, 2, 9), (200.0, 2, 2, 9)]


# -- timing boundaries: a due tick that coincides with an event ------------------------------------
@pytest.fixture
def event_limit(each_event):
    """``event_limit(n)``: one run may make at most ``n`` events in all, creations included (a CPU
    whose timer re-arms at the instant it fired would otherwise loop for ever at one instant)."""
    def limit(n: int) -> None:
        def counted(system):
            system.events_in_test = getattr(system, "events_in_test", 0) + 1
            if system.events_in_test > n + 1:         # the check after each event, then the final one
                raise RuntimeError(f"the run made more than {n} events")
        each_event(counted)
    return limit


@pytest.mark.parametrize("sleeps", [True, False])
def test_an_interval_far_below_a_tick_balances_once_a_tick(scenario, monkeypatch, event_limit, sleeps):
    """tick 1 ms; CPU 0 balances {0}|{1} with an interval of 1e-12 ms (any positive interval is
    valid): rebalance_tick's interval is at least one tick, so CPU 0 tries once a tick, at 1, 2,
    ..., 10 (its last balance starts at 0, the first attempt is due one tick later). Task 0 runs
    on CPU 1 from 0 to 10: every attempt finds one task on a one-CPU group, balanced (and the
    domain sure to be so): 10 attempts, all failed, none live. The timers fire at most 10 times.
    The same with every attempt made for real. (The run is stopped with an error after 12 events:
    the creation, the task's end and the 10 attempts.)"""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    event_limit(12)
    d = dom({0, 1}, [{0}, {1}], interval=(1e-12, 1e-12))
    out = scenario(one_node(2), [[d], []], [T(0, 1, 10)])
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (10, 10, 0)


@pytest.mark.parametrize("sleeps", [True, False])
def test_an_overdue_attempt_due_at_the_instant_the_run_ends_is_counted(scenario, monkeypatch, sleeps):
    """CPU 0 balances {0}|{1} every 10 ms idle, 100 x 10 = 1000 ms busy; task 0 (55 ms), the only
    one, runs on CPU 0 from 0. t=10: CPU 0 busy, its busy attempt is not due until 1000. t=55:
    task 0 ends, and with it the run; CPU 0 goes idle and its idle attempt (due at 10) is overdue:
    the kernel makes it at the next tick, t=55 itself (a tick boundary), which is the end of the
    run. The model's timer for it is set after the end, so it never fires: the run's close counts
    the attempt (balanced: nothing runs anywhere): 1 attempt, failed, not live. The same with
    every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    d = dom({0, 1}, [{0}, {1}], interval=(10, 10), busy_factor=100)
    out = scenario(one_node(2), [[d], []], [T(0, 0, 55)])
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (1, 1, 0)


@pytest.mark.parametrize("sleeps", [True, False])
def test_an_awake_domain_of_a_cpu_idle_for_part_of_a_tick_keeps_its_busy_attempts(scenario, monkeypatch, sleeps):
    """tick 10 ms, three CPUs; CPU 0 alone balances: low = {0}|{1} every 50 ms (busy factor 1),
    high = {0}|{1,2} every 20 ms idle, 5 x 20 = 100 ms busy. Task 0 (200 ms) runs on CPU 2, task
    1 runs on CPU 0 from 0 to 55, task 2 on CPU 0 from 57 to 137; the run ends at 200.
    high is never sure to be balanced (CPU 2, in its other group of two CPUs, runs a task) and
    each attempt finds it balanced: {1,2} at 128/2 = 64 against CPU 0's 128 (busy) or 0 (idle,
    average 128/3: imbalance 42.7 and gap 64 below one task, no power gain (128 before and
    after), busiest not above 128). low sleeps after its first attempt (nothing runs on CPU 1).
    t=20: busy, nothing due (low 50, high 100). t=50: low tries (busy) and sleeps.
    t=55: CPU 0 idle; high's idle attempt (due 20) is overdue: next tick, 60. t=57: busy again.
    t=60: busy: high's busy attempt is due at 0 + 100 = 100, not now. t=100: high tries (busy).
    t=137: idle: low's busy attempt at 100 is counted; high's idle attempt (due 120) is overdue:
    next tick, 140. high then tries at 140, 160, 180 and, with CPU 2 just emptied, at 200 (sure to
    be balanced: it sleeps); the run's close counts low's idle attempts at 150 and 200.
    Attempts: low 50, 100, 150, 200 (certain failures), high 100, 140, 160, 180 (live), 200
    (certain): 9, all failed, 4 live. (Moving high's last balance to 60 - 20 = 40 as CPU 0 went
    idle at 55 would put its busy attempt at 140 instead of 100: 8 attempts, 3 live.) The same
    with every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    low = dom({0, 1}, [{0}, {1}], interval=(50, 50))
    high = dom({0, 1, 2}, [{0}, {1, 2}], interval=(20, 20), busy_factor=5)
    out = scenario(one_node(3), [[low, high], [], []], [T(0, 2, 200), T(0, 0, 55), T(57, 0, 80)], tick=10.0)
    assert out.pulls == []
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (9, 9, 4)


# At 2e7 ms (5.6 hours) a double's resolution, 3.7e-9 ms, is coarser than the model's 1e-9 ms
# rounding tolerance (t + 1e-9 == t): every comparison of tick times is then exact, and an
# event that falls on a due tick must be ordered right without the tolerance's help.
LATE = 20_000_000.0


def test_an_attempt_due_as_a_sleeping_domain_wakes_late_in_a_run_was_made_before_the_wake(scenario, event_limit):
    """tick 1 ms; CPU 0 alone balances {0}|{1}, every 100 ms (busy factor 1); L = 2e7 ms.
    t=100: CPU 0's first attempt finds nothing running: sure to be balanced, it sleeps.
    L+150: task 0 (10 ms) starts on CPU 0: the sleeping attempts at 200, 300, ..., L+100 are
    counted (L/100 = 200000), last balance L+100. L+160: task 0 ends; nothing is due.
    L+170: task 1 (1000 ms) starts on CPU 1. L+200: task 2 (1000 ms) queues on CPU 1, which wakes
    CPU 0's domain: its attempt due at L+200, now, was made before the wake (balanced: one task on
    CPU 1) and is counted: 200002 attempts, all failed and certain. Next due at L+300.
    L+270: task 1's 100 ms slice ends, it goes to the expired array, task 2 runs.
    L+300: CPU 0 finds 0 against 256: one task, the expired task 1. (Waking without counting the
    attempt at L+200 would make it after task 2's creation and pull task 2 at L+200.)
    CPU 0's timer fires twice only, at 100 and L+300 (after the pull nothing can move: it sleeps)."""
    event_limit(100)
    d = dom({0, 1}, [{0}, {1}], interval=(100, 100))
    out = scenario(one_node(2), [[d], []], [T(LATE + 150, 0, 10), T(LATE + 170, 1, 1000), T(LATE + 200, 1, 1000)])
    assert out.counts[-1] == (LATE + 200, 2, 200002, 200002, 200002)
    assert out.pulls[0] == (LATE + 300, 1, 1, 0)


def test_an_idle_attempt_due_as_the_cpu_turns_busy_late_in_a_run_is_made_idle(scenario):
    """tick 1 ms; CPU 0 alone balances {0}|{1}, every 100 ms idle, 2 x 100 = 200 ms busy; L = 2e7 ms.
    t=100: CPU 0's first attempt finds nothing running: sure to be balanced, it sleeps.
    L+150: task 0 (10 ms) starts on CPU 0: its idle attempts at 200, ..., L+100 are counted
    (200000), last balance L+100. L+160: idle again; nothing due (idle L+200, busy L+300).
    L+200: task 1 (950 ms) starts on CPU 0: the idle attempt due now was made while CPU 0 was
    still idle and is counted: 200002. CPU 0 is busy until L+1150: busy attempts at L+400, 600,
    800, 1000 (counted as it goes idle); its idle attempt (due L+1100) is then overdue: made at
    the next tick, L+1150, the end of the run, and counted by the close. 200007 attempts, all
    failed and certain. (Not counting the idle attempt at L+200 would leave the busy attempts at
    L+300, ..., L+1100 and the next idle one at L+1200, after the end: 200006.)"""
    d = dom({0, 1}, [{0}, {1}], interval=(100, 100), busy_factor=2)
    out = scenario(one_node(2), [[d], []], [T(LATE + 150, 0, 10), T(LATE + 200, 0, 950)])
    assert out.counts[-1] == (LATE + 200, 1, 200002, 200002, 200002)
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (200007, 200007, 0)


@pytest.mark.parametrize("sleeps", [True, False])
def test_a_timer_due_at_the_tick_it_would_be_rearmed_for_keeps_its_place(scenario, monkeypatch, event_limit, sleeps):
    """tick 1 ms; CPU 0 alone balances {0}|{1}, every 10 ms idle, 2000000 x 10 ms = L = 2e7 ms
    busy; timeslices of 1e9 ms (no slice ends). Task 0 (L - 0.5 ms) runs on CPU 0 from 0; task 1
    (L + 1000 ms) on CPU 1 from 20; task 2 (1000 ms) is created on CPU 1 at L (its creation
    scheduled at 20, by task 1's).
    t=10: CPU 0 busy, its attempt not due until L: the timer is set (at 10) for L.
    L-0.5: task 0 ends: CPU 0's idle attempt (due at 10) is overdue, made at the next tick, L, for
    which the timer is already set: it stays, ahead of task 2's creation.
    L: CPU 0 (idle) finds CPU 1 with one task: balanced (imbalance 64, gap 128, no power gain,
    the busiest not above 128), failed, certain. Task 2 then queues on CPU 1 (and wakes the
    sleeping domain: nothing due before L+10).
    L+10: 0 against 256: one task, task 2 (queued), which runs on CPU 0 until L+1010; task 1 ends
    at L+1020. Attempts at L+1010 and L+1020 (the last just before the end) are certain failures:
    4 attempts, 3 failed, 1 live. (Re-arming the timer for L at L-0.5 would put it behind task 2's
    creation and pull task 2 at L.) The same with every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    event_limit(100)
    d = dom({0, 1}, [{0}, {1}], interval=(10, 10), busy_factor=2_000_000)
    out = scenario(one_node(2), [[d], []], [T(0, 0, LATE - 0.5), T(20, 1, LATE + 1000), T(LATE, 1, 1000)],
                   def_timeslice=1e9)
    assert out.pulls == [(LATE + 10, 2, 1, 0)]
    m = out.metrics
    assert (m["lb_attempts"], m["lb_failed"], m["lb_attempts_live"]) == (4, 3, 1)


@pytest.mark.parametrize("sleeps", [True, False])
def test_an_idle_attempt_due_as_the_cpu_goes_idle_is_made_on_its_own_tick(scenario, monkeypatch, sleeps):
    """tick 0.1 ms, which a double does not hold exactly. CPU 0 balances {0}|{1}, interval
    999.85 ms: 9999 ticks (999.9 ms) idle; busy factor 10: 99985 ticks busy. Its idle attempts
    fall at 9999 k ticks; the 2521st, at X = 25207479 ticks = 2520747.9 ms (42 minutes), is the
    double 25207479 * 0.1, and X / 0.1 is 25207479.000000004 in floating point: more than the
    1e-9 tolerance above a whole number of ticks, so rounding X up to a tick boundary (as for an
    overdue attempt) would give the next tick, X + 0.1.
    Task 0 runs on CPU 0 from X - 5 to X; tasks 1 and 2 (1000 ms each, no slice ends) are created
    on CPU 1 at X + 0.05. Every attempt up to X finds nothing or one task on a one-CPU group:
    balanced (the domain sure to be so). At X CPU 0 goes idle just as its idle attempt falls due
    (its last was at X - 999.9, its busy one would be 9998.5 ms later): not overdue, the attempt
    is made at X. At X + 0.05 CPU 1 has two tasks: 2521 attempts so far, all failed and certain;
    the next is due at X + 999.9, when CPU 0 (idle) pulls task 2, the one queued. (Treated as
    overdue, the attempt would be moved to the next tick, X + 0.1, and pull task 2 then.) The same
    with every attempt made for real."""
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    x = 25207479 * 0.1
    assert math.ceil(x / 0.1 - 1e-9) == 25207480   # the premise: X is not a whole number of ticks in doubles
    d = dom({0, 1}, [{0}, {1}], interval=(999.85, 999.85), busy_factor=10)
    out = scenario(one_node(2), [[d], []], [T(x - 5, 0, 5), T(x + 0.05, 1, 1000), T(x + 0.05, 1, 1000)],
                   tick=0.1, def_timeslice=1e9)
    assert out.counts[-1] == (x + 0.05, 2, 2521, 2521, 2521)
    assert out.pulls[0] == (pytest.approx(x + 999.9, abs=1e-6), 2, 1, 0)


def test_a_task_whose_slice_ends_goes_to_the_expired_array(scenario):
    """One CPU. Task 0 (nice 0, 300 ms) runs from 0; task 1 (nice 5, 50 ms) waits; task 2
    (nice -5, 50 ms) is created at t=100, when task 0's slice ends. The slice timer was set at
    t=0, before task 2's creation was scheduled (each creation is scheduled when the one before
    it happens), so it fires first: task 0 goes to the expired array with a new slice, task 1
    starts and task 2 preempts it at once. Task 2 runs 100-150, then task 1 (active, though of
    lower priority) 150-200, then task 0 200-400. Were task 0 put back into the active array, it
    would run before task 1. (A preemption exactly at a slice end:
    test_a_task_preempted_exactly_at_its_slice_end_expires.)"""
    out = scenario(one_node(1), [[]], [T(0, 0, 300), T(0, 0, 50, nice=5), T(100, 0, 50, nice=-5)])
    assert [t.finished for t in out.tasks] == [400.0, 200.0, 150.0]


# -- the scheduler: priorities, I/O, memory -------------------------------------------------------
def test_higher_priority_task_preempts_and_the_preempted_task_resumes_first(scenario):
    """One CPU. Tasks 0 and 1 (nice 0, 100 ms) at t=0; task 2 (nice -5, 50 ms) at t=30 preempts
    task 0, which goes back to the head of its list: task 2 runs 30-80, task 0 80-150 (its
    remaining 70 ms), task 1 150-250."""
    out = scenario(one_node(1), [[]], [T(0, 0, 100), T(0, 0, 100), T(30, 0, 50, nice=-5)])
    assert [t.finished for t in out.tasks] == [150.0, 250.0, 80.0]
    assert runs(out.tasks[0]) == [(0, 0, 30), (0, 80, 150)]


@pytest.mark.parametrize("first, second", [(0, 10), (10, 0)])
def test_timeslices_follow_nice(scenario, first, second):
    """One CPU, two tasks of 200 ms created at t=0: nice 0 (slice 100 ms, priority 120) and nice 10
    (slice 50 ms, priority 130), in either creation order (nice 0 preempts the other at once if
    it comes second). Nice 0 runs 0-100 and expires; nice 10 runs 100-150 and expires; the
    arrays swap; nice 0 runs 150-250 and ends; nice 10 runs 250-300, 300-350, 350-400 and ends."""
    out = scenario(one_node(1), [[]], [T(0, 0, 200, nice=first), T(0, 0, 200, nice=second)])
    finished = {t.spec.nice: t.finished for t in out.tasks}
    assert finished == {0: 250.0, 10: 400.0}


def test_io_wait_wakes_the_task_on_its_cpu_with_the_rest_of_its_slice(scenario):
    """An I/O-bound task (nice 0: slice 100 ms, mean burst 100 ms, mean I/O 1000 ms) on CPU 1 of
    two, with its draws scripted in the order the task makes them (a burst, and on blocking the
    next burst, then the I/O wait): burst 0.3 x 100 = 30 ms (shorter than the slice: ends in
    I/O), next burst 0.9 x 100 = 90 ms (all its remaining demand of 120 - 30), I/O 0.05 x 1000 =
    50 ms.
    It runs 0-30 on CPU 1, waits for I/O 30-80, wakes on CPU 1 (CPU 0 is idle, but nothing pulls
    a waking task) and runs 80-150, when the 70 ms left of its slice are used up; it expires,
    runs again with a new slice 150-170 and ends."""
    draws = {0: np.array([0.3, 0.9, 0.05] + [1.0] * 29)}
    d = dom({0, 1}, [{0}, {1}], interval=(10000, 10000))
    out = scenario(one_node(2), [[d], [d]], [T(0, 1, 120, io=True)], draws=draws)
    task = out.tasks[0]
    assert runs(task) == [(1, 0, 30), (1, 80, 150), (1, 150, 170)]
    assert [s for s in segments(task) if s[0] == "io"] == [("io", -1, 30.0, 80.0)]
    assert task.finished == 170.0


def test_io_wait_as_the_rest_of_the_slice(scenario):
    """The scenario above with io_wait 'rest-of-slice' (mehta's traces: run + IO = 100 ms): the
    draws are a burst of 30 ms and the next of 90 ms; no I/O length is drawn. The task runs 0-30
    on CPU 1 and waits for I/O for the 70 ms left of its slice, 30-100; it wakes with a new
    100 ms slice and runs its last 90 ms at once, 100-190. (Without the refill it would expire at
    170 and end after a second stretch 170-190.)"""
    draws = {0: np.array([0.3, 0.9, 0.05] + [1.0] * 29)}
    d = dom({0, 1}, [{0}, {1}], interval=(10000, 10000))
    out = scenario(one_node(2), [[d], [d]], [T(0, 1, 120, io=True)], draws=draws, io_wait="rest-of-slice")
    task = out.tasks[0]
    assert runs(task) == [(1, 0, 30), (1, 100, 190)]
    assert [s for s in segments(task) if s[0] == "io"] == [("io", -1, 30.0, 100.0)]
    assert task.finished == 190.0


def test_a_task_away_from_home_runs_slower_by_the_memory_factor(scenario):
    """The newly-idle scenario on two nodes at distance 20, memory_stall_fraction 0.5: task 2
    (home node 0) moves to CPU 1 at t=30 and runs its 1000 ms of work 1 + 0.5 x (20/10 - 1) = 1.5
    times slower: it ends at 30 + 1500, having received 1500 ms of CPU time at distance level 1.
    Task 1 stays home and ends at 1000. CPU time at level 1: 1500 of 30 + 1000 + 1500 ms."""
    d = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(200, 200), name="node")
    out = scenario(nodes(2), [[d], [d]], [T(0, 1, 30), T(0, 0, 1000), T(0, 0, 1000)], memory_stall_fraction=0.5)
    assert out.pulls == [(30.0, 2, 0, 1)]
    assert [t.finished for t in out.tasks] == pytest.approx([30.0, 1000.0, 1530.0])
    assert out.tasks[2].level_time == {1: pytest.approx(1500.0)}
    assert out.metrics["share_level_1"] == pytest.approx(1500 / 2530)


@pytest.mark.parametrize("migration_cost, attempt_cost, finished", [
    (0.0, 0.0, [30.0, 1000.0, 1530.0]),
    (10.0, 0.0, [30.0, 1000.0, 1545.0]),
    (0.0, 2.0, [30.0, 1010.0, 1544.0]),
    (10.0, 2.0, [30.0, 1010.0, 1559.0]),
])
def test_migrations_and_busy_attempts_cost_the_task_their_time(scenario, migration_cost, attempt_cost, finished):
    """The scenario above (periodic balancing every 200 ms, busy factor 1; CPU 1's first attempt
    is overdue at t=0, when it is still idle; CPU 0's is due at 200) with balancing costs.
    migration_cost 10: task 2 pulled at t=30 has 1010 ms of work to do on CPU 1, at 1.5: 1515 ms,
    ending at 1545. lb_attempt_cost 2: every periodic attempt of a busy CPU finds the CPUs balanced
    and delays its running task by 2 ms of wall time. CPU 0 runs task 1 through its attempts at
    200, 400, 600, 800 and 1000: 1000 + 5 x 2 = 1010 (the next, at 1200, comes after). CPU 1 runs
    task 2 through 200, 400, ..., 1400 (seven): 1530 + 14 = 1544, or 1545 + 14 = 1559 with both
    costs (1600 comes after either). Task 0 and the attempts of idle CPUs delay no one. The
    overhead per task is the work added: 10 for the migration, 2 per attempt on task 1 (at
    speed 1) and 2/1.5 per attempt on task 2."""
    d = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(200, 200), name="node")
    out = scenario(nodes(2), [[d], [d]], [T(0, 1, 30), T(0, 0, 1000), T(0, 0, 1000)], memory_stall_fraction=0.5,
                   migration_cost=migration_cost, lb_attempt_cost=attempt_cost)
    assert out.pulls == [(30.0, 2, 0, 1)]
    assert [t.finished for t in out.tasks] == pytest.approx(finished)
    work = migration_cost + (5 * attempt_cost + 7 * attempt_cost / 1.5)
    assert out.metrics["overhead_per_task"] == pytest.approx(work / 3)


@pytest.mark.parametrize("attempt_cost, finished", [(0.0, 150.0), (2.0, 152.0)])
def test_a_busy_cpus_attempt_that_pulls_costs_its_running_task_too(scenario, attempt_cost, finished):
    """Two CPUs, {0}|{1} every 100 ms (busy factor 1, periodic balancing only): task 0 (150 ms) on
    CPU 0, tasks 1-3 (150 ms each) on CPU 1, at t=0. t=100: task 0's slice ends (alone, it runs
    on with 50 ms left) and task 1's (expired; task 2 runs); then CPU 0, busy, finds 128 against
    384: one task, the expired task 1, pulled into its expired array (task 0 keeps the CPU). That
    attempt delays task 0 by lb_attempt_cost: it ends at 150 + 2 = 152 (CPU 0's next attempt is
    due at 200)."""
    d = dom({0, 1}, [{0}, {1}], interval=(100, 100))
    out = scenario(one_node(2), [[d], [d]], [T(0, 0, 150)] + [T(0, 1, 150)] * 3, lb_attempt_cost=attempt_cost)
    assert out.pulls[0] == (100.0, 1, 1, 0)
    assert out.tasks[0].finished == pytest.approx(finished)


@pytest.mark.parametrize("cost, finished", [(0.0, 1035.0), (10.0, 1050.0)])
def test_a_task_moved_again_before_its_refill_is_done_owes_one_refill(scenario, cost, finished):
    """One node of three CPUs, newly-idle balancing over {0}|{1}|{2}. t=0: task 2 (1000 ms) queues
    on CPU 0 behind task 1; tasks 0 (30 ms) and 3 (40 ms) run on CPUs 1 and 2. t=30: CPU 1 pulls
    task 2, which owes the refill (migration_cost 10) before its work: 1010 ms. t=35: task 4
    (nice -5) is created on CPU 1 and preempts it after 5 ms (5 of the refill done, 5 owed). t=40:
    CPU 2, idle, pulls task 2: its cache is cold again, and it owes one refill, 10, not 5 + 10:
    1000 + 10 ms of work to do from t=40, ending at 1050 (1055 if refills added up). Free
    migrations: 995 ms from t=40, ending at 1035. Work added: 10 at the first move, 10 - 5 at
    the second, 15 over 5 tasks."""
    d = dom({0, 1, 2}, [{0}, {1}, {2}], flags=(LB, NI), interval=(200, 200))
    tasks = [T(0, 1, 30), T(0, 0, 1000), T(0, 0, 1000), T(0, 2, 40), T(35, 1, 500, nice=-5)]
    out = scenario(one_node(3), [[d], [d], [d]], tasks, migration_cost=cost)
    assert out.pulls == [(30.0, 2, 0, 1), (40.0, 2, 1, 2)]
    assert out.tasks[2].finished == pytest.approx(finished)
    assert out.metrics["overhead_per_task"] == pytest.approx((cost + cost / 2) / 5)


def test_the_migration_diagnostics_count_the_distance_crossed_and_the_returns_home(scenario):
    """Two nodes of one CPU at distance 20 (levels: 10 -> 0, 20 -> 1), newly-idle balancing over
    {0}|{1} (periodic every 200 ms). t=0: tasks 1 (150 ms) and 2 (1000 ms) on CPU 0, task 0
    (30 ms) on CPU 1. t=30: CPU 1 goes idle and pulls task 2 off its home node 0 (level 1). t=50:
    task 3 (1000 ms) is created on CPU 1 and queues behind task 2, whose slice ends at 130: it
    goes to the expired array and task 3 runs. t=150: task 1 ends (a 100 ms slice, then 50 ms
    more alone) and CPU 0, idle, pulls task 2 (expired first) back to its home node. Two
    migrations, each across level 1: mean level 1; one migration of a task off home, which took
    it home: return share 1. The periodic attempts find the two CPUs balanced."""
    d = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(200, 200), name="node")
    out = scenario(nodes(2), [[d], [d]], [T(0, 1, 30), T(0, 0, 150), T(0, 0, 1000), T(50, 1, 1000)])
    assert out.pulls == [(30.0, 2, 0, 1), (150.0, 2, 1, 0)]
    assert [t.finished for t in out.tasks] == pytest.approx([30.0, 150.0, 1050.0, 1130.0])
    m = out.metrics
    assert (m["migrations"], m["mean_migration_level"], m["home_return_share"]) == (2, 1.0, 1.0)
    assert m["lb_attempts_per_s"] == pytest.approx(m["lb_attempts"] / 1.13)


def test_each_pull_counts_its_distance_its_move_off_home_its_return_and_a_wasted_move():
    """Two nodes of one CPU at distance 20 (level 1); tasks 0 and 1, home node 0, queued on CPU 0
    and moved by ``migrate_kernels.pull`` with no run in between: task 0 to CPU 1 and back twice,
    task 1 to CPU 1 and back. Six migrations, each across level 1 (sum 6); the three from CPU 1
    leave a node that is not the task's home, and each takes it home (3 and 3); every move of a
    task that has not run since its last one is wasted: 3 for task 0, 1 for task 1."""
    from numa_script import Hand

    from simcore.models.numa import migrate_kernels as MK

    d = dom({0, 1}, [{0}, {1}])
    hand = Hand(nodes(2), [[d], [d]], tasks=2)
    SI, SF, F, I = hand.state
    hand.queue(0, 0, 1)
    for t, src, dst in ((0, 0, 1), (0, 1, 0), (0, 0, 1), (0, 1, 0), (1, 0, 1), (1, 1, 0)):
        MK.pull(t, src, dst, 0.0, SI, SF, F, I)
    invariants.check(hand.system)
    assert [int(SI[k]) for k in (SL.Y_MIGR, SL.Y_MLEVEL, SL.Y_AWAY, SL.Y_HOMEM, SL.Y_WASTE)] == [6, 6, 3, 3, 4]
    assert list(hand.system.block("O_TI", 2)[:, SL.T_MIGR]) == [4, 2]


def test_a_tasks_time_per_distance_level_keeps_the_order_the_levels_were_first_reached():
    """Three nodes of one CPU in a line (distances 10, 20, 30: levels 0, 1, 2). Task 0 (home node
    0) runs 10 ms on each CPU in turn, moved while stopped (``stop_current``, ``pull``,
    ``schedule``): CPU 0, CPU 2, CPU 1, CPU 0 again. Its time per level is 20, 10 and 10 ms, in
    the order first reached: level 0, level 2, level 1 (the return to level 0 keeps its place)."""
    from numa_script import Hand

    from simcore.models.numa import migrate_kernels as MK
    from simcore.models.numa import scheduler_kernels as SC

    machine = make_machine("test", "line-3", [1, 1, 1], [[10, 20, 30], [20, 10, 20], [30, 20, 10]])
    hand = Hand(machine, [[], [], []], tasks=1)
    SI, SF, F, I = hand.state
    hand.dispatch(0, 0)
    cpu = 0
    for now, dst in ((10.0, 2), (20.0, 1), (30.0, 0), (40.0, None)):
        SC.stop_current(cpu, now, SI, SF)
        if dst is not None:
            MK.pull(0, cpu, dst, now, SI, SF, F, I)
            SC.schedule(dst, now, SI, SF, F, I)
            cpu = dst
    levels = int(SI[SL.Y_LEVELS])
    order = SI[SI[SL.O_LORD]:SI[SL.O_LORD] + levels]
    times = SF[SI[SL.OF_LT]:SI[SL.OF_LT] + levels]
    assert sorted(range(levels), key=lambda lvl: order[lvl]) == [0, 2, 1]
    assert list(times) == [20.0, 10.0, 10.0]


def test_a_migration_refill_owed_is_what_is_left_of_the_last_one_never_less_than_0():
    """migration_cost 10 ms, one node of two CPUs (speed 1). Task 0 runs on CPU 0 and is moved
    while stopped (``stop_current``, ``pull``, ``schedule``) at 5 (it owes the whole refill:
    10), at 14.5 (it has worked 9.5 ms since: it owes 0.5 more, so 9.5 are added) and at 34.5
    (20 ms of work since: nothing owed, 10 added): 29.5 ms of work added in all."""
    from numa_script import Hand

    from simcore.models.numa import migrate_kernels as MK
    from simcore.models.numa import scheduler_kernels as SC

    hand = Hand(2, [[], []], tasks=1, migration_cost=10.0)
    SI, SF, F, I = hand.state
    hand.dispatch(0, 0)
    cpu = 0
    for now in (5.0, 14.5, 34.5):
        SC.stop_current(cpu, now, SI, SF)
        MK.pull(0, cpu, 1 - cpu, now, SI, SF, F, I)
        cpu = 1 - cpu
        SC.schedule(cpu, now, SI, SF, F, I)
    assert SF[SL.Z_OVER] == pytest.approx(29.5)


@pytest.mark.parametrize("scope, finished, waits", [
    ("cpu", 160.0, [(60.0, 70.0)]),
    ("lifetime", 170.0, [(60.0, 70.0), (130.0, 140.0)]),
])
def test_a_burst_far_from_home_is_work_or_wall_time_by_locality_scope(scenario, scope, finished, waits):
    """The newly-idle scenario above with task 2 I/O-bound (nice 0: slice 100 ms, mean burst 100 ms,
    mean I/O 1000 ms) and 80 ms of work; it moves to CPU 1 (slowdown 1.5 for its memory on node 0)
    at t=30 before it ever ran. Its draws, in the order it makes them: 0.2, 0.6, 0.01, 0.9, 0.01.
    Burst 0, drawn at creation (at home speed under both scopes): 20 ms of work, ends in I/O; it
    runs 30-60 (20 x 1.5). At 60 it blocks and draws burst 1 (0.6 x 100 = 60 ms, shorter than the
    slice) and an I/O wait of 10 ms; it wakes on CPU 1 at 70 with 70 ms of its slice left.
    'cpu': burst 1 is 60 ms of work, all 60 ms of demand left: the last. Its 90 ms of wall time
    outlast the slice: 70-140, a new slice, then the 13.33 ms of work left, 140-160. One I/O wait.
    'lifetime': burst 1 is 60 ms of wall time on CPU 1, serving 60 / 1.5 = 40 ms of work (20 left):
    it runs 70-130 and ends in I/O; at 130 burst 2 (0.9 x 100 = 90 ms, 60 ms of work here) is cut
    to the 20 ms left, the last; I/O 10 ms, 130-140. It wakes with 10 ms of slice: 140-150, a new
    slice, and the 13.33 ms of work left, 150-170. Two I/O waits; the same 120 ms of CPU time."""
    d = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(200, 200), name="node")
    draws = {2: np.array([0.2, 0.6, 0.01, 0.9, 0.01] + [1.0] * 27)}
    out = scenario(nodes(2), [[d], [d]], [T(0, 1, 30), T(0, 0, 1000), T(0, 0, 80, io=True)], draws=draws,
                   memory_stall_fraction=0.5, locality_scope=scope)
    assert out.pulls == [(30.0, 2, 0, 1)]
    task = out.tasks[2]
    assert task.finished == pytest.approx(finished)
    assert [(a, b) for kind, _, a, b in segments(task) if kind == "io"] == [pytest.approx(w) for w in waits]
    assert task.level_time == {1: pytest.approx(120.0)}


@pytest.mark.parametrize("home_node, home, stretches", [
    ("start", 1, [(0, 30), (40, 90)]),
    ("creation", 0, [(0, 30), (40, 110), (110, 130)]),
])
def test_a_tasks_memory_is_where_it_starts_or_where_it_was_created(scenario, home_node, home, stretches):
    """The exec machine (two nodes of one CPU, slowdown 1 + 0.5 (20/10 - 1) = 1.5 off home),
    bursts as wall time. Task 0 (CPU-bound) is created on CPU 0 and stays; task 1 (I/O-bound,
    nice 0: slice and mean burst 100 ms, mean I/O 1000 ms, 80 ms of work) is created on CPU 0
    too and exec balancing starts it on the idle CPU 1 (0 x 112 < (128 + 128) x 100). Its draws:
    0.3, 0.9, 0.01 (burst 0; at its block burst 1, then the I/O wait).
    'start' (2.6.11): home node 1, speed 1. Burst 0 is 30 ms, ends in I/O: 0-30; burst 1 (90 ms)
    is cut to the 50 ms left, the last; I/O 30-40; it wakes with 70 ms of slice: 40-90.
    'creation' (corr05 2.2): home node 0, speed 1/1.5 on CPU 1 from its first burst on: burst 0
    is 30 ms of wall time serving 20 ms of work: 0-30; burst 1 (90 ms of wall time, 60 of work)
    is the last; I/O 30-40; 60 ms of work take 90 ms: the 70 ms of slice left (40-110), then a
    new slice, 110-130. (Drawn at home speed, burst 0 would run 0-45.)"""
    machine, domains = exec_machine()
    draws = {1: np.array([0.3, 0.9, 0.01] + [1.0] * 29)}
    out = scenario(machine, domains, [T(0, 0, 1000), T(0, 0, 80, io=True)], draws=draws, placement="exec",
                   memory_stall_fraction=0.5, locality_scope="lifetime", home_node=home_node)
    task = out.tasks[1]
    assert [t.home for t in out.tasks] == [0, home]
    assert runs(task) == [(1, pytest.approx(a), pytest.approx(b)) for a, b in stretches]
    assert [(a, b) for kind, _, a, b in segments(task) if kind == "io"] == [(30.0, 40.0)]


def test_bursts_as_wall_time_need_a_machine_whose_own_distances_are_10():
    """locality_scope 'lifetime' draws a new task's first burst at home speed: on a node whose own
    SLIT distance is 5 it would run at another speed at home, so the run is refused, naming the
    parameter."""
    from simcore.errors import InputError

    machine = near_5()
    params = full_params({"topology": "scripted", "n_tasks": 1, "placement": "parent", "locality_scope": "lifetime"})
    with pytest.raises(InputError, match="locality_scope"):
        simulate(params, [TaskSpec(0, 0.0, 0, 30.0, 0, False, 0)], "linux-2level",
                 Streams(replication_seed(1, "scripted", 0, 0)), machine=machine, domains_for=lambda m, b: [[]])


# -- the run queue on its own: tick numbers, load average, priority arrays ---------------------------
@pytest.mark.parametrize("now, tick, expected", [
    (0.0, 1.0, 0), (0.999, 1.0, 0), (1.0, 1.0, 1), (27.5, 1.0, 27), (0.95, 0.1, 9), (1.0, 0.1, 10)])
def test_a_time_falls_in_the_last_tick_at_or_before_it(now, tick, expected):
    """tick_index numbers the last tick boundary at or before ``now``, the first being tick 0 at
    t=0: with 1 ms ticks 0.999 is still tick 0, 1.0 is tick 1 and 27.5 is tick 27. A boundary that
    is not exact in binary counts too: with 0.1 ms ticks t=1.0 is tick 10 (1.0 // 0.1 would give 9),
    and 0.95 is tick 9. (A run compares only differences of tick numbers, so numbering every tick
    one higher would not show in a run; the numbering itself is what this pins.)"""
    from simcore.models.numa.runqueue_kernels import tick_index

    assert tick_index(now, tick) == expected


def test_the_load_average_of_a_run_queue_follows_its_count_tick_by_tick():
    """One CPU's run queue driven by its kernels (``runqueue_kernels``), 2.6.11 load averages, 1 ms
    ticks; the average is brought up to date before each change of the count, as the scheduler
    does. Each tick cpu_load = (cpu_load [+1 if rising] + 128 x nr_running) // 2.
    t=0: task a queued (nr 1). t=1.0: tick 1 at nr 1: (0 + 1 + 128) // 2 = 64; task b queued (nr 2).
    t=3.5 (tick 3): ticks 2 and 3 at nr 2: (64 + 1 + 256) // 2 = 160, (160 + 1 + 256) // 2 = 208;
    source and target loads are min and max of 208 and 256. t=5.0 (tick 5): (208 + 1 + 256) // 2
    = 232, (232 + 1 + 256) // 2 = 244; then a leaves (nr 1): the loads are now 128 and 244.
    (Skipping the update when a single tick has passed would count tick 1 at nr 2 and give 224
    at t=3.5.)"""
    from numa_script import Hand

    from simcore.models.numa import runqueue_kernels as RQ

    hand = Hand(1, [[]], tasks=2, load_average="tick")
    SI, SF, F, I = hand.state
    row = hand.system.block("O_RI", 1)[0]
    RQ.settle_load(0, 0.0, SI, SF, F, I)
    RQ.enqueue(0, 0, False, False, SI)
    RQ.settle_load(0, 1.0, SI, SF, F, I)
    assert (row[SL.R_AVG], row[SL.R_LTICK]) == (64, 1)
    RQ.enqueue(0, 1, False, False, SI)
    assert RQ.loads(0, 3.5, SI, SF, F, I) == (208, 256)
    RQ.settle_load(0, 5.0, SI, SF, F, I)
    RQ.dequeue(0, 0, SI)
    assert RQ.loads(0, 5.0, SI, SF, F, I) == (128, 244)
    assert (row[SL.R_AVG], row[SL.R_LTICK], RQ.nr_running(0, SI)) == (244, 5, 1)


@pytest.mark.parametrize("at, home", [(10.5, 0), (11.0, 1)])
def test_exec_balancing_sees_a_load_average_one_tick_old(scenario, at, home):
    """2.6.11 load averages, 1 ms ticks, the exec machine (nodes 0 and 1 of one CPU). Task 0 runs
    0-10 on CPU 1 (its cpu_load reaches 128 by tick 8 and is 128 at t=10); task 1 runs on CPU 0
    from 0 (cpu_load 128). Task 2 is created on CPU 0 (busy) at ``at``.
    at=10.5, still tick 10: CPU 1's target load is max(128, 0) = 128, not below CPU 0's 128 (met
    first), so the idlest CPU is the parent itself: task 2 stays on node 0.
    at=11, tick 11: CPU 1's cpu_load has had one tick at nr 0: (128 + 0) // 2 = 64, its target
    load 64 < 128, and 64 x 112 = 7168 < (128 + 128) x 100: task 2 starts on CPU 1 (node 1)."""
    machine, domains = exec_machine()
    out = scenario(machine, domains, [T(0, 1, 10), T(0, 0, 1000), T(at, 0, 1000)], placement="exec",
                   load_average="tick")
    assert [t.home for t in out.tasks] == [1, 0, home]


def test_migration_candidates_come_expired_first_by_priority_tail_first():
    """move_tasks order on a run queue holding, in the active array, a0 and a1 at nice -20
    (priority 100, the first bit of the bitmap), a2 at nice -19 and a3 at nice 0, and in the
    expired array e0 at nice -20 and e1, e2 at nice 0 (queued in that order): the expired array
    first, best priority first, each list from its tail: e0, e2, e1, then a1, a0, a2, a3, all
    seven moved to the idle CPU 1 (``migrate_kernels.move_tasks``, nothing cache-hot)."""
    from numa_script import Hand, set_task

    from simcore.models.numa import migrate_kernels as MK
    from simcore.models.numa import runqueue_kernels as RQ

    d = dom({0, 1}, [{0}, {1}])
    hand = Hand(2, [[d], [d]], tasks=7, trace=True)
    SI, SF, F, I = hand.state
    for t, nice, expired in ((0, -20, False), (1, -20, False), (2, -19, False), (3, 0, False),
                             (4, -20, True), (5, 0, True), (6, 0, True)):
        set_task(hand.system, t, T_PRIO=120 + nice)
        hand._created(t)
        RQ.enqueue(0, t, expired, False, SI)
    assert MK.move_tasks(0, 1, 20, 1 * hand.system.balancer.L, SRK.IDLE, False, 0.0, SI, SF, F, I) == 7
    assert [t for _, t, _, _ in hand.moves()] == [4, 6, 5, 1, 0, 2, 3]


def test_run_queue_lists_stay_linked_both_ways_around_task_0():
    """Task 0 is a task like any other in a run-queue list (ends of lists are -1): on CPU 0, one
    list of nice-0 tasks, each step followed by the invariants' check (lists linked both ways,
    bitmaps, counts) and by the list read from its head:
    queued 1, 0, 2; task 1 pulled to CPU 1 (task 0, its successor, becomes the head): 0, 2;
    task 3 queued at the head (a preempted task), before task 0: 3, 0, 2; task 2 pulled (its
    predecessor is task 0, which becomes the tail): 3, 0; task 4 queued at the tail: 3, 0, 4;
    task 3 pulled: 0, 4; task 4 pulled (task 0, alone, is head and tail): 0; task 0 pulled:
    CPU 0's list is empty, its bit cleared; CPU 1 got 1, 2, 3, 4, 0 in that order."""
    from numa_script import Hand

    from simcore.models.numa import hook_kernels as HK
    from simcore.models.numa import migrate_kernels as MK
    from simcore.models.numa import runqueue_kernels as RQ

    d = dom({0, 1}, [{0}, {1}])
    hand = Hand(2, [[d], [d]], tasks=5)
    SI, SF, F, I = hand.state

    def step(expected0):
        invariants.check(hand.system)
        assert hand.queued(0) == expected0

    hand.queue(0, 1, 0, 2)
    step([1, 0, 2])
    for t, expected in ((1, [0, 2]), (3, [3, 0, 2]), (2, [3, 0]), (4, [3, 0, 4]), (3, [0, 4]), (4, [0]), (0, [])):
        if t in hand.queued(0):
            MK.pull(t, 0, 1, 0.0, SI, SF, F, I)
        elif t == 3:
            hand._created(3)
            RQ.enqueue(0, 3, False, True, SI)
            HK.nr_changed(0, 0.0, SI, SF, F, I)
        else:
            hand.queue(0, t)
        step(expected)
    assert hand.queued(1) == [1, 2, 3, 4, 0]
    assert hand.system.block("O_RI", 2)[0, SL.R_BMA] == 0


def test_a_draw_or_a_look_ahead_past_the_counted_draws_is_an_error():
    """A task whose run would take more draws than counted for it raises instead of reading
    another task's draws (``system._draws`` counts exactly: these states are made by hand): an
    I/O-bound task with one draw left takes it, then the next burst raises; a look-ahead whose
    burst ends (the run factor's sign) with demand left and no draw left raises the same way."""
    from numa_script import bare_buffers

    from simcore.models.numa import run_kernels as RK
    from simcore.models.numa import task_kernels as TK

    SI, SF = bare_buffers(1, 1, 1, 1, 1, 2)
    tb, fb, rf = SI[SL.O_TI], SI[SL.OF_TF], SI[SL.OF_RF]
    SI[tb + SL.T_IOBOUND], SI[tb + SL.T_DI], SI[tb + SL.T_DEND] = 1, 1, 2
    SF[fb + SL.F_DEMAND], SF[fb + SL.F_SCALE], SF[fb + SL.F_SLICE] = 1000.0, 1.0, 100.0
    TK.next_burst(0, SI, SF)
    with pytest.raises(IndexError, match=r"^numa compiled system: a task drew more than its counted draws$"):
        TK.next_burst(0, SI, SF)
    SF[rf + SL.RF_FACTOR], SF[rf + SL.RF_SEGEND], SI[tb + SL.T_IO] = -1.0, 10.0, 0
    with pytest.raises(IndexError, match=r"^numa compiled system: a look-ahead went past a task's counted draws$"):
        RK.look_ahead(0, 0, SI, SF)


def test_a_nice_minus_20_task_expires_after_800_ms_and_runs_again_after_the_swap(scenario):
    """One CPU. Task 0 (nice -20: priority 100, slice 4 x 100 x 40 / 20 = 800 ms, 1000 ms of
    work) and task 1 (nice -19: priority 101, 100 ms) at t=0; task 0 runs first. At 800 its slice
    is used up: it goes to the expired array; task 1, still active, runs 800-900 and ends. The
    active array is then empty: the arrays swap, and task 0 (no longer expired) runs its last
    200 ms, 900-1100."""
    out = scenario(one_node(1), [[]], [T(0, 0, 1000, nice=-20), T(0, 0, 100, nice=-19)])
    assert [t.finished for t in out.tasks] == [1100.0, 900.0]
    assert runs(out.tasks[0]) == [(0, 0, 800), (0, 900, 1100)]


# -- the task's own draws: mean burst, draw order across batches, rest-of-slice waits, traces -------
def test_the_mean_burst_grows_by_burst_nice_ms_per_nice_level(scenario):
    """One CPU, an I/O-bound task at nice 10 with 50 ms of work and burst_nice_ms 3: slice
    100 x (20 - 10) / 20 = 50 ms, mean burst 50 + 3 x 10 = 80 ms (model docs: timeslice +
    burst_nice_ms x nice). Draws in the task's order: burst 0.25 x 80 = 20 ms (shorter than the
    slice: ends in I/O); on blocking the next burst min(0.5 x 80, 50) = 40 >= the 30 ms left, so
    30 ms, the last; I/O 0.05 x 1000 = 50 ms. It runs 0-20, waits for I/O 20-70, and runs its last
    30 ms with the 30 ms left of its slice, 70-100. (A mean burst of 50 + 10 / 3 would give a
    first burst of 13.3 ms.)"""
    draws = {0: np.array([0.25, 0.5, 0.05] + [1.0] * 29)}
    out = scenario(one_node(1), [[]], [T(0, 0, 50, nice=10, io=True)], draws=draws, burst_nice_ms=3.0)
    task = out.tasks[0]
    assert runs(task) == [(0, 0, 20), (0, 70, 100)]
    assert [s for s in segments(task) if s[0] == "io"] == [("io", -1, 20.0, 70.0)]
    assert task.finished == 100.0
    assert task.mean_burst == 80.0


def test_io_waits_read_the_tasks_draws_in_order(scenario):
    """One CPU, an I/O-bound nice-0 task (slice 100 ms, mean burst 100 ms, mean I/O 1000 ms) with
    330 ms of work. Its draws, in the order it makes them (a burst at creation, then on each
    blocking the next burst and the I/O wait), are draw 0 = burst 0, draw 2k - 1 = burst k, draw
    2k = I/O wait k: burst k is always 0.1 (10 ms, ends in I/O), I/O wait k is 0.01 (10 ms)
    except wait 16 (draw 32: 0.03, 30 ms) and wait 32 (draw 64: 0.05, 50 ms). Bursts 0-32 serve
    33 x 10 = 330 ms: burst 32 is the last (no I/O after it), so there are 32 waits: 15 of 10 ms,
    30, 15 of 10 ms, 50. The task is alone, so it runs each burst at once (a slice used up after
    ten bursts is refilled as it blocks) and ends at 330 + 15 x 10 + 30 + 15 x 10 + 50 = 710. (A
    wait read by the burst's draw, or a draw skipped, moves the 30 and the 50.)"""
    burst, io = 0.1, 0.01
    draws = {0: np.array([burst] + [burst, io] * 15 + [burst]
                         + [0.03] + [burst, io] * 15 + [burst]
                         + [0.05] + [1.0] * 31)}
    out = scenario(one_node(1), [[]], [T(0, 0, 330, io=True)], draws=draws)
    task = out.tasks[0]
    waits = [b - a for kind, _, a, b in segments(task) if kind == "io"]
    assert waits == pytest.approx([10.0] * 15 + [30.0] + [10.0] * 15 + [50.0])
    assert len(runs(task)) == 33
    assert task.finished == pytest.approx(710.0)


def test_a_rest_of_slice_wait_can_be_shorter_than_a_millisecond(scenario):
    """One CPU, io_wait 'rest-of-slice', an I/O-bound nice-0 task (slice 100 ms, mean burst
    100 ms) with 149.5 ms of work. Burst 0.995 x 100 = 99.5 ms (shorter than the slice: ends in
    I/O); on blocking the next burst min(0.5 x 100, 100) = 50 >= the 50 ms left: the last. The I/O
    wait is what is left of the slice, 100 - 99.5 = 0.5 ms (no floor but 0): it runs 0-99.5,
    waits 99.5-100, wakes with a new slice and runs 100-150."""
    draws = {0: np.array([0.995, 0.5] + [1.0] * 30)}
    out = scenario(one_node(1), [[]], [T(0, 0, 149.5, io=True)], draws=draws, io_wait="rest-of-slice")
    task = out.tasks[0]
    assert [s for s in segments(task) if s[0] == "io"] == [("io", -1, 99.5, 100.0)]
    assert runs(task) == [(0, 0, 99.5), (0, 100, 150)]
    assert task.finished == 150.0


def test_a_task_keeps_a_trace_only_when_asked():
    """A task built without ``trace`` (or with trace=False) keeps no trace (None), one built with
    trace=True starts with an empty one; a run without trace returns tasks without traces (the
    Result's tasks carry traces only if asked). One CPU, one CPU-bound task of 30 ms: it ends at 30."""
    from simcore.models.numa.task import Task

    params = full_params({"topology": "scripted", "n_tasks": 1, "placement": "parent", "load_average": "instant",
                          "check_invariants": True})
    spec = TaskSpec(0, 0.0, 0, 30.0, 0, False, 0)
    assert Task(spec, params).trace is None
    assert Task(spec, params, trace=False).trace is None
    assert Task(spec, params, trace=True).trace == []
    res = simulate(params, [spec], "linux-2level", Streams(replication_seed(1, "scripted", 0, 0)),
                   machine=one_node(1), domains_for=lambda m, builder: [[]])
    assert res.tasks[0].trace is None
    assert res.tasks[0].finished == 30.0


# -- the scheduler's surviving mutants: preemption threshold, expiry on preemption, EPS, memory factor --
def test_only_a_strictly_higher_priority_preempts(scenario):
    """One CPU. Task 0 (nice 0: priority 120, slice 100 ms; 200 ms) runs from t=0. Task 1 (nice 0,
    50 ms) arrives at t=10 and task 2 (nice 5: priority 125, slice 75 ms; 50 ms) at t=20: neither
    is better than 120, so task 0 runs on and its trace has no break. Task 3 (nice -1: priority
    119, one better; 50 ms) arrives at t=30 and preempts it: task 3 runs 30-80; task 0 resumes
    first (head of its list) with the 70 ms left of its slice, 80-150, and expires; tasks 1 and 2,
    still active, run 150-200 and 200-250; the arrays swap and task 0 runs its last 100 ms,
    250-350. Task 0's trace: the 0-length wait of its first dispatch, run 0-30, wait 30-80, run
    80-150, wait 150-250, run 250-350 (a preemption by an equal or lower priority would split the
    run at 10 or 20 with a 0-length wait, the preempted task being picked again at once)."""
    out = scenario(one_node(1), [[]], [T(0, 0, 200), T(10, 0, 50), T(20, 0, 50, nice=5), T(30, 0, 50, nice=-1)])
    assert [t.finished for t in out.tasks] == [350.0, 200.0, 250.0, 80.0]
    assert segments(out.tasks[0]) == [("wait", 0, 0.0, 0.0), ("run", 0, 0.0, 30.0), ("wait", 0, 30.0, 80.0),
                                      ("run", 0, 80.0, 150.0), ("wait", 0, 150.0, 250.0), ("run", 0, 250.0, 350.0)]


def test_a_busy_cpu_that_pulls_an_expired_task_keeps_running_its_own(scenario):
    """Two CPUs; CPU 0 alone balances, {0}|{1} every 150 ms (busy factor 1: first at t=150). Task
    0 (1000 ms) runs on CPU 0; tasks 1-3 (1000 ms) on CPU 1, where task 1 runs 0-100 and expires,
    task 2 runs from 100, task 3 waits. Task 0, alone, runs 0-100 and again from 100 with a new
    slice. t=150: loads 128 and 384, imbalance min(384 x 2 - 512, 512 - 128 x 2) / 256 = 1 task;
    the expired array comes first: task 1 moves to CPU 0's expired array. CPU 0's active array is
    empty, so nothing there beats task 0, which runs on to the end of its slice at 200 (no split
    at 150); then the arrays swap and task 1, queued first, runs 200-300."""
    d = dom({0, 1}, [{0}, {1}], interval=(150, 150))
    out = scenario(one_node(2), [[d], []], [T(0, 0, 1000)] + [T(0, 1, 1000)] * 3)
    assert [p for p in out.pulls if p[0] <= 200] == [(150.0, 1, 1, 0)]
    assert runs(out.tasks[0])[:2] == [(0, 0, 100), (0, 100, 200)]
    assert runs(out.tasks[1])[:2] == [(1, 0, 100), (0, 200, 300)]


def test_a_slice_that_ends_at_the_instant_of_a_creation_ends_first(scenario):
    """One CPU. Task 0 (10 ms) runs 0-10; task 1 (nice 0, 300 ms) arrives at t=5 and task 2 (nice
    5, 50 ms) at t=6; task 3 (nice -5, 50 ms) at t=110. Task 1 (priority 120 before task 2's 125)
    runs 10-110. At t=110 its slice ends before task 3's creation (ends of slices come first at
    an instant): task 1 gets a new slice in the expired array and task 2 starts; task 3 then
    preempts task 2, which goes back to the head of the active array. Task 3 runs 110-160; task 2
    160-210; the arrays swap; task 1 runs its last 200 ms, 210-310 (expires) and 310-410. Had the
    creation come first, task 1 would have been preempted with no slice left and expired all the
    same; put back into the active array instead, it would run 160-260 before task 2 (260-310)."""
    out = scenario(one_node(1), [[]], [T(0, 0, 10), T(5, 0, 300), T(6, 0, 50, nice=5), T(110, 0, 50, nice=-5)])
    assert [t.finished for t in out.tasks] == [10.0, 410.0, 210.0, 160.0]
    assert runs(out.tasks[1]) == [(0, 10, 110), (0, 210, 310), (0, 310, 410)]


def test_a_burst_longer_than_the_slice_by_eps_ends_in_it(scenario):
    """One CPU; task 0 (nice 0, slice 100 ms) with D = 100 + 1e-9 ms of work and task 1 (50 ms),
    both at t=0. The burst exceeds what is left of the slice by EPS = 1e-9 ms exactly (in floats
    D == 100 + EPS), which the scheduler takes for rounding: the burst ends in this run (no 1e-9 ms
    leftover), task 0 runs 0-D and ends, task 1 runs D to D + 50. Cut at the slice end, task 0
    would expire with 1e-9 ms to go, task 1 would run 100-150 and task 0 end just after 150."""
    demand = 100.0 + 1e-9
    out = scenario(one_node(1), [[]], [T(0, 0, demand), T(0, 0, 50)])
    assert [t.finished for t in out.tasks] == [demand, demand + 50.0]
    assert runs(out.tasks[0]) == [(0, 0, demand)]


def test_a_burst_that_leaves_under_a_millisecond_of_demand_is_not_the_last(scenario):
    """One CPU, an I/O-bound nice-0 task (slice 100 ms, mean burst 100 ms, mean I/O 1000 ms) with
    30.5 ms of work. Draws in the task's order: burst 0.3 x 100 = 30 ms (ends in I/O), leaving
    0.5 ms; on blocking the next burst min(90, 100) >= 0.5, so 0.5 ms, the last; I/O 0.05 x 1000 =
    50 ms. It runs 0-30, waits for I/O 30-80 and runs its last 0.5 ms 80-80.5: the task is done
    only once all its demand is served, not when less than a millisecond is left."""
    draws = {0: np.array([0.3, 0.9, 0.05] + [1.0] * 29)}
    out = scenario(one_node(1), [[]], [T(0, 0, 30.5, io=True)], draws=draws)
    task = out.tasks[0]
    assert runs(task) == [(0, 0, 30), (0, 80, 80.5)]
    assert [s for s in segments(task) if s[0] == "io"] == [("io", -1, 30.0, 80.0)]
    assert task.finished == 80.5


def test_a_node_nearer_than_slit_10_runs_faster_across_a_slice_end(scenario, each_event):
    """One node whose own SLIT distance is 5 (allowed: the own distance need only be below every
    remote one), memory_stall_fraction 0.5: a task at home runs at 1 + 0.5 x (5/10 - 1) = 0.75 ms
    of wall time per ms of work. Task 0 (nice 0, slice 100 ms, 150 ms of work = 112.5 ms of wall
    time) runs 0-100, when its slice ends after 100 / 0.75 = 133.33 ms of work; alone, it runs the
    16.67 ms left (12.5 ms of wall time) at once, 100-112.5, and ends. It received 112.5 ms of CPU
    time, all at distance level 0. (The run is stopped with an error if it goes past t=1000.)"""
    def guarded(system):
        assert system.now < 1000.0, "the task should have ended at t=112.5"

    each_event(guarded)
    machine = near_5()
    out = scenario(machine, [[]], [T(0, 0, 150)], memory_stall_fraction=0.5)
    task = out.tasks[0]
    assert runs(task) == [(0, 0, 100), (0, 100, 112.5)]
    assert task.finished == pytest.approx(112.5)
    assert task.cpu_time == pytest.approx(112.5)
    assert task.level_time == {0: pytest.approx(112.5)}


def test_every_migration_of_a_task_that_has_not_run_since_its_last_one_is_wasted(scenario, each_event):
    """Three CPUs; CPU 1 balances {1}|{2} every 30 ms (first at t=0, before any task: then at 30),
    CPU 0 balances {0}|{1} every 40 ms (first at t=40); CPU 2 does not balance. At t=1: task 0 runs
    on CPU 1; task 1 runs on CPU 2 with tasks 2-7 queued (1000 ms each).
    t=30: CPU 1 (128) against CPU 2 (896): average 512, imbalance min(384, 384) / 128 = 3 tasks,
    the tail of CPU 2's queue: 7, 6, 5 go to CPU 1, busy with task 0, and wait there (not wasted:
    their first migration).
    t=40: CPU 0 (idle, 0) against CPU 1 (512): imbalance min(256, 256) / 128 = 2 tasks, the tail
    of CPU 1's queue [7, 6, 5]: 5 and 6, both moved again before they ran: 2 wasted migrations
    (migrations and wasted ones after the event at 30: 3 and 0; after the one at 40: 5 and 2)."""
    counters = []
    each_event(lambda system: counters.append((system.now, int(system.SI[SL.Y_MIGR]), int(system.SI[SL.Y_WASTE]))))
    d0 = dom({0, 1}, [{0}, {1}], interval=(40, 40))
    d1 = dom({1, 2}, [{1}, {2}], interval=(30, 30))
    out = scenario(one_node(3), [[d0], [d1], []], [T(1, 1, 1000)] + [T(1, 2, 1000)] * 7)
    assert out.pulls[:5] == [(30.0, 7, 2, 1), (30.0, 6, 2, 1), (30.0, 5, 2, 1), (40.0, 5, 1, 0), (40.0, 6, 1, 0)]
    changes = [c for before, c in zip([(0.0, 0, 0)] + counters, counters) if c[1:] != before[1:]]
    assert changes[:2] == [(30.0, 3, 0), (40.0, 5, 2)]


def test_a_task_placed_away_from_its_parent_shows_its_parents_cpu_first(scenario):
    """The exec-balancing scenario (placement 'exec'): task 3, created on CPU 0 (two tasks there),
    starts on CPU 1, where task 0 runs. Its trace opens with a 0-length wait on its parent's CPU 0
    (before placement), then waits on CPU 1 until task 0's slice ends at 100 and runs 100-200.
    Task 2 stays on its parent's CPU 0 and its trace opens with its wait there, 0-100 (behind
    task 1), with no 0-length wait before it."""
    from simcore.models.numa.trace import format_trace

    machine, domains = exec_machine()
    out = scenario(machine, domains, EXEC_TASKS, placement="exec")
    assert segments(out.tasks[3])[:3] == [("wait", 0, 0.0, 0.0), ("wait", 1, 0.0, 100.0), ("run", 1, 100.0, 200.0)]
    assert segments(out.tasks[2])[0] == ("wait", 0, 0.0, 100.0)
    assert format_trace(out.tasks[3]).startswith("P0.wait(0) - P1.wait(100) - P1.run(100)")


def test_a_task_preempted_with_exactly_eps_of_its_slice_left_expires(scenario):
    """A slice left of at most EPS = 1e-9 ms counts as used up (rounding), EPS itself included.
    It takes timeslices of EPS to leave exactly EPS: def_timeslice = min_timeslice = 1e-9 ms, so a
    nice-0 slice is 1e-9 ms and a nice -1 one 4.2e-9 ms. One CPU, all at t=0: task 0 (nice 0,
    3e-9 ms) starts a slice-long run; task 1 (nice 0, 1e-9 ms) waits; task 2 (nice -1, 1e-9 ms)
    preempts task 0 at once, with 1e-9 - 0 = EPS of its slice left: task 0 goes to the expired
    array with a new slice. Task 2 runs to 1e-9 and ends; task 1 (active) runs to 2e-9 and ends;
    the arrays swap and task 0 runs 2e-9 to 3e-9 (its slice) and then its last 2e-9 ms (no more
    than the 1e-9 left of its new slice + EPS: the burst ends), ending at 5e-9. Had task 0 gone
    back to the head of the active array, it would have run at 1e-9, before task 1 (ending at
    3e-9)."""
    out = scenario(one_node(1), [[]], [T(0, 0, 3e-9), T(0, 0, 1e-9), T(0, 0, 1e-9, nice=-1)],
                   def_timeslice=1e-9, min_timeslice=1e-9)
    assert out.tasks[0].slice == 1e-9
    assert [t.finished for t in out.tasks] == pytest.approx([5e-9, 2e-9, 1e-9], rel=1e-9, abs=0)


def test_a_preempted_task_with_eps_of_its_slice_left_waits_behind_lower_priorities(scenario):
    """As above (slices of 1e-9 ms, so EPS is a whole slice's rounding), but task 1 has nice 5
    (priority 125, slice 1e-9 ms): task 2 (nice -1) preempts task 0 at t=0 with EPS of its slice
    left, so task 0 expires. Task 2 runs to 1e-9; task 1, the only active task, to 2e-9; the
    arrays swap and task 0 runs 2e-9-3e-9 (its slice) and its last 2e-9 ms, to 5e-9. Put at the
    tail of the active array instead, task 0 (priority 120) would run before task 1, whose end
    would move to 3e-9."""
    out = scenario(one_node(1), [[]], [T(0, 0, 3e-9), T(0, 0, 1e-9, nice=5), T(0, 0, 1e-9, nice=-1)],
                   def_timeslice=1e-9, min_timeslice=1e-9)
    assert out.tasks[1].slice == 1e-9
    assert [t.finished for t in out.tasks] == pytest.approx([5e-9, 2e-9, 1e-9], rel=1e-9, abs=0)


# -- the run timer of a task alone on its CPU (scheduler._look_ahead) --------------------------------
def test_a_task_alone_is_woken_only_where_something_is_decided(scenario):
    """One CPU, no balancing. Task 0 (350 ms) runs alone: its slices end at 100, 200 and 300 with
    nobody waiting, so it keeps the CPU, and it ends at 350. Its timer is set at once for 350:
    two events in all (its creation and its end) instead of five, with the same trace."""
    out = scenario(one_node(1), [[]], [T(0, 0, 350)])
    assert out.tasks[0].finished == 350.0
    assert runs(out.tasks[0]) == [(0, 0, 100), (0, 100, 200), (0, 200, 300), (0, 300, 350)]
    assert out.metrics["events"] == 2


@pytest.mark.parametrize("demand", [7000.0, 6600.0])
def test_a_lone_task_looks_at_most_64_ends_ahead(scenario, demand):
    """Task 0 (7000 ms) alone: 70 slice ends. Its first timer is set 64 ends ahead, at the 65th
    (6500); from there the next one at its end, 7000: three events (creation, 6500, 7000). With
    6600 ms, 66 ends: the same three events (creation, 6500, 6600); a look-ahead of 65 ends would
    reach the 66th at once."""
    out = scenario(one_node(1), [[]], [T(0, 0, demand)])
    assert out.tasks[0].finished == demand
    assert out.metrics["events"] == 3


@pytest.mark.parametrize("machine, params", [
    (near_5, {"memory_stall_fraction": 0.5}),
    (lambda: nodes(2), {"memory_stall_fraction": 0.5, "locality_scope": "lifetime", "io_wait": "rest-of-slice"}),
], ids=["near-node", "remote-lifetime"])
def test_a_lone_io_bound_task_looks_ahead_through_its_bursts_at_its_cpus_speed(scenario, machine, params):
    """An I/O-bound task alone on a CPU whose memory speed is not 1 (a node nearer than SLIT 10:
    0.75 ms of wall time per ms of work; or, on two nodes at distance 20, the task pulled to the
    remote node at 1.5, its bursts drawn as wall time there under locality_scope 'lifetime'):
    its timer looks ahead through bursts, slices and I/O waits with the speed and the scale of
    its bursts, and the run equals the run with an event at every end (the scenario harness
    compares them). The remote case: tasks 0 and 1 (I/O-bound) start on CPU 0, CPU 1 is newly
    idle from the start and pulls one of them."""
    m = machine()
    if m.cpus == 1:
        domains, tasks = [[]], [T(0, 0, 400, io=True)]
    else:
        d = dom({0, 1}, [{0}, {1}], flags=(LB, NI), interval=(10000, 10000), name="node")
        domains, tasks = [[d], [d]], [T(0, 0, 400), T(0, 0, 400, io=True), T(0, 1, 1)]
    out = scenario(m, domains, tasks, **params)
    assert all(t.finished > 0 for t in out.tasks)


def test_a_task_created_beside_a_lone_one_waits_for_the_slice_end(scenario):
    """One CPU. Task 0 (350 ms) starts alone at 0, its timer set for 350; task 1 (100 ms) is
    created at 150: the end at 100 is replayed, and task 0's timer goes back to its slice end at
    200, where it expires and task 1 runs 200-300; then task 0 runs 300-400 and 400-450. Events:
    two creations, the ends at 200 and 300, and 450 (400 passes alone): five."""
    out = scenario(one_node(1), [[]], [T(0, 0, 350), T(150, 0, 100)])
    assert [t.finished for t in out.tasks] == [450.0, 300.0]
    assert runs(out.tasks[0]) == [(0, 0, 100), (0, 100, 200), (0, 300, 400), (0, 400, 450)]
    assert out.metrics["events"] == 5


def test_a_task_pulled_beside_a_lone_one_waits_for_the_slice_end(scenario):
    """CPU 1 balances {0}|{1} every 150 ms (its first attempt, at 0, finds nothing and sleeps;
    the second task on CPU 0 wakes it, due at 150). Task 0 (350 ms) runs alone on CPU 1; tasks
    1-3 (1000 ms) share CPU 0, where task 1 expires at 100 and task 2 runs. t=150: 384 against
    128, one task: CPU 1 pulls the expired task 1; task 0's end at 100 is replayed and its timer
    goes back to 200. Then CPU 1 alternates: task 1 200-300, task 0 300-400, task 1 400-500, task
    0 500-550, its end (the attempts at 300 and 450 find 256 against 256)."""
    d = dom({0, 1}, [{0}, {1}], interval=(150, 150))
    out = scenario(one_node(2), [[], [d]], [T(0, 1, 350)] + [T(0, 0, 1000)] * 3)
    assert [p for p in out.pulls if p[0] < 550] == [(150.0, 1, 0, 1)]
    assert runs(out.tasks[0]) == [(1, 0, 100), (1, 100, 200), (1, 300, 400), (1, 500, 550)]
    assert out.tasks[0].finished == 550.0


def test_a_task_created_at_the_instant_of_a_lone_tasks_slice_end_comes_after_it(scenario):
    """One CPU. Task 0 (350 ms) alone; task 1 (100 ms) is created at 100, the instant task 0's
    first slice ends. The end comes first: nobody waits yet, so task 0 gets a new slice and keeps
    the CPU (100-200); task 1 runs 200-300, task 0 300-400 and 400-450."""
    out = scenario(one_node(1), [[]], [T(0, 0, 350), T(100, 0, 100)])
    assert [t.finished for t in out.tasks] == [450.0, 300.0]
    assert runs(out.tasks[1]) == [(0, 200, 300)]


def test_a_slice_that_ends_in_the_middle_of_a_pending_burst_is_replayed_as_a_slice_end(scenario):
    """The near-5 node of the test above (work runs at 0.75 ms of wall time per ms), one I/O-bound
    nice-0 task with 300 ms of work, alone; its draws: bursts 1.0, 1.0 and 0.1 of the 100 ms mean,
    then (on blocking) 1.0 and an I/O wait of 0.02 x 1000 ms. Burst 0: 100 ms of work (a slice's
    worth: no I/O), 0-75. Burst 1: 100 ms of work from 75; the slice ends at 100 after 33.3 ms of
    it, and the task, alone, goes on with a new slice: the rest, 66.7 ms, runs 100-150. Burst 2:
    10 ms, 150-157.5, ends in I/O. Burst 3 is cut to the 90 ms left; the task wakes at 177.5 with
    42.5 ms of its slice, which ends at 220; its last 33.3 ms run 220-245. The ends at 75, 100 and
    150 pass while the task is alone: its timer is set for 157.5 and they are replayed there, the
    one at 100 as the end of a slice (a burst's end would draw burst 2 too early)."""
    draws = {0: np.array([1.0, 1.0, 0.1, 1.0, 0.02] + [1.0] * 27)}
    machine = near_5()
    out = scenario(machine, [[]], [T(0, 0, 300, io=True)], draws=draws, memory_stall_fraction=0.5)
    task = out.tasks[0]
    assert [s for s in segments(task) if s[0] == "io"] == [("io", -1, pytest.approx(157.5), pytest.approx(177.5))]
    assert task.finished == pytest.approx(245.0)


# -- sleeping domains: an economy that changes nothing ------------------------------------------------
def two_level_domains(busy_factor: int = 2) -> list:
    """Each CPU balances its node ({c}|{c'}, every 8 to 64 ms) and both nodes ({0,1}|{2,3}, every
    16 to 128 ms), periodically and when newly idle; new tasks look for the idlest node."""
    nodes_ = [dom(s, [{c} for c in s], flags=(LB, NI), interval=(8, 64), busy_factor=busy_factor)
              for s in ({0, 1}, {2, 3})]
    top = dom(range(4), [{0, 1}, {2, 3}], flags=(LB, NI, EX), interval=(16, 128), busy_factor=busy_factor,
              name="node")
    return [[nodes_[c // 2], top] for c in range(4)]


SLEEPY_TASKS = [T(0, 0, 300), T(40, 3, 500, io=True), T(45, 3, 200), T(300, 1, 400, nice=5), T(310, 1, 250, io=True),
                T(700, 2, 600), T(705, 2, 100, io=True), T(1500, 0, 300), T(1510, 3, 300)]


@pytest.mark.parametrize("params", [
    {},
    {"load_average": "tick", "cache_hot_time_cpu": 5.0, "cache_hot_time_node": 20.0},
    {"active_balance": False, "tick": 0.5, "cache_hot_time_cpu": 3.0, "idle_ignores_cache_hot": False},
    {"placement": "exec"},
], ids=["instant", "tick-loads-hot", "half-ms-ticks-no-push", "exec"])
def test_sleeping_domains_change_nothing_but_the_event_count(scenario, monkeypatch, params):
    """A domain sure to be balanced sleeps, and the attempts it would have made are counted when
    it wakes, when its CPU changes state or when the run ends (``Balancer.sleeps``): an economy,
    so on two nodes of two CPUs balancing at both levels, tasks created on every CPU at different
    times, some waiting for I/O, long quiet stretches between them, the run equals the run with
    every attempt made in every task's trace and end, every pull and every metric but the event
    count (the attempts among them; in mid-run a sleeping domain's are not counted yet); and the
    stretches were long enough for domains to sleep (fewer events)."""
    runs_ = {}
    for sleeps in (False, True):
        monkeypatch.setattr(Balancer, "sleeps", sleeps)
        runs_[sleeps] = scenario(
            make_machine("test", "2x2", [2, 2], [[10, 20], [20, 10]]), two_level_domains(), SLEEPY_TASKS, **params
        )
    real, asleep = runs_[False], runs_[True]
    assert [(t.finished, t.trace) for t in asleep.tasks] == [(t.finished, t.trace) for t in real.tasks]
    assert asleep.pulls == real.pulls
    assert {k: v for k, v in asleep.metrics.items() if k != "events"} == \
        {k: v for k, v in real.metrics.items() if k != "events"}
    assert asleep.metrics["events"] < real.metrics["events"]
    assert real.metrics["lb_attempts"] > real.metrics["lb_attempts_live"] > 0
