"""Every decision rule of the cluster model, pinned by a small scripted scenario.

Each test runs a handful of processes through ``simulate`` and asserts exact completion times
(or counts) derived by hand in its docstring; switching the rule off changes them. The notation
and the scripted policy draws (wake-ups at 1, 2, ... s, information rounds at 0.5, 1.5, ... s)
are described in ``cluster_script``. Processor sharing: each of the ``k`` processes on a machine
of speed ``s`` progresses ``s/k`` CPU seconds per second (``s/(k*thrashing_factor)`` when its
memory is overcommitted).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest
from cluster_script import BIG, Hand, ScriptedRng, ScriptedStreams, assert_run, completions, groups, run

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models import registry
from simcore.models.cluster import full_params, simulate
from simcore.models.cluster import knowledge_kernels as KN
from simcore.models.cluster import model as model_mod
from simcore.models.cluster import mosix_kernels as M
from simcore.models.cluster import opportunity_kernels as O
from simcore.models.cluster import run_kernels as R
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster import workload as wl
from simcore.models.cluster.base import Policy, host_list
from simcore.models.cluster.knowledge import Knowledge
from simcore.models.cluster.mosix import Mosix
from simcore.models.cluster.system import ClusterSystem, expand_machines
from simcore.models.cluster.workload import BackgroundSpec, ProcSpec, Workload

# --- the cluster: sharing, thrashing, migration, slowdown ---------------------------------------

def test_slowdown_of_a_lone_process_is_one_over_its_machine_speed():
    """Demand 10 alone on a speed-0.5 machine from t=5: it runs 20 s, completes at 25, slowdown
    (25 - 5) / 10 = 2; alone on a speed-1 machine: slowdown 1."""
    slow = run([(0.5, BIG)], [(5, 10, 1, 0)], "pvm")
    assert completions(slow) == pytest.approx({0: 25.0})
    assert slow.metrics["mean_slowdown"] == pytest.approx(2.0)
    assert run([(1.0, BIG)], [(5, 10, 1, 0)], "pvm").metrics["mean_slowdown"] == pytest.approx(1.0)


def test_job_slowdown_takes_the_last_process_of_a_job():
    """A two-process job (demand 10 each) under pvm: process 0 on the speed-1 machine ends at 10,
    process 1 on the speed-0.5 one at 20. Per process: slowdowns 1 and 2, mean 1.5, 2 jobs; per
    job: (20 - 0) / 10 = 2, 1 job. Makespan 20 either way."""
    machines = [{"name": "fast", "count": 1, "speed": 1.0, "memory_mb": BIG},
                {"name": "slow", "count": 1, "speed": 0.5, "memory_mb": BIG}]
    workload = Workload((ProcSpec(0, 0, 0.0, 10.0, 0.0, 0, True), ProcSpec(1, 0, 0.0, 10.0, 0.0, 0, True)))
    out = {mode: simulate(full_params({"machines": machines, "parallel_job_slowdown": mode}), workload, "pvm",
                          ScriptedStreams(ScriptedRng())).metrics
           for mode in ("process", "job")}
    assert (out["process"]["mean_slowdown"], out["process"]["jobs"]) == pytest.approx((1.5, 2))
    assert (out["job"]["mean_slowdown"], out["job"]["jobs"]) == pytest.approx((2.0, 1))
    assert out["process"]["makespan"] == out["job"]["makespan"] == pytest.approx(20.0)


def test_thrashing_divides_every_rate_by_the_factor():
    """Two 6 MB processes of demand 10 on a 10 MB machine: 12 MB > 10 MB, so each runs at
    1 / (2 * 3) with thrashing_factor 3 and both end at 60; on a 12 MB machine they fit (12 is not
    above 12) and end at 20."""
    procs = [(0, 10, 6, 0), (0, 10, 6, 0)]
    assert completions(run([(1.0, 10.0)], procs, "pvm", thrashing_factor=3.0)) == pytest.approx({0: 60.0, 1: 60.0})
    assert completions(run([(1.0, 12.0)], procs, "pvm", thrashing_factor=3.0)) == pytest.approx({0: 20.0, 1: 20.0})


def test_thrashing_share_counts_the_machine_time_spent_over_memory():
    """pvm on two machines (speed 1, 10 MB): A (6 MB, demand 10) and C (6 MB, demand 5) on
    machine 0, B (1 MB, demand 10) on machine 1. Machine 0 holds 12 MB > 10: each of A and C runs
    at 1 / (2 x 10); C ends at 100, and the thrashing with it; A (5 left) runs alone to 105. B ends
    at 10. Thrashing 100 s of 2 x 105 machine-seconds: 100 / 210.
    One machine: A and C (6 MB, demand 10) thrash at 1/20 each; at t = 50 D (no memory, demand 1)
    arrives with 2.5 done each, and the three run at 1/30: D ends at 80, A and C (6.5 left) at
    80 + 130 = 210. The machine thrashes throughout: share 1."""
    two = run([(1.0, 10.0), (1.0, 10.0)], [(0, 10, 6, 0), (0, 10, 1, 0), (0, 5, 6, 0)], "pvm")
    assert completions(two) == pytest.approx({0: 105.0, 1: 10.0, 2: 100.0})
    assert two.metrics["thrashing_share"] == pytest.approx(100 / 210)
    one = run([(1.0, 10.0)], [(0, 10, 6, 0), (0, 10, 6, 0), (50, 1, 0, 0)], "pvm")
    assert completions(one) == pytest.approx({0: 210.0, 1: 210.0, 2: 80.0})
    assert one.metrics["thrashing_share"] == pytest.approx(1.0)
    assert [m.thrashed for m in one.cluster.machines] == pytest.approx([210.0])


def test_remaining_is_the_demand_not_yet_served():
    """Speed-1 machine: A and B (demand 10) from t=0, C (demand 0.9) from t=1, when A and B have
    done 0.5 each. From then each gets 1/3: at t=2.5 A and B have done 0.5 + 1.5/3 = 1 (9 left)
    and C 0.5 (0.4 left; it ends at 1 + 0.9 * 3 = 3.7)."""
    hand = Hand([(1.0, BIG)], [(10.0, 0.0), (10.0, 0.0), (0.9, 0.0)])
    hand.place(0, 0)
    hand.place(1, 0)
    hand.at(1.0, lambda: hand.place(2, 0))
    hand.run(until=2.5)
    assert [hand.system.remaining(hand.proc(i)) for i in range(3)] == pytest.approx([9.0, 9.0, 0.4], rel=1e-12)


def test_background_process_fields_and_cycle():
    """Background process -1 (seed 5, max_period 2) pinned to machine 1 of two speed-1 machines while
    a foreground process is still due (so it keeps cycling). Its bursts and idle periods are
    d0, d1, d2, ... = 2 U0, 2 U1, 2 U2, ... with U from np.random.Generator(PCG64(5)).
    It is a process of no job: job -1, arrival 0, memory 0, home 1, unmeasured, pinned. It starts
    at once on machine 1 with the burst d0 left (memory in use stays 0); at d0 + d1 + d2 / 2,
    midway through its second burst (alone, rate 1), it was placed at d0 + d1 and has d2 / 2 left."""
    hand = Hand([(1.0, BIG), (1.0, BIG)], background=[(1, 5, 2.0)], unfinished=1)
    bg = hand.proc(-1)
    assert (bg.pid, bg.job, bg.arrival, bg.memory, bg.home, bg.measured, bg.pinned) == (
        -1,
        -1,
        0.0,
        0.0,
        1,
        False,
        True,
    )
    d = 2.0 * np.random.Generator(np.random.PCG64(5)).random(3)
    assert (bg.machine, hand.system.remaining(bg), hand.system.machines[1].mem_used) == (1, d[0], 0.0)
    hand.run(until=d[0] + d[1] + d[2] / 2)
    assert (bg.placed_at, hand.system.remaining(bg)) == pytest.approx((d[0] + d[1], d[2] / 2), rel=1e-9)


def test_a_policy_keeping_the_defaults_places_everything_on_machine_0(monkeypatch):
    """The base Policy (as a plug-in that overrides nothing would run) puts every process on machine
    0 and never migrates: on machines of speed 1 and 2, demands 4 and 10 from t=0 share machine 0;
    the first ends at 8, the other runs alone from then with 6 left and ends at 14."""
    monkeypatch.setitem(registry._POLICIES, ("cluster", "defaults"), Policy)
    assert_run(run([(1.0, BIG), (2.0, BIG)], [(0, 4, 0, 0), (0, 10, 0, 0)], "defaults"), {0: 8, 1: 14}, 0)


def test_a_process_is_finishing_within_1e_9_of_its_machines_clock():
    """finishing: the finish tag is within 1e-9 * max(1, |clock|) of the machine's virtual clock.
    Placed at t=0 on an idle machine (clock 0), demand 1e-9 is finishing, 1.5e-9 is not. On a
    machine whose clock reads 100 (demand 1000 alone since 0, now t=100), demand 5e-8 placed then
    is finishing (tolerance 1e-7); the other, 900 from its end, is not."""
    idle = Hand([(1.0, BIG)], [(1e-9, 0.0), (1.5e-9, 0.0)])
    assert [idle.system.finishing(idle.place(i, 0)) for i in range(2)] == [True, False]
    busy = Hand([(1.0, BIG)], [(1000.0, 0.0), (5e-8, 0.0)])
    long = busy.place(0, 0)
    busy.run(until=100.0)
    assert [busy.system.finishing(busy.place(1, 0)), busy.system.finishing(long)] == [True, False]


def test_a_machine_exactly_full_does_not_count_as_thrashing():
    """One speed-1 machine of 10 MB; A (10 MB, demand 10) from t=0 fills it exactly (10 is not above
    10), B (no memory, demand 1) joins at 5: A has 5 left, both run at 1/2; B ends at 7, A (4 left)
    alone at 11. Memory in use never exceeds the memory: 0 s thrashed, share 0."""
    result = run([(1.0, 10.0)], [(0, 10, 10, 0), (5, 1, 0, 0)], "pvm")
    assert completions(result) == pytest.approx({0: 11.0, 1: 7.0}, rel=1e-12)
    assert [m.thrashed for m in result.cluster.machines] == [0.0]
    assert result.metrics["thrashing_share"] == 0.0


def test_thrashed_time_adds_up_over_every_change_of_the_machine():
    """thrashing_factor 1 (thrashing counts but slows nothing). One speed-1 machine of 10 MB, A
    (11 MB, demand 10) from t=0, so it thrashes throughout; B (no memory, demand 1) joins at 2 and
    C (no memory, demand 1) at 3. A alone does 2 by t=2; with B at 1/2, at 3 A has 7.5 left and B
    0.5; the three at 1/3: B ends at 3 + 1.5 = 4.5 (A 7, C 0.5 left); A and C at 1/2: C ends at
    5.5, A (6.5 left) alone at 12. The machine is advanced at 2 and 3 (arrivals) and completes at
    4.5, 5.5 and 12: thrashed 2 + 1 + 1.5 + 1 + 6.5 = 12 s, share 12 / 12 = 1."""
    result = run([(1.0, 10.0)], [(0, 10, 11, 0), (2, 1, 0, 0), (3, 1, 0, 0)], "pvm", thrashing_factor=1.0)
    assert completions(result) == pytest.approx({0: 12.0, 1: 4.5, 2: 5.5}, rel=1e-12)
    assert [m.thrashed for m in result.cluster.machines] == pytest.approx([12.0], rel=1e-12)
    assert result.metrics["thrashing_share"] == pytest.approx(1.0, rel=1e-12)


def test_thrashing_share_ends_at_the_last_completion_not_the_last_event():
    """Mosix, two speed-1 machines of 10 MB: A (20 MB, demand 1) thrashes alone on machine 0 at
    1/10 and ends at 10 (it fits nowhere, and load 1 is not above the threshold). That completion
    stops the run, so the information round at 10.5 never fires; the share counts machine-time to
    10 only: 10 s of 2 x 10 = 0.5 (not 10 / 21). Events: the arrival, the rounds at 0.5 ... 9.5
    and the completion: 12."""
    result = run([(1.0, 10.0), (1.0, 10.0)], [(0, 1, 20, 0)])
    assert_run(result, {0: 10}, 0)
    assert result.metrics["thrashing_share"] == pytest.approx(0.5, rel=1e-12)
    assert (result.cluster.engine.now, result.metrics["events"]) == (10.0, 12)


def test_thrashing_share_ignores_the_completion_timers_a_migration_cancelled():
    """Mosix, two speed-1 machines of 10 MB: A and B (6 MB, demand 1) at home on machine 0 thrash
    (12 MB) at 1/20 each, so machine 0's completion timer is set for t = 20. At the wake-up at 1
    memory ushering sends A (the first of the two largest) to machine 1: machine 0 thrashed 1 s,
    and A and B, 0.95 left each, run alone and end at 1.95. The cancelled timer for 20 stays on
    SimPy's queue, but the last completion stops the run, so the clock ends at 1.95 (it used to
    pop that timer and end at 20); the share is 1 s of 2 x 1.95 machine-seconds: 0.256 (not
    1 / 40)."""
    result = run([(1.0, 10.0), (1.0, 10.0)], [(0, 1, 6, 0), (0, 1, 6, 0)])
    assert_run(result, {0: 1.95, 1: 1.95}, 1)
    assert result.cluster.engine.now == 1.95
    assert result.metrics["thrashing_share"] == pytest.approx(1 / 3.9, rel=1e-12)


def test_thrashing_share_of_a_run_shorter_than_a_second_and_of_none():
    """thrashing_factor 1: A (11 MB, demand 0.5) alone on a 10 MB speed-1 machine thrashes until it
    ends at 0.5: share 0.5 / 0.5 = 1. A run that ends at t=0 spent no machine-time: share 0 (not
    0 / 0)."""
    short = run([(1.0, 10.0)], [(0, 0.5, 11, 0)], "pvm", thrashing_factor=1.0)
    assert completions(short) == {0: 0.5}
    assert short.metrics["thrashing_share"] == pytest.approx(1.0, rel=1e-12)
    assert model_mod.thrashing_share(Hand(TWO).system, 0.0) == 0.0


# --- Mosix: when and what it moves ----------------------------------------------------------------

SPECS = Path(__file__).resolve().parents[1] / "config/experiments"
TWO = [(1.0, BIG), (1.0, BIG)]
PAIR_AT_HOME = [(0, 10, 0, 0), (0, 10, 0, 0)]


def test_mosix_moves_one_of_two_processes_at_the_first_wake_up():
    """Machine 0 holds two processes (load 2 > load_threshold 1). At t=1 it wakes, sees machine 1
    empty (round at 0.5), both processes have stayed 1 s >= min_residency; it moves process 0
    (oldest; tie in arrival, first placed). Each has done 0.5 of 10 and finishes the remaining 9.5
    alone: both end at 10.5, one migration."""
    assert_run(run(TWO, PAIR_AT_HOME), {0: 10.5, 1: 10.5}, 1)


def test_mosix_waits_min_residency():
    """As above with min_residency 2.5: at the wake-ups at 1 and 2 no process has stayed 2.5 s;
    at 3 both have. They have done 1.5 each, then 8.5 alone: both end at 11.5."""
    assert_run(run(TWO, PAIR_AT_HOME, min_residency=2.5), {0: 11.5, 1: 11.5}, 1)


def test_migration_cost_stalls_the_mover_and_frees_the_source_at_once():
    """As the first case with migration_cost 0.3: process 0 leaves machine 0 at t=1 and resumes
    on machine 1 at 1.3, ending at 1.3 + 9.5 = 10.8; process 1 runs alone from t=1 (the mover no
    longer counts on machine 0) and ends at 10.5."""
    assert_run(run(TWO, PAIR_AT_HOME, migration_cost=0.3), {0: 10.8, 1: 10.5}, 1)


def test_mosix_wakes_on_its_own_phase():
    """Balancing phase 0.5 s: wake-ups at 0.5 (no process has stayed 1 s) and 1.5, where process 0
    moves after 0.75 s done: both end at 1.5 + 9.25 = 10.75."""
    assert_run(run(TWO, PAIR_AT_HOME, rng=ScriptedRng(balance=0.5)), {0: 10.75, 1: 10.75}, 1)


def test_mosix_load_difference_must_exceed_load_threshold():
    """Machine 0 holds processes 0-2 (demand 10), machine 1 process 3 (demand 100). At t=1 the
    load difference is 3 - 1 = 2.

    load_threshold 1: 2 > 1 and the target, at 1 + 1 = 2 < 3, stays less loaded: process 0 moves
    (each has done 1/3). Then two by two: processes 0-2 end at 1 + 2 * 29/3 = 61/3; process 3 has
    done 1 + 29/3 by then and ends at 61/3 + 268/3 = 329/3. Later checks find differences of 0.

    load_threshold 2: 2 is not above 2, and machine 1 keeps load 1 until t=100: no move; 0-2 end
    at 30, process 3 at 100."""
    procs = [(0, 10, 0, 0)] * 3 + [(0, 100, 0, 1)]
    assert_run(run(TWO, procs, load_threshold=1.0), {0: F(61, 3), 1: F(61, 3), 2: F(61, 3), 3: F(329, 3)}, 1)
    assert_run(run(TWO, procs, load_threshold=2.0), {0: 30, 1: 30, 2: 30, 3: 100}, 0)


def test_mosix_target_must_end_less_loaded_than_the_source():
    """load_threshold 0.5; machine 0 holds processes 0, 1, machine 1 process 2 (all demand 10).
    The difference 2 - 1 = 1 exceeds 0.5, but the target would reach 1 + 1 = 2, not below 2: no
    move (without this rule the two machines would pass a process to and fro). Process 2 ends at
    10; the round at 10.5 shows machine 1 empty and at 11 process 0 moves with 10 - 5.5 = 4.5 left:
    0 and 1 end at 15.5."""
    procs = [(0, 10, 0, 0), (0, 10, 0, 0), (0, 10, 0, 1)]
    assert_run(run(TWO, procs, load_threshold=0.5), {0: 15.5, 1: 15.5, 2: 10}, 1)


def test_mosix_moves_the_oldest_process_that_fits_the_target():
    """Machine 0 (speed 1) holds A (arrival 0, demand 10, 8 MB) and B (arrival 0.25, demand 4,
    2 MB); min_residency 0.5; machine 1 has speed 2. At t=1: A has done 0.25 + 0.375, B 0.375.

    Target with 50 MB: the oldest, A, moves: 9.375 / 2 later it ends at 5.6875; B alone ends at
    1 + 3.625 = 4.625.
    Target with 5 MB: A does not fit (8 > 5), B does: B ends at 1 + 3.625 / 2 = 2.8125, A at
    1 + 9.375 = 10.375."""
    procs = [(0, 10, 8, 0), (0.25, 4, 2, 0)]
    roomy = run([(1.0, 100.0), (2.0, 50.0)], procs, min_residency=0.5)
    assert_run(roomy, {0: 5.6875, 1: 4.625}, 1)
    small = run([(1.0, 100.0), (2.0, 5.0)], procs, min_residency=0.5)
    assert_run(small, {0: 10.375, 1: 2.8125}, 1)


def test_mosix_memory_ushering_moves_the_largest_process_to_the_most_free_memory():
    """Machines (1, 10 MB), (2, 100 MB), (0.5, 50 MB); A (3 MB) and B (6.5 MB), demand 10 each, on
    machine 0; load_threshold 5 so that load never triggers. 9.5 MB > 0.9 * 10: at t=1 the largest
    process, B, goes to machine 1 (most free memory, 90 MB of room): B ends at 1 + 9.5 / 2 = 5.75,
    A alone at 10.5. With memory_threshold 0.96, 9.5 MB is not above 9.6: no move, both end at 20."""
    machines = [(1.0, 10.0), (2.0, 100.0), (0.5, 50.0)]
    procs = [(0, 10, 3, 0), (0, 10, 6.5, 0)]
    assert_run(run(machines, procs, load_threshold=5.0), {0: 10.5, 1: 5.75}, 1)
    assert_run(run(machines, procs, load_threshold=5.0, memory_threshold=0.96), {0: 20, 1: 20}, 0)


def test_mosix_memory_ushering_keeps_the_target_under_its_threshold():
    """As above with machines (1, 10 MB), (2, 7 MB), (0.5, 5 MB): the target is machine 1 (7 MB
    free) with room 0.9 * 7 = 6.3 MB; B (6.5) does not fit, A (3) does: A ends at 5.75, B at 10.5."""
    procs = [(0, 10, 3, 0), (0, 10, 6.5, 0)]
    assert_run(run([(1.0, 10.0), (2.0, 7.0), (0.5, 5.0)], procs, load_threshold=5.0), {0: 5.75, 1: 10.5}, 1)


def test_mosix_falls_back_to_load_balancing_when_no_process_fits_the_room():
    """Machine 0 (20 MB) holds two 9.5 MB processes (19 > 18 MB): memory ushering's target,
    machine 1 (10 MB), has room 9 < 9.5; the load rule then applies (2 - 0 > 1) and needs only
    free memory (10 >= 9.5): process 0 moves at t=1; both end at 10.5. On machine 1, 9.5 MB is
    above its threshold but machine 0's room (18 - 9.5) is too small and its load 1 is not above
    1: no more moves."""
    assert_run(run([(1.0, 20.0), (1.0, 10.0)], [(0, 10, 9.5, 0), (0, 10, 9.5, 0)]), {0: 10.5, 1: 10.5}, 1)


def test_mosix_residency_restarts_on_each_machine():
    """Machines of speed 1, 1, 2; window 1: machine 0 hears only from 1, machine 1 only from 2;
    min_residency 1.2. Processes 0, 1 (demand 10) start on machine 0, process 2 (demand 10) on
    machine 1 at 1.6, after the round of 1.5.
    t=1: nothing has stayed 1.2 s. t=2: machine 0 sees machine 1 empty and sends process 0 (done
    1, 9 left). t=3: machine 1 (load 2) sees machine 2 empty; process 0 has been there 1 s only,
    so process 2 (there 1.4 s, 9.6 - 0.5 = 9.1 left) goes, ending at 3 + 9.1 / 2 = 7.55. Process 0
    (8.5 left) ends alone at 11.5, process 1 alone from t=2 at 2 + 9 = 11. Counting residency
    from arrival would send process 0 instead."""
    prefer = [[[0, 1, 0], [0, 0, 1], [1, 0, 0]]]  # sender s reaches the r of smallest key
    machines = [(1.0, BIG), (1.0, BIG), (2.0, BIG)]
    procs = [(0, 10, 0, 0), (0, 10, 0, 0), (1.6, 10, 0, 1)]
    result = run(machines, procs, rng=ScriptedRng(prefer=prefer), mosix_known_machines=1, min_residency=1.2)
    assert_run(result, {0: 11.5, 1: 11, 2: 7.55}, 2)


def test_mosix_decides_on_the_loads_of_the_last_round():
    """Processes 0, 1 (demand 10) on machine 0; process 2 (demand 10) arrives on machine 1 at 0.6,
    after the round of 0.5. At t=1 machine 0 still sees machine 1 empty and moves process 0 there
    (on live loads the difference would be 1, no move). Machine 1 then holds 2 but sees machine 0
    at 1 (round 1.5): stays. Process 1 ends alone at 1 + 9.5 = 10.5, just before the round of
    10.5, which shows machine 0 empty; at 11 machine 1 sends its oldest, process 0 (done 0.5 + 5,
    4.5 left): it ends at 15.5; process 2 (done 0.4 + 5, 4.6 left) at 15.6."""
    procs = [(0, 10, 0, 0), (0, 10, 0, 0), (0.6, 10, 0, 1)]
    assert_run(run(TWO, procs), {0: 15.5, 1: 10.5, 2: 15.6}, 2)


def test_mosix_counts_its_own_moves_in_its_view():
    """Four processes of demand 8 on machine 0 of two; min_residency 0, wake-ups every 0.25 s,
    rounds at 0.1, 1.1, ... At 0.25 process 0 moves (view of machine 1: load 0, now counted 1);
    at 0.5 process 1 (3 - 1 = 2 > 1 and 1 + 1 < 3; view now 2); at 0.75, 2 - 2 = 0: no move.
    Machine 1's view of machine 0 (load 4) never invites a move back. Without counting its moves,
    machine 0 would send a third process on the stale 0.
    Work: by 0.25 each did 1/16; by 0.5 process 0 did 1/16 + 1/4, the others 1/16 + 1/12 = 7/48.
    Then in pairs: processes 2, 3 end at 1/2 + 2 (8 - 7/48) = 389/24; process 0 at
    1/2 + 2 (8 - 5/16) = 127/8, after which process 1 has 1/6 left: 127/8 + 1/6 = 385/24."""
    procs = [(0, 8, 0, 0)] * 4
    result = run(TWO, procs, rng=ScriptedRng(info=0.1), min_residency=0.0, balance_interval=0.25)
    assert_run(result, {0: F(127, 8), 1: F(385, 24), 2: F(389, 24), 3: F(389, 24)}, 2)


def test_mosix_never_moves_a_background_process():
    """Machine 0 runs a background process (pinned; its first burst, 0.51 * 1e6 CPU s with seed 1,
    outlasts the scenario) and processes 0, 1 (demand 10); all three arrived at 0, the background
    process first. At t=1 process 0 (done 1/3) moves to machine 1 and ends alone at 1 + 29/3 = 32/3;
    machine 0 then has load 2 against a seen 1: no move. Process 1 shares with the background
    process; the round of 11.5 shows machine 1 empty and at 12 process 1 (29/3 - 11/2 = 25/6 left)
    moves: it ends at 12 + 25/6 = 97/6."""
    result = run(TWO, PAIR_AT_HOME, background=[(0, 1, 1e6)])
    assert_run(result, {0: F(32, 3), 1: F(97, 6)}, 2)


def test_mosix_knows_the_latest_senders_of_its_window():
    """Machine 0 (1, 10 MB) holds a 9.5 MB process of demand 10 (above 0.9 * 10); the others are
    (0.5, 40 MB), (2, 100 MB), (0.25, 30 MB); rounds every 0.5 s at 0.25, 0.75, ...; load_threshold
    5 so that only memory moves processes.
    Window 2: in the round of 0.25 machine 0 hears from 1 and 2, in that of 0.75 from 1 and 3. Its
    window keeps the two latest distinct senders, 1 (renewed) and 3, so at t=1 it ushers the process
    to machine 1 (most free memory it knows): 1 + 9 / 0.5 = 19. Knowing all three others (window 3,
    or a window that forgets nothing, or forgets the first ever heard rather than the least
    recently heard), it would choose machine 2: 1 + 9 / 2 = 5.5."""
    inf = math.inf
    first = [[inf, 0, 0, 1], [0, inf, 0, 1], [0, 1, inf, 0], [1, 0, 0, inf]]   # 0 hears 1, 2
    second = [[inf, 0, 0, 1], [0, inf, 0, 1], [1, 0, inf, 0], [0, 0, 1, inf]]  # 0 hears 1, 3
    machines = [(1.0, 10.0), (0.5, 40.0), (2.0, 100.0), (0.25, 30.0)]
    rng = ScriptedRng(prefer=[first, second])
    only_memory = {"load_threshold": 5.0, "info_interval": 0.5}
    assert_run(run(machines, [(0, 10, 9.5, 0)], rng=rng, mosix_known_machines=2, **only_memory), {0: 19}, 1)
    assert_run(run(machines, [(0, 10, 9.5, 0)], mosix_known_machines=3, **only_memory), {0: 5.5}, 1)


@pytest.mark.parametrize("policy", ["pvm", "pvm-on-mosix", "mosix"])
def test_round_robin_follows_the_host_list(policy):
    """Machines of speed 1 and 0.5; two processes of demand 3 at t=0. PVM's round robin over the
    listed hosts puts process 0 on machine 0 (ends at 3) and process 1 on machine 1 (6); with the
    slowest host first, the other way round. Under pvm-on-mosix (and mosix starting round robin)
    the loads per unit of speed, 1 and 2, differ by no more than the threshold until the fast
    machine empties at 3; the round of 3.5 tells the slow one, which at its wake-up of 4 sends the
    process there (2 of 3 done): it ends at 5. The host list: by speed, the listed order among
    equals."""
    machines, procs = [(1.0, BIG), (0.5, BIG)], [(0, 3, 0, 0), (0, 3, 0, 0)]
    extra = {"mosix_initial": "round-robin"} if policy == "mosix" else {}
    slow, moved = (6, 0) if policy == "pvm" else (5, 1)
    assert_run(run(machines, procs, policy, **extra), {0: 3, 1: slow}, moved)
    assert_run(run(machines, procs, policy, host_order="slowest-first", **extra), {0: slow, 1: 3}, moved)
    assert host_list("slowest-first", [1.0, 0.5, 0.5]) == [1, 2, 0] and host_list("listed", [1.0, 0.5]) == [0, 1]


@pytest.mark.parametrize("policy", ["pvm", "pvm-on-mosix"])
def test_pvm_spawns_the_processes_of_a_set_one_after_another(policy):
    """Two machines of speed 1; three processes of demand 10 arrive together at t=0; PVM's daemon
    takes 1 s per task. Process 0 starts at 1 on machine 0, process 1 at 2 on machine 1, process 2
    at 3 on machine 0. Machine 0 runs process 0 alone from 1 to 3 (8 left), then both at half
    speed: process 0 ends at 3 + 16 = 19, process 2 has 2 left and ends at 21; process 1 ends at
    12. Times count from the set's arrival: makespan 21, slowdowns 1.9, 1.2, 2.1. Without the
    delay: 20, 10, 20. Under pvm-on-mosix, thresholds out of reach so that nothing moves, the
    same. A process alone: 300 s of work spawned after 1.5 s ends at 301.5."""
    machines, procs = [(1.0, BIG), (1.0, BIG)], [(0, 10, 0, 0)] * 3
    calm = {"load_threshold": 100.0, "memory_threshold": 1.0} if policy == "pvm-on-mosix" else {}
    spawned = run(machines, procs, policy, spawn_delay=1.0, **calm)
    assert_run(spawned, {0: 19, 1: 12, 2: 21}, 0)
    assert spawned.metrics["makespan"] == pytest.approx(21.0)
    assert spawned.metrics["mean_slowdown"] == pytest.approx((1.9 + 1.2 + 2.1) / 3)
    assert_run(run(machines, procs, policy, **calm), {0: 20, 1: 10, 2: 20}, 0)
    assert run(machines, [(0, 300, 0, 0)], policy, spawn_delay=1.5).metrics["makespan"] == pytest.approx(301.5)


def test_the_spawn_delay_staggers_each_arriving_set_in_time_order():
    """Sets at 0 (two processes) and 1.5 (one), a delay of 1: the cluster receives them at 1, 2
    and 2.5, each alone; a delay of 0 leaves the sets as they are. Mosix and Enhanced PVM start
    a job's processes themselves and declare no delay."""
    a, b, c = (ProcSpec(i, 0, t, 1.0, 0.0, 0, True) for i, t in enumerate((0.0, 0.0, 1.5)))
    sets = [(0.0, (a, b)), (1.5, (c,))]
    assert model_mod.spawned(sets, 1.0) == [(1.0, (a,)), (2.0, (b,)), (2.5, (c,))]
    assert model_mod.spawned(sets, 0.0) == sets
    assert "spawn_delay" not in registry.get_policy("cluster", "mosix").HYPERPARAMETERS
    assert "spawn_delay" not in registry.get_policy("cluster", "enhanced-pvm").HYPERPARAMETERS


def test_mosix_initial_placement():
    """Three processes of demand 1 (home machine 0) on machines of speed 1, 0.5, 0.25; load and
    memory thresholds out of reach, so nothing migrates.
    home: all on machine 0, each ends at 3. round-robin: machines 0, 1, 2, ending at 1, 2, 4.
    random with draws 2, 2, 1: two share machine 2 (rate 0.125, end at 8), one alone on machine 1
    (ends at 2). pvm-on-mosix places round robin whatever mosix_initial says."""
    machines = [(1.0, BIG), (0.5, BIG), (0.25, BIG)]
    procs = [(0, 1, 0, 0)] * 3
    calm = {"load_threshold": 100.0, "memory_threshold": 1.0}
    assert_run(run(machines, procs, mosix_initial="home", **calm), {0: 3, 1: 3, 2: 3}, 0)
    assert_run(run(machines, procs, mosix_initial="round-robin", **calm), {0: 1, 1: 2, 2: 4}, 0)
    random = run(machines, procs, rng=ScriptedRng(integers=[2, 2, 1]), mosix_initial="random", **calm)
    assert_run(random, {0: 8, 1: 8, 2: 2}, 0)
    assert_run(run(machines, procs, "pvm-on-mosix", mosix_initial="home", **calm), {0: 1, 1: 2, 2: 4}, 0)


# --- Mosix and its knowledge, called by hand (cluster_script.hand_cluster) -----------------------

def test_knowledge_counts_a_sent_process_in_the_senders_entry_for_the_target():
    """Machine 0 last saw machine 1 (speed 2) at load 1 with 3 MB in use. Sending it a 4 MB process
    adds 1/2 (one process per unit of speed 2) and 4 MB: (1.5, 7); a second one: (2, 11). Sending
    to machine 2, of which it holds no entry, creates none. Machine 1, which knows machine 0, then
    machine 2 (speed 1) at load 1 with 3 MB, sending it a 4 MB process: its second entry (2, 7)."""
    hand = Hand([(1.0, BIG), (2.0, BIG), (1.0, BIG)], [(BIG, 4.0)] * 3, "mosix", mosix_known_machines=2)
    hand.know(0, {1: (1.0, 3.0)})
    KN.moved(0, 1, 0, hand.CI, hand.CF)
    assert hand.view(0) == {1: (1.5, 7.0)}
    KN.moved(0, 1, 1, hand.CI, hand.CF)
    KN.moved(0, 2, 2, hand.CI, hand.CF)
    assert hand.view(0) == {1: (2.0, 11.0)}
    hand.know(1, {0: (0.0, 0.0), 2: (1.0, 3.0)})
    KN.moved(1, 2, 0, hand.CI, hand.CF)
    assert hand.view(1) == {0: (0.0, 0.0), 2: (2.0, 7.0)}


def test_a_view_keeps_the_latest_senders_newest_last():
    """Machine 1's window holds 3 senders. News from 0, 2, 3 (loads 1, 2, 3; 10, 20, 30 MB) fill
    it in that order; news again from 2 (2.5, 25 MB) moves 2 last with the new values, closing the
    gap: 0, 3, 2. A new sender, 4, then pushes the oldest, 0, out: 3, 2, 4."""
    hand = Hand([(1.0, BIG)] * 5, policy="mosix", mosix_known_machines=3)
    for sender, load, used in [(0, 1.0, 10.0), (2, 2.0, 20.0), (3, 3.0, 30.0), (2, 2.5, 25.0)]:
        KN.view_put(1, sender, load, used, hand.CI, hand.CF)
    assert list(hand.view(1).items()) == [(0, (1.0, 10.0)), (3, (3.0, 30.0)), (2, (2.5, 25.0))]
    KN.view_put(1, 4, 4.0, 40.0, hand.CI, hand.CF)
    assert list(hand.view(1).items()) == [(3, (3.0, 30.0)), (2, (2.5, 25.0)), (4, (4.0, 40.0))]


def armed_on_machine_0(*memories, pinned=0, known=None, lazy=True):
    """Whether placing processes of ``memories`` MB on machine 0 (speed 1, 10 MB) of two, whose view
    is ``known`` (default: machine 1 empty), arms a wake-up; load_threshold 1, memory_threshold 0.5.
    ``pinned`` background processes (0 MB, long bursts) start on machine 0 first."""
    hand = Hand([(1.0, 10.0), (1.0, 10.0)], [(BIG, m) for m in memories], "mosix", lazy=lazy,
                background=[(0, k, BIG) for k in range(pinned)], unfinished=1, memory_threshold=0.5)
    hand.know(0, {1: (0.0, 0.0)} if known is None else known)
    for pid in range(len(memories)):
        hand.place(pid, 0)
    return hand.due(0) < math.inf


def test_mosix_arms_a_wake_up_only_when_load_or_memory_exceeds_its_threshold():
    """A 5 MB process: load 1 and 5 MB in use, neither above its threshold: no wake-up armed; a
    second process (load 2): armed. Two pinned processes (load 2) but nothing it could give away:
    none."""
    for lazy in (True, False):
        assert not armed_on_machine_0(5.0, lazy=lazy)
        assert armed_on_machine_0(5.0, 0.0, lazy=lazy)
        assert not armed_on_machine_0(pinned=2, lazy=lazy)


def test_lazy_mosix_arms_only_when_its_view_offers_a_move():
    """Load 2 on machine 0. Seeing machine 1 at load 1: 2 - 1 is not above load_threshold 1, so no
    load move is possible and lazy Mosix arms nothing (waking at every grid point arms a wake-up
    that will move nothing); seeing nothing: nothing. With 6 MB in use (above 0.5 * 10) memory
    ushering may move a process whatever the loads: armed."""
    busy = {1: (1.0, 0.0)}
    assert not armed_on_machine_0(0.0, 0.0, known=busy)
    assert armed_on_machine_0(0.0, 0.0, known=busy, lazy=False)
    assert not armed_on_machine_0(0.0, 0.0, known={})
    assert armed_on_machine_0(6.0, 0.0, known=busy)


def test_lazy_mosix_arms_only_when_a_process_fits_the_target():
    """Machine 1 (10 MB) seen idle: the load rule targets it, but a process moves only into its
    free memory. Two 2 MB processes (4 MB in use, not above 0.5 * 10): with 9.5 MB of machine 1 in
    use (0.5 free) none fits and nothing is armed; with 8 MB in use (2 free) one fits: armed. Two
    3 MB processes (6 MB, above 5): ushering's target is machine 1, whose room below 0.5 * 10 is 5 -
    6 = -1 MB with 6 MB in use: none fits, and at load 1 the load rule offers nothing (2 - 1 is not
    above 1): nothing armed; seen at 0 MB in use, room 5 MB: armed."""
    assert not armed_on_machine_0(*proc_pair(2.0), known={1: (0.0, 9.5)})
    assert armed_on_machine_0(*proc_pair(2.0), known={1: (0.0, 8.0)})
    assert not armed_on_machine_0(*proc_pair(3.0), known={1: (1.0, 6.0)})
    assert armed_on_machine_0(*proc_pair(3.0), known={1: (1.0, 0.0)})


def proc_pair(memory: float) -> tuple[float, float]:
    return memory, memory


def alert_on_machine_0(*memories, known, speed_1: float = 1.0) -> float:
    """The load below which news wakes machine 0 (speed 1, 10 MB) after processes of ``memories``
    MB are placed on it, its view ``known`` of machine 1 (``speed_1``, 10 MB); load_threshold 1,
    memory_threshold 0.5."""
    hand = Hand([(1.0, 10.0), (speed_1, 10.0)], [(BIG, m) for m in memories], "mosix", memory_threshold=0.5)
    hand.know(0, known)
    for pid in range(len(memories)):
        hand.place(pid, 0)
    return hand.alert(0)


def test_lazy_mosix_asks_the_rounds_for_the_news_that_could_open_a_move():
    """Machine 0 at load 2 (two 0 MB processes). Seeing machine 1 at load 1, only a lower load can
    open a move (2 - l > 1 needs l < 1): it asks for loads below 2 - 1, plus a margin of 1e-9 x 2
    for rounding. Every other block asks for any news (inf): machine 1 seen idle but so slow
    (speed 0.4) that one process there is load 2.5, not below 2; seen idle with 9.5 of its 10 MB
    in use, so no 2 MB process fits; memory above its threshold (two 3 MB processes, 6 > 5) with
    no room at the target (5 - 6) and the load rule closed; an empty view. A machine that could
    move, or has nothing it wants to move, asks for nothing (-inf). At the boundaries: 5 MB in use
    (two 2.5 MB processes) is not above 0.5 x 10, so the load rule alone decides (the level
    again); two 3 MB processes (6 MB, above) fit a room of exactly 5 - 2 = 3 MB at the target
    seen with 2 MB in use, so the machine could move (-inf)."""
    zero = proc_pair(0.0)
    assert alert_on_machine_0(*zero, known={1: (1.0, 0.0)}) == 2.0 - 1.0 + 1e-9 * 2.0
    assert alert_on_machine_0(*proc_pair(0.0), known={1: (0.0, 0.0)}, speed_1=0.4) == math.inf
    assert alert_on_machine_0(*proc_pair(2.0), known={1: (0.0, 9.5)}) == math.inf
    assert alert_on_machine_0(*proc_pair(3.0), known={1: (1.0, 6.0)}) == math.inf
    assert alert_on_machine_0(*proc_pair(0.0), known={}) == math.inf
    assert alert_on_machine_0(*proc_pair(0.0), known={1: (0.0, 0.0)}) == -math.inf
    assert alert_on_machine_0(0.0, known={1: (1.0, 0.0)}) == -math.inf
    assert alert_on_machine_0(*proc_pair(2.5), known={1: (1.0, 0.0)}) == 2.0 - 1.0 + 1e-9 * 2.0
    assert alert_on_machine_0(*proc_pair(3.0), known={1: (1.0, 2.0)}) == -math.inf


def first_wake_up(balance: float, interval: float, now: float) -> float:
    """When machine 0 of two (it sees machine 1 idle, set by hand; the first round comes only at
    500) first wakes under mosix with the scripted phase ``balance``, after two processes of
    demand BIG arrive at ``now``."""
    hand = Hand(TWO, [(BIG, 0.0), (BIG, 0.0)], "mosix", rng=ScriptedRng(balance=balance), balance_interval=interval,
                mosix_known_machines=1, info_interval=1000.0)
    hand.know(0, {1: (0.0, 0.0)})
    seen = []

    def arrive():
        hand.place(0, 0)
        hand.place(1, 0)
        seen.append(hand.due(0))
        hand.engine.stop()

    hand.at(now, arrive)
    hand.engine.run()
    return seen[0]


def test_mosix_wakes_on_its_grid_strictly_after_now():
    """Wake-ups of machine 0 fall at phase + k * balance_interval, phase = balance *
    balance_interval, the first strictly after the instant it starts to want one; a delay below
    1e-9 * balance_interval counts as this instant.
    balance 0.5, interval 2 (phase 1): from 0 at 1, from 1 (on the grid) at 3, from 2.5 at 3.
    phase 1e-9, interval 1: a delay of exactly 1e-9 is kept: at 1e-9.
    phase 1e-9, interval 2: 1e-9 < 2e-9 counts as now: at 2 + 1e-9."""
    assert [first_wake_up(0.5, 2.0, now) for now in (0.0, 1.0, 2.5)] == [1.0, 3.0, 3.0]
    assert first_wake_up(1e-9, 1.0, 0.0) == pytest.approx(1e-9, rel=1e-12)
    assert first_wake_up(0.5e-9, 2.0, 0.0) == pytest.approx(2 + 1e-9, rel=1e-12)


def mosix_choice(machines, memories, known, machine=0, **params):
    """The move Mosix's ``choose`` makes on ``machine`` holding processes of ``memories`` MB (placed
    at 0, min_residency 0) when its window is ``known``: ``(pid, target)`` or None."""
    hand = Hand(machines, [(BIG, m) for m in memories], "mosix", min_residency=0.0, **params)
    for pid in range(len(memories)):
        hand.place(pid, machine)
    hand.know(machine, known)
    pid, target = M.choose(machine, hand.system.now, hand.CI, hand.CF)
    return None if pid < 0 else (pid, target)


def test_mosix_knowing_no_machine_moves_nothing():
    """Machine 0 holds two processes (load 2) and has heard of no machine: no move."""
    assert mosix_choice(TWO, [0.0, 0.0], {}) is None


def test_mosix_ushering_reads_each_known_machines_memory_in_use():
    """Machine 1 (speed 1, 10 MB; memory_threshold 0.9, load_threshold 5) holds A (9.5 MB); machines
    0 and 2 have 40 MB each, and machine 1 knows machine 0, then machine 2. Seen using 10 and 25
    MB: machine 0 has the most free memory (30 MB against 15) and A goes there (room 36 - 10).
    Using 30 and 10: machine 2 (30 MB free against 10) takes A. Using 20 and 20: a tie, the
    first known, machine 0. Using 35 and 30: machine 2 has the most free memory (10 MB), but its
    room, 36 - 30 = 6 MB, does not hold A, and the load rule (load 1 against 0) moves nothing."""
    machines, usher = [(1.0, 40.0), (1.0, 10.0), (1.0, 40.0)], {"memory_threshold": 0.9, "load_threshold": 5.0}
    assert mosix_choice(machines, [9.5], {0: (0.0, 10.0), 2: (0.0, 25.0)}, machine=1, **usher) == (0, 0)
    assert mosix_choice(machines, [9.5], {0: (0.0, 30.0), 2: (0.0, 10.0)}, machine=1, **usher) == (0, 2)
    assert mosix_choice(machines, [9.5], {0: (0.0, 20.0), 2: (0.0, 20.0)}, machine=1, **usher) == (0, 0)
    assert mosix_choice(machines, [9.5], {0: (0.0, 35.0), 2: (0.0, 30.0)}, machine=1, **usher) is None


def test_mosix_ushers_the_largest_process_that_fits_the_first_of_equals():
    """Machine 0 (speed 1, 10 MB; memory_threshold 0.9) sees machine 1 (10 MB) empty: room 9 MB.
    Processes of 4, 3 and 3 MB (10 MB in use): the largest, the first, goes. Of 3, 4 and 4 MB: the
    first of the two largest, the second process."""
    machines, known = [(1.0, 10.0), (1.0, 10.0)], {1: (0.0, 0.0)}
    assert mosix_choice(machines, [4.0, 3.0, 3.0], known, memory_threshold=0.9) == (0, 1)
    assert mosix_choice(machines, [3.0, 4.0, 4.0], known, memory_threshold=0.9) == (1, 1)


def test_mosix_load_move_reads_the_targets_memory_in_use_where_it_is_known():
    """Machine 1 holds three processes (load 3) and knows machine 0 at load 2, then machine 2 (10
    MB) at load 1 using 6 MB: machine 2 is the target (3 - 1 > 1, 1 + 1 < 3) with 4 MB free.
    Processes of 5 MB do not fit it: no move; of 4 MB: the oldest goes."""
    machines, known = [(1.0, BIG), (1.0, BIG), (1.0, 10.0)], {0: (2.0, 0.0), 2: (1.0, 6.0)}
    assert mosix_choice(machines, [5.0] * 3, known, machine=1) is None
    assert mosix_choice(machines, [4.0] * 3, known, machine=1) == (0, 2)


def test_mosix_ushers_memory_only_above_the_threshold():
    """Machine 0 (speed 1, 10 MB; memory_threshold 0.5) holds p0 (2 MB) and p1 (3 MB) and sees
    machine 1 (10 MB) empty. 5 MB in use is not above 5: the load rule (2 - 0 > 1) sends the
    oldest, p0 (ushering would send the largest). With p1 of 3.5 MB, 5.5 MB is above: ushering
    sends p1 (room 0.5 * 10 = 5 MB)."""
    machines, empty = [(1.0, 10.0), (1.0, 10.0)], {1: [0.0, 0.0]}
    assert mosix_choice(machines, [2.0, 3.0], empty, memory_threshold=0.5) == (0, 1)
    assert mosix_choice(machines, [2.0, 3.5], empty, memory_threshold=0.5) == (1, 1)


def test_mosix_ushers_to_the_most_free_memory_and_fills_the_room_exactly():
    """Machine 0 (speed 1, 10 MB) holds A (9.5 MB, above 0.9 * 10); load_threshold 5. It sees
    machine 1 (100 MB) with 95 MB in use and machine 2 (50 MB) empty: the most free memory is
    machine 2's 50 MB (not machine 1's larger size): A goes there (room 45).
    memory_threshold 0.5, B (6 MB) alone on machine 0, machine 1 (12 MB) seen empty: room
    0.5 * 12 = 6 MB, B fits exactly and goes."""
    machines = [(1.0, 10.0), (1.0, 100.0), (1.0, 50.0)]
    known = {1: [1.0, 95.0], 2: [0.0, 0.0]}
    assert mosix_choice(machines, [9.5], known, load_threshold=5.0) == (0, 2)
    exact = mosix_choice([(1.0, 10.0), (1.0, 12.0)], [6.0], {1: [0.0, 0.0]}, memory_threshold=0.5)
    assert exact == (0, 1)


def test_mosix_load_move_needs_the_process_to_fit_the_targets_free_memory():
    """Machine 0 (BIG) holds three processes (load 3) and sees machine 1 (10 MB) at load 1 with
    6 MB in use: 3 - 1 > 1 and 1 + 1 < 3, free memory 10 - 6 = 4 MB. Processes of 5 MB: none
    fits, no move; of 4 MB: the oldest fits exactly and goes."""
    machines, known = [(1.0, BIG), (1.0, 10.0)], {1: [1.0, 6.0]}
    assert mosix_choice(machines, [5.0] * 3, known) is None
    assert mosix_choice(machines, [4.0] * 3, known) == (0, 1)


# --- opportunity cost ---------------------------------------------------------------------------

# Two speed-1 machines, base 2 (cost_base 'n'), processes without memory: a process's marginal
# cost on a machine of load l is c(l) = 2**((l + 1) / L) - 2**(l / L). With L = 4:
# c(0) = 2**0.25 - 1 = 0.18921, c(1) = 2**0.5 - 2**0.25 = 0.22503, c(2) = 2**0.75 - 2**0.5 = 0.26758.
# Placement on the exact state (placement_knowledge 'exact', ties to the lower index) at t=0 of processes 0-3: 0 -> m0
# (L then 2), 1 -> m1, 2 -> m0 (tie; max load 2, L = 4), 3 -> m1 (c(1) < c(2)). Placed at loads 0, 0, 1, 1.
# Processes 0 and 2 (demand 1) end at 2; at t=2 machine 1 still sees machine 0 at load 2 (round
# 1.5): c(2) is dearer than anything on machine 1, no move. Process 4 (demand 10) arrives at 3 and
# goes to the empty machine 0; machine 1 saw machine 0 empty at 2.5.
OPPORTUNITY = [(0, 1, 0, 0), (0, 10, 0, 0), (0, 1, 0, 0), (0, 20, 0, 0), (3, 10, 0, 0)]
EXACT = {"placement_knowledge": "exact"}


def test_enhanced_mosix_stability_rule():
    """At t=3 (processes 1 and 3 have done 1.5 each), process 1 was placed at cost c(0) and
    process 3 at c(1); elsewhere (machine 0 seen empty) each would cost c(0).

    reassign_factor 1.15: c(1) = 0.22503 > 1.15 c(0) = 0.21759, so process 3 moves; c(0) does not
    exceed 1.15 c(0). Process 1 then ends alone at 3 + 8.5 = 11.5; processes 4 and 3 share machine 0:
    4 ends at 3 + 20 = 23, when 3 (8.5 left, placed at c(1)) sees machine 1 empty and moves back,
    ending at 31.5. Two migrations.

    reassign_factor 1.25: c(1) < 1.25 c(0) = 0.23651: nothing ever moves. Process 4 ends at 13,
    process 1 at 20 and process 3 at 30.

    reassign_factor 1.15 with min_residency 4: at t=3 nobody has stayed 4 s; at 13 machine 1 sees
    machine 0 at load 1 (c(1) is not above 1.15 c(1)); at 20, alone, process 3 sees machine 0 empty
    and moves: same completions as with 1.25 and one migration."""
    common = {0: 2, 2: 2}
    assert_run(
        run(TWO, OPPORTUNITY, "enhanced-mosix", reassign_factor=1.15, **EXACT), {**common, 1: 11.5, 3: 31.5, 4: 23}, 2
    )
    assert_run(
        run(TWO, OPPORTUNITY, "enhanced-mosix", reassign_factor=1.25, **EXACT), {**common, 1: 20, 3: 30, 4: 13}, 0
    )
    assert_run(run(TWO, OPPORTUNITY, "enhanced-mosix", reassign_factor=1.15, min_residency=4.0, **EXACT),
               {**common, 1: 20, 3: 30, 4: 13}, 1)


def test_enhanced_mosix_greedy_rule():
    """reassign_rule 'greedy': a process moves when a known machine is cheaper for it than staying
    is now. At t=3 staying on machine 1 (load 2) costs each c(1), machine 0 (seen empty) c(0):
    process 1 moves first; machine 1's view of machine 0 then counts it, and for process 3 c(1) is
    not above c(1). Machine 0: processes 4 and 1 (8.5 left) share: 1 ends at 3 + 17 = 20, 4 at 21.5;
    process 3 alone ends at 3 + 18.5 = 21.5. At 20 no process finds a cheaper machine."""
    result = run(TWO, OPPORTUNITY, "enhanced-mosix", reassign_rule="greedy", **EXACT)
    assert_run(result, {0: 2, 2: 2, 1: 20, 3: 21.5, 4: 21.5}, 1)


def test_enhanced_mosix_residency_counts_from_placement():
    """Greedy rule, two speed-1 machines: process 0 (demand 10) alone from t=0 goes to machine 0, so
    the round of 0.5 shows machine 0 an empty machine 1. At 0.8 processes 1, 2 (demand 10) arrive: 1
    goes to the empty machine 1, 2 to machine 0 (loads 1 and 1: the first). Staying costs process 2
    c(1) > c(0), its cost on machine 1 as last seen, but it has stayed 0 s < min_residency 1: no
    move. Process 1 ends alone at 10.8; machine 0's pair (9.2 and 10 left at 0.8) then has 4.2 and
    5 left and sees machine 1 at load 1 (round 10.5; c(1) is not above c(1)): process 0 ends at
    10.8 + 8.4 = 19.2, process 2 alone at 20 (c(0) against c(0)).
    With min_residency 0.8 process 0, there exactly 0.8 s, may move and does, at 0.8 on that stale
    view (which then counts it: process 2 stays). Process 2 ends alone at 10.8; process 0 (9.2 left)
    shares machine 1 with process 1 and ends at 0.8 + 18.4 = 19.2, process 1 at 20."""
    procs = [(0, 10, 0, 0), (0.8, 10, 0, 0), (0.8, 10, 0, 0)]
    greedy = {"reassign_rule": "greedy", **EXACT}
    assert_run(run(TWO, procs, "enhanced-mosix", **greedy), {0: 19.2, 1: 10.8, 2: 20}, 0)
    assert_run(run(TWO, procs, "enhanced-mosix", min_residency=0.8, **greedy), {0: 19.2, 1: 20, 2: 10.8}, 1)


def test_enhanced_mosix_knowing_no_machine_never_reassigns():
    """mosix_known_machines 0: no machine hears of another, so none reassigns. Placed on the exact
    state (as enhanced-pvm), processes 0, 1 (demand 10) at t=0 go to machines 0 and 1; process 2
    (demand 10) at 5 to machine 0 (loads 1 and 1: the first). Process 1 ends alone at 10; machine
    0's pair (5 and 10 left at 5) ends 0 at 15 and 2 at 20, though machine 1 is empty from 10 and 2
    has stayed over 1 s.
    Placed by what the home knows (the default, 'window'), machine 0 knows no other machine: all
    three start at home, machine 0. Processes 0 and 1 do 2.5 each by 5; the three then share it,
    0 and 1 (7.5 left) ending at 5 + 3 * 7.5 = 27.5 and 2 (2.5 left) at 30, machine 1 idle throughout."""
    procs = [(0, 10, 0, 0), (0, 10, 0, 0), (5, 10, 0, 0)]
    assert_run(run(TWO, procs, "enhanced-mosix", mosix_known_machines=0, **EXACT), {0: 15, 1: 10, 2: 20}, 0)
    assert_run(run(TWO, procs, "enhanced-mosix", mosix_known_machines=0), {0: 27.5, 1: 27.5, 2: 30}, 0)


@pytest.mark.parametrize("until, jobs, slowdowns, makespan", [
    ("last-completion", None, [2.0, 1.0, 1.25], 25.0), (12.0, None, [2.0, 1.0], 10.0), (9.0, None, [], math.nan),
    (12.0, [0, 1, 0], [1.0], 10.0), (30.0, [0, 1, 0], [5.0, 1.0], 25.0)])
def test_an_execution_measures_the_jobs_completed_when_its_measurement_ends(until, jobs, slowdowns, makespan):
    """PVM on two speed-1 machines: processes of demand 5, 10 and 20 at t=0 go round robin to
    machines 0, 1, 0. Processes 0 and 2 share machine 0: 0 ends at 10 (slowdown 2), then 2 (15
    left) alone at 25 (1.25); process 1 ends alone at 10 (1). Measured to the last completion, all
    three count; cut at 12 s, the first two (makespan 10); at 9 s, none. With processes 0 and 2 one
    job ('job' slowdowns: its last completion over the demand of its first finished process, 25 / 5),
    that job counts only once 25 s are measured."""
    params = {"measure_until": until} | ({"parallel_job_slowdown": "job"} if jobs else {})
    metrics = run(TWO, [(0, 5, 0, 0), (0, 10, 0, 0), (0, 20, 0, 0)], "pvm", jobs=jobs, **params).metrics
    assert metrics["jobs"] == len(slowdowns)
    mean = sum(slowdowns) / len(slowdowns) if slowdowns else math.nan
    assert [metrics["mean_slowdown"], metrics["makespan"]] == pytest.approx([mean, makespan], rel=1e-12, nan_ok=True)


def known_placement(known: dict, **params) -> tuple[int, dict]:
    """Three speed-1 machines (memory no object), base 2, one known machine: process 0 (no memory)
    on machine 0, so L = 2; machine 0's window is ``known``. Where enhanced-mosix starts process 1
    (home 0; ``run_kernels.assign``), and machine 0's view after it."""
    hand = Hand([(1.0, BIG)] * 3, [(BIG, 0.0)] * 2, "enhanced-mosix", cost_base=2.0, mosix_known_machines=1, **params)
    hand.place(0, 0)
    hand.know(0, known)
    return int(R.assign(1, hand.CI, hand.CF)), hand.view(0)


def test_enhanced_mosix_places_only_on_its_home_or_a_machine_the_home_knows():
    """Section 4: Enhanced Mosix knows what Mosix knows. With L = 2 a process adds c(l) =
    2**((l + 1) / 2) - 2**(l / 2) at load l: c(0) = 0.41421, c(1) = 0.58579, c(2) = 0.82843.
    The home, machine 0, is at load 1: c(1). It knows machine 1 at load 2: c(2). Machine 2 is empty
    (c(0), the cheapest) but unknown: the process stays home. Knowing machine 2 empty instead, it
    goes there and the home's entry for machine 2 counts it (load 1). On the exact state ('exact',
    a reading) machines 1 and 2 are both empty, whatever the home knows: it goes to the first, 1."""
    assert known_placement({1: (2.0, 0.0)}) == (0, {1: (2.0, 0.0)})
    assert known_placement({2: (0.0, 0.0)}) == (2, {2: (1.0, 0.0)})
    assert known_placement({1: (2.0, 0.0)}, placement_knowledge="exact")[0] == 1


def test_a_job_larger_than_the_cluster_under_mosix_and_enhanced_mosix():
    """Two machines (speed 1, 10 MB), thrashing factor 10; at t=1 a job of three processes (demand
    10, 8 MB each: 24 MB, more than the cluster's 20) arrives at home machine 0, which knows (round
    0.5) machine 1 empty.

    Mosix starts all three at home (24 MB: thrashing, each at 1/30). At the wake-up of 2 (min
    residency met) memory ushering sends process 0 to machine 1 (room 0.9 * 10 = 9 MB); machine 1's
    entry then shows 8 MB (room 1): the other two stay, thrashing at 1/20 each. Process 0 (10 - 1/30
    left) ends alone at 11.9667. The round of 12.5 shows machine 1 empty: at 13 process 1 goes
    there; both (0.58333 done) end at 13 + 9.41667 = 22.4167. Two migrations.

    Enhanced Mosix (greedy, base n = 2): a process of 8 MB adds 2**0.8 - 1 = 0.74110 of memory cost
    to an empty machine and 2**1.6 - 2**0.8 = 1.29027 to one holding 8 MB; with L = 1 (then 2) its
    CPU adds 2**1 - 1 = 1 to an empty machine, 2**(1/2) - 1 = 0.41421 at L = 2, and 2 - 2**(1/2) =
    0.58579 to a machine at load 1. Process 0: home and machine 1 both cost 1.74110: home. Process 1:
    home 1.87606, machine 1 1.15532: machine 1, which the home then counts at 8 MB and load 1.
    Process 2: both 1.87606: home. The job is spread: machine 0 thrashes with two (1/20 each),
    machine 1 runs one. Process 1 ends at 11; in the scan then, machine 0 knows machine 1 from the
    round of 10.5 (8 MB, load 1): staying costs each of processes 0 and 2 1.87606, going the same:
    no move. No later arrival or completion asks again until both end together at 1 + 10 * 20 = 201."""
    machines, job = [(1.0, 10.0), (1.0, 10.0)], [(1, 10, 8, 0)] * 3
    ending = 13 + 10 - 1 / 30 - 0.55
    assert_run(run(machines, job, "mosix", jobs=[0] * 3), {0: 2 + 10 - 1 / 30, 1: ending, 2: ending}, 2)
    assert_run(run(machines, job, "enhanced-mosix", jobs=[0] * 3, reassign_rule="greedy"), {0: 201, 1: 11, 2: 201}, 0)


@pytest.mark.parametrize("jobs, over", [([0, 0, 0], True), ([0, 0, 1], False), ([0, 1, 2], False)])
def test_a_run_is_split_by_whether_one_job_needs_more_memory_than_the_cluster(jobs, over):
    """The scenario above (Mosix): three processes of 8 MB on two machines of 10 MB. As one job
    they need 24 MB > 20: the run is 'oversized', its slowdowns counted there and 0 under
    'fitting'; as jobs of 16 and 8 MB, or of 8 MB each, every job fits (the processes' sum, 24 MB,
    does not matter). Slowdowns (demand 10, arrival 1): (11.9667 - 1) / 10 and twice
    (22.4167 - 1) / 10."""
    metrics = run([(1.0, 10.0), (1.0, 10.0)], [(1, 10, 8, 0)] * 3, "mosix", jobs=jobs).metrics
    total = (2 + 10 - 1 / 30 - 1 + 2 * (13 + 10 - 1 / 30 - 0.55 - 1)) / 10
    side, other = ("oversized", "fitting") if over else ("fitting", "oversized")
    assert (metrics[side], metrics[other]) == (1.0, 0.0)
    assert metrics[f"{side}_slowdown"] == metrics["mean_slowdown"] == pytest.approx(total / 3, rel=1e-12)
    assert metrics[f"{side}_slowdown_sum"] == metrics["slowdown_sum"] == pytest.approx(total, rel=1e-12)
    assert (metrics[f"{side}_jobs"], metrics[f"{other}_jobs"]) == (3.0, 0.0)
    assert metrics[f"{other}_slowdown"] == metrics[f"{other}_slowdown_sum"] == 0.0


def test_enhanced_pvm_breaks_ties_toward_the_first_machine():
    """Machines (1, 10 MB) and (1, 100 MB); A (no memory) costs the same on both (L = 1: 2 - 1) and
    goes to machine 0, the first; B (9.5 MB) then costs 2**0.95 - 1 + c(1) on machine 0 and
    2**0.095 - 1 + c(0) on machine 1 and goes there: both run alone and end at 10. Had A gone to
    machine 1, B would cost 0.654 there against 1.346 on machine 0 and join it (both ending at 20)."""
    assert_run(run([(1.0, 10.0), (1.0, 100.0)], [(0, 10, 0, 0), (0, 10, 9.5, 0)], "enhanced-pvm"), {0: 10, 1: 10}, 0)


def test_enhanced_pvm_counts_load_per_unit_of_speed():
    """Machines of speed 1 and 2, base 2, cpu_bound 'current' (L: the power of two above the
    current largest load). Process 0 (demand 2) at t=0, L = 1: one more process adds 1 / 1 to the
    load of machine 0 and 1 / 2 to that of machine 1, costing 2**1 - 1 = 1 against 2**0.5 - 1 =
    0.414: machine 1. Now the largest load is 0.5, so L = 1; process 1 (demand 1) costs 2**1 - 1 = 1
    on machine 0 and 2**1 - 2**0.5 = 0.586 on machine 1: machine 1 again. Each gets 1: process 1
    ends at 1, process 0 (1 left, alone at 2) at 1.5."""
    machines = [(1.0, BIG), (2.0, BIG)]
    assert_run(run(machines, [(0, 2, 0, 0), (0, 1, 0, 0)], "enhanced-pvm", cpu_bound="current"), {0: 1.5, 1: 1}, 0)


def test_cost_base_n_needs_two_machines():
    """cost_base 'n' on one machine would be base 1, under which every cost is 0: refused."""
    message = r"^cluster policy: parameter cost_base = 'n' needs a cluster of at least two machines\.$"
    for policy in ("enhanced-pvm", "enhanced-mosix"):
        with pytest.raises(InputError, match=message):
            run([(1.0, BIG)], [(0, 1, 0, 0)], policy)



def test_cpu_bound_running_max_or_current_changes_an_assignment():
    """enhanced-pvm on two speed-1 machines of 100 MB, base 2.

    t=0: eight processes without memory, demand 1, alternate machines (ties to machine 0); the
    largest load reaches 4, so L = 8 (the power of two above it). All end at 4.
    t=10: q1 (no memory) goes to machine 0 (tie); p (60 MB) to machine 1 (same memory cost, less
    CPU); q2 (no memory) to machine 0 (tie). Now loads 2 and 1 and L is 4 under 'current' and 8
    under 'running-max'. Last, r (5 MB, demand 2):
      memory cost on machine 0: 2**0.05 - 1 = 0.03526, on machine 1: 2**0.65 - 2**0.6 = 0.05345;
      CPU cost, L = 4: 0.26758 on machine 0, 0.22503 on machine 1 -> machine 1 (0.2785 < 0.3028);
      CPU cost, L = 8: 2**0.375 - 2**0.25 = 0.10763 and 2**0.25 - 2**0.125 = 0.09870 -> machine 0
      (0.1429 < 0.1522).
    current: r shares machine 1 with p, ending at 10 + 2 * 2 = 14 (p then at 22).
    running-max: r is third on machine 0, ending at 10 + 3 * 2 = 16 (q1, q2 then at 32; p at 20)."""
    machines = [(1.0, 100.0), (1.0, 100.0)]
    procs = [(0, 1, 0, 0)] * 8 + [(10, 10, 0, 0), (10, 10, 60, 0), (10, 10, 0, 0), (10, 2, 5, 0)]
    burst = {k: 4 for k in range(8)}
    current = run(machines, procs, "enhanced-pvm", cpu_bound="current")
    assert_run(current, {**burst, 8: 30, 9: 22, 10: 30, 11: 14}, 0)
    running = run(machines, procs, "enhanced-pvm", cpu_bound="running-max")
    assert_run(running, {**burst, 8: 32, 9: 20, 10: 32, 11: 16}, 0)


def marginal(machine, used: float, load: float, memory: float, **params) -> float:
    """The opportunity cost's marginal cost (``opportunity_kernels.marginal``) of a process of
    ``memory`` MB on ``machine`` ``(speed, memory MB)`` with ``used`` MB in use and ``load``, the
    bound ``L`` at its start (1); the cost parameters and the thrashing factor as given."""
    hand = Hand([machine, (1.0, BIG)], policy="enhanced-pvm", **params)
    return O.marginal(0, used, load, memory, hand.CI, hand.CF)


def test_cost_model_marginal_cost_by_hand():
    """cost_base 4 (two machines), L = 1 before any observation. A 5 MB process on a machine of
    speed 2 and 10 MB, with 2.5 MB in use and load 1: memory 4**0.75 - 4**0.25 = 2**1.5 - 2**0.5,
    CPU 4**((1 + 1/2) / 1) - 4**1 = 8 - 4: sqrt(2) + 4.
    Each power's exponent is capped at 700: with base e, a 700.5 MB process on an empty 1 MB
    machine of speed 1 costs e**700 - 1 + (e - 1)."""
    assert marginal((2.0, 10.0), 2.5, 1.0, 5.0, cost_base=4.0) == pytest.approx(math.sqrt(2) + 4, rel=1e-12)
    assert marginal((1.0, 1.0), 0.0, 0.0, 700.5, cost_base=math.e) == pytest.approx(math.exp(700) - 2 + math.e)


def test_effective_cpu_load_multiplies_a_thrashing_machines_load_by_the_factor():
    """cost_base 4, L = 1, thrashing factor 10; a machine of speed 2 and 10 MB with load 1.
    Adding 5 MB to 8 MB in use goes over the memory: the load after is (1 + 1/2) x 10 = 15, the
    load before 1 (8 MB fit), so the CPU cost is 4**15 - 4**1 (with 'processes': 4**1.5 - 4 = 4).
    Adding 1 MB to 12 MB (already thrashing): 4**15 - 4**10, memory 4**1.3 - 4**1.2."""
    m, memory = (2.0, 10.0), 4**1.3 - 4**0.8
    effective = {"cost_base": 4.0, "cost_cpu_load": "effective", "thrashing_factor": 10.0}
    assert marginal(m, 8.0, 1.0, 5.0, **effective) == pytest.approx(memory + 4**15 - 4, rel=1e-12)
    assert marginal(m, 8.0, 1.0, 5.0, cost_base=4.0, thrashing_factor=10.0) == pytest.approx(memory + 4, rel=1e-12)
    assert marginal(m, 12.0, 1.0, 1.0, **effective) == pytest.approx(4**1.3 - 4**1.2 + 4**15 - 4**10, rel=1e-12)


def least_cost_choice(policy: str, reading: str) -> int:
    """Where ``policy`` places a new 1.5 MB process (``opportunity_kernels.least_cost``) on machine 0
    (speed 1, 10 MB) holding a 9 MB process and machine 1 (speed 0.25, 1000 MB) holding one of
    0 MB; base 2, cpu_bound 'current', cost_cpu_load ``reading``, thrashing factor 10."""
    hand = Hand([(1.0, 10.0), (0.25, 1000.0)], [(BIG, 9.0), (BIG, 0.0), (BIG, 1.5)], policy, cost_base=2.0,
                cpu_bound="current", cost_cpu_load=reading, thrashing_factor=10.0)
    hand.place(0, 0)
    hand.place(1, 1)
    assert hand.CF[CS.Z_BOUND] == 8.0
    return O.least_cost(2, hand.CI, hand.CF)


def test_effective_cpu_load_keeps_a_process_off_a_machine_it_would_make_thrash():
    """enhanced-pvm, base 2, cpu_bound 'current', thrashing factor 10. Machine 0: speed 1, 10 MB,
    holding A (9 MB): load 1. Machine 1: speed 0.25, 1000 MB, holding B (no memory): load 4. The
    largest load is 4, so L = 8. A new 1.5 MB process:
      machine 0: memory 2**1.05 - 2**0.9 = 0.20439; CPU 2**(2/8) - 2**(1/8) = 0.09870 ('processes');
      machine 1: memory 2**0.0015 - 1 = 0.00104; CPU 2**(8/8) - 2**(4/8) = 0.58579.
    'processes': 0.30309 < 0.58683, machine 0, where 10.5 MB > 10 MB thrashes. 'effective': the
    load after is 2 x 10 = 20, CPU 2**(20/8) - 2**(1/8) = 4.56634, so machine 1 (0.58683)."""
    assert {r: least_cost_choice("enhanced-pvm", r) for r in ("processes", "effective")} == {
        "processes": 0,
        "effective": 1,
    }


def test_cost_bound_of_an_empty_cluster():
    """Three processes on machine 0 (load 3): L = 4, the power of two above. Once all have left,
    'current' (no load now) gives L = 1; 'running-max' keeps 4."""
    bounds = {}
    for bound in ("current", "running-max"):
        hand = Hand(TWO, [(BIG, 0.0)] * 3, "enhanced-pvm", cost_base=2.0, cpu_bound=bound)
        for pid in range(3):
            hand.place(pid, 0)
        placed = float(hand.CF[CS.Z_BOUND])
        for pid in range(3):
            hand.detach(pid)
        bounds[bound] = (placed, float(hand.CF[CS.Z_BOUND]))
    assert bounds == {"current": (4.0, 1.0), "running-max": (4.0, 4.0)}


def test_effective_cpu_load_at_the_edge_of_the_memory():
    """cost_base 4, L = 1, a machine of speed 2 and 10 MB with load 1 (one more process adds 1/2).
    'effective' with thrashing factor 10: 10 MB in use is exactly full, not thrashing, and adding
    0 MB keeps it so: memory 4**1 - 4**1 = 0, CPU 4**1.5 - 4**1 = 4. Adding 5 MB to 5 MB fills it
    exactly: memory 4**1 - 4**0.5 = 2, CPU 4 again: 6.
    Factor 3, 12 MB in use (thrashing) and load 1/2, adding 1 MB: the load before is 0.5 x 3 = 1.5,
    after (0.5 + 0.5) x 3 = 3: CPU 4**3 - 4**1.5 = 64 - 8 = 56, memory 4**1.3 - 4**1.2.
    With a thrashing factor of 1 'effective' is 'processes': adding 5 MB to 8 MB (going over) at
    load 1 costs 4**1.3 - 4**0.8 + 4**1.5 - 4 (CPU 4, not 4**15 - 4)."""
    m, hp = (2.0, 10.0), {"cost_base": 4.0, "cost_cpu_load": "effective"}
    assert marginal(m, 10.0, 1.0, 0.0, thrashing_factor=10.0, **hp) == pytest.approx(4.0, rel=1e-12)
    assert marginal(m, 5.0, 1.0, 5.0, thrashing_factor=10.0, **hp) == pytest.approx(6.0, rel=1e-12)
    assert marginal(m, 12.0, 0.5, 1.0, thrashing_factor=3.0, **hp) == pytest.approx(4**1.3 - 4**1.2 + 56, rel=1e-12)
    assert marginal(m, 8.0, 1.0, 5.0, thrashing_factor=1.0, **hp) == pytest.approx(4**1.3 - 4**0.8 + 4, rel=1e-12)


def test_enhanced_mosix_costs_read_the_clusters_thrashing_factor():
    """enhanced-mosix places as enhanced-pvm, with the cluster's thrashing factor (10 here) in its
    'effective' CPU load: the case of test_effective_cpu_load_keeps_a_process_off_a_machine_it_would_make_thrash
    gives machine 0 under 'processes' and machine 1 under 'effective' (CPU 2**(20/8) - 2**(1/8)
    on machine 0, above machine 1's 0.58683)."""
    assert {r: least_cost_choice("enhanced-mosix", r) for r in ("processes", "effective")} == {
        "processes": 0,
        "effective": 1,
    }


def greedy_hand(machines, procs, known, background=()):
    """Enhanced-mosix (greedy rule, base 2, min_residency 0) right after processes ``(memory MB,
    machine)`` are placed as listed, the windows being ``known`` (one dict per machine);
    ``background`` processes start first."""
    hand = Hand(machines, [(BIG, m) for m, _ in procs], "enhanced-mosix", background=background, reassign_rule="greedy",
                cost_base=2.0, min_residency=0.0)
    for pid, (_, machine) in enumerate(procs):
        hand.place(pid, machine)
    for machine, view in enumerate(known):
        hand.know(machine, view)
    return hand


def greedy_moves(machines, procs, known, background=()):
    """The ``(pid, target)`` moves of enhanced-mosix's scan (``opportunity_kernels.reassign``) on
    ``greedy_hand(machines, procs, known, background)``."""
    hand = greedy_hand(machines, procs, known, background)
    moves, at = O.reassign(hand.system.now, hand.CI, hand.CF), int(hand.CI[CS.O_MV])
    return [(int(hand.CI[at + 2 * i]), int(hand.CI[at + 2 * i + 1])) for i in range(moves)]


def test_enhanced_mosix_sends_a_violator_to_its_cheapest_known_machine():
    """Three speed-1 machines; machine 2 holds a pinned (background) process, then p (no memory):
    load 2, L = 4, staying costs p c(1) (notation above). Machine 2 sees machine 0 at load 2, c(2),
    and machine 1 empty, c(0): p goes to the cheapest, machine 1 (c(0) < c(1)), past the pinned
    process."""
    known = [{}, {}, {0: (2.0, 0.0), 1: (0.0, 0.0)}]
    assert greedy_moves([(1.0, BIG)] * 3, [(0.0, 2)], known, background=[(2, 1, BIG)]) == [(0, 1)]


def test_enhanced_mosix_greedy_cost_of_staying_leaves_the_process_out():
    """p (5 MB) alone on machine 0 (speed 2, 10 MB), L = 1 (load 1/2): staying costs what p adds to
    the machine without it: 2**0.5 - 1 (memory 0 -> 5 of 10 MB) + 2**0.5 - 1 (load 0 -> 1/2) =
    0.82843. Machine 1 seen empty costs it, at speed 1 and 1000 MB: 2**0.005 - 1 + 2**1 - 1 =
    1.00347, dearer: p stays; at speed 2 and 20 MB: 2**0.25 - 1 + 2**0.5 - 1 = 0.60342: p goes."""
    procs, known = [(5.0, 0)], [{1: (0.0, 0.0)}, {}]
    assert greedy_moves([(2.0, 10.0), (1.0, 1000.0)], procs, known) == []
    assert greedy_moves([(2.0, 10.0), (2.0, 20.0)], procs, known) == [(0, 1)]


def test_enhanced_mosix_greedy_scan_counts_the_processes_it_already_sends_away():
    """Four processes (no memory) on machine 0, machine 1 (both speed 1) seen empty; with c(k) the
    CPU cost one process adds at load k (increasing in k). Staying costs the first process c(3)
    > c(0): it goes, and the view of machine 1 counts it. The second: staying without the first
    costs c(2) > c(1): it goes. The third: staying without both costs c(1), going c(2): it stays,
    and so does the fourth. Two leave, two stay. Priced on the machine as it was before the scan,
    staying would cost c(3) each time and three would leave (c(2) < c(3)), leaving machine 0 the
    lighter: 1 against 3."""
    procs = [(0.0, 0)] * 4
    assert greedy_moves([(1.0, BIG)] * 2, procs, [{1: (0.0, 0.0)}, {}]) == [(0, 1), (1, 1)]


def test_enhanced_mosix_scans_a_later_machine_against_the_second_machine_it_knows():
    """The scan above on the third machine: machine 0 holds process 0, machine 2 processes 1-4 (no
    memory; all speed 1); machine 2 knows machine 0 at load 2, then machine 1 empty (the second
    entry of its view). Staying costs process 1 c(3), machine 1 c(0), machine 0 c(2): it goes to
    machine 1, the view counting it; process 2: staying c(2) > machine 1's c(1): it goes; process
    3: staying c(1) against c(2) on either: it stays, and so does process 4. Machines 0 and 1
    know nothing and are not scanned."""
    procs = [(0.0, 0)] + [(0.0, 2)] * 4
    known = [{}, {}, {0: (2.0, 0.0), 1: (0.0, 0.0)}]
    assert greedy_moves([(1.0, BIG)] * 3, procs, known) == [(1, 1), (2, 1)]


@pytest.mark.parametrize("seen_load, moves", [(0.0, [(1, 1)]), (5.0, [])])
def test_enhanced_mosix_prices_each_known_machine_at_its_own_speed_and_seen_load(seen_load, moves):
    """Machines of speed 1, 4 and 1 (memory no object); process 0 on machine 0, process 1 on
    machine 2: the largest load is 1, so L = 2. Staying costs process 1 2**(1/2) - 1 = 0.41421.
    Machine 2 knows machine 0 at load 1: 2**1 - 2**(1/2) = 0.58579, and then machine 1 at the
    load it saw, x, where one more process adds 1/4: 2**((x + 1/4)/2) - 2**(x/2). Seen empty
    (x = 0): 2**(1/8) - 1 = 0.09051, cheaper than staying: process 1 goes to machine 1 (priced at
    speed 1 it would cost 0.41421, no less than staying). Seen at x = 5: 2**2.625 - 2**2.5 =
    0.51200, dearer than staying: it stays (priced at load 0 it would go)."""
    procs = [(0.0, 0), (0.0, 2)]
    known = [{}, {}, {0: (1.0, 0.0), 1: (seen_load, 0.0)}]
    assert greedy_moves([(1.0, BIG), (4.0, BIG), (1.0, BIG)], procs, known) == moves


def test_enhanced_mosix_greedy_cost_of_staying_divides_the_other_processes_by_the_speed():
    """Processes 0 and 1 on machine 0 (speed 2), machine 1 (speed 1.5) seen empty; the largest
    load is 2 / 2 = 1, so L = 2. Staying costs each the load of the other, 1 / 2, going to 1:
    2**(1/2) - 2**(1/4) = 0.22500; machine 1 costs 2**(1/3) - 1 = 0.25992: both stay. (The other
    process counted as a load of 1 x 2 would make staying cost 2**1.25 - 2 = 0.37841: process 0
    would go.)"""
    assert greedy_moves([(2.0, BIG), (1.5, BIG)], [(0.0, 0), (0.0, 0)], [{1: (0.0, 0.0)}, {}]) == []


def test_enhanced_mosix_greedy_scan_counts_the_memory_it_already_sends_away():
    """Two processes of 4 MB on machine 0 (speed 1, 8 MB), machine 1 (speed 1, 10 MB) seen empty;
    base 2, L = 4 (load 2). Staying costs the first 2**1 - 2**0.5 (memory 4 -> 8 of 8 MB) +
    2**0.5 - 2**0.25 (load 1 -> 2) = 0.81079; machine 1 costs it 2**0.4 - 1 + 2**0.25 - 1 =
    0.50872: it goes, and the view counts it. The second: machine 1 now costs 2**0.8 - 2**0.4 +
    2**0.5 - 2**0.25 = 0.64660; staying without the first (0 -> 4 MB, load 0 -> 1) costs
    2**0.5 - 1 + 2**0.25 - 1 = 0.60342: it stays. With the first's memory still counted (4 -> 8
    MB) staying would cost 0.77499, and with the machine as it was 0.81079: it would go too."""
    procs = [(4.0, 0), (4.0, 0)]
    assert greedy_moves([(1.0, 8.0), (1.0, 10.0)], procs, [{1: (0.0, 0.0)}, {}]) == [(0, 1)]


# Three speed-1 machines; process 0 (no memory) on machine 0, processes 1-3 on machine 1 (loads 1,
# 3 and 0: L = 4), which alone knows others. With c_k = 2**((k + 1)/4) - 2**(k/4) the CPU cost of
# one process more at load k: c_0 = 0.18921, c_1 = 0.22503, c_2 = 0.26758, c_3 = 0.31821.


def test_enhanced_mosix_greedy_scan_prices_the_memory_each_known_machine_was_seen_using():
    """Machines of 16, 8 and 10 MB; processes 1-3 of 2, 1 and 2 MB (5 MB in use on machine 1).
    Machine 1 knows machine 0 at load 2 using 0 MB, then machine 2 at load 0 using 4 MB.
    Process 1: staying costs 2**(5/8) - 2**(3/8) + c_2 = 0.51295; machine 0 2**(2/16) - 1 + c_2 =
    0.35809; machine 2 2**0.6 - 2**0.4 + c_0 = 0.38542: it goes to machine 0 (its entry: load 3,
    2 MB). Process 2: staying (without process 1's 2 MB) 2**(3/8) - 2**(2/8) + c_1 = 0.33266;
    machine 0 2**(3/16) - 2**(2/16) + c_3 = 0.36649; machine 2 2**0.5 - 2**0.4 + c_0 = 0.28391: it
    goes to machine 2 (load 1, 5 MB). Process 3: staying (0 MB and no process left) 2**(2/8) - 1
    + c_0 = 0.37841; machine 0 2**(4/16) - 2**(2/16) + c_3 = 0.41691; machine 2 2**0.7 - 2**0.5 +
    c_1 = 0.43532: it stays. Machine 2 priced at 0 MB would have taken process 1 (0.33791); process
    3 would go to machine 2 had its entry not counted process 2's memory (0.37373), and to machine 0
    had staying counted the memory already sent (0.43458)."""
    procs = [(0.0, 0), (2.0, 1), (1.0, 1), (2.0, 1)]
    known = [{}, {0: (2.0, 0.0), 2: (0.0, 4.0)}, {}]
    assert greedy_moves([(1.0, 16.0), (1.0, 8.0), (1.0, 10.0)], procs, known) == [(1, 0), (2, 2)]


def test_enhanced_mosix_greedy_scan_leaves_out_only_the_memory_it_sent():
    """Machines of 20, 8 and 6 MB; processes 1-3 of 1, 2 and 3 MB (6 MB in use on machine 1).
    Machine 1 knows machine 0 at load 3 using 0 MB, then machine 2 at load 1 using 2 MB.
    Process 1: staying costs 2**(6/8) - 2**(5/8) + c_2 = 0.40716; machine 0 2**(1/20) - 1 + c_3 =
    0.35347; machine 2 2**(3/6) - 2**(2/6) + c_1 = 0.37932: it goes to machine 0 (load 4, 1 MB).
    Process 2: staying (without the 1 MB sent) 2**(5/8) - 2**(3/8) + c_1 = 0.47040; machine 0
    2**(3/20) - 2**(1/20) + 2**(5/4) - 2 = 0.45272; machine 2 2**(4/6) - 2**(2/6) + c_1 = 0.55251:
    it goes to machine 0 (load 5, 3 MB). Process 3: staying (0 MB left) 2**(3/8) - 1 + c_0 =
    0.48605; machine 0 2**(6/20) - 2**(3/20) + 2**(6/4) - 2**(5/4) = 0.57159; machine 2 0.74691:
    it stays. Had the scan started from 1 MB sent, process 2 would stay (0.45003); had it sent
    none, process 3 would go (0.57416); machine 2 priced at 0 MB would take process 1 (0.34749)."""
    procs = [(0.0, 0), (1.0, 1), (2.0, 1), (3.0, 1)]
    known = [{}, {0: (3.0, 0.0), 2: (1.0, 2.0)}, {}]
    assert greedy_moves([(1.0, 20.0), (1.0, 8.0), (1.0, 6.0)], procs, known) == [(1, 0), (2, 0)]


def test_enhanced_mosix_scans_every_machine_that_knows_another():
    """Four speed-1 machines; the last holds processes 0 and 1 (no memory; load 2, L = 4) and knows
    machine 0 empty: staying costs process 0 c_1 > c_0, so it goes (the entry counts it), and
    process 1, c_0 against c_1, stays."""
    known = [{}, {}, {}, {0: (0.0, 0.0)}]
    assert greedy_moves([(1.0, BIG)] * 4, [(0.0, 3), (0.0, 3)], known) == [(0, 0)]


def test_enhanced_mosix_makes_every_move_of_its_scan():
    """The scan of test_enhanced_mosix_scans_a_later_machine_against_the_second_machine_it_knows
    decides two moves, processes 1 and 2 to machine 1; ``run_kernels.reassign`` makes both: each
    has migrated once and is on machine 1 (no migration cost), the others have not moved."""
    procs = [(0.0, 0)] + [(0.0, 2)] * 4
    hand = greedy_hand([(1.0, BIG)] * 3, procs, [{}, {}, {0: (2.0, 0.0), 1: (0.0, 0.0)}])
    hand.system._call(R.reassign, hand.system.now)
    assert [(hand.proc(p).machine, hand.proc(p).migrations) for p in range(5)] == [
        (0, 0),
        (1, 1),
        (1, 1),
        (2, 0),
        (2, 0),
    ]


# --- optimal ----------------------------------------------------------------------------------------

OPTIMAL_CASE = [(0, 3, 0, 0), (0, 1, 0, 0), (0, 6, 0, 0), (0, 1, 0, 0), (0, 12, 0, 0), (0, 12, 0, 0)]


def test_optimal_moves_the_process_with_most_work_left():
    """Two speed-1 machines; processes 0-5 at t=0 go alternately to machines 0 and 1. Machine 0:
    demands 3, 6, 12 (processes 0, 2, 4); machine 1: 1, 1, 12 (1, 3, 5). At t=3 processes 1 and 3
    end; counts 3 and 1, so one process moves: the one with most work left, 4 (11; 0 has 2, 2 has
    5). Pairs: 0 ends at 3 + 4 = 7 (counts 1 and 2: no gain in moving), 2 alone at 7 + 3 = 10; then
    machine 1's pair (7.5 left each) is split and both end at 17.5. Moving the least work (process
    0) would leave 2 and 4 together and end 2 at 13."""
    assert_run(run(TWO, OPTIMAL_CASE, "optimal"), {0: 7, 1: 3, 2: 10, 3: 3, 4: 17.5, 5: 17.5}, 2)


def test_optimal_migrations_are_free():
    """optimal is the bound with free migration: with migration_cost 5 the case above keeps its
    completions (stalled 5 s, process 4, with 11 s of work left at t=3, could not end before 19)."""
    assert_run(run(TWO, OPTIMAL_CASE, "optimal", migration_cost=5.0), {0: 7, 1: 3, 2: 10, 3: 3, 4: 17.5, 5: 17.5}, 2)


def test_optimal_places_where_the_load_per_speed_ends_least():
    """Machines of speed 1 and 2. Process 0 (demand 20) alone: (0 + 1) / 1 = 1 against (0 + 1) / 2
    = 0.5, machine 1; it ends at 10. Process 1 (demand 1) at t=1: 1 / 1 against (1 + 1) / 2 = 1, a
    tie, machine 0; alone, it ends at 2. No move ever lowers a load (at 1: 2 / 2 is not below 1; at
    2: 1 / 1 is not below 1 / 2)."""
    assert_run(run([(1.0, BIG), (2.0, BIG)], [(0, 20, 0, 0), (1, 1, 0, 0)], "optimal"), {0: 10, 1: 2}, 0)


def test_optimal_evens_loads_per_unit_of_speed():
    """Machines of speed 0.5 and 2. At t=0 processes 0, 1 (demand 2) and 2 (demand 6) all go to
    machine 1 ((k + 1) / 2 for k = 0, 1, 2 against 1 / 0.5 = 2) and stay (load 1.5; moved, one
    would have load 2 on machine 0): each gets 2/3 and has done 4/3 at t=2, when process 3 (demand
    2) goes to machine 0 (2 against 4 / 2 = 2, a tie) and stays (4 / 2 = 2 is not below its load
    1 / 0.5). Processes 0, 1 end at 2 + (2/3) / (2/3) = 3; machine 0's load 2 is then above
    machine 1's 0.5, and (1 + 1) / 2 = 1 is below 2: process 3 (1.5 left) joins process 2 (4 left)
    at rate 1: 3 ends at 4.5, 2 alone at 4.5 + 2.5 / 2 = 5.75."""
    procs = [(0, 2, 0, 0), (0, 2, 0, 0), (0, 6, 0, 0), (2, 2, 0, 0)]
    assert_run(run([(0.5, BIG), (2.0, BIG)], procs, "optimal"), {0: 3, 1: 3, 2: 5.75, 3: 4.5}, 1)


def test_optimal_fills_an_emptied_machine():
    """Machines of speed 1 and 4; at t=0 process 3 (demand 1) goes to machine 0 ((0 + 1) / 1 = 1
    ties with (3 + 1) / 4) and processes 0 (demand 10), 1, 2, 4, 5 (demand 8) to machine 1 (load
    5 / 4; moved, one would have load 2 on machine 0). Each of the five gets 0.8. Process 3 ends at
    1: machine 0 empty, 1 / 1 is below 5 / 4, so process 0 (9.2 left, the most) moves there;
    (1 + 1) / 1 = 2 is not below 4 / 4. The four others (7.2 left, rate 1) end at 8.2; then 1 / 4
    is below 1 / 1 and process 0 (2 left) moves back to speed 4: it ends at 8.7. Two migrations."""
    procs = [(0, 10, 0, 0), (0, 8, 0, 0), (0, 8, 0, 0), (0, 1, 0, 0), (0, 8, 0, 0), (0, 8, 0, 0)]
    expected = {0: 8.7, 1: 8.2, 2: 8.2, 3: 1, 4: 8.2, 5: 8.2}
    assert_run(run([(1.0, BIG), (4.0, BIG)], procs, "optimal"), expected, 2)


def test_optimal_never_moves_a_process_that_completes_at_this_instant():
    """Machines of speed 1 and 4; processes 0, 1, 2, 4, 5 (demand 8) go to machine 1 and process 3
    (demand 1) to machine 0, as above. Process 3 ends at 1; one of the five (7.2 left, the last of
    equals) moves to machine 0 and the four others (rate 1 each) also have 7.2 left: all five end
    together at 8.2, on both machines. Whichever completion event of that instant fires first,
    the processes of the other machine are finishing too: they neither count nor move. One
    migration (two before, when machine 1's event came first and machine 0's process, done but
    for its pending event, was sent to the emptied faster machine)."""
    procs = [(0, 8, 0, 0)] * 3 + [(0, 1, 0, 0)] + [(0, 8, 0, 0)] * 2
    expected = {0: 8.2, 1: 8.2, 2: 8.2, 3: 1, 4: 8.2, 5: 8.2}
    assert_run(run([(1.0, BIG), (4.0, BIG)], procs, "optimal"), expected, 1)


def test_optimal_counts_loads_within_a_relative_1e_12_as_equal():
    """Machines of speed 1 and s = 1 - 1e-12. Process 0 (demand 1) goes to machine 0 (1 < 1 / s),
    process 1 (demand 10) to machine 1 (1 / s < 2). When 0 ends at 1, moving 1 to the empty machine
    0 would bring its load from 1 / s to 1: in floating point 1 / s * (1 - 1e-12) == 1.0, a gain of
    no more than the tolerance, so it stays and ends at 10 / s."""
    s = 1 - 1e-12
    assert_run(run([(1.0, BIG), (s, BIG)], [(0, 1, 0, 0), (0, 10, 0, 0)], "optimal"), {0: 1, 1: 10 / s}, 0)


def test_optimal_moves_as_many_processes_as_even_the_counts():
    """Two speed-1 machines; at t=0 processes 0-7 alternate (ties to machine 0): machine 0 holds
    0, 2, 4, 6 (demand 10), machine 1 holds 1, 3, 5, 7 (demand 1). At 1/4 each, the four short ones
    end together at 4, the long ones with 9 left. Counts 4 and 0: moving one gives 3 and 1, and
    1 + 1 = 2 is still below 3, so a second moves: 2 and 2 (3 is not below 2, stop). Two pairs
    at 1/2 with 9 left each: all four end at 4 + 18 = 22. Two migrations."""
    procs = [(0, 10, 0, 0), (0, 1, 0, 0)] * 4
    assert_run(run(TWO, procs, "optimal"), {0: 22, 2: 22, 4: 22, 6: 22, 1: 4, 3: 4, 5: 4, 7: 4}, 2)


# --- workloads ------------------------------------------------------------------------------------

def streams(rep: int = 0) -> Streams:
    return Streams(replication_seed(7, "test-cluster-behaviour", 0, rep))


def test_batch_workload():
    """n_procs processes at t=0 on home_machine mod n; constant demands are demand_value, uniform
    ones lie in (0, demand_max]; background process k sits on machine k mod n with the period."""
    params = full_params({"workload": "batch", "n_procs": 5, "home_machine": 7, "demand_value": 42.0,
                          "background_procs": 5, "background_max_period": 3.0})
    work = wl.generate(params, streams(), 3)
    assert [(p.arrival, p.demand, p.home, p.measured) for p in work.procs] == [(0.0, 42.0, 1, True)] * 5
    assert [(b.machine, b.max_period) for b in work.background] == [(0, 3.0), (1, 3.0), (2, 3.0), (0, 3.0), (1, 3.0)]
    uniform = wl.generate({**params, "demand_kind": "uniform", "demand_max": 6.0, "n_procs": 200}, streams(), 3)
    demands = [p.demand for p in uniform.procs]
    assert 0 < min(demands) and max(demands) <= 6.0 and len(set(demands)) == 200


def test_amir_workload_caps_and_parallel_jobs():
    """Every job parallel (parallel_fraction 1) of 1-3 processes: the processes of one job share
    arrival, demand, memory and home and arrive together. Demands parallel_cpu_scale / r are at
    least the scale and at most the cap (here 30, reached when r < 2/3); memory is at most
    memory_cap_percent of reference_memory_mb (here 50% of 64 MB, reached when m < 1/50)."""
    params = full_params({"parallel_fraction": 1.0, "parallel_procs_max": 3, "parallel_cpu_scale": 20.0,
                          "parallel_cpu_cap": 30.0, "memory_cap_percent": 50.0, "arrival_window": 2000.0})
    work = wl.generate(params, streams(), 6)
    jobs: dict[int, set] = {}
    for p in work.procs:
        jobs.setdefault(p.job, set()).add((p.arrival, p.demand, p.memory, p.home))
    assert all(len(v) == 1 for v in jobs.values())
    widths = [len(group) for _, group in work.arrival_groups()]
    assert set(widths) == {1, 2, 3} and len(widths) == len(jobs)
    demands = [p.demand for p in work.procs]
    assert min(demands) >= 20.0 and max(demands) == 30.0
    assert max(p.memory for p in work.procs) == pytest.approx(32.0)
    singles = wl.generate({**params, "parallel_fraction": 0.0, "single_cpu_scale": 2.0, "single_cpu_cap": 5.0},
                          streams(), 6)
    assert {len(g) for _, g in singles.arrival_groups()} == {1}
    assert min(p.demand for p in singles.procs) >= 2.0 and max(p.demand for p in singles.procs) == 5.0


def test_amir_draws_arrivals_and_job_widths_from_their_streams():
    """Job arrivals are the running sums of exponential gaps of mean mean_interarrival 10 s from the
    'arrivals' stream, those before arrival_window 300. From the 'jobs' stream come first the n
    draws U (job j is parallel iff U_j < parallel_fraction 0.5), then n widths U{1..4} (used by
    parallel jobs only): each job arrives as a group of that many processes."""
    fresh = streams()
    times = np.cumsum(fresh["arrivals"].exponential(10.0, 1000))
    times = times[times < 300.0]
    parallel = fresh["jobs"].random(times.size) < 0.5
    widths = np.where(parallel, fresh["jobs"].integers(1, 5, times.size), 1)
    params = full_params({"mean_interarrival": 10.0, "arrival_window": 300.0, "parallel_fraction": 0.5,
                          "parallel_procs_max": 4})
    groups = wl.generate(params, streams(), 6).arrival_groups()
    assert [(t, len(g)) for t, g in groups] == [(float(t), int(w)) for t, w in zip(times, widths)]



def test_batch_draws_demands_and_background_seeds_from_their_streams():
    """Each batch process is its own job (job = pid = i), at t=0, without memory, on home_machine
    mod n (5 mod 2 = 1), measured. Uniform demands are demand_max * (1 - U), U the 'demand'
    stream's draws in order; the background seeds are the 'background' stream's first integers in
    [0, 2**63 - 1)."""
    params = full_params({"workload": "batch", "n_procs": 4, "demand_kind": "uniform", "demand_max": 6.0,
                          "home_machine": 5, "background_procs": 3})
    work = wl.generate(params, streams(), 2)
    fresh = streams()
    demand = 6.0 * (1.0 - fresh["demand"].random(4))
    assert work.procs == tuple(ProcSpec(i, i, 0.0, float(demand[i]), 0.0, 1, True) for i in range(4))
    assert [b.seed for b in work.background] == fresh["background"].integers(0, 2**63 - 1, 3).tolist()


def test_batch_refuses_an_unknown_demand_kind():
    params = {**full_params({"workload": "batch"}), "demand_kind": "normal"}  # past the parameter check
    with pytest.raises(InputError, match="parameter 'demand_kind': unknown value 'normal'"):
        wl.batch(params, streams(), 2)


def test_poisson_workload_draws_and_warmup():
    """Arrivals are the running sums of exponential gaps of mean 1 / arrival_rate = 2 s from the
    'arrivals' stream, those before arrival_window 100; demands the 'demand' stream's exponential
    draws of mean_demand 3, in order (none near the 1e-12 floor); no memory, machine 0, pid = job =
    index. warmup is set to the arrival of process 10: it and every later process are measured
    (arrival >= warmup), the first ten are not."""
    fresh = streams()
    times = np.cumsum(fresh["arrivals"].exponential(2.0, 1000))
    times = times[times < 100.0]
    demand = fresh["demand"].exponential(3.0, times.size)
    params = full_params({"workload": "poisson", "arrival_rate": 0.5, "mean_demand": 3.0, "arrival_window": 100.0,
                          "warmup": float(times[10])})
    work = wl.generate(params, streams(), 1)
    assert work.procs == tuple(ProcSpec(i, i, float(t), float(d), 0.0, 0, i >= 10)
                               for i, (t, d) in enumerate(zip(times, demand)))


def test_amir_draws_demands_memory_and_homes_from_their_streams():
    """Job j is parallel iff U_j < parallel_fraction (U: the 'jobs' stream's first draws; widths
    U{1..4} next): with the fraction set to U_0 itself, job 0 is single. Its processes (pids 0, 1,
    ... in order) have demand scale / D_j (D from 'demand'; scale 2 single, 20 parallel; caps out
    of reach), memory 64 MB * min(1 / M_j, 100) / 100 (M from 'memory'), home U{0..2} (from
    'home'). Drawing it calls no deprecated numpy function (warnings are errors here)."""
    fresh = streams()
    times = np.cumsum(fresh["arrivals"].exponential(10.0, 1000))
    n = int((times < 300.0).sum())
    u = fresh["jobs"].random(n)
    parallel = u < u[0]
    widths = np.where(parallel, fresh["jobs"].integers(1, 5, n), 1)
    demand = np.where(parallel, 20.0, 2.0) / fresh["demand"].random(n)
    memory = 64.0 * np.minimum(1.0 / fresh["memory"].random(n), 100.0) / 100.0
    home = fresh["home"].integers(0, 3, n)
    params = full_params({"arrival_window": 300.0, "parallel_fraction": float(u[0]), "parallel_procs_max": 4,
                          "single_cpu_cap": 1e300, "parallel_cpu_cap": 1e300})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        work = wl.generate(params, streams(), 3)
    expected = [(j, float(demand[j]), float(memory[j]), int(home[j])) for j in range(n) for _ in range(widths[j])]
    got = [(p.pid, p.job, p.demand, p.memory, p.home) for p in work.procs]
    assert got == [(i, *e) for i, e in enumerate(expected)]
    assert not parallel[0] and parallel.any()


class EighthGaps:
    """Stands in for a Generator whose every exponential draw is an eighth of its mean; more than
    200 draws in all are an error."""

    def __init__(self):
        self.left = 200

    def exponential(self, scale, size):
        self.left -= size
        assert self.left >= 0, "more than 200 draws"
        return np.full(size, scale / 8)


def test_poisson_times_draws_until_the_window_is_covered():
    """Arrivals are the running sums of the gaps, those before the window. Mean gap 1, window 10,
    gaps of 1/8: the first batch of draws (10 + 6 sqrt(10) + 16 = 44 gaps) reaches only 5.5, so
    more follow (26 at a time, 96 in all): arrivals k/8 for k = 1..79 (80/8 = 10 is not before the
    window). A mean gap of 1e30 against a window of 1: no arrival, after a handful of draws."""
    assert wl.poisson_times(EighthGaps(), 1.0, 10.0).tolist() == [k / 8 for k in range(1, 80)]
    assert wl.poisson_times(np.random.default_rng(0), 1e30, 1.0).size == 0


def test_an_unknown_workload_is_named_with_the_known_ones():
    """A workload kind past the parameter check but unknown to generate is bad input, and the
    message lists the three generators."""
    params = {**full_params({}), "workload": "x"}
    with pytest.raises(
        InputError, match=r"^parameter 'workload': unknown value 'x' \(use one of amir, batch, poisson\)\.$"
    ):
        wl.generate(params, streams(), 1)


# --- bookkeeping of the cluster: fresh objects, migrate, drop, ties, measure ---------------------

class Recording(Policy):
    """The base policy (deciding in Python), noting the machine of each ``on_completion`` call."""

    def __init__(self):
        super().__init__({}, None)
        self.completions: list[int] = []

    def on_completion(self, machine, cluster):
        self.completions.append(machine)


def test_expand_machines_names_counts_and_defaults():
    """Groups expand in order to ``name-k`` for k < count; count defaults to 1 and name to 'm'."""
    out = expand_machines([{"name": "fast", "count": 2, "speed": 2, "memory_mb": 8}, {"speed": 1, "memory_mb": 4}])
    assert [(m.index, m.name, m.speed, m.memory) for m in out] == [
        (0, "fast-0", 2.0, 8.0), (1, "fast-1", 2.0, 8.0), (2, "m-0", 1.0, 4.0)]
    with pytest.raises(InputError, match=r"^parameter 'machines': the cluster has no machine\.$"):
        expand_machines([])


def test_full_params_names_the_cluster_model_in_errors():
    """An unknown parameter is reported against model 'cluster'."""
    with pytest.raises(InputError, match=r"^unknown parameter\(s\) of model 'cluster': bogus$"):
        full_params({"bogus": 1})


def test_a_fresh_cluster_is_finished():
    """No foreground process: unfinished is 0, so the cluster counts as finished, before its
    buffers are built and after."""
    cluster = ClusterSystem(Engine(), expand_machines(groups([(1.0, BIG)])), 10.0, Policy({}, None), lambda p: None)
    assert (cluster.unfinished, cluster.finished) == (0, True)
    assert Hand([(1.0, BIG)]).system.finished


def test_migrate_ignores_unplaced_pinned_and_same_machine_processes():
    """migrate does nothing to a process on no machine (machine -1), a pinned one or one already on
    the target: no counts change and each stays where it is."""
    hand = Hand(TWO, [(BIG, 0.0), (BIG, 0.0)], background=[(0, 1, BIG)])
    fresh, staying, pinned = hand.proc(0), hand.place(1, 0), hand.proc(-1)
    for p, target in ((fresh, 1), (pinned, 1), (staying, 0)):
        hand.system.migrate(p, target)
    assert [p.machine for p in (fresh, pinned, staying)] == [-1, 0, 0]
    assert [p.migrations for p in (fresh, pinned, staying)] + [hand.system.migrations] == [0, 0, 0, 0]


def test_migrations_count_per_process_and_cost_defaults_to_zero():
    """Two free moves 0 -> 1 -> 0 (cost omitted, so 0: placed at once) count 2 for the process and
    the cluster; then apply with cost 2 leaves it on no machine (-1) until t=2."""
    hand = Hand(TWO, [(BIG, 0.0)])
    p = hand.place(0, 0)
    hand.system.migrate(p, 1)
    assert p.machine == 1
    hand.system.migrate(p, 0)
    assert (p.machine, p.migrations, hand.system.migrations) == (0, 2, 2)
    hand.system.apply([(p, 1)], 2.0)
    assert (p.machine, p.migrations) == (-1, 3)
    hand.run(until=1.5)
    assert p.machine == -1
    hand.run(until=2.5)
    assert p.machine == 1


def test_drop_resets_memory_and_counts_pinned():
    """Machine 0 holds two pinned (background) processes, bursts d (seed 1, max_period 2) and one
    of up to 1e6 s, then 0.1 and 0.2 MB unpinned processes. Moving both unpinned to machine 1
    leaves 2 pinned; the two bursts then share speed 1, so the short one ends at 2 d (the cluster
    is finished: it does not restart), leaving 1 pinned. Moving both back empties machine 1:
    exactly 0 MB in use (not 0.1 + 0.2 - 0.1 - 0.2 = 2.8e-17)."""
    d = 2.0 * np.random.Generator(np.random.PCG64(1)).random()
    hand = Hand(TWO, [(BIG, 0.1), (BIG, 0.2)], background=[(0, 1, 2.0), (0, 2, 1e6)], unfinished=0)
    small, large, short = hand.place(0, 0), hand.place(1, 0), hand.proc(-1)
    hand.system.migrate(small, 1)
    hand.system.migrate(large, 1)
    m0, m1 = hand.system.machines
    assert (m0.n_procs - m0.movable, m0.movable) == (2, 0)
    hand.run(until=2 * d + 1.0)
    assert (short.completion, short.machine, m0.n_procs - m0.movable, m0.movable) == (
        pytest.approx(2 * d, rel=1e-12),
        -1,
        1,
        0,
    )
    hand.system.migrate(small, 0)
    hand.system.migrate(large, 0)
    assert m1.mem_used == 0.0 and not m1.procs


def tied_completions(delta: float) -> list[float]:
    """Completion times of two processes of demands 1000 and 1000 + delta (0 MB, rate 1/2 each)
    placed at t=0 on a speed-1 machine."""
    hand = Hand([(1.0, BIG)], [(1000.0, 0.0), (1000.0 + delta, 0.0)])
    hand.place(0, 0)
    hand.place(1, 0)
    hand.engine.run()
    assert [hand.system.remaining(hand.proc(i)) for i in range(2)] == [0.0, 0.0]
    return [hand.proc(i).completion for i in range(2)]


def test_completion_ties_are_relative_above_a_tag_of_one():
    """The first tag is 1000, so the tie limit is 1000 + 1e-9 * 1000 = 1000 + 1e-6: a second tag at
    1000 + 5e-7 completes with the first at t=2000; one at 1000 + 2e-6 completes alone, its last
    2e-6 at rate 1, at 2000 + 2e-6. A completed process has 0 remaining."""
    assert tied_completions(5e-7) == [2000.0, 2000.0]
    assert tied_completions(2e-6) == pytest.approx([2000.0, 2000.0 + 2e-6], rel=0, abs=1e-9)
    assert tied_completions(2e-6)[1] > 2000.0


def test_completion_ties_are_absolute_up_to_a_tag_of_one():
    """Tags 1 and 1 + 1e-9 (the limit exactly, computed as the model does) on a speed-1 machine
    complete together at t=2; 1 and 1 + 1.5e-9 do not (limit 1 + 1e-9 * max(1, 1))."""
    def ends(demand):
        hand = Hand([(1.0, BIG)], [(1.0, 0.0), (demand, 0.0)])
        hand.place(0, 0)
        hand.place(1, 0)
        hand.engine.run()
        return [hand.proc(i).completion for i in range(2)]
    assert ends(1.0 + 1e-9 * 1.0) == [2.0, 2.0]
    assert ends(1.0 + 1.5e-9)[1] > 2.0


def test_on_completion_follows_foreground_completions_only():
    """At t=0 a background burst d < 2 (seed 1, max_period 2) on machine 0 and a foreground process
    of demand 3 on machine 1, under a policy deciding in Python: the burst ends at d with no
    on_completion call; the process ends at t=3 with one call, for machine 1."""
    d = 2.0 * np.random.Generator(np.random.PCG64(1)).random()
    policy = Recording()
    hand = Hand(TWO, [(3.0, 0.0)], policy, background=[(0, 1, 2.0)])
    fg, bg = hand.place(0, 1), hand.proc(-1)
    hand.run(until=d + 0.5)
    assert (bg.completion, policy.completions) == (pytest.approx(d, rel=1e-12), [])
    hand.run(until=3.5)
    assert (fg.completion, policy.completions) == (3.0, [1])


def test_measure_of_no_measured_process_and_an_unknown_mode():
    """No measured process: mean, max and makespan are nan, sum and jobs 0. An unknown
    parallel_job_slowdown value is bad input, named in the message."""
    cluster = Hand([(1.0, BIG)]).system
    ok = {"parallel_job_slowdown": "process", "slowdown_demand": "reference", "measure_until": "last-completion"}
    out = model_mod.measure([], ok, cluster, cluster.engine)
    assert all(math.isnan(out[k]) for k in ("mean_slowdown", "max_slowdown", "makespan"))
    assert (out["slowdown_sum"], out["jobs"]) == (0.0, 0.0)
    with pytest.raises(InputError, match=r"^parameter 'parallel_job_slowdown': unknown value 'x' "
                                         r"\(use 'process' or 'job'\)\.$"):
        model_mod.measure([], {**ok, "parallel_job_slowdown": "x"}, cluster, cluster.engine)
    with pytest.raises(InputError, match=r"^parameter 'slowdown_demand': unknown value 'x' "):
        model_mod.measure([], {**ok, "slowdown_demand": "x"}, cluster, cluster.engine)


def test_knowledge_recipients_are_the_window_smallest_keys_round_by_round():
    """4 machines, window 2; rounds alternate key matrices P0, P1 (row = sender, own key ignored).
    P0: sender 0 keys (1, 2, 3) = (3, 2, 1) -> {2, 3}; 1: (0, 2, 3) = (1, 2, 3) -> {0, 2};
    2: (0, 1, 3) = (3, 1, 2) -> {1, 3}; 3: (0, 1, 2) = (1, 2, 3) -> {0, 1}. P1 likewise -> {1, 2},
    {2, 3}, {0, 1}, {1, 2}. Rounds 0, 1, 2 use P0, P1, P0."""
    p0 = [[0, 3, 2, 1], [1, 0, 2, 3], [3, 1, 0, 2], [1, 2, 3, 0]]
    p1 = [[0, 1, 2, 3], [3, 0, 2, 1], [1, 2, 0, 3], [3, 1, 2, 0]]
    batch = Knowledge(4, 2, 1.0, ScriptedRng(prefer=[p0, p1])).batch()
    r0, r1 = [[2, 3], [0, 2], [1, 3], [0, 1]], [[1, 2], [2, 3], [0, 1], [1, 2]]
    assert [[sorted(to) for to in batch[k].tolist()] for k in range(3)] == [r0, r1, r0]


def test_background_pids_are_distinct_negatives():
    """Foreground pids count from 0, so background processes (two on machine 0 here) take distinct
    negative pids, never shared with a foreground process: on the machine before the first
    arrival, in the order they started."""
    seen = []
    full = full_params({"machines": [{"name": "m", "count": 1, "speed": 1.0, "memory_mb": BIG}]})
    workload = Workload(
        (ProcSpec(0, 0, 0.0, 4.0, 0.0, 0, True),), (BackgroundSpec(0, 1, 5.0), BackgroundSpec(0, 2, 5.0))
    )
    simulate(full, workload, "pvm", ScriptedStreams(ScriptedRng()),
             attach=lambda engine, cluster: seen.append(list(cluster.machines[0].procs)))
    assert seen == [[-1, -2]]


def test_a_process_that_never_completes_is_reported(monkeypatch):
    """A workload whose process never arrives (no arrival group) leaves 1 unfinished: an error
    naming the count and the policy."""
    monkeypatch.setattr(Workload, "arrival_groups", lambda self: [])
    with pytest.raises(RuntimeError, match=r"^cluster model: 1 process\(es\) never completed under pvm\.$"):
        run([(1.0, BIG)], [(0, 4, 0, 0)], "pvm")


def test_knowledge_window_of_one_on_a_large_cluster():
    """257 machines, window 1: each sender reaches the one machine of its smallest key. Keys
    257 - r for recipient r (own key ignored): every sender s reaches machine 256, except
    machine 256 itself, which reaches 255. (numpy selects within a row of at most 256 keys by
    sorting it whole, so only a larger cluster tells a partition at the wrong rank from the
    right one.)"""
    n = 257
    keys = [[float(n - r) for r in range(n)]] * n
    assert Knowledge(n, 1, 1.0, ScriptedRng(prefer=[keys])).batch()[0].tolist() == [[n - 1]] * (n - 1) + [[n - 2]]


def test_a_monitored_cluster_replication_counts_each_machines_processes():
    """Two speed-1 machines, four processes of 10 s at t = 0 under PVM's round robin: two per
    machine, each at half speed, so all end at 20 s. Sampled every 5 s for 30 s: 2 and 2 at 0, 5,
    10 and 15 (the arrivals at 0 come first); the last completion, at 20, ends the run before the
    sample of that instant (taken after every event due then), so none follows."""
    from simcore.core.rng import Streams, replication_seed
    from simcore.models.cluster import monitor_replication

    params = {"workload": "batch", "n_procs": 4, "demand_kind": "constant", "demand_value": 10.0,
              "machines": [{"name": "m", "count": 2, "speed": 1.0, "memory_mb": 1000.0}]}
    frame = monitor_replication(params, "pvm", Streams(replication_seed(1, "mon", 0, 0)), 5.0, 30.0)
    assert sorted(frame.queue.unique()) == ["machine0.procs", "machine1.procs"]
    values = frame.pivot_table(index="time", columns="queue", values="value")
    assert values.loc[[0.0, 5.0, 10.0, 15.0]].to_numpy().tolist() == [[2.0, 2.0]] * 4
    assert values.index.tolist() == [0.0, 5.0, 10.0, 15.0]


# --- Mosix's lazy wake-ups: the same runs as waking at every grid point ---------------------------

BALANCED = [(0, 10, 0, 0), (0, 10, 0, 0), (0, 10, 0, 1), (0, 10, 0, 1)]


def test_lazy_mosix_skips_the_wake_ups_of_a_balanced_cluster(monkeypatch):
    """Two speed-1 machines hold two processes of demand 10 each (load 2 > load_threshold 1), so
    both exceed the threshold until all end together at 20, and neither ever sees the other less
    loaded. Events: the arrival at 0, one completion per machine at 20 (the second stops the run:
    the round at 20.5 never fires), the rounds at 0.5 ... 19.5 (20). The reference wakes both
    machines at 1, 2, ... 20 as well (the wake-ups at 20, armed at 19, come before the stop that
    the completions at 20 queue, and find the run over): 1 + 2 + 20 + 40 = 63. Lazy Mosix never
    finds a move possible: 23."""
    lazy = run(TWO, BALANCED)
    assert_run(lazy, {0: 20, 1: 20, 2: 20, 3: 20}, 0)
    assert lazy.metrics["events"] == 23
    monkeypatch.setattr(Mosix, "lazy", False)
    reference = run(TWO, BALANCED)
    assert_run(reference, {0: 20, 1: 20, 2: 20, 3: 20}, 0)
    assert reference.metrics["events"] == 63


def test_lazy_mosix_wakes_when_a_process_becomes_old_enough():
    """Rounds every 100 s from 0.5 (one at 0.5, the next at 100.5). Machine 0 holds two processes
    of demand 10 placed at 0; min_residency 2.5. The round at 0.5 shows machine 1 empty: wake-up at
    1, where neither process has stayed 2.5 s; the machine sleeps until the first grid point at
    which one has: 3 (not 2, not 4). Each has done 1.5, then 8.5 alone: both end at 11.5. Without
    that wake-up nothing would move before 101 and both would end at 20 on machine 0. Events: the
    arrival, the round at 0.5, the wake-ups at 1 and 3, the two completions at 11.5 (the last
    stops the run): 6. Waking again at 2 (the next grid point, as after a change) would make 7."""
    result = run(TWO, PAIR_AT_HOME, rng=ScriptedRng(info=0.005), info_interval=100.0, min_residency=2.5)
    assert_run(result, {0: 11.5, 1: 11.5}, 1)
    assert result.metrics["events"] == 6


def test_lazy_mosix_waits_for_the_young_process_that_fits_not_an_old_one_that_does_not():
    """Machines of 100 and 50 MB; rounds every 100 s from 0.5; min_residency 2. Process A (60 MB)
    arrives at 0 and B (10 MB) at 1.25, both on machine 0 (load 2). At the wake-up at 2 (the grid
    point after B's arrival), A has stayed exactly 2 s, old enough, but does not fit machine 1's
    50 MB; B fits but is too young. Only B can open a move, so machine 0 sleeps until B has
    stayed 2 s: the grid point 4 (3.25 rounded up), where B moves. A counted as still young (at
    exactly 2 s, or as any process not pinned) would wake it at 3 as well. A: 1.25 alone, 1.375 at
    half speed to 4, 7.375 alone: ends at 11.375; B: 1.375 by 4, 8.625 alone on machine 1: 12.625.
    Events: two arrivals, the round, wake-ups at 2 and 4, two completions: 7 (polling: 8)."""
    procs = [(0, 10, 60, 0), (1.25, 10, 10, 0)]
    result = run([(1.0, 100.0), (1.0, 50.0)], procs, rng=ScriptedRng(info=0.005), info_interval=100.0,
                 min_residency=2.0)
    assert_run(result, {0: 11.375, 1: 12.625}, 1)
    assert result.metrics["events"] == 7


def test_lazy_mosix_wakes_on_the_round_that_shows_a_target():
    """As test_mosix_target_must_end_less_loaded_than_the_source, counted: machine 0 (load 2) sees
    machine 1 at load 1 and sleeps; process 2 ends on machine 1 at 10, which changes nothing
    machine 0 knows; the round at 10.5 shows machine 1 empty and arms the wake-up at 11, where
    process 0 moves. Events: arrival, the completion at 10, the wake-up at 11, the two completions
    at 15.5 (one per machine) and rounds 0.5 ... 15.5 (16; the last, after the completions, finds
    the run over): 21. Waking at every grid point from 1 on would add the ten at 1 ... 10."""
    procs = [(0, 10, 0, 0), (0, 10, 0, 0), (0, 10, 0, 1)]
    result = run(TWO, procs, load_threshold=0.5)
    assert_run(result, {0: 15.5, 1: 15.5, 2: 10}, 1)
    assert result.metrics["events"] == 21


def test_lazy_mosix_asleep_hears_of_a_load_low_enough(monkeypatch):
    """Machine 0 holds A and B (demand 10), machine 1 C (demand 5); load_threshold 1. Seen at load 1,
    machine 1 is not less loaded by more than 1, so machine 0 sleeps and asks the rounds only for
    a load below 2 - 1. C ends at 5; the round at 5.5 brings load 0, and at 6 A (oldest, placed
    first) moves with 7 left, as does B's: both end at 13. Events: arrival, C's completion, the
    wake-up at 6, two completions at 13 (the last stops the run), rounds 0.5 ... 12.5 (13): 18.
    The reference also wakes at 1 ... 5: 23."""
    procs = [(0, 10, 0, 0), (0, 10, 0, 0), (0, 5, 0, 1)]
    lazy = run(TWO, procs)
    assert_run(lazy, {0: 13, 1: 13, 2: 5}, 1)
    assert lazy.metrics["events"] == 18
    monkeypatch.setattr(Mosix, "lazy", False)
    assert run(TWO, procs).metrics["events"] == 23


LAZY_CASES = [
    ("amir-table2", {}),
    ("amir-table2", {"balance_interval": 0.5, "min_residency": 0.0, "mosix_initial": "random"}),
    ("amir-table2", {"info_interval": 2.0, "mosix_known_machines": 1, "memory_threshold": 0.8}),
    ("amir-table2", {"migration_cost": 0.3, "load_threshold": 0.5, "mosix_initial": "round-robin"}),
    ("barak96-table1", {}),
    ("barak96-hetero", {"min_residency": 2.5}),
]


@pytest.mark.slow
@pytest.mark.parametrize("spec, overrides", LAZY_CASES)
@pytest.mark.parametrize("policy", ["mosix", "pvm-on-mosix"])
def test_lazy_mosix_runs_as_the_reference_process_by_process(monkeypatch, spec, overrides, policy):
    """Four replications of each case, lazy and with a wake-up at every grid point while a threshold
    is exceeded: every process ends at the same instant (to the bit) after the same migrations, and
    the lazy runs fire fewer events in all. (Whole experiments: slow-marked, so left out of the
    mutation runs, where the kernels run as Python; the scripted lazy scenarios above are not.)"""
    from simcore.experiments import load_spec
    params = full_params({**load_spec(SPECS / f"{spec}.yaml").params(), **overrides})

    def runs(lazy):
        monkeypatch.setattr(Mosix, "lazy", lazy)
        out, events = [], 0
        for rep in range(4):
            streams = Streams(replication_seed(11, "lazy-mosix", 0, rep))
            result = simulate(params, model_mod.make_workload(params, streams), policy, streams)
            out.append([(p.pid, p.completion, p.migrations) for p in sorted(result.procs, key=lambda p: p.pid)])
            events += result.metrics["events"]
        return out, events

    (lazy, lazy_events), (reference, reference_events) = runs(True), runs(False)
    assert lazy == reference
    assert lazy_events <= reference_events
    if policy == "mosix":  # starting at home, Mosix migrates in every case, and lazily wakes less
        assert sum(p[2] for rep in reference for p in rep) > 0
        assert lazy_events < reference_events


# --- Enhanced Mosix's prices: marginal costs to the bit ---------------------------------------------

@pytest.mark.parametrize("reading, tau", [("processes", 1.0), ("effective", 10.0), ("effective", 3.0)])
def test_prices_give_the_marginal_cost_to_the_bit(reading, tau):
    """``cheapest`` over ``prices`` picks the machine and cost that ``min`` over ``marginal``
    gives, bit for bit, on random machines, states and process sizes: below, at and above the
    memory, with loads and memory in use that take an exponent to, past and just past the 700
    cap (9370 and 9385 MB of 24: base 6 gives 699.5 and 700.7), and with ties (the kernels of
    opportunity_kernels, on a cluster of five whose first four take each trial's speeds and
    memories)."""
    rng = np.random.default_rng(5)
    hand = Hand([(1.0, BIG)] * 5, policy="enhanced-mosix", cost_base=6.0, cost_cpu_load=reading, thrashing_factor=tau)
    CI, CF = hand.CI, hand.CF
    for trial in range(300):
        CF[CS.Z_BOUND] = float(2 ** rng.integers(0, 4))
        for j in range(4):
            CF[CS.fmachine(j, CI) + CS.MF_SPEED] = float(rng.choice([1.0, 0.665, 0.45]))
            CF[CS.fmachine(j, CI) + CS.MF_MEM] = float(rng.choice([24.0, 32.0, 64.0]))
        states = {int(j): (float(rng.choice([0.0, 1.0, 2.5, 900.0])),
                           float(rng.choice([0.0, 20.0, 24.0, 40.0, 9370.0, 9385.0])))
                  for j in rng.permutation(4)}
        if trial % 3 == 0:
            states[next(iter(states))] = states[list(states)[-1]]  # a tie in state
        order = list(states)
        for k, j in enumerate(order):
            O.prices(j, states[j][1], states[j][0], k, CI, CF)
        for memory in (0.0, 4.0, float(rng.uniform(0, 64)), 64.0):
            expected = min(((j, O.marginal(j, mem, load, memory, CI, CF)) for j, (load, mem) in states.items()),
                           key=lambda jc: jc[1])
            k, cost = O.cheapest(4, memory, CI, CF)
            assert (order[k], cost) == expected


def test_stability_cost_when_placed_follows_the_bound():
    """Under the stability rule a process's cost when placed is kept per placement and computed
    again once L changes: p placed on an empty machine (speed 1, BIG memory) with base 2 costs
    2**(1/L) - 1 of CPU (its memory costs nothing): 2**0.5 - 1 at L = 2 (load 1 makes L 2), then
    2**0.25 - 1 at L = 4."""
    hand = Hand(TWO, [(BIG, 0.0)], "enhanced-mosix", reassign_rule="stability", cost_base=2.0)
    hand.place(0, 0)
    assert O.cost_here(0, 0, 0, 0.0, hand.CI, hand.CF) == pytest.approx(2 ** 0.5 - 1, rel=1e-12)
    hand.CF[CS.Z_BOUND] = 4.0
    assert O.cost_here(0, 0, 0, 0.0, hand.CI, hand.CF) == pytest.approx(2 ** 0.25 - 1, rel=1e-12)


def test_stability_cost_when_placed_is_computed_once_per_placement_and_bound():
    """Stability rule, base 2, machine 0 of speed 1 and 8 MB: p0 (2 MB) then p1 (4 MB) placed
    there (load 2: L = 4). p1's cost when placed reads the machine as p1 found it, 2 MB in use and
    load 1: 2**(6/8) - 2**(2/8) + 2**(2/4) - 2**(1/4) = 0.71761 (p0's placement, 0 MB and load 0,
    would give 0.63924). It is then kept: asked again under the same placement and L, the cost
    answers what is stored (here overwritten with -1) without computing it again."""
    hand = Hand([(1.0, 8.0), (1.0, BIG)], [(BIG, 2.0), (BIG, 4.0)], "enhanced-mosix", reassign_rule="stability",
                cost_base=2.0)
    hand.place(0, 0)
    hand.place(1, 0)
    assert hand.CF[CS.Z_BOUND] == 4.0
    expected = 2**0.75 - 2**0.25 + 2**0.5 - 2**0.25
    assert O.cost_here(0, 1, 0, 0.0, hand.CI, hand.CF) == pytest.approx(expected, rel=1e-12)
    hand.CF[CS.fproc(1, hand.CI) + CS.PF_CCOST] = -1.0
    assert O.cost_here(0, 1, 0, 0.0, hand.CI, hand.CF) == -1.0

def test_greedy_cost_of_staying_counts_the_rest_per_unit_of_speed_and_the_memory_left():
    """Greedy rule, base 2: machine 0 (speed 2, 10 MB) holds p0 (3 MB), p1 (2 MB), p2 (0 MB); load
    1.5, so L = 2. Staying costs p1, with p0 already sent away (1 process, 3 MB): the machine
    without p0 and p1 holds 1 process (load 1/2) and 0 MB, so 2**0.2 - 1 (memory 0 -> 2 of 10
    MB) + 2**(1/2) - 2**(1/4) (load 1/2 -> 1, over L = 2)."""
    hand = Hand(
        [(2.0, 10.0), (1.0, BIG)],
        [(BIG, 3.0), (BIG, 2.0), (BIG, 0.0)],
        "enhanced-mosix",
        reassign_rule="greedy",
        cost_base=2.0,
    )
    for pid in range(3):
        hand.place(pid, 0)
    assert hand.CF[CS.Z_BOUND] == 2.0
    expected = 2**0.2 - 1 + 2**0.5 - 2**0.25
    assert O.cost_here(0, 1, 1, 3.0, hand.CI, hand.CF) == pytest.approx(expected, rel=1e-12)


def test_stability_cost_when_placed_is_that_of_the_latest_placement():
    """Stability rule, base 2, two speed-1 machines: p0, p1, p2 on machine 0 (load 3: L = 4); p2
    was placed at load 2: its cost there is 2**(3/4) - 2**(2/4). Moved to the empty machine 1 (L
    stays 4), its cost when placed is that of the new placement, at load 0: 2**(1/4) - 1, not the
    one kept from machine 0."""
    hand = Hand(TWO, [(BIG, 0.0)] * 3, "enhanced-mosix", reassign_rule="stability", cost_base=2.0)
    for pid in range(3):
        hand.place(pid, 0)
    assert O.cost_here(0, 2, 0, 0.0, hand.CI, hand.CF) == pytest.approx(2**0.75 - 2**0.5, rel=1e-12)
    hand.system.migrate(hand.proc(2), 1)
    assert hand.CF[CS.Z_BOUND] == 4.0
    assert O.cost_here(1, 2, 0, 0.0, hand.CI, hand.CF) == pytest.approx(2**0.25 - 1, rel=1e-12)


def test_enhanced_mosix_makes_every_move_of_one_scan():
    """The scan of test_enhanced_mosix_greedy_scan_counts_the_processes_it_already_sends_away, as
    the run makes it (``run_kernels.reassign``): processes 0 and 1 move to machine 1 in the scan's
    order, 2 and 3 stay; two migrations."""
    hand = Hand([(1.0, BIG)] * 2, [(BIG, 0.0)] * 4, "enhanced-mosix", reassign_rule="greedy", cost_base=2.0,
                min_residency=0.0)
    for pid in range(4):
        hand.place(pid, 0)
    hand.know(0, {1: (0.0, 0.0)})
    hand.know(1, {})
    hand.system._call(R.reassign, hand.system.now)
    assert [hand.proc(pid).machine for pid in range(4)] == [1, 1, 0, 0]
    assert list(hand.system.machines[1].procs) == [0, 1] and hand.system.migrations == 2


def test_remaining_at_the_completion_instant_is_zero_not_a_rounding_below():
    """A process of demand 0.7 alone on a speed-0.3 machine completes at t = 0.7 / 0.3, where the
    virtual clock reads (0.7 / 0.3) x 0.3 = 0.7 + 1.1e-16 in floating point. Read at that instant
    before its completion event (an event set earlier), it has 0 left (not -1.1e-16) and is
    finishing."""
    hand = Hand([(0.3, BIG)], [(0.7, 0.0)])
    assert (0.7 / 0.3) * 0.3 > 0.7
    seen = []
    hand.at(0.7 / 0.3, lambda: seen.append((hand.system.remaining(hand.proc(0)), hand.system.finishing(hand.proc(0)))))
    hand.place(0, 0)
    hand.run(until=3.0)
    assert seen == [(0.0, True)]
    assert hand.proc(0).completion == 0.7 / 0.3


def test_the_first_grid_point_a_process_is_old_enough_at_is_found_exactly():
    """``old_enough_index`` starts from an estimate and corrects it by the test ``choose`` makes
    (grid time - placed_at >= min_residency, in floating point). On decimal phases, periods and
    times, where that test and the estimate disagree by rounding, it gives what a scan of the grid
    from the first point after now gives: the first index that passes (mosix_kernels, each case's
    period, residency and phase written into the state of one machine)."""
    rng = np.random.default_rng(3)
    cases = [(0.1, 0.1, 0.0, 0.2, 0.2), (0.1, 0.2, 0.0, 0.1, 0.1),  # ceil((0.2 + 0.1) / 0.1) is 4, yet 3 passes
             (0.1, 0.2, 0.1, 0.2, 0.2)]  # ceil(0.3 / 0.1) is 4, yet 0.1 + 3 x 0.1 - 0.2 is 0.2 exactly: 3 passes
    for _ in range(400):
        period = float(rng.choice([0.1, 0.3, 0.7, 1.0, 2.5]))
        phase = round(float(rng.integers(0, 10)) * period / 10, 10)
        placed_at = round(float(rng.integers(0, 100)) * 0.1, 10)
        cases.append((period, float(rng.choice([0.0, 0.1, 0.3, 1.0, 2.5, 0.7])), phase, placed_at,
                      placed_at + round(float(rng.integers(0, 5)) * 0.1, 10)))
    hand = Hand([(1.0, BIG)], policy="mosix")
    CI, CF = hand.CI, hand.CF
    for period, residency, phase, placed_at, now in cases:
        CF[CS.Z_PERIOD], CF[CS.Z_RESID], CF[CS.fmachine(0, CI) + CS.MF_PHASE] = period, residency, phase
        k = M.next_index(0, now, CI, CF)
        while M.grid(0, k, CI, CF) - placed_at < residency:
            k += 1
        assert M.old_enough_index(0, placed_at, now, CI, CF) == k


def test_mosix_keeps_a_wake_up_armed_earlier_when_a_change_asks_for_the_same_instant():
    """Machine 0 (speed 1.5) holds B, C and F (demands 0.75, 1.125, 10) from 0, at 0.5 each;
    machine 1 (speed 1) is empty; min_residency 1.9. The round at 0.5 shows machine 1 idle: wake-up
    at 1, where nobody is old enough, so at 1 the wake-up at 2 is armed. B ends at 1.5; C and F go
    on at 0.75 each, so C's completion is set for 2, and the change asks again for the grid point
    2: the wake-up armed at 1 stays, and fires before C's completion set at 1.5. Load 2 / 1.5 is
    above 1 + 0, so C (the oldest) moves, with nothing left, and ends at 2 on machine 1; F ends at
    2 + (10 - 0.75 - 0.375) / 1.5. Re-arming the wake-up at 2 would put it after C's completion:
    F alone (load 2/3) would move nothing."""
    result = run([(1.5, BIG), (1.0, BIG)], [(0, 0.75, 0, 0), (0, 1.125, 0, 0), (0, 10, 0, 0)], min_residency=1.9)
    assert_run(result, {0: 1.5, 1: 2, 2: 2 + 8.875 / 1.5}, 1)

