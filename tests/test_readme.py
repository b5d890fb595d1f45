"""Every count the README states is the tree's: experiments, SAN models and claims, the
replications of each scale, the notebooks, the mutation's scope. A count the tree cannot
check (the number of tests) is not stated."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from simcore.experiments.spec import load_spec
from simcore.experiments.targets import san_model_files
from simcore.report.scorecard import figure_claims, verdict_counts

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
WORDS = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def _specs():
    return [load_spec(p) for p in sorted((ROOT / "config/experiments").glob("*.yaml"))]


def test_the_artifact_appendix_counts_experiments_san_models_and_claims():
    """The claims are the scorecard's: every claim row of the committed reference, the SAN figure's included."""
    found = re.search(r"(\d+) experiment specs and (\d+) SAN models, (\d+) claims", README)
    assert found, "the artifact appendix states the experiments, SAN models and claims"
    specs = _specs()
    san = san_model_files(ROOT / "config/san")
    per_paper = verdict_counts([*specs, *figure_claims(ROOT / "config/san")], ROOT / "results/reference")
    claims = sum(sum(c.values()) for c in per_paper.values())
    assert tuple(map(int, found.groups())) == (len(specs), len(san), claims)


@pytest.mark.parametrize("scale", ["smoke", "quick", "full"])
def test_the_scales_table_gives_each_scales_replications(scale):
    """'A–B per cell (up to C)': the fewest and most replications per cell of an experiment that
    simulates, and the largest precision cap where it exceeds B."""
    row = next(line for line in README.splitlines() if line.startswith(f"| `{scale}`"))
    found = re.search(r"(\d+)–(\d+) per cell(?: \(up to (\d+)\))?", row)
    assert found, row
    specs = [s for s in _specs() if s.source_id == s.id]
    counts = [s.replications(scale) for s in specs]
    caps = [(s.precision(scale) or {}).get("max_replications", 0) for s in specs]
    cap = max(caps) if max(caps) > max(counts) else None
    assert (int(found[1]), int(found[2]), int(found[3]) if found[3] else None) == (min(counts), max(counts), cap)


def test_the_readme_names_every_notebook():
    """The Notebooks section's count and the layout's list are notebooks/*.ipynb."""
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    count = re.search(r"`notebooks/` holds (\w+) notebooks", README)
    assert count and WORDS.get(count[1], count[1]) == len(notebooks)
    layout = next(line for line in README.splitlines() if line.startswith("notebooks/ "))
    assert set(re.findall(r"[\w-]+\.ipynb", layout)) == set(notebooks), layout


def test_the_mutation_scope_is_pyprojects():
    """`make mutation` runs over exactly the folders pyproject.toml's only_mutate names."""
    scope = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]
    sentence = re.search(r"`make mutation` \(not part of `make test`\) runs .*? over\s+(.*?) with the fast tests",
                         README, re.S)
    assert sentence
    assert set(re.findall(r"`(simcore/[\w/]+)`", sentence[1])) == {s.removesuffix("/*") for s in scope}


def test_the_readme_states_no_test_count():
    """A count of tests changes with every commit and nothing keeps it true: the README gives none."""
    assert not re.search(r"\b\d[\d,]* tests\b", README)
