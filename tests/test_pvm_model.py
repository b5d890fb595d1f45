"""The PVM cluster model (solsona, section 5.2): Linux 2.2's scheduling rules on a scripted CPU,
and every mode's rule on a scripted two-node sintree run, each outcome derived by hand.

Scripted runs take fixed delays (compute, jitter and fragment gap at their means) and no clock
ticks, so every time below is a sum of the parameters."""

from __future__ import annotations

import math

import pytest

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models.pvm import full_params, queue_probes, run_replication, simulate
from simcore.models.pvm.node import BLOCKED, RUNNING, Node, Proc

MODES = ["pvm", "spin", "mxi", "mxispin", "prio", "priospin", "explicit"]


def streams(rep: int = 0) -> Streams:
    return Streams(replication_seed(5, "pvm-test", 0, rep))


def node(tick: float = 1e9, switch_cost: float = 0.0, phase: float | None = None) -> tuple[Engine, Node]:
    engine = Engine()
    return engine, Node(engine, 0, {"tick": tick, "switch_cost": switch_cost}, tick if phase is None else phase)


def hog(n: Node, name: str, priority: int = 20, counter: int | None = None) -> Proc:
    p = n.add(Proc(name, priority))
    if counter is not None:
        p.counter = counter
    n.run(p, math.inf, None)
    return p


# -- Linux 2.2 on one CPU --------------------------------------------------------------------------
def test_counters_run_out_tick_by_tick_and_are_recalculated_when_all_are_spent():
    # priority 2, ticks every 10: A runs 0-20 (2 -> 0), B 20-40 (2 -> 0); both spent: counters
    # become 0 // 2 + 2 = 2 and B, running, wins the tie: 40-60; then A (2) 60-80, spent again with
    # B: recalculated, A keeps the CPU 80-100; then B. The sleeper C: 2 -> 2 // 2 + 2 = 3 -> 3.
    engine, n = node(tick=10.0)
    a, b = hog(n, "A", priority=2), hog(n, "B", priority=2)
    c = n.add(Proc("C", 2))
    n.wake(a)
    n.wake(b)
    engine.run(until=100.5)
    assert (a.cpu, b.cpu, n.current) == (60.0, 40.0, b)
    assert c.counter == 3 and (a.counter, b.counter) == (0, 2)


@pytest.mark.parametrize("counter, preempts", [(24, True), (23, False)])
def test_a_woken_process_preempts_only_with_a_counter_more_than_three_above(counter, preempts):
    engine, n = node()
    local = hog(n, "local")          # counter 20
    n.wake(local)
    d = n.add(Proc("d", 20))
    d.counter = counter
    n.run(d, 5.0, lambda: n.block(d))
    engine.call(1.0, lambda _: n.wake(d), None)
    engine.run(until=2.0)
    assert (n.current is d) == preempts and d.state == (RUNNING if preempts else "ready")


def test_real_time_processes_preempt_ordinary_ones_and_are_never_preempted_by_them():
    engine, n = node()
    local = hog(n, "local", counter=40)
    n.wake(local)
    rt = n.add(Proc("rt", 20, rt=1))
    rt.counter = 0
    n.run(rt, 5.0, lambda: n.block(rt))
    engine.call(1.0, lambda _: n.wake(rt), None)
    other = hog(n, "other", counter=40)
    engine.call(2.0, lambda _: n.wake(other), None)
    engine.run(until=3.0)
    assert n.current is rt
    engine.run(until=7.0)            # rt's 5 us done at 6: the CPU goes back to the ordinary ones
    assert rt.state == BLOCKED and rt.cpu == 5.0 and n.current is local


def test_a_switch_costs_w_for_the_process_leaving_and_w_for_the_one_coming():
    # W = 1: A dispatched on the idle CPU pays 1; D (real-time, 5 us of work) preempts A at 10 and
    # pays 2 (A leaves, D comes): done at 17; A comes back paying 2 (D leaves, A comes).
    engine, n = node(switch_cost=1.0)
    a = hog(n, "A")
    n.wake(a)
    d = n.add(Proc("D", 20, rt=1))
    done = []
    n.run(d, 5.0, lambda: (done.append(engine.now), n.block(d)))
    engine.call(10.0, lambda _: n.wake(d), None)
    engine.run(until=30.0)
    assert done == [17.0] and d.overhead == 2.0 and a.overhead == 3.0


def test_a_stopped_process_does_not_run_until_continued():
    engine, n = node()
    local = hog(n, "local")
    d = n.add(Proc("d", 20, rt=1))
    n.run(d, 50.0, lambda: n.block(d))
    n.wake(d)
    n.wake(local)
    engine.call(10.0, lambda _: n.stop(d), None)
    engine.call(30.0, lambda _: n.cont(d), None)
    engine.run(until=25.0)
    assert n.current is local and d.cpu == 10.0
    engine.run(until=100.0)          # back at 30, its remaining 40 us done at 70; local ran 10-30, then from 70
    assert d.state == BLOCKED and d.cpu == 50.0 and local.cpu == 20.0 and n.current is local


# -- the modes on a scripted two-node sintree ----------------------------------------------------------
SCRIPT = {"nodes": 2, "iterations": 1, "compute": 0.0, "send_cost": 10.0, "read_cost": 5.0, "latency": 100.0,
          "jitter": 0.0, "fragment_gap": 20.0, "switch_cost": 2.0, "tick": 1e9, "delays": "fixed"}


def scripted(mode: str, **params) -> dict:
    return run_replication({**SCRIPT, **params}, [mode], streams())[mode]


def test_pvm_blocks_for_a_late_body_and_pays_the_switches():
    # root: woken on the idle CPU (+2), sends 2-12 (head at the child 112, body 132), blocks.
    # child: woken at 112 (+2) reads the head 112-119; the body is late: blocks; woken at 132 (+2)
    # reads it 132-139, replies 139-149 (head at the root 249, body 269). root: woken (+2) reads the
    # head 249-256, blocks for the body, woken at 269 (+2) reads it 269-276.
    m = scripted("pvm")
    assert m["exec_time"] == pytest.approx(276e-6, rel=1e-12)
    assert m["blocks"] == 4 / 2 and m["spin_time"] == 0.0


def test_spin_catches_a_body_that_comes_within_the_spin():
    # spin 16: the child spins 119-132 and takes the body without a switch: reads 132-137, replies
    # 137-147; the root reads the head 247(+2)-254, spins 254-267, reads 267-272
    m = scripted("spin", spin=16.0)
    assert m["exec_time"] == pytest.approx(272e-6, rel=1e-12)
    assert m["spin_time"] == 13.0 and m["blocks"] == 2 / 2


def test_a_spin_that_runs_out_blocks_as_pvm_does():
    m = scripted("spin", spin=10.0)
    assert m["exec_time"] == pytest.approx(276e-6, rel=1e-12)
    assert m["spin_time"] == 10.0 and m["blocks"] == 4 / 2


def test_mxi_reads_a_message_once():
    # no switch cost, no gap: pvm 0-10 send, child 110-115-120 (two reads), 120-130 reply, root
    # 230-235-240; MXI saves one read on each side: 230
    flat = {"switch_cost": 0.0, "fragment_gap": 0.0}
    assert scripted("pvm", **flat)["exec_time"] == pytest.approx(240e-6, rel=1e-12)
    assert scripted("mxi", **flat)["exec_time"] == pytest.approx(230e-6, rel=1e-12)


def test_mxispin_spins_on_the_whole_message():
    # spin 30: the child spins from the start (after its switch, 2-32) and blocks; the root sends
    # 2-12, spins 12-42 and blocks. The child's message is whole at 132: woken (+2), one read
    # 132-139, reply 139-149; the root's is whole at 269: woken (+2), 269-276. Spins: 30 each.
    m = scripted("mxispin", spin=30.0)
    assert m["exec_time"] == pytest.approx(276e-6, rel=1e-12)
    assert m["spin_time"] == 30.0 and m["blocks"] == 2 / 2


def test_explicit_holds_the_distributed_processes_during_the_stop():
    # no costs, no gap: stop at 100 for 50, again at 250. The child's message comes at 110 while it
    # is stopped: it reads 150-155-160 and replies 160-170; the root's comes at 270, stopped again
    # since 250: it reads 300-305-310
    m = scripted("explicit", switch_cost=0.0, fragment_gap=0.0, explicit_run=100.0, explicit_stop=50.0,
                 signal_cost=0.0)
    assert m["exec_time"] == pytest.approx(310e-6, rel=1e-12)


def test_prio_is_not_delayed_by_local_tasks():
    # real-time distributed processes: with free switches, the same run with 0 or 3 local tasks
    base = {"iterations": 200, "switch_cost": 0.0, "tick": 1000.0}
    alone = run_replication({**base, "local_tasks": 0}, ["prio", "pvm"], streams())
    loaded = run_replication({**base, "local_tasks": 3}, ["prio", "pvm"], streams())
    assert loaded["prio"]["exec_time"] == alone["prio"]["exec_time"]
    assert loaded["pvm"]["exec_time"] > alone["pvm"]["exec_time"]


def test_without_local_tasks_prio_is_pvm_and_priospin_is_spin():
    result = run_replication({"iterations": 300}, MODES, streams())
    for a, b in (("prio", "pvm"), ("priospin", "spin")):
        assert result[a] == pytest.approx(result[b], nan_ok=True, rel=0, abs=0)
    assert math.isnan(result["pvm"]["local_stretch"])


def test_local_stretch_is_elapsed_over_work():
    # one local task per node on an otherwise idle node would get the whole CPU: stretch >= 1, and
    # the distributed process's share makes it more
    m = run_replication({"iterations": 300, "local_tasks": 1}, ["pvm"], streams())["pvm"]
    assert m["local_stretch"] > 1.0


def test_queue_probes_count_runnable_processes():
    run = simulate(full_params({"iterations": 20, "local_tasks": 2}), "pvm", streams())
    probes = queue_probes(run.nodes)
    assert sorted(probes) == [f"node{i}.runnable" for i in range(4)]
    assert all(2 <= probe() <= 3 for probe in probes.values())   # two hogs, and maybe the reader


@pytest.mark.parametrize("params, key", [
    ({"nodes": 1}, "nodes"), ({"local_tasks": -1}, "local_tasks"), ({"spin": 0}, "spin"),
    ({"delays": "normal"}, "delays"), ({"explicit_run": 0}, "explicit_run"), ({"tick": 0}, "tick"),
])
def test_bad_parameters_are_refused(params, key):
    with pytest.raises(InputError, match=key):
        run_replication(params, MODES, streams())
