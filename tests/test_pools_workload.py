"""The pools model's workload, parameters, metrics and warm-up rule, pinned value by value (the
expected numbers derived by hand in each docstring)."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models.pools import full_params, model, simulate
from simcore.models.pools.policies import NoSpanning
from simcore.models.pools.system import JobState, PoolSystem
from simcore.models.pools.workload import (
    BLOCK,
    Job,
    JobStream,
    arrival_rate,
    geometric_q,
    parallelism_pmf,
    truncated_mean,
)
from simcore.stats.warmup import mser_truncation

NO_OVERHEADS = {"in_pool_factor": 0.0, "spanning_factor": 0.0, "contention_factor": 0.0, "cache_cost": 0.0}


# -- parameters ---------------------------------------------------------------------------------------

def test_parameter_errors_name_the_pools_model_and_quote_the_constraint():
    """with_defaults is told the model's name: every error says model 'pools'; a broken relation
    quotes the constraint's text and the values involved."""
    with pytest.raises(InputError, match=r"^unknown parameter\(s\) of model 'pools': bogus$"):
        full_params({"bogus": 1})
    with pytest.raises(InputError, match=r"^model 'pools': parameter load = 1\.5 "):
        full_params({"load": 1.5})
    with pytest.raises(InputError, match=r"^model 'pools': pool_size divides processors \(equal pools\) does not "
                                         r"hold \(processors = 60, pool_size = 7\)\.$"):
        full_params({"pool_size": 7})
    with pytest.raises(InputError, match=r"^model 'pools': mean_parallelism < \(processors \+ 1\) / 2 .* does not "
                                         r"hold \(mean_parallelism = 10\.5, processors = 20\)\.$"):
        full_params({"processors": 20, "mean_parallelism": 10.5})     # exactly (20 + 1) / 2
    with pytest.raises(InputError, match=r"^model 'pools': thread_spread < thread_demand .* does not hold "
                                         r"\(thread_spread = 100\.0, thread_demand = 100\.0\)\.$"):
        full_params({"thread_spread": 100.0})
    assert full_params({"pool_size": "all"})["pool_size"] == "all"
    assert full_params({"processors": 20, "mean_parallelism": 10.49})["mean_parallelism"] == 10.49
    assert full_params({"processors": 1, "pool_size": 1, "mean_parallelism": 1.0})["processors"] == 1


# -- the bounded geometric ----------------------------------------------------------------------------

def test_q_at_or_above_one_is_the_point_mass_at_one():
    """A success probability q >= 1 succeeds at the first trial: the truncated mean is 1 (also for
    q = 1.5, where the weights (1 - q)^(k - 1) would alternate in sign)."""
    assert truncated_mean(1.0, 60) == 1.0
    assert truncated_mean(1.5, 4) == 1.0
    assert truncated_mean(0.5, 3) == pytest.approx(11 / 7)    # weights 1, 1/2, 1/4: (1 + 1 + 3/4) / (7/4)


def test_a_mean_between_1_and_2_has_its_geometric_parameter():
    """P = 2: mean (1 + 2 (1 - q)) / (2 - q) = D gives q = (3 - 2 D) / (2 - D); D = 1.25 -> q = 2/3.
    P = 60, D = 1.5: the tail beyond 60 is negligible, so q = 1 / D = 2/3 (untruncated mean 1/q).
    Brent's method must see the bracket [1e-12, 1] change sign, f(1) = 1 - D < 0."""
    assert geometric_q(1.25, 2) == pytest.approx(2 / 3, abs=1e-13)
    assert geometric_q(1.5, 60) == pytest.approx(2 / 3, abs=1e-13)
    pmf = parallelism_pmf(1.5, 60)
    assert pmf[:3] == pytest.approx([2 / 3, 2 / 9, 2 / 27], abs=1e-13)


def test_the_solved_parameter_gives_the_mean_to_the_solvers_tolerance():
    """P = 1000, D = 400: q ~ 0.00124. Brent stops within xtol + rtol q = 1e-15 + 1.2e-17 of the
    root; the truncated mean moves with q by less than the untruncated |d(1/q)/dq| = 1/q^2 =
    6.5e5, so it is within 6.5e5 x 1.02e-15 < 1e-9 of D (scipy's default xtol 2e-12 would allow
    1.3e-6)."""
    q = geometric_q(400.0, 1000)
    assert abs(truncated_mean(q, 1000) - 400.0) < 1e-9


def test_a_mean_outside_the_domain_is_refused():
    """The domain is D = 1 or 1 < D < (P + 1) / 2: 0.5 and (60 + 1) / 2 are refused with the bound."""
    for bad in (0.5, 30.5):
        with pytest.raises(InputError, match=r"bound P = 60 has a mean of 1 or in \(1, 30.5\); "
                                             rf"mean_parallelism = {bad:g} is outside it"):
            geometric_q(bad, 60)


# -- the job stream -------------------------------------------------------------------------------------

def _blocks(draw, n_blocks: int) -> np.ndarray:
    """``n_blocks`` successive blocks of BLOCK draws, as the stream takes them."""
    return np.concatenate([draw(BLOCK) for _ in range(n_blocks)])


def test_the_stream_draws_each_quantity_from_its_own_named_stream_in_order():
    """P = 4, D = 2, L = 0.6: mean gap = (10 + 100 x 2 + 10) / (4 x 0.6) = 91.67. Job i arrives at
    the sum of the first i + 1 exponential draws of stream 'arrivals' (the clock starts at 0);
    its d is the next geometric draw of 'parallelism' not above P = 4 (larger ones are
    redrawn); its u are the next d uniforms on [-1, 1) of 'spreads'. 300 jobs cross the
    256-draw block of every stream (and some job's spreads straddle a block end)."""
    params = full_params({"processors": 4, "pool_size": 2, "mean_parallelism": 2.0})
    seed = replication_seed(7, "p2-stream", 0, 4)
    stream = JobStream(params, Streams(seed))
    jobs = [stream.next() for _ in range(300)]

    own = Streams(seed)
    mean_gap = 1.0 / arrival_rate(params)
    assert mean_gap == pytest.approx(220 / 2.4)
    arrivals = own.fresh("arrivals")
    gaps = _blocks(lambda n: arrivals.exponential(mean_gap, n), 2)
    q = geometric_q(2.0, 4)
    parallelism = own.fresh("parallelism")
    raw = _blocks(lambda n: parallelism.geometric(q, n), 4)
    kept = raw[raw <= 4]
    spreads = own.fresh("spreads").uniform(-1.0, 1.0, 4 * BLOCK)

    assert (raw[:300] > 4).any()                    # draws above P among those the jobs use: redrawn
    assert len(kept) >= 300
    assert [j.index for j in jobs] == list(range(300))
    assert [j.arrival for j in jobs] == pytest.approx(np.cumsum(gaps[:300]).tolist(), rel=1e-13)
    assert jobs[0].arrival == gaps[0]
    assert [j.d for j in jobs] == kept[:300].tolist()
    ends = np.cumsum([j.d for j in jobs])
    assert any(e - j.d < BLOCK < e for e, j in zip(ends, jobs))   # a job's spreads straddle draw 256
    assert np.concatenate([j.u for j in jobs]).tolist() == spreads[:ends[-1]].tolist()
    assert all(len(j.u) == j.d for j in jobs)


def test_a_mean_parallelism_of_one_gives_single_thread_jobs():
    """D = 1: q = 1, every d is 1 and each job gets one spread."""
    stream = JobStream(full_params({"processors": 4, "pool_size": 2, "mean_parallelism": 1.0}),
                       Streams(replication_seed(7, "p2-one", 0, 0)))
    jobs = [stream.next() for _ in range(BLOCK + 5)]
    assert {j.d for j in jobs} == {1} and all(isinstance(j.d, int) and len(j.u) == 1 for j in jobs)


# -- metrics --------------------------------------------------------------------------------------------

def _state(index: int, arrival: float, done_at: float, a: int, k: int) -> JobState:
    s = JobState(Job(index, arrival, a, np.zeros(a)))
    s.done_at, s.a, s.k = done_at, a, k
    return s


def _fifteen():
    """Jobs i = 0..14 arriving at 10 (i + 1), responses 100 for i < 5 and 10 after, a = i + 1,
    k = 2 for i = 1, 7, 8, k = 3 for i = 9, else 1; busy integral at arrival i: 4 + i^2."""
    k = {1: 2, 7: 2, 8: 2, 9: 3}
    sampled = [_state(i, 10.0 * (i + 1), 10.0 * (i + 1) + (100.0 if i < 5 else 10.0), i + 1, k.get(i, 1))
               for i in range(15)]
    return sampled, [4.0 + i * i for i in range(15)]


def test_measure_without_warmup_deletion_keeps_every_job():
    """warmup 'none': all 15 kept. Mean response (5 x 100 + 10 x 10) / 15 = 40; A = (1 + ... + 15)
    / 15 = 8; spanning share 4/15 (k > 1 for i = 1, 7, 8, 9); U = (areas[14] - areas[0]) /
    (P (arrival 14 - arrival 0)) = (200 - 4) / (2 x (150 - 10)) = 0.7."""
    sampled, areas = _fifteen()
    m = model.measure({"warmup": "none", "processors": 2}, sampled, areas, 123)
    assert m == {"mean_response": pytest.approx(40.0), "actual_parallelism": pytest.approx(8.0),
                 "utilization": pytest.approx(0.7), "spanning_share": pytest.approx(4 / 15),
                 "jobs": 15.0, "warmup_jobs": 0.0, "events": 123.0}


def test_measure_with_mser_5_deletes_the_biased_first_batch():
    """warmup 'mser-5': response batches 100, 10, 10 -> MSER(1) = 0 is the least, 5 jobs go.
    Kept i = 5..14: mean response 10; A = (6 + ... + 15) / 10 = 10.5; spanning share 3/10 (i = 7,
    8, 9); U = (areas[14] - areas[5]) / (2 x (150 - 60)) = (200 - 29) / 180 = 0.95."""
    sampled, areas = _fifteen()
    m = model.measure({"warmup": "mser-5", "processors": 2}, sampled, areas, 7)
    assert m == {"mean_response": pytest.approx(10.0), "actual_parallelism": pytest.approx(10.5),
                 "utilization": pytest.approx(0.95), "spanning_share": pytest.approx(0.3),
                 "jobs": 10.0, "warmup_jobs": 5.0, "events": 7.0}


def test_measure_with_a_fixed_share_deletes_the_first_jobs_whatever_their_values():
    """warmup 'fraction', 0.2 of 15: the first 3 go (not 5, as MSER would take). Kept i = 3..14:
    mean response (2 x 100 + 10 x 10) / 12 = 25; A = (4 + ... + 15) / 12 = 9.5; spanning share
    3/12 (i = 7, 8, 9); U = (areas[14] - areas[3]) / (2 x (150 - 40)) = (200 - 13) / 220 = 0.85. An unknown
    rule is bad input, named."""
    sampled, areas = _fifteen()
    m = model.measure({"warmup": "fraction", "warmup_fraction": 0.2, "processors": 2}, sampled, areas, 5)
    assert m == {"mean_response": pytest.approx(25.0), "actual_parallelism": pytest.approx(9.5),
                 "utilization": pytest.approx(0.85), "spanning_share": pytest.approx(3 / 12),
                 "jobs": 12.0, "warmup_jobs": 3.0, "events": 5.0}
    with pytest.raises(InputError, match="^parameter 'warmup': unknown value 'x'"):
        model.measure({"warmup": "x", "processors": 2}, sampled, areas, 5)


def test_measure_utilisation_over_a_short_or_empty_span():
    """Arrivals 3 and 3.5, busy integral 1.0 then 1.6, P = 2: U = 0.6 / (2 x 0.5) = 0.6. Both at 3:
    no span to divide by, U is NaN."""
    params = {"warmup": "none", "processors": 2}
    short = [_state(0, 3.0, 10.0, 1, 1), _state(1, 3.5, 12.0, 1, 1)]
    assert model.measure(params, short, [1.0, 1.6], 0)["utilization"] == pytest.approx(0.6)
    same = [_state(0, 3.0, 10.0, 1, 1), _state(1, 3.0, 12.0, 1, 1)]
    assert math.isnan(model.measure(params, same, [1.0, 1.6], 0)["utilization"])


# -- runs -------------------------------------------------------------------------------------------------

class _ScriptedStream:
    """Stands in for JobStream: the given jobs in order, then jobs far in the future."""

    def __init__(self, jobs):
        self.jobs = list(jobs)
        self.index = 0

    def next(self) -> Job:
        job = (
            self.jobs[self.index] if self.index < len(self.jobs) else Job(self.index, 1e6 + self.index, 1, np.zeros(1))
        )
        self.index += 1
        return job


def test_the_run_stops_when_the_sampled_jobs_are_done_not_a_later_one(monkeypatch):
    """P = 2 in one pool, no overheads, jobs = 10 sampled, 'none' warm-up. Jobs 0..8 arrive 1000
    apart, d = 1, u = 0: each alone, 10 + 100 + 10 = 120. Job 9 at 9000 with u = 0.9 takes
    10 + 109 + 10 = 129, done at 9129; job 10 (not sampled) at 9001 with u = -0.9 runs on the
    other processor, 10 + 91 + 10 = 111, done at 9112, first. The run must wait for job 9: mean
    response (9 x 120 + 129) / 10 = 120.9."""
    jobs = [Job(i, 1000.0 * i, 1, np.zeros(1)) for i in range(9)]
    jobs += [Job(9, 9000.0, 1, np.array([0.9])), Job(10, 9001.0, 1, np.array([-0.9]))]
    monkeypatch.setattr(model, "JobStream", lambda params, streams: _ScriptedStream(jobs))
    params = full_params({"processors": 2, "pool_size": "all", "mean_parallelism": 1.0, "jobs": 10,
                          "warmup": "none", **NO_OVERHEADS})
    run = simulate(params, "no-spanning", Streams(replication_seed(1, "p2-stop", 0, 0)))
    assert [s.done_at for s in run.jobs] == pytest.approx([1000.0 * i + 120.0 for i in range(9)] + [9129.0])
    assert run.metrics["mean_response"] == pytest.approx(120.9)
    assert isinstance(run.system, PoolSystem) and len(run.system.pools) == 1 and run.system.p == 2


def test_a_run_that_ends_before_its_sampled_jobs_finish_is_an_error(monkeypatch):
    """An engine that stops at t = 50: no job can finish (each needs at least 10 + 90 + 10 = 110),
    so all 10 sampled jobs are reported unfinished."""

    class ShortEngine(Engine):
        def run(self, until=None):
            super().run(until=50.0)

    monkeypatch.setattr(model, "Engine", ShortEngine)
    params = full_params({"processors": 4, "pool_size": 2, "mean_parallelism": 2.0, "jobs": 10})
    with pytest.raises(RuntimeError, match=r"^pools model: 10 sampled job\(s\) never finished under no-spanning\.$"):
        simulate(params, "no-spanning", Streams(replication_seed(1, "p2-short", 0, 0)))


def test_a_policy_gets_its_own_named_stream(monkeypatch):
    """run_replication builds the policy once to check it and simulate once to run it: both times
    with a fresh generator of stream 'policy:<name>', whose first draw the policy takes."""
    from simcore.models import registry

    monkeypatch.setattr(registry, "_POLICIES", dict(registry._POLICIES))
    seen = []

    class Probe(NoSpanning):
        def __init__(self, params, rng):
            super().__init__(params, rng)
            seen.append(rng.random())

    registry.register("pools", "p2-probe")(Probe)
    seed = replication_seed(3, "p2-probe", 0, 0)
    model.run_replication({"processors": 4, "pool_size": 2, "mean_parallelism": 2.0, "jobs": 10}, ["p2-probe"],
                          Streams(seed))
    first = Streams(seed).fresh("policy:p2-probe").random()
    assert seen == [first, first]


# -- the MSER-5 warm-up rule ----------------------------------------------------------------------------

def test_mser_5_with_two_batches_deletes_the_first_when_they_differ():
    """m = 2 batches (10 to 14 values; a partial batch is ignored): the search covers d = 0 and 1;
    MSER(1) = 0 (one batch left) < MSER(0) = (45^2 + 45^2) / 4 when the means are 100 and 10."""
    assert mser_truncation([100.0] * 5 + [10.0] * 5) == 5
    assert mser_truncation([100.0] * 5 + [10.0] * 5 + [1.0, 2.0, 3.0, 4.0]) == 5
    assert mser_truncation([100.0] * 9) == 0       # one batch: nothing to compare


def test_mser_5_on_a_rising_start():
    """Batch means 0, 0, 1, 1 (m = 4, d <= 2): MSER(0) = 1 / 16 (deviations +-1/2), MSER(1) = (4/9 +
    1/9 + 1/9) / 9 = 2/27, MSER(2) = 0: two batches, 10 values, go."""
    assert mser_truncation([0.0] * 10 + [1.0] * 10) == 10


def test_mser_5_keeps_a_stationary_alternation():
    """Batch means 1, -1, 1, -1: MSER(0) = 4 / 16 = 0.25, MSER(1) = (3 - 1/3) / 9 = 0.296,
    MSER(2) = 2 / 4 = 0.5: nothing is deleted (deleting costs more precision than it gains)."""
    assert mser_truncation(([1.0] * 5 + [-1.0] * 5) * 2) == 0


def test_mser_5_reads_any_real_numbers_as_floats():
    """Exact decimals (as read from a table) are taken at their float values: batches 100, then
    nine of 10, 5 observations go."""
    assert mser_truncation([Decimal("100")] * 5 + [Decimal("10")] * 45) == 5
