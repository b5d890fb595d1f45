"""The compiled busiest-group search (simcore/models/numa/kernels.py) against the pure-Python
reference (``Balancer.compiled = False``): the same answer on random domain states, and the same
runs on the experiments' workloads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.numa import full_params, make_workload, simulate
from simcore.models.numa.balancer import Balancer
from simcore.models.numa.kernels import busiest_group
from simcore.models.numa.model import default_domains_for, load_machine, make_policy, tune_domains
from simcore.models.numa.runqueue import SCHED_LOAD_SCALE, tick_index
from simcore.models.numa.scheduler import NumaSystem

ROOT = Path(__file__).resolve().parents[1]


def system(topology: str, policy: str, **params):
    """A NumaSystem of ``topology`` under ``policy``, built as ``simulate`` builds it, with no task."""
    params = full_params({"topology": topology, **params})
    streams = Streams(replication_seed(3, "kernels", 0, 0))
    machine = load_machine(topology)
    impl = make_policy(policy, params, streams)
    domains = tune_domains(default_domains_for(machine, impl.builder, params["domain_init"]), params)
    impl.setup(machine, domains)
    return NumaSystem(Engine(), machine, domains, impl, params)


def arrays(dom, n: int):
    """The domain's groups as the kernel takes them: per CPU its group (-1 outside the span), and
    the group sizes."""
    group_of = np.full(n, -1, dtype=np.int64)
    for i, g in enumerate(dom.groups):
        group_of[list(g)] = i
    return group_of, np.asarray(dom.sizes, dtype=np.int64)


def scramble(sys, rng, now: float) -> None:
    """Random run-queue lengths (0-4 runnable tasks) and 2.6.11 load averages settled at random
    earlier ticks, with the system's mirrors kept as the scheduler keeps them."""
    sys.engine.now = now
    for rq in sys.rqs:
        n = int(rng.integers(0, 5))
        rq.curr = object() if n else None
        rq.n_queued = max(n - 1, 0)
        sys.np_cur[rq.cpu] = n * SCHED_LOAD_SCALE
        rq.load_avg = int(rng.integers(0, 5 * SCHED_LOAD_SCALE))
        rq.load_tick = int(rng.integers(max(int(now) - 12, 0), int(now) + 1))
        sys.np_avg[rq.cpu], sys.np_tick[rq.cpu] = rq.load_avg, rq.load_tick
    sys.np_dirty = True


@pytest.mark.parametrize("topology, policy, load_average", [
    ("superdome-16x4", "multilevel", "tick"),     # 64 CPUs: wide domains (numpy in the reference)
    ("superdome-16x4", "linux-2level", "instant"),
    ("corr05-4x4", "multilevel", "tick"),         # 16 CPUs
    ("corr05-4x2", "linux-2level", "tick"),       # 8 CPUs: only narrow domains
    ("mehta-s1", "conservative-hard", "tick"),    # six distance levels
])
def test_the_compiled_search_gives_the_references_answer(monkeypatch, topology, policy, load_average):
    """400 random states of the machine; for every CPU, every balancing domain, each kind of
    attempt (busy, idle, newly idle) and imbalance_pct 100, 125 or 150: the same busiest group and
    the same imbalance."""
    monkeypatch.setattr(Balancer, "compiled", False)
    sys = system(topology, policy, load_average=load_average)
    bal = sys.balancer
    n = sys.ncpus
    rng = np.random.default_rng(11)
    found = 0
    for state in range(400):
        scramble(sys, rng, 20.0 + state + float(rng.random()))
        t = float(tick_index(sys.engine.now, bal.tick))
        for cpu, doms in enumerate(bal.doms):
            for dom in doms:
                if not dom.lb:
                    continue
                dom.imbalance_pct = int(rng.choice([100, 125, 150]))
                group_of, sizes = arrays(dom, n)
                for idle in (0, 1, 2):
                    g, imb = busiest_group(group_of, sizes, dom.local, dom.total_n, sys.np_cur, sys.np_avg,
                                           sys.np_tick, t, bal.instant, dom.imbalance_pct, idle)
                    fast = (dom.groups[g], imb) if g >= 0 else (None, 0)
                    sys.np_dirty = True
                    assert fast == bal.find_busiest_group(cpu, dom, idle), (state, cpu, dom.name, idle)
                    found += fast[0] is not None
    assert found > 100   # the states do make imbalances


@pytest.mark.parametrize("spec_id, cell", [
    ("corr05-fig13", 7), ("corr05-fig10", 9), ("corr05-fig9", 9), ("mehta-table3-w1", 0),
    pytest.param("mehta-table5-w3", 3, marks=pytest.mark.slow),
])
def test_the_compiled_search_gives_the_reference_runs(monkeypatch, spec_id, cell):
    """On the experiments' own workloads: every task's completion time and trace, and every
    metric, the event count included, equal to the bit."""
    spec = load_spec(ROOT / f"config/experiments/{spec_id}.yaml")
    params = full_params({**spec.params(spec.cell(cell).values), "n_tasks": min(spec.cell(cell).values.get("n_tasks", 200), 200)})
    streams = Streams(replication_seed(5, spec_id, cell, 0))
    workload = make_workload(params, streams, int(load_machine(params["topology"]).cpus))
    runs = {}
    for compiled in (False, True):
        monkeypatch.setattr(Balancer, "compiled", compiled)
        runs[compiled] = [simulate(params, workload, p, streams, trace=True) for p in spec.policies]
    for ref, fast in zip(runs[False], runs[True]):
        assert [(t.finished, t.trace) for t in fast.tasks] == [(t.finished, t.trace) for t in ref.tasks]
        assert fast.metrics == ref.metrics
        assert fast.system.migrations > 0
