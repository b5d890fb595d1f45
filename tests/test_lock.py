"""requirements.lock is the single source of Python versions: pyproject.toml's pins agree with
it, it is closed under the installed packages' requirements, the virtualenv holds exactly its
versions, and `make lock` (uv) regenerates it unchanged; the conda environment of the workflow's
rules is the lock rendered, with no path relative to the env file."""
from __future__ import annotations

import importlib.metadata as md
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"


def lock_pins(text: str) -> dict[str, str]:
    """name -> version of every `name==version` line of a pip requirements file."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", f"requirements.lock: {line!r} is not an exact pin"
        name = canonicalize_name(req.name)
        assert name not in pins, f"requirements.lock pins {name} twice"
        pins[name] = spec.version
    return pins


def project_requirements() -> list[Requirement]:
    """Every requirement pyproject.toml states: dependencies, extras and dependency groups."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lines = list(data["project"]["dependencies"])
    for extra in data["project"]["optional-dependencies"].values():
        lines += extra
    for group in data.get("dependency-groups", {}).values():
        lines += group
    return [Requirement(line) for line in lines]


def test_lock_parser_rejects_a_range_and_a_duplicate():
    assert lock_pins("a==1\n  # via b\nB_c==2.0 ; python_version >= '3'\n") == {"a": "1", "b-c": "2.0"}
    with pytest.raises(AssertionError, match="exact pin"):
        lock_pins("a>=1\n")
    with pytest.raises(AssertionError, match="twice"):
        lock_pins("a==1\nA==2\n")


def test_every_pyproject_requirement_is_pinned_to_the_locked_version():
    pins = lock_pins(LOCK.read_text(encoding="utf-8"))
    for req in project_requirements():
        (spec,) = req.specifier
        assert spec.operator == "==", f"pyproject.toml: {req} is not pinned with =="
        name = canonicalize_name(req.name)
        assert pins.get(name) == spec.version, \
            f"pyproject.toml pins {req}, requirements.lock has {pins.get(name)}; run make lock"


def test_build_system_is_satisfied_by_the_lock():
    """The Makefile installs the package with --no-build-isolation, from the locked setuptools."""
    pins = lock_pins(LOCK.read_text(encoding="utf-8"))
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for line in data["build-system"]["requires"]:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in pins and req.specifier.contains(pins[name]), f"build-system {req}: lock has {pins.get(name)}"


def test_virtualenv_holds_exactly_the_locked_versions_and_the_lock_is_closed():
    if os.environ.get("NUMA_LB_NIX_PYTHON"):
        pytest.skip("Python from nixpkgs (nix develop): its versions differ from the lock, see nix/versions.yaml")
    pins = lock_pins(LOCK.read_text(encoding="utf-8"))
    for name, version in pins.items():
        assert md.version(name) == version, f"{name}: installed {md.version(name)}, locked {version}"
        for line in md.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                assert canonicalize_name(req.name) in pins, f"{name} needs {req.name}, which the lock leaves out"


def test_make_lock_regenerates_the_committed_lock(tmp_path):
    """`make lock`'s command on a copy gives the same file: the lock is what pyproject.toml implies.
    It asks the package index (as `make env` does), keeping every pin already in the lock."""
    printed = subprocess.run(["make", "-n", "--no-print-directory", "lock"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.replace("\\\n", " ")
    (command,) = [shlex.split(line) for line in printed.splitlines() if " pip compile " in line]
    assert Path(command[0]).name == "uv" and "requirements.lock" in command, command
    for name in ("pyproject.toml", "requirements.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    uv = ROOT / command[0] if (ROOT / command[0]).exists() else Path(shutil.which(command[0]) or command[0])
    assert uv.exists(), "uv is not in the virtualenv; it is pinned in requirements.lock (make env)"
    done = subprocess.run([str(uv), *command[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "requirements.lock").read_text() == LOCK.read_text(), "requirements.lock is stale: run make lock"


def _conda_env_module():
    spec = importlib.util.spec_from_file_location("conda_env", ROOT / "scripts/conda_env.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_conda_env_file_is_the_lock_rendered():
    """workflow/envs/simcore.yaml holds the lock's pins (so a new lock rebuilds the environment)."""
    conda_env = _conda_env_module()
    committed = conda_env.ENV_FILE.read_text(encoding="utf-8")
    assert committed == conda_env.render(LOCK.read_text(encoding="utf-8")), (
        "workflow/envs/simcore.yaml is stale: run make lock"
    )
    data = yaml.safe_load(committed)
    (pip,) = [d["pip"] for d in data["dependencies"] if isinstance(d, dict)]
    assert lock_pins("\n".join(p for p in pip if not p.startswith("-e"))) == lock_pins(LOCK.read_text(encoding="utf-8"))


def test_env_files_name_no_path_relative_to_themselves_and_pin_their_packages():
    """Snakemake copies an env file before conda reads it: a path relative to the file breaks."""
    for path in sorted((ROOT / "workflow/envs").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert "../" not in text and "./" not in text, f"{path.name}: relative path"
        conda = [d for d in yaml.safe_load(text)["dependencies"] if isinstance(d, str) and d != "pip"]
        assert conda and all(re.fullmatch(r"[a-z0-9-]+=[\w.]+", d) for d in conda), f"{path.name}: unpinned {conda}"


def test_pip_expands_the_project_root_the_env_file_installs_from(tmp_path, monkeypatch):
    """The env file's last line, as conda hands it to pip, installs this project."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(
        yaml.safe_load(_conda_env_module().ENV_FILE.read_text())["dependencies"][-1]["pip"][-1] + "\n"
    )
    monkeypatch.setenv("NUMA_LB_REPRO_ROOT", str(ROOT))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-build-isolation",
                           "--no-index", "--disable-pip-version-check", "-r", str(requirements)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Would install simcore-" in done.stdout, done.stdout + done.stderr

