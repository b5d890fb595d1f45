"""The SimPy simulation of a SAN agrees with the numerical transient solution (cross-validation)."""

import numpy as np
import pytest

from simcore.san import Descriptor, load_san, reward_vector, transient
from simcore.san.simulate import simulate
from test_san import random_san

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


@pytest.mark.parametrize("seed", [1, 4])
def test_simulation_matches_the_transient_solution(seed):
    san = random_san(seed)
    first = list(san.automata)[0]
    measures = {"first_in_s0": f"{first} == s0", "level": first}
    exact = _exact(san, measures)
    sim = simulate(san, TIMES, measures, reps=400, seed=seed, confidence=0.99)
    assert sim["first_in_s0"][0] == exact["first_in_s0"][0]            # time 0: the initial state
    assert _covered(sim, exact, measures) >= 0.8                        # 99% intervals, 10 points
    assert max(abs(np.array(sim[m]) - exact[m]).max() for m in measures) < 0.15


def test_simulation_is_reproducible_and_covers_the_exact_curve(root):
    san = load_san(root / "config/san/example.yaml")
    a = simulate(san, TIMES, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"}, reps=30, seed=7)
    b = simulate(san, TIMES, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"}, reps=30, seed=7)
    assert a == b
    exact = _exact(san, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"})
    sim = simulate(san, TIMES, {"busy": "count(Cpu*, Busy)", "waiting": "Queue"}, reps=600, seed=3, confidence=0.99)
    assert _covered(sim, exact, ["busy", "waiting"]) >= 0.8


def test_cli_simulate_writes_intervals_beside_the_solution(simcore_cli, tmp_path):
    import pandas as pd

    sim, exact = tmp_path / "sim.csv", tmp_path / "exact.csv"
    assert simcore_cli("san", "config/san/example.yaml", "--times", "0:2:0.5", "--simulate", "300",
                       "--seed", "5", "--out", sim).returncode == 0
    assert simcore_cli("san", "config/san/example.yaml", "--times", "0:2:0.5", "--out", exact).returncode == 0
    s, e = pd.read_csv(sim), pd.read_csv(exact)
    assert list(s.columns[:4]) == ["time", "busy", "busy_low", "busy_high"]
    assert ((s.busy_low - 1e-9 <= e.busy) & (e.busy <= s.busy_high + 1e-9)).mean() >= 0.6
    bad = simcore_cli("san", "config/san/example.yaml", "--times", "0:1:1", "--simulate", "1", "--out", tmp_path / "x.csv")
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
