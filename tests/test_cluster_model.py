"""The cluster model (paper 004): closed forms, hand-checked cases, common random numbers."""

from __future__ import annotations

import math

import pytest

from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models.cluster import METRICS, PARAMETERS, full_params, make_workload, run_replication, simulate
from simcore.models.cluster.workload import ProcSpec, Workload
from simcore.models.registry import policy_names
from simcore.stats import intervals

POLICIES = ["pvm", "enhanced-pvm", "mosix", "enhanced-mosix", "optimal", "pvm-on-mosix"]
SIXTEEN = [{"name": "p90", "count": 16, "speed": 1.0, "memory_mb": 1e6}]
ONE = [{"name": "m", "count": 1, "speed": 1.0, "memory_mb": 1e6}]


def streams(rep: int = 0, experiment: str = "test-cluster") -> Streams:
    return Streams(replication_seed(12345, experiment, 0, rep))


def batch(n: int, **extra) -> dict:
    return full_params({"workload": "batch", "machines": SIXTEEN, "n_procs": n, **extra})


def run_one(params: dict, policy: str, rep: int = 0) -> dict:
    return run_replication(params, [policy], streams(rep))[policy]


def test_interface():
    assert set(POLICIES) <= set(policy_names("cluster"))
    assert {"mean_slowdown", "slowdown_sum", "jobs", "max_slowdown", "makespan", "migrations", "events"} <= set(METRICS)
    for name in ("machines", "thrashing_factor", "workload", "mosix_known_machines", "cost_base", "reassign_factor"):
        assert PARAMETERS[name].doc
    out = run_replication({}, POLICIES, streams())  # amir defaults
    for policy in POLICIES:
        assert all(isinstance(v, float) for v in out[policy].values())
        assert out[policy]["events"] > 0
        assert {k for k, v in out[policy].items() if not METRICS[k].admits(v)} == set(), policy


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_processor_sharing_slowdown_is_one_over_one_minus_rho(rho):
    params = full_params({"workload": "poisson", "machines": ONE, "arrival_rate": rho, "mean_demand": 1.0,
                          "arrival_window": 20000.0, "warmup": 1000.0})
    values = [run_one(params, "pvm", rep)["mean_slowdown"] for rep in range(10)]
    ci = intervals.mean_interval(values, 0.95)
    assert ci.low <= 1 / (1 - rho) <= ci.high, ci


OPTIMAL = {1: 300, 8: 300, 16: 300, 17: 450, 20: 450, 24: 450, 25: 525, 27: 525, 31: 581.25, 32: 600,
           33: 700, 36: 700, 38: 750, 40: 750, 43: 2500 / 3, 47: 2650 / 3, 48: 900}


@pytest.mark.parametrize("n,expected", sorted(OPTIMAL.items()))
def test_optimal_reproduces_hand_computed_times(n, expected):
    assert run_one(batch(n), "optimal")["makespan"] == pytest.approx(expected, rel=1e-9)


def test_pvm_round_robin_doubles_one_node():
    out = run_one(batch(17), "pvm")
    assert out["makespan"] == pytest.approx(600.0)
    assert out["migrations"] == 0


def test_mosix_spreads_from_home_node():
    params = batch(17, migration_cost=0.3, mosix_known_machines=4)
    mosix = run_one(params, "mosix")["makespan"]
    assert 440 < mosix < 480
    assert mosix < run_one(params, "pvm")["makespan"] - 100
    assert 450 <= run_one(params, "pvm-on-mosix")["makespan"] < 465


@pytest.mark.parametrize("policy", POLICIES)
def test_work_is_conserved_and_no_process_is_lost(policy):
    params = full_params({"migration_cost": 0.3})
    workload = make_workload(params, streams(3))
    result = simulate(params, workload, policy, streams(3))
    assert sorted(p.pid for p in result.procs) == [s.pid for s in workload.procs]
    delivered = sum(m.work for m in result.cluster.machines)
    assert delivered == pytest.approx(sum(s.demand for s in workload.procs), rel=1e-9)
    assert all(p.completion >= p.arrival + p.demand / 1.0 - 1e-6 for p in result.procs)


def test_all_policies_see_the_same_job_stream():
    params = full_params({})
    workload = make_workload(params, streams(1))
    records = set()
    for policy in POLICIES:
        done = simulate(params, workload, policy, streams(1)).procs
        records.add(tuple(sorted((p.pid, p.job, p.arrival, p.demand, p.memory) for p in done)))
    assert len(records) == 1
    # a policy's own randomness never shifts the workload of the others
    alone = run_replication(params, ["pvm"], streams(2))["pvm"]
    together = run_replication(params, ["mosix", "enhanced-mosix", "pvm"], streams(2))["pvm"]
    assert alone == together


def test_same_seed_same_metrics():
    params = {"migration_cost": 0.2, "mosix_initial": "random"}
    assert run_replication(params, POLICIES, streams(5)) == run_replication(params, POLICIES, streams(5))
    assert run_replication(params, ["mosix"], streams(5)) != run_replication(params, ["mosix"], streams(6))


def _two_procs(memory: float, demands=(10.0, 10.0), size: float = 6.0) -> dict:
    params = full_params({"machines": [{"name": "m", "count": 1, "speed": 1.0, "memory_mb": memory}]})
    workload = Workload(tuple(ProcSpec(i, i, 0.0, d, size, 0, True) for i, d in enumerate(demands)))
    done = simulate(params, workload, "pvm", streams()).procs
    return {p.pid: p.completion for p in done}


def test_thrashing_slows_an_overcommitted_machine_tenfold():
    assert _two_procs(memory=12.0) == pytest.approx({0: 20.0, 1: 20.0})  # fits: plain sharing
    assert _two_procs(memory=10.0) == pytest.approx({0: 200.0, 1: 200.0})  # 12 MB > 10 MB: 10x slower
    # the short one finishes at 20 s (1 s of work at 1/20); the other then runs alone, unthrashed
    assert _two_procs(memory=10.0, demands=(1.0, 10.0)) == pytest.approx({0: 20.0, 1: 29.0})


def test_speed_scales_service():
    params = full_params({"machines": [{"name": "slow", "count": 1, "speed": 0.5, "memory_mb": 100}]})
    workload = Workload((ProcSpec(0, 0, 5.0, 10.0, 1.0, 0, True),))
    out = simulate(params, workload, "pvm", streams()).metrics
    assert out["mean_slowdown"] == pytest.approx(2.0)
    assert out["makespan"] == pytest.approx(20.0)


def test_background_load_counts_but_is_not_measured():
    params = batch(16, background_procs=8)
    out = run_replication(params, ["pvm", "mosix"], streams())
    assert out["pvm"]["jobs"] == 16
    assert out["pvm"]["makespan"] > 300  # nodes 0-7 are shared with a background process
    assert out["mosix"]["makespan"] > 300


def test_job_slowdown_counts_each_parallel_job_once():
    by_proc = run_one(full_params({}), "pvm", 4)
    by_job = run_one(full_params({"parallel_job_slowdown": "job"}), "pvm", 4)
    assert by_job["jobs"] <= by_proc["jobs"]
    assert by_job["makespan"] == by_proc["makespan"]


def test_enhanced_pvm_keeps_big_processes_off_small_memories():
    params = full_params({"machines": [{"name": "big", "count": 1, "speed": 1.0, "memory_mb": 64},
                                       {"name": "small", "count": 1, "speed": 1.0, "memory_mb": 16}]})
    workload = Workload(tuple(ProcSpec(i, i, 0.0, 100.0, 12.0, 0, True) for i in range(3)))
    done = simulate(params, workload, "enhanced-pvm", streams()).procs
    assert not any(math.isnan(p.completion) for p in done)
    assert max(p.completion for p in done) < 1000  # round robin would thrash the small machine


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="workload"):
        run_replication({"workload": "nope"}, ["pvm"], streams())
    with pytest.raises(InputError):
        run_replication({"no_such_parameter": 1}, ["pvm"], streams())
