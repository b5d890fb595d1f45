"""Judged readings (``judges``/``readings``): what a spec may say, how each judged claim is
evaluated under each reading, and how a claim stands by default and under its paper's best
supported reading set (docs/statistics.md, "Judged readings"; the sets: tests/test_reading_sets.py)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from simcore.errors import InputError
from simcore.experiments import load_spec
from simcore.experiments.spec import SpecError
from simcore.report.judged import standing
from simcore.stats.claims import evaluate_claims

SPEC = "corr05-fig9-readings"


@pytest.fixture
def tree(tmp_path, root):
    shutil.copytree(root / "config", tmp_path / "config")
    return tmp_path


def _edit(tree: Path, edit, name: str = SPEC) -> Path:
    path = tree / f"config/experiments/{name}.yaml"
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_judging_spec_takes_the_judged_experiments_values_and_crosses_its_grid_with_the_readings(root):
    """corr05-fig9-readings: corr05-fig9's ten loads times 2 x 2 x 2 readings, the judged
    experiment's own reading first; its published values and claims are corr05-fig9's, the claims
    kept apart (the scorecard counts them once, under corr05-fig9)."""
    spec, judged = (
        load_spec(root / f"config/experiments/{SPEC}.yaml"),
        load_spec(root / "config/experiments/corr05-fig9.yaml"),
    )
    assert len(spec.all_cells()) == 10 * 8
    assert spec.grid["n_tasks"] == judged.grid["n_tasks"]
    first = spec.reading_combinations()[0]
    assert {n: e["value"] for n, e in first.items()} == {n: judged.params()[n] for n in first}
    effects = [c for c in judged.data["claims"] if not c.get("point")]   # the published points stay with their figure
    assert spec.data["judged_claims"] == effects and "claims" not in spec.data
    assert spec.data["published"] == judged.data["published"]
    assert spec.params(spec.cell(0).values)["topology"] == "corr05-4x2"
    assert root / "config/experiments/corr05-fig9.yaml" in spec.files


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda d: d["readings"]["locality_scope"].reverse(),
            "readings.locality_scope': list each value once, corr05-fig9's own ('lifetime') first",
        ),
        (
            lambda d: d["readings"].update(n_tasks=[{"value": 50, "support": None}]),
            "readings.n_tasks': not a parameter of model 'numa' that 'corr05-fig9' holds fixed",
        ),
        (
            lambda d: d["readings"]["domain_init"].append({"value": "sparc", "support": None}),
            "readings.domain_init[2].value",
        ),
        (lambda d: d.update(judges="corr05-fig99"), "key 'judges': no other experiment 'corr05-fig99'"),
        (lambda d: d.update(judges="corr05-fig10-readings"), "itself judges another experiment or reads this one"),
        (lambda d: d.pop("readings"), "key 'readings' is missing"),
        (lambda d: d.update(grid={"n_tasks": [50]}), "key 'grid' must not be given: it comes from 'judges'"),
        (lambda d: d.update(baseline="multilevel"), "must have this experiment's model and baseline"),
        (
            lambda d: d.update(policies=["linux-2level", "multilevel", "conservative-soft"]),
            "key 'policies': 'conservative-soft' is not a policy of 'corr05-fig9'",
        ),
        (lambda d: d.update(policies=["linux-2level"]), "key 'policies': 'multilevel' is missing (claim"),
        (lambda d: d.update(metrics=[{"name": "migrations"}]), "key 'metrics': 'mean_turnaround_s' is missing"),
        (lambda d: d["output"].update(x="locality_scope"), "output.x': one of n_tasks, not 'locality_scope'"),
        (lambda d: d["output"].pop("x"), "output.x': one of n_tasks, not None"),
        (lambda d: d["output"].update(kind="lines"), "output.kind': 'judged' is the output of, and only of"),
        (lambda d: d["readings"]["active_balance"][0].update(support="too short"), "readings.active_balance.0.support"),
    ],
)
def test_a_bad_judging_spec_is_one_sentence_naming_the_key(tree, edit, message):
    path = _edit(tree, edit)
    with pytest.raises(InputError, match=re.escape(message)):   # SpecError, or a parameter's domain error
        load_spec(path)


def test_readings_named_in_a_file_are_shared_by_the_experiments_that_name_them(root):
    """mehta's Tables 3-5 are judged under one set of readings, config/readings/mehta-simulator.yaml:
    each experiment crosses its judged grid with those readings (2 rule scopes x 2 balancing
    processors x 2 controls = 8), runs
    only the policies its claims compare, and lists the file among its own (a change reruns it)."""
    spec = load_spec(root / "config/experiments/mehta-table4-w2-readings.yaml")
    judged = load_spec(root / "config/experiments/mehta-table4-w2.yaml")
    file = root / "config/readings/mehta-simulator.yaml"
    assert spec.data["readings"] == yaml.safe_load(file.read_text())
    assert len(spec.reading_combinations()) == 8
    assert len(spec.all_cells()) == 8 * len(judged.grid["n_tasks"])
    assert spec.policies == ["multilevel", "conservative-soft"] and len(judged.policies) == 3
    assert file in spec.files


def test_an_experiment_that_reads_anothers_data_is_judged_on_its_sources_model_values(root, tree):
    """amir-table4 reads amir-table2's executions: judging it takes amir-table2's preset values
    (through amir-table4) and lists amir-table2's files among its own. It reads the executions of
    amir-table2-readings, whose cells are its own (amir-table2's grid, none, crossed with the same
    readings, in the same order); a source with other cells is refused, and so is a judged
    experiment that reads the judging one's data (a cycle)."""
    spec = load_spec(root / "config/experiments/amir-table4-readings.yaml")
    source = load_spec(root / "config/experiments/amir-table2.yaml")
    runs = load_spec(root / "config/experiments/amir-table2-readings.yaml")
    assert spec.data["fixed"] == source.data["fixed"] and len(spec.all_cells()) == 4
    assert spec.params(spec.cell(0).values) == source.params(source.cell(0).values)
    assert root / "config/experiments/amir-table2.yaml" in spec.files and spec.source_id == "amir-table2-readings"
    assert [c.values for c in spec.all_cells()] == [c.values for c in runs.all_cells()]
    other = _edit(tree, lambda d: d.update(data_from="amir-readings"), "amir-table4-readings")
    with pytest.raises(InputError, match="key 'data_from': 'amir-readings' must have run this experiment's cells"):
        load_spec(other)
    path = _edit(tree, lambda d: d.update(data_from="amir-table4-readings"), "amir-table4")
    with pytest.raises(
        InputError, match="itself reads another experiment's data|itself judges another experiment or reads"
    ):
        load_spec(path.parent / "amir-table4-readings.yaml")


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "key 'readings': no readings file 'mehta-simulator'"),
        (
            {"rules_scope": [{"value": "all"}]},
            "mehta-simulator.yaml: key 'rules_scope.0': 'support' is a required property",
        ),
    ],
)
def test_a_bad_readings_file_is_one_sentence_naming_it(tree, content, message):
    file = tree / "config/readings/mehta-simulator.yaml"
    if content is None:
        file.unlink()
    else:
        file.write_text(yaml.safe_dump(content))
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(tree / "config/experiments/mehta-table3-w1-readings.yaml")


def test_readings_need_judges_and_judged_output_needs_judges(tree):
    path = _edit(
        tree, lambda d: d.update(readings={"locality_scope": [{"value": "cpu", "support": None}]}), "corr05-fig9"
    )
    with pytest.raises(SpecError, match="readings are judged only with 'judges'"):
        load_spec(path)


def _raw(spec, ratios: dict) -> pd.DataFrame:
    """Rows of every cell of ``spec`` (two replications): the baseline's time 10 and 12, the
    other policy's times those times ``ratios[reading index]`` (a number, or a function of the
    number of tasks) in the cells of that reading."""
    rows = []
    readings = [{n: e["value"] for n, e in c.items()} for c in spec.reading_combinations()]
    for cell in spec.all_cells():
        k = next(i for i, r in enumerate(readings) if all(cell.values[n] == v for n, v in r.items()))
        for rep, base in enumerate((10.0, 12.0)):
            ratio = ratios.get(k, 1.0)
            ratio = ratio(cell.values["n_tasks"]) if callable(ratio) else ratio
            for policy, t in (("linux-2level", base), ("multilevel", base * ratio)):
                rows.append({"cell": cell.index, **cell.values, "policy": policy, "rep": rep,
                             "mean_turnaround_s": t, "mean_migrations": 1.0, "mean_migration_level": 1.0,
                             "home_return_share": 0.5, "share_level_0": 0.5, "active_pushes": 0.0,
                             "lb_attempts_per_s": 10.0})
    return pd.DataFrame(rows)


def test_each_judged_claim_is_evaluated_in_the_cells_of_each_reading(root):
    """Replications whose ratio multilevel / 2 levels is exactly 0.95 in every cell of reading 3
    and exactly 1.10 in every cell of reading 5 (1 elsewhere; two replications, so the ratio's
    interval has zero width). multilevel-better-light (ratio below 1 at 50 and 100 tasks, paper
    0.948 and 0.991) would be 'larger than published' under reading 3 (0.95 against 0.991: effect
    5.1% against 0.9%, beyond a quarter), but the same 5% gain holds from 150 tasks on, where the
    paper's curve has the hierarchy slower: 'not specific'; under reading 5 it is contradicted,
    and under the others absent. multilevel-worse-heavy (above 1 from 150 tasks, paper up to 1.112) is
    contradicted under reading 3, and under reading 5 reproduced where 1.10 is within a quarter of
    the paper's effect. Rows carry the reading, its support and whether it is the default."""
    spec = load_spec(root / f"config/experiments/{SPEC}.yaml")
    out = evaluate_claims(spec, _raw(spec, {3: 0.95, 5: 1.10}))
    combos = spec.reading_combinations()
    assert len(out) == 2 * len(combos)
    rows = {(r.judged_claim, r.reading): r for r in out.itertuples()}
    from simcore.stats.claims import reading_text
    light = [rows[("multilevel-better-light", reading_text(c))] for c in combos]
    heavy = [rows[("multilevel-worse-heavy", reading_text(c))] for c in combos]
    assert [r.verdict for r in light] == ["absent"] * 3 + ["not specific", "absent", "contradicted", "absent", "absent"]
    assert heavy[3].verdict == "contradicted" and heavy[0].verdict == "absent"
    assert [r.default_reading for r in light] == [True] + [False] * 7
    assert [r.supported for r in light] == [all(e["support"] for e in c.values()) for c in combos]
    assert light[3].claim == f"multilevel-better-light | {reading_text(combos[3])}"
    assert set(out.judged) == {"corr05-fig9"} and (out.cells == [2, 8] * 8).all()


def test_a_readings_curve_is_its_own_cells_not_another_readings(root):
    """Reading 1 has the paper's shape (multilevel / 2 levels 0.95 up to 100 tasks, 1.10 from 150:
    multilevel-worse-heavy 'larger than published' against the paper's 1.015 at 150); reading 5 is
    slower everywhere (1.10): 'not specific', its light loads slower where the paper's are faster.
    Reading 1's light cells decide for reading 1 alone: reading 5's slower light cells are not its."""
    spec = load_spec(root / f"config/experiments/{SPEC}.yaml")
    out = evaluate_claims(spec, _raw(spec, {1: lambda n: 0.95 if n <= 100 else 1.10, 5: 1.10}))
    heavy = out[out.judged_claim == "multilevel-worse-heavy"].verdict.tolist()
    assert heavy[1] == "larger than published" and heavy[5] == "not specific"


def test_a_claim_stands_by_its_default_verdict_and_its_verdict_under_the_best_set():
    """A claim reproduced by default is 'reproduced with magnitude' (with a published effect) or
    'reproduced direction' (a direction claim), whatever the set says; a calibrated one stays
    calibrated; one not reproduced by default is 'explained' only when its paper's best set
    reproduces it (an 'absent', a 'larger than published' alike); otherwise smaller or larger than
    published is 'other size' (not for a claim of a value, which has no direction) and anything else
    'not reproduced', also when no set judges it (None)."""
    assert standing("reproduced", "contradicted") == "reproduced with magnitude"
    assert standing("reproduced", None, magnitude=False) == "reproduced direction"
    assert standing("calibrated", "reproduced") == "calibrated"
    assert standing("absent", "reproduced") == standing("larger than published", "reproduced") == "explained"
    assert standing("smaller than published", "inconclusive") == standing("larger than published", None) == "other size"
    assert standing("negligible", "smaller than published") == standing("contradicted", None) == "not reproduced"
    # a claim of one value (a published point) has no direction: off the paper's number, not reproduced
    assert standing("smaller than published", None, direction=False) == "not reproduced"


def test_a_readings_rows_are_found_whatever_type_the_table_read_its_values_back_as():
    """A CSV reads the values 0.0 and 5.0 of a reading back as the integers 0 and 5, and False as a
    boolean: the rows of reading (migration_cost 5.0, active_balance False, domain_init x86_64) are
    still found, and only they."""
    from simcore.report.judged import rows_of_reading

    frame = pd.DataFrame({"migration_cost": [0, 5, 5, 0], "active_balance": [False, False, True, False],
                          "domain_init": ["x86_64-2.6.12", "x86_64-2.6.12", "x86_64-2.6.12", "ia64-2.6.12"],
                          "mean": [1.0, 2.0, 3.0, 4.0]})
    reading = {"migration_cost": {"value": 5.0}, "active_balance": {"value": False},
               "domain_init": {"value": "x86_64-2.6.12"}}
    assert rows_of_reading(frame, reading)["mean"].tolist() == [2.0]
    assert rows_of_reading(frame, {"migration_cost": {"value": 0.0}})["mean"].tolist() == [1.0, 4.0]


def test_a_judged_experiment_without_a_grid_is_judged_reading_by_reading(root, tmp_path):
    """mehta-table2 has no grid: its judging experiment has the 8 readings' cells only, no
    output.x (naming one is refused), and draws one point per reading, its interval as an error
    bar: reading k's ratio hard/Linux of the share at level I is 0.5 + k / 100 here, and so is the
    k-th point; the diagnostics table has no load column."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simcore.report.judged import draw, table

    spec = load_spec(root / "config/experiments/mehta-table2-readings.yaml")
    assert len(spec.all_cells()) == 8 and "x" not in spec["output"]
    rows = []
    for k, combo in enumerate(spec.reading_combinations()):
        values = {n: e["value"] for n, e in combo.items()}
        for policy in spec.policies:
            for metric in ("task_share_level_0", "share_level_0", "migrations"):
                ratio = 0.5 + k / 100 if policy != spec.baseline else 1.0
                rows.append({"cell": k, **values, "policy": policy, "metric": metric, "mean": 0.2 * ratio,
                             "ci_low": 0.1, "ci_high": 0.3, "ratio_mean": ratio, "ratio_low": ratio - 0.01,
                             "ratio_high": ratio + 0.01, "diff_mean": 0.0, "diff_low": -0.1, "diff_high": 0.1})
    (tmp_path / spec.id).mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / spec.id / "summary.csv", index=False)
    fig, axes = plt.subplots(1, 3)
    draw(spec, tmp_path, axes)
    points = [line.get_ydata()[0] for line in axes[0].get_lines() if len(line.get_xdata()) == 1
              and line.get_marker() == "o" and line.get_label() != "paper"]
    assert points == pytest.approx([0.5 + k / 100 for k in range(8)])
    assert axes[0].get_title().startswith("conservative, hard /")   # the first claim comparing two policies
    plt.close(fig)
    pd.DataFrame([{"judged_claim": "soft-fewer-farthest", "reading": "rules_scope = periodic", "supported": True,
                   "verdict": "reproduced", "statistic": "ratio", "estimate": 0.5, "ci_low": 0.4, "ci_high": 0.6}]
                 ).to_csv(tmp_path / spec.id / "claims.csv", index=False)
    _, diagnostics = table(spec, tmp_path)[0]
    tex = diagnostics.tex()
    assert diagnostics.header[0].startswith("Policy & ") and "number of tasks" not in tex and "n tasks" not in tex
    with pytest.raises(
        SpecError, match=re.escape("output.x': none (the judged experiment has no grid), not 'n_tasks'")
    ):
        load_spec(
            _edit(_copy_config(root, tmp_path), lambda d: d["output"].update(x="n_tasks"), "mehta-table2-readings")
        )


def _copy_config(root: Path, tmp_path: Path) -> Path:
    shutil.copytree(root / "config", tmp_path / "tree" / "config")
    return tmp_path / "tree"


def test_a_claim_about_the_baseline_alone_draws_its_value_and_its_own_home_share(root, tmp_path):
    """mehta-table1-8-2-3-io's one claim is Linux's own share of unsuccessful attempts: the left panel
    draws that share (0.9 + k / 1000 under reading k) beside the paper's 0.359, the middle one
    Linux's share of CPU time at home (0.8 here), not a difference with itself."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simcore.report.judged import draw

    spec = load_spec(root / "config/experiments/mehta-table1-8-2-3-io-readings.yaml")
    rows = []
    for k, combo in enumerate(spec.reading_combinations()):
        values = {n: e["value"] for n, e in combo.items()}
        for metric, mean in (("lb_no_imbalance_share", 0.9 + k / 1000), ("share_level_0", 0.8)):
            rows.append({"cell": k, **values, "policy": "multilevel", "metric": metric, "mean": mean,
                         "ci_low": mean - 0.01, "ci_high": mean + 0.01})
    (tmp_path / spec.id).mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / spec.id / "summary.csv", index=False)
    fig, axes = plt.subplots(1, 3)
    draw(spec, tmp_path, axes)

    def points(ax):
        return [
            line.get_ydata()[0] for line in ax.get_lines() if len(line.get_xdata()) == 1 and line.get_marker() == "o"
        ]

    assert points(axes[0]) == pytest.approx([0.9 + k / 1000 for k in range(8)] + [0.359])   # the paper's last
    assert points(axes[1]) == pytest.approx([0.8] * 8) and axes[1].get_ylabel() == "home-node CPU share"
    plt.close(fig)


def test_a_model_without_a_home_node_draws_the_policys_own_level_in_the_middle(root, tmp_path):
    """barak96-hetero-readings (the cluster measures no home-node share): left, PVM over MOSIX per
    reading along the number of processes (2 + k); middle, PVM's own execution time (300 (k + 1)),
    not an empty panel."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simcore.report.judged import draw

    spec = load_spec(root / "config/experiments/barak96-hetero-readings.yaml")
    rows = []
    for k, combo in enumerate(spec.reading_combinations()):
        for n in (16, 33):
            values = {**{name: e["value"] for name, e in combo.items()}, "n_procs": n}
            rows += [
                {
                    "cell": 2 * k + (n == 33),
                    **values,
                    "policy": "pvm",
                    "metric": "makespan",
                    "mean": 300.0 * (k + 1),
                    "ci_low": 290.0,
                    "ci_high": 310.0,
                    "ratio_mean": 2.0 + k,
                    "ratio_low": 1.9 + k,
                    "ratio_high": 2.1 + k,
                }
            ]
    (tmp_path / spec.id).mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / spec.id / "summary.csv", index=False)
    fig, axes = plt.subplots(1, 3)
    draw(spec, tmp_path, axes)
    def readings(ax):
        return [list(line.get_ydata()) for line in ax.get_lines() if line.get_label() in ("listed", "slowest-first")]

    assert readings(axes[0]) == [[2.0, 2.0], [3.0, 3.0]]
    assert [list(line.get_ydata()) for line in axes[1].get_lines()] == [[300.0, 300.0], [600.0, 600.0]]
    assert axes[1].get_ylabel() == "execution time" and axes[1].get_title() == "PVM"
    plt.close(fig)
