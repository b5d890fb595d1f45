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
from simcore.models.domains import COUNT, POSITIVE, PROBABILITY, Choice, Integer
from simcore.models.registry import get_policy, policy_names

TINY = {  # a scenario each model runs in well under a second
    "cluster": {"workload": "amir", "arrival_window": 60.0, "mean_interarrival": 4.0, "parallel_fraction": 0.2,
                "parallel_procs_max": 4, "single_cpu_cap": 50.0, "parallel_cpu_cap": 100.0, "migration_cost": 0.1},
    "numa": {"topology": "corr05-4x1", "n_tasks": 12, "creation_rate": 100.0, "mean_demand": 50.0, "mean_io": 20.0},
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
    from simcore.models.domains import COUNT, POSITIVE

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
@pytest.mark.parametrize("other", [Parameter(1.0, "a", POSITIVE), Parameter(1, "a", Choice(1)), Parameter(1, "A", COUNT)])
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
