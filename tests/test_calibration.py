"""Calibrating a paper's control (simcore/calibration): the file's checks, its published points,
the fitter recovering values the model itself made, held-out groups kept out of their fit,
determinism across worker counts, and the record."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from simcore.calibration import fit as F
from simcore.calibration.run import calibrate
from simcore.calibration.spec import Calibration, Point, Quantity, load_calibration
from simcore.cli import main
from simcore.errors import InputError
from simcore.experiments.spec import find_spec, load_spec

ROOT = Path(__file__).resolve().parent.parent
CORR05 = ROOT / "config" / "calibration" / "corr05-control.yaml"


def test_the_control_of_corr05_is_fitted_on_the_36_published_linux_points_only():
    """Figures 9, 10, 12 and 13 publish 10, 10, 8 and 8 points per curve; the calibration takes
    those of Linux's two levels, each with its figure's machine and load, and no multilevel one."""
    cal = load_calibration(CORR05, ROOT / "config" / "experiments")
    assert len(cal.points) == 36
    for target, count in (("corr05-fig9", 10), ("corr05-fig10", 10), ("corr05-fig12", 8), ("corr05-fig13", 8)):
        spec = load_spec(find_spec(target, ROOT / "config" / "experiments"))
        mine = [p for p in cal.points if p.experiment == target]
        published = [(e["where"]["n_tasks"], e["value"]) for e in spec.data["published"]
                     if e["policy"] == "linux-2level" and e["metric"] == "mean_turnaround_s"]
        assert [(p.params["n_tasks"], p.value) for p in mine] == published and len(mine) == count
        assert {p.params["topology"] for p in mine} == {spec.data["fixed"]["topology"]}
        assert all(p.params["home_node"] == "creation" for p in mine)        # the preset's (section 2.2)
    assert cal.groups() == ["corr05-4x2", "corr05-4x4", "altix-16x2", "superdome-16x4"]


def _edited(tmp_path: Path, edit, source: Path = CORR05) -> Path:
    """The calibration file ``source``, changed by ``edit``, under ``tmp_path``/calibration."""
    data = yaml.safe_load(source.read_text())
    edit(data)
    (tmp_path / "calibration").mkdir(exist_ok=True)
    path = tmp_path / "calibration" / source.name
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("edit, key", [
    (lambda d: d["open"]["memory_stall_fraction"].update(high=1.5), "open.memory_stall_fraction.high"),
    (lambda d: d["open"].update(no_such={"low": 0, "high": 1, "support": "s", "why": "w"}), "open.no_such"),
    (lambda d: d["open"]["def_timeslice"].pop("support"), "open.def_timeslice.support"),
    (lambda d: d["open"]["creation_cpu"].update(choices=["random", "anywhere"]), "open.creation_cpu.choices"),
    (lambda d: d["open"]["memory_stall_fraction"].update(scale="log"), "open.memory_stall_fraction.scale"),
    (lambda d: d.update(policy="multilevel"), "policy"),
    (lambda d: d.update(holdout="n_nice0"), "holdout"),
    (lambda d: d.update(fixed={"home_node": {"value": "elsewhere", "why": "w"}}), "fixed.home_node.value"),
    (lambda d: d["search"].update(design=-1), "search.design"),
    (lambda d: d.update(policy=["linux-2level", "linux-2level"]), "policy"),
    (lambda d: d.update(take_untested="yes"), "take_untested"),
])
def test_a_bad_calibration_is_one_sentence_naming_the_file_and_key(tmp_path, capsys, edit, key):
    """Every range lies in its parameter's domain, every quantity cites its support, the control
    is the targets' baseline (the treatment never enters a fit); the command exits 2 and writes
    nothing."""
    path = _edited(tmp_path, edit)
    with pytest.raises(InputError, match=key.replace(".", r"\.")):
        load_calibration(path, ROOT / "config" / "experiments")
    out = tmp_path / "out"
    assert main(["calibrate", str(path), "--out", str(out), "--scale", "smoke", "--progress", "off"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and key in err
    assert not out.exists()


# -- the fitter on curves the model made itself ---------------------------------------------------
TRUE = {"memory_stall_fraction": 0.6, "def_timeslice": 50.0}
REPS = 4


def _synthetic(search=None) -> Calibration:
    """Four points (two machines, two loads) whose 'published' values are the model's own means
    at TRUE with the fit's seeds: the objective is exactly 0 there. On the 4x4 machine tasks are
    created everywhere and keep their memory where they start (the memory penalty hardly shows:
    the timeslice sets the level); on the 4x2 all are created on CPU 0 with their memory there
    (the penalty shows): so the two values are told apart, not traded along a ridge."""
    base = {"creation_rate": 200.0, "locality_scope": "lifetime", "nice_min": 1, "nice_max": 19,
            "mean_io": 1000.0, "mean_demand": 500.0}
    where = {"corr05-4x2": {"home_node": "creation", "creation_cpu": 0},
             "corr05-4x4": {"home_node": "start", "creation_cpu": "random"}}
    cells = [(topo, n) for topo in ("corr05-4x2", "corr05-4x4") for n in (12, 40)]
    points = [Point("synthetic", {**base, **where[topo], "topology": topo, "n_tasks": n}, 1.0, "synthetic",
                    "mean_turnaround_s", i, "linux-2level") for i, (topo, n) in enumerate(cells)]
    quantities = [Quantity("memory_stall_fraction", "s", "w", 0.0, 1.0),
                  Quantity("def_timeslice", "s", "w", 20.0, 200.0, "log")]
    cal = Calibration(Path("synthetic.yaml"), "synthetic", "corr05", "t", "numa", ["linux-2level"],
                      ["mean_turnaround_s"], [], quantities, {}, "squared-relative-error", "topology",
                      search or {"design": 16, "polish": 60, "holdout_polish": 20, "seed": 3}, {"smoke": 2})
    cal.points = points
    with F.Evaluator(cal, REPS, 11) as ev:
        made = ev.means([TRUE], list(range(len(points))))[0]
    cal.points = [dataclasses.replace(p, value=float(v)) for p, v in zip(points, made)]
    return cal


def test_the_fitter_recovers_the_values_that_made_the_curves():
    """Curves made at m = 0.6 and a 50 ms timeslice, fitted over m in [0, 1] and timeslices in
    [20, 200] ms (log): the design's best of 16 vectors, polished, lands within 0.05 of m and 5%
    of the timeslice, and the simulated points within 1% of the curves."""
    cal = _synthetic()
    result = F.fit(cal, REPS, 11, holdout=False)
    assert result.values["memory_stall_fraction"] == pytest.approx(0.6, abs=0.05)
    assert result.values["def_timeslice"] == pytest.approx(50.0, rel=0.05)
    assert max(abs(p["rel_error"]) for p in result.points) < 0.01
    unpolished = F.fit(dataclasses.replace(cal, search={**cal.search, "polish": 0}), REPS, 11, holdout=False)
    assert unpolished.objective > result.objective       # the polish is what gets there


def test_coordinates_map_ranges_linearly_or_on_a_log_scale_and_choices_into_equal_parts():
    """u = 0.5 is the middle of [0, 1] and the geometric middle of [20, 200] (63.2 ms); three
    choices split [0, 1] into thirds, u = 1 taking the last."""
    lin, log = Quantity("m", "s", "w", 0.0, 1.0), Quantity("t", "s", "w", 20.0, 200.0, "log")
    pick = Quantity("c", "s", "w", choices=("a", "b", "c"))
    assert F.to_value(lin, 0.5) == 0.5 and F.to_value(log, 0.5) == 63.2456
    assert [F.to_value(pick, u) for u in (0.0, 0.33, 0.34, 0.67, 1.0)] == ["a", "a", "b", "c", "c"]


def test_a_held_out_machines_points_never_enter_its_fit(monkeypatch):
    """For each machine, the search sees only the other machine's points; the held-out points are
    simulated once, at the values that search found."""
    cal = _synthetic({"design": 4, "polish": 2, "holdout_polish": 2, "seed": 3})
    searched, predicted = [], []
    search, point_rows = F._search, F._point_rows

    def spy_search(ev, cube, indices, budget):
        searched.append(list(indices))
        return search(ev, cube, indices, budget)

    def spy_rows(cal_, means, indices):
        predicted.append(list(indices))
        return point_rows(cal_, means, indices)

    monkeypatch.setattr(F, "_search", spy_search)
    monkeypatch.setattr(F, "_point_rows", spy_rows)
    result = F.fit(cal, REPS, 11)
    assert searched == [[0, 1, 2, 3], [2, 3], [0, 1]]          # all; without 4x2; without 4x4
    assert predicted == [[0, 1, 2, 3], [0, 1], [2, 3]]
    assert [h["held_out"] for h in result.holdout] == ["corr05-4x2", "corr05-4x4"]


def test_a_fit_is_the_same_on_one_worker_or_two():
    cal = _synthetic({"design": 4, "polish": 3, "holdout_polish": 1, "seed": 5})
    one, two = F.fit(cal, REPS, 11, jobs=1), F.fit(cal, REPS, 11, jobs=2)
    assert (one.values, one.points, one.holdout) == (two.values, two.points, two.holdout)


def test_a_recorded_fit_is_taken_while_its_key_holds(tmp_path, monkeypatch):
    """A fit recorded under its key is reused (no search: the points are simulated once at its
    values); a change of the calibration file changes the key, and the fit is made again."""
    path = _edited(tmp_path, lambda d: d["search"].update(design=2, polish=1, holdout_polish=0))
    cal = load_calibration(path, ROOT / "config" / "experiments")
    cal.points = cal.points[:2] + cal.points[10:12]                      # two machines, for speed
    record = tmp_path / "fits.yaml"
    made = calibrate(cal, "smoke", tmp_path / "a", 7, record_to=record)
    assert "fitted now" in made
    from simcore.report.calibration import write  # the report's page of it

    write(cal, tmp_path / "a", tmp_path / "cal.tex", tmp_path / "cal.pdf", "figures/cal.pdf")
    tex = (tmp_path / "cal.tex").read_text()
    names = [q.name.replace("_", "\\_\\allowbreak{}") for q in cal.quantities]   # breakable in a narrow column
    assert all("\\texttt{" + name + "}" in tex for name in names)
    assert tex.count(r"\\") >= len(cal.quantities) + 2 and (tmp_path / "cal.pdf").stat().st_size > 1000
    searches = []
    monkeypatch.setattr(F, "_search", lambda *a: searches.append(a) or (_ for _ in ()).throw(AssertionError))
    again = calibrate(cal, "smoke", tmp_path / "b", 7, cache=record)
    assert "recorded in" in again and searches == []
    searched = pd.read_csv(tmp_path / "a" / "search.csv")          # every setting tried, point by point
    assert len(searched) >= 2 * len(cal.points)                      # the design's two settings at least
    assert {q.name for q in cal.quantities} | {"point", "simulated"} <= set(searched.columns)
    assert not (tmp_path / "b" / "search.csv").exists()
    assert (tmp_path / "a" / "points.csv").read_text() == (tmp_path / "b" / "points.csv").read_text()
    path.write_text(path.read_text().replace("seed: 54", "seed: 55"))
    changed = dataclasses.replace(cal, path=path)
    with pytest.raises(AssertionError):                                   # no entry: it would search
        calibrate(changed, "smoke", tmp_path / "c", 7, cache=record)


# -- the experiments that take the calibration ------------------------------------------------------
def test_every_published_point_of_the_four_figures_is_a_claim_the_controls_marked_calibrated():
    """Figures 9, 10, 12 and 13: 72 points (36 per policy), one 'value' claim each, judged against
    the paper's number in its cell; Linux's are the fit's own (calibrated, not counted), the
    multilevel ones and every effect claim are predictions on the calibrated control. A judging
    experiment takes the effect claims only."""
    specs = {n: load_spec(find_spec(f"corr05-fig{n}", ROOT / "config" / "experiments")) for n in (9, 10, 12, 13)}
    points = [c for s in specs.values() for c in s.data["claims"] if c.get("point")]
    assert len(points) == 72
    linux = [c for c in points if c["policy"] == "linux-2level"]
    assert len(linux) == 36 and all(c.get("calibrated") and not c.get("calibrated_input") for c in linux)
    others = [c for s in specs.values() for c in s.data["claims"] if c["policy"] != "linux-2level"]
    assert others and all(c.get("calibrated_input") and not c.get("calibrated") for c in others)
    first = next(c for c in points if c["id"] == "point-linux-2level-n-tasks-50")
    assert (first["kind"], first["where"], first["published_effect"]) == ("value", {"n_tasks": [50]}, "table")
    readings = load_spec(find_spec("corr05-fig9-readings", ROOT / "config" / "experiments"))
    assert [c["id"] for c in readings.data["judged_claims"]] == [c["id"] for c in specs[9].data["claims"]
                                                                  if not c.get("point")]
    assert readings.data["calibration"] == "corr05-control"


def test_an_experiment_runs_with_the_recorded_values_over_its_presets_and_under_its_grid(tmp_path):
    """The recorded fit's values replace the preset's assumptions; a grid value or an override
    still wins; without a record the run stops with one sentence naming the record."""
    config = tmp_path / "config"
    for sub in ("experiments", "presets", "calibration", "topologies"):
        (config / sub).mkdir(parents=True)
    for name in ("corr05-fig9.yaml",):
        (config / "experiments" / name).write_text((ROOT / "config" / "experiments" / name).read_text())
    (config / "presets" / "corr05.yaml").write_text((ROOT / "config" / "presets" / "corr05.yaml").read_text())
    (config / "calibration" / "corr05-control.yaml").write_text(CORR05.read_text())
    spec = load_spec(config / "experiments" / "corr05-fig9.yaml")
    with pytest.raises(InputError, match="fits/corr05-control.yaml: no recorded full fit"):
        spec.params({"n_tasks": 50})
    (config / "calibration" / "fits").mkdir()
    (config / "calibration" / "fits" / "corr05-control.yaml").write_text(yaml.safe_dump([
        {"key": "k", "calibration": "corr05-control", "scale": "full",
         "values": {"memory_stall_fraction": 0.7, "def_timeslice": 40.0, "creation_rate": 80.0, "creation_cpu": 0}}]))
    params = spec.params({"n_tasks": 50})
    assert (params["memory_stall_fraction"], params["def_timeslice"], params["creation_cpu"]) == (0.7, 40.0, 0)
    assert spec.params({"n_tasks": 50, "memory_stall_fraction": 0.25})["memory_stall_fraction"] == 0.25
    assert spec.params({"n_tasks": 50}, calibrated=False)["memory_stall_fraction"] == 0.25   # the preset's
    assert config / "calibration" / "fits" / "corr05-control.yaml" in spec.files
    # the control's reading: the calibration's id runs the fit, 'none' the preset's values
    assert spec.params({"n_tasks": 50, "calibration": "corr05-control"}) == params
    assert spec.params({"n_tasks": 50, "calibration": "none"}) == spec.params({"n_tasks": 50}, calibrated=False)
    assert "calibration" not in spec.params({"n_tasks": 50, "calibration": "none"})


def _corr05_tree(tmp_path: Path) -> Path:
    """A config folder with corr05-fig9, its preset and its calibration (no recorded fit)."""
    config = tmp_path / "config"
    for sub in ("experiments", "presets", "calibration/fits"):
        (config / sub).mkdir(parents=True)
    (config / "experiments" / "corr05-fig9.yaml").write_text((ROOT / "config/experiments/corr05-fig9.yaml").read_text())
    (config / "presets" / "corr05.yaml").write_text((ROOT / "config/presets/corr05.yaml").read_text())
    (config / "calibration" / "corr05-control.yaml").write_text(CORR05.read_text())
    return config


SUPPORTED = {"value": "corr05-control", "support": "the paper's Linux curves pin the open quantities (a test)"}
UNSUPPORTED = {"value": "none", "support": None}


@pytest.mark.parametrize("entries, message", [
    ([SUPPORTED, UNSUPPORTED], None),
    ([UNSUPPORTED, SUPPORTED], r"key 'readings.calibration': the values are \[corr05-control, none\]"),
    ([SUPPORTED], r"key 'readings.calibration': the values are \[corr05-control, none\]"),
])
def test_the_control_is_read_calibrated_first_then_as_its_spec_states_it(tmp_path, entries, message):
    """A judging experiment's reading 'calibration' lists the judged experiment's calibration,
    then 'none'; its cells carry the value, and 'none' runs the preset's values."""
    config = _corr05_tree(tmp_path)
    (config / "calibration" / "fits" / "corr05-control.yaml").write_text(yaml.safe_dump([
        {"key": "k", "calibration": "corr05-control", "scale": "full",
         "values": {"memory_stall_fraction": 0.7, "def_timeslice": 40.0, "creation_rate": 80.0, "creation_cpu": 0}}]))
    data = yaml.safe_load((ROOT / "config/experiments/corr05-fig9-control.yaml").read_text())
    path = config / "experiments" / "corr05-fig9-control.yaml"
    path.write_text(yaml.safe_dump({**data, "readings": {"calibration": entries}}, sort_keys=False))
    if message:
        with pytest.raises(InputError, match=message):
            load_spec(path)
        return
    spec = load_spec(path)
    assert spec.grid["calibration"] == ["corr05-control", "none"]
    stalls = {c.values["calibration"]: spec.params(c.values)["memory_stall_fraction"] for c in spec.all_cells()}
    assert stalls == {"corr05-control": 0.7, "none": 0.25}


@pytest.mark.parametrize("key", ["fixed", "assumptions", "grid"])
def test_a_calibrated_spec_may_not_set_a_quantity_its_calibration_fits(tmp_path, key):
    """corr05-fig9 runs on corr05-control, which fits memory_stall_fraction. Setting it in the
    spec's own fixed values, assumptions or grid would be silently replaced by the fitted value:
    one sentence naming the file and key. Its preset's value (0.25) is what the fit replaces by
    design, and is no error."""
    config = _corr05_tree(tmp_path)
    path = config / "experiments" / "corr05-fig9.yaml"
    data = yaml.safe_load(path.read_text())
    load_spec(path)
    value = {"fixed": 0.5, "assumptions": {"value": 0.5, "why": "a test"}, "grid": [0.5, 0.6]}[key]
    data[key] = {**(data.get(key) or {}), "memory_stall_fraction": value}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(InputError, match=rf"corr05-fig9.yaml: key '{key}.memory_stall_fraction': memory_stall_fraction "
                                         r"is fitted by calibration 'corr05-control'"):
        load_spec(path)


# -- the report's page ---------------------------------------------------------------------------
def test_the_features_compare_each_curves_direction_and_the_light_load_order():
    """Machine a: published 30 -> 25 (falls), simulated 20 -> 24 (rises); machine b: 22 -> 28 and
    18 -> 26 (both rise). At 50 tasks published a (30) > b (22), simulated a (20) > b (18)."""
    from simcore.report.calibration import features

    points = pd.DataFrame({"topology": ["a", "a", "b", "b"], "n_tasks": [50, 400, 50, 400],
                           "published": [30.0, 25.0, 22.0, 28.0], "simulated": [20.0, 24.0, 18.0, 26.0]})
    assert features(points, "topology") == [("a: the curve over the load", "falls", "rises"),
                                            ("b: the curve over the load", "rises", "rises"),
                                            ("order at 50 tasks, slowest first", "a > b", "a > b")]


def test_held_out_by_load_the_curves_are_each_controls():
    """barak96's shape: two controls, held out by the number of processes, which is also the
    load. MOSIX published 302 -> 311, simulated 300 -> 315 (both rise); PVM 302 -> 317 and
    301 -> 318. At 1 process published MOSIX (302) > PVM (301.8), simulated PVM (301) > MOSIX
    (300): the order is not given."""
    from simcore.report.calibration import features

    points = pd.DataFrame({"policy": ["mosix", "pvm", "mosix", "pvm"], "n_procs": [1, 1, 16, 16],
                           "published": [302.0, 301.8, 311.0, 317.0], "simulated": [300.0, 301.0, 315.0, 318.0]})
    assert features(points, "n_procs") == [("mosix: the curve over the load", "rises", "rises"),
                                           ("pvm: the curve over the load", "rises", "rises"),
                                           ("order at 1 processes, slowest first", "mosix > pvm", "pvm > mosix")]


def test_every_recorded_fit_was_made_by_the_current_code_calibration_and_points():
    """The experiments run with the recorded values; a record whose key no longer matches (the
    model's code, the calibration file or a published point changed) must be fitted again
    (make calibrate), and every calibration an experiment names has a full-scale fit."""
    from simcore.calibration.record import calibration_key, record_path

    seed = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["seed"]
    named = {load_spec(p).data.get("calibration") for p in sorted((ROOT / "config" / "experiments").glob("*.yaml"))}
    for name in sorted(n for n in named if n):
        cal = load_calibration(ROOT / "config" / "calibration" / f"{name}.yaml", ROOT / "config" / "experiments")
        entries = yaml.safe_load(record_path(cal.path).read_text())
        full = [e for e in entries if e["scale"] == "full"]
        assert len(full) == 1, name
        assert full[0]["key"] == calibration_key(cal, cal.replications["full"], seed), name


# -- a control fitted on several published quantities (mehta) --------------------------------------
MEHTA = ROOT / "config" / "calibration" / "mehta-control.yaml"


def test_the_control_of_mehta_is_fitted_on_its_71_published_linux_numbers_only():
    """Tables 3-5 give 15 + 18 + 12 Linux turnarounds, Table 1 two counts in each of its 10 rows,
    Table 2 six level counts: 71 points in 56 cells (a Table 1 row is one cell for both counts,
    Table 2 one cell for its six). No conservative number, and none set beside for reading only
    (Table 1's live counts and kernel failures), enters; the machines are the held-out groups."""
    cal = load_calibration(MEHTA, ROOT / "config" / "experiments")
    by_metric = pd.Series([p.metric for p in cal.points]).value_counts().to_dict()
    assert by_metric == {"mean_turnaround": 45, "lb_attempts": 10, "lb_no_imbalance": 10,
                         **{f"task_share_level_{k}": 1 for k in range(6)}}
    assert len(cal.cells) == 56 and len(cal.points) == 71
    row = [p for p in cal.points if p.experiment == "mehta-table1-s1-500ms" and p.params["n_tasks"] == 400]
    assert [(p.metric, p.value) for p in row] == [("lb_attempts", 804.0), ("lb_no_imbalance", 422.0)]
    assert row[0].cell == row[1].cell
    assert cal.groups() == ["mehta-s1", "mehta-8-4-6", "mehta-8-2-3", "mehta-s2", "mehta-s3"]
    assert set(cal.metric_groups.values()) == {"turnaround", "attempts", "levels"}
    values = F.values_at(cal, [0.5] * len(cal.quantities))
    assert values["cpu_max_interval"] == values["cpu_min_interval"] == 707.107  # tied: one period (geometric middle)
    assert values["node_busy_factor"] == values["cpu_busy_factor"] == 8 and isinstance(values["cpu_busy_factor"], int)


def _tiny(objective: str) -> Calibration:
    """Three points in two cells: a and b measured in cell 0 (group g), c in cell 2 (group h)."""
    params = {"topology": "corr05-4x2", "n_tasks": 4, "mean_demand": 50.0, "creation_rate": 200.0}
    points = [
        Point("e", params, 2.0, "s", "a", 0, "linux-2level"),
        Point("e", params, 4.0, "s", "b", 0, "linux-2level"),
        Point("e", {**params, "n_tasks": 8}, 10.0, "s", "c", 2, "linux-2level"),
    ]
    return Calibration(Path("tiny.yaml"), "tiny", "corr05", "t", "numa", ["linux-2level"], ["a", "b", "c"], [],
                       [Quantity("memory_stall_fraction", "s", "w", 0.0, 1.0)], {}, objective, "n_tasks",
                       {"design": 1, "polish": 0, "holdout_polish": 0, "seed": 1}, {"smoke": 1}, points,
                       metric_groups={"a": "g", "b": "g", "c": "h"})


def test_the_objective_weighs_each_group_of_metrics_alike():
    """Simulated 3, 4 and 5 against 2, 4 and 10: squared relative errors 0.25, 0 and 0.25. Over
    the points: 0.5 / 3; per group: g's mean (0.25 + 0) / 2 = 0.125 and h's 0.25, so 0.1875."""
    means = np.array([3.0, 4.0, 5.0])
    assert F.objective(_tiny("squared-relative-error"), means, [0, 1, 2]) == pytest.approx(0.5 / 3)
    assert F.objective(_tiny("squared-relative-error-per-group"), means, [0, 1, 2]) == pytest.approx(0.1875)
    assert F.objective(_tiny("squared-relative-error-per-group"), means[:2], [0, 1]) == pytest.approx(0.125)


def test_a_cell_is_simulated_once_for_all_the_metrics_measured_in_it(monkeypatch):
    """Two cells, two replications each: four runs, whatever the number of points; each run is
    asked for the metrics of its cell's points, with the seeds of the cell's name."""
    calls = []

    def run(args):
        calls.append((args[3], args[4]))
        return [float(len(calls))] * len(args[3])

    monkeypatch.setattr(F, "_run_one", run)
    cal = _tiny("squared-relative-error")
    with F.Evaluator(cal, 2, 9) as ev:
        means = ev.means([{"memory_stall_fraction": 0.5}], [0, 1, 2])[0]
    a, b, c = (("linux-2level", m) for m in "abc")
    assert calls == [([a, b], (9, "tiny", 0, 0)), ([a, b], (9, "tiny", 0, 1)),
                     ([c], (9, "tiny", 2, 0)), ([c], (9, "tiny", 2, 1))]
    assert list(means) == [1.5, 1.5, 3.5]


@pytest.mark.parametrize("edit, key", [
    (lambda d: d.update(tied={"cpu_max_interval": {"same_as": "no_such", "why": "w"}}), "tied.cpu_max_interval"),
    (lambda d: d.update(tied={"node_busy_factor": {"same_as": "cpu_busy_factor"}}), "tied.node_busy_factor"),
    (lambda d: d["open"]["cpu_busy_factor"].update(high=64.5), "open.cpu_busy_factor.high"),
    (lambda d: d.update(metric={"mean_turnaround": ""}), "metric"),
])
def test_a_bad_tie_integer_range_or_metric_group_is_one_sentence(tmp_path, edit, key):
    data = yaml.safe_load(MEHTA.read_text())
    edit(data)
    (tmp_path / "calibration").mkdir()
    path = tmp_path / "calibration" / "mehta-control.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match=key.replace(".", r"\.")):
        load_calibration(path, ROOT / "config" / "experiments")


def test_a_point_metric_enters_the_key_when_the_file_names_several():
    """A published point moved to another metric, same value and cell, changes the key of a
    several-metric calibration (the fit was made on the other metric)."""
    from simcore.calibration.record import calibration_key

    cal = load_calibration(MEHTA, ROOT / "config" / "experiments")
    assert cal.points[0].metric == "lb_attempts"
    moved = dataclasses.replace(cal, points=[dataclasses.replace(cal.points[0], metric="lb_no_imbalance")]
                                + cal.points[1:])
    assert calibration_key(moved, 6, 1) != calibration_key(cal, 6, 1)


def test_the_features_of_several_metrics_are_each_experiments_curve_per_metric():
    """Experiment x: turnaround 10 -> 20 published, 12 -> 11 simulated; attempts 5 -> 9 and 4 -> 8;
    experiment y's single point has no curve."""
    from simcore.report.calibration import features

    points = pd.DataFrame({"experiment": ["x", "x", "x", "x", "y"], "topology": ["a"] * 5,
                           "metric": ["t", "t", "n", "n", "t"], "n_tasks": [50, 400, 50, 400, 100],
                           "published": [10.0, 20.0, 5.0, 9.0, 3.0], "simulated": [12.0, 11.0, 4.0, 8.0, 3.0]})
    assert features(points, "topology") == [("x, t: over the load", "rises", "falls"),
                                            ("x, n: over the load", "rises", "rises")]


def test_a_reading_may_not_set_a_quantity_the_calibration_fits(tmp_path):
    """corr05-control fits memory_stall_fraction: a reading of it would override the fitted value
    in the judged experiment's own cell; the control is read with 'calibration' instead."""
    config = _corr05_tree(tmp_path)
    data = yaml.safe_load((ROOT / "config/experiments/corr05-fig9-control.yaml").read_text())
    path = config / "experiments" / "corr05-fig9-control.yaml"
    said = "corr05 section 2.2: a task far from its memory runs slower (a test)"
    stall = [{"value": 0.25, "support": said}, {"value": 1.0, "support": said}]
    path.write_text(yaml.safe_dump({**data, "readings": {"memory_stall_fraction": stall}}, sort_keys=False))
    with pytest.raises(InputError, match=r"readings.memory_stall_fraction': memory_stall_fraction is fitted by "
                                         r"calibration 'corr05-control'"):
        load_spec(path)


AMIR = ROOT / "config" / "calibration" / "amir-control.yaml"


def test_two_controls_are_fitted_on_their_points_in_one_cell_the_untested_ones_only_when_said(tmp_path):
    """amir-control: PVM's and Mosix's Table 2 levels, by execution and by job (the sums' quotient
    of slowdown_sum over jobs), all in amir-table2's one cell, held out by metric. PVM's levels
    are marked untested in amir-table2: without take_untested there is no PVM point, which is one
    sentence; controls without the target's baseline, PVM, are refused."""
    cal = load_calibration(AMIR, ROOT / "config" / "experiments")
    assert [(p.policy, p.metric, p.value, p.ratio, p.cell) for p in cal.points] == [
        ("pvm", "mean_slowdown", 14.3338, (), 0), ("mosix", "mean_slowdown", 8.55676, (), 0),
        ("pvm", "slowdown_by_job", 15.4044, ("slowdown_sum", "jobs"), 0),
        ("mosix", "slowdown_by_job", 9.4208, ("slowdown_sum", "jobs"), 0)]
    assert cal.groups() == ["mean_slowdown", "slowdown_by_job"] and cal.policy == "pvm, mosix"
    with pytest.raises(InputError, match="gives no published point of pvm and mean_slowdown"):
        load_calibration(_edited(tmp_path, lambda d: d.pop("take_untested"), AMIR), ROOT / "config" / "experiments")
    with pytest.raises(InputError, match="key 'policy' is mosix, but target amir-table2 has baseline 'pvm'"):
        load_calibration(_edited(tmp_path, lambda d: d.update(policy="mosix"), AMIR), ROOT / "config" / "experiments")
    with pytest.raises(InputError, match="key 'holdout'"):
        load_calibration(
            _edited(tmp_path, lambda d: d.update(metric="mean_slowdown"), AMIR), ROOT / "config" / "experiments"
        )


BARAK96 = ROOT / "config" / "calibration" / "barak96-control.yaml"


def test_a_calibration_restricted_to_some_cells_takes_only_their_points(tmp_path):
    """barak96-control: MOSIX's and PVM's Table 1 times at 1, 2, 4, 8 and 16 processes only (the
    points above 16 are left to the claims), one cell per size, held out by size. Without
    ``where`` every MOSIX point (19) and the PVM points not marked untested enter; a ``where``
    without its reason, or on a value outside the parameter's domain, is one sentence."""
    cal = load_calibration(BARAK96, ROOT / "config" / "experiments")
    assert [(p.policy, p.params["n_procs"]) for p in cal.points] == [
        (policy, n) for n in (1, 2, 4, 8, 16) for policy in ("mosix", "pvm")]
    assert cal.groups() == ["1", "2", "4", "8", "16"] and len(cal.cells) == 5
    every = load_calibration(_edited(tmp_path, lambda d: d.pop("where"), BARAK96), ROOT / "config" / "experiments")
    assert sum(p.policy == "mosix" for p in every.points) == 19
    assert sorted({p.params["n_procs"] for p in every.points if p.policy == "pvm"}) == [
        1, 2, 4, 8, 16, 17, 20, 24, 25, 27, 31, 32, 33, 36, 38, 40, 43, 47, 48]
    with pytest.raises(InputError, match="key 'where' must map parameters to lists of values and say why"):
        load_calibration(_edited(tmp_path, lambda d: d["where"].pop("why"), BARAK96), ROOT / "config" / "experiments")
    with pytest.raises(InputError, match=r"key 'where\.n_procs'"):
        load_calibration(
            _edited(tmp_path, lambda d: d["where"].update(n_procs=[0]), BARAK96), ROOT / "config" / "experiments"
        )


def test_the_controls_run_on_one_workload_and_a_ratio_point_is_the_quotient_of_sums(monkeypatch):
    """Two replications of amir-control's cell ask for every control's metrics at once (one run,
    one workload, its seeds the cell's). PVM's slowdowns 10 and 30 over 1 and 3 jobs with slowdown
    sums 10 and 90: by execution the mean (10 + 30) / 2 = 20, by job (10 + 90) / (1 + 3) = 25, not
    the mean of the quotients (10 + 30) / 2; Mosix likewise from 4 and 8 (sums 4 and 24 over 1 and 3
    jobs): 6 and 7."""
    calls = []
    rows = {
        0: {"pvm": (10.0, 10.0, 1.0), "mosix": (4.0, 4.0, 1.0)},
        1: {"pvm": (30.0, 90.0, 3.0), "mosix": (8.0, 24.0, 3.0)},
    }
    names = {"mean_slowdown": 0, "slowdown_sum": 1, "jobs": 2}

    def run(args):
        _, _, policies, wanted, seed = args
        calls.append((policies, seed))
        return [rows[seed[-1]][policy][names[m]] for policy, m in wanted]

    monkeypatch.setattr(F, "_run_one", run)
    cal = load_calibration(AMIR, ROOT / "config" / "experiments")
    with F.Evaluator(cal, 2, 9) as ev:
        means = ev.means([{"mean_interarrival": 10.0}], [0, 1, 2, 3])[0]
    assert calls == [(["pvm", "mosix"], (9, "amir-control", 0, 0)), (["pvm", "mosix"], (9, "amir-control", 0, 1))]
    assert list(means) == [20.0, 6.0, 25.0, 7.0]


def test_a_calibration_page_without_its_fit_is_one_sentence(tmp_path, capsys):
    """`simcore calibration-report` on a results folder that holds no fit of the calibration:
    exit 2, one sentence naming the folder and the command that makes the fit, no page written."""
    tex, figure = tmp_path / "c.tex", tmp_path / "c.pdf"
    assert main(["calibration-report", "amir-control", "--results", str(tmp_path), "--tex", str(tex),
                 "--figure", str(figure)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        len(err.splitlines()) == 1 and str(tmp_path / "amir-control") in err and "simcore calibrate amir-control" in err
    )
    assert not tex.exists() and not figure.exists()
