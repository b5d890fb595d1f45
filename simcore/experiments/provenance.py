"""Provenance of one experiment's results: code, configuration, seeds, time, packages."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("simcore", "simpy", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "snakemake")


def git_commit(root: Path | None = None) -> str:
    """The commit of the working tree, with ``-dirty`` when it has uncommitted changes."""
    try:
        run = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True, text=True, check=True).stdout
        commit = run("rev-parse", "--short=12", "HEAD").strip()
        dirty = bool(run("status", "--porcelain", "--untracked-files=no", "simcore", "config").strip())
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


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


def provenance(spec, raw, scale: str, root_seed: int, config_path: Path, fingerprint: str = "") -> dict:
    return {
        "experiment": spec.id,
        "paper": spec["paper"],
        "source": spec["source"],
        "commit": git_commit(),
        "config_hash": config_hash(*spec.files, config_path),
        "scale": scale,
        "root_seed": root_seed,
        "fingerprint": fingerprint,
        "cells": int(raw["cell"].nunique()),
        "replications_per_cell": int(raw.groupby(["cell", "policy"]).size().min()),
        "policies": spec.policies,
        "events": int(raw["events"].sum()) if "events" in raw else None,
        "wall_time_s": round(float(raw["wall_time"].sum()), 3),
        "platform": platform.platform(),
        "packages": package_versions(),
    }
