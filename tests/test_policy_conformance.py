"""One contract for every registered policy of every model (in the spirit of scikit-learn's
``check_estimator``): it declares its hyperparameters, builds with their defaults, refuses a value
outside a declared domain with an InputError when built, reads nothing it does not declare, and
runs a tiny scenario to the same rows twice."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models import MODELS, Parameter, get_model
from simcore.models.registry import get_policy, policy_names
from simcore.vocabulary.domains import COUNT, POSITIVE, PROBABILITY, Choice, Integer

TINY = {  # a scenario each model runs in well under a second
    "cluster": {"workload": "amir", "arrival_window": 60.0, "mean_interarrival": 4.0, "parallel_fraction": 0.2,
                "parallel_procs_max": 4, "single_cpu_cap": 50.0, "parallel_cpu_cap": 100.0, "migration_cost": 0.1},
    "numa": {"topology": "corr05-4x1", "n_tasks": 12, "creation_rate": 100.0, "mean_demand": 50.0, "mean_io": 20.0},
    "pools": {"processors": 20, "pool_size": 5, "mean_parallelism": 4.0, "jobs": 30},
    "cosched": {"nst": 200, "pdt": 0.5, "mit": 1.5},
    "pvm": {"iterations": 50, "local_tasks": 1},
}
HOSTILE = [math.nan, math.inf, -1, 0, 0.5, 10**9, True, "no-such-value", None, [1], {"a": 1}]



def _policies() -> list[tuple[str, str]]:
    out = []
    for model in MODELS:
        get_model(model)  # importing a model registers its policies
        out += [(model, name) for name in policy_names(model)]
    return out


POLICIES = _policies()
HYPERPARAMETERS = [(model, name, key) for model, name in POLICIES for key in get_policy(model, name).HYPERPARAMETERS]


def rng():
    return np.random.Generator(np.random.PCG64(7))


def test_every_model_has_policies():
    assert {m for m, _ in POLICIES} == set(MODELS) and len(POLICIES) >= 10


@pytest.mark.parametrize("model, name", POLICIES)
def test_builds_with_its_declared_defaults(model, name):
    cls = get_policy(model, name)
    assert all(isinstance(p, Parameter) for p in cls.HYPERPARAMETERS.values())
    policy = cls({}, rng())
    assert policy.hp == {k: p.default for k, p in cls.HYPERPARAMETERS.items()}


@pytest.mark.parametrize("model, name, key", HYPERPARAMETERS)
def test_refuses_a_value_outside_a_declared_domain_when_built(model, name, key):
    cls = get_policy(model, name)
    domain = cls.HYPERPARAMETERS[key].domain
    bad = [v for v in HOSTILE if domain.problem(v)]
    assert bad, f"no hostile value is outside {domain.describe()}"
    for value in bad:
        with pytest.raises(InputError, match=rf"^{model} policy '{name}': parameter {key} = .* is not "):
            cls({key: value}, rng())
    good = [v for v in HOSTILE if not domain.problem(v)]
    for value in good:
        assert cls({key: value}, rng()).hp[key] == value


@pytest.mark.parametrize("model, name", POLICIES)
def test_reads_only_what_it_declares(model, name):
    """Every model parameter the policy does not declare is set to a value no code could use: it
    still builds, with its declared defaults (it keeps no reference to the model's dict)."""
    cls = get_policy(model, name)
    junk = {k: object() for k in get_model(model).PARAMETERS if k not in cls.HYPERPARAMETERS}
    policy = cls(junk, rng())
    assert policy.hp == {k: p.default for k, p in cls.HYPERPARAMETERS.items()}
    assert not any(v is junk_value for v in vars(policy).values() for junk_value in junk.values())
    assert not any(v is junk for v in vars(policy).values())


@pytest.mark.parametrize("model, name", POLICIES)
def test_tiny_scenario_gives_the_same_rows_twice(model, name):
    run = get_model(model).run_replication
    first = run(TINY[model], [name], Streams(replication_seed(11, "conformance", 0, 0)))
    again = run(TINY[model], [name], Streams(replication_seed(11, "conformance", 0, 0)))
    assert first == again
    metrics = get_model(model).METRICS
    assert set(first[name]) == set(metrics)
    assert all(metrics[k].admits(v) for k, v in first[name].items()), first[name]
    other = run(TINY[model], [name], Streams(replication_seed(11, "conformance", 0, 1)))
    assert other != first  # the rows depend on the seed: the scenario is not degenerate


def test_a_policy_registered_after_its_model_brings_its_hyperparameters(monkeypatch):
    """As a policy of another package (entry point) does: its hyperparameters join the model's
    parameters, are checked there, and may not contradict a declaration of the same name."""
    from simcore.models import registry
    from simcore.models.cluster import PARAMETERS, full_params
    from simcore.models.cluster.policies import Policy
    from simcore.vocabulary.domains import COUNT, POSITIVE

    monkeypatch.setattr(registry, "_POLICIES", dict(registry._POLICIES))
    try:
        @registry.register("cluster", "sampler")
        class Sampler(Policy):
            HYPERPARAMETERS = {"sample": Parameter(2, "machines compared", COUNT)}

        assert PARAMETERS["sample"] is Sampler.HYPERPARAMETERS["sample"]
        assert full_params({"sample": 3})["sample"] == 3
        with pytest.raises(InputError, match=r"parameter sample = 0 is not a positive integer"):
            full_params({"sample": 0})
        with pytest.raises(TypeError, match="redeclares parameter 'sample'"):
            registry.register("cluster", "sampler2")(type("Sampler2", (Policy,), {
                "HYPERPARAMETERS": {"sample": Parameter(2.0, "other", POSITIVE)}}))
    finally:
        PARAMETERS.pop("sample", None)


@pytest.fixture
def registry(monkeypatch):
    """simcore.models.registry with its dicts copied: what a test registers (model 'reg-toy') vanishes after it."""
    from simcore.models import registry

    monkeypatch.setattr(registry, "_POLICIES", dict(registry._POLICIES))
    monkeypatch.setattr(registry, "_PARAMETERS", dict(registry._PARAMETERS))
    return registry


def _policy(name: str, **hyperparameters) -> type:
    """A bare policy class; without keywords it has no HYPERPARAMETERS attribute at all."""
    return type(name, (), {"HYPERPARAMETERS": hyperparameters} if hyperparameters else {})


A = Parameter(1, "a", COUNT)
B = Parameter(0.5, "b", PROBABILITY)
C = Parameter("x", "c", Choice("x", "y"))


def test_a_model_learns_the_hyperparameters_of_its_policies_before_and_after_it(registry):
    first = registry.register("reg-toy", "first")(_policy("First", a=A))
    registry.register("reg-toy", "bare")(_policy("Bare"))
    registry.register("other-reg-toy", "elsewhere")(_policy("Elsewhere", b=B))
    own = {"x": Parameter(0, "x", Integer())}
    parameters = registry.with_hyperparameters("reg-toy", own)
    assert parameters is own and parameters == {"x": own["x"], "a": A}
    assert first.name == "first" and registry.get_policy("reg-toy", "first") is first
    registry.register("reg-toy", "later")(_policy("Later", a=A, c=C))
    registry.register("reg-toy", "bare-later")(_policy("BareLater"))
    assert parameters == {"x": own["x"], "a": A, "c": C}
    assert registry.policy_names("reg-toy") == ["bare", "bare-later", "first", "later"]


@pytest.mark.parametrize("key, users", [("a", ["first", "later"]), ("c", ["later"]), ("b", []), ("x", [])])
def test_users_are_the_policies_declaring_a_key(registry, key, users):
    registry.register("reg-toy", "first")(_policy("First", a=A))
    registry.register("reg-toy", "bare")(_policy("Bare"))
    registry.register("reg-toy", "later")(_policy("Later", a=A, c=C))
    registry.register("other-reg-toy", "elsewhere")(_policy("Elsewhere", a=A, b=B))
    assert registry.users("reg-toy", key) == users


def test_an_equal_redeclaration_is_one_declaration(registry):
    """Two policies may declare one hyperparameter with equal (not identical) declarations."""
    registry.register("reg-toy", "first")(_policy("First", c=Parameter("x", "c", Choice("x", "y"))))
    parameters = registry.with_hyperparameters("reg-toy", {})
    registry.register("reg-toy", "second")(_policy("Second", c=Parameter("x", "c", Choice("x", "y"))))
    assert parameters == {"c": C}


@pytest.mark.parametrize("after", [False, True])
@pytest.mark.parametrize(
    "other", [Parameter(1.0, "a", POSITIVE), Parameter(1, "a", Choice(1)), Parameter(1, "A", COUNT)]
)
def test_a_policy_redeclaring_a_parameter_differently_is_refused(registry, after, other):
    """Registered before the model (with_hyperparameters) or after it (register): a TypeError naming all three."""
    clash = _policy("Clash", a=other)
    if after:
        registry.with_hyperparameters("reg-toy", {"a": A})
        declare = lambda: registry.register("reg-toy", "clash")(clash)  # noqa: E731
    else:
        registry.register("reg-toy", "clash")(clash)
        declare = lambda: registry.with_hyperparameters("reg-toy", {"a": A})  # noqa: E731
    with pytest.raises(TypeError, match=r"^policy 'clash' of model 'reg-toy' redeclares parameter 'a' differently$"):
        declare()


def test_entry_points_are_read_once_and_add_policies_by_model_and_name(registry, monkeypatch):
    """'<model>:<name>' splits at the first colon; a policy registered under that name is kept. A
    class named only by its entry point is registered as the decorator would: it gets its name,
    and its hyperparameters join the model's parameters."""
    first = registry.register("reg-toy", "first")(_policy("First", a=A))
    parameters = registry.with_hyperparameters("reg-toy", {})
    plugin, shadow, odd = _policy("Plugin", b=B), _policy("Shadow"), _policy("Odd")
    groups = []

    def entry_points(group):
        groups.append(group)
        return {"simcore.policies": [SimpleNamespace(name="reg-toy:plugin", load=lambda: plugin),
                                     SimpleNamespace(name="reg-toy:first", load=lambda: shadow),
                                     SimpleNamespace(name="reg-toy:v2:beta", load=lambda: odd)]}.get(group, [])

    monkeypatch.setattr(registry, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_loaded_entry_points", False)
    assert registry.policy_names("reg-toy") == ["first", "plugin", "v2:beta"]
    assert registry.get_policy("reg-toy", "plugin") is plugin and registry.get_policy("reg-toy", "first") is first
    assert registry.get_policy("reg-toy", "v2:beta") is odd and registry.policy_names("other-reg-toy") == []
    assert groups == ["simcore.policies"]
    assert (plugin.name, odd.name) == ("plugin", "v2:beta") and not hasattr(shadow, "name")
    assert parameters == {"a": A, "b": B}


def test_an_unknown_policy_is_bad_input_naming_the_known_ones(registry):
    with pytest.raises(InputError, match=r"^reg-toy model: unknown policy 'x' \(known: none\)$"):
        get_policy("reg-toy", "x")
    registry.register("reg-toy", "b")(_policy("B"))
    registry.register("reg-toy", "a")(_policy("A"))
    with pytest.raises(InputError, match=r"^reg-toy model: unknown policy 'x' \(known: a, b\)$"):
        get_policy("reg-toy", "x")


def test_an_unknown_model_is_a_key_error():
    with pytest.raises(KeyError, match="'no-such-model'"):
        get_model("no-such-model")


# -- how the numa balancer consults its policy and reads its domains ------------------------------
# Scripted machines, sched domains and CPU-bound tasks as in test_numa_behaviour.py: loads are
# instantaneous (nr_running x 128), new tasks stay on their parent's CPU, nothing is cache-hot.
# A domain's first periodic attempt is due its interval after ``last``, which starts at minus
# rebalance_tick's stagger, floor(HZ x cpu / ncpus) ticks with HZ = 1000 / tick, rounded up to a
# tick (docs/linux26-scheduler.md, "Periodic balancing"); the machine's timers come before the
# first task.
def _sched_domain(span, groups, *, flags=("LOAD_BALANCE",), interval=(50, 50), imbalance_pct=125, name="cpu",
                  **extra):
    """A sched domain; ``interval`` is (min_interval, max_interval) in ms. ``extra`` fields (such as
    the kernel's initial ``balance_interval``) make it an instance of a subclass carrying them."""
    import dataclasses

    from simcore.topology.domains import Domain

    cls = Domain
    if extra:
        cls = dataclasses.make_dataclass(
            "ExtraDomain", [(k, object, None) for k in extra], bases=(Domain,), frozen=True
        )
    return cls(0, name, frozenset(span), tuple(frozenset(g) for g in groups), interval[0], interval[1], 1,
               imbalance_pct, 0.0, 1, frozenset(flags), **extra)


def _machine(*cpus_per_node):
    from simcore.topology.machine import make_machine

    n = len(cpus_per_node)
    return make_machine(
        "test", "scripted", list(cpus_per_node), [[10 if i == j else 20 for j in range(n)] for i in range(n)]
    )


@pytest.fixture
def numa_run(monkeypatch):
    """``numa_run(machine, domains, tasks, policy=None, **params) -> (result, pulls)``: tasks are
    (created at ms, CPU, demand ms); ``policy``, an object to run instead of linux-2level;
    ``pulls`` lists every migration as (time, from CPU, to CPU)."""
    from simcore.models.numa import full_params, model, simulate
    from simcore.models.numa.task import TaskSpec

    def run(machine, domains, tasks, policy=None, **params):
        if policy is not None:
            monkeypatch.setattr(model, "make_policy", lambda name, params, streams: policy)
        params = full_params({"topology": "scripted", "n_tasks": len(tasks), "memory_stall_fraction": 0.0,
                              "placement": "parent", "load_average": "instant", "cache_hot_time_cpu": 0.0,
                              "cache_hot_time_node": 0.0, "check_invariants": True, **params})
        specs = [TaskSpec(i, float(at), 0, float(demand), cpu, False, i) for i, (at, cpu, demand) in enumerate(tasks)]
        res = simulate(params, specs, "linux-2level", Streams(replication_seed(1, "scripted", 0, 0)),
                       machine=machine, domains_for=lambda m, builder: domains, trace=True)
        return res, [(at, src, dst) for at, _, src, dst in res.system.moves]

    return run


def _recording_policy(periodic: bool = True):
    """linux-2level that records every question: ("balances", cpu, level, kind) and
    ("imbalance_pct", cpu, level, default); it answers as linux-2level but says no to "periodic"
    when ``periodic`` is false."""
    from simcore.models.numa.policies import Linux2Level

    class Recording(Linux2Level):
        def __init__(self):
            super().__init__({"placement": "parent"}, rng())
            self.calls = []

        def balances(self, cpu, level, kind):
            self.calls.append(("balances", cpu, level, kind))
            return periodic or kind != "periodic"

        def imbalance_pct(self, cpu, level, default):
            self.calls.append(("imbalance_pct", cpu, level, default))
            return default

    return Recording()


def test_numa_domains_ask_the_policy_about_their_own_cpu_level_and_kind(numa_run):
    """Two nodes of two CPUs. CPU 0 has {0}|{1} (level 0, imbalance_pct 117) and {0,1}|{2,3}
    (level 1, 125), both with newly-idle balancing; CPU 3 has {2}|{3} (level 0, 130) without it;
    CPUs 1 and 2 have none. Building each domain, in CPU and level order, asks for its imbalance
    threshold with its default, then whether it balances newly idle (only with BALANCE_NEWIDLE),
    periodically while busy ("periodic": the policy says no) and so while idle ("idle")."""
    low = _sched_domain({0, 1}, [{0}, {1}], flags=("LB", "NI"), imbalance_pct=117)
    high = _sched_domain({0, 1, 2, 3}, [{0, 1}, {2, 3}], flags=("LB", "NI"), name="node")
    other = _sched_domain({2, 3}, [{3}, {2}], imbalance_pct=130)
    policy = _recording_policy(periodic=False)
    numa_run(_machine(2, 2), [[low, high], [], [], [other]], [(0, 1, 10)], policy=policy)
    assert policy.calls == [("imbalance_pct", 0, 0, 117), ("balances", 0, 0, "newidle"), ("balances", 0, 0, "periodic"),
                     ("balances", 0, 0, "idle"),
                     ("imbalance_pct", 0, 1, 125), ("balances", 0, 1, "newidle"), ("balances", 0, 1, "periodic"),
                     ("balances", 0, 1, "idle"),
                     ("imbalance_pct", 3, 0, 130), ("balances", 3, 0, "periodic"), ("balances", 3, 0, "idle")]


@pytest.mark.parametrize("tick, cpus, cpu, interval, at", [
    # HZ = 100: CPU 1 of 2 starts at -floor(100 x 1 / 2) = -50 ticks = -500 ms, due at 100
    (10.0, 2, 1, 600, 100.0),
    # HZ = 1000: CPU 2 of 3 starts at -floor(2000 / 3) = -666 ms, due at 34 (not 33)
    (1.0, 3, 2, 700, 34.0),
])
def test_numa_each_cpus_first_attempt_is_staggered_by_whole_ticks(numa_run, tick, cpus, cpu, interval, at):
    """One node; only CPU ``cpu`` balances, over one-CPU groups of the whole node with a fixed
    interval. Two tasks start on CPU 0 at t=0 and CPU ``cpu``, idle, pulls one (0 against 256:
    an imbalance of one task, or a gap of two tasks' load per CPU) at its first attempt."""
    d = _sched_domain(range(cpus), [{c} for c in range(cpus)], interval=(interval, interval))
    domains = [[d] if c == cpu else [] for c in range(cpus)]
    _, pulls = numa_run(_machine(cpus), domains, [(0, 0, 1000), (0, 0, 1000)], tick=tick)
    assert pulls[0] == (at, 0, cpu)


def test_numa_a_domain_starts_at_its_initial_balance_interval(numa_run):
    """A domain that carries the kernel's initial ``balance_interval`` (bi0) starts at it, not at
    ``min_interval``: two CPUs, domain {0}|{1} of interval 10 to 1000 ms with bi0 = 600. CPU 1
    (last -500) is first due at 100, where it pulls one of the two tasks started on CPU 0 at 0.
    (From min_interval it would try at t=0, find nothing, and pull at 20.)"""
    d = _sched_domain({0, 1}, [{0}, {1}], interval=(10, 1000), balance_interval=600)
    _, pulls = numa_run(_machine(2), [[d], [d]], [(0, 0, 1000), (0, 0, 1000)])
    assert pulls[0] == (100.0, 0, 1)


def test_numa_a_domain_of_one_group_never_balances(numa_run):
    """Both CPUs have the domain {0,1} with a single group {0,1} (load balancing and newly-idle
    flags set): with no other group there is nothing to balance against (Linux drops such a
    degenerate level), so no attempt of any kind is made in a run of three tasks on CPU 0."""
    d = _sched_domain({0, 1}, [{0, 1}], flags=("LB", "NI"), interval=(10, 10))
    res, pulls = numa_run(_machine(2), [[d], [d]], [(0, 0, 100), (0, 0, 100), (50, 0, 100)])
    assert pulls == [] and res.metrics["lb_attempts"] == 0


def test_numa_a_domain_without_balance_exec_is_not_used_for_placement(numa_run):
    """Two nodes of one CPU, domain {0}|{1} with load balancing only (periodic balancing 10 s
    away), placement by exec balancing. Task 0 starts alone on CPU 1, tasks 1-3 are created on
    CPU 0: without an exec-balancing domain each stays on its parent's CPU, so tasks 1-3 get
    node 0's memory. (With BALANCE_EXEC, task 3 would start on CPU 1: 128 x 112 < 384 x 100.)"""
    d = _sched_domain({0, 1}, [{0}, {1}], interval=(10000, 10000), name="node")
    res, _ = numa_run(_machine(1, 1), [[d], [d]], [(0, 1, 1000)] + [(0, 0, 1000)] * 3, placement="exec")
    assert [t.home for t in res.tasks] == [1, 0, 0, 0]


def test_numa_policy_answers_are_asked_once_per_domains_and_key():
    """One CPU pair {0}|{1} (both CPUs' lists hold it): building the balancer's static part
    twice on the same domain lists asks a policy whose ``answers_key`` names its answers once
    (three questions per domain: its threshold, newly idle, busy; two domains), one that returns
    None both times, and a policy of another key (another class) anew."""
    from simcore.models.numa import balancer, full_params
    from simcore.models.numa.model import tune_domains

    low = _sched_domain({0, 1}, [{0}, {1}], flags=("LB", "NI"), imbalance_pct=117)
    domains = tune_domains([[low], [low]], full_params({"topology": "scripted"}))
    named, unnamed, other = _recording_policy(), _recording_policy(), _recording_policy()
    unnamed.answers_key = lambda: None
    for policy, asked in ((named, (6, 6)), (unnamed, (6, 12)), (other, (6, 6))):
        counts = []
        for _ in range(2):
            balancer._static(domains, policy, 2, [True, True])
            counts.append(len(policy.calls))
        assert tuple(counts) == asked
