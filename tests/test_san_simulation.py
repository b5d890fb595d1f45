"""The SimPy simulation of a SAN agrees with the numerical transient solution (cross-validation)."""

import math

import numpy as np
import pytest
import simpy
from test_san import random_san

from simcore.san import Descriptor, Rate, San, load_san, reward_vector, transient
from simcore.san.corr05 import build
from simcore.san.simulate import _Model, _Walker, simulate, trajectories
from simcore.stats import mean_interval

TIMES = [0.0, 0.25, 0.5, 1.0, 2.0]


def _covered(sim: dict, exact: dict, names) -> float:
    """Share of (time, measure) points whose simulated interval holds the exact value."""
    hits = [sim[f"{m}_low"][i] - 1e-12 <= exact[m][i] <= sim[f"{m}_high"][i] + 1e-12
            for m in names for i in range(len(TIMES))]
    return float(np.mean(hits))


def _exact(san, measures):
    desc = Descriptor(san)
    sol = transient(desc, TIMES, measures={m: reward_vector(desc, text) for m, text in measures.items()})
    return {m: sol.measures[m] for m in measures}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simulation_matches_the_transient_solution(seed):
    """Every automaton's level and one indicator, simulated 400 times, lie within 4 standard errors
    of the exact mean at every time, the standard error from the exact variance E[r^2] - E[r]^2
    (a 4-sigma miss has probability 6e-5 per point under the central limit theorem)."""
    san = random_san(seed)
    first = list(san.automata)[0]
    measures = {"first_in_s0": f"{first} == s0", **{f"level_{a}": a for a in san.automata}}
    desc = Descriptor(san)
    rewards = {m: reward_vector(desc, text) for m, text in measures.items()}
    sol = transient(desc, TIMES, measures={**rewards, **{f"{m}^2": r**2 for m, r in rewards.items()}})
    sim = simulate(san, TIMES, measures, reps=400, seed=seed, confidence=0.99)
    assert sim["first_in_s0"][0] == sol.measures["first_in_s0"][0]     # time 0: the initial state
    moving = 0
    for m in measures:
        mean, second = np.array(sol.measures[m]), np.array(sol.measures[f"{m}^2"])
        se = np.sqrt(np.maximum(second - mean**2, 0) / 400)
        assert (abs(np.array(sim[m]) - mean) <= 4 * se + 1e-9).all(), (m, sim[m], mean)
        moving += np.ptp(mean) > 0.05
    assert moving >= 1  # the scenario moves, so a wrong simulator could be caught


def test_simulation_is_reproducible_and_covers_the_exact_curve(root):
    san = load_san(root / "config/san/example.yaml")
    a = simulate(san, TIMES, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"}, reps=30, seed=7)
    b = simulate(san, TIMES, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"}, reps=30, seed=7)
    assert a == b
    exact = _exact(san, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"})
    sim = simulate(san, TIMES, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"}, reps=600, seed=3, confidence=0.99)
    assert _covered(sim, exact, ["busy", "waiting"]) >= 0.9  # at most 2 of 20 points, as above


def test_cli_simulate_writes_intervals_beside_the_solution(simcore_cli, tmp_path):
    import pandas as pd

    sim, exact = tmp_path / "sim.csv", tmp_path / "exact.csv"
    assert simcore_cli("san", "config/san/example.yaml", "--times", "0:2:0.5", "--simulate", "300",
                       "--seed", "5", "--out", sim).returncode == 0
    assert simcore_cli("san", "config/san/example.yaml", "--times", "0:2:0.5", "--out", exact).returncode == 0
    s, e = pd.read_csv(sim), pd.read_csv(exact)
    assert list(s.columns[:4]) == ["time", "busy", "busy_low", "busy_high"]
    assert ((s.busy_low - 1e-9 <= e.busy) & (e.busy <= s.busy_high + 1e-9)).mean() >= 0.6
    bad = simcore_cli(
        "san", "config/san/example.yaml", "--times", "0:1:1", "--simulate", "1", "--out", tmp_path / "x.csv"
    )
    assert bad.returncode == 2 and not (tmp_path / "x.csv").exists()


def test_report_sets_solution_beside_simulation(simcore_cli, tmp_path):
    """`simcore san-figure` and `san-report` read results/san/<model>/; the table's numbers are computed."""
    from simcore.report.san import agreement, read_pair

    folder = tmp_path / "example"
    for extra in ([], ["--simulate", "200", "--seed", "1"]):
        name = "simulation.csv" if extra else "solution.csv"
        assert simcore_cli("san", "config/san/example.yaml", "--times", "0:4:1", *extra,
                           "--out", folder / name).returncode == 0
    table = agreement(*read_pair(tmp_path, "example"))
    assert set(table.measure) == {"busy", "full", "waiting"} and (table.covered >= 0.6).all()
    assert simcore_cli("san-report", "--results", tmp_path, "--out", tmp_path / "san.tex").returncode == 0
    tex = (tmp_path / "san.tex").read_text()
    assert "\\texttt{example}" in tex and f"{table.max_abs_diff[0]:.3g}" in tex
    for out in ("a.pdf", "b.pdf"):
        assert simcore_cli("san-figure", "example", "--results", tmp_path, "--out", tmp_path / out).returncode == 0
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
    (folder / "simulation.csv").unlink()
    missing = simcore_cli("san-figure", "example", "--results", tmp_path, "--out", tmp_path / "c.pdf")
    assert missing.returncode == 2 and "simulation.csv" in missing.stderr and not (tmp_path / "c.pdf").exists()


# -- the fast walker against a naive one, batches, early stop ------------------------------------
def _naive(san: San, times, seed: int, r: int) -> np.ndarray:
    """Reference walker: every event's rate recomputed in full at every step, uniforms drawn one
    at a time in the simulator's order (time, event, each participant with several moves);
    returns each automaton's local state index at ``times``."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(r,))))
    names = list(san.automata)
    state = list(san.initial_state())
    rates_of = [san.compile(e.rate.text, "t") if isinstance(e.rate, Rate) else None for e in san.events]
    out, t, filled = np.zeros((len(times), len(names))), 0.0, 0

    def arcs(event, auto):
        st = san.automata[auto]
        return [(st.index(d), p) for s, d, p in event.moves[auto] if st.index(s) == state[names.index(auto)]]

    while True:
        rates = []
        for event, fn in zip(san.events, rates_of):
            rate = float(fn(lambda k: np.asarray(state[k]))) if fn else event.rate
            for auto in event.moves:
                rate *= sum(p for _, p in arcs(event, auto))
            rates.append(rate)
        cum = [sum(rates[:i + 1]) for i in range(len(rates))]
        total = cum[-1]
        nxt = t - math.log1p(-rng.random()) / total if total > 0 else math.inf
        while filled < len(times) and times[filled] < nxt:
            out[filled], filled = state, filled + 1
        if nxt > times[-1]:
            return out
        t, x = nxt, rng.random() * total
        event = san.events[next(i for i, c in enumerate(cum) if c > x)]
        for auto in event.moves:
            moves = arcs(event, auto)
            if len(moves) > 1:
                y, acc = rng.random() * sum(p for _, p in moves), 0.0
                moves = [m for m in moves if (acc := acc + m[1]) > y]
            state[names.index(auto)] = moves[0][0]


@pytest.mark.parametrize("model", ["random", "corr05"])
def test_cached_rates_walk_the_same_path_as_full_recomputation(model):
    sans = [random_san(s) for s in range(8)] if model == "random" else [build("corr05-4x1", "2")]
    times, moves = np.linspace(0, 3 if model == "random" else 0.3, 301), 0
    for seed, san in enumerate(sans):
        levels = {name: name for name in san.automata}            # each automaton's state index
        fast = trajectories(san, times, levels, reps=3, seed=seed, stop_early=False)
        for r in range(3):
            np.testing.assert_array_equal(fast[r], _naive(san, times, seed, r))
        moves += (np.diff(fast, axis=1) != 0).any(axis=2).sum()
    assert moves > 50                                              # the paths really move


def test_batches_concatenate_to_one_run():
    san = random_san(2)
    measures = {"first_in_s0": "A0 == s0", "level": "A1"}
    whole = trajectories(san, TIMES, measures, reps=6, seed=9)
    parts = [trajectories(san, TIMES, measures, reps=3, seed=9, first=f) for f in (0, 3)]
    np.testing.assert_array_equal(whole, np.concatenate(parts))
    sim = simulate(san, TIMES, measures, reps=6, seed=9)
    for j, name in enumerate(measures):
        assert sim[name] == [mean_interval(whole[:, i, j]).mean for i in range(len(TIMES))]
        assert sim[f"{name}_high"] == [mean_interval(whole[:, i, j]).high for i in range(len(TIMES))]
    assert simulate(san, TIMES, measures, reps=3, seed=9, first=3)["level"] == \
        [mean_interval(parts[1][:, i, 1]).mean for i in range(len(TIMES))]
    assert not np.array_equal(parts[0], parts[1])


def _finishing() -> San:
    """P runs, waits and finishes (absorbing) while a CPU keeps switching."""
    san = San(params={"io": 3.0})
    san.automaton("P", ["Run", "Io", "Done"]).automaton("Cpu", ["A", "B"])
    san.local("P", "Run", "Io", 2.0).local("P", "Io", "Run", Rate("io * (Cpu == A)"))
    san.sync("end", 1.0, {"P": [("Run", "Done")], "Cpu": [("A", "B", 0.5), ("A", "A", 0.5)]})
    san.local("Cpu", "A", "B", 4.0).local("Cpu", "B", "A", 5.0)
    san.local("P", "Done", "Run", 0.0)                              # constantly zero: no way out
    return san


@pytest.mark.parametrize("measures", [{"done": "P == Done", "p": "P"}, {"both": "P == Done and Cpu == A"}])
def test_early_stop_changes_no_value(measures):
    san, times = _finishing(), np.linspace(0, 20, 41)
    stopped = trajectories(san, times, measures, reps=20, seed=4)
    full = trajectories(san, times, measures, reps=20, seed=4, stop_early=False)
    np.testing.assert_array_equal(stopped, full)
    assert 0 < full[:, -1, 0].mean()
    corr = build("corr05-4x1", "2")
    t = np.array([0, 0.5, 1, 2, 5, 10, 30.0])
    np.testing.assert_array_equal(trajectories(corr, t, {"f": "Proc == En"}, 3, seed=2),
                                  trajectories(corr, t, {"f": "Proc == En"}, 3, seed=2, stop_early=False))


def _end_time(san: San, measures: dict, stop_early: bool) -> float:
    walker = _Walker(_Model(san, measures), np.array([0.0, 50.0]), np.random.default_rng(1), stop_early)
    env = simpy.Environment()
    env.process(walker.run(env))
    env.run()
    return env.now


def test_early_stop_happens_only_when_every_measured_automaton_is_stuck():
    san = _finishing()
    assert _end_time(san, {"done": "P == Done"}, True) < 10 < 50 < _end_time(san, {"done": "P == Done"}, False)
    assert _end_time(san, {"both": "P == Done and Cpu == A"}, True) > 50      # Cpu never settles
