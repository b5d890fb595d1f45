"""The tree passes ruff (pyproject.toml's [tool.ruff]: line length, import order, unused names, the
worst functions' complexity and length), as `make lint` checks it."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    """ruff from the virtualenv (its module), else from PATH (Nix's dev shell has it as a tool)."""
    ruff = [sys.executable, "-m", "ruff"] if importlib.util.find_spec("ruff") else [shutil.which("ruff") or "ruff"]
    run = subprocess.run([*ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
