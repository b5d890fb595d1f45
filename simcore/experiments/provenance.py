"""Provenance of one experiment's results: code, configuration, seeds, time, packages."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("simcore", "simpy", "numpy", "scipy", "numba", "llvmlite", "pandas", "pyarrow", "matplotlib", "snakemake")


def git_commit(root: Path | None = None) -> str:
    """The commit of the working tree at ``root`` (default: the current directory, else the one
    simcore runs from), with ``-dirty`` when it has uncommitted changes."""
    for where in [root] if root else [None, Path(__file__).resolve().parents[2]]:
        try:
            commit = _git(where, "rev-parse", "--short=12", "HEAD")
            dirty = bool(_git(where, "status", "--porcelain", "--untracked-files=no", "simcore", "config"))
        except (OSError, subprocess.CalledProcessError):
            continue
        return commit + ("-dirty" if dirty else "")
    return "unknown"


def _git(cwd: Path | None, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


REPOSITORY = Path(__file__).resolve().parents[2]    # the checkout simcore runs from


def unreachable_reason(commit: str, root: Path = REPOSITORY) -> str | None:
    """Why ``commit`` cannot be named as the code of a result committed at ``root``'s HEAD
    (``None`` when it can): a reader must be able to check it out from the branch's history, so
    it must be HEAD or an ancestor of it, and not marked ``-dirty`` (uncommitted changes)."""
    if commit.endswith("-dirty"):
        return f"commit {commit} was made from uncommitted changes; commit the code and run again"
    try:
        _git(root, "merge-base", "--is-ancestor", commit, "HEAD")
    except (OSError, subprocess.CalledProcessError):
        return f"commit {commit} is not in the history of {root}'s HEAD; make the results from a commit of this branch"
    return None


def config_hash(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def package_versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what the platform module says: the
    compiled kernels are built for the CPU they run on, so it is part of a result's platform."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(spec, raw, scale: str, root_seed: int, config_path: Path, fingerprint: str = "",
               fingerprint_parts: dict | None = None) -> dict:
    return {
        "experiment": spec.id,
        "paper": spec["paper"],
        "source": spec["source"],
        "commit": git_commit(),
        "config_hash": config_hash(*spec.files, config_path),
        "scale": scale,
        "root_seed": root_seed,
        "fingerprint": fingerprint,
        "fingerprint_parts": dict(fingerprint_parts or {}),
        "cells": int(raw["cell"].nunique()),
        "replications_per_cell": int(raw.groupby(["cell", "policy"]).size().min()),
        "replications_per_cell_max": int(raw.groupby(["cell", "policy"]).size().max()),  # precision rounds
        "policies": spec.policies,
        "events": int(raw["events"].sum()) if "events" in raw else None,
        "wall_time_s": round(float(raw["wall_time"].sum()), 3),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "packages": package_versions(),
    }
