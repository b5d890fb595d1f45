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


def test_monitor_replication_samples_each_pc_as_a_monitor_attached_by_hand():
    """The same replication sampled every 5000 us for 20000 us: times 0, 5000, ..., 20000 (five),
    one row per PC each, equal to a Monitor attached to simulate on the same streams."""
    from simcore.core.monitor import Monitor
    from simcore.models.pvm import monitor_replication

    params = {"iterations": 200, "local_tasks": 2}
    frame = monitor_replication(params, "spin", streams(), 5000.0, 20000.0)
    monitors = []

    def attach(engine, nodes):
        monitors.append(Monitor(engine, queue_probes(nodes), 5000.0, 20000.0))
        monitors[0].start()

    simulate(full_params(params), "spin", streams(), attach=attach)
    assert sorted(frame.time.unique()) == [0.0, 5000.0, 10000.0, 15000.0, 20000.0] and len(frame) == 5 * 4
    assert frame.equals(monitors[0].frame())


# -- more of the node's rules and accounts, the daemons, the random streams and the metrics --------------
def test_a_process_with_one_tick_left_is_not_spent():
    # A (counter 1, goodness 21) runs without a recalculation while B (counter 0) is spent; at the
    # tick at 10 A is spent too: both become 0 // 2 + 20 = 20 and A, running, wins the tie
    engine, n = node(tick=10.0)
    a, b = hog(n, "A", counter=1), hog(n, "B", counter=0)
    n.wake(a)
    n.wake(b)
    engine.run(until=5.0)
    assert n.current is a and (a.counter, b.counter) == (1, 0)
    engine.run(until=15.0)
    assert n.current is a and (a.counter, b.counter) == (20, 20)


def test_the_node_counts_its_context_switches():
    # as in the switch-cost scenario: A dispatched (1), D preempts A (2), D blocks and A comes back (3)
    engine, n = node(switch_cost=1.0)
    a = hog(n, "A")
    n.wake(a)
    d = n.add(Proc("D", 20, rt=1))
    n.run(d, 5.0, lambda: n.block(d))
    engine.call(10.0, lambda _: n.wake(d), None)
    engine.run(until=30.0)
    assert n.switches == 3


def test_a_switch_charged_before_the_step_is_given_is_still_paid():
    # W = 1: d dispatched on the idle CPU owes 1; its 5 us step, given at the same instant, ends at 6
    engine, n = node(switch_cost=1.0)
    d = n.add(Proc("d", 20))
    done = []
    n.wake(d)
    n.run(d, 5.0, lambda: (done.append(engine.now), n.block(d)))
    engine.run(until=20.0)
    assert done == [6.0] and d.cpu == 6.0 and d.overhead == 1.0


def test_spin_time_counts_the_spin_and_never_the_switches_across_preemptions():
    # W = 3, a 10 us spin: s dispatched at 0 owes 3; r (real-time, 5 us) preempts at 1 (s paid 1 of
    # its 3, spun 0) and runs 1-12 (5 + 6); s comes back owing 2 + 6 = 8, runs 12-25 (8 owed, 5 spun);
    # r again 25-36; s owes 6, runs 36-47 (6 owed, 5 spun): done at 47, spun 5 + 5 = 10
    engine, n = node(switch_cost=3.0)
    s = n.add(Proc("s", 20))
    s.spinning = True                # the application's flag: this step is a spin
    done = []
    n.run(s, 10.0, lambda: (done.append(engine.now), n.block(s)))
    n.wake(s)
    r = n.add(Proc("r", 20, rt=1))

    def burst(_):
        n.run(r, 5.0, lambda: n.block(r))
        n.wake(r)

    engine.call(1.0, burst, None)
    engine.call(25.0, burst, None)
    seen = []                        # at 5, while r runs: s still owes 2 of its first 3, spun 0
    engine.call(5.0, lambda _: seen.append((s.owed, s.spun)), None)
    engine.run(until=100.0)
    assert done == [47.0] and s.spun == 10.0 and s.overhead == 3.0 + 6.0 + 6.0 and s.cpu == 25.0
    assert seen == [(2.0, 0.0)]


def test_a_ready_process_that_blocks_leaves_the_ready_list():
    engine, n = node()
    local = hog(n, "local")
    n.wake(local)
    d = n.add(Proc("d", 20))
    n.run(d, 5.0, lambda: n.block(d))
    n.wake(d)                        # counter 20, not above 20 + 3: it waits in the ready list
    n.block(d)                       # and goes to sleep before it ran
    n.block(local)                   # the CPU has nobody left to run
    engine.run(until=10.0)
    assert n.current is None and n.runnable() == 0 and d.cpu == 0.0


def test_a_new_process_sleeps_through_a_continue():
    # given a step but never woken: a STOP and a CONTINUE leave it asleep
    engine, n = node()
    d = n.add(Proc("d", 20, rt=1))
    n.run(d, 5.0, lambda: n.block(d))
    n.stop(d)
    n.cont(d)
    engine.run(until=10.0)
    assert n.current is None and d.state == BLOCKED and d.cpu == 0.0


def test_an_endless_step_can_be_dropped_for_a_new_one():
    # the hog ran 0-10 (charged); its new 5 us step ends at 15
    engine, n = node()
    local = hog(n, "local")
    n.wake(local)
    done = []

    def replace(_):
        n.drop_step(local)
        n.run(local, 5.0, lambda: done.append(engine.now))

    engine.call(10.0, replace, None)
    engine.run(until=20.0)
    assert done == [15.0] and local.cpu == 15.0


def test_a_process_that_exits_leaves_the_cpu_to_a_ready_one():
    # d (real-time) preempts the local task at 0 and exits at 5: the local task runs again
    engine, n = node()
    local = hog(n, "local")
    n.wake(local)
    d = n.add(Proc("d", 20, rt=1))
    n.run(d, 5.0, lambda: n.exit(d))
    n.wake(d)
    engine.run(until=10.0)
    assert n.current is local and d.state == BLOCKED and d.cpu == 5.0 and n.runnable() == 1


def test_a_dts_daemon_is_a_process_of_the_nodes_priority():
    # no signal before 10^6; the local task spends its 20 ticks (of 10 us) by 200, 400, ..., 1000:
    # five recalculations, which take the sleepers (the daemon and d) 20 -> 30 -> 35 -> 37 -> 38 -> 39
    from simcore.models.pvm.modes import Explicit

    engine, n = node(tick=10.0)
    local = hog(n, "local")
    d = n.add(Proc("dist0", 20, rt=1))
    Explicit({"explicit_run": 1e6}, None).attach(engine, [n], [d], {"priority": 20})
    n.wake(local)
    engine.run(until=1000.5)
    daemon = n.procs[-1]
    assert daemon.name == "dts0" and daemon.counter == d.counter == 39 and local.counter == 20


def test_explicit_stops_a_distributed_process_in_the_middle_of_its_computation():
    # no costs, no gap, computations of 90; STOP at 70, 170, 270, ..., CONTINUE 30 later, on both nodes.
    # root: computes 0-70, stopped, 100-120, sends 120-130. child: message at 220 (running since
    # 200), reads 220-225-230, computes 230-270, stopped, 300-350, replies 350-360. root: message at
    # 450 (running since 400), reads 450-455-460
    m = scripted("explicit", compute=90.0, switch_cost=0.0, fragment_gap=0.0, latency=90.0, explicit_run=70.0,
                 explicit_stop=30.0, signal_cost=0.0)
    assert m["exec_time"] == pytest.approx(460e-6, rel=1e-12)


def test_pvm_over_two_iterations_pays_its_switches_per_iteration():
    # iteration 1 as in the late-body scenario (done at 276); iteration 2: the root sends 276-286,
    # the child (blocked since 149) is woken at 386 (+2), reads 388-393, blocks, woken at 406 (+2),
    # reads 408-413, replies 413-423; the root is woken at 523 (+2) and at 543 (+2): done at 550.
    # Switches: root 2 + 2 + 2 + 2 + 2, child 2 + 2 + 2 + 2 = 18 us, 9 per iteration. Blocks: the
    # root 2 + 2 (head, body), the child 2 + 2 (start or head, body): 8, 2 per iteration and process
    m = scripted("pvm", iterations=2)
    assert m["exec_time"] == pytest.approx(550e-6, rel=1e-12)
    assert m["switch_time"] == 18.0 / 2 and m["blocks"] == 8 / (2 * 2)


def test_a_spin_of_one_microsecond_still_spins():
    # as the spin that runs out, with spin 1: the child spins 119-120, the root 256-257
    m = scripted("spin", spin=1.0)
    assert m["exec_time"] == pytest.approx(276e-6, rel=1e-12)
    assert m["spin_time"] == 1.0 and m["blocks"] == 4 / 2


def test_mxi_blocks_without_spinning():
    # the child blocks at the start, the root after its send; each is woken (+2) when its message is
    # whole (132, 269): one read 132-139, reply 139-149; the root 269-276
    m = scripted("mxi")
    assert m["exec_time"] == pytest.approx(276e-6, rel=1e-12)
    assert m["spin_time"] == 0.0 and m["blocks"] == 2 / 2


def test_simulate_returns_the_application_with_its_processes():
    # the late-body scenario: the root blocks for the head and the body, the child at the start and
    # for the body
    run = simulate(full_params(SCRIPT), "pvm", streams())
    assert [(p.name, p.blocks) for p in run.app.dps] == [("dist0", 2), ("dist1", 2)]


def test_delays_are_drawn_from_each_process_and_each_link_stream():
    # exponential delays, no jitter (mean 0: no draw), no read or switch cost: the root computes C0
    # and sends (10); the child's head comes 100 later and its body G1 after it; it computes C1 and
    # replies (10); the root's body comes 100 + G2 later. exec = C0 + C1 + G1 + G2 + 2 (10 + 100)
    params = {**SCRIPT, "delays": "exponential", "compute": 1.0, "read_cost": 0.0, "switch_cost": 0.0}
    m = run_replication(params, ["pvm"], streams())["pvm"]
    s = streams()
    c0, c1 = s.fresh("compute:0").exponential(1.0), s.fresh("compute:1").exponential(1.0)
    g1, g2 = s.fresh("link:0:1").exponential(20.0), s.fresh("link:1:0").exponential(20.0)
    assert m["exec_time"] == pytest.approx((c0 + c1 + g1 + g2 + 2 * (10.0 + 100.0)) * 1e-6, rel=1e-12)


def test_the_first_clock_tick_of_each_node_comes_at_its_phase_from_the_ticks_stream():
    # the children wait for a message that comes after 20 000 us, so the local task of nodes 1-3 runs
    # from 0 with its counter of 20 until the node's first tick, at its phase (uniform in [0, tick))
    params = full_params({"iterations": 1, "local_tasks": 1, "latency": 20000.0, "delays": "fixed"})
    phases = streams().fresh("ticks").uniform(0.0, params["tick"], params["nodes"])
    seen = []

    def attach(engine, nodes):
        for i in range(1, params["nodes"]):
            local = nodes[i].procs[1]
            for at in (phases[i] - 1e-6, phases[i] + 1e-6):
                engine.call(at, lambda lp: seen.append(lp.counter), local)

    simulate(params, "pvm", streams(), attach=attach)
    assert seen == [20, 19] * (params["nodes"] - 1)


def test_bad_parameters_name_the_model():
    for params in ({"nodes": 1}, {"nodez": 4}):
        with pytest.raises(InputError, match="model 'pvm'"):
            full_params(params)


@pytest.mark.parametrize("work, stretch", [((20.0, 40.0), 120.0 * 2 / 60.0), ((0.5, 40.0), 120.0 * 2 / 40.5),
                                           ((0.0, 40.0), math.nan)])
def test_metrics_are_read_from_the_processes_accounts(work, stretch):
    # two local tasks given 10 us of switches each besides their work, a span of 120 us, 2 iterations:
    # stretch = span x 2 / (total work), undefined if a task got no work; blocks (3 + 5) / (2 x 2);
    # spin (4 + 8) / (2 x 2); switches (2 + 6 + 10 + 10) / 2
    from types import SimpleNamespace

    from simcore.models.pvm.model import measure

    dist = [Proc("dist0", 20), Proc("dist1", 20)]
    for p, blocks, spun, overhead in zip(dist, (3, 5), (4.0, 8.0), (2.0, 6.0)):
        p.blocks, p.spun, p.overhead = blocks, spun, overhead
    local = [Proc("local0.0", 20), Proc("local1.0", 20)]
    for p, w in zip(local, work):
        p.cpu, p.overhead = w + 10.0, 10.0
    nodes = [SimpleNamespace(procs=[dist[i], local[i]], close=lambda: None) for i in range(2)]   # nothing running
    m = measure({"iterations": 2}, nodes, SimpleNamespace(dps=dist), SimpleNamespace(now=120.0, events=7))
    assert m == pytest.approx({"exec_time": 120e-6, "local_stretch": stretch, "blocks": 2.0, "spin_time": 3.0,
                               "switch_time": 14.0, "events": 7.0}, rel=1e-15, nan_ok=True)


# -- found by the mutation review ---------------------------------------------------------------------
def test_priorities_stay_in_linux_range_so_real_time_always_wins():
    # an ordinary goodness is at most counter + priority <= 2 x 40 + 40 = 120 < 1000 + rt
    with pytest.raises(InputError, match="priority = 41 is not an integer in"):
        run_replication({"priority": 41}, ["prio"], streams())


def test_explicit_signals_may_not_overlap():
    # a signal takes signal_cost + 2 W of CPU: 20 + 2 x 5 = 30 >= the 10 us stop
    with pytest.raises(InputError, match="explicit_run and explicit_stop each exceed signal_cost"):
        run_replication({"explicit_stop": 10.0, "signal_cost": 20.0}, ["explicit"], streams())


@pytest.mark.parametrize("mode", ["prio", "pvm"])
def test_a_busy_node_accounts_for_every_microsecond_of_the_run(mode):
    # a CPU-bound local task keeps every CPU busy from 0 to the end, so the CPU time of a node's
    # processes (switch costs included) adds up to the run's length, the last stretch included
    run = simulate(full_params({"iterations": 20, "local_tasks": 1}), mode, streams())
    span = run.metrics["exec_time"] * 1e6
    for node in run.nodes:
        assert math.fsum(p.cpu for p in node.procs) == pytest.approx(span, rel=1e-12)


def test_switch_costs_still_owed_at_the_end_are_not_local_work():
    # a local task dispatched 6 us before the end with a 10 us switch cost: it ran 6 us, all of it
    # switch cost, 4 us still owed; with 40 us of work before, its work is 40 and the span 120: 3
    from types import SimpleNamespace

    from simcore.models.pvm.model import measure

    local = Proc("local0.0", 20)
    local.cpu, local.overhead, local.owed = 40.0 + 6.0, 10.0, 4.0
    nodes = [SimpleNamespace(procs=[local], close=lambda: None)]
    m = measure(
        {"iterations": 1}, nodes, SimpleNamespace(dps=[Proc("dist0", 20)]), SimpleNamespace(now=120.0, events=0)
    )
    assert m["local_stretch"] == 120.0 / 40.0


def test_exponential_draws_taken_ahead_are_numpys_draws_in_order():
    """Sintree draws its delays 64 standard exponentials at a time; each draw, scaled by its
    mean, is bit for bit what ``rng.exponential(mean)`` would give at that point of the sequence
    (means alternating as a link alternates jitter and fragment gap), past a refill. A mean of 0
    is 0 and draws nothing; fixed delays are their means and draw nothing."""
    import numpy as np

    from simcore.models.pvm.sintree import Delays

    means = [20.0, 10.0, 0.0, 0.5, 3e-4] * 50
    draws = Delays(np.random.default_rng(9))
    reference = np.random.default_rng(9)
    assert [draws(m) for m in means] == [float(reference.exponential(m)) if m > 0 else 0.0 for m in means]
    fixed = Delays(np.random.default_rng(9), fixed=True)
    assert [fixed(m) for m in means] == means and fixed._ahead == []
