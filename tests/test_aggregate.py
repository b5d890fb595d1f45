"""Summary and claims on a toy model whose answers are known exactly."""

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from simcore import models
from simcore.experiments import load_spec
from simcore.experiments.aggregate import aggregate
from simcore.experiments.runner import run_batch

SPEC = {
    "id": "toy-table1", "paper": "amir", "title": "toy", "source": "Table 1", "model": "toy",
    "grid": {"mu": [1.0, 100.0]}, "policies": ["base", "worse"], "baseline": "base",
    "metrics": [{"name": "x"}, {"name": "x_by_den", "ratio": ["num", "den"]}],
    "scales": {"smoke": {"replications": 5}, "quick": {"replications": 20}, "full": {"replications": 40}},
    "confidence": 0.9, "output": {"kind": "table"},
    "published": [{"policy": "worse", "metric": "x", "value": 12.0, "source": "Table 1", "where": {"mu": 1.0}}],
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
        run_batch(spec, cell.index, range(40), 5).to_parquet(path)
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
    prov = json.loads((tmp / "out/provenance.json").read_text())
    assert prov["replications_per_cell"] == 40 and prov["cells"] == 2 and prov["root_seed"] == 5
    assert (tmp / "out/replications.csv").exists() and (tmp / "out/claims.csv").exists()


def test_aggregate_refuses_duplicated_replications(toy):
    spec, tmp = toy
    path = tmp / "raw.parquet"
    run_batch(spec, 0, range(3), 5).to_parquet(path)
    with pytest.raises(ValueError, match="two batch files"):
        aggregate(spec, [path, path], tmp / "out", "full", 5, tmp / "config.yaml")
    assert not (tmp / "out/summary.csv").exists()


def test_simulations_depend_on_the_model_code():
    """The workflow's simulation fingerprint covers the code and data a model's results come from."""
    from simcore.experiments.provenance import code_fingerprint, fingerprint_files

    names = {p.as_posix().split("numa-lb-repro/")[-1] for p in fingerprint_files("numa")}
    for part in ("simcore/models/numa/balancer.py", "simcore/core/engine.py", "simcore/topology/domains.py",
                 "config/topologies/corr05-4x2.yaml", "simcore/experiments/runner.py"):
        assert any(n.endswith(part) for n in names), part
    assert not any("models/cluster" in n for n in names)
    assert code_fingerprint("numa") != code_fingerprint("cluster")
    smk = (Path(__file__).resolve().parents[1] / "workflow/rules/common.smk").read_text()
    assert '"code": code_fingerprint(spec["model"])' in smk


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
