"""Fit one open quantity on one figure, predict the others (simcore/report/fit.py), on data whose
answers are derived by hand."""

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simcore.experiments.spec import Spec, load_spec
from simcore.report.fit import fit

T975_7 = 2.3646242510  # Student t, 97.5% quantile, 7 degrees of freedom


def toy_spec(published=({"where": {"machine": "A"}, "value": 20.0}, {"where": {"machine": "B"}, "value": 30.0})):
    """Machines A (fitted) and B, the open quantity x at 100 (the stated reading) and 25."""
    return Spec(Path("toy.yaml"), {
        "id": "toy", "model": "numa", "grid": {"machine": ["A", "B"], "x": [100.0, 25.0]}, "seeds": "shared",
        "policies": ["base", "new"], "baseline": "base", "confidence": 0.95, "metrics": [{"name": "mean_turnaround"}],
        "published": [{"policy": "base", "metric": "mean_turnaround", **p} for p in published],
        "output": {"kind": "fit", "x": "x", "by": "machine", "fit_on": "A", "policy": "base",
                   "metric": "mean_turnaround"}})


def data(spec, base: dict, ratio: dict, noise: dict = {}) -> pd.DataFrame:
    """8 replications per cell; base level base[(machine, x)] plus noise[(machine, x)] x (+1, -1, ...);
    new = ratio[(machine, x)] x base."""
    rows, sign = [], np.array([1.0, -1.0] * 4)
    for i, (machine, x) in enumerate([(m, x) for m in ("A", "B") for x in (100.0, 25.0)]):
        level = base[(machine, x)] + noise.get((machine, x), 0.0) * sign
        for policy, values in (("base", level), ("new", ratio[(machine, x)] * level)):
            rows += [{"cell": i, "machine": machine, "x": x, "policy": policy, "rep": r, "mean_turnaround": float(v)}
                     for r, v in enumerate(values)]
    return pd.DataFrame(rows)


BASE = {("A", 100.0): 10.0, ("A", 25.0): 30.0, ("B", 100.0): 12.0, ("B", 25.0): 36.0}
RATIO = {("A", 100.0): 0.9, ("A", 25.0): 0.9, ("B", 100.0): 0.95, ("B", 25.0): 0.85}


def test_the_fit_and_the_predictions_by_hand():
    """A's level goes 10 -> 30 from x = 100 to 25; its published 20 is halfway on the log scale:
    log x* = log 100 + (20 - 10) / (30 - 10) x log(25 / 100), x* = 50. B read at x* (halfway):
    (12 + 36) / 2 = 24 against 30 published: error -0.2; its gain new/base (0.95 + 0.85) / 2 = 0.9.
    Stated reading (x = 100): A 10, B 12. Without noise every interval has zero width."""
    result = fit(toy_spec(), data(toy_spec(), BASE, RATIO))
    assert result["x"].mean == pytest.approx(50.0) and result["x"].low == pytest.approx(50.0)
    a, b = result["rows"]
    assert (a["by"], a["published"], a["stated"].mean) == ("A", 20.0, 10.0)
    assert a["level"].mean == pytest.approx(20.0) and a["error"] == pytest.approx(0.0, abs=1e-12)
    assert (b["by"], b["published"], b["stated"].mean) == ("B", 30.0, 12.0)
    assert b["level"].mean == pytest.approx(24.0) and b["error"] == pytest.approx(-0.2)
    assert b["gain"].mean == pytest.approx(0.9) and a["gain"].mean == pytest.approx(0.9)


def test_a_predictions_interval_is_the_delta_method_on_the_cells_it_reads():
    """Noise +-1 on B's level at x = 25 only: B at x* = (B100 + B25) / 2 has influence values
    +-0.5, sd 0.5 sqrt(8/7) = 0.53452, half-width t(0.975, 7) x 0.53452 / sqrt(8) = 0.44687."""
    result = fit(toy_spec(), data(toy_spec(), BASE, RATIO, {("B", 25.0): 1.0}))
    b = result["rows"][1]
    half = T975_7 * 0.5 * math.sqrt(8 / 7) / math.sqrt(8)
    assert (b["level"].low, b["level"].high) == pytest.approx((24 - half, 24 + half), rel=1e-6)


def test_the_fitted_value_carries_the_fitted_curves_uncertainty():
    """Noise +-1 on A's level at x = 25: log x* = log 100 + 10 / (A25 - 10) x log(1/4) moves by
    -10 / 20^2 x log(1/4) = 0.034657 per unit of A25, so log x*'s influence values are +-0.034657:
    half-width t x 0.034657 sqrt(8/7) / sqrt(8) = 0.030975 on the log scale: 50 e^(+-0.030975)."""
    result = fit(toy_spec(), data(toy_spec(), BASE, RATIO, {("A", 25.0): 1.0}))
    half = T975_7 * 10 / 400 * math.log(4) * math.sqrt(8 / 7) / math.sqrt(8)
    assert (result["x"].low, result["x"].high) == pytest.approx((50 * math.exp(-half), 50 * math.exp(half)), rel=1e-6)


def test_no_fit_when_the_fitted_curve_never_reaches_its_published_level():
    """A's level stays within 10..30; a published 40 is never reached: x* and every prediction NaN."""
    spec = toy_spec(({"where": {"machine": "A"}, "value": 40.0}, {"where": {"machine": "B"}, "value": 30.0}))
    result = fit(spec, data(spec, BASE, RATIO))
    assert math.isnan(result["x"].mean) and all(math.isnan(r["level"].mean) for r in result["rows"])
    assert result["rows"][1]["stated"].mean == 12.0


def test_corr05_level_is_fitted_on_figure_10_and_predicts_the_others():
    spec = load_spec(Path("config/experiments/corr05-level.yaml"))
    out = spec["output"]
    assert out["kind"] == "fit" and out["fit_on"] == "corr05-4x4" and spec.data["seeds"] == "shared"
    assert spec.grid[out["x"]][0] == 100.0   # the stated reading first
    assert {c.values["topology"] for c in spec.cells("smoke")} >= {"corr05-4x4"}


FIT_ERRORS = {
    "x not in the grid": (lambda d: d["output"].update(x="n_tasks"), "output.x"),
    "a third grid parameter": (lambda d: d["grid"].update(memory_stall_fraction=[0.25]), "'grid'"),
    "x not positive": (lambda d: d["grid"].update(def_timeslice=[100.0, 0.0]), "grid.def_timeslice"),
    "one x": (lambda d: d["grid"].update(def_timeslice=[100.0]), "grid.def_timeslice"),
    "fit_on not a machine": (lambda d: d["output"].update(fit_on="cray-1"), "output.fit_on"),
    "unknown policy": (lambda d: d["output"].update(policy="oracle"), "output.policy"),
    "seeds per cell": (lambda d: d.pop("seeds"), "'seeds'"),
}


@pytest.mark.parametrize("case", sorted(FIT_ERRORS))
def test_a_bad_fit_is_refused_naming_the_key(case, tmp_path):
    import yaml

    from simcore.errors import InputError

    data = yaml.safe_load(Path("config/experiments/corr05-level.yaml").read_text())
    edit, key = FIT_ERRORS[case]
    edit(data)
    path = tmp_path / "experiments" / "corr05-level.yaml"
    path.parent.mkdir()
    shutil.copytree("config/presets", tmp_path / "presets")
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError) as err:
        load_spec(path)
    assert key in str(err.value) and str(err.value).startswith(str(path))


def test_a_machine_the_scale_leaves_out_gets_not_run_macros(tmp_path):
    """Macros of the fit: the fitted x, each machine's stated level, level at the fit, error and
    gain; a machine of the grid without data (smoke thins the grid) gets \\valnotrun for each."""
    from simcore.report.macros import NOT_RUN, _fit_macros, _Macros

    spec = toy_spec()
    spec.data["grid"]["machine"].append("C")
    m = _Macros()
    _fit_macros(m, spec, data(spec, BASE, RATIO))
    values = dict(line[len("\\valdef{"):-1].split("}{", 1) for line in m.lines)
    assert values["toy/fit/x"] == "50" and values["toy/B/level"] == "24"
    assert values["toy/B/error"] == "\\ensuremath{-}20.0\\,\\%"
    assert {values[f"toy/C/{part}"] for part in ("stated", "level", "error", "gain")} == {NOT_RUN}


def test_the_fit_is_drawn_and_tabled(tmp_path):
    """The figure (two panels) and the table of a fit build from replications.csv: the table
    marks the fitted machine and gives B's error, -20.0%."""
    from simcore.report.figures import make_figure
    from simcore.report.tables import table_tex

    spec = Spec(Path("toy.yaml"), {**toy_spec().data, "paper": "corr05", "title": "toy fit", "source": "Figure 1"})
    (tmp_path / "toy").mkdir()
    data(spec, BASE, RATIO).to_csv(tmp_path / "toy" / "replications.csv", index=False)
    make_figure(spec, tmp_path, tmp_path / "toy.pdf")
    assert (tmp_path / "toy.pdf").read_bytes().startswith(b"%PDF")
    tex = table_tex(spec, tmp_path)
    assert "A (fitted)" in tex and "\\ensuremath{-}20.0\\%" in tex
