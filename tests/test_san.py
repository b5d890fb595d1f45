"""SAN solver: descriptor products against an independent flat generator, transient and steady-state
solutions against expm_multiply, flat solves and closed forms, and clear errors for bad models."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as sla
from san_flat import flat_generator

from simcore.san import (
    Descriptor,
    Rate,
    San,
    SanError,
    compile_expr,
    corr05,
    expectation,
    load_san,
    pieces,
    poisson_window,
    probability,
    reward_vector,
    steady_state,
    transient,
)
from simcore.san.expr import ExprError
from simcore.san.pieces import Plan
from simcore.san.solve import transient_krylov

SEEDS = range(24)
EXAMPLE = "config/san/example.yaml"


# -- random models -----------------------------------------------------------------------------
def _expr(rng, names, states):
    j, m = rng.choice(len(names), 2)
    sj = states[j][rng.integers(len(states[j]))]
    return str(rng.choice([
        f"a * ({names[j]} == {sj}) + 0.5",
        f"min({names[j]}, 2) + a",
        "0.3 + count(A*, s0) * a",
        f"max(1, {names[j]}) / (1 + {names[m]})",
        f"a * ({names[j]} != {sj} or {names[m]} == s0) + 0.1 * (not {names[m]} == s1)",
    ]))


def _rate(rng, names, states):
    return Rate(_expr(rng, names, states)) if rng.random() < 0.5 else float(rng.uniform(0.1, 3))


def random_san(seed: int) -> San:
    """3-4 automata of 2-4 states; local, synchronizing (with routing probabilities) and functional rates."""
    rng = np.random.default_rng(seed)
    san = San(params={"a": float(rng.uniform(0.5, 2))})
    k = int(rng.integers(3, 5))
    names = [f"A{i}" for i in range(k)]
    states = [[f"s{j}" for j in range(int(rng.integers(2, 5)))] for _ in range(k)]
    for name, st in zip(names, states):
        san.automaton(name, st)
    for i, name in enumerate(names):
        for _ in range(int(rng.integers(1, 4))):
            src, dst = rng.choice(states[i], 2)
            san.local(name, src, dst, _rate(rng, names, states), name=f"{name}-{len(san.events)}")
    for e in range(int(rng.integers(1, 4))):
        parts = rng.choice(k, int(rng.integers(2, min(k, 3) + 1)), replace=False)
        moves = {}
        for i in parts:
            src = rng.choice(states[i])
            if rng.random() < 0.3:  # routing: two destinations with probabilities
                d1, d2 = rng.choice(states[i], 2, replace=False)
                moves[names[i]] = [(src, d1, 0.4), (src, d2, 0.6)]
            else:
                moves[names[i]] = [(src, rng.choice(states[i]))]
        san.sync(f"sync{e}", _rate(rng, names, states), moves)
    return san


@pytest.fixture(scope="module")
def models():
    return [(random_san(s), flat_generator(random_san(s).pruned())) for s in SEEDS]


# -- descriptor --------------------------------------------------------------------------------
def test_flat_generator_rows_sum_to_zero(models):
    for _, q in models:
        assert np.abs(q.sum(axis=1)).max() < 1e-12
        assert (q.diagonal() <= 0).all()


def test_descriptor_product_equals_flat_product(models):
    rng = np.random.default_rng(7)
    for san, q in models:
        desc = Descriptor(san)
        for _ in range(3):
            x = rng.standard_normal(q.shape[0])
            assert np.abs(desc.product(x) - q.T @ x).max() < 1e-12
        assert np.allclose(desc.diag.ravel(), q.diagonal(), rtol=0, atol=1e-12)


def test_factor_by_factor_products_equal_slab_products(models):
    """The two ways of applying a piece (slabs, or one factor at a time) agree, also for a large automaton."""
    big = random_san(5).automaton("Big", [str(i) for i in range(70)])
    for i in range(69):
        big.local("Big", str(i), str(i + 1), Rate("a * (A0 == s0) + 0.1")).local("Big", str(i + 1), str(i), 0.5)
    big.sync("jump", 2.0, {"Big": [("3", "60"), ("60", "0")], "A1": [("s0", "s1")]})
    rng = np.random.default_rng(9)
    for san in [m[0] for m in models[:8]] + [big]:
        desc = Descriptor(san)
        x = rng.standard_normal(desc.space.product)
        sliced = desc.product(x)
        for piece in desc._plan(True).pieces:
            piece.prepare(dense=True)
        assert np.abs(desc.product(x) - sliced).max() < 1e-12
    assert np.abs(sliced - flat_generator(big.pruned()).T @ x).max() < 1e-12


def _reachable_product(desc, x, plan=None):
    """``x @ Q`` over the reachable states through ``plan`` (default: the descriptor's) on its layout."""
    plan, index = plan or desc._plan(False), desc.layout.index
    stored = np.zeros(plan.size)
    stored[slice(None) if index is None else index] = x
    y = plan.apply(stored)
    return y if index is None else y[index]


def shifted_san() -> San:
    """B lives in 0..1 while P = a and in 1..2 while P = b: P's moves link boxes whose ranges of B are
    shifted (B an identity axis cut to the shared state 1)."""
    san = San(params={})
    san.automaton("P", ["a", "b"]).automaton("B", ["0", "1", "2"]).automaton("C", ["x", "y", "z"])
    san.local("B", "0", "1", Rate("P == a")).local("B", "1", "0", Rate("2 * (P == a)"))
    san.local("B", "1", "2", Rate("3 * (P == b)")).local("B", "2", "1", Rate("(P == b) + 0.5 * (C == y)"))
    san.local("P", "a", "b", Rate("1.5 * (B == 1)")).local("C", "x", "y", 0.7).local("C", "y", "z", 0.4)
    san.sync("back", Rate("1 + (C == z)"), {"P": [("b", "a")], "B": [("1", "1")], "C": [("z", "x"), ("y", "x")]})
    return san


def test_boxes_split_on_the_first_automaton_give_the_restricted_product(models, monkeypatch):
    """One box per first-automaton state (hulls, so some hold unreachable states): the product over the
    reachable states, with the pieces merged or not, as slabs or one factor at a time (rectangular
    factors between boxes of different ranges)."""
    monkeypatch.setattr(pieces, "SPLIT_MIN", 0)
    monkeypatch.setattr(pieces, "SPLIT_SHARE", 1.0)
    rng = np.random.default_rng(10)
    for san, q in models + [(shifted_san(), flat_generator(shifted_san()))]:
        desc = Descriptor(san)
        idx = desc.space.linear()
        assert len(desc.layout.boxes) == len(np.unique(idx // desc.strides[0]))
        x = rng.standard_normal(len(idx))
        expected = q[idx][:, idx].T @ x
        assert np.abs(desc.matvec(x) - expected).max() < 1e-12
        unmerged = Plan(desc.terms, desc.corrector, desc.layout.boxes, merge=False)
        assert np.abs(_reachable_product(desc, x, unmerged) - expected).max() < 1e-12
        for piece in desc._plan(False).pieces:
            piece.prepare(dense=True)
        assert np.abs(desc.matvec(x) - expected).max() < 1e-12


@pytest.mark.parametrize("levels", ["2", "n"])
def test_corr05_boxes_merge_local_events_into_one_matrix(levels, monkeypatch):
    """corr05 (its rates read the process automaton, the first): split into boxes, every processor's local
    events become one matrix per box, and the product equals the flat generator's."""
    monkeypatch.setattr(pieces, "SPLIT_MIN", 0)
    desc = Descriptor(corr05.build("corr05-4x1", levels))
    assert len(desc.layout.boxes) == desc.shape[0] and desc.layout.size == desc.space.size
    plan = desc._plan(False)
    local = [(p.boxes, p.factors[0][0]) for p in plan.pieces if p.src is p.dst and len(p.factors) == 1]
    assert len(local) == len(set(local)) == sum(n > 1 for b in plan.boxes for n in b.shape[1:])
    idx = desc.space.linear()
    x = np.random.default_rng(11).random(len(idx))
    expected = flat_generator(desc.san)[idx][:, idx].T @ x
    assert np.abs(desc.matvec(x) - expected).max() < 1e-12 * np.abs(expected).max()
    assert np.abs(_reachable_product(desc, x, Plan(desc.terms, desc.corrector, plan.boxes, merge=False))
                  - expected).max() < 1e-12 * np.abs(expected).max()


def test_reachable_set_and_restricted_product(models):
    rng = np.random.default_rng(8)
    for san, q in models:
        desc = Descriptor(san)
        offdiag = q - sp.diags_array(q.diagonal())
        offdiag.eliminate_zeros()
        expected = np.sort(csgraph.breadth_first_order(offdiag, desc.initial, return_predecessors=False))
        assert np.array_equal(desc.space.linear(), expected)
        sub = q[expected][:, expected]
        x = rng.random(len(expected))
        assert np.abs(desc.matvec(x) - sub.T @ x).max() < 1e-12


def test_descriptor_keeps_factors_small():
    san = random_san(3)
    desc = Descriptor(san)
    assert all(f.matrix.shape[0] <= 4 for t in desc.terms for f in t.factors)
    assert all(len(t.factors) <= 3 for t in desc.terms)


# -- transient ---------------------------------------------------------------------------------
def test_poisson_window_tails_and_weights():
    for lam, eps in ((0.3, 1e-12), (40.0, 1e-10), (2500.0, 1e-8)):
        left, w, omitted = poisson_window(lam, eps)
        assert omitted <= eps
        assert abs(w.sum() + omitted - 1) < 1e-12
        n = left + np.argmax(w)
        assert w.max() == pytest.approx(math.exp(n * math.log(lam) - lam - math.lgamma(n + 1)), rel=1e-11)


def test_transient_equals_expm_multiply_within_bound(models):
    times = np.array([0.0, 0.25, 0.5, 1.0, 2.0])
    for san, q in models[:10]:
        desc = Descriptor(san)
        sol = transient(desc, times, eps=1e-9)
        sub = q[desc.space.linear()][:, desc.space.linear()]
        for t, pi, bound, mass in zip(times, sol.probabilities, sol.bound, sol.mass):
            exact = sla.expm_multiply(sub.T * t, desc.initial_vector())
            # expm_multiply is itself accurate to about machine precision, hence the 1e-13
            assert np.abs(pi - exact).sum() <= bound + 1e-13
            assert abs(mass - 1) <= 1e-9 and bound <= 1e-9


def _erlang(k: int, lam: float) -> San:
    """Phases 0..k-1 of one automaton; the last phase ends by synchronizing with ``Done``."""
    san = San(params={"lam": lam})
    san.automaton("Phase", [*(f"p{i}" for i in range(k)), "end"]).automaton("Done", ["No", "Yes"])
    for i in range(k - 1):
        san.local("Phase", f"p{i}", f"p{i + 1}", Rate("lam"))
    san.sync("finish", lam, {"Phase": [(f"p{k - 1}", "end")], "Done": [("No", "Yes")]})
    return san


def test_erlang_absorption_cdf():
    k, lam = 4, 1.7
    desc = Descriptor(_erlang(k, lam))
    times = np.linspace(0, 6, 13)
    sol = transient(desc, times, eps=1e-12, measures={"done": reward_vector(desc, "Done == Yes")}, keep=False)
    exact = [1 - sum(math.exp(-lam * t) * (lam * t) ** n / math.factorial(n) for n in range(k)) for t in times]
    assert np.abs(sol.measures["done"] - exact).max() < 1e-10
    assert np.abs(sol.mass - 1).max() < 1e-9


def test_hypoexponential_cdf_with_functional_rates():
    rates = [0.5, 1.3, 2.2]
    san = San()
    for i, r in enumerate(rates):
        san.automaton(f"S{i}", ["Wait", "Done"])
        san.local(f"S{i}", "Wait", "Done", r if i == 0 else Rate(f"{r} * (S{i - 1} == Done)"))
    desc = Descriptor(san)
    assert desc.space.size == len(rates) + 1  # only the prefixes of the sequence are reachable
    times = np.linspace(0, 8, 17)
    sol = transient(desc, times, eps=1e-12, measures={"cdf": reward_vector(desc, "S2 == Done")})
    coef = [math.prod(rj / (rj - ri) for rj in rates if rj != ri) for ri in rates]
    exact = [1 - sum(c * math.exp(-r * t) for c, r in zip(coef, rates)) for t in times]
    assert np.abs(sol.measures["cdf"] - exact).max() < 1e-10


def test_two_state_chain_and_uneven_grid():
    a, b = 0.7, 0.2
    san = San().automaton("M", ["Up", "Down"])
    san.local("M", "Up", "Down", a).local("M", "Down", "Up", b)
    desc = Descriptor(san)
    times = np.array([0, 0.01, 0.01, 0.5, 3, 3.001, 40])
    sol = transient(desc, times, eps=1e-12)
    exact = a / (a + b) * (1 - np.exp(-(a + b) * times))
    assert np.abs(sol.probabilities[:, 1] - exact).max() < 1e-10
    assert np.all(np.diff(sol.bound) >= 0) and sol.bound[-1] <= 1e-12


# -- steady state ------------------------------------------------------------------------------
def _flat_steady(q: sp.csr_array) -> np.ndarray:
    a = q.toarray().T
    a[0] = 1
    b = np.zeros(len(a))
    b[0] = 1
    return np.linalg.solve(a, b)


@pytest.mark.parametrize("method", ["power", "gmres"])
def test_steady_state_equals_flat_solution(root, method):
    san = load_san(root / EXAMPLE)
    desc = Descriptor(san)
    q = flat_generator(san)
    idx = desc.space.linear()
    exact = _flat_steady(q[idx][:, idx])
    ss = steady_state(desc, method=method, tol=1e-12)
    assert ss.converged and ss.residual <= 1e-12
    assert np.abs(ss.pi - exact).max() < 1e-9


@pytest.mark.parametrize("method", ["power", "gmres"])
def test_birth_death_closed_form(method):
    """M/M/c/K as one automaton with a functional service rate."""
    lam, mu, c, cap = 2.0, 0.8, 3, 12
    san = San(params={"lam": lam, "mu": mu, "c": c})
    san.automaton("Q", [str(n) for n in range(cap + 1)])
    for n in range(cap):
        san.local("Q", str(n), str(n + 1), Rate("lam"))
        san.local("Q", str(n + 1), str(n), Rate("mu * min(Q, c)"))
    desc = Descriptor(san)
    ss = steady_state(desc, method=method, tol=1e-13)
    weights = np.cumprod([1.0] + [lam / (mu * min(n, c)) for n in range(1, cap + 1)])
    assert np.abs(ss.pi - weights / weights.sum()).max() < 1e-10
    assert abs(expectation(desc, ss.pi, "Q") - (np.arange(cap + 1) @ weights) / weights.sum()) < 1e-9


def test_gmres_refuses_a_reducible_chain_and_power_finds_the_limit():
    desc = Descriptor(_erlang(2, 1.0))
    with pytest.raises(SanError, match="not irreducible"):
        steady_state(desc, method="gmres")
    ss = steady_state(desc, method="power", tol=1e-11)
    assert ss.converged and probability(desc, ss.pi, "Done == Yes") > 1 - 1e-10


# -- measures and expressions ------------------------------------------------------------------
def test_measures_expression_and_callable_agree(root):
    desc = Descriptor(load_san(root / EXAMPLE))
    pi = steady_state(desc, tol=1e-12).pi
    assert probability(desc, pi, "Cpu1 == Busy and Queue >= 2") == pytest.approx(
        probability(desc, pi, lambda s: s["Cpu1"] == "Busy" and int(s["Queue"]) >= 2), abs=1e-14)
    assert expectation(desc, pi, "count(Cpu*, Busy)") == pytest.approx(
        expectation(desc, pi, lambda s: (s["Cpu1"] == "Busy") + (s["Cpu2"] == "Busy")), abs=1e-14)


def test_expression_language():
    automata = {"Cpu1": ["Idle", "Busy"], "Cpu2": ["Idle", "Busy"], "Q": ["0", "1", "2"]}
    expr = compile_expr("mu * min(Q, 2) / max(1, count(Cpu*, Busy)) + (Cpu1 == Busy and not Cpu2 != Idle)",
                        automata, {"mu": 2.0})
    local = [np.array([0, 1, 1]), np.array([0, 1, 0]), np.array([2, 1, 0])]
    assert expr(lambda k: local[k]).tolist() == [4.0, 1.0, 1.0]
    assert expr.depends == {0, 1, 2}
    assert compile_expr("-(1 - 2) * 3 >= 3 or 0", automata, {})(None) == 1.0
    for bad, message in (("Cpu1 == Bsy", "unknown state 'Bsy'"), ("foo + 1", "unknown name 'foo'"),
                         ("1 +", "expected a number"), ("count(X*, Busy)", "no automaton matches"),
                         ("__import__('os')", "unexpected character"), ("sqrt(2)", "unknown function"),
                         ("(1", "expected ')'")):
        with pytest.raises(ExprError, match=re.escape(message)):
            compile_expr(bad, automata, {})


# -- bad models --------------------------------------------------------------------------------
def test_python_api_rejects_bad_models():
    san = San().automaton("A", ["x", "y"])
    with pytest.raises(SanError, match="missing automaton 'B'"):
        san.sync("s", 1.0, {"A": [("x", "y")], "B": [("x", "y")]})
    with pytest.raises(SanError, match="non-negative"):
        san.local("A", "x", "y", -1.0)
    with pytest.raises(SanError, match="non-negative"):
        san.local("A", "x", "y", float("nan"))
    with pytest.raises(SanError, match="duplicate automaton"):
        san.automaton("A", ["z"])
    with pytest.raises(SanError, match="duplicate state"):
        san.automaton("B", ["z", "z"])
    san.local("A", "x", "y", Rate("2 * (A == z)"), name="bad")
    with pytest.raises(SanError, match="event 'bad': unknown state 'z' of automaton 'A'"):
        Descriptor(san)
    with pytest.raises(SanError, match="duplicate event name"):
        san.local("A", "y", "x", 1.0, name="bad")


def test_a_model_above_the_product_cap_is_refused_from_the_automata_sizes(tmp_path, capsys):
    """Two automata of 65,536 states: 65,536^2 = 2^32 = 4.29e9 product states, above the cap of
    2^31 = 2.15e9, refused as the second is added, before its states are compared. Once the
    duplicate-state check compared every name with every other (4.3e9 comparisons an automaton)
    and refused nothing: ten minutes later it was still comparing. From a model file, `simcore
    san` exits 2 with one sentence naming the file, the key and the sizes."""
    from simcore.cli import main

    states = [f"s{i}" for i in range(65_536)]
    san = San().automaton("A", states)
    with pytest.raises(SanError, match=r"automaton 'B': automata of 65,536 x 65,536 states make a product "
                                       r"space of 4\.29e\+09 states, above the limit of 2\.15e\+09\.$"):
        san.automaton("B", states)
    path, out = tmp_path / "big.yaml", tmp_path / "out.csv"
    path.write_text(f"automata:\n  A: [{', '.join(states)}]\n  B: [{', '.join(states)}]\n")
    assert main(["san", str(path), "--times", "0:1:1", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"simcore: error: {path}: key 'automata.B': automata of 65,536 x 65,536 "
                                       "states make a product space of 4.29e+09 states, above the limit of 2.15e+09.\n")
    assert not out.exists()


def test_functional_rate_negative_in_a_reachable_state():
    san = San().automaton("A", ["x", "y", "z"]).local("A", "x", "y", 1.0)
    san.local("A", "y", "z", Rate("1 - 2 * (A == y)"), name="down")
    with pytest.raises(SanError, match=r"event 'down': functional rate is -1 in reachable state \(A=y\)"):
        Descriptor(san)


BAD = {
    "unknown state in a function": (
        "local:\n  - {automaton: Cpu, from: Idle, to: Busy, rate: 'lam * (Cpu == Bsy)'}\n",
        "key 'local[0].rate': unknown state 'Bsy' of automaton 'Cpu'"),
    "unknown automaton in a function": (
        "local:\n  - {automaton: Cpu, from: Idle, to: Busy, rate: 'lam * (Disk == Busy)'}\n",
        "key 'local[0].rate': unknown name 'Disk' (not a parameter or an automaton)"),
    "sync naming a missing automaton": (
        "synchronizing:\n  - {name: go, rate: 1, transitions: {Cpu: [[Idle, Busy]], Disk: [[a, b]]}}\n",
        "key 'synchronizing[0]': names a missing automaton 'Disk'"),
    "negative rate": (
        "local:\n  - {automaton: Cpu, from: Idle, to: Busy, rate: -2}\n",
        "key 'local[0]': rate must be a non-negative finite number"),
    "negative parameter rate": (
        "parameters: {neg: -1}\nlocal:\n  - {automaton: Cpu, from: Idle, to: Busy, rate: neg}\n",
        "key 'local[0]': rate 'neg' is -1"),
    "unknown key": ("locals: []\n", "key 'locals' is unknown"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_yaml_models_fail_clearly_and_cli_exits_2(case, tmp_path, simcore_cli):
    body, message = BAD[case]
    path = tmp_path / "bad.yaml"
    path.write_text("parameters: {lam: 1.0}\nautomata:\n  Cpu: [Idle, Busy]\n" + body
                    if not body.startswith("parameters") else "automata:\n  Cpu: [Idle, Busy]\n" + body)
    with pytest.raises(SanError) as err:
        Descriptor(load_san(path))
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)
    assert str(err.value).count(". ") == 0  # one sentence
    out = tmp_path / "out.csv"
    proc = simcore_cli("san", path, "--times", "0:1:0.5", "--out", out)
    assert proc.returncode == 2 and message in proc.stderr and not out.exists()


# -- CLI ---------------------------------------------------------------------------------------
def test_cli_writes_measures_mass_and_bound(simcore_cli, tmp_path, root):
    out = tmp_path / "san.csv"
    proc = simcore_cli("san", EXAMPLE, "--times", "0:2:0.5", "--out", out, "--steady",
                       "--measure", "down=count(Cpu*, Down)")
    assert proc.returncode == 0, proc.stderr
    rows = [line.split(",") for line in out.read_text().splitlines()]
    assert rows[0] == ["time", "busy", "full", "waiting", "down", "mass", "error_bound"]
    assert [r[0] for r in rows[1:]] == ["0", "0.5", "1", "1.5", "2", "inf"]
    values = np.array([[float(v) for v in r] for r in rows[1:]])
    assert np.abs(values[:, -2] - 1).max() < 1e-9 and values[:-1, -1].max() <= 1e-10
    desc = Descriptor(load_san(root / EXAMPLE))
    sol = transient(desc, [2.0], measures={"busy": reward_vector(desc, "count(Cpu*, Busy)")})
    assert values[4, 1] == pytest.approx(sol.measures["busy"][0], abs=1e-10)
    assert simcore_cli("san", EXAMPLE, "--times", "1:0:1", "--out", out).returncode == 2
    assert simcore_cli("san", EXAMPLE, "--out", out, "--measure", "x=Cpu1 == Nope").returncode == 2


# -- Krylov transient --------------------------------------------------------------------------
def test_krylov_equals_expm_multiply_within_its_estimate(models):
    times = np.array([0.0, 0.3, 1.0, 2.5])
    for san, q in models[:10]:
        desc = Descriptor(san)
        sol = transient_krylov(desc, times, tol=1e-10, keep=True, m=8)
        sub = q[desc.space.linear()][:, desc.space.linear()]
        for t, pi, estimate in zip(times, sol.probabilities, sol.bound):
            exact = sla.expm_multiply(sub.T * t, desc.initial_vector())
            assert np.abs(pi - exact).sum() <= max(10 * estimate, 1e-9)
        assert np.abs(sol.mass - 1).max() < 1e-9


def test_krylov_closed_forms_and_breakdown():
    k, lam = 4, 1.7
    desc = Descriptor(_erlang(k, lam))       # 5 reachable states: the basis becomes invariant
    times = np.linspace(0, 6, 13)
    sol = transient_krylov(desc, times, tol=1e-12, measures={"done": reward_vector(desc, "Done == Yes")})
    exact = [1 - sum(math.exp(-lam * t) * (lam * t) ** n / math.factorial(n) for n in range(k)) for t in times]
    assert np.abs(sol.measures["done"] - exact).max() < 1e-10
    a, b = 0.7, 0.2
    two = San().automaton("M", ["Up", "Down"])
    two.local("M", "Up", "Down", a).local("M", "Down", "Up", b)
    grid = np.array([0, 0.01, 0.01, 0.5, 3, 40])
    sol = transient_krylov(Descriptor(two), grid, tol=1e-12, keep=True)
    assert np.abs(sol.probabilities[:, 1] - a / (a + b) * (1 - np.exp(-(a + b) * grid))).max() < 1e-10


def test_krylov_takes_far_fewer_products_than_uniformization_on_a_stiff_model():
    """Fast cycles (rate 500) next to a slow absorption (rate 0.05): the Krylov steps follow the slow part."""
    san = San()
    for i in range(3):
        san.automaton(f"F{i}", ["a", "b"]).local(f"F{i}", "a", "b", 500.0).local(f"F{i}", "b", "a", 300.0)
    san.automaton("Slow", ["On", "Off"]).local("Slow", "On", "Off", Rate("0.05 * (1 + (F0 == b))"))
    desc = Descriptor(san)
    times = np.array([0.0, 1.0, 10.0, 30.0])
    reward = {"off": reward_vector(desc, "Slow == Off")}
    kry = transient_krylov(desc, times, tol=1e-9, measures=reward)
    uni = transient(desc, times, eps=1e-10, measures=reward, keep=False)
    assert np.abs(kry.measures["off"] - uni.measures["off"]).max() < 1e-7
    assert kry.products * 5 < uni.products


# -- pruning -----------------------------------------------------------------------------------
def test_unreachable_trailing_states_leave_the_product_space():
    san = San(params={"fail": 0.0})
    san.automaton("Cpu", ["Idle", "Busy", "Down"]).automaton("Job", ["Wait", "Done"])
    san.local("Cpu", "Idle", "Busy", 1.0).local("Cpu", "Busy", "Idle", 2.0).local("Cpu", "Busy", "Down", 0.0)
    san.sync("finish", 0.5, {"Cpu": [("Busy", "Idle")], "Job": [("Wait", "Done")]})
    desc = Descriptor(san)
    assert desc.shape == (2, 2) and desc.space.product == 4
    flat = flat_generator(san)                                 # the unpruned model, built independently
    idx = [0, 1, 2, 3]                                          # its states with Cpu != Down
    times = np.array([0.0, 0.7, 3.0])
    sol = transient(desc, times, eps=1e-12)
    for t, pi in zip(times, sol.probabilities):
        exact = sla.expm_multiply(flat[idx][:, idx].T * t, np.eye(4)[0])
        assert np.abs(desc.space.scatter(pi) - exact).max() < 1e-10
    assert reward_vector(desc, "Cpu == Down").sum() == 0        # measures may still name the state
    named = San().automaton("A", ["x", "y", "z"]).automaton("B", ["u", "v"])
    named.local("A", "x", "y", 1.0).local("B", "u", "v", Rate("1 + (A == z)"))
    assert Descriptor(named).shape == (3, 2)                    # 'z' is named in an expression: kept
    middle = San().automaton("A", ["x", "never", "y"]).local("A", "x", "y", 1.0)
    assert Descriptor(middle).shape == (3,)                     # only a suffix goes: indices keep meaning


@pytest.mark.parametrize("solve", [
    lambda desc: transient(desc, [0.5, 1.0], keep=False),
    lambda desc: transient_krylov(desc, [0.5, 1.0]),
    lambda desc: steady_state(desc, method="gmres"),
], ids=["uniformization", "krylov", "gmres"])
def test_every_solver_runs_blas_on_one_thread_whatever_the_caller_set(solve, monkeypatch):
    """OpenBLAS shares a product among its threads in ways that change the last bits (the full
    corr05 Figure 8 solution moved in its 10th digit from 1 to 2 threads): each product of a
    solve sees one BLAS thread, also when the caller allowed two."""
    from threadpoolctl import threadpool_info, threadpool_limits
    desc = Descriptor(load_san(EXAMPLE))
    seen, product = [], Descriptor.matvec

    def counting(self, x, out=None):
        seen.append({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
        return product(self, x, out)

    monkeypatch.setattr(Descriptor, "matvec", counting)
    with threadpool_limits(limits=2, user_api="blas"):
        assert {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"} == {2}
        solve(desc)
    assert seen and all(threads == {1} for threads in seen)
