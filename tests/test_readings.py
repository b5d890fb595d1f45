"""Readings sweeps: the one-at-a-time design, each reading's statistic and verdict, the
influence ranking and the published band, on data whose answers are known by construction."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simcore.experiments.spec import Spec, SpecError, load_spec
from simcore.report.readings import influence, published_band, readings

SPECS = Path("config/experiments")
STAT = {"id": "gain", "text": "new is 10% faster", "kind": "ratio-below", "threshold": 1.0, "published_effect": 0.9,
        "metric": "mean_turnaround", "policy": "new", "than": "base"}


def toy_spec():
    """A one-at-a-time grid over p (a, b) and q (x, y, z): cells default (a, x), p = b, q = y, q = z."""
    return Spec(Path("toy.yaml"), {"id": "toy", "model": "numa", "grid_design": "one-at-a-time",
                                   "grid": {"p": ["a", "b"], "q": ["x", "y", "z"]}, "policies": ["base", "new"],
                                   "baseline": "base", "confidence": 0.95,
                                   "metrics": [{"name": "mean_turnaround"}]})


def raw(ratios: dict[int, float], spec=None) -> pd.DataFrame:
    """Per cell, base turnaround 1000 + 10 r and new = ratio x base x (1 +- 0.1%)."""
    spec, rows = spec or toy_spec(), []
    base = 1000.0 + 10.0 * np.arange(8)
    wiggle = 1 + 0.001 * np.array([1, -1, 1, -1, 1, -1, 1, -1])
    for cell in spec.all_cells():
        for policy, values in (("base", base), ("new", ratios[cell.index] * base * wiggle)):
            rows += [{"cell": cell.index, **cell.values, "policy": policy, "rep": r, "mean_turnaround": float(v)}
                     for r, v in enumerate(values)]
    return pd.DataFrame(rows)


def test_one_at_a_time_cells_change_one_reading_each():
    spec = toy_spec()
    cells = [(c.index, c.values) for c in spec.all_cells()]
    assert cells == [(0, {"p": "a", "q": "x"}), (1, {"p": "b", "q": "x"}), (2, {"p": "a", "q": "y"}),
                     (3, {"p": "a", "q": "z"})]
    assert [spec.varied(c) for c in spec.all_cells()] == [None, "p", "q", "q"]
    mehta = load_spec(SPECS / "mehta-readings.yaml")
    assert len(mehta.all_cells()) == 1 + 1 + 1 + 3 + 1 + 2 + 1 + 2 + 2 + 1 + 2   # the default, then each axis's others
    assert [c.index for c in mehta.cells("smoke")] == [0, 1]   # smoke: the default and rules_scope = all


def test_each_reading_gets_its_statistic_verdict_and_change():
    """Ratios new/base of 0.9 (default), 0.8 (p = b), 1.0 (q = y), 0.9 (q = z), each within 0.1%.
    Published 0.9 against threshold 1: on the log scale P = 0.1054, margin 0.0263.
    Default and q = z: reproduced. p = b: effect 0.2231 - 0.0263 > P: larger than published.
    q = y: the interval holds 1 and the published band lies beyond it: absent.
    Changes on the log scale: p: log(0.8/0.9) = -0.1178; q: log(1/0.9) = 0.1054 and 0."""
    rows = readings(toy_spec(), raw({0: 0.9, 1: 0.8, 2: 1.0, 3: 0.9}), STAT)
    assert [(r["parameter"], r["value"], r["verdict"]) for r in rows] == [
        (None, None, "reproduced"), ("p", "b", "larger than published"), ("q", "y", "absent"),
        ("q", "z", "reproduced")]
    assert [r["mean"] for r in rows] == pytest.approx([0.9, 0.8, 1.0, 0.9], rel=1e-3)
    assert [r["change"] for r in rows] == pytest.approx([0.0, math.log(0.8 / 0.9), math.log(1 / 0.9), 0.0], abs=1e-4)
    ranked = influence(rows)
    assert [name for name, _ in ranked] == ["p", "q"]
    assert ranked[0][1] == pytest.approx(math.log(0.9 / 0.8), abs=1e-4)


def test_the_published_band_is_the_margin_around_the_published_effect():
    """Ratio 0.9 against 1: m = 0.25 x log(1/0.9) = 0.02634, band 0.9 e^-m .. 0.9 e^m; a difference
    of -5 against 0: m = 1.25; 'table' or no published effect: no band."""
    low, mid, high = published_band(STAT)
    m = 0.25 * math.log(1 / 0.9)
    assert (low, mid, high) == pytest.approx((0.9 * math.exp(-m), 0.9, 0.9 * math.exp(m)))
    assert published_band({"kind": "less", "published_effect": -5.0}) == (-6.25, -5.0, -3.75)
    assert published_band({**STAT, "published_effect": "table"}) is None
    assert published_band({k: v for k, v in STAT.items() if k != "published_effect"}) is None


def test_a_one_at_a_time_grid_lists_each_value_once(tmp_path):
    text = (SPECS / "mehta-readings.yaml").read_text().replace("max_migrations: [5, 3, 9]", "max_migrations: [5, 3, 5]")
    path = tmp_path / "experiments" / "mehta-readings.yaml"
    path.parent.mkdir()
    path.write_text(text)
    (tmp_path / "presets").mkdir()
    (tmp_path / "presets" / "mehta.yaml").write_text(Path("config/presets/mehta.yaml").read_text())
    with pytest.raises(SpecError, match="'grid.max_migrations': a one-at-a-time grid lists each value once"):
        load_spec(path)


def test_a_map_gives_every_crossed_cell_its_statistic_and_verdict():
    """The toy grid as a product (p x q: 6 cells) with ratios chosen per cell: each row of the
    map's table holds the cell's values, the ratio and the verdict against 0.9 (as above)."""
    from simcore.report.readings import cell_table

    spec = Spec(Path("toy.yaml"), {**toy_spec().data, "grid_design": "product"})
    table = cell_table(spec, raw({0: 0.9, 1: 1.0, 2: 0.8, 3: 0.9, 4: 0.9, 5: 1.2}, spec), STAT)
    assert [(r["values"], r["verdict"]) for r in table] == [
        ({"p": "a", "q": "x"}, "reproduced"), ({"p": "a", "q": "y"}, "absent"),
        ({"p": "a", "q": "z"}, "larger than published"), ({"p": "b", "q": "x"}, "reproduced"),
        ({"p": "b", "q": "y"}, "reproduced"), ({"p": "b", "q": "z"}, "contradicted")]


def test_a_map_crosses_two_grid_parameters_only(tmp_path):
    """A map's x and y are grid parameters; any other grid parameter has one value."""
    text = (SPECS / "amir-map.yaml").read_text()
    (tmp_path / "experiments").mkdir()
    (tmp_path / "presets").mkdir()
    (tmp_path / "presets" / "amir.yaml").write_text(Path("config/presets/amir.yaml").read_text())
    path = tmp_path / "experiments" / "amir-map.yaml"
    path.write_text(text.replace("  x: mean_interarrival", "  x: speed"))
    with pytest.raises(SpecError, match="'output.x': a map needs a grid parameter"):
        load_spec(path)
    path.write_text(text.replace("grid:\n", "grid:\n  info_interval: [1.0, 2.0]\n"))
    with pytest.raises(SpecError, match="'grid.info_interval': a map crosses output.x and output.y only"):
        load_spec(path)


def shared(spec):
    return Spec(spec.path, {**spec.data, "seeds": "shared"})


def test_with_shared_seeds_a_change_gets_its_paired_interval():
    """raw() gives every cell the same base and wiggle, so new/base's log-scale influence values
    (new_r / R - base_r) / mean(base) are the same in every cell: the paired change p = b is exactly
    log(0.8 / 0.9) with a zero-width interval, where the two cells' own intervals overlap nothing
    to say. Per-cell seeds: no paired interval (NaN)."""
    data = raw({0: 0.9, 1: 0.8, 2: 1.0, 3: 0.9})
    rows = readings(shared(toy_spec()), data, STAT)
    assert (rows[0]["change_low"], rows[0]["change_high"]) == (0.0, 0.0)
    assert rows[1]["change_low"] == pytest.approx(math.log(0.8 / 0.9), abs=1e-12)
    assert rows[1]["change_high"] == pytest.approx(math.log(0.8 / 0.9), abs=1e-12)
    assert all(math.isnan(r["change_low"]) for r in readings(toy_spec(), data, STAT)[1:])


def test_a_paired_change_of_a_level_is_the_t_interval_of_the_differences():
    """'value' of new: cell 0 has 1000 + 10 r (r = 0..7), cell p = b adds 5, 7, 5, 7, ...: the
    differences have mean 6 and sd sqrt(8/7) = 1.0690, so the paired 95% half-width is
    t(0.975, 7) x 1.0690 / sqrt(8) = 2.3646 x 0.37796 = 0.8937: [5.1063, 6.8937] (the cells'
    own intervals are some 40 wide). A cell with other replications gets no paired interval."""
    spec = shared(toy_spec())
    level = {"id": "level", "text": "new's level", "kind": "value", "metric": "mean_turnaround", "policy": "new"}
    base = 1000.0 + 10.0 * np.arange(8)
    extra = {0: np.zeros(8), 1: np.array([5.0, 7.0] * 4), 2: np.zeros(8), 3: np.zeros(8)}
    frame = pd.DataFrame([{"cell": c.index, **c.values, "policy": p, "rep": r, "mean_turnaround": float(v)}
                          for c in spec.all_cells() for p in ("base", "new")
                          for r, v in enumerate(base + extra[c.index])])
    rows = readings(spec, frame, level)
    assert rows[1]["change"] == pytest.approx(6.0)
    assert (rows[1]["change_low"], rows[1]["change_high"]) == pytest.approx((5.1063, 6.8937), abs=1e-4)
    assert rows[1]["high"] - rows[1]["low"] > 30
    fewer = frame[~((frame.cell == 2) & (frame.rep == 7))]
    assert math.isnan(readings(spec, fewer, level)[2]["change_low"])


def test_shared_seeds_give_every_reading_the_same_workload():
    """amir-readings (seeds: shared): the reassignment rule is Enhanced Mosix's alone, so PVM,
    Enhanced PVM and Mosix give the same rows in the default cell and in reassign_rule =
    stability; with per-cell seeds PVM's rows differ (another workload)."""
    from simcore.experiments.runner import run_batch

    spec = load_spec(SPECS / "amir-readings.yaml")
    assert spec.data["seeds"] == "shared" and spec.cell(1).values["reassign_rule"] == "stability"
    cols = ["policy", "rep", "mean_slowdown", "migrations"]
    default, stability = (run_batch(spec, i, range(2), 5)[cols] for i in (0, 1))
    same = ["pvm", "enhanced-pvm", "mosix"]
    pd.testing.assert_frame_equal(default[default.policy.isin(same)], stability[stability.policy.isin(same)])
    own = Spec(spec.path, {k: v for k, v in spec.data.items() if k != "seeds"})
    other = run_batch(own, 1, range(2), 5)[cols]
    assert not np.allclose(other[other.policy == "pvm"].mean_slowdown, default[default.policy == "pvm"].mean_slowdown)


def test_mehta_readings_exponential_io_is_the_traces_25_ms():
    """mehta's default I/O reading is the rest of the slice; its 'exponential' reading must take the
    traces' 25 ms mean (the preset's mean_io), not the model's corr05 default of 1 s."""
    spec = load_spec(SPECS / "mehta-readings.yaml")
    cell = next(c for c in spec.all_cells() if spec.varied(c) == "io_wait")
    assert cell.values["io_wait"] == "exponential"
    assert spec.params(cell.values)["mean_io"] == 25.0
