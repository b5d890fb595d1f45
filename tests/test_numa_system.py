"""The compiled system the model runs (simcore/models/numa/compiled_system.py and the
*_kernels.py files) against the Python model (``NumaSystem``, the reference:
``NumaSystem.compiled = False``): the same runs, bit for bit, on the experiments' workloads and
under every option that changes a decision; the calendar's order; the draws a task takes; and which runs go to which system."""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.numa import full_params, make_workload, simulate
from simcore.models.numa import layout_kernels as LK
from simcore.models.numa import task_kernels as TK
from simcore.models.numa.balancer import Balancer
from simcore.models.numa.compiled_system import CompiledSystem, _count_draws
from simcore.models.numa.model import load_machine, monitor_replication
from simcore.models.numa.policies import ConservativeHard, Linux2Level
from simcore.models.numa.scheduler import NumaSystem
from simcore.models import registry

ROOT = Path(__file__).resolve().parents[1]


def _workload(spec_id: str, cell: int, n_tasks: int, **overrides):
    spec = load_spec(ROOT / f"config/experiments/{spec_id}.yaml")
    values = spec.cell(cell).values
    params = full_params({**spec.params(values), "n_tasks": min(values.get("n_tasks", n_tasks), n_tasks), **overrides})
    streams = Streams(replication_seed(5, spec_id, cell, 0))
    return spec, params, streams, make_workload(params, streams, int(load_machine(params["topology"]).cpus))


def _runs(spec_id: str, cell: int, compiled: bool, monkeypatch, n_tasks: int = 200, policies=None, **overrides):
    spec, params, streams, workload = _workload(spec_id, cell, n_tasks, **overrides)
    monkeypatch.setattr(NumaSystem, "compiled", compiled)
    monkeypatch.setattr(Balancer, "compiled", compiled)      # (tests run the Python model unless they ask: conftest)
    runs = [simulate(params, workload, p, streams) for p in policies or spec.policies]
    assert all(type(r.system) is (CompiledSystem if compiled else NumaSystem) for r in runs)
    return runs


def _same(ref, fast) -> None:
    """Every task's completion, migrations, CPU time and time per distance level (in the order the
    levels were first reached), and every metric, equal to the bit."""
    for a, b in zip(ref, fast):
        assert [(t.finished, t.migrations, t.cpu_time, list(t.level_time.items())) for t in b.tasks] == \
               [(t.finished, t.migrations, t.cpu_time, list(t.level_time.items())) for t in a.tasks]
        assert b.metrics == a.metrics          # events, attempts, migrations, shares included
        assert (b.system.delivered, b.system.work, b.system.overhead) == (a.system.delivered, a.system.work, a.system.overhead)
        assert b.system.migrations > 0


def _compare(spec_id, cell, monkeypatch, **kw):
    _same(_runs(spec_id, cell, False, monkeypatch, **kw), _runs(spec_id, cell, True, monkeypatch, **kw))


@pytest.mark.parametrize("spec_id, cell", [
    ("corr05-fig13", 7), ("corr05-fig12", 7), ("corr05-fig10", 9), ("corr05-fig9", 9), ("mehta-table3-w1", 0),
    ("mehta-table4-w2", 2), pytest.param("mehta-table5-w3", 3, marks=pytest.mark.slow),
])
def test_the_compiled_system_gives_the_python_models_runs(monkeypatch, spec_id, cell):
    """On the experiments' own workloads, every policy they run (the four of them among these)."""
    _compare(spec_id, cell, monkeypatch)


@pytest.mark.parametrize("overrides", [
    {"load_average": "instant"},
    {"active_balance": False},
    {"domain_init": "x86_64-2.6.12"},
    {"idle_ignores_cache_hot": False},
    {"io_wait": "rest-of-slice"},
    {"io_task_fraction": 0.5},
    {"placement": "parent", "creation_cpu": "round-robin"},
    {"arrival": "batch", "io_task_fraction": 0.0, "demand_dist": "constant", "mean_demand": 200.0},
    {"tick": 0.1, "arrival": "uniform", "creation_window": 300.0},
    {"locality_scope": "lifetime"},
    {"locality_scope": "lifetime", "io_wait": "rest-of-slice", "io_task_fraction": 0.5, "active_balance": False},
    {"migration_cost": 1.25},
    {"lb_attempt_cost": 0.05},
    {"lb_attempt_cost": 0.5, "migration_cost": 5.0, "locality_scope": "lifetime", "io_wait": "rest-of-slice"},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_the_compiled_system_follows_the_options(monkeypatch, overrides):
    """Options that change the load estimates, the pushes, the intervals, the moves of hot tasks,
    the I/O waits, CPU-bound tasks, the placement, ties at one instant and the tick."""
    _compare("corr05-fig10", 4, monkeypatch, **overrides)


@pytest.mark.parametrize("overrides", [
    {"distance_rule": "hop"},
    {"rules_scope": "periodic"},
    {"zone_scope": "all", "max_migrations": 1},
    {"soft_threshold_factor": 4.0, "conservative_domains": "linux-2level"},
    {"rules_scope": "periodic", "lb_attempt_cost": 0.1, "migration_cost": 1.25},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_the_compiled_system_follows_the_conservative_rules(monkeypatch, overrides):
    """Each rule of the conservative policies' ``can_migrate`` and their zone options."""
    _compare("mehta-table4-w3", 2, monkeypatch, policies=["conservative-hard", "conservative-soft"], **overrides)


@pytest.mark.parametrize("look_ahead, sleeps", [(False, True), (True, False)])
def test_without_look_ahead_or_sleeping_domains_it_is_the_python_model(monkeypatch, look_ahead, sleeps):
    """``NumaSystem.look_ahead = False`` (an event at every end of burst or slice) and
    ``Balancer.sleeps = False`` (every attempt made) hold in the compiled system too."""
    monkeypatch.setattr(NumaSystem, "look_ahead", look_ahead)
    monkeypatch.setattr(Balancer, "sleeps", sleeps)
    ref, fast = _runs("corr05-fig9", 3, False, monkeypatch), _runs("corr05-fig9", 3, True, monkeypatch)
    _same(ref, fast)


def test_the_event_count_shows_the_look_ahead(monkeypatch):
    """The compiled system counts what the Python model counts: more events without the
    look-ahead (every end of a lone task's burst or slice fires)."""
    with_look = _runs("corr05-fig9", 3, True, monkeypatch)[0].metrics["events"]
    monkeypatch.setattr(NumaSystem, "look_ahead", False)
    without = _runs("corr05-fig9", 3, True, monkeypatch)[0].metrics["events"]
    assert without > with_look


def test_run_replication_uses_the_compiled_system_and_the_python_model_where_asked(monkeypatch):
    """The model's runs go to the compiled system; traces, invariant checks and monitors go to the
    Python model, and so does everything when ``NumaSystem.compiled`` or ``Balancer.compiled`` is off."""
    monkeypatch.setattr(Balancer, "compiled", True)
    spec, params, streams, workload = _workload("corr05-fig9", 0, 30)
    assert type(simulate(params, workload, "multilevel", streams).system) is CompiledSystem
    assert type(simulate(params, workload, "multilevel", streams, trace=True).system) is NumaSystem
    checked = full_params({**params, "check_invariants": True})
    assert type(simulate(checked, workload, "multilevel", streams).system) is NumaSystem
    seen = []
    monkeypatch.setattr(NumaSystem, "expect", lambda self, tasks: seen.append(type(self)) or setattr(self, "to_finish", len(tasks)))
    monitor_replication({"topology": "corr05-4x2", "n_tasks": 10}, "linux-2level", Streams(replication_seed(1, "m", 0, 0)), 10.0, 50.0)
    assert seen == [NumaSystem]
    monkeypatch.undo()
    monkeypatch.setattr(Balancer, "compiled", False)
    assert NumaSystem.compiled and type(simulate(params, workload, "multilevel", streams).system) is NumaSystem


class _Picky(Linux2Level):
    """A policy that moves only even-numbered tasks: its rule is not one the kernels know."""

    name = "test-picky"

    def can_migrate(self, task, src, dst, level, kind, system) -> bool:
        return task.tid % 2 == 0


class _Homebody(ConservativeHard):
    """A conservative policy that places every task on its parent's CPU by its own method."""

    name = "test-homebody"

    def place(self, task, parent_cpu, system):
        return parent_cpu


def test_a_policy_the_kernels_do_not_know_runs_on_the_python_model(monkeypatch):
    """A subclass that overrides ``can_migrate`` or ``place`` has no compiled rules, so its runs
    are the Python model's (its own rule applied: odd tasks never move)."""
    monkeypatch.setattr(Balancer, "compiled", True)
    for cls in (_Picky, _Homebody):
        monkeypatch.setitem(registry._POLICIES, ("numa", cls.name), cls)
    spec, params, streams, workload = _workload("corr05-fig9", 9, 100)
    picky = simulate(params, workload, "test-picky", streams)
    assert type(picky.system) is NumaSystem and picky.metrics["migrations"] > 0
    assert all(t.migrations == 0 for t in picky.tasks if t.tid % 2)
    assert type(simulate(params, workload, "test-homebody", streams).system) is NumaSystem
    assert type(simulate(params, workload, "conservative-hard", streams).system) is CompiledSystem


def test_a_task_takes_exactly_the_draws_counted_for_it(monkeypatch):
    """``_count_draws`` replays a task's bursts and I/O waits from its creation; the Python model's
    tasks, run to the end, have taken that many (exponential waits and rest-of-slice ones, I/O-bound
    and CPU-bound tasks), bursts being work at local speed (locality_scope 'cpu': the count does
    not depend on where a task runs; the next test bounds it under 'lifetime')."""
    for overrides in ({"io_task_fraction": 0.7}, {"io_wait": "rest-of-slice"}):
        spec, params, streams, workload = _workload("corr05-fig10", 2, 120, locality_scope="cpu", **overrides)
        from simcore.models.numa.task import Task
        counted = [_count_draws(Task(s, params), params["io_wait"] == "rest-of-slice") for s in workload]
        monkeypatch.setattr(NumaSystem, "compiled", False)
        run = simulate(params, workload, "linux-2level", streams)
        taken = [t._b * 32 + t._i if t._b >= 0 else 0 for t in run.tasks]
        assert counted == taken
        assert any(c == 0 for c in counted) == (overrides.get("io_task_fraction", 1.0) < 1.0)


def test_bursts_drawn_as_wall_time_take_at_most_the_draws_counted_at_the_slowest_cpu(monkeypatch):
    """Under locality_scope 'lifetime' a burst serves its wall time over the slowdown where it is
    drawn, so how many draws a task takes depends on where it runs; ``_count_draws`` at the
    machine's largest slowdown bounds every task's, and at 1.0 (every burst at home speed) it is
    at most what a task that ran away from home took. On corr05-4x4 some tasks run far from home
    and take more draws than at home."""
    from simcore.models.numa.bursts import WallBurstTask

    spec, params, streams, workload = _workload("corr05-fig10", 2, 120, locality_scope="lifetime",
                                                memory_stall_fraction=1.0)
    machine = load_machine(params["topology"])
    slowest = max(1.0 + (d / 10.0 - 1.0) for row in machine.distances for d in row)
    bound = [_count_draws(WallBurstTask(s, params), False, slowest) for s in workload]
    home = [_count_draws(WallBurstTask(s, params), False) for s in workload]
    monkeypatch.setattr(NumaSystem, "compiled", False)
    run = simulate(params, workload, "linux-2level", streams)
    taken = [t._b * 32 + t._i if t._b >= 0 else 0 for t in run.tasks]
    assert all(h <= n <= b for h, n, b in zip(home, taken, bound))
    assert any(n > h for h, n in zip(home, taken)) and any(b > n for n, b in zip(taken, bound))


def _buffers(*sizes) -> tuple[np.ndarray, np.ndarray]:
    """Empty buffers SI, SF laid out for ``sizes`` (``layout_kernels.layout``'s counts, no log)."""
    head = np.zeros(LK.Y_SIZE, dtype=np.int64)
    isize, fsize = LK.layout(*sizes, 0, head)
    SI, SF = np.zeros(isize, dtype=np.int64), np.zeros(fsize)
    SI[:LK.Y_SIZE] = head
    return SI, SF


def test_a_draw_past_the_counted_ones_is_an_error():
    """A task whose run would take more draws than counted raises instead of reading another
    task's draws."""
    SI, SF = _buffers(1, 1, 1, 1, 1, 2)
    tb = SI[LK.O_TI]
    SI[tb + LK.T_IOBOUND], SI[tb + LK.T_DI], SI[tb + LK.T_DEND] = 1, 1, 2
    SF[SI[LK.OF_TF] + LK.F_DEMAND], SF[SI[LK.OF_TF] + LK.F_SCALE] = 1000.0, 1.0
    TK.next_burst(0, SI, SF)
    with pytest.raises(IndexError, match="counted draws"):
        TK.next_burst(0, SI, SF)


def test_the_calendar_fires_in_simpys_order():
    """The compiled calendar against a heap of SimPy keys (time, priority, insertion number):
    random timers set, reset and cancelled, many at equal times and priorities, come off in the
    heap's order."""
    rng = np.random.default_rng(11)
    slots = 40
    SI, SF = _buffers(slots // 2, 0, 1, 1, 1, 0)
    SI[SI[LK.O_CI]:SI[LK.O_CI] + slots * LK.C_COLS].reshape(slots, LK.C_COLS)[:, LK.C_POS] = -1
    live: dict[int, tuple] = {}
    for _ in range(3000):
        s = int(rng.integers(slots))
        if rng.random() < 0.25:
            LK.cancel(s, SI, SF)
            live.pop(s, None)
        else:
            t, p = float(rng.integers(0, 5)), int(rng.integers(-2, 2))
            live[s] = (t, p, int(SI[LK.Y_EID]))
            LK.schedule_at(s, t, p, SI, SF)
    expected = [s for _, s in heapq.nsmallest(len(live), ((k, s) for s, k in live.items()))]
    fired = []
    while SI[LK.Y_HN]:
        s = int(SI[SI[LK.O_H]])
        fired.append(s)
        LK.cancel(s, SI, SF)
    assert fired == expected and len(fired) > 10


def test_the_run_stops_at_the_last_completion_in_simpys_order(monkeypatch):
    """The last task's completion stops the run as ``Engine.stop`` does: what is due at that
    instant before the stop event fires (the same events counted), nothing after it; the clock
    ends there."""
    runs = []
    for compiled in (False, True):
        monkeypatch.setattr(NumaSystem, "compiled", compiled)
        monkeypatch.setattr(Balancer, "compiled", compiled)
        spec, params, streams, workload = _workload("corr05-fig9", 1, 40)
        runs.append(simulate(params, workload, "linux-2level", streams))
    ref, fast = runs
    assert type(fast.system) is CompiledSystem
    assert fast.metrics == ref.metrics
    assert fast.system.engine.now == ref.system.engine.now == max(t.finished for t in fast.tasks)


def test_a_timer_due_with_another_event_fires_in_simpys_order_on_the_compiled_system(monkeypatch):
    """tests/test_numa_timing.py's scripted case of ties, on a compiled system with no task (its
    derivation is there): probes at 0 and 2 ms see 14, 15, 15, 15 and 23 attempts, so the timers
    set before the run, one set again from Python, the priorities and the order of scheduling
    are SimPy's; 21 events."""
    from test_numa_kernels import system
    from test_numa_timing import tie_probes
    monkeypatch.setattr(Balancer, "sleeps", False)
    monkeypatch.setattr(Balancer, "compiled", True)
    ref = system("corr05-4x2", "linux-2level")
    sys = CompiledSystem(Engine(), ref.machine, _domains(ref), ref.policy, ref.params)
    sys.expect([])
    seen, events = tie_probes(sys)
    assert seen == {"Z": 14, "Z2": 15, "urgent at 2": 15, "at 2": 15, "scheduled at 2": 23}
    assert events == 8 + 8 + 5


def _domains(sys):
    """The sched domains a system was built on (as the topology module gives them)."""
    from simcore.models.numa.model import default_domains_for, tune_domains
    return tune_domains(default_domains_for(sys.machine, sys.policy.builder, sys.params["domain_init"]), sys.params)
