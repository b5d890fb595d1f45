"""The committed reference names only commits a reader can check out, and its README is made
from its files; save-reference refuses a run of any other commit."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd

from simcore.experiments.provenance import unreachable_reason
from simcore.report.reference import named_commits, reference_readme

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "results" / "reference"


def test_every_commit_the_reference_names_is_in_the_branch_history():
    """Each provenance's commit and each jobs file's commit is HEAD or an ancestor of it."""
    named = named_commits(REFERENCE)
    assert len(named) >= 2      # the experiments' commits and the end-to-end runs' jobs files
    bad = {c: (where[:2], unreachable_reason(c)) for c, where in named.items() if unreachable_reason(c)}
    assert not bad, bad


def test_the_reference_readme_is_made_from_its_files():
    assert (REFERENCE / "README.md").read_text() == reference_readme(REFERENCE)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def _commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name)
    _git(repo, "add", name)
    _git(repo, "commit", "-q", "-m", name)
    return _git(repo, "rev-parse", "--short=12", "HEAD")


def test_a_commit_is_recordable_only_on_the_branch_and_clean(tmp_path):
    """History a - b on one branch, a - c on another, HEAD at c: a and c (HEAD itself) may be
    named; b (another branch), c-dirty (uncommitted changes), 'unknown' and a made-up hash not."""
    _git(tmp_path, "init", "-q", "-b", "main")
    a = _commit(tmp_path, "a")
    b = _commit(tmp_path, "b")
    _git(tmp_path, "checkout", "-q", "-b", "other", a)
    c = _commit(tmp_path, "c")
    assert unreachable_reason(a, tmp_path) is None and unreachable_reason(c, tmp_path) is None
    assert "not in the history" in unreachable_reason(b, tmp_path)
    assert "uncommitted" in unreachable_reason(f"{c}-dirty", tmp_path)
    for made_up in ("unknown", "4840c8f34c31"):
        assert "not in the history" in unreachable_reason(made_up, tmp_path)


def _run(folder: Path, commit: str) -> Path:
    """A full run of amir-table2 whose provenance names ``commit``."""
    (folder / "amir-table2").mkdir(parents=True)
    (folder / "scale.txt").write_text('"full"')
    (folder / "amir-table2/summary.csv").write_text("experiment\namir-table2\n")
    pd.DataFrame({"experiment": ["amir-table2"], "claim": ["new"]}).to_csv(
        folder / "amir-table2/claims.csv", index=False
    )
    (folder / "amir-table2/provenance.json").write_text(json.dumps({"commit": commit}))
    return folder


def test_save_reference_refuses_a_run_of_a_commit_outside_the_history(simcore_cli, tmp_path):
    """One sentence naming the provenance file and its key, exit 2, the reference untouched;
    the same run naming HEAD is saved, and the README is made again from the folder."""
    ref = _run(tmp_path / "ref", _git(ROOT, "rev-parse", "--short=12", "HEAD"))
    (ref / "README.md").write_text("old")
    before = {p: p.read_bytes() for p in ref.rglob("*") if p.is_file()}
    for commit in ("4840c8f34c31", "0123abcd-dirty"):
        run = _run(tmp_path / commit, commit)
        proc = simcore_cli("save-reference", "--results", run, "--benchmarks", tmp_path, "--out", ref,
                           "--experiments", "amir-table2")
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "amir-table2/provenance.json: key 'commit'" in proc.stderr and commit in proc.stderr
        assert {p: p.read_bytes() for p in ref.rglob("*") if p.is_file()} == before
    good = _run(tmp_path / "good", _git(ROOT, "rev-parse", "--short=12", "HEAD"))
    proc = simcore_cli("save-reference", "--results", good, "--benchmarks", tmp_path, "--out", ref,
                       "--experiments", "amir-table2")
    assert proc.returncode == 0, proc.stderr
    assert (ref / "README.md").read_text() == reference_readme(ref)
