"""The reconstructed corr05 SAN (Figure 8): structure as the paper states it, rates derived from the
same sched domains as the NUMA simulator, the Krylov solution against uniformization, the fit and
the comparison with the published curve, and clear errors for bad model files."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from simcore.errors import InputError
from simcore.san import Descriptor, SanError, load_san, reward_vector, transient
from simcore.san.corr05 import CPU_STATES, PARAMETERS, build, other_run
from simcore.san.fit import fit
from simcore.san.solve import transient_krylov
from simcore.topology.domains import domains_for
from simcore.topology.loader import load_topology

FIG8 = "config/san/corr05-fig8-{}.yaml"


def _rate(san, name):
    return next(e.rate for e in san.events if e.name == name)


def test_automata_and_states_are_the_papers():
    san = build("corr05-4x2", "2")
    assert list(san.automata) == ["Proc", *(f"Cpu{i}" for i in range(8))]
    assert set(san.automata["Proc"]) == {f"{s}{i}" for s in ("R", "Ep", "Ex", "IO") for i in range(8)} | {"En"}
    assert all(san.automata[f"Cpu{i}"] == CPU_STATES for i in range(8))
    assert set(CPU_STATES) == {"IB", "Sc", "PB", "EN", "Ex", "Er"}
    # failure rate 0: Er is unreachable and leaves the product space; a positive rate keeps it
    assert Descriptor(build("corr05-4x1", "2")).shape == (17, 5, 5, 5, 5)
    assert Descriptor(build("corr05-4x1", "2", {"failure": 0.01})).shape == (17, 6, 6, 6, 6)


@pytest.mark.parametrize("levels, builder", [("2", "linux-2level"), ("n", "multilevel")])
def test_balancing_rates_come_from_the_simulators_sched_domains(levels, builder):
    """Under the child-spans reading of a node level's groups (the per-node one: test_node_groups)."""
    san = build("corr05-4x2", levels, node_groups="child-spans")
    doms = domains_for(load_topology("corr05-4x2"), builder, node_groups="child-spans")
    for i in range(8):
        busy = sum(1000 / (d.min_interval * d.busy_factor) for d in doms[i])
        assert _rate(san, f"balance{i}") == pytest.approx(busy, rel=1e-12)
    # CPU 0 pulls P from its node sibling at the CPU level only, and from other nodes per node level
    p = {k: v.value for k, v in PARAMETERS.items()}
    kernel, moved = 1 / p["kernel_path"], p["imbalance_found"] / p["movable_tasks"]
    freqs = [1000 / (d.min_interval * d.busy_factor) for d in doms[0]]
    share = freqs[0] / sum(freqs)                       # the CPU level: one other group, one CPU
    assert _rate(san, "pull0_1") == pytest.approx(kernel * share * moved, rel=1e-12)
    pulls = sum(_rate(san, f"pull0_{j}") for j in range(2, 8))
    assert pulls == pytest.approx(kernel * (1 - share) * moved, rel=1e-12)   # every node level pulls someone
    # node 0 sits at the end of the line: with one level per distance each level reaches one more
    # node, so each remote node is pulled from by one level, as often as under the stock top level
    assert _rate(san, "pull0_2") == pytest.approx(_rate(san, "pull0_6"), rel=1e-12)
    node_levels = len(doms[0]) - 1
    assert node_levels == (3 if levels == "n" else 1)
    assert pulls / _rate(san, "pull0_1") == pytest.approx(node_levels * freqs[1] / freqs[0], rel=1e-12)


def test_remote_memory_slows_work_not_the_timeslice():
    san = build("corr05-4x2", "2")
    m = PARAMETERS["memory_stall_fraction"].value
    assert _rate(san, "end6") == pytest.approx(_rate(san, "end0") / (1 + m * (30 / 10 - 1)), rel=1e-12)
    assert _rate(san, "block2") == pytest.approx(_rate(san, "block1") / (1 + m * (22 / 10 - 1)), rel=1e-12)
    assert _rate(san, "expire6") == _rate(san, "expire0")
    # P(I/O before the slice ends) = 1 - exp(-slice / burst), as for an exponential burst and a fixed slice
    io, sl = _rate(san, "block0"), _rate(san, "expire0")
    assert io / (io + sl) == pytest.approx(1 - math.exp(-1), rel=1e-12)
    assert 0.02 < other_run() < 0.06


def test_krylov_solution_equals_uniformization_on_the_small_instance():
    san = build("corr05-4x1", "n")
    desc = Descriptor(san)
    times = np.array([0.0, 0.1, 0.5, 1.0, 2.0])
    reward = {"finished": reward_vector(desc, "Proc == En")}
    kry = transient_krylov(desc, times, tol=1e-9, measures=reward)
    uni = transient(desc, times, eps=1e-9, measures=reward, keep=False)
    assert np.abs(kry.measures["finished"] - uni.measures["finished"]).max() < 1e-7
    assert np.abs(kry.mass - 1).max() < 1e-7
    assert kry.products * 4 < uni.products


def test_finished_probability_is_a_distribution_function_and_kernel_path_is_a_nuisance():
    times = np.array([0.0, 1, 5, 10, 20])
    curves = []
    for path in (0.002, 0.01):
        desc = Descriptor(build("corr05-4x1", "2", {"kernel_path": path}))
        sol = transient_krylov(desc, times, tol=1e-8, measures={"f": reward_vector(desc, "Proc == En")})
        curves.append(sol.measures["f"])
    assert np.all(np.diff(curves[0]) > 0) and 0 < curves[0][-1] < 1
    assert np.abs(curves[0] - curves[1]).max() < 2e-3


def test_model_files_per_scale_and_published_curves():
    two, four = (load_san(FIG8.format(v), "smoke") for v in ("2sched", "4sched"))
    assert two.about["topology"] == "corr05-4x1" and two.about["builder"] == "linux-2level"
    assert four.about["builder"] == "multilevel"
    assert load_san(FIG8.format("2sched"), "full").about["topology"] == "corr05-4x2"
    for san in (two, four):
        pub = san.published
        assert pub["measure"] == "finished" and len(pub["time"]) == len(pub["value"]) == 16
        assert pub["value"][0] == 0 and 0.84 < pub["value"][-1] < 0.85
    assert four.published["value"][-1] - two.published["value"][-1] == pytest.approx(0.00822)


def test_fit_recovers_a_known_parameter(exponential_fit_model):
    """A two-state model whose 'published' curve is 1 - exp(-0.7 t): the fit finds 0.7."""
    result = fit(exponential_fit_model, "lam", 0.1, 5.0)
    assert result.value == pytest.approx(0.7, rel=2e-3) and result.rmse < 1e-3


def test_a_recorded_fit_is_taken_only_for_the_same_code_model_and_bounds(exponential_fit_model, tmp_path, monkeypatch):
    """--record stores the fit under a key of what it depends on; --cache takes it back without
    solving (the CSV names the date it was made); other bounds or an edited model file change the
    key and the fit is made again."""
    import pandas as pd

    from simcore.san import fit as fitting

    record, out = tmp_path / "fits.yaml", tmp_path / "fit.csv"
    fitting.fit_to_csv(exponential_fit_model, "lam", "0.1:5", out, record=record)
    made = pd.read_csv(out).iloc[0]
    assert made.value == pytest.approx(0.7, rel=2e-3) and pd.isna(made.computed)
    solved = []
    real_fit = fitting.fit
    monkeypatch.setattr(fitting, "fit", lambda *a, **k: solved.append(a) or real_fit(*a, **k))
    summary = fitting.fit_to_csv(exponential_fit_model, "lam", "0.1:5", out, cache=record)
    taken = pd.read_csv(out).iloc[0]
    assert solved == [] and "recorded in" in summary
    assert (taken.value, taken.rmse, taken.evaluations) == (made.value, made.rmse, made.evaluations)
    assert isinstance(taken.computed, str) and len(taken.computed) == 10   # an ISO date
    fitting.fit_to_csv(exponential_fit_model, "lam", "0.2:5", out, cache=record)
    assert len(solved) == 1
    exponential_fit_model.write_text(exponential_fit_model.read_text().replace("lam: 0.2", "lam: 0.3"))
    fitting.fit_to_csv(exponential_fit_model, "lam", "0.1:5", out, cache=record)
    assert len(solved) == 2


def test_a_fit_runs_none_of_the_files_its_key_leaves_out(exponential_fit_model, tmp_path):
    """``simcore san-fit`` in a fresh process imports none of the files ``fit_files`` leaves out
    (so a change to them cannot change a fit), and its key covers every SAN file it did import."""
    import subprocess
    import sys
    from pathlib import Path

    from simcore.experiments.fingerprint import NOT_IN_A_FIT, ROOT, fit_files

    code = ("import sys; from simcore.cli import main; "
            f"main(['san-fit', {str(exponential_fit_model)!r}, '--parameter', 'lam', '--bounds', '0.1:5', "
            f"'--out', {str(tmp_path / 'fit.csv')!r}]); "
            "print('\\n'.join(m.__file__ for m in list(sys.modules.values()) "
            "if (getattr(m, '__file__', None) or '').find('simcore') >= 0))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {Path(f).resolve() for f in done.stdout.split()}
    assert (tmp_path / "fit.csv").exists()
    assert not loaded & {ROOT / name for name in NOT_IN_A_FIT}
    san = {f for f in loaded if f.parent == ROOT / "san"}
    assert len(san) >= 6 and san <= set(fit_files())


def test_a_record_that_is_not_a_list_of_fits_is_one_sentence(exponential_fit_model, tmp_path):
    from simcore.san.fit import fit_to_csv

    bad = tmp_path / "fits.yaml"
    bad.write_text("key: 1\n")
    with pytest.raises(InputError, match=r"fits.yaml: expected a list of recorded fits, each with a 'key'"):
        fit_to_csv(exponential_fit_model, "lam", "0.1:5", tmp_path / "fit.csv", cache=bad)
    assert not (tmp_path / "fit.csv").exists()


BAD = {
    "unknown parameter": ("parameters: {expird_wait: 2}\n", "key 'parameters.expird_wait' is unknown"),
    "negative parameter": ("parameters: {io_wait: -1}\n", "parameters.io_wait = -1 is not a positive real"),
    "zero parameter": ("parameters: {demand: 0}\n", "parameters.demand = 0 is not a positive real"),
    "probability above 1": ("parameters: {pick: 1.5}\n", "parameters.pick = 1.5 is not a real in [0, 1]"),
    "bad levels": ("", "generator.levels = '3' is not '2' or 'n'", {"levels": "3"}),
    "bad home cpu": ("", "generator.home_cpu = 'abc' is not a non-negative integer", {"home_cpu": "abc"}),
    "bad node init": ("", "generator.node_init = 'sparc' is not 'ia64-2.6.12' or 'x86_64-2.6.12'",
                      {"node_init": "sparc"}),
    "bad node groups": ("", "generator.node_groups = 'per-cpu' is not 'per-node' or 'child-spans'",
                        {"node_groups": "per-cpu"}),
    "unknown topology": ("", "key 'generator.topology'", {"topology": "no-such-machine"}),
    "unknown generator key": ("", "key 'generator.cpus' is unknown", {"cpus": 4}),
    "per-scale without scale": ("", "key 'generator.topology' is given per scale",
                                {"topology": {"full": "corr05-4x2"}}),
    "bad fit": ("fit: {parameter: expired_wait}\n", "key 'bounds' is missing"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_model_files_fail_clearly_and_cli_exits_2(case, tmp_path, simcore_cli):
    body, message, *gen = BAD[case]
    generator = {"model": "corr05", "topology": "corr05-4x1", "levels": "2", **(gen[0] if gen else {})}
    path = tmp_path / "bad.yaml"
    text = "generator: {" + ", ".join(f"{k}: {v!r}" if not isinstance(v, dict) else f"{k}: {v}"
                                      for k, v in generator.items()) + "}\n" + body
    path.write_text(text.replace("'", '"'))
    with pytest.raises(SanError) as err:
        load_san(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)
    out = tmp_path / "out.csv"
    proc = simcore_cli("san", path, "--times", "0:1:0.5", "--out", out)
    assert proc.returncode == 2 and message in proc.stderr and not out.exists()


def test_compare_writes_table_macros_and_figure(tmp_path, simcore_cli):
    results = tmp_path / "san"
    for variant in ("2sched", "4sched"):
        name = f"corr05-fig8-{variant}"
        (results / name).mkdir(parents=True)
        san = load_san(FIG8.format(variant), "smoke")
        t, v = np.array(san.published["time"]), np.array(san.published["value"])
        sol = pd.DataFrame({"time": t, "finished": v + 0.01 * (t > 0), "away": 0.0, "mass": 1.0, "error_bound": 0.0})
        sol.to_csv(results / name / "solution.csv", index=False)
        sim = pd.DataFrame({"time": t, "finished": v, "finished_low": v - 0.02, "finished_high": v + 0.02,
                            "away": 0.0, "away_low": 0.0, "away_high": 0.0})
        sim.to_csv(results / name / "simulation.csv", index=False)
    tex, fig, claims = tmp_path / "fig8.tex", tmp_path / "fig8.pdf", tmp_path / "claims.csv"
    proc = simcore_cli("san-compare", "corr05-fig8-2sched", "corr05-fig8-4sched", "--scale", "smoke",
                       "--results", results, "--figure", fig, "--tex", tex, "--claims", claims)
    assert proc.returncode == 0, proc.stderr
    # both solutions are the published curves + 0.01: the difference at 30 s is the published
    # 0.84921 - 0.84099 = +0.00822 itself: reproduced, as an interval of zero width
    row = pd.read_csv(claims).iloc[0]
    assert (row.experiment, row.claim, row.policy, row.than) == (
        "corr05-fig8", "multilevel-finishes-more", "corr05-fig8-4sched", "corr05-fig8-2sched")
    assert row.published_effect == pytest.approx(0.00822) and row.estimate == pytest.approx(0.00822)
    assert row.ci_low == row.ci_high == row.estimate and row.verdict == "reproduced"
    text = tex.read_text()
    assert r"\newcommand{\SanFigSolA}{0.8510}" in text and r"\newcommand{\SanFigPubB}{0.8492}" in text
    assert r"\newcommand{\SanFigSimCoverA}{16 of 16}" in text and r"\SanFigTable" in text
    assert r"\newcommand{\SanFigMachineA}{corr05-4x1}" in text and "expired" in text
    assert r"\newcommand{\SanFigVerdict}{is reproduced (1 times the published size" in text
    assert fig.read_bytes()[:4] == b"%PDF"


@pytest.mark.parametrize("reproduced, phrase", [
    (0.0082, "is reproduced"),              # the published difference itself
    (0.0102, "is reproduced"),              # P = 0.0082 >= 0.0102 - 0.25 x 0.0082 = 0.00815
    (0.0103, "is larger than published"),   # 0.0103 - 0.00205 = 0.00825 > P
    (0.0061, "is smaller than published"),  # 0.0061 + 0.00205 = 0.00815 < P
    (0.0, "is absent"),                     # no difference: 0 + 0.00205 < P
    (-0.001, "is contradicted"),            # the other sign
])
def test_figure_8_difference_is_judged_by_the_artifacts_rule(reproduced, phrase):
    """corr05 Fig. 8: four minus two levels at 30 s is 0.84921 - 0.84099 = +0.0082 in the paper.
    The SAN's difference is exact (zero-width interval); the margin is a quarter of 0.0082."""
    from simcore.report.san_published import verdict

    assert verdict(0.0082, reproduced).startswith(phrase)


def test_a_figure_claim_comparing_a_fitted_curve_is_calibrated():
    """A value fitted on a figure never judges that figure: when one of the two compared models
    carries a fit (corr05 Fig. 8: expired_wait on the two-level curve), the claim's verdict is
    'calibrated', the statistical one kept beside it; without a fit it is the rule's verdict."""
    from types import SimpleNamespace

    import pandas as pd

    from simcore.report.san_published import claim_rows

    def model(name, exact, published, claim=None, fit=None):
        times = np.array([0.0, 30.0])
        return {
            "name": name,
            "san": SimpleNamespace(published={"figure": "fig", **({"claim": claim} if claim else {})}),
            "exact": pd.DataFrame({"time": times, "finished": [0.0, exact]}),
            "measure": "finished",
            "time": times,
            "value": np.array([0.0, published]),
            "fit": fit,
        }

    claim = {"id": "more", "text": "four levels finish more", "than": "two", "time": 30}
    fit = pd.Series({"parameter": "expired_wait", "value": 3.0575})
    rows = claim_rows([model("four", 0.851, 0.849, claim), model("two", 0.841, 0.841, fit=fit)])
    row = rows.iloc[0]
    assert (row.verdict, row.statistical_verdict) == ("calibrated", "reproduced")
    assert "expired_wait = 3.058 was fitted on the published curve of two" in row.calibrated
    plain = claim_rows([model("four", 0.851, 0.849, claim), model("two", 0.841, 0.841)]).iloc[0]
    assert (plain.verdict, plain.calibrated) == ("reproduced", "")
