"""The cluster's run around its compiled rules (simcore/models/cluster/system.py): what Python
hands the kernels (the rounds' recipients, the background processes' draws batch after batch),
the lazy Mosix wake-ups, which change the events and nothing else, and the kernels' own event
loop, which gives the SimPy-driven run's bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cluster_script import BIG, Hand, run

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.cluster import full_params, run_replication, simulate
from simcore.models.cluster import model as cluster_model
from simcore.models.cluster.knowledge import Knowledge
from simcore.models.cluster.model import make_workload
from simcore.models.cluster.mosix import Mosix

ROOT = Path(__file__).resolve().parents[1]


def test_lazy_wake_ups_change_only_the_events(monkeypatch):
    """``Mosix.lazy = False`` (a wake-up at every grid point while a threshold is exceeded) gives
    the same completions and migrations as the lazy wake-ups, with more events: a skipped
    wake-up would have moved nothing."""
    spec = load_spec(ROOT / "config/experiments/amir-map.yaml")
    params = full_params(spec.params(spec.cell(4).values))
    runs = {}
    for lazy in (True, False):
        monkeypatch.setattr(Mosix, "lazy", lazy)
        streams = Streams(replication_seed(7, "amir-map", 4, 0))
        workload = make_workload(params, streams)
        runs[lazy] = {p: simulate(params, workload, p, streams) for p in ("mosix", "enhanced-mosix")}
    for policy in ("mosix", "enhanced-mosix"):
        lazy, eager = runs[True][policy], runs[False][policy]
        assert [(p.pid, p.completion, p.migrations) for p in lazy.procs] == \
               [(p.pid, p.completion, p.migrations) for p in eager.procs]
        assert {k: v for k, v in lazy.metrics.items() if k != "events"} == \
               {k: v for k, v in eager.metrics.items() if k != "events"}
    assert runs[True]["mosix"].metrics["events"] < runs[False]["mosix"].metrics["events"]
    assert runs[True]["mosix"].metrics["migrations"] > 0


CLUSTER_SPECS = sorted(p.stem for p in (ROOT / "config/experiments").glob("*.yaml")
                       if load_spec(p).data["model"] == "cluster")


def _both_loops(monkeypatch, params: dict, policies: list, seed) -> tuple[dict, dict]:
    """One replication's metrics by the kernels' loop and driven by SimPy, as repr (the bytes)."""
    out = []
    for compiled in (True, False):
        monkeypatch.setattr(cluster_model, "COMPILED_LOOP", compiled)
        metrics = run_replication(params, policies, Streams(seed))
        out.append({p: {k: repr(v) for k, v in m.items()} for p, m in metrics.items()})
    return out[0], out[1]


@pytest.mark.parametrize("experiment", CLUSTER_SPECS)
def test_the_compiled_loop_gives_the_simpy_driven_runs_bytes(monkeypatch, experiment):
    """The first and last cells of every cluster experiment, two replications each, every policy:
    the kernels' own loop and the SimPy-driven run give the same metrics to the last bit, the
    events counted included (a skipped or extra event, or a tie broken otherwise, shows)."""
    spec = load_spec(ROOT / f"config/experiments/{experiment}.yaml")
    cells = spec.all_cells()
    for cell in {cells[0].index: cells[0], cells[-1].index: cells[-1]}.values():
        params = spec.params(cell.values)
        for rep in range(2):
            compiled, simpy = _both_loops(monkeypatch, params, spec.policies,
                                          replication_seed(11, experiment, cell.index, rep))
            assert compiled == simpy


@pytest.mark.parametrize("compiled", [True, False])
def test_an_arrival_at_a_completions_instant_comes_after_it(monkeypatch, compiled):
    """Two machines of speed 1 under Enhanced PVM; process 0 (demand 1) arrives at 0 and goes to
    machine 0 (the first of two equal costs), so it completes at 1, keyed when it was placed;
    process 1 arrives at 1, keyed after process 0's arrival had run. At that instant the
    completion fires first (SimPy's insertion order), machine 0 is empty again, and process 1
    goes there too (ends at 2 on machine 0). Fired the other way round, it would find machine 0
    busy and go to machine 1. Both loops keep SimPy's order; 4 events (2 arrivals, 2 completions)."""
    monkeypatch.setattr(cluster_model, "COMPILED_LOOP", compiled)
    result = run([(1.0, BIG), (1.0, BIG)], [(0, 1, 0, 0), (1, 1, 0, 0)], "enhanced-pvm")
    assert [(p.pid, p.completion, p.ended_on) for p in result.procs] == [(0, 1.0, 0), (1, 2.0, 0)]
    assert result.metrics["events"] == 4


def test_a_run_with_a_python_observer_is_driven_by_simpy():
    """Mosix placing at random (the policy's own draw) and a policy deciding in Python are
    observed; the compiled policies are not."""
    params = full_params({})
    from simcore.core.engine import Engine
    from simcore.models.cluster.system import ClusterSystem, expand_machines
    from simcore.models.registry import get_policy

    def observed(policy, **extra):
        impl = get_policy("cluster", policy)({**params, **extra}, np.random.default_rng(0))
        return ClusterSystem(Engine(), expand_machines(params["machines"]), 10.0, impl, print).observed

    assert observed("optimal") and observed("mosix", mosix_initial="random")
    assert not any(observed(p) for p in ("pvm", "enhanced-pvm", "mosix", "pvm-on-mosix", "enhanced-mosix"))


def test_a_background_process_draws_batch_after_batch():
    """Background process -1 (seed 5, max_period 1) alone on a speed-1 machine: its bursts and
    idle periods are d0, d1, d2, ... = U0, U1, ... of PCG64(5), so its k-th burst begins at
    d0 + ... + d(2k-1). Midway through its 41st burst (draw 80, past the first batch of 64) it
    was placed at the sum of the first 80 draws and has d80 / 2 left."""
    d = np.random.Generator(np.random.PCG64(5)).random(81)
    hand = Hand([(1.0, 1000.0)], background=[(0, 5, 1.0)], unfinished=1)
    start = float(np.sum(d[:80]))
    hand.run(until=start + d[80] / 2)
    bg = hand.proc(-1)
    assert bg.placed_at == pytest.approx(start, rel=1e-12)
    assert hand.system.remaining(bg) == pytest.approx(d[80] / 2, rel=1e-9)


def test_the_rounds_recipients_are_the_window_of_other_machines():
    """``Knowledge.batch``: 64 rounds of each sender's ``window`` distinct recipients, never itself."""
    batch = Knowledge(6, 3, 1.0, np.random.default_rng(4)).batch()
    assert batch.shape == (64, 6, 3)
    assert all(s not in to and len(set(to)) == 3 for rows in batch.tolist() for s, to in enumerate(rows))
    assert Knowledge(3, 5, 1.0, np.random.default_rng(4)).window == 2


def test_a_subclass_of_a_policy_whose_rules_are_compiled_is_refused():
    """A policy whose class the kernels know runs their rules; a subclass of one (here of Mosix)
    would get none of them, only the Python hooks of ``base.Policy``: it is refused, naming the
    class it derives from. PVM-on-Mosix, a subclass the kernels know, and a policy of its own
    (``Policy``) run as they are."""
    from simcore.models.cluster import layout_kernels as L
    from simcore.models.cluster.base import Policy
    from simcore.models.cluster.mosix import PVMOnMosix
    from simcore.models.cluster.system import kind_of

    class Variant(Mosix):
        pass

    params, rng = full_params({}), np.random.default_rng(0)
    with pytest.raises(TypeError, match="Variant derives from Mosix"):
        kind_of(Variant(params, rng))
    assert kind_of(PVMOnMosix(params, rng)) == L.MOSIX
    assert kind_of(Policy(params, rng)) == L.PYTHON
