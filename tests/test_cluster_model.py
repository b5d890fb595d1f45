"""The cluster model (paper 004): closed forms, hand-checked cases, common random numbers."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from cluster_script import ScriptedRng, ScriptedStreams

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


@pytest.mark.slow
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
    """17 batch processes of 300 CPU s on 16 machines, all created on machine 0; migration_cost 0.3;
    scripted policy draws (cluster_script): wake-ups at 1, 2, ... s, rounds at 0.5, 1.5, ... s,
    every machine hears from all 15 others.

    mosix: at t = k (k = 1..15) machine 0 sends process k-1 to machine k (the first it sees empty),
    where it resumes 0.3 s later. Machine 0 holds 18 - j processes during [j-1, j], so the mover has
    done S(k) = sum_{j<=k} 1/(18-j) and ends alone at k + 0.3 + 300 - S(k). From t=16 machine 0
    keeps two (the others are seen at load 1: difference 1). Process 0 ends first, at
    301.3 - 1/17; the round of 301.5 shows machine 1 empty and at 302 machine 0 sends process 15
    there with 300 - S(15) - (302 - 15) / 2 = 156.5 - S(15) left: it ends last, at
    302.3 + 156.5 - S(15) = 460.3 - H(17), since S(15) = H(17) - 1 - 1/2.

    pvm-on-mosix: round robin leaves processes 0 and 16 on machine 0, which sees load 1 everywhere
    until the others end at 300; at 301 process 0 (149.5 left) leaves: it ends at 301.3 + 149.5.
    pvm: that pair shares machine 0 to the end, 600."""
    params = batch(17, migration_cost=0.3, mosix_known_machines=15)
    workload = make_workload(params, streams())
    makespan = {policy: simulate(params, workload, policy, ScriptedStreams(ScriptedRng())).metrics["makespan"]
                for policy in ("mosix", "pvm-on-mosix", "pvm")}
    harmonic17 = math.fsum(1 / k for k in range(1, 18))
    assert makespan == pytest.approx({"mosix": 460.3 - harmonic17, "pvm-on-mosix": 450.8, "pvm": 600.0}, rel=1e-12)


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


def test_slowdown_on_the_machine_that_ran_it():
    """One process of 10 CPU s alone on a half-speed machine takes 20 s: slowdown 2 against its
    demand on a speed-1.0 machine ('reference'), 1 against its demand on the machine it ran on
    ('machine'); on two machines of speeds 1 and 0.5, pvm's round robin puts the second process on
    the slow one: (1 + 1) / 2 under 'machine', (1 + 2) / 2 under 'reference'."""
    slow = [{"name": "slow", "count": 1, "speed": 0.5, "memory_mb": 100}]
    two = [{"name": "fast", "count": 1, "speed": 1.0, "memory_mb": 100}, *slow]
    cases = [(slow, 1, 2.0, 1.0), (two, 2, 1.5, 1.0)]
    for machines, n, reference, own in cases:
        workload = Workload(tuple(ProcSpec(i, i, 0.0, 10.0, 1.0, 0, True) for i in range(n)))
        got = {mode: simulate(full_params({"machines": machines, "slowdown_demand": mode}), workload, "pvm",
                              streams()).metrics["mean_slowdown"] for mode in ("reference", "machine")}
        assert got == pytest.approx({"reference": reference, "machine": own})


def test_parallel_processes_share_or_draw_their_demand_and_memory():
    """amir's parallel jobs: 'job' gives every process of a job the job's one r and m (identical
    processes); 'process' gives each its own, from streams of their own, so single jobs, arrivals
    and widths are the same draws under both."""
    params = full_params({"parallel_fraction": 0.5})
    loads = {mode: make_workload({**params, "parallel_draws": mode}, streams(3)).procs for mode in ("job", "process")}
    by_job = {mode: {} for mode in loads}
    for mode, procs in loads.items():
        for p in procs:
            by_job[mode].setdefault(p.job, []).append(p)
    wide = [j for j, ps in by_job["job"].items() if len(ps) > 1]
    assert wide and by_job["job"].keys() == by_job["process"].keys()
    for j in wide:
        assert len({(p.demand, p.memory) for p in by_job["job"][j]}) == 1
        assert len({(p.demand, p.memory) for p in by_job["process"][j]}) == len(by_job["process"][j])
        assert all(p.demand >= 20.0 and p.memory <= 64.0 for p in by_job["process"][j])
    for mode in loads:
        assert [p.arrival for p in loads[mode]] == [p.arrival for p in loads["job"]]
    parallel = streams(3)["jobs"].random(len(by_job["job"])) < 0.5   # the workload's first draws of "jobs"
    singles = [j for j in by_job["job"] if not parallel[j]]
    assert singles and [by_job["job"][j][0][3:5] for j in singles] == [by_job["process"][j][0][3:5] for j in singles]


def _beside_background(demand: float, draws: list[float]) -> float:
    """Completion of a process started at t=0 on a speed-1 machine beside a background process
    whose bursts and idle periods are draws[0], draws[1], draws[2], ...: during a burst each of the
    two gets 1/2, during an idle period the process runs alone."""
    t, left = 0.0, demand
    for burst, idle in zip(draws[0::2], draws[1::2]):
        if left <= burst:
            return t + 2 * left
        t, left = t + 2 * burst, left - burst
        if left <= idle:
            return t + left
        t, left = t + idle, left - idle
    raise AssertionError("not enough draws")


def test_background_load_counts_but_is_not_measured():
    """pvm puts batch process i on machine i of 16; background process k (k < 8) shares machine k,
    alternating bursts and idle periods drawn U(0, 30) from its own seed. Process i >= 8 ends at 300,
    process k < 8 as _beside_background says; only the 16 batch processes are measured."""
    params = batch(16, background_procs=8)
    workload = make_workload(params, streams())
    result = simulate(params, workload, "pvm", streams())
    expected = {i: 300.0 for i in range(16)}
    for k, spec in enumerate(workload.background):
        draws = (np.random.Generator(np.random.PCG64(spec.seed)).random(2000) * spec.max_period).tolist()
        expected[k] = _beside_background(300.0, draws)
    assert {p.pid: p.completion for p in result.procs} == pytest.approx(expected, rel=1e-9)
    assert all(expected[k] > 300.0 for k in range(8))
    assert result.metrics["jobs"] == 16
    assert result.metrics["makespan"] == pytest.approx(max(expected.values()), rel=1e-9)


def test_job_slowdown_counts_each_parallel_job_once():
    """One pvm run on the amir stream, counted per process and per job: per job, the slowdown is
    (last completion of its processes - arrival) / demand, which the processes of a job share."""
    params = full_params({})
    workload = make_workload(params, streams(4))
    run = {mode: simulate({**params, "parallel_job_slowdown": mode}, workload, "pvm", streams(4))
           for mode in ("process", "job")}
    procs = run["process"].procs
    last: dict[int, float] = {}
    for p in procs:
        last[p.job] = max(last.get(p.job, -math.inf), p.completion)
    job_slowdowns = [(last[p.job] - p.arrival) / p.demand for p in {p.job: p for p in procs}.values()]
    assert len(last) < len(procs)  # the stream has parallel jobs
    assert run["process"].metrics["jobs"] == len(procs) and run["job"].metrics["jobs"] == len(last)
    assert run["process"].metrics["slowdown_sum"] == pytest.approx(
        math.fsum((p.completion - p.arrival) / p.demand for p in procs), rel=1e-12)
    assert run["job"].metrics["slowdown_sum"] == pytest.approx(math.fsum(job_slowdowns), rel=1e-12)
    assert run["job"].metrics["makespan"] == run["process"].metrics["makespan"]


def test_enhanced_pvm_keeps_big_processes_off_small_memories():
    """Four 12 MB processes of demand 100 at t=0 on a 64 MB and a 16 MB machine, both speed 1; base 2.
    Marginal cost = memory part + CPU part. On the small machine the memory part alone is
    2**0.75 - 1 = 0.682; on the big one it is 2**(12k/64) - 2**(12(k-1)/64) for the k-th process
    (0.139, 0.158, 0.180, 0.205) and the CPU part 1, 0.586, 0.268, 0.318 (L = 1, 2, 4, 4), against
    1, 0.414, 0.189, 0.189 on the small one: every process goes to the big machine, and the four
    share it to the end at 400. pvm's round robin puts two on the small machine, 24 MB > 16 MB: they
    thrash (rate 1/20) and end at 2000, the big machine's pair at 200."""
    params = full_params({"machines": [{"name": "big", "count": 1, "speed": 1.0, "memory_mb": 64},
                                       {"name": "small", "count": 1, "speed": 1.0, "memory_mb": 16}]})
    workload = Workload(tuple(ProcSpec(i, i, 0.0, 100.0, 12.0, 0, True) for i in range(4)))
    enhanced = simulate(params, workload, "enhanced-pvm", streams()).procs
    assert {p.pid: p.completion for p in enhanced} == pytest.approx({i: 400.0 for i in range(4)})
    pvm = simulate(params, workload, "pvm", streams()).procs
    assert {p.pid: p.completion for p in pvm} == pytest.approx({0: 200.0, 1: 2000.0, 2: 200.0, 3: 2000.0})


_BARE_PACKAGE = """
import importlib, sys, types
from pathlib import Path
import simcore.models
package = types.ModuleType("simcore.models.cluster")
package.__path__ = [str(Path(simcore.models.__file__).parent / "cluster")]
sys.modules["simcore.models.cluster"] = package
"""


@pytest.mark.parametrize("module", ["mosix", "opportunity", "policies"])
@pytest.mark.parametrize("bare", [False, True], ids=["package", "bare"])
def test_each_policy_module_imports_alone(module, bare, root):
    """A fresh interpreter imports one policy module. Through the package, every policy is then
    registered. With the package's __init__ skipped ('bare'), the module's own imports must stand
    alone: a cycle between the policy modules (policies -> mosix -> policies) fails here."""
    check = (f"import importlib; importlib.import_module('simcore.models.cluster.{module}')\n"
             "from simcore.models.registry import policy_names\n"
             f"assert {bare} or set(policy_names('cluster')) >= {set(POLICIES)!r}, policy_names('cluster')\n")
    proc = subprocess.run([sys.executable, "-c", (_BARE_PACKAGE if bare else "") + check], cwd=root,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="workload"):
        run_replication({"workload": "nope"}, ["pvm"], streams())
    with pytest.raises(InputError):
        run_replication({"no_such_parameter": 1}, ["pvm"], streams())
