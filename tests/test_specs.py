"""Experiment specs: the catalogue validates; bad input exits 2 with one sentence and no output."""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from simcore.experiments import SpecError, load_spec


def test_every_spec_in_the_catalogue_validates(root):
    specs = [load_spec(p) for p in sorted((root / "config/experiments").glob("*.yaml"))]
    ids = {s.id for s in specs}
    assert {"amir-table2", "amir-table4", "amir-fig1", "amir-fig2", "amir-fig3", "amir-fig4",
            "barak96-table1", "barak96-fig2", "barak96-fig3", "barak96-hetero"} <= ids
    for spec in specs:
        assert spec.cells("smoke"), spec.id
        assert {c.index for c in spec.cells("smoke")} <= {c.index for c in spec.all_cells()}


def test_smoke_thins_the_grid_but_keeps_full_grid_indices(root):
    spec = load_spec(root / "config/experiments/barak96-table1.yaml")
    smoke = spec.cells("smoke")
    assert [c.values["n_procs"] for c in smoke] == [1, 16, 17, 31, 33, 48]
    full = {c.values["n_procs"]: c.index for c in spec.all_cells()}
    assert [c.index for c in smoke] == [full[n] for n in (1, 16, 17, 31, 33, 48)]


def test_preset_values_are_merged_and_spec_wins(root):
    spec = load_spec(root / "config/experiments/barak96-fig2.yaml")
    params = spec.params()
    assert params["demand_kind"] == "uniform"  # the spec's own fixed value
    assert params["workload"] == "batch"  # from the barak96 preset
    assert spec.params({"demand_max": 100})["demand_max"] == 100


def test_a_specs_fixed_value_beats_a_presets_assumption(root):
    """Assumptions override fixed values within one file, but never a spec's own fixed value with
    a preset's assumption (mehta's 'varying 50-400 ms' once ran as constant demand that way)."""
    for name, low, high in (("mehta-table4-w3", 50, 400), ("mehta-table5-w2", 100, 500)):
        params = load_spec(root / f"config/experiments/{name}.yaml").params()
        assert (params["demand_dist"], params["demand_min"], params["demand_max"]) == ("uniform", low, high)
    assert load_spec(root / "config/experiments/mehta-table3-w1.yaml").params()["arrival"] == "batch"
    assert load_spec(root / "config/experiments/mehta-table4-w1.yaml").params()["demand_dist"] == "constant"


def test_derived_spec_takes_cells_and_scales_from_its_source(root):
    spec = load_spec(root / "config/experiments/amir-table4.yaml")
    assert spec.source_id == "amir-table2"
    assert spec.replications("smoke") == load_spec(root / "config/experiments/amir-table2.yaml").replications("smoke")


@pytest.fixture
def spec_tree(tmp_path, root):
    """A writable copy of config/ to corrupt."""
    shutil.copytree(root / "config", tmp_path / "config")
    return tmp_path


def _corrupt(tree: Path, edit) -> Path:
    path = tree / "config/experiments/barak96-table1.yaml"
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


BAD_SPECS = {
    "missing key": (lambda d: d.pop("policies"), "'policies'"),
    "wrong type": (lambda d: d.update(confidence="high"), "'confidence'"),
    "unknown policy": (lambda d: d["policies"].append("telepathy"), "'policies.4'"),
    "empty grid": (lambda d: d["grid"].update(n_procs=[]), "'grid.n_procs'"),
    "unknown parameter": (lambda d: d.setdefault("fixed", {}).update(warp_speed=9), "'fixed.warp_speed'"),
    "bad baseline": (lambda d: d.update(baseline="oracle"), "'baseline'"),
    "precision cap not above the scale": (lambda d: d["scales"]["full"].update(precision={"max_replications": 30}),
                                          "'scales.full.precision.max_replications'"),
    "where off the grid": (lambda d: d["claims"][0]["where"].update(n_procs=[17, 18]), "'claims.0.where.n_procs'"),
    "where on no grid key": (lambda d: d["claims"][0]["where"].update(speed=2), "'claims.0.where.speed'"),
    "published where on no grid key": (lambda d: d["published"][0].update(where={"n_proc": 1}),
                                       "'published.0.where.n_proc'"),
    "published value no claim judges": (lambda d: d["published"].append(
        {"policy": "pvm", "metric": "makespan", "value": 300.0, "where": {"n_procs": 2}, "source": "x"}),
        "'published.76': no claim judges this value"),
    "untested value a claim judges": (lambda d: d["published"].append(
        {"policy": "pvm", "metric": "makespan", "value": 320.0, "where": {"n_procs": 17}, "source": "x",
         "untested": "a reason that does not hold"}), "'published.76.untested': the value is judged by claim"),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_bad_spec_exits_2_naming_file_and_key(case, spec_tree, simcore_cli):
    edit, key = BAD_SPECS[case]
    path = _corrupt(spec_tree, edit)
    out = spec_tree / "out.parquet"
    proc = simcore_cli("run", "barak96-table1", "--cell", 0, "--reps", "0:1", "--out", out, cwd=spec_tree)
    assert proc.returncode == 2, proc.stderr
    message = proc.stderr.strip()
    assert len(message.splitlines()) == 1
    assert str(path.relative_to(spec_tree)) in message and key in message
    assert not out.exists()
    assert not list(spec_tree.glob(".out.parquet*"))
    with pytest.raises(SpecError):
        load_spec(path)


def test_unknown_set_key_exits_2_and_writes_nothing(simcore_cli, tmp_path):
    out = tmp_path / "x.parquet"
    proc = simcore_cli("run", "barak96-table1", "--cell", 0, "--reps", "0:1", "--out", out, "--set", "warp_speed=3")
    assert proc.returncode == 2
    assert "'warp_speed'" in proc.stderr and "barak96-table1.yaml" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("args,fragment", [
    (["run", "no-such-exp", "--cell", "0", "--reps", "0:1", "--out", "x"], "no such experiment"),
    (["run", "barak96-table1", "--cell", "99", "--reps", "0:1", "--out", "x"], "cell 99"),
    (["run", "barak96-table1", "--cell", "0", "--reps", "3:1", "--out", "x"], "--reps"),
])
def test_bad_cli_arguments_exit_2(args, fragment, simcore_cli, tmp_path):
    proc = simcore_cli(*args)
    assert proc.returncode == 2
    assert fragment in proc.stderr


def test_empty_grid_mapping_is_rejected(spec_tree):
    path = _corrupt(spec_tree, lambda d: d.update(grid={}))
    with pytest.raises(SpecError, match="grid"):
        load_spec(path)


@pytest.mark.parametrize("text,key", [
    ("nope: []\n", "key 'nope' is not a paper id"),
    ("barak96: {source: x}\n", "key 'barak96' must be a list of results"),
    ("barak96:\n  - {source: Table 2, result: r}\n", "key 'barak96.0' must have exactly the keys source, result, why"),
    ("barak96:\n  - {source: Table 2, result: r, why: '  '}\n", "key 'barak96.0.why' must be a non-empty text"),
    ("- a list\n", "must map paper ids to lists of untested results"),
])
def test_a_bad_untested_file_is_one_sentence_naming_the_key(tmp_path, text, key):
    from simcore.experiments.spec import load_untested

    path = tmp_path / "untested.yaml"
    path.write_text(text)
    with pytest.raises(SpecError, match=re.escape(f"{path}: {key}")):
        load_untested(path)


def test_untested_results_are_listed_per_paper_with_their_reasons(tmp_path, root):
    """The shipped file loads; each result becomes one item of its paper's list, escaped."""
    from simcore.experiments.spec import load_untested
    from simcore.report.assumptions import untested_tex

    shipped = load_untested(root / "config/untested.yaml")
    assert shipped and all(items for items in shipped.values())
    path = tmp_path / "untested.yaml"
    path.write_text("barak96:\n  - {source: Table 2, result: 'times of 1_KB messages', why: 'a 50% overhead'}\n")
    tex = untested_tex(load_untested(path))
    assert r"\item \emph{Table 2}: times of 1\_KB messages \emph{Not tested:} a 50\% overhead" in tex
    assert "Barak" in tex and load_untested(tmp_path / "absent.yaml") == {}


def test_grid_together_pairs_values_and_crosses_them_with_the_rest(root):
    """zhou91-fig4: (W, S) in three pairs crossed with six pool sizes is 18 cells, each pair
    as written ((0.0025, 0.005), (0.005, 0.01), (0.01, 0.02)), pool size varying fastest."""
    spec = load_spec(root / "config/experiments/zhou91-fig4.yaml")
    cells = spec.all_cells()
    assert len(cells) == 18
    pairs = {(c.values["in_pool_factor"], c.values["spanning_factor"]) for c in cells}
    assert pairs == {(0.0025, 0.005), (0.005, 0.01), (0.01, 0.02)}
    assert [c.values["pool_size"] for c in cells[:6]] == [5, 10, 15, 20, 30, 60]
    assert cells[6].values["in_pool_factor"] == 0.005


def _refused(spec_tree, name: str, edit, message: str) -> None:
    """Spec ``name`` of the tree, changed by ``edit``, is refused with ``message``."""
    path = spec_tree / f"config/experiments/{name}.yaml"
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(path)


@pytest.mark.parametrize(
    "edit,message",
    [
        (
            lambda d: d["grid"].update(spanning_factor=[0.01, 0.02]),
            "grid_together': 'spanning_factor' is not a grid parameter with as many values",
        ),
        (
            lambda d: d.update(grid_together=["in_pool_factor", "load"]),
            "grid_together': 'load' is not a grid parameter",
        ),
        (
            lambda d: d["output"].update(series="pool_size"),
            "output.series': 'pool_size' is not a grid parameter other than output.x",
        ),
        (lambda d: d["output"].update(series="load"), "output.series': 'load' is not a grid parameter"),
    ],
)
def test_paired_grids_and_series_are_checked(spec_tree, edit, message):
    _refused(spec_tree, "zhou91-fig4", edit, message)


@pytest.mark.parametrize(
    "edit,message",
    [
        (
            lambda d: d["output"]["mark"].update(metric="oversize"),
            "output.mark.metric': 'oversize' is not a metric of model 'cluster'",
        ),
        (lambda d: d["output"]["mark"].pop("label"), "output.mark"),
    ],
)
def test_a_scatters_mark_must_be_a_metric_of_its_model_with_a_label(spec_tree, edit, message):
    _refused(spec_tree, "amir-fig2", edit, message)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["output"]["monitor"].update(cell=21), "output.monitor.cell': 21 is not a cell (the grid has 21)"),
    (lambda d: d["output"]["monitor"].update(policies=["sdca", "gang"]), "output.monitor.policies': 'gang' is not one"),
    (lambda d: d["output"]["monitor"].pop("why"), "output.monitor"),
    (lambda d: d["output"]["monitor"].update(period=0), "output.monitor.period"),
])
def test_a_queue_monitor_must_name_a_cell_and_policies_of_its_spec(spec_tree, edit, message):
    _refused(spec_tree, "solsona-fig6", edit, message)


def test_point_claims_carry_the_reason_their_spec_states_once():
    """mehta's Tables 3-5: every published turnaround (Linux's and the conservative balancer's, 90)
    is a 'value' claim, each with the reason `point_claims.if_not_reproduced` gives."""
    from simcore.experiments.spec import load_spec

    root = Path(__file__).resolve().parents[1] / "config/experiments"
    points = [(spec, c) for spec in (load_spec(p) for p in sorted(root.glob("mehta-table[345]-w?.yaml")))
              for c in spec.data["claims"] if c.get("point")]
    assert len(points) == 90
    assert all(c["kind"] == "value" and c["if_not_reproduced"] == spec.data["point_claims"]["if_not_reproduced"]
               for spec, c in points)


def test_point_claims_of_several_metrics_name_the_metric_in_id_and_text():
    """mehta's Table 1 (rows 1-5) lists two metrics for its points: each row's published total and
    count of attempts not succeeded (5 rows x 2) is a 'value' claim whose id and text name the
    metric; the share (judged by its own claim) and the numbers set beside for reading
    ('untested') are not points. Table 2's six level shares are six points, their text without
    the unit of a share."""
    from simcore.experiments.spec import load_spec

    root = Path(__file__).resolve().parents[1] / "config/experiments"
    points = [c for c in load_spec(root / "mehta-table1-s1-500ms.yaml").data["claims"] if c.get("point")]
    assert sorted(c["id"] for c in points) == sorted(
        f"point-multilevel-{m}-n-tasks-{n}"
        for m in ("lb-attempts", "lb-no-imbalance")
        for n in (50, 100, 150, 200, 400)
    )
    last = next(c for c in points if c["id"] == "point-multilevel-lb-attempts-n-tasks-400")
    assert (last["metric"], last["where"]) == ("lb_attempts", {"n_tasks": [400]})
    assert (
        last["text"]
        == "Table 1 (rows 1-5): Linux (one domain per level), load-balancing attempts, 804 at n_tasks = 400."
    )
    levels = [c for c in load_spec(root / "mehta-table2.yaml").data["claims"] if c.get("point")]
    assert [c["metric"] for c in levels] == [f"task_share_level_{k}" for k in range(6)]
    assert levels[0]["text"] == "Table 2: Linux (one domain per level), share of tasks at level I, 0.435 at every cell."
