"""Every notebook in notebooks/ executes from top to bottom without error, is stored without
outputs, and draws its random numbers from the configured root seed; the README's shell command
for running one works."""

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SIMCORE = [sys.executable, "-m", "simcore.cli"]
# a seed written into a notebook as a number instead of the configured one
LITERAL_SEED = re.compile(r"(seed\s*=\s*\d|replication_seed\(\s*\d|SeedSequence\(\s*\d|default_rng\(\s*\d)")


@pytest.fixture(scope="module")
def small_results(tmp_path_factory):
    """One real experiment aggregated at smoke scale: the layout results.ipynb reads."""
    out = tmp_path_factory.mktemp("results")
    raw = out / "raw.parquet"
    subprocess.run([*SIMCORE, "run", "solsona-table3", "--cell", "0", "--reps", "0:3", "--scale", "smoke",
                    "--out", str(raw), "--progress", "off"], cwd=ROOT, check=True, capture_output=True)
    subprocess.run([*SIMCORE, "aggregate", "solsona-table3", "--raw", str(raw), "--outdir",
                    str(out / "solsona-table3"), "--scale", "smoke"], cwd=ROOT, check=True, capture_output=True)
    return out


def test_there_are_notebooks():
    names = {p.stem for p in NOTEBOOKS}
    assert {"numa-model", "cluster-model", "pools-model", "cosched-model", "san-solver", "results"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs_and_uses_the_configured_seed(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name}: clear its outputs"
    literal = [m.group(0) for c in code for m in LITERAL_SEED.finditer(c.source)]
    assert not literal, f"{path.name}: seeds written as numbers ({literal}); use config/config.yaml's seed"


def test_literal_seed_pattern_catches_a_written_seed():
    assert LITERAL_SEED.search("run_batch(spec, root_seed=2026)")
    assert LITERAL_SEED.search("Streams(replication_seed(7, spec.id, 0, 0))")
    assert not LITERAL_SEED.search("run_batch(spec, root_seed=SEED)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path, monkeypatch, small_results):
    monkeypatch.setenv("NOTEBOOK_REPS", "3")
    monkeypatch.setenv("NOTEBOOK_RESULTS", str(small_results))
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors


def test_results_notebook_reads_the_folder_it_is_given(small_results, monkeypatch):
    monkeypatch.setenv("NOTEBOOK_RESULTS", str(small_results))
    nb = nbformat.read(ROOT / "notebooks/results.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    ).execute()
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    rows = len(pd.read_csv(small_results / "solsona-table3/summary.csv"))
    claims = len(pd.read_csv(small_results / "solsona-table3/claims.csv"))
    assert f"{small_results}: 1 experiments, {rows} summary rows, {claims} claims" in printed


def test_the_documented_command_runs_a_notebook_from_the_shell(tmp_path):
    """docs/running.md's nbconvert line, as printed there, executes a notebook into a new file."""
    readme = (ROOT / "docs/running.md").read_text(encoding="utf-8")
    (line,) = [m.group(1) for m in re.finditer(r"`(NOTEBOOK_REPS=\S+ \S*jupyter nbconvert [^`]+)`", readme)]
    out = tmp_path / "executed.ipynb"
    command = line.replace(".venv/bin/", str(Path(sys.executable).parent) + "/").replace("OUT.ipynb", str(out))
    subprocess.run(command, shell=True, cwd=ROOT, check=True, capture_output=True, timeout=600)
    executed = nbformat.read(out, as_version=4)
    assert any(c.outputs for c in executed.cells if c.cell_type == "code")
