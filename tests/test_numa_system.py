"""The system the model runs (simcore/models/numa/system.py and the *_kernels.py files), run whole:
the look-ahead of lone tasks against an event at every end, under every option that changes a
decision; the kernels' own event loop against the SimPy-driven run; the calendar's order; the
run's stop; the draws a task takes; and the policies it can run."""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pytest
from numa_script import bare_buffers

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.numa import full_params, make_workload, simulate
from simcore.models.numa import layout_kernels as LK
from simcore.models.numa import model as numa_model
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa.model import load_machine
from simcore.models.numa.policies import Linux2Level
from simcore.models.numa.system import NumaSystem, _draws
from simcore.models.numa.task import columns as task_columns

ROOT = Path(__file__).resolve().parents[1]


def _workload(spec_id: str, cell: int, n_tasks: int, **overrides):
    spec = load_spec(ROOT / f"config/experiments/{spec_id}.yaml")
    values = spec.cell(cell).values
    params = full_params({**spec.params(values), "n_tasks": min(values.get("n_tasks", n_tasks), n_tasks), **overrides})
    streams = Streams(replication_seed(5, spec_id, cell, 0))
    return spec, params, streams, make_workload(params, streams, int(load_machine(params["topology"]).cpus))


def _runs(spec_id: str, cell: int, monkeypatch, look_ahead: bool = True, n_tasks: int = 200, policies=None,
          **overrides):
    spec, params, streams, workload = _workload(spec_id, cell, n_tasks, **overrides)
    monkeypatch.setattr(NumaSystem, "look_ahead", look_ahead)
    return [simulate(params, workload, p, streams, trace=True) for p in policies or spec.policies]


def _same(ref, fast) -> None:
    """Every task's completion, migrations, CPU time, time per distance level (in the order the
    levels were first reached) and trace, and every metric but the event count, equal to the bit;
    the CPUs' tallies of work and time up to rounding."""
    for a, b in zip(ref, fast):
        assert [(t.finished, t.migrations, t.cpu_time, list(t.level_time.items()), t.trace) for t in b.tasks] == \
               [(t.finished, t.migrations, t.cpu_time, list(t.level_time.items()), t.trace) for t in a.tasks]
        assert {k: v for k, v in b.metrics.items() if k != "events"} == \
            {k: v for k, v in a.metrics.items() if k != "events"}
        # the CPUs' tallies, summed in other groupings when ends are replayed: equal up to rounding
        assert (b.system.delivered, b.system.work, b.system.overhead) == \
            pytest.approx((a.system.delivered, a.system.work, a.system.overhead), rel=1e-12)
        assert b.system.migrations > 0


def _compare(spec_id, cell, monkeypatch, **kw):
    """The runs with an event at every end of burst or slice, and with the look-ahead."""
    _same(_runs(spec_id, cell, monkeypatch, False, **kw), _runs(spec_id, cell, monkeypatch, True, **kw))


@pytest.mark.parametrize("spec_id, cell", [
    ("corr05-fig13", 7), ("corr05-fig10", 9), ("mehta-table3-w1", 0), ("mehta-table4-w2", 2),
])
def test_the_look_ahead_gives_the_runs_of_an_event_at_every_end(monkeypatch, spec_id, cell):
    """On the experiments' own workloads, every policy they run (the four of them among these)."""
    _compare(spec_id, cell, monkeypatch, n_tasks=120)


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
    {"distance_rule": "hop"},
    {"rules_scope": "periodic", "max_migrations": 1},
    {"zone_scope": "all", "soft_threshold_factor": 3.0},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_the_look_ahead_holds_under_every_option(monkeypatch, overrides):
    """Options that change the load estimates, the pushes, the intervals, the moves of hot tasks,
    the I/O waits, CPU-bound tasks, the placement, ties at one instant, the tick, the costs and the
    conservative rules."""
    _compare("corr05-fig10", 4, monkeypatch, n_tasks=120, **overrides)


NUMA_SPECS = sorted(p.stem for p in (ROOT / "config/experiments").glob("*.yaml")
                    if load_spec(p).data["model"] == "numa")


def _loops(spec_id: str, cell: int, monkeypatch, n_tasks: int = 120, **overrides) -> list:
    """Every policy of the spec on one workload, by the kernels' loop, then driven by SimPy:
    each task's end, migrations and CPU time, and every metric as repr (the bytes)."""
    spec, params, streams, workload = _workload(spec_id, cell, n_tasks, **overrides)
    out = []
    for compiled in (True, False):
        monkeypatch.setattr(numa_model, "COMPILED_LOOP", compiled)
        runs = [simulate(params, workload, p, streams, draws={}) for p in spec.policies]
        out.append([([(t.tid, t.finished, t.migrations, t.cpu_time) for t in r.tasks],
                     {k: repr(v) for k, v in r.metrics.items()}) for r in runs])
    return out


@pytest.mark.parametrize("spec_id", NUMA_SPECS)
def test_the_compiled_loop_gives_the_simpy_driven_runs_bytes(monkeypatch, spec_id):
    """The first and last cells the smoke scale runs of every NUMA experiment (at most 120 tasks),
    every policy: the kernels' own loop and the SimPy-driven run give the same tasks in the same
    order of creation and the same metrics to the last bit, the events counted included (a
    skipped or extra event, or a tie broken otherwise, shows)."""
    cells = load_spec(ROOT / f"config/experiments/{spec_id}.yaml").cells("smoke")
    for cell in {cells[0].index, cells[-1].index}:
        compiled, simpy = _loops(spec_id, cell, monkeypatch)
        assert compiled == simpy


@pytest.mark.parametrize("overrides", [
    {"tick": 0.1, "arrival": "uniform", "creation_window": 300.0},
    {"arrival": "batch", "io_task_fraction": 0.0, "demand_dist": "constant", "mean_demand": 200.0},
], ids=["ticks", "batch"])
def test_the_compiled_loop_keeps_simpys_order_of_ties(monkeypatch, overrides):
    """Creations and timers at one instant (times on a 0.1 ms tick; every task created at 0):
    both loops fire them in SimPy's order and give the same bytes."""
    compiled, simpy = _loops("corr05-fig10", 4, monkeypatch, **overrides)
    assert compiled == simpy


def test_a_run_python_observes_is_driven_by_simpy(monkeypatch):
    """A trace (the kernels' log) or the invariant checks need Python after every event: such a
    run is observed; the experiments' runs are not."""
    spec, params, streams, workload = _workload("corr05-fig10", 4, 40)
    calls = []
    monkeypatch.setattr(NumaSystem, "run_compiled", lambda self: calls.append(self.cols.order))
    simulate(params, workload, "linux-2level", streams, trace=True)
    simulate({**params, "check_invariants": True}, workload, "linux-2level", streams)
    assert calls == []
    with pytest.raises(Exception):
        simulate(params, workload, "linux-2level", streams)      # the stub ran no task: nothing finished
    assert len(calls) == 1


def test_the_event_count_shows_the_look_ahead(monkeypatch):
    """More events without the look-ahead (every end of a lone task's burst or slice fires)."""
    with_look = _runs("corr05-fig9", 3, monkeypatch)[0].metrics["events"]
    without = _runs("corr05-fig9", 3, monkeypatch, look_ahead=False)[0].metrics["events"]
    assert without > with_look


def test_a_policy_with_its_own_move_or_placement_method_is_refused():
    """Moves and placements are the kernels' rules: a subclass defining ``can_migrate`` or
    ``place`` is refused when it is defined, with the reason."""
    with pytest.raises(TypeError, match="defines can_migrate: the numa model's moves and placements are rules"):
        type("Picky", (Linux2Level,), {"can_migrate": lambda self, *a: True})
    with pytest.raises(TypeError, match="defines place"):
        type("Homebody", (Linux2Level,), {"place": lambda self, *a: 0})


def _taken(system) -> list[int]:
    """The draws each task took in a finished run (its next draw less the first of its own)."""
    TI = system.block("O_TI", len(system.expected))
    starts = np.concatenate([[0], TI[:-1, SL.T_DEND]])
    return (TI[:, SL.T_DI] - starts).tolist()


def _counts(workload: list, params: dict, io_rest: bool, slowest: float = 1.0, first: float = 1.0) -> list[int]:
    """The draws counted for each task (``system._draws``)."""
    return np.diff(_draws(task_columns(workload, params), io_rest, slowest, first)[1]).tolist()


def test_a_task_takes_exactly_the_draws_counted_for_it():
    """``_draws`` counts the draws of a task's bursts and I/O waits from its creation; the tasks, run to
    the end, have taken that many (exponential waits and rest-of-slice ones, I/O-bound and
    CPU-bound tasks), bursts being work at local speed (locality_scope 'cpu': the count does not
    depend on where a task runs; the next test bounds it under 'lifetime')."""
    for overrides in ({"io_task_fraction": 0.7}, {"io_wait": "rest-of-slice"}):
        spec, params, streams, workload = _workload("corr05-fig10", 2, 120, locality_scope="cpu", **overrides)
        counted = _counts(workload, params, params["io_wait"] == "rest-of-slice")
        run = simulate(params, workload, "linux-2level", streams)
        assert counted == _taken(run.system)
        assert any(c == 0 for c in counted) == (overrides.get("io_task_fraction", 1.0) < 1.0)


def test_the_draws_are_each_tasks_own_generators_and_scripted_ones_replace_them():
    """Task ``t``'s draws are the first standard exponentials of numpy's PCG64 seeded with its
    seed, as many as counted for it; draws scripted for a seed replace that task's alone (a burst
    of 0.2 x its mean burst, then 50 more of 1.0, of which it takes as many as its demand needs),
    and too few for its run are refused."""
    spec, params, streams, workload = _workload("corr05-fig10", 2, 30, locality_scope="cpu")
    cols = task_columns(workload, params)
    draws, starts = _draws(cols, False)
    for t, spec in enumerate(workload):
        k = starts[t + 1] - starts[t]
        own = np.random.Generator(np.random.PCG64(spec.seed)).standard_exponential(k)
        assert (draws[starts[t]:starts[t + 1]] == own).all()
    seed = workload[3].seed
    given = np.array([0.2] + [1.0] * 50)
    mixed, at = _draws(cols, False, scripted={seed: given})
    need = at[4] - at[3]
    assert 1 <= need <= len(given) and (mixed[at[3]:at[4]] == given[:need]).all()
    rest = np.concatenate([mixed[:at[3]], mixed[at[4]:]])
    assert (rest == np.concatenate([draws[:starts[3]], draws[starts[4]:]])).all()
    with pytest.raises(ValueError, match=f"the 1 draws scripted for seed {seed} are fewer than its run can take"):
        _draws(cols, False, scripted={seed: given[:1]})


def test_bursts_drawn_as_wall_time_take_at_most_the_draws_counted_at_the_slowest_cpu():
    """Under locality_scope 'lifetime' a burst serves its wall time over the slowdown where it is
    drawn, so how many draws a task takes depends on where it runs; ``_draws`` at the
    machine's largest slowdown bounds every task's, and at 1.0 (every burst at home speed) it is
    at most what a task that ran away from home took. On corr05-4x4 some tasks run far from home
    and take more draws than at home."""
    spec, params, streams, workload = _workload("corr05-fig10", 2, 120, locality_scope="lifetime",
                                                memory_stall_fraction=1.0)
    machine = load_machine(params["topology"])
    slowest = max(1.0 + (d / 10.0 - 1.0) for row in machine.distances for d in row)
    first = slowest if params["home_node"] == "creation" else 1.0     # corr05: a first burst may start away
    bound, home = _counts(workload, params, False, slowest, first), _counts(workload, params, False)
    taken = _taken(simulate(params, workload, "linux-2level", streams).system)
    assert all(h <= n <= b for h, n, b in zip(home, taken, bound))
    assert any(n > h for h, n in zip(home, taken)) and any(b > n for n, b in zip(taken, bound))


def test_the_calendar_fires_in_simpys_order():
    """The calendar against a heap of SimPy keys (time, priority, insertion number): random timers
    set, reset and cancelled, many at equal times and priorities, come off in the heap's order."""
    rng = np.random.default_rng(11)
    slots = 40
    SI, SF = bare_buffers(slots // 2, 0, 1, 1, 1, 0)
    SI[SI[SL.O_CI]:SI[SL.O_CI] + slots * SL.C_COLS].reshape(slots, SL.C_COLS)[:, SL.C_POS] = -1
    live: dict[int, tuple] = {}
    for _ in range(3000):
        s = int(rng.integers(slots))
        if rng.random() < 0.25:
            LK.cancel(s, SI, SF)
            live.pop(s, None)
        else:
            t, p = float(rng.integers(0, 5)), int(rng.integers(-2, 2))
            live[s] = (t, p, int(SI[SL.Y_EID]))
            LK.schedule_at(s, t, p, SI, SF)
    expected = [s for _, s in heapq.nsmallest(len(live), ((k, s) for s, k in live.items()))]
    fired = []
    while SI[SL.Y_HN]:
        s = int(SI[SI[SL.O_H]])
        fired.append(s)
        LK.cancel(s, SI, SF)
    assert fired == expected and len(fired) > 10


def test_the_run_stops_at_the_last_completion(monkeypatch):
    """The last task's completion stops the run as ``Engine.stop`` does: the clock ends there, with
    the look-ahead and without it, and no timer due before it is left."""
    for look_ahead in (False, True):
        monkeypatch.setattr(NumaSystem, "look_ahead", look_ahead)
        spec, params, streams, workload = _workload("corr05-fig9", 1, 40)
        run = simulate(params, workload, "linux-2level", streams)
        system = run.system
        end = max(t.finished for t in run.tasks)
        assert system.engine.now == end
        SI, SF = system.SI, system.SF
        assert not SI[SL.Y_HN] or SF[SI[SL.OF_CT] + SI[SI[SL.O_H]]] >= end
