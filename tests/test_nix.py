"""flake.nix: it parses (with Debian's nix, installed here when root may), its Python covers every
package of pyproject.toml but the ones nix/versions.yaml says why it leaves out, and
docs/environment.md lists every version where the pinned nixpkgs differs from requirements.lock."""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import apt_install
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
FLAKE = (ROOT / "flake.nix").read_text(encoding="utf-8")
VERSIONS = yaml.safe_load((ROOT / "nix/versions.yaml").read_text(encoding="utf-8"))


def _pyproject_pins() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lines = list(data["project"]["dependencies"])
    lines += [x for extra in data["project"]["optional-dependencies"].values() for x in extra]
    lines += [x for group in data["dependency-groups"].values() for x in group]
    reqs = [Requirement(line) for line in lines]
    return {canonicalize_name(r.name): next(iter(r.specifier)).version for r in reqs}


def _nix() -> str:
    """Path of nix-instantiate, installing Debian's nix-bin when missing and root may."""
    if not shutil.which("nix-instantiate"):
        reason = apt_install(["nix-bin"])
        if reason:
            pytest.skip(reason)
    return shutil.which("nix-instantiate")


def flake_python_packages(text: str) -> list[str]:
    """The attribute names of the flake's `pythonPackages = ps: with ps; [ ... ];` list."""
    match = re.search(r"pythonPackages\s*=\s*ps:\s*with ps;\s*\[(.*?)\];", text, re.S)
    assert match, "flake.nix: no `pythonPackages = ps: with ps; [ ... ];`"
    return re.sub(r"#[^\n]*", "", match.group(1)).split()


def test_the_flake_parses():
    done = subprocess.run([_nix(), "--parse", str(ROOT / "flake.nix")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_flake_pins_nixpkgs_by_the_revision_the_version_table_was_read_at():
    (rev,) = re.findall(r'inputs\.nixpkgs\.url = "github:NixOS/nixpkgs/([0-9a-f]{40})"', FLAKE)
    assert rev == VERSIONS["rev"]


def test_the_flake_python_covers_pyproject_but_the_packages_it_says_why_it_leaves_out():
    pins = _pyproject_pins()
    table = VERSIONS["packages"]
    assert set(table) == set(pins), "nix/versions.yaml must list exactly pyproject.toml's packages"
    in_flake = set(flake_python_packages(FLAKE))
    for name, entry in table.items():
        if entry.get("not_in_flake"):
            assert entry["attribute"] not in in_flake
        else:
            assert entry["attribute"] in in_flake, f"flake.nix: python3Packages.{entry['attribute']} ({name}) missing"
    for name, entry in table.items():
        if entry.get("packaged_by_flake"):
            assert entry["version"] == pins[name] and f'version = "{pins[name]}";' in FLAKE, name


def test_the_flake_list_parser_reads_names_and_skips_comments():
    text = "pythonPackages = ps: with ps; [\n  simpy numpy  # the core\n  snakemake\n];"
    assert flake_python_packages(text) == ["simpy", "numpy", "snakemake"]


def test_the_environment_page_lists_every_version_nixpkgs_changes_and_every_one_not_known():
    pins = _pyproject_pins()
    readme = (ROOT / "docs/environment.md").read_text(encoding="utf-8")
    section = " ".join(readme.split("## Nix", 1)[1].split("\n## ", 1)[0].split())
    for name, entry in VERSIONS["packages"].items():
        version = entry["version"]
        if version is not None and str(version) != pins[name]:
            assert f"{name} {version} (lock {pins[name]})" in section, name
    unknown = sorted(n for n, e in VERSIONS["packages"].items() if e["version"] is None)
    assert "not known here: " + ", ".join(unknown) in section, unknown
