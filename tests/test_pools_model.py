"""The processor-pool model (zhou91): every decision rule on a scripted scenario derived by hand,
the workload's distribution, the M/G/P limit, and the invariants of a run. The scenarios run the
compiled rules the experiments run (pool_kernels.py), read through the system's views and log."""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models import registry
from simcore.models.pools import full_params, model, policies, simulate
from simcore.models.pools import pool_kernels as PK
from simcore.models.pools import slots_kernels as SL
from simcore.models.pools import system as pool_system
from simcore.models.pools.system import PoolSystem, Thread
from simcore.models.pools.workload import (
    Job,
    JobStream,
    arrival_rate,
    expected_minimum_response,
    geometric_q,
    parallelism_pmf,
    round_half_up,
    thread_demands,
    truncated_mean,
)
from simcore.models.registry import get_policy
from simcore.stats.warmup import mser_truncation

NO_OVERHEADS = {"in_pool_factor": 0.0, "spanning_factor": 0.0, "contention_factor": 0.0, "cache_cost": 0.0}


def make(policy: str = "limited-spanning", **params):
    """A PoolSystem on a fresh engine (D = 2 unless given: placement tests hand d to the policy),
    with a log of 1000 rows; finished jobs collect in ``.finished_jobs`` when the run closes."""
    full = full_params({"mean_parallelism": 2.0, **params})
    done = []
    system = PoolSystem(
        Engine(), full, get_policy("pools", policy)(full, np.random.default_rng(0)), done.append, log=1000
    )
    system.finished_jobs = done
    return system


def occupy(system, pool: int, n: int) -> None:
    """``n`` long threads (of one filler job) join ``pool``: they take its lowest idle processors,
    and wait once those are taken."""
    filler = pool_system.JobState(job(900 + pool))
    filler.phase = pool_system.FINAL
    for _ in range(n):
        system.enqueue(Thread(filler, 1e9, pool, True))


def job(index=0, arrival=0.0, d=1, u=None) -> Job:
    return Job(index, arrival, d, np.zeros(d) if u is None else np.asarray(u, dtype=float))


def run_jobs(system, jobs) -> None:
    for j in jobs:
        system.engine.call(j.arrival, system.arrive, j)
    system.engine.run()
    system.close()


def dispatches(system) -> list[tuple]:
    """(time, cpu, master, work start) of every dispatch so far."""
    return [(at, cpu, master, start) for kind, at, cpu, _, _, master, start in system.log_rows() if kind == PK.DISPATCH]


# -- the workload ---------------------------------------------------------------------------------

def test_the_arrival_rate_is_the_papers_0_0178():
    """60 x 60% / (10 + 100 x 20 + 10) = 36 / 2020 = 0.017822 jobs per unit (section 2)."""
    rate = arrival_rate(full_params({}))
    assert rate == pytest.approx(36 / 2020, rel=1e-12)
    assert round(rate, 4) == 0.0178


def test_the_bounded_geometric_has_the_true_mean_and_the_papers_tail_shares():
    """P = 60, D = 20: the truncated pmf has mean 20; 15.7% of jobs have d <= 4 (12.0% d < 4, the
    paper's 'd < 4' is the d <= 4 share) and about 6% have d in 50..60."""
    pmf = parallelism_pmf(20.0, 60)
    k = np.arange(1, 61)
    assert pmf.sum() == pytest.approx(1.0) and (k * pmf).sum() == pytest.approx(20.0, abs=1e-9)
    assert round(pmf[:4].sum(), 3) == 0.157 and round(pmf[:3].sum(), 3) == 0.120
    assert round(pmf[49:].sum(), 2) == 0.06


def test_the_drawn_parallelism_matches_its_distribution_within_sampling_error():
    """200 000 draws of the stream (redrawn above P): the mean and both tail shares lie within 4
    standard errors of the exact values."""
    stream = JobStream(full_params({}), Streams(replication_seed(3, "geo", 0, 0)))
    d = np.array([stream._d() for _ in range(200_000)])
    assert d.min() >= 1 and d.max() <= 60
    n = len(d)
    assert abs(d.mean() - 20.0) < 4 * d.std() / math.sqrt(n)
    for share, exact in (
        ((d <= 4).mean(), 0.15688),
        (((d >= 50) & (d <= 60)).mean(), parallelism_pmf(20.0, 60)[49:].sum()),
    ):
        assert abs(share - exact) < 4 * math.sqrt(exact * (1 - exact) / n)


def test_the_geometric_parameter_and_its_domain():
    """D = 1 is the point mass (q = 1); the mean of a parallelism bounded by P stays below (P + 1) / 2."""
    assert geometric_q(1.0, 60) == 1.0 and parallelism_pmf(1.0, 5).tolist() == [1, 0, 0, 0, 0]
    assert truncated_mean(geometric_q(10.0, 60), 60) == pytest.approx(10.0, abs=1e-9)
    for bad in (0.5, 30.5, 40.0):
        with pytest.raises(InputError, match="mean_parallelism"):
            geometric_q(bad, 60)
    with pytest.raises(InputError, match="mean_parallelism < \\(processors \\+ 1\\) / 2"):
        full_params({"processors": 20, "mean_parallelism": 20.0})
    with pytest.raises(InputError, match="pool_size divides processors"):
        full_params({"pool_size": 7})


def test_thread_demands_split_the_para_work_over_the_actual_threads():
    """d = 4 split over a = 2: base 100 x 4 / 2 = 200, each 200 + 10 u_i; the first a spreads are used."""
    assert thread_demands(full_params({}), 4, 2, np.array([0.5, -1.0, 0.9, 0.9])) == [205.0, 190.0]


def test_the_minimum_response_is_init_plus_the_expected_longest_thread_plus_final():
    """With D = 1 every job has one U(90, 110) thread: 10 + 100 + 10 = 120. With D = 20 the
    expected max of d uniforms, 90 + 20 d / (d + 1), averaged over d: 127.9 (the paper: about
    127), which a Monte Carlo of the stream's own draws confirms within sampling error."""
    assert expected_minimum_response(full_params({"mean_parallelism": 1.0})) == pytest.approx(120.0)
    params = full_params({})
    exact = expected_minimum_response(params)
    assert 127.5 < exact < 128.5
    stream = JobStream(params, Streams(replication_seed(5, "min", 0, 0)))
    samples = []
    for _ in range(20_000):
        j = stream.next()
        samples.append(20.0 + max(thread_demands(params, j.d, j.d, j.u)))
    s = np.array(samples)
    assert abs(s.mean() - exact) < 4 * s.std() / math.sqrt(len(s))


def test_round_is_half_up():
    assert [round_half_up(x) for x in (0.49, 0.5, 1.5, 2.5, 2.49)] == [0, 1, 2, 3, 2]


# -- placement ---------------------------------------------------------------------------------------

def test_the_papers_placement_example_3_and_7():
    """Section 3.2: two 10-processor candidate pools with 2 and 6 idle processors, d = 20,
    G = 0.5: a = min(20, max(8, 10, 1)) = 10; 8 threads take the idle processors, the other two
    balance the loads (10 and 10, then one each): 3 and 7 threads, 11 active in each pool."""
    system = make("limited-spanning", processors=20, pool_size=10)
    occupy(system, 0, 8)
    occupy(system, 1, 4)
    # limited: x = round(0.8 x 20 / 10) = 2 pools
    assert system.policy.place(20, 0, system) == (10, [(0, 3), (1, 7)])


def test_candidates_start_at_home_then_follow_load_and_stop_once_idle_processors_suffice():
    """Four pools of 5 with 3, 1, 4, 1 busy: home 2, then pools 1 and 3 (load 1, by index), then 0.
    d = 5: pool 2 has 1 idle, pool 1 adds 4: 5 >= d, the walk stops there."""
    system = make("unlimited-spanning", processors=20, pool_size=5)
    for q, n in enumerate((3, 1, 4, 1)):
        occupy(system, q, n)
    assert system.policy.candidates(5, 2, system) == [2, 1]
    assert system.policy.place(5, 2, system) == (5, [(2, 1), (1, 4)])
    assert system.policy.candidates(9, 2, system) == [2, 1, 3]     # 1 + 4 + 4 = 9
    assert system.policy.candidates(30, 2, system) == [2, 1, 3, 0]


def test_no_spanning_keeps_every_thread_at_home():
    """No spanning, unrestricted: d = 8 in a home pool of 5 with 2 idle: all 8 there (2 run, 6 queue)."""
    system = make("no-spanning-unrestricted", processors=20, pool_size=5)
    occupy(system, 1, 3)
    assert system.policy.place(8, 1, system) == (8, [(1, 8)])


@pytest.mark.parametrize("F, d, p, P, pools", [
    (0.8, 20, 10, 60, 2),    # round(1.6) = 2
    (0.8, 6, 10, 60, 1),     # round(0.48) = 0 < 1: one pool
    (0.5, 10, 2, 60, 3),     # round(2.5) = 3, half up
    (0.8, 60, 10, 60, 5),    # round(4.8) = 5
    (2.0, 60, 10, 60, 6),    # 12 > P/p = 6: all pools
    (0.0, 60, 5, 60, 1),     # F = 0 is no spanning
])
def test_limited_spanning_allows_round_F_d_over_p_pools(F, d, p, P, pools):
    policy = get_policy("pools", "limited-spanning")({"spanning_control": F}, np.random.default_rng(0))
    assert policy.allowed_pools(d, p, P // p) == pools


def test_the_other_spannings_allow_one_pool_or_all():
    rng = np.random.default_rng(0)
    assert get_policy("pools", "no-spanning")({}, rng).allowed_pools(60, 5, 12) == 1
    assert get_policy("pools", "unlimited-spanning")({}, rng).allowed_pools(1, 5, 12) == 12


@pytest.mark.parametrize("G, d, idle, a", [
    (0.5, 20, 3, 10),     # max(3, 10, 1)
    (0.5, 20, 15, 15),    # the idle processors
    (0.5, 20, 25, 20),    # never above d
    (0.0, 20, 0, 1),      # at least one thread
    (0.5, 5, 0, 3),       # ceil(2.5)
    (1.0, 7, 0, 7),       # G = 1 is unrestricted
])
def test_restricted_parallelism(G, d, idle, a):
    policy = get_policy("pools", "limited-spanning")({"parallelism_control": G}, np.random.default_rng(0))
    assert policy.parallelism(d, idle) == a


def test_unrestricted_parallelism_is_d():
    policy = get_policy("pools", "limited-spanning-unrestricted")({}, np.random.default_rng(0))
    assert policy.parallelism(20, 0) == 20


# -- the machine -------------------------------------------------------------------------------------

def test_the_home_pool_is_the_least_loaded_lowest_numbered():
    system = make(processors=30, pool_size=10)
    occupy(system, 0, 2)
    state = system.arrive(job())
    assert state.home == 1 and system.pools[1].active == 1


def test_para_threads_are_inflated_by_in_pool_and_spanning_overheads():
    """P = 60 in pools of 30 (> p0 = 10): w = 0.005 x 20 = 0.1. A d = 2 job at home in pool 0,
    which has one idle processor, spans pools 0 and 1 (unlimited): s = 0.01 x (2 - 1) x 30 = 0.3.
    Its threads, 100 + 10 x 0.5 and 100 - 10 x 0.5, need 105 x 1.4 = 147 and 95 x 1.4 = 133; the
    master sleeps, so pool 0 counts 29 busy + 1 thread."""
    system = make("unlimited-spanning", processors=60, pool_size=30)
    occupy(system, 0, 29)
    state = pool_system.JobState(job(d=2, u=[0.5, -0.5]))
    state.home = 0
    system.fork(state)
    assert (state.a, state.k) == (2, 2)
    lefts = sorted(t.left for t in system.on_cpu if t is not None and t.job is state)
    assert lefts == pytest.approx([133.0, 147.0])
    assert system.on_cpu[29].left == pytest.approx(147.0) and system.pools[0].active == 30
    assert system.pools[1].active == 1


def test_no_in_pool_overhead_up_to_p0():
    """Pools of 10 = p0: w = 0; one pool used: s = 0; demand 100 x 1 / 1 + 0 = 100."""
    system = make("no-spanning", processors=60, pool_size=10, spanning_factor=0.5)
    state = pool_system.JobState(job(d=1))
    state.home = 3
    system.fork(state)
    assert [t.left for t in system.on_cpu if t is not None] == [100.0]


@pytest.mark.parametrize("pool_size, cost", [(30, (0.065, 0.06125, 0.065)), (10, (0.005, 0.00125, 0.005))])
def test_switch_costs(pool_size, cost):
    """Pools of 30, p0 = 10: contention 0.003 x 20 = 0.06 (pools of 10: none). One unit of job A
    at 0 on a fresh processor (CPU 0): + c = 0.005; A again at 2, on CPU 0, which last ran A:
    + t c = 0.00125; job B at 4, on CPU 0: + c."""
    system = make(processors=60, pool_size=pool_size)
    a = pool_system.JobState(job(0))
    a.phase = pool_system.FINAL
    timeline(
        system, {"A1": (0.0, final_thread(a, 1.0)), "A2": (2.0, final_thread(a, 1.0)), "B": (4.0, final_thread(1, 1.0))}
    )
    assert [(cpu, start - at) for at, cpu, _, start in dispatches(system)] == \
           [(0, pytest.approx(cost[0])), (0, pytest.approx(cost[1])), (0, pytest.approx(cost[2]))]


def test_a_job_alone_runs_its_phases_back_to_back_with_switches_only_between_them():
    """One processor, c = 1, t = 0.5, no contention (p <= p0). INIT on a fresh processor: switch 1,
    work [1, 11); PARA (same job): 0.5, [11.5, 111.5), ten slices of 10 with nobody waiting, so no
    switch; FINAL: 0.5, [112, 122). Response 122, three switches."""
    system = make("no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, cache_cost=1.0,
                  cache_fraction=0.5, contention_factor=0.0)
    run_jobs(system, [job()])
    (state,) = system.finished_jobs
    assert state.done_at == pytest.approx(122.0) and system.switches == 3 and system.area() == 122.0


def test_round_robin_of_two_jobs_on_one_processor():
    """One processor, T = 10, no overheads; A arrives at 0, B at 5, both d = 1 (demands 10, 100, 10).
    A's INIT [0, 10); B's INIT [10, 20) (the freed processor takes the queue's head before A's PARA
    is queued); A's PARA from 20, then PARA slices alternate every 10 (B from 30), A's tenth slice
    ends at 210, B's last 10 run [210, 220); FINALs: A [220, 230), B [230, 240). Responses 230 and
    235; 2 + 19 + 3 = 24 switches."""
    system = make("no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, **NO_OVERHEADS)
    run_jobs(system, [job(0, 0.0), job(1, 5.0)])
    done = {s.job.index: s.done_at - s.job.arrival for s in system.finished_jobs}
    assert done == pytest.approx({0: 230.0, 1: 235.0}) and system.switches == 24


def test_threads_spread_over_pools_and_final_runs_at_home():
    """Two pools of 2, no overheads, d = 4 (unlimited, restricted: a = min(4, max(4, 2, 1)) = 4).
    INIT [0, 10) on CPU 0 (pool 0, home); the four threads take all four processors [10, 110);
    FINAL runs in pool 0 [110, 120). Response 120, A = 4, two pools."""
    system = make("unlimited-spanning", processors=4, pool_size=2, mean_parallelism=2.0, **NO_OVERHEADS)
    run_jobs(system, [job(d=4)])
    cpus = [(cpu, master) for _, cpu, master, _ in dispatches(system)]
    (state,) = system.finished_jobs
    assert state.done_at == pytest.approx(120.0) and (state.a, state.k, state.home) == (4, 2, 0)
    assert system.area() == 420.0
    assert cpus[0] == (0, True) and sorted(cpus[1:5]) == [(0, False), (1, False), (2, False), (3, False)]
    assert cpus[5][1] is True and cpus[5][0] in (0, 1)


# -- a whole run ---------------------------------------------------------------------------------

def check_invariants(system) -> None:
    """No processor runs two threads and no thread is in two places; loads count what runs and waits."""
    running = [t for t in system.on_cpu if t is not None]
    queued = [t for pool in system.pools for t in pool.queue]
    assert len({t.serial for t in running + queued}) == len(running) + len(queued)
    assert system.busy == len(running)
    for pool in system.pools:
        on = [c for c in pool.procs if system.on_cpu[c] is not None]
        assert pool.active == len(on) + len(pool.queue)
        assert sorted(pool.idle) == sorted(set(pool.procs) - set(on))
        assert all(t.pool == pool.index for t in pool.queue)
        assert not pool.queue or not pool.idle


def test_invariants_hold_and_jobs_finish_after_all_their_threads(monkeypatch):
    """A loaded run (small pools, spanning, overheads): after every event no processor holds two
    threads, no thread is both queued and running, and a job ends only once all its a threads have:
    in the log, between a job's INIT end and its FINAL end, exactly a PARA threads of it end."""
    checks = []

    def attach(engine, system):
        system.check = lambda s: checks.append(check_invariants(s))

    monkeypatch.setattr(pool_system, "PoolSystem", functools.partial(PoolSystem, log=100_000))
    params = full_params({"processors": 20, "pool_size": 5, "mean_parallelism": 6.0, "load": 0.8, "jobs": 150,
                          "time_slice": 5.0})
    run = model.simulate(params, "limited-spanning", Streams(replication_seed(2, "inv", 0, 0)), attach=attach)
    assert len(run.jobs) == 150 and all(s.done_at > s.job.arrival for s in run.jobs)
    assert run.metrics["spanning_share"] > 0
    ends: dict[int, list[bool]] = {}
    for kind, _, _, _, state, master, _ in run.system.log_rows():
        if kind == PK.END:
            ends.setdefault(state.job.index, []).append(master)
    assert len(checks) >= sum(map(len, ends.values()))        # a check after every thread's end at least
    for state in run.jobs:
        assert ends[state.job.index] == [True] + [False] * state.a + [True] and state.running == 0


def test_lazy_slices_change_nothing():
    """Not simulating slice ends while nobody waits gives the same run as simulating every one
    (single-thread jobs: no two processors share a slice boundary, so no tie decides an order)."""
    params = full_params({"processors": 4, "pool_size": 2, "mean_parallelism": 1.0, "time_slice": 3.0,
                          "jobs": 400, "load": 0.7})
    runs = []
    for lazy in (True, False):
        PoolSystem.lazy = lazy
        try:
            runs.append(simulate(params, "unlimited-spanning", Streams(replication_seed(1, "lazy", 0, 0))))
        finally:
            PoolSystem.lazy = True
    (a, b) = runs
    assert [s.done_at for s in a.jobs] == pytest.approx([s.done_at for s in b.jobs], rel=1e-12)
    assert a.metrics["events"] < b.metrics["events"]


def erlang_c_response(c: int, lam: float, mean_service: float) -> float:
    """Mean response of M/M/c: E[S] + C(c, a) E[S] / (c (1 - rho)), C the Erlang C probability."""
    a = lam * mean_service
    rho = a / c
    below = sum(a ** k / math.factorial(k) for k in range(c))
    top = a ** c / math.factorial(c) / (1 - rho)
    return mean_service + top / (below + top) * mean_service / (c * (1 - rho))


@pytest.mark.slow
def test_one_pool_without_overheads_and_d_1_is_the_m_g_p_processor_sharing_queue():
    """D = 1, one pool of P = 2, no overheads, T = 1 against jobs of 120 units: each job is one
    thread at a time, served round robin, close to processor sharing with at most P servers
    busy, a symmetric queue, insensitive: its mean response is M/M/2's, 120 + C(2, 1.2) x 120 /
    (2 x 0.4) = 187.5 (Erlang C). Eight replications of 4000 jobs agree within 4 standard errors
    plus the round-robin quantum."""
    params = full_params({"processors": 2, "pool_size": 2, "mean_parallelism": 1.0, "time_slice": 1.0,
                          "jobs": 4000, **NO_OVERHEADS})
    exact = erlang_c_response(2, arrival_rate(params), 120.0)
    assert exact == pytest.approx(187.5)
    means = np.array(
        [
            simulate(params, "no-spanning", Streams(replication_seed(11, "mgp", 0, r))).metrics["mean_response"]
            for r in range(8)
        ]
    )
    se = means.std(ddof=1) / math.sqrt(len(means))
    assert abs(means.mean() - exact) < 4 * se + params["time_slice"]


@pytest.mark.slow
def test_with_its_warm_up_rule_one_processor_at_load_0_8_is_the_m_g_1_processor_sharing_queue():
    """P = 1, D = 1, no overheads, T = 1 against jobs of 120 units at load 0.8: round robin with
    a small quantum, M/G/1-PS, whose mean response is E[S] / (1 - rho) = 120 / 0.2 = 600 whatever
    the law of S. With the default deletion (the first 10% of 5000 jobs), 40 replications agree
    within 4 standard errors plus the quantum (MSER-5 per run came out low here:
    tests/test_warmup.py shows why)."""
    params = full_params({"processors": 1, "pool_size": 1, "mean_parallelism": 1.0, "time_slice": 1.0, "load": 0.8,
                          "jobs": 5000, **NO_OVERHEADS})
    assert params["warmup"] == "fraction"
    means = np.array(
        [
            simulate(params, "no-spanning", Streams(replication_seed(3, "mg1", 0, r))).metrics["mean_response"]
            for r in range(40)
        ]
    )
    se = means.std(ddof=1) / math.sqrt(len(means))
    assert abs(means.mean() - 600.0) < 4 * se + params["time_slice"]


def test_without_overheads_the_utilisation_is_the_load():
    """Work is conserved: with no overheads the busy share of the processors is L (0.6) within
    sampling error over six replications."""
    params = full_params({"processors": 20, "pool_size": 20, "mean_parallelism": 5.0, "jobs": 1500, **NO_OVERHEADS})
    u = np.array([simulate(params, "no-spanning", Streams(replication_seed(4, "u", 0, r))).metrics["utilization"]
                  for r in range(6)])
    assert abs(u.mean() - 0.6) < 4 * u.std(ddof=1) / math.sqrt(len(u))


def test_policies_see_the_same_jobs_and_runs_repeat():
    params = full_params({"processors": 20, "pool_size": 5, "mean_parallelism": 4.0, "jobs": 100})
    s = Streams(replication_seed(9, "crn", 0, 0))
    a = simulate(params, "no-spanning", s)
    b = simulate(params, "unlimited-spanning", s)
    assert [x.job.d for x in a.jobs] == [x.job.d for x in b.jobs]
    assert [x.job.arrival for x in a.jobs] == [x.job.arrival for x in b.jobs]
    again = model.run_replication({"processors": 20, "pool_size": 5, "mean_parallelism": 4.0, "jobs": 100},
                                  ["no-spanning"], Streams(replication_seed(9, "crn", 0, 0)))
    assert again["no-spanning"] == a.metrics


# -- the warm-up rule --------------------------------------------------------------------------------

def test_mser_5_deletes_a_biased_start():
    """Batches of 5: [100] then nine of 10. Keeping batch 1 gives a positive spread, deleting it
    none: MSER(1) = 0 is the first minimum, 5 observations go."""
    assert mser_truncation([100.0] * 5 + [10.0] * 45) == 5
    assert mser_truncation([7.0] * 50) == 0


def test_mser_5_stops_at_half_the_batches():
    """A steadily falling series: MSER(d) = 25 (n^2 - 1) / (12 n) over the n = m - d batches
    left grows with n, so the deepest allowed cut, m / 2 = 5 batches, 25 observations."""
    assert mser_truncation(list(range(50, 0, -1))) == 25
    assert mser_truncation([1.0, 2.0, 3.0]) == 0


def test_pool_size_all_is_one_pool_of_every_processor():
    system = make(processors=20, pool_size="all")
    assert len(system.pools) == 1 and system.p == 20 and system.pools[0].procs == list(range(20))
    with pytest.raises(InputError, match="pool_size = 'some' is not"):
        full_params({"pool_size": "some"})


# -- mutation tests by hand: the policy factory, placement, the machine's timeline ---------------

@pytest.mark.parametrize("name, spanning, restricted, class_name, hyper, doc", [
    ("no-spanning", "none", True, "NoSpanning", {"parallelism_control"}, "No spanning, restricted parallelism."),
    ("limited-spanning", "limited", True, "LimitedSpanning", {"spanning_control", "parallelism_control"},
     "Limited spanning, restricted parallelism."),
    ("unlimited-spanning", "unlimited", True, "UnlimitedSpanning", {"parallelism_control"},
     "Unlimited spanning, restricted parallelism."),
    ("no-spanning-unrestricted", "none", False, "NoSpanningUnrestricted", set(),
     "No spanning, unrestricted parallelism."),
    ("limited-spanning-unrestricted", "limited", False, "LimitedSpanningUnrestricted", {"spanning_control"},
     "Limited spanning, unrestricted parallelism."),
    ("unlimited-spanning-unrestricted", "unlimited", False, "UnlimitedSpanningUnrestricted", set(),
     "Unlimited spanning, unrestricted parallelism."),
])
def test_the_policy_factory_builds_and_registers_each_of_the_six_classes(monkeypatch, name, spanning, restricted,
                                                                         class_name, hyper, doc):
    """Each name is a PoolPolicy subclass named after it in CamelCase, with its spanning and
    restricted flags, F among its hyperparameters exactly when spanning is limited and G exactly
    when parallelism is restricted, a docstring saying both, registered under ('pools', name).
    The registered class is checked, and a class the factory builds afresh (on a copy of the
    registry, so the real one stays as it was)."""
    registered = get_policy("pools", name)
    monkeypatch.setattr(registry, "_POLICIES", dict(registry._POLICIES))
    monkeypatch.setattr(registry, "_PARAMETERS", {m: dict(p) for m, p in registry._PARAMETERS.items()})
    fresh = policies._policy(name, spanning, restricted)
    assert get_policy("pools", name) is fresh
    for cls in (registered, fresh):
        assert issubclass(cls, policies.PoolPolicy) and cls is not policies.PoolPolicy
        assert cls.__name__ == class_name and cls.__module__ == "simcore.models.pools.policies"
        assert (cls.name, cls.spanning, cls.restricted) == (name, spanning, restricted)
        assert set(cls.HYPERPARAMETERS) == hyper and cls.__doc__ == doc
        assert all(cls.HYPERPARAMETERS[k] is {**policies.SPANNING_F, **policies.PARALLELISM_G}[k] for k in hyper)


def test_threads_beyond_the_idle_processors_balance_the_loads_one_at_a_time():
    """Two pools of 2, both busy, pool 1 with a thread waiting too (active 2 and 3); unlimited
    spanning, unrestricted, d = 2 at home 0: both pools are candidates, none idle, a = 2.
    Thread 1 to pool 0 (2 < 3), loads 3 and 3; thread 2 to pool 0 (tie, first): 2 and 0."""
    system = make("unlimited-spanning-unrestricted", processors=4, pool_size=2)
    occupy(system, 0, 2)
    occupy(system, 1, 3)
    assert [(p.active, p.n_idle, p.waiting) for p in system.pools] == [(2, 0, 0), (3, 0, 1)]
    assert system.policy.place(2, 0, system) == (2, [(0, 2), (1, 0)])


def test_a_candidate_pool_given_no_thread_is_not_a_pool_the_job_uses():
    """Two pools of 2, home pool 0 full, unlimited spanning, d = 2: candidates 0 (no idle) and 1
    (2 idle), a = min(2, max(2, 1, 1)) = 2, placed 0 and 2: the job uses one pool, k = 1, s = 0,
    w = 0 (p <= p0), so both threads need 100 x 2 / 2 = 100 on pool 1's CPUs 2 and 3."""
    system = make("unlimited-spanning", processors=4, pool_size=2)
    occupy(system, 0, 2)
    state = pool_system.JobState(job(d=2))
    state.home = 0
    system.fork(state)
    assert (state.a, state.k, state.running) == (2, 1, 2)
    assert [t.left if t and t.job is state else None for t in system.on_cpu] == [None, None, 100.0, 100.0]


def test_each_para_thread_gets_its_own_spread_in_placement_order():
    """One pool of 3 idle CPUs, no spanning, d = 3, u = (0.5, -0.5, 0.1): thread i takes the
    i-th lowest idle CPU and 100 + 10 u_i: CPU 0 105, CPU 1 95, CPU 2 101."""
    system = make("no-spanning", processors=3, pool_size=3, mean_parallelism=1.0)
    state = pool_system.JobState(job(d=3, u=[0.5, -0.5, 0.1]))
    state.home = 0
    system.fork(state)
    assert [t.left for t in system.on_cpu] == pytest.approx([105.0, 95.0, 101.0])


@pytest.mark.parametrize("a, counts", [(2, [(0, 1)]), (0, [])])
def test_a_placement_that_does_not_add_up_to_a_is_refused(a, counts):
    """A policy must place exactly its a >= 1 threads: 1 placed for a = 2, or a = 0, is a bug."""

    class Broken:
        name = "broken"

        def place(self, d, home, system):
            return a, counts

    system = make("no-spanning", processors=2, pool_size=2, mean_parallelism=1.0)
    system.policy = Broken()
    state = pool_system.JobState(job(d=2))
    state.home = 0
    with pytest.raises(RuntimeError, match=re.escape(f"pools policy 'broken' placed {counts} for a = {a}")):
        system.fork(state)


def test_a_lone_job_goes_through_init_para_final_and_its_processor_is_busy_throughout():
    """One processor, no overheads, d = 1: INIT [0, 10) in phase INIT, PARA [10, 110) in phase
    PARA, FINAL [110, 120) in phase FINAL; the busy-processor integral is 120."""
    system = make("no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, **NO_OVERHEADS)
    run_jobs(system, [job()])
    assert [(at, master) for at, _, master, _ in dispatches(system)] == [(0.0, True), (10.0, False), (110.0, True)]
    (state,) = system.finished_jobs
    assert state.done_at == 120.0 and state.phase == pool_system.FINAL and system.area() == 120.0


def final_thread(state_or_index, left: float, pool: int = 0) -> Thread:
    """A master thread in its job's FINAL phase: when its work ends the job is done (no next phase)."""
    state = state_or_index
    if not isinstance(state, pool_system.JobState):
        state = pool_system.JobState(job(state_or_index))
        state.phase = pool_system.FINAL
    return Thread(state, left, pool, True)


def timeline(system, threads) -> dict:
    """Enqueue ``{name: (time, thread)}`` (in that order at equal times), run; {name: (cpu, start, end)}
    from the log: a thread's first dispatch and its end."""
    serials = {}
    for name, (at, thread) in threads.items():
        system.engine.call(at, lambda nt: serials.__setitem__(nt[0], system.enqueue(nt[1])), (name, thread))
    system.engine.run()
    system.close()
    names = {serial: name for name, serial in serials.items()}
    out = {}
    for kind, at, cpu, serial, _, _, start in system.log_rows():
        if kind == PK.DISPATCH:
            out.setdefault(names[serial], [cpu, start, None])
        else:
            out[names[serial]][2] = at
    return {n: tuple(v) for n, v in out.items()}


@pytest.mark.parametrize("lazy", [True, False])
def test_a_thread_arriving_exactly_at_a_slice_end_is_served_at_once(lazy):
    """One processor, T = 10, no overheads: A (25 units) from 0; B (5) arrives at 10, when A's
    first slice ends: B waits, so A goes to the tail and B runs [10, 15), then A [15, 30).
    Lazy (the slice end is found when B arrives) and the reference (every slice end fired) agree.
    Busy throughout: the integral is 30, three switches."""
    system = make("no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, time_slice=10.0, **NO_OVERHEADS)
    system.set_lazy(lazy)
    runs = timeline(system, {"A": (0.0, final_thread(0, 25.0)), "B": (10.0, final_thread(1, 5.0))})
    assert runs == {"A": (0, 0.0, 30.0), "B": (0, 10.0, 15.0)}
    assert system.area() == 30.0 and system.switches == 3


@pytest.mark.parametrize("lazy", [True, False])
def test_processors_finishing_together_take_the_queue_in_the_order_their_timers_were_set(lazy):
    """Two CPUs in one pool, T = 100, c = 1, t = 0.5, no contention (p <= p0). At 0: W (job A,
    2 units) on CPU 0, work [1, 3); Y (job B, 10) on CPU 1, work [1, 11); X (job C, 7) waits.
    At 3 CPU 0 takes X: another job, c, work [4, 11). At 5 Z (job C, 5) waits. Both CPUs end at
    11; CPU 1's timer was set first (at 0, CPU 0's at 3) and callbacks due together fire in the
    order they were set, so CPU 1 takes Z: last ran job B, c, work [12, 17) (on CPU 0, after X of
    the same job, t c would start it at 11.5). Re-arming the CPUs when Z queues moves neither
    timer; lazy and the reference agree. Busy: CPU 0 [0, 11), CPU 1 [0, 17): 28."""
    system = make("no-spanning", processors=2, pool_size=2, mean_parallelism=1.0, time_slice=100.0, cache_cost=1.0,
                  cache_fraction=0.5, contention_factor=0.0, in_pool_factor=0.0)
    system.set_lazy(lazy)
    c = pool_system.JobState(job(2))
    c.phase = pool_system.FINAL
    runs = timeline(system, {"W": (0.0, final_thread(0, 2.0)), "Y": (0.0, final_thread(1, 10.0)),
                             "X": (0.0, final_thread(c, 7.0)), "Z": (5.0, final_thread(c, 5.0))})
    assert runs == {"W": (0, 1.0, 3.0), "Y": (1, 1.0, 11.0), "X": (0, 4.0, 11.0), "Z": (1, 12.0, 17.0)}
    assert system.switches == 4 and system.area() == 28.0


@pytest.mark.parametrize("lazy", [True, False])
def test_a_rounding_remainder_at_a_slice_end_is_done_not_a_new_turn(lazy):
    """One processor, T = 10, no overheads; X (5 units), V (10 + 1e-9) and Q (3) queue at 0. X runs
    [0, 5); V from 5 while Q waits, so its slice ends at 15 with 1e-9 left: that is EPS (to the last
    bit, 10.000000001 - 1e-9 == 10.0), a rounding remainder, so V is done at 15 and Q runs [15, 18)
    (V does not go behind Q for a turn of 1e-9). Lazy and the reference agree."""
    assert (10 + 1e-9) - pool_system.EPS == 10.0
    system = make("no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, time_slice=10.0, **NO_OVERHEADS)
    system.set_lazy(lazy)
    runs = timeline(system, {"X": (0.0, final_thread(0, 5.0)), "V": (0.0, final_thread(1, 10 + 1e-9)),
                             "Q": (0.0, final_thread(2, 3.0))})
    assert runs == {"X": (0, 0.0, 5.0), "V": (0, 5.0, 15.0), "Q": (0, 15.0, 18.0)} and system.switches == 3


def test_a_policy_keeps_the_generator_it_is_built_with():
    """The generator handed to a policy (its own stream in a run) is the one it draws from."""
    rng = np.random.default_rng(7)
    for name in ("no-spanning", "limited-spanning-unrestricted"):
        assert get_policy("pools", name)({}, rng).rng is rng


# -- queue monitoring -------------------------------------------------------------------------------

def test_queue_probes_read_each_pools_waiting_and_active_threads():
    """Two pools of 2; three threads queued into pool 0: two run, one waits (queue 1, active 3);
    pool 1 is empty."""
    system = make(processors=4, pool_size=2)
    state = pool_system.JobState(job())
    for _ in range(3):
        system.enqueue(Thread(state, 5.0, 0, False))
    readings = {name: probe() for name, probe in model.queue_probes(system).items()}
    assert readings == {"pool0.queue": 1, "pool0.active": 3, "pool1.queue": 0, "pool1.active": 0}


def test_a_monitored_replication_samples_every_queue_at_every_period():
    """Period 100 for 300 on a run of about 1800 units: times 0, 100, 200, 300 for each of the four
    probes; at 0 nothing has arrived yet."""
    params = {"processors": 4, "pool_size": 2, "mean_parallelism": 2.0, "jobs": 20}
    frame = model.monitor_replication(
        params, "limited-spanning", Streams(replication_seed(1, "mon", 0, 0)), 100.0, 300.0
    )
    assert sorted(frame.time.unique()) == [0.0, 100.0, 200.0, 300.0]
    assert sorted(frame.queue.unique()) == ["pool0.active", "pool0.queue", "pool1.active", "pool1.queue"]
    assert (frame[frame.time == 0.0].value == 0).all() and (frame.value >= 0).all()


def test_the_home_pool_of_each_arrival_is_the_least_loaded_then_lowest_numbered():
    """Three pools of one processor, no overheads, d = 1. A (0) takes pool 0 (all idle); B (1)
    pool 1, C (2) pool 2; at 125 A has ended (120) and pool 0 is empty again, so D (125) is at
    home in pool 0, while B and C still run. Ends: 120, 121, 122, 245."""
    system = make("no-spanning", processors=3, pool_size=1, mean_parallelism=1.0, **NO_OVERHEADS)
    run_jobs(system, [job(0, 0.0), job(1, 1.0), job(2, 2.0), job(3, 125.0)])
    assert {s.job.index: (s.home, s.done_at) for s in system.finished_jobs} == \
           {0: (0, 120.0), 1: (1, 121.0), 2: (2, 122.0), 3: (0, 245.0)}


def test_the_last_sampled_job_stops_the_run():
    """``simulate`` stops once the sampled jobs (here 10) have all ended: the clock stops at the
    last one's end, with later arrivals' jobs still running."""
    run = simulate(full_params({"jobs": 10, "load": 0.9}), "no-spanning", Streams(replication_seed(2, "s", 0, 0)))
    last = max(s.done_at for s in run.jobs)
    assert run.system.engine.now == last and all(s.done_at > 0 for s in run.jobs)
    assert run.system.busy > 0


def test_a_full_log_keeps_its_rows_and_says_how_many_it_could_not():
    """A log of 2 rows on the round robin of two jobs (24 dispatches): the run is the same (24
    switches), the first two rows are kept (A's INIT dispatched at 0 on CPU 0, then its end at 10,
    logged before B's INIT takes the CPU), and reading the log says it holds 2 rows of the run's
    more."""
    system = make("no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, **NO_OVERHEADS)
    small = PoolSystem(system.engine, system.params, system.policy, [].append, log=2)
    run_jobs(small, [job(0, 0.0), job(1, 5.0)])
    assert small.switches == 24
    with pytest.raises(RuntimeError, match="the log holds 2 rows and the run made"):
        small.log_rows()
    S = small.S
    rows = S[SL.log_row(0, S):SL.log_row(2, S)].reshape(2, SL.LG_COLS)
    assert [(r[SL.LG_KIND], r[SL.LG_CPU], r[SL.LG_JOB], r[SL.LG_MASTER]) for r in rows] == [
        (PK.DISPATCH, 0, 0, 1),
        (PK.END, 0, 0, 1),
    ]


def test_a_job_cut_off_by_the_end_of_the_run_is_neither_done_nor_running_threads():
    """One processor, no overheads: A (0) and B (0.5) arrive; the run ends at 5, inside A's INIT
    [0, 10), with B queued. Closing reports no job done; both are in INIT with no PARA thread
    running and no end time."""
    system = make("no-spanning", processors=1, pool_size=1, mean_parallelism=1.0, **NO_OVERHEADS)
    states = []
    for j in (job(0, 0.0), job(1, 0.5)):
        system.engine.call(j.arrival, lambda jb: states.append(system.arrive(jb)), j)
    system.engine.run(until=5.0)
    system.close()
    assert system.finished_jobs == []
    assert [(s.phase, s.running, s.done_at, s.home) for s in states] == [(pool_system.INIT, 0, -1.0, 0)] * 2
    assert [(p.active, p.waiting) for p in system.pools] == [(2, 1)]


def test_the_run_reports_finished_jobs_in_the_order_they_finished():
    """Three processors in one pool, no overheads: FINAL threads of jobs 0, 1, 2 (30, 20 and 10
    units) start together at 0, so the jobs finish at 10 (job 2), 20 (1) and 30 (0); closing the
    run hears of them in that order, not in the order they were made."""
    system = make("no-spanning", processors=3, pool_size=3, mean_parallelism=1.0, **NO_OVERHEADS)
    timeline(system, {"J0": (0.0, final_thread(0, 30.0)), "J1": (0.0, final_thread(1, 20.0)),
                      "J2": (0.0, final_thread(2, 10.0))})
    assert [(s.job.index, s.done_at) for s in system.finished_jobs] == [(2, 10.0), (1, 20.0), (0, 30.0)]
