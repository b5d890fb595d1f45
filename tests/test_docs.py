"""The repository stands alone: no file points outside it, and the documentation's links resolve."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".md", ".tex", ".yaml", ".yml", ".smk", ".nix", ".toml", ".sh", ".ipynb"}
TEXT_NAMES = {"Makefile", "Snakefile"}
# Written in pieces so that this file does not match itself.
OUTSIDE = ("../" + "shared", "shared" + "/reference", "shared" + "/DESIGN", "DESIGN" + ".md")
SKIP_DIRS = {".git", ".venv", ".snakemake", "results", "logs", "build", "figures", "tables", "generated"}

MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_PATH = re.compile(r"\bdocs/[\w./-]+\.md\b")
BACKTICKED_DOCS = re.compile(r"`(docs/[^`\s]+\.md)`")


def tracked_files() -> list[Path]:
    """The repository's files: git's list, or a walk of the tree outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not SKIP_DIRS & set(p.relative_to(ROOT).parts)]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def text_files() -> list[Path]:
    return [p for p in tracked_files() if p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES]


def docs_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    out, seen, fenced = set(), {}, False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        base = slug(line.lstrip("#"))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def inside(path: Path) -> bool:
    return path.resolve() == ROOT or ROOT in path.resolve().parents


def test_docs_exist():
    for name in ("README.md", "architecture.md", "statistics.md", "linux26-scheduler.md"):
        assert (ROOT / "docs" / name).is_file(), f"docs/{name} is missing"


def test_nothing_points_outside_the_repository():
    found = []
    for path in text_files():
        text = path.read_text(errors="replace")
        found += [f"{path.relative_to(ROOT)}: {word}" for word in OUTSIDE if word in text]
    assert not found, "files that point outside the repository:\n" + "\n".join(found)


@pytest.mark.parametrize("page", docs_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_name_files_in_the_repository(page):
    bad = []
    for target in MD_LINK.findall(page.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):   # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path) if path else page
        if not inside(dest) or not dest.exists():
            bad.append(f"{target}: no such file in the repository")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading '#{anchor}' in {dest.relative_to(ROOT)}")
    for target in BACKTICKED_DOCS.findall(page.read_text()):
        if not (ROOT / target).is_file():
            bad.append(f"`{target}`: no such file")
    assert not bad, f"{page.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_every_mention_of_a_docs_page_names_one_that_exists():
    bad = []
    for path in text_files():
        for target in DOCS_PATH.findall(path.read_text(errors="replace")):
            if not (ROOT / target).is_file():
                bad.append(f"{path.relative_to(ROOT)}: {target}")
    assert not bad, "mentions of missing docs pages:\n" + "\n".join(bad)


def test_the_citation_file_names_the_artifact_and_the_five_papers():
    """CITATION.cff (Citation File Format 1.2.0): the keys the format requires, the version and
    license pyproject.toml gives, and one reference per reproduced paper (six texts, five papers:
    amir's and barak96's share the cluster chapter)."""
    import tomllib

    from simcore.inputs import read_yaml

    root = Path(__file__).resolve().parents[1]
    cff = read_yaml(root / "CITATION.cff")
    assert cff["cff-version"] == "1.2.0" and {"message", "title", "authors"} <= set(cff)
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert str(cff["version"]) == project["version"] and cff["license"] == project["license"]["text"]
    titles = [r["title"] for r in cff["references"]]
    assert len(titles) == 6 and all(r["authors"] for r in cff["references"])
    assert any("Multilevel Load Balancing" in t for t in titles) and any("MOSIX" in t for t in titles)
