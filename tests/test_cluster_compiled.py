"""The compiled cluster the model runs (simcore/models/cluster/system.py and the *_kernels.py
modules) against the Python model (``Cluster``, the reference: ``Cluster.compiled =
False``): the same runs, bit for bit, on the experiments' workloads and under every option and
policy it runs; the rounds' recipients; and which runs go to which model. (Every scripted
scenario of tests/test_cluster_behaviour.py runs on both too: tests/cluster_script.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models import registry
from simcore.models.cluster import full_params, simulate
from simcore.models.cluster.cluster import Cluster
from simcore.models.cluster.system import ClusterSystem
from simcore.models.cluster.knowledge import Knowledge
from simcore.models.cluster.model import make_workload, monitor_replication
from simcore.models.cluster.mosix import Mosix

ROOT = Path(__file__).resolve().parents[1]


def _setup(spec_id: str, cell: int, **overrides):
    spec = load_spec(ROOT / f"config/experiments/{spec_id}.yaml")
    params = full_params({**spec.params(spec.cell(cell).values), **overrides})
    return spec, params


def _runs(spec_id: str, cell: int, compiled: bool, monkeypatch, policies=None, rep: int = 0, **overrides):
    spec, params = _setup(spec_id, cell, **overrides)
    monkeypatch.setattr(Cluster, "compiled", compiled)
    streams = Streams(replication_seed(7, spec_id, cell, rep))
    workload = make_workload(params, streams)
    return {p: simulate(params, workload, p, streams) for p in policies or spec.policies}


def _same(ref: dict, fast: dict) -> None:
    """Every process's completion and migrations, in the order they completed, every metric
    (events included) and every machine's work and time thrashing, equal to the bit."""
    for policy, a in ref.items():
        b = fast[policy]
        assert type(b.cluster) is ClusterSystem, policy
        assert [(p.pid, p.completion, p.migrations) for p in b.procs] == \
               [(p.pid, p.completion, p.migrations) for p in a.procs]
        assert b.metrics == a.metrics
        assert [(m.work, m.thrashed) for m in b.cluster.machines] == [(m.work, m.thrashed) for m in a.cluster.machines]


def _compare(spec_id, cell, monkeypatch, **kw):
    _same(_runs(spec_id, cell, False, monkeypatch, **kw), _runs(spec_id, cell, True, monkeypatch, **kw))


@pytest.mark.parametrize("spec_id, cell, rep", [
    ("amir-table2", 0, 0), ("amir-table2", 0, 1), ("amir-map", 0, 0), ("amir-map", 8, 0), ("amir-fig1", 0, 0),
    ("amir-fig3", 0, 0), ("amir-fig4", 0, 0), ("barak96-fig2", 3, 0), ("barak96-hetero", 2, 0),
    ("barak96-hetero-random", 1, 0),
])
def test_the_compiled_cluster_gives_the_python_models_runs(monkeypatch, spec_id, cell, rep):
    """On the experiments' own workloads, with every policy they run (barak96's with a migration
    cost, a delayed arrival on the target)."""
    _compare(spec_id, cell, monkeypatch, rep=rep)


@pytest.mark.parametrize("overrides", [
    {"reassign_rule": "stability"},
    {"cpu_bound": "current"},
    {"cost_cpu_load": "effective"},
    {"cost_base": 3.0, "mosix_known_machines": 1},
    {"mosix_known_machines": 5, "info_interval": 0.5},
    {"mosix_known_machines": 0},
    {"mosix_initial": "round-robin", "min_residency": 0.0},
    {"memory_threshold": 0.5, "load_threshold": 0.5},
    {"balance_interval": 2.5, "migration_cost": 0.3},
    {"parallel_job_slowdown": "job"},
    {"parallel_draws": "process", "slowdown_demand": "machine", "mosix_initial": "round-robin"},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_the_compiled_cluster_follows_the_options(monkeypatch, overrides):
    """Each reading and hyperparameter the amir experiments vary, on amir-table2's workload."""
    _compare("amir-table2", 0, monkeypatch, **overrides)


def test_without_lazy_wake_ups_it_is_the_python_model(monkeypatch):
    """``Mosix.lazy = False`` (a wake-up at every grid point while a threshold is exceeded) holds
    in the compiled cluster too, with the events that reference fires."""
    monkeypatch.setattr(Mosix, "lazy", False)
    ref = _runs("amir-map", 4, False, monkeypatch)
    fast = _runs("amir-map", 4, True, monkeypatch)
    _same(ref, fast)
    monkeypatch.setattr(Mosix, "lazy", True)
    assert _runs("amir-map", 4, True, monkeypatch)["mosix"].metrics["events"] < fast["mosix"].metrics["events"]


def test_a_migration_with_a_cost_arrives_late_on_the_compiled_cluster(monkeypatch):
    """barak96's calibrated migration cost: processes that move are away for it (delayed arrivals
    on the target, timers of their own), the same as on the Python model."""
    spec, params = _setup("barak96-fig2", 3)
    assert params["migration_cost"] > 0
    fast = _runs("barak96-fig2", 3, True, monkeypatch)
    _same(_runs("barak96-fig2", 3, False, monkeypatch), fast)
    assert fast["mosix"].metrics["migrations"] > 0


def test_optimal_and_pvm_on_mosix_run_compiled(monkeypatch):
    """barak96's Table 1 policies: optimal (a policy deciding in Python on the compiled cluster)
    and the three others, as on the Python model."""
    _compare("barak96-table1", 5, monkeypatch)


@pytest.mark.parametrize("cell, period", [(1, None), (4, None), (1, 1.0)])
def test_background_processes_run_compiled(monkeypatch, cell, period):
    """barak96's background processes (pinned, bursts and idle periods of their own draws) on
    the compiled cluster, as on the Python model; with short periods each uses several batches
    of 64 draws."""
    refills = []
    monkeypatch.setattr(ClusterSystem, "_refill", lambda self, CI, CF, b, f=ClusterSystem._refill: (
        refills.append(b), f(self, CI, CF, b))[1])
    overrides = {} if period is None else {"background_max_period": period}
    spec, params = _setup("barak96-fig3", cell, **overrides)
    assert params["background_procs"] > 0
    _compare("barak96-fig3", cell, monkeypatch, **overrides)
    batches = len(refills) / len(spec.policies)
    assert batches > (params["background_procs"] if period else 0)


def test_mosix_random_first_placement_runs_compiled(monkeypatch):
    """Mosix's 'random' first placement: the policy's draws in Python, the rest compiled."""
    _compare("amir-table2", 0, monkeypatch, policies=["mosix"], mosix_initial="random")


class _Lazybones(Mosix):
    """A Mosix that never moves anything: a policy the kernels do not know (its class), run on
    its Python hooks."""

    name = "test-lazybones"

    def choose(self, i, cluster):
        return None


def test_a_policy_the_kernels_do_not_know_runs_on_its_python_hooks(monkeypatch):
    """A policy of another class runs on the compiled cluster through its Python hooks: its own
    rule applied, nothing moves; its rounds run as its Python timers."""
    monkeypatch.setattr(Cluster, "compiled", True)
    spec, params = _setup("amir-table2", 0)
    streams = Streams(replication_seed(7, "amir-table2", 0, 0))
    workload = make_workload(params, streams)
    monkeypatch.setitem(registry._POLICIES, ("cluster", _Lazybones.name), _Lazybones)
    lazy = simulate(params, workload, _Lazybones.name, streams)
    assert type(lazy.cluster) is ClusterSystem and lazy.metrics["migrations"] == 0
    assert len(lazy.procs) == len(workload.procs)


def test_a_monitor_samples_the_compiled_cluster(monkeypatch):
    """A monitored replication runs on the compiled cluster and samples the same counts as on the
    Python model."""
    spec, params = _setup("amir-table2", 0)
    tables = []
    for compiled in (False, True):
        monkeypatch.setattr(Cluster, "compiled", compiled)
        tables.append(monitor_replication(params, "mosix", Streams(replication_seed(7, "m", 0, 0)), 10.0, 200.0))
    assert tables[0].equals(tables[1]) and len(tables[1]) > 20


def test_the_rounds_recipients_are_the_python_models():
    """``Knowledge.batch`` gives the recipients ``_recipients`` hands out, round after round: each
    sender's window, never itself."""
    class _Cluster:
        machines = [None] * 6
    a = Knowledge(_Cluster(), 3, 1.0, np.random.default_rng(4))
    b = Knowledge(_Cluster(), 3, 1.0, np.random.default_rng(4))
    batch = np.concatenate([b.batch(), b.batch()])
    for k in range(128):
        rows = a._recipients()
        assert rows == batch[k].tolist()
        assert all(s not in to and len(set(to)) == 3 for s, to in enumerate(rows))
