"""The Snakemake workflow: lint, dry run of the full DAG, and the smoke scale end to end."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from pypdf import PdfReader

BIN = Path(sys.executable).parent


def _snakemake(cwd: Path, *args, timeout=1200):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([str(BIN / "snakemake"), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of the workflow's sources, so the test never touches the user's results/."""
    root = Path(__file__).resolve().parents[1]
    work = tmp_path_factory.mktemp("repro")
    for name in ("Snakefile", "workflow", "config"):
        src = root / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    shutil.copytree(root / "paper", work / "paper",
                    ignore=shutil.ignore_patterns("build", "figures", "tables", "generated"))
    return work


def test_lint_is_clean(workdir):
    proc = _snakemake(workdir, "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr


def test_full_dag_dry_run(workdir):
    proc = _snakemake(workdir, "-n", "--quiet", "rules", "--config", "scale=full")
    assert proc.returncode == 0, proc.stderr
    counts = dict(line.split()[:2] for line in proc.stdout.splitlines() if line.split()[:1] and
                  line.split()[0] in ("simulate", "aggregate", "figure", "table", "report"))
    assert int(counts["aggregate"]) == len(list((workdir / "config/experiments").glob("*.yaml")))
    assert 50 <= int(counts["simulate"]) <= 3000
    assert int(counts["report"]) == 1


@pytest.mark.workflow
def test_smoke_workflow_builds_report_with_scorecard(workdir):
    proc = _snakemake(workdir, "--profile", "workflow/profiles/ci")
    assert proc.returncode == 0, proc.stderr[-4000:]
    pdf = workdir / "paper/build/report.pdf"
    assert pdf.exists()
    pages = [page.extract_text() for page in PdfReader(pdf).pages]
    text = "\n".join(pages)
    assert "Scorecard" in text
    holes = [line for line in text.splitlines() if "??" in line]
    assert not holes, holes[:5]
    commits = {json.loads(p.read_text())["commit"] for p in workdir.glob("results/*/provenance.json")}
    assert "smoke" in pages[0] and "Not the artifact" in pages[0] and all(c in pages[0] for c in commits)
    assert "SAN solver: numerical solution against simulation" in text
    assert (workdir / "results/san/example/simulation.csv").exists()
    assert "Figure 8: the analytical model" in text and (workdir / "paper/figures/corr05-fig8.pdf").exists()
    fig8 = (workdir / "paper/generated/corr05-fig8.tex").read_text()
    assert r"\newcommand{\SanFigMachineA}{corr05-4x1}" in fig8 and r"\SanFigTable" in fig8
    fit = pd.read_csv(workdir / "results/san/corr05-fig8-2sched/fit.csv")
    assert fit.parameter[0] == "expired_wait" and 0.5 < fit.value[0] < 10
    claims = pd.concat(pd.read_csv(p) for p in workdir.glob("results/*/claims.csv"))
    assert len(claims) >= 15
    assert set(claims.verdict) <= {"reproduced", "not significant", "contradicted"}
    summary = pd.read_csv(workdir / "results/barak96-table1/summary.csv")
    assert summary["published"].notna().sum() == 6 * 4  # six smoke cells x four policies
    assert summary.groupby(["cell", "policy"]).size().eq(1).all()
