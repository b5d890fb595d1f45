"""Shared fixtures: the repository root and a runner for the `simcore` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
