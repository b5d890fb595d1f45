"""requirements.lock is the single source of Python versions: pyproject.toml's pins agree with
it, it is closed under the installed packages' requirements, the virtualenv holds exactly its
versions, and `make lock` (uv) regenerates it unchanged."""
from __future__ import annotations

import importlib.metadata as md
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
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
    uv = ROOT / command[0] if not Path(command[0]).is_absolute() else Path(command[0])
    assert uv.exists(), "uv is not in the virtualenv; it is pinned in requirements.lock (make env)"
    done = subprocess.run([str(uv), *command[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "requirements.lock").read_text() == LOCK.read_text(), "requirements.lock is stale: run make lock"
