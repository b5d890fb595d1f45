"""Summary and claims on a toy model whose answers are known exactly."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore import models
from simcore.errors import InputError
from simcore.experiments import load_spec
from simcore.experiments.aggregate import aggregate
from simcore.experiments.fingerprint import StaleResults, read_batch_fingerprint, simulation_fingerprint
from simcore.experiments.runner import run_batch, write_batch
from simcore.stats.summary import summarize

SPEC = {
    "id": "toy-table1", "paper": "amir", "title": "toy", "source": "Table 1", "model": "toy",
    "grid": {"mu": [1.0, 100.0]}, "policies": ["base", "worse"], "baseline": "base",
    "metrics": [{"name": "x"}, {"name": "x_by_den", "ratio": ["num", "den"]}],
    "scales": {"smoke": {"replications": 5}, "quick": {"replications": 20}, "full": {"replications": 40}},
    "confidence": 0.9, "output": {"kind": "table"},
    "published": [{"policy": "worse", "metric": "x", "value": 12.0, "source": "Table 1", "where": {"mu": 1.0},
                   "untested": "a toy value, shown beside the reproduced one"}],
    "claims": [
        {"id": "worse-is-worse", "text": "t", "kind": "greater", "metric": "x", "policy": "worse"},
        {"id": "worse-is-better", "text": "t", "kind": "less", "metric": "x", "policy": "worse"},
        {"id": "ratio", "text": "t", "kind": "ratio-above", "threshold": 1.5, "metric": "x", "policy": "worse",
         "where": {"mu": 1.0}},
    ],
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    monkeypatch.setitem(models.MODELS, "toy", "toy_model")
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    (tmp_path / "experiments").mkdir()
    path = tmp_path / "experiments/toy-table1.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    (tmp_path / "config.yaml").write_text("seed: 5\nscale: full\n")
    return load_spec(path), tmp_path


def test_summary_paired_difference_is_exact_under_common_random_numbers(toy):
    spec, tmp = toy
    paths = []
    for cell in spec.cells("full"):
        path = tmp / f"raw{cell.index}.parquet"
        write_batch(path, run_batch(spec, cell.index, range(40), 5), spec, 5)
        paths.append(path)
    result = aggregate(spec, paths, tmp / "out", "full", 5, tmp / "config.yaml")
    s = result["summary"].set_index(["cell", "policy", "metric"])
    worse = s.loc[(0, "worse", "x")]
    assert worse["diff_mean"] == pytest.approx(2.0)
    assert worse["diff_low"] == pytest.approx(2.0) and worse["diff_high"] == pytest.approx(2.0)
    assert worse["published"] == 12.0
    assert worse["rel_error"] == pytest.approx((worse["mean"] - 12.0) / 12.0)
    assert pd.isna(s.loc[(1, "worse", "x")]["published"])
    assert s.loc[(0, "worse", "x_by_den")]["diff_mean"] == pytest.approx(2.0)
    claims = result["claims"].set_index("claim")
    assert claims.loc["worse-is-worse", "verdict"] == "reproduced"
    assert claims.loc["worse-is-better", "verdict"] == "contradicted"
    assert claims.loc["ratio", "cells"] == 1  # only mu = 1 where the ratio is about 3
    assert claims.loc["ratio", "verdict"] == "reproduced"
    ratio = s.loc[(0, "worse", "x")]  # the claim tests the interval the summary reports
    assert (claims.loc["ratio", "ci_low"], claims.loc["ratio", "ci_high"]) == (ratio["ratio_low"], ratio["ratio_high"])
    prov = json.loads((tmp / "out/provenance.json").read_text())
    assert prov["replications_per_cell"] == 40 and prov["cells"] == 2 and prov["root_seed"] == 5
    assert (tmp / "out/replications.csv").exists() and (tmp / "out/claims.csv").exists()


positive = st.floats(1e-3, 1e3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(positive, positive, st.floats(1, 20)), min_size=2, max_size=12))
def test_summary_intervals_of_positive_metrics_never_reach_zero(toy, reps):
    """Means, ratio estimators and ratios policy/baseline of positive metrics: lower bounds > 0;
    the paired differences stay symmetric t-intervals."""
    spec, _ = toy
    rows = [{"cell": 0, "mu": 1.0, "policy": policy, "rep": r, "x": v, "num": v * den, "den": den, "events": 1}
            for r, (base, worse, den) in enumerate(reps) for policy, v in (("base", base), ("worse", worse))]
    s = summarize(spec, pd.DataFrame(rows))
    assert (s.ci_low > 0).all() and (s.ci_low <= s["mean"]).all() and (s["mean"] <= s.ci_high).all()
    worse = s[s.policy == "worse"]
    assert (worse.ratio_low > 0).all()
    assert np.allclose(worse.diff_high - worse.diff_mean, worse.diff_mean - worse.diff_low)


def test_summary_of_a_share_of_attempts_stays_in_the_unit_interval():
    """mehta Table 1 at smoke scale: nearly every attempt fails, in three replications."""
    spec = load_spec(Path(__file__).resolve().parents[1] / "config/experiments/mehta-table1-8-2-3-cpu.yaml")
    attempts, failed, migrations = [3050.0, 2980.0, 3120.0], [3049.0, 2980.0, 3117.0], [1.0, 0.0, 3.0]
    rows = [{"cell": cell, "n_tasks": n, "policy": policy, "rep": r, "lb_attempts": attempts[r],
             "lb_failed": failed[r], "lb_no_imbalance": failed[r] - 1, "lb_attempts_live": attempts[r] - 2000,
             "lb_no_imbalance_live": failed[r] - 2001, "refused_moves": 5.0 + r,
             "migrations": migrations[r], "mean_turnaround": 300.0 + r}
            for cell, n in enumerate(spec.grid["n_tasks"]) for policy in spec.policies for r in range(3)]
    s = summarize(spec, pd.DataFrame(rows)).set_index(["cell", "policy", "metric"])
    for share in ("lb_failed_share", "lb_no_imbalance_share", "lb_no_imbalance_live_share"):
        row = s.loc[(0, "multilevel", share)]
        assert 0 < row.ci_low < row["mean"] < row.ci_high < 1
    assert (s.ci_low > 0).all()


def test_aggregate_refuses_duplicated_replications(toy):
    spec, tmp = toy
    path = tmp / "raw.parquet"
    write_batch(path, run_batch(spec, 0, range(3), 5), spec, 5)
    with pytest.raises(InputError, match="appears in two batch files"):
        aggregate(spec, [path, path], tmp / "out", "full", 5, tmp / "config.yaml")
    assert not (tmp / "out/summary.csv").exists()


def test_simulations_depend_on_the_model_code():
    """The simulation fingerprint covers the code a model's results come from; the machines enter
    as built (the next test), not as the files of the topology package."""
    from simcore.experiments.fingerprint import code_fingerprint, fingerprint_files

    names = {p.as_posix() for p in fingerprint_files("numa")}
    for part in ("simcore/models/numa/balancer.py", "simcore/core/engine.py", "simcore/experiments/runner.py"):
        assert any(n.endswith(part) for n in names), part
    assert not any("models/cluster" in n or "topology" in n for n in names)
    assert code_fingerprint("numa") != code_fingerprint("cluster")


def _tree_yaml(path, name, rows, comment=""):
    body = ",\n  ".join("[" + ", ".join(map(str, r)) + "]" for r in rows)
    path.write_text(f"{comment}name: {name}\ndescription: d\nsource: s\ncpus_per_node: 2\ndistances: [\n  {body}]\n")
    return str(path)


def test_the_topology_part_is_the_machines_as_a_simulation_sees_them(tmp_path, monkeypatch):
    """A machine's digest is its data and its sched domains: the same machine written another way
    (a comment, flow style, another description) digests the same; one distance changed, or a
    node init's interval, digests otherwise. A spec's part names the machines of its cells (every
    machine of corr05-level's grid); a model that runs on no machine has a part that is not of
    any machine."""
    import yaml

    from simcore.experiments import load_spec
    from simcore.experiments.fingerprint import (
        TOPOLOGY_MODELS,
        _digest,
        _machines_named,
        machine_digest,
        topology_digest,
    )
    from simcore.topology import domains

    root = Path(__file__).resolve().parents[1]
    catalog = yaml.safe_load((root / "config/topologies/corr05-4x2.yaml").read_text())
    rows = catalog["distances"]
    same = _tree_yaml(tmp_path / "a.yaml", "corr05-4x2", rows, comment="# written by hand\n")
    assert machine_digest(same) == machine_digest(str(root / "config/topologies/corr05-4x2.yaml"))
    moved = [list(r) for r in rows]
    moved[0][3] = moved[3][0] = 31
    assert machine_digest(_tree_yaml(tmp_path / "b.yaml", "corr05-4x2", moved)) != machine_digest(same)
    machine_digest.cache_clear()
    monkeypatch.setitem(domains.NODE_INITS, "ia64-2.6.12", {**domains.SD_NODE_INIT_IA64, "min_interval": 81})
    tuned = machine_digest(same)
    monkeypatch.undo()
    machine_digest.cache_clear()
    assert tuned != machine_digest(same)
    machine_digest.cache_clear()

    level = load_spec(root / "config/experiments/corr05-level.yaml")
    assert _machines_named(level, level.params(None)) == ["altix-16x2", "corr05-4x2", "corr05-4x4", "superdome-16x4"]
    assert _machines_named(level, level.params({"topology": "mehta-s1"})) == sorted(
        _machines_named(level, level.params(None)) + ["mehta-s1"]
    )
    assert topology_digest(level) != topology_digest(load_spec(root / "config/experiments/corr05-fig9.yaml"))
    amir = load_spec(root / "config/experiments/amir-table2.yaml")
    assert amir["model"] not in TOPOLOGY_MODELS and topology_digest(amir) == _digest(None)


def test_every_model_that_reads_the_catalog_has_its_machines_in_its_fingerprint():
    """A model package (or the SAN package) that imports the topology package is listed in
    TOPOLOGY_MODELS, else its fingerprint would not change with the machines it runs on; no
    module shared by every model imports it."""
    from simcore.experiments.fingerprint import ROOT, TOPOLOGY_MODELS

    def reads(path):
        return "simcore.topology" in path.read_text()

    models = ROOT / "models"
    assert not any(reads(p) for p in models.glob("*.py"))
    readers = {p.relative_to(models).parts[0] for p in models.glob("*/**/*.py") if reads(p)}
    readers |= {"san"} if any(reads(p) for p in (ROOT / "san").glob("*.py")) else set()
    assert readers == {"numa", "san"} and readers <= set(TOPOLOGY_MODELS)


def test_san_results_and_fits_depend_on_the_code_they_run():
    """SAN results cover the SAN package and what corr05's generator imports from the models (its
    time slice, its domains); a recorded fit's key covers all of it but the SimPy cross-check and
    the solve/simulate commands, which a fit does not run."""
    from simcore.experiments.fingerprint import fit_files, san_files

    results = {p.as_posix() for p in san_files()}
    fits = {p.as_posix() for p in fit_files()}
    for part in ("simcore/san/solve.py", "simcore/san/corr05.py", "simcore/models/numa/timeslice.py",
                 "simcore/vocabulary/domains.py"):
        assert any(n.endswith(part) for n in results) and any(n.endswith(part) for n in fits), part
    for part in ("simcore/san/simulate.py", "simcore/san/compiled_walk.py", "simcore/san/walk_kernel.py",
                 "simcore/san/run.py"):
        assert any(n.endswith(part) for n in results) and not any(n.endswith(part) for n in fits), part
    assert not any("models/numa/balancer" in n or "models/numa/task.py" in n for n in results)


def test_san_results_and_fits_depend_on_the_catalog_machines(monkeypatch):
    """SAN results and recorded fits change with the catalog's machines as built."""
    from simcore.experiments import fingerprint

    before = fingerprint.code_fingerprint("san"), fingerprint.fit_fingerprint()
    fingerprint.code_fingerprint.cache_clear()
    monkeypatch.setattr(fingerprint, "catalog_digest", lambda: "another catalog")
    assert fingerprint.code_fingerprint("san") != before[0] and fingerprint.fit_fingerprint() != before[1]
    fingerprint.code_fingerprint.cache_clear()


def test_batch_files_carry_the_fingerprint_of_what_made_them(toy):
    """The parquet metadata holds the spec's fingerprint; a --set override or another seed is
    another fingerprint, part by part."""
    spec, tmp = toy
    path = tmp / "raw.parquet"
    write_batch(path, run_batch(spec, 0, range(2), 5), spec, 5)
    found = read_batch_fingerprint(path)
    assert found == simulation_fingerprint(spec, 5)
    other_seed, override = simulation_fingerprint(spec, 6), simulation_fingerprint(spec, 5, {"mu": 3.0})
    assert [k for k in found["parts"] if found["parts"][k] != other_seed["parts"][k]] == ["seed"]
    assert [k for k in found["parts"] if found["parts"][k] != override["parts"][k]] == ["params"]
    assert len({found["hash"], other_seed["hash"], override["hash"]}) == 3


def test_aggregate_refuses_stale_batches_and_names_them(toy):
    """A batch made under another seed, another spec value or with no fingerprint at all is
    refused before anything is written, and the message names the file and what changed."""
    spec, tmp = toy
    good, old_seed, bare = tmp / "good.parquet", tmp / "old-seed.parquet", tmp / "bare.parquet"
    write_batch(good, run_batch(spec, 0, range(3), 5), spec, 5)
    write_batch(old_seed, run_batch(spec, 1, range(3), 4), spec, 4)
    run_batch(spec, 1, range(3), 5).to_parquet(bare)
    with pytest.raises(StaleResults, match=r"old-seed\.parquet \(seed\)"):
        aggregate(spec, [good, old_seed], tmp / "out", "full", 5, tmp / "config.yaml")
    with pytest.raises(StaleResults, match=r"bare\.parquet \(no fingerprint\)"):
        aggregate(spec, [good, bare], tmp / "out", "full", 5, tmp / "config.yaml")
    data = yaml.safe_load(spec.path.read_text())
    data["grid"]["mu"] = [1.0, 50.0]
    spec.path.write_text(yaml.safe_dump(data))
    with pytest.raises(StaleResults, match=r"good\.parquet \(grid\)"):
        aggregate(load_spec(spec.path), [good], tmp / "out", "full", 5, tmp / "config.yaml")
    assert not (tmp / "out").exists()


@pytest.mark.slow
def test_aggregate_cli_exits_2_on_a_stale_batch(simcore_cli, tmp_path):
    """`simcore aggregate` on a batch simulated with another root seed: exit 2, one line."""
    raw = tmp_path / "raw.parquet"
    run = simcore_cli("run", "amir-table2", "--cell", 0, "--reps", "0:2", "--scale", "smoke", "--seed", 1,
                      "--out", raw)
    assert run.returncode == 0, run.stderr
    proc = simcore_cli("aggregate", "amir-table2", "--raw", raw, "--outdir", tmp_path / "out", "--scale", "smoke")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "raw.parquet (seed)" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_provenance_names_simcores_commit_when_run_outside_a_checkout(tmp_path, monkeypatch):
    """The workflow test runs in a copy outside git: the commit is that of the code that ran."""
    import subprocess

    from simcore.experiments.provenance import git_commit

    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True)
    if head.returncode:
        pytest.skip("simcore is not in a git checkout")
    monkeypatch.chdir(tmp_path)
    assert git_commit().split("-")[0] == head.stdout.strip()
    assert git_commit(tmp_path) == "unknown"


def test_outputs_appear_whole_with_the_usual_mode(tmp_path):
    """An atomic output keeps nothing behind on failure and is readable like any file on success."""
    import os

    from simcore.core.output import atomic_path, write_text

    out = tmp_path / "a.txt"
    write_text(out, "x")
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "b.txt") as tmp:
        tmp.write_text("half")
        raise RuntimeError
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
