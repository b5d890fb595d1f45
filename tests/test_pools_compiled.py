"""The compiled pools the model runs (simcore/models/pools/compiled_pools.py, pool_kernels.py)
against the Python model (``PoolSystem``, the reference: ``PoolSystem.compiled = False``): the same
runs, bit for bit, on the experiments' cells with every policy and option; the scripted scenarios
of tests/test_pools_model.py that go through jobs, run both ways; and which runs go to which model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.pools import full_params, simulate
from simcore.models.pools import system as pool_system
from simcore.models.pools.compiled_pools import CompiledPoolSystem
from simcore.models.pools.model import monitor_replication, system_class
from simcore.models.pools.policies import PoolPolicy
from simcore.models.pools.system import PoolSystem
from simcore.models.registry import get_policy
from test_pools_model import NO_OVERHEADS, final_thread, job

ROOT = Path(__file__).resolve().parents[1]
SIX = ["no-spanning", "limited-spanning", "unlimited-spanning", "no-spanning-unrestricted",
       "limited-spanning-unrestricted", "unlimited-spanning-unrestricted"]


def _runs(params: dict, policies, compiled: bool, monkeypatch, rep: int = 0):
    monkeypatch.setattr(PoolSystem, "compiled", compiled)
    out = {}
    for policy in policies:
        out[policy] = simulate(params, policy, Streams(replication_seed(5, "pools", 0, rep)))
    return out


def _compare(params: dict, policies, monkeypatch, rep: int = 0) -> None:
    """Every sampled job's home, a, k and end, every metric (events included), the switches and
    the busy integral, equal to the bit."""
    ref = _runs(params, policies, False, monkeypatch, rep)
    fast = _runs(params, policies, True, monkeypatch, rep)
    for policy, a in ref.items():
        b = fast[policy]
        assert type(b.system) is CompiledPoolSystem and type(a.system) is PoolSystem, policy
        assert [(s.home, s.a, s.k, s.done_at) for s in b.jobs] == [(s.home, s.a, s.k, s.done_at) for s in a.jobs]
        assert b.metrics == a.metrics
        assert (b.system.switches, b.system.busy_area) == (a.system.switches, a.system.busy_area)


def _cell(spec_id: str, cell: int, **overrides) -> tuple[dict, list[str]]:
    spec = load_spec(ROOT / f"config/experiments/{spec_id}.yaml")
    return full_params({**spec.params(spec.cell(cell).values), **overrides}), spec.policies


@pytest.mark.parametrize("spec_id, cell", [
    ("zhou91-fig1", 0), ("zhou91-fig3", 5), ("zhou91-fig4", 3), ("zhou91-fig5", 0), ("zhou91-fig5", 23),
    ("zhou91-fig6", 0), ("zhou91-fig7", 7), ("zhou91-fig8", 9),
])
def test_the_compiled_pools_give_the_python_models_runs(monkeypatch, spec_id, cell):
    """The experiments' cells with every policy they run (400 sampled jobs, to keep the Python
    model's runs short)."""
    params, policies = _cell(spec_id, cell, jobs=400)
    _compare(params, policies, monkeypatch)


@pytest.mark.parametrize("overrides", [
    {"pool_size": "all"}, {"pool_size": 5, "load": 0.85}, {"pool_size": 30, "time_slice": 3.0},
    {"cache_fraction": 1.0, "cache_cost": 0.5}, {"in_pool_factor": 0.0, "contention_factor": 0.0, "cache_cost": 0.0},
    {"mean_parallelism": 1.0}, {"warmup": "none", "jobs": 150},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_the_compiled_pools_follow_the_options_with_all_six_policies(monkeypatch, overrides):
    _compare(full_params({"jobs": 300, **overrides}), SIX, monkeypatch, rep=1)


def test_the_reference_without_lazy_slices_is_the_compiled_one_without(monkeypatch):
    """``lazy = False`` fires every slice end, in both models alike (more events than lazy)."""
    monkeypatch.setattr(PoolSystem, "lazy", False)
    params = full_params({"jobs": 200, "pool_size": 10})
    _compare(params, ["limited-spanning", "no-spanning"], monkeypatch)
    eager = _runs(params, ["limited-spanning"], True, monkeypatch)["limited-spanning"]
    monkeypatch.setattr(PoolSystem, "lazy", True)
    lazy = _runs(params, ["limited-spanning"], True, monkeypatch)["limited-spanning"]
    assert lazy.metrics["events"] < eager.metrics["events"]


def test_which_runs_go_to_which_model(monkeypatch):
    """Compiled: the six policies, unless a monitor reads the queues, the switch is off, or the
    policy is a class the kernels do not know (its ``place`` may read more of the system)."""
    monkeypatch.setattr(PoolSystem, "compiled", True)
    params = full_params({})
    rng = np.random.default_rng(0)
    for name in SIX:
        assert system_class(get_policy("pools", name)(params, rng), False) is CompiledPoolSystem
    policy = get_policy("pools", "no-spanning")(params, rng)
    assert system_class(policy, True) is PoolSystem

    class Other(PoolPolicy):
        name = "other"

    assert system_class(Other(params, rng), False) is PoolSystem
    monkeypatch.setattr(PoolSystem, "compiled", False)
    assert system_class(policy, False) is PoolSystem


def test_a_monitored_replication_runs_on_the_python_model(monkeypatch):
    monkeypatch.setattr(PoolSystem, "compiled", True)
    seen = []
    original = PoolSystem.__init__

    def init(self, *args):
        seen.append(type(self))
        original(self, *args)

    monkeypatch.setattr(PoolSystem, "__init__", init)
    monitor_replication({"jobs": 20}, "no-spanning", Streams(replication_seed(1, "m", 0, 0)), 50.0, 200.0)
    assert seen == [PoolSystem]


# -- the scripted scenarios of tests/test_pools_model.py, both ways --------------------------------

def make(compiled: bool, policy: str = "limited-spanning", **params):
    """As test_pools_model.make, on the compiled system or the Python one."""
    full = full_params({"mean_parallelism": 2.0, **params})
    done = []
    cls = CompiledPoolSystem if compiled else PoolSystem
    system = cls(Engine(), full, get_policy("pools", policy)(full, np.random.default_rng(0)), done.append)
    system.finished_jobs = done
    return system


def run(system, jobs=(), threads=()) -> None:
    """Jobs arriving, or ``(time, thread)`` entering their pools, then the run and its close."""
    for j in jobs:
        system.engine.call(j.arrival, system.arrive, j)
    for at, thread in threads:
        system.engine.call(at, system.enqueue, thread)
    system.engine.run()
    system.close()


BOTH = pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])


@BOTH
def test_a_job_alone_runs_its_phases_back_to_back(compiled):
    """As in test_pools_model: c = 1, t = 0.5; INIT [1, 11), PARA [11.5, 111.5), FINAL [112, 122)."""
    system = make(compiled, "no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, cache_cost=1.0,
                  cache_fraction=0.5, contention_factor=0.0)
    run(system, [job()])
    (state,) = system.finished_jobs
    assert state.done_at == 122.0 and system.switches == 3 and system.area() == 122.0


@BOTH
def test_round_robin_of_two_jobs_on_one_processor(compiled):
    """As in test_pools_model: responses 230 and 235, 24 switches."""
    system = make(compiled, "no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, **NO_OVERHEADS)
    run(system, [job(0, 0.0), job(1, 5.0)])
    done = {s.job.index: s.done_at - s.job.arrival for s in system.finished_jobs}
    assert done == {0: 230.0, 1: 235.0} and system.switches == 24


@BOTH
def test_threads_spread_over_pools(compiled):
    """As in test_pools_model: d = 4 on two pools of 2: response 120, a = 4 over two pools, the
    four processors busy [10, 110): busy integral 10 + 400 + 10 = 420."""
    system = make(compiled, "unlimited-spanning", processors=4, pool_size=2, mean_parallelism=2.0, **NO_OVERHEADS)
    run(system, [job(d=4)])
    (state,) = system.finished_jobs
    assert (state.done_at, state.a, state.k, state.home) == (120.0, 4, 2, 0) and system.area() == 420.0


@BOTH
def test_the_home_pool_is_the_least_loaded_lowest_numbered(compiled):
    """Three pools of one processor, no overheads, d = 1. A (0) takes pool 0 (all idle); B (1)
    pool 1, C (2) pool 2; at 125 A has ended (120) and pool 0 is empty again, so D (125) is at
    home in pool 0, while B and C still run. Ends: 120, 121, 122, 245."""
    system = make(compiled, "no-spanning", processors=3, pool_size=1, mean_parallelism=1.0, **NO_OVERHEADS)
    run(system, [job(0, 0.0), job(1, 1.0), job(2, 2.0), job(3, 125.0)])
    assert {s.job.index: (s.home, s.done_at) for s in system.finished_jobs} == \
           {0: (0, 120.0), 1: (1, 121.0), 2: (2, 122.0), 3: (0, 245.0)}


@BOTH
@pytest.mark.parametrize("lazy", [True, False])
def test_processors_finishing_together_take_the_queue_in_the_order_their_timers_were_set(compiled, lazy):
    """The tie of test_pools_model: both CPUs end at 11, CPU 1's timer was set first, so CPU 1
    (last ran job B) takes Z of job C at a full switch c: Z's work [12, 17), so job C ends at 17
    (CPU 0 would have charged t c and ended it at 16.5); busy integral 28, four switches."""
    system = make(compiled, "no-spanning", processors=2, pool_size=2, mean_parallelism=1.0, time_slice=100.0,
                  cache_cost=1.0, cache_fraction=0.5, contention_factor=0.0, in_pool_factor=0.0)
    system.lazy = lazy
    c = pool_system.JobState(job(2))
    c.phase = pool_system.FINAL
    run(system, threads=[(0.0, final_thread(0, 2.0)), (0.0, final_thread(1, 10.0)), (0.0, final_thread(c, 7.0)),
                         (5.0, final_thread(c, 5.0))])
    assert c.done_at == 17.0 and system.switches == 4 and system.area() == 28.0


@BOTH
def test_a_rounding_remainder_at_a_slice_end_is_done_not_a_new_turn(compiled):
    """The case of test_pools_model: V's 1e-9 left at its slice end is EPS, so V is done at 15 and
    Q runs [15, 18): three switches, the last job done at 18."""
    system = make(compiled, "no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, time_slice=10.0,
                  **NO_OVERHEADS)
    states = [pool_system.JobState(job(i)) for i in range(3)]
    for s in states:
        s.phase = pool_system.FINAL
    run(system, threads=[(0.0, final_thread(states[0], 5.0)), (0.0, final_thread(states[1], 10 + 1e-9)),
                         (0.0, final_thread(states[2], 3.0))])
    assert [s.done_at for s in states] == [5.0, 15.0, 18.0] and system.switches == 3


@BOTH
def test_the_last_sampled_job_stops_the_run(compiled, monkeypatch):
    """``simulate`` stops once the sampled jobs (here 10) have all ended: the clock stops at the
    last one's end, with later arrivals' jobs still running."""
    monkeypatch.setattr(PoolSystem, "compiled", compiled)
    run_ = simulate(full_params({"jobs": 10, "load": 0.9}), "no-spanning", Streams(replication_seed(2, "s", 0, 0)))
    assert type(run_.system) is (CompiledPoolSystem if compiled else PoolSystem)
    last = max(s.done_at for s in run_.jobs)
    assert run_.system.engine.now == last and all(s.done_at > 0 for s in run_.jobs)
    assert run_.system.busy > 0
