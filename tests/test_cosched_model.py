"""The DCNDC coscheduling model (solsona): every decision rule on a scripted node derived by hand,
round robin's M/M/1 limit, the policies' agreement without distributed tasks, NodeCoDe's range.

Times in the scripted scenarios are dyadic fractions, so every sum below is exact."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from simcore.core.engine import Engine
from simcore.core.monitor import Monitor
from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models.cosched import full_params, monitor_replication, queue_probes, run_replication, simulate
from simcore.models.cosched.node import Node
from simcore.models.cosched.policies import Dynamic
from simcore.models.cosched.workload import Task, TaskStream

POLICIES = ["rr", "sdca", "dynamic", "implicit"]


def streams(rep: int = 0) -> Streams:
    return Streams(replication_seed(11, "cosched-test", 0, rep))


def script(policy: str, tasks: list[Task], attach=None, **params):
    """Run ``policy`` on scripted tasks until all of them are served: (metrics, {index: TaskState})."""
    full = full_params({"nst": len(tasks), **params})
    run = simulate(full, policy, streams(), attach=attach, tasks=tasks)
    return run.metrics, {s.task.index: s for s in run.served}


def local(index: int, arrival: float, service: float) -> Task:
    return Task(index, arrival, service, False)


def dist(index: int, arrival: float, service: float, points: tuple, sends: tuple) -> Task:
    return Task(index, arrival, service, True, points, sends)


# -- the local scheduler (Algorithm 1) ------------------------------------------------------------
def test_round_robin_slices_and_waits():
    # quantum 1/4: A 0-.25, B .25-.5, A .5-.75, B .75-.875 (done), A .875-1 (done)
    m, s = script("rr", [local(0, 0.0, 0.625), local(1, 0.0, 0.375)], quantum=0.25)
    assert (s[0].done_at, s[1].done_at) == (1.0, 0.875)
    assert (s[0].waited, s[1].waited) == (0.375, 0.5)
    assert m["local_wait"] == (0.375 + 0.5) / 2
    assert m["utilization"] == 1.0 and m["messages"] == 0 and math.isnan(m["node_code"])


def test_blocked_receiver_waits_for_its_message_then_takes_the_idle_cpu():
    # D reads at 0.5 a message due at 2: blocks; L runs .5-1.5; idle; D woken at 2 onto an idle CPU
    tasks = [dist(0, 0.0, 1.0, (0.5,), (2.0,)), local(1, 0.0, 1.0)]
    for policy in POLICIES:
        m, s = script(policy, tasks, quantum=10.0, spin=2 ** -7)
        assert s[1].done_at == 1.5 + (2 ** -7 if policy == "implicit" else 0.0)   # after IMPLICIT's spin
        assert s[0].done_at == 2.5
        assert m["node_code"] == 1.0   # it holds the CPU once the arrival is handled


def test_early_message_is_buffered_and_read_without_waiting():
    # the message arrives at .25, before D reaches its point (.5): D never stops
    m, s = script("rr", [dist(0, 0.0, 1.0, (0.5,), (0.25,)), local(1, 0.0, 1.0)], quantum=10.0)
    assert (s[0].done_at, s[1].done_at) == (1.0, 2.0)
    assert m["node_code"] == 1.0 and m["utilization"] == 1.0


def test_slice_that_ends_at_a_read_point_reads_the_message_and_expires_there():
    # quantum 1/4. D runs 0-.25, its message (.125) is buffered; at .25 it reads it with its slice
    # used up: to the bottom. L (which ends exactly at its slice end) .25-.5, D .5-.75. Events:
    # 2 arrivals, the message, and the stretch ends at .25, .5, .75: 6
    m, s = script("rr", [dist(0, 0.0, 0.5, (0.25,), (0.125,)), local(1, 0.0, 0.25)], quantum=0.25)
    assert (s[1].done_at, s[0].done_at) == (0.5, 0.75)
    assert (s[1].waited, s[0].waited) == (0.25, 0.25)
    assert m["events"] == 6 and m["node_code"] == 1.0


def test_round_robin_blocks_at_once_and_implicit_spin_end_is_one_more_event():
    # the blocked-receiver scenario: 2 arrivals, D's stretch end at .5 (it blocks), L's end at 1.5,
    # the message at 2, D's end at 2.5: 6 events; IMPLICIT adds the end of D's spin: 7
    tasks = [dist(0, 0.0, 1.0, (0.5,), (2.0,)), local(1, 0.0, 1.0)]
    assert script("rr", tasks, quantum=10.0)[0]["events"] == 6
    assert script("implicit", tasks, quantum=10.0, spin=2 ** -7)[0]["events"] == 7


def test_a_run_stops_at_nst_served_tasks_and_leaves_the_rest_unfinished():
    # nst 1: A is done at .25 and the run stops there, with B just dispatched and unfinished
    run = simulate(full_params({"nst": 1, "quantum": 10.0}), "rr", streams(),
                   tasks=[local(0, 0.0, 0.25), local(1, 0.0, 1.0)])
    assert [t.task.index for t in run.served] == [0] and run.served[0].done_at == 0.25
    assert run.node.running.task.index == 1 and run.node.rq == [] and math.isnan(run.node.running.done_at)
    assert run.metrics["mean_response"] == 0.25 and run.metrics["utilization"] == 1.0


def test_rates_are_undefined_for_a_run_of_no_length_and_defined_below_one_time_unit():
    # no task at all: the run ends at 0 with nothing served, so every mean and rate is NaN
    m = simulate(full_params({"nst": 1}), "rr", streams(), tasks=[]).metrics
    assert all(math.isnan(m[k]) for k in ("node_code", "local_wait", "distributed_wait", "mean_response",
                                          "spin_share", "utilization", "cosched_switches"))
    assert (m["messages"], m["events"]) == (0.0, 0.0)
    # one task of .5: the run lasts .5, busy all along, never spinning, no switch
    m, _ = script("rr", [local(0, 0.0, 0.5)], quantum=10.0)
    assert (m["spin_share"], m["utilization"], m["cosched_switches"]) == (0.0, 1.0, 0.0)


def late_message(share=None, **params):
    """D blocks at .5; L (service 2) runs from .5; D's message arrives at 1.5 (L has executed 1)."""
    tasks = [dist(0, 0.0, 1.0, (0.5,), (1.5,)), local(1, 0.0, 2.0)]
    extra = {} if share is None else {"share": share}
    return tasks, {"quantum": 10.0, **extra, **params}


def test_round_robin_leaves_a_woken_receiver_at_the_bottom():
    tasks, params = late_message()
    m, s = script("rr", tasks, **params)
    assert (s[1].done_at, s[0].done_at) == (2.5, 3.0)
    assert m["node_code"] == 0.0 and m["cosched_switches"] == 0


# -- DYNAMIC: executed(l) + share < executed(e) ---------------------------------------------------
@pytest.mark.parametrize("share, preempts", [(0.25, True), (0.5, False), (0.75, False)])
def test_dynamic_preempts_only_when_the_receiver_executed_share_less(share, preempts):
    # executed(D) = .5, executed(L) = 1 at 1.5: .5 + share < 1 holds for share .25, not for .5 (strict)
    tasks, params = late_message(share=share)
    m, s = script("dynamic", tasks, **params)
    if preempts:   # D 1.5-2 (done), L back at the bottom and alone: 2-3
        assert (s[0].done_at, s[1].done_at) == (2.0, 3.0)
        assert m["node_code"] == 1.0 and m["cosched_switches"] == 1 / 2
    else:
        assert (s[1].done_at, s[0].done_at) == (2.5, 3.0)
        assert m["node_code"] == 0.0


def test_dynamic_reads_the_running_task_executed_time_at_the_instant():
    # L (service 4) runs from 0, preempted by nobody; D arrives at .5, waits; its message (point 0)
    # arrives at 1: executed(D) = 0, executed(L) = 1 -> 0 + .1 < 1: D runs 1-1.5, then L 1.5-4.5
    tasks = [local(0, 0.0, 4.0), dist(1, 0.5, 0.5, (0.0,), (1.0,))]
    m, s = script("dynamic", tasks, quantum=10.0)
    assert (s[1].done_at, s[0].done_at) == (1.5, 4.5)
    assert s[1].waited == 0.5 and s[0].waited == 0.5


def test_dynamic_counts_the_stretch_of_a_task_that_took_the_cpu_at_a_slice_end():
    # quantum 1/4, share .3. A and B (service 1) and C (service 1/8, reads at 0 a message sent for
    # .875) arrive at 0. A 0-.25, B .25-.5 (each taking the CPU at the other's slice end); C
    # blocks at .5, A .5-.75, then B from .75, handed the CPU at A's slice end. At .875 C's
    # message: executed(C) = 0, executed(B) = .25 + .125 (its running stretch) -> 0 + .3 < .375:
    # C runs .875-1 (done); then A 1-1.25, B 1.25-1.5, A 1.5-1.75 (done), B 1.75-2.125 (done).
    # Without B's running stretch (.25) C would wait for its turn and end at 1.375.
    tasks = [local(0, 0.0, 1.0), local(1, 0.0, 1.0), dist(2, 0.0, 0.125, (0.0,), (0.875,))]
    m, s = script("dynamic", tasks, quantum=0.25, share=0.3)
    assert (s[2].done_at, s[0].done_at, s[1].done_at) == (1.0, 1.75, 2.125)
    assert m["cosched_switches"] == 1 / 3 and m["node_code"] == 1.0


def test_float_edges_of_the_lone_loop_keep_the_reference_runs(monkeypatch):
    """Lone tasks whose slice ends land on their target, or on a service shorter than their read
    point, only through rounding (times that are not dyadic): there the loop stops and leaves the
    slice end to an event, and the runs are the reference's (every slice end an event) to the bit."""
    cases = [([local(0, 0.1, 0.4)], 0.2), ([dist(0, 1.0, 1.197, (1.2,), (1.7,))], 0.2),
             ([local(0, 0.6, 1.4)], 0.7)]
    for tasks, quantum in cases:
        runs = []
        for flag in (True, False):
            monkeypatch.setattr(Node, "lookahead", flag)
            m, s = script("rr", tasks, quantum=quantum)
            runs.append(({k: v for k, v in m.items() if k != "events"}, [(t.done_at, t.executed) for t in s.values()]))
        assert runs[0] == runs[1] and all(math.isfinite(t[0]) for t in runs[0][1])


def test_a_stretch_cut_at_the_instant_it_reaches_its_target_credits_no_more_than_the_target():
    # D blocks at 0 (its point 0); L arrives at .6, reads at .25 (message already there) and starts
    # its last .25 at .6 + .25; D's message comes at the instant that stretch ends, before it
    # (scheduled first): .1 < executed(L), L preempted. In binary floating point that instant minus
    # the stretch's start exceeds .25 by one ulp; L is credited its target: executed == service.
    # D runs from there .25, then L (nothing left) ends at once
    start = 0.6 + 0.25
    end = start + 0.25
    assert end - start > 0.25
    tasks = [dist(0, 0.0, 0.25, (0.0,), (end,)), dist(1, 0.6, 0.5, (0.25,), (0.6,))]
    m, s = script("dynamic", tasks, quantum=10.0)
    assert m["cosched_switches"] == 1 / 2 and s[0].done_at == s[1].done_at == end + 0.25
    assert (s[0].executed, s[1].executed) == (0.25, 0.5)


# -- SDCA: overtake by pending messages, the overtaking cap, dispatch at the top --------------------
def sdca_tasks(second_message_for_d1: bool = False):
    """L1 (4) runs 0-4 with quantum 10; RQ = [L2 (4), D1 (1), D2 (1)]; D1's message (its point 0)
    arrives at 1, D2's at 1.5; optionally D1 gets a second one at 1.25 for its point .875."""
    d1 = (dist(2, 0.0, 1.0, (0.0, 0.875), (1.0, 1.25)) if second_message_for_d1
          else dist(2, 0.0, 1.0, (0.0,), (1.0,)))
    return [local(0, 0.0, 4.0), local(1, 0.0, 4.0), d1, dist(3, 0.0, 1.0, (0.0,), (1.5,))]


def test_round_robin_reference_for_the_sdca_scenario():
    m, s = script("rr", sdca_tasks(), quantum=10.0)
    assert [s[i].done_at for i in range(4)] == [4.0, 8.0, 9.0, 10.0]
    assert m["node_code"] == 0.0


def test_sdca_receiver_overtakes_and_takes_the_cpu_when_it_passes_the_running_task():
    # cap 2. t=1: D1 (1 pending) passes L2 and the running L1 (0 pending): L1 to the bottom,
    # RQ [L2, D2, L1]. t=1.5: D2 passes L2 (its 2nd overtaking) and the running D1 (0 pending):
    # D1 (executed .5) to the bottom, RQ [L2, L1, D1]. D2 1.5-2.5, L2 2.5-6.5, L1 6.5-9.5, D1 9.5-10
    m, s = script("sdca", sdca_tasks(), quantum=10.0, overtake_cap=2)
    assert [s[i].done_at for i in range(4)] == [9.5, 6.5, 10.0, 2.5]
    assert [s[i].overtaken for i in range(4)] == [1, 2, 1, 0]
    assert m["node_code"] == 1.0 and m["cosched_switches"] == 2 / 4


def test_sdca_cannot_overtake_a_task_overtaken_cap_times():
    # cap 1: at 1.5 L2 has been overtaken once already, so D2 stays behind it: no dispatch.
    # D1 1-2 (done), L2 2-6, D2 6-7, L1 7-10
    m, s = script("sdca", sdca_tasks(), quantum=10.0, overtake_cap=1)
    assert [s[i].done_at for i in range(4)] == [10.0, 6.0, 2.0, 7.0]
    assert m["node_code"] == 1 / 2


def test_sdca_needs_strictly_more_pending_messages_than_the_task_it_overtakes():
    # D1's second message (1.25) waits in its MBQ until D1 reaches .875 at 1.875: at 1.5 D2 (1
    # pending) passes L2 (0) but not the running D1 (1 pending). D1 done at 2, then D2 2-3,
    # L2 3-7, L1 7-10. Messages: D1's two (running: both count), D2's one (not): 2/3
    m, s = script("sdca", sdca_tasks(second_message_for_d1=True), quantum=10.0, overtake_cap=2)
    assert [s[i].done_at for i in range(4)] == [10.0, 7.0, 2.0, 3.0]
    assert m["node_code"] == 2 / 3


def test_sdca_receiver_last_in_the_rq_overtakes_and_the_running_task_counts_every_overtaking():
    # R (2) runs from 0, RQ [Z (1), T (1)]. t=1: T's message; T passes Z and the running R (R
    # executed 1, to the bottom): RQ [Z, R], T 1-2. U (.5) arrives at 1.5. Z 2-3, R 3-3.5; t=3.5:
    # U's message; U, alone in the RQ, passes the running R (its 2nd overtaking; R executed 1.5):
    # U 3.5-4, R 4-4.5
    tasks = [local(0, 0.0, 2.0), local(1, 0.0, 1.0), dist(2, 0.0, 1.0, (0.0,), (1.0,)),
             dist(3, 1.5, 0.5, (0.0,), (3.5,))]
    m, s = script("sdca", tasks, quantum=10.0)
    assert [s[i].done_at for i in range(4)] == [4.5, 3.0, 2.0, 4.0]
    assert [s[i].overtaken for i in range(4)] == [2, 1, 0, 0]
    assert m["node_code"] == 1.0 and m["cosched_switches"] == 2 / 4


# -- IMPLICIT: spin, then block --------------------------------------------------------------------
SPIN_TASKS = [dist(0, 0.0, 1.0, (0.5,), (0.5 + 2 ** -8,)), local(1, 0.0, 1.0)]


def test_implicit_spinning_receiver_takes_a_message_that_arrives_within_the_spin():
    # D spins .5 to .5 + 2^-8 (spin 2^-7), takes the message and runs on: done at 1 + 2^-8
    m, s = script("implicit", SPIN_TASKS, quantum=10.0, spin=2 ** -7)
    assert (s[0].done_at, s[1].done_at) == (1.0 + 2 ** -8, 2.0 + 2 ** -8)
    assert s[0].spun == 2 ** -8 and m["node_code"] == 1.0
    assert m["spin_share"] == 2 ** -8 / (2.0 + 2 ** -8) and m["utilization"] == 1.0


def test_implicit_blocks_when_the_spin_ends_first():
    # spin 2^-9 ends at .5 + 2^-9: D blocks, L runs from there, D (woken at .5 + 2^-8) waits for L
    m, s = script("implicit", SPIN_TASKS, quantum=10.0, spin=2 ** -9)
    assert (s[1].done_at, s[0].done_at) == (1.5 + 2 ** -9, 2.0 + 2 ** -9)
    assert s[0].spun == 2 ** -9 and m["node_code"] == 0.0


def test_implicit_spin_stops_at_the_end_of_the_slice():
    # the slice ends at .5 + 2^-10, before the message: D blocks there, as with a short spin
    m, s = script("implicit", SPIN_TASKS, quantum=0.5 + 2 ** -10, spin=2 ** -7)
    assert s[0].spun == 2 ** -10 and m["node_code"] == 0.0


def test_implicit_spins_add_up_and_a_caught_message_is_read_once():
    # D alone, spin 2^-5: spins .25 to .25 + 2^-8 (message 1), runs to .5 + 2^-8, spins to
    # .5 + 2^-6 (message 2: 3 x 2^-8), runs to .75 + 2^-6, reads message 3 (come at .625), done 1 + 2^-6
    tasks = [dist(0, 0.0, 1.0, (0.25, 0.5, 0.75), (0.25 + 2 ** -8, 0.5 + 2 ** -6, 0.625))]
    m, s = script("implicit", tasks, quantum=10.0, spin=2 ** -5)
    assert s[0].done_at == 1.0 + 2 ** -6 and s[0].spun == 2 ** -8 + 3 * 2 ** -8
    assert m["spin_share"] == 2 ** -6 / (1.0 + 2 ** -6) and m["utilization"] == 1.0 and m["node_code"] == 1.0


class SpinningDynamic(Dynamic):
    """DYNAMIC's rule with a spin: no policy of the paper both spins and preempts, but the node's
    rules for a preempted spinning task and for executed time (spinning excluded) are its own."""

    spin = 2 ** -5


def node_run(policy, tasks: list[Task], quantum: float = 10.0):
    """Scripted tasks on a bare Node under ``policy`` until nothing is left: {index: TaskState}, node."""
    engine, served = Engine(), []
    node = Node(engine, {"quantum": quantum}, policy, served.append)
    for task in tasks:
        engine.call(task.arrival, node.arrive, task)
    engine.run()
    return {t.task.index: t for t in served}, node


@pytest.mark.parametrize("share, preempts", [(0.0, True), (0.25, False)])
def test_a_spinning_task_preempted_goes_to_the_bottom_still_waiting(share, preempts):
    # D1 (.5) spins from .25 for its message (due .5); D2's message comes at .25 + 2^-8:
    # executed(D2) + share = share < executed(D1) = .25 (its spin excluded) for share 0, not .25.
    # Preempted: D1 (spun 2^-8) to the bottom, D2 .25 + 2^-8 to .5 + 2^-8; D1's message at .5 does
    # not preempt (.25 < .25 - 2^-8 fails); D1 reads it and runs to .75 + 2^-8. Not preempted: D1
    # blocks at .25 + 2^-5, D2 runs to .5 + 2^-5, D1 then to .75 + 2^-5
    tasks = [dist(0, 0.0, 0.5, (0.25,), (0.5,)), dist(1, 0.0, 0.25, (0.0,), (0.25 + 2 ** -8,))]
    s, node = node_run(SpinningDynamic({"share": share}, None), tasks)
    spun = 2 ** -8 if preempts else 2 ** -5
    assert (s[1].done_at, s[0].done_at) == (0.5 + spun, 0.75 + spun) and s[0].spun == spun
    assert node.switches == (1 if preempts else 0) and node.blocked == 0


def test_a_task_that_caught_its_message_runs_a_stretch_that_counts_as_executed():
    # D1 (1) spins from .25 and takes its message at .25 + 2^-8, runs on; D2's message at .5:
    # 0 + .25 < executed(D1) = .25 + (.5 - .25 - 2^-8) = .5 - 2^-8: D2 .5-.75, D1 to 1.25 + 2^-8
    tasks = [dist(0, 0.0, 1.0, (0.25,), (0.25 + 2 ** -8,)), dist(1, 0.0, 0.25, (0.0,), (0.5,))]
    s, node = node_run(SpinningDynamic({"share": 0.25}, None), tasks)
    assert (s[1].done_at, s[0].done_at) == (0.75, 1.25 + 2 ** -8) and node.switches == 1


def test_round_robin_never_spins():
    m, s = script("rr", SPIN_TASKS, quantum=10.0)
    assert (s[1].done_at, s[0].done_at) == (1.5, 2.0)
    assert m["spin_share"] == 0.0 and m["node_code"] == 0.0


# -- queue monitoring ------------------------------------------------------------------------------
def test_monitor_samples_ready_blocked_and_buffered_queues():
    # D blocks at .5 (L runs .5-1.5, then idle); D woken at 2 onto the idle CPU, done 2.5. D2 runs
    # from 3; its message comes at 3 + 1/16 and waits in its MBQ until D2 reaches .375 at 3.375
    tasks = [dist(0, 0.0, 1.0, (0.5,), (2.0,)), local(1, 0.0, 1.0), dist(2, 3.0, 0.5, (0.375,), (3.0625,))]
    monitors = []

    def attach(engine, node):
        monitors.append(Monitor(engine, queue_probes(node), 0.25, 3.5))
        monitors[0].start()

    script("rr", tasks, attach=attach, quantum=10.0)
    frame = monitors[0].frame().pivot(index="time", columns="queue", values="value")
    assert list(frame.index) == [k * 0.25 for k in range(15)]
    assert list(frame["rq"]) == [1, 1] + [0] * 13
    assert list(frame["blocked"]) == [0, 0] + [1] * 6 + [0] * 7
    assert list(frame["mbq"]) == [0] * 13 + [1, 0]


def test_monitor_counts_every_blocked_receiver():
    # A blocks at .125, B at .1875 (both messages due later); A woken at 1 (done 1.125), B at 1.5
    tasks = [dist(0, 0.0, 0.25, (0.125,), (1.0,)), dist(1, 0.0, 0.25, (0.0625,), (1.5,))]
    monitors, nodes = [], []

    def attach(engine, node):
        nodes.append(node)
        monitors.append(Monitor(engine, queue_probes(node), 0.25, 1.5))
        monitors[0].start()

    script("rr", tasks, attach=attach, quantum=10.0)
    frame = monitors[0].frame()
    assert list(frame[frame.queue == "blocked"].value) == [0, 2, 2, 2, 1, 1, 0]
    assert nodes[0].blocked == 0


def test_monitor_replication_is_the_run_with_a_monitor_attached():
    params, period, duration = {"pdt": 1.0, "mit": 1.25, "nst": 200}, 0.5, 4.0
    table = monitor_replication(params, "sdca", streams(), period, duration)
    monitors = []

    def attach(engine, node):
        monitors.append(Monitor(engine, queue_probes(node), period, duration))
        monitors[0].start()

    simulate(full_params(params), "sdca", streams(), attach=attach)
    assert table.equals(monitors[0].frame())
    # samples at 0, .5, ..., 4 (the run lasts past 4: 200 tasks), each of the three queues in turn
    assert list(table.time) == [k * period for k in range(9) for _ in range(3)]
    assert list(table.queue) == ["rq", "blocked", "mbq"] * 9


# -- the look-ahead of a lone task ---------------------------------------------------------------
@pytest.fixture(params=[True, False], ids=["lookahead", "reference"])
def lookahead(request, monkeypatch):
    monkeypatch.setattr(Node, "lookahead", request.param)
    return request.param


def test_lone_slice_ends_before_the_next_queued_event_are_not_events(lookahead):
    # quantum 1/4; A (service 1) alone from 0, B (service 1/4) arrives at .6. A's slices end at
    # .25, .5 (alone) and .75, where B takes the CPU (waited .15) to its end at 1; A runs 1-1.25
    # (waited .25). Events: 2 arrivals, the slice ends at .25, .5 and .75, B's end and A's end: 7.
    # With the look-ahead, at .25 the next queued event is B's arrival (.6): the end at .5 comes
    # before it and is done in the loop, .75 does not: 6 events, the same times.
    m, s = script("rr", [local(0, 0.0, 1.0), local(1, 0.6, 0.25)], quantum=0.25)
    assert (s[0].done_at, s[1].done_at) == (1.25, 1.0)
    assert (s[0].waited, s[1].waited) == (0.25, 0.75 - 0.6)
    assert m["utilization"] == 1.0
    assert m["events"] == (6 if lookahead else 7)


def test_a_lone_task_reaches_its_end_within_the_loop(lookahead):
    # A (service .625) alone: slice ends at .25 and .5, its end at .625. At .25 nothing is queued:
    # the end at .5 is done in the loop and the timer is A's end: 3 events instead of 4
    m, s = script("rr", [local(0, 0.0, 0.625)], quantum=0.25)
    assert s[0].done_at == 0.625 and m["utilization"] == 1.0
    assert m["events"] == (3 if lookahead else 4)


def test_a_slice_end_at_the_instant_of_the_next_queued_event_stays_an_event(lookahead):
    # B arrives exactly at A's slice end .5. B's arrival was queued first (at A's arrival, before
    # the timer of that slice end was made at .25), so it fires first: B is in the RQ when A's
    # slice ends and runs .5-.75; A runs .75-1 and 1-1.25. Done in the loop, the end at .5 would
    # come before B: B would wait until .75. Events: 2 arrivals, slice ends at .25, .5 and 1, B's
    # end at .75 and A's at 1.25: 7; with the look-ahead the end at .5 stays an event, and only A's
    # lone slice end at 1 (nothing queued after .75) is done in the loop: 6.
    m, s = script("rr", [local(0, 0.0, 1.0), local(1, 0.5, 0.25)], quantum=0.25)
    assert (s[0].done_at, s[1].done_at) == (1.25, 0.75)
    assert (s[0].waited, s[1].waited) == (0.25, 0.0)
    assert m["events"] == (6 if lookahead else 7)


def test_a_lone_task_that_reaches_its_read_point_at_a_slice_end_does_not_spin(lookahead):
    # IMPLICIT, quantum 1/4: D (service 1) alone reads at .75 a message sent for 5. Its slices end
    # at .25 and .5 and it reaches its read point at .75, the end of its third slice: no time is
    # left in the slice to spin, so it blocks at once (spun 0). The message wakes it at 5; it
    # runs .75-1 of its work to 5.25. Events: arrival, slice ends .25 and .5, the reach at .75,
    # the message, the end: 6; the look-ahead does the slice end at .5 in its loop: 5.
    tasks = [dist(0, 0.0, 1.0, (0.75,), (5.0,))]
    m, s = script("implicit", tasks, quantum=0.25, spin=2 ** -7)
    assert s[0].spun == 0.0 and s[0].done_at == 5.25 and m["spin_share"] == 0.0
    assert m["events"] == (5 if lookahead else 6)


def test_lookahead_runs_are_the_reference_runs_with_fewer_events(monkeypatch):
    """Random runs of every policy at two loads: every served task's times and counts and every
    metric but the event count are the reference's bit for bit; the look-ahead fires fewer events."""
    def runs(flag: bool) -> list:
        monkeypatch.setattr(Node, "lookahead", flag)
        out = []
        for mit in (1.25, 2.5):
            params = full_params({"pdt": 0.5, "mit": mit, "nst": 1500})
            for policy in POLICIES:
                run = simulate(params, policy, streams(3))
                out.append((run.metrics, [(t.task.index, t.done_at, t.waited, t.executed, t.spun, t.consumed,
                                           t.overtaken) for t in run.served]))
        return out

    ahead, reference = runs(True), runs(False)
    for (m_ahead, served_ahead), (m_ref, served_ref) in zip(ahead, reference):
        assert served_ahead == served_ref
        assert m_ahead["events"] < m_ref["events"]
        assert {k: v for k, v in m_ahead.items() if k != "events"} == \
            pytest.approx({k: v for k, v in m_ref.items() if k != "events"}, rel=0, abs=0, nan_ok=True)


def test_lookahead_keeps_the_monitor_samples(monkeypatch):
    """A monitor's samples are queued events: the look-ahead stops before each, and the sampled
    queues are the reference's."""
    params = {"pdt": 0.5, "mit": 2.0, "nst": 300}
    tables = []
    for flag in (True, False):
        monkeypatch.setattr(Node, "lookahead", flag)
        tables.append(monitor_replication(params, "implicit", streams(), 0.05, 40.0))
    assert tables[0].equals(tables[1])


# -- the workload and the model as a whole ---------------------------------------------------------
def test_without_distributed_tasks_every_policy_is_round_robin():
    result = run_replication({"pdt": 0.0, "nst": 2000, "mit": 1.25}, POLICIES, streams())
    for name in POLICIES[1:]:
        assert result[name] == pytest.approx(result["rr"], nan_ok=True, rel=0, abs=0)
    with_messages = run_replication({"pdt": 0.5, "nst": 2000, "mit": 1.25}, POLICIES, streams())
    assert with_messages["sdca"]["node_code"] != with_messages["rr"]["node_code"]


def test_round_robin_mean_response_is_the_mm1_value():
    # exponential service: any work-conserving, size-blind discipline has E[T] = mst / (1 - rho)
    mit, mst, n = 2.0, 0.9, 20000
    expected = mst / (1 - mst / mit)
    means = [run_replication({"pdt": 0.0, "nst": n, "mit": mit}, ["rr"], streams(r))["rr"]["mean_response"]
             for r in range(8)]
    half = stats.t.ppf(0.995, len(means) - 1) * np.std(means, ddof=1) / math.sqrt(len(means))
    assert abs(np.mean(means) - expected) < half < 0.05 * expected


def test_node_code_is_a_share_and_messages_follow_the_workload():
    for pdt in (0.25, 1.0):
        result = run_replication({"pdt": pdt, "nst": 1500, "mit": 1.2}, POLICIES, streams(pdt == 1.0))
        for metrics in result.values():
            assert 0.0 <= metrics["node_code"] <= 1.0
            assert 0.0 <= metrics["utilization"] <= 1.0
        # about nst x pdt x mm / 2 messages: binomial-uniform counts, far from 0 and from nst x mm
        assert 0.5 * 1500 * pdt * 2.5 < result["rr"]["messages"] < 1.5 * 1500 * pdt * 2.5


def test_task_stream_ties_messages_to_read_points():
    params = full_params({"pdt": 1.0, "mit": 1.8})
    stream = TaskStream(params, streams())
    tasks = [stream.next() for _ in range(300)]
    stretch = 1 / (1 - 0.9 / 1.8)
    assert all(t.distributed and len(t.points) <= 5 for t in tasks)
    assert {len(t.points) for t in tasks} == set(range(6))
    for t in tasks:
        assert list(t.points) == sorted(t.points) and all(0 <= x <= t.service for x in t.points)
        assert t.sends == pytest.approx([t.arrival + x * stretch for x in t.points])
    again = TaskStream(params, streams())
    assert [again.next() for _ in range(300)] == tasks


def test_task_stream_draws_each_quantity_from_its_named_stream():
    # gaps from "arrivals", services from "service", the kind from "kind" (distributed iff the draw
    # is below pdt, strictly: pdt is set to the first draw, so task 0 is local), k and the read
    # points from "messages"; indices 0, 1, 2, ... and the clock from 0. The stream draws gaps,
    # services and kinds BLOCK at a time: 600 tasks cross two refills
    pdt = float(streams().fresh("kind").random())
    params = full_params({"pdt": pdt, "mit": 1.8})
    stream = TaskStream(params, streams())
    ref = {name: streams().fresh(name) for name in ("arrivals", "service", "kind", "messages")}
    stretch, clock = 1 / (1 - 0.9 / 1.8), 0.0
    assert TaskStream.BLOCK < 300
    for i in range(600):
        clock += float(ref["arrivals"].exponential(1.8))
        service = float(ref["service"].exponential(0.9))
        distributed = bool(ref["kind"].random() < pdt)
        points = ()
        if distributed:
            k = int(ref["messages"].integers(0, 6))
            points = tuple(sorted(float(u) * service for u in ref["messages"].random(k)))
        expected = Task(i, clock, service, distributed, points, tuple(clock + x * stretch for x in points))
        assert stream.next() == expected
        assert i > 0 or not expected.distributed


@pytest.mark.parametrize("params, key", [
    ({"mit": 0.9}, "mst < mit"), ({"pdt": 1.5}, "pdt"), ({"mm": -1}, "mm"), ({"quantum": 0}, "quantum"),
    ({"overtake_cap": 0}, "overtake_cap"), ({"share": -0.1}, "share"), ({"spin": 0}, "spin"), ({"nst": 0}, "nst"),
])
def test_bad_parameters_are_refused(params, key):
    with pytest.raises(InputError, match=key):
        run_replication(params, POLICIES, streams())


def test_bad_parameters_name_the_model():
    with pytest.raises(InputError, match=r"unknown parameter\(s\) of model 'cosched': quantm"):
        full_params({"quantm": 1.0})
    with pytest.raises(InputError, match="model 'cosched': parameter pdt"):
        full_params({"pdt": 2.0})


def test_unknown_policy_is_refused():
    with pytest.raises(InputError, match="unknown policy 'gang'"):
        run_replication({}, ["rr", "gang"], streams())
