"""Shared fixtures: the repository root and a runner for the `simcore` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def copy_workflow(dest: Path, extra: tuple[str, ...] = ()) -> Path:
    """A copy of the workflow's sources (Snakefile, workflow/, config/, and ``extra``) in ``dest``,
    so a test's run never touches the user's results/; no __pycache__."""
    import shutil

    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "workflow", "config", *extra):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, dest / name)
    return dest


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def simcore_cli():
    """Run `simcore ARGS` in ``cwd`` (default: the repository) and return the completed process."""

    def run(*args, cwd=ROOT):
        return subprocess.run([sys.executable, "-m", "simcore.cli", *map(str, args)], cwd=cwd,
                              capture_output=True, text=True)

    return run


@pytest.fixture
def exponential_fit_model(tmp_path):
    """A two-state SAN model file whose 'published' curve is 1 - exp(-0.7 t), its rate lam set to
    0.2: a fit of lam should find 0.7."""
    import math

    times = [0, 0.5, 1, 2, 4]
    path = tmp_path / "exponential.yaml"
    path.write_text("parameters: {lam: 0.2}\nautomata: {M: [Run, Done]}\n"
                    "local:\n  - {automaton: M, from: Run, to: Done, rate: lam}\n"
                    "measures: {done: M == Done}\nsolve: {tol: 1.0e-12}\n"
                    f"published: {{measure: done, time: {times}, value: {[1 - math.exp(-0.7 * t) for t in times]}}}\n")
    return path


@pytest.fixture(autouse=True)
def _fresh_flag_cache():
    """Each test starts without has_flag's memoised answers, so it exercises the flag parsing it
    runs (make mutation forks a process whose cache earlier tests have filled)."""
    from simcore.models.numa import balancer

    balancer._FLAG_CACHE.clear()


def apt_install(packages: list[str]) -> str:
    """Install Debian packages for a test that needs a system service ('' when done, else why not):
    only as root with apt-get, so the tests that call it skip with the reason elsewhere."""
    import os
    import shutil
    import subprocess

    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return f"{', '.join(packages)}: not installed, and installing needs root and apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
    ):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode:
            return f"`{' '.join(command)}` failed: {done.stderr.strip()[-300:]}"
    return ""
