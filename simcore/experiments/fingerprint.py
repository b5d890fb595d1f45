"""Fingerprints of what a simulation's rows depend on, so no stale result reaches a report.

A batch file carries the fingerprint of its experiment in its own metadata; aggregation
recomputes it from the current spec, preset, seed, code and topology catalog and refuses any
batch that differs, naming what changed. The workflow also keeps the fingerprint in a small
file per experiment and scale (rewritten only when it changes), an input of every simulation.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from simcore.errors import InputError

ROOT = Path(__file__).resolve().parents[1]          # the simcore package
METADATA_KEY = b"simcore.fingerprint"
PARTS = ("experiment", "model", "params", "policies", "grid", "seed", "code", "topology")


class StaleResults(InputError):
    """Raw batches made by another spec, seed or code than the current one."""


def _files(parts) -> list[Path]:
    return sorted(p for part in parts if part.is_dir() for p in part.rglob("*") if p.suffix in (".py", ".yaml"))


def topology_files() -> list[Path]:
    """The topology code and the machine catalog."""
    return _files([ROOT / "topology", ROOT.parent / "config" / "topologies"])


# What the SAN package reads from outside it: corr05's generator takes the time slice from the
# NUMA model and its parameter domains from the models package.
SAN_IMPORTS = ("models/__init__.py", "models/domains.py", "models/numa/task.py")
# The SAN files a fit does not run: the SimPy cross-check (the reference walker and its compiled
# one) and the solve/simulate commands.
NOT_IN_A_FIT = ("san/simulate.py", "san/compiled_walk.py", "san/walk_kernel.py", "san/run.py")


def san_files() -> list[Path]:
    """The files SAN results depend on: the SAN package, what it imports from the models, the
    topology code and catalog."""
    return _files([ROOT / "san"]) + [ROOT / name for name in SAN_IMPORTS] + topology_files()


def fit_files() -> list[Path]:
    """The files a SAN fit's value depends on: :func:`san_files` but the simulator and the
    solve/simulate commands (a fit only solves), so a faster cross-check keeps a recorded fit."""
    skip = {ROOT / name for name in NOT_IN_A_FIT}
    return [p for p in san_files() if p not in skip]


def fingerprint_files(model: str) -> list[Path]:
    """The files a model's results depend on: the simulator core, the model package, the
    registry and the runner, and the topology code and catalog (for ``san``: the SAN package
    and the topology code and catalog)."""
    if model == "san":
        return san_files()
    own = _files([ROOT / "core", ROOT / "models" / model])
    shared = [ROOT / "models" / "__init__.py", ROOT / "models" / "registry.py", ROOT / "experiments" / "runner.py"]
    return own + shared + topology_files()


def _hash_files(files) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(ROOT.parent).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def code_fingerprint(model: str) -> str:
    """Hash of :func:`fingerprint_files`: results are remade when a model's code changes."""
    return _hash_files(fingerprint_files(model))


def fit_fingerprint() -> str:
    """Hash of :func:`fit_files`: a recorded SAN fit is made again when one of them changes."""
    return _hash_files(fit_files())


@functools.lru_cache(maxsize=None)
def _model_code(model: str) -> str:
    topo = set(topology_files())
    return _hash_files([p for p in fingerprint_files(model) if p not in topo])


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _seed_digest(spec, root_seed: int) -> str:
    """The root seed and, when cells share seeds, that they do (per-cell keeps the old digest)."""
    shared = spec.data.get("seeds", "per-cell") == "shared"
    return _digest([int(root_seed), "shared"] if shared else int(root_seed))


def simulation_fingerprint(spec, root_seed: int, overrides: dict | None = None) -> dict:
    """``{"hash": H, "parts": {part: hash}}`` of everything a spec's raw rows depend on: model,
    parameters (spec, preset and overrides), policies, grid, root seed, model code, topologies."""
    parts = {
        "experiment": _digest(spec.id), "model": _digest(spec["model"]), "params": _digest(spec.params(overrides)),
        "policies": _digest(spec.policies), "grid": _digest(spec.grid), "seed": _seed_digest(spec, root_seed),
        "code": _model_code(spec["model"]), "topology": _hash_files(topology_files()),
    }
    return {"hash": _digest(parts), "parts": parts}


def changed_parts(old: dict, new: dict) -> list[str]:
    """The parts whose hashes differ (all of them when ``old`` is not a fingerprint)."""
    old_parts = old.get("parts") if isinstance(old, dict) else None
    if not isinstance(old_parts, dict):
        return list(PARTS)
    return [p for p in PARTS if old_parts.get(p) != new["parts"].get(p)]


def fingerprint_text(fingerprint: dict) -> str:
    return json.dumps(fingerprint, indent=2, sort_keys=True) + "\n"


def sync_fingerprint_file(path: Path, fingerprint: dict) -> bool:
    """Write ``path`` only when its content differs (its mtime then reruns the simulations)."""
    from simcore.core.output import write_text

    text = fingerprint_text(fingerprint)
    path = Path(path)
    if path.exists() and path.read_text() == text:
        return False
    write_text(path, text)
    return True


def read_batch_fingerprint(path: Path) -> dict | None:
    """The fingerprint in a raw batch file's parquet metadata, or None if it has none."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as err:
        raise InputError(f"{path}: is not a raw batch file ({str(err).splitlines()[0] if str(err) else type(err).__name__}).") from None
    raw = meta.get(METADATA_KEY)
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def check_batches(paths, current: dict) -> None:
    """Refuse (:class:`StaleResults`) if any batch file's fingerprint differs from ``current``."""
    stale = {}
    for path in paths:
        found = read_batch_fingerprint(path)
        if found is None or found.get("hash") != current["hash"]:
            stale[str(path)] = "no fingerprint" if found is None else ", ".join(changed_parts(found, current))
    if not stale:
        return
    named = "; ".join(f"{path} ({why})" for path, why in list(stale.items())[:3])
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    raise StaleResults(
        f"stale raw batches, made by another spec, preset, seed or code than the current one "
        f"(what changed in parentheses): {named}{more}; rerun their simulations.")
