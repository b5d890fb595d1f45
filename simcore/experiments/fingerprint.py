"""Fingerprints of what a simulation's rows depend on, so no stale result reaches a report.

A batch file carries the fingerprint of its experiment in its own metadata; aggregation
recomputes it from the current spec, preset, seed, code and machines and refuses any batch that
differs, naming what changed. The workflow also keeps the fingerprint in a small file per
experiment and scale (rewritten only when it changes), an input of every simulation.

The machines enter as what a simulation sees of them, not as the code that reads and checks
them: each machine an experiment names, as loaded (CPUs per node, SLIT distances, memory
levels), with its sched domains under every builder, node init and node-groups reading, and the
source of the :class:`~simcore.topology.machine.Machine` class whose methods the models call. A new input
check in the topology loader, or a faster domain builder that builds the same domains, leaves
every fingerprint as it was; a change in any domain a model would balance over changes it.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
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


#: the models that run on a machine of the topology catalog (a test keeps this list complete)
TOPOLOGY_MODELS = ("numa", "san")


def _plain(value):
    """A domain's field for a JSON digest: a set (of CPUs or flag names) sorted, a tuple of them
    as a list."""
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@functools.lru_cache(maxsize=None)
def machine_digest(topology: str) -> str:
    """Digest of what a simulation sees of the machine ``topology`` (a catalog name or a file):
    its CPUs, SLIT distances, levels, and each CPU's sched domains (every field) under every
    builder, node init and node-groups reading; equal domains are written once and referred to by
    number."""
    import dataclasses
    import inspect

    from simcore.topology.domains import BUILDERS, NODE_GROUPS, NODE_INITS, domains_for
    from simcore.topology.loader import load_topology
    from simcore.topology.machine import Machine

    machine = load_topology(topology)
    table: dict = {}    # a domain's JSON text -> its number
    built = {}
    for builder, init, groups in itertools.product(BUILDERS, NODE_INITS, NODE_GROUPS):
        per_cpu = domains_for(machine, builder, init, groups)
        number: dict = {}   # id of a domain object -> its number (the CPUs of a node share theirs)
        for d in {id(d): d for doms in per_cpu for d in doms}.values():
            text = json.dumps({f.name: _plain(getattr(d, f.name)) for f in dataclasses.fields(d)}, sort_keys=True)
            number[id(d)] = table.setdefault(text, len(table))
        built[f"{builder}/{init}/{groups}"] = [[number[id(d)] for d in doms] for doms in per_cpu]
    domains = list(table)
    return _digest({
        "class": inspect.getsource(Machine), "name": machine.name, "cpus_per_node": list(machine.cpus_per_node),
        "distances": machine.distances.tolist(), "levels": list(machine.levels), "cpu_node": list(machine.cpu_node),
        "domains": domains, "built": built})


def catalog_digest() -> str:
    """Digest of every machine of the repository's catalog (``config/topologies``) as
    :func:`machine_digest` sees it: what SAN models may run on."""
    files = sorted((ROOT.parent / "config" / "topologies").glob("*.yaml"))
    return _digest({path.stem: machine_digest(str(path)) for path in files})


def _machines_named(spec, params: dict) -> list[str]:
    """The machines a spec's cells run on: its ``topology`` parameter (in ``params``, the spec's
    with its preset and overrides) and grid values."""
    named = {params.get("topology")} | set(spec.grid.get("topology") or [])
    return sorted(str(t) for t in named if t is not None)


def topology_digest(spec, overrides: dict | None = None, params: dict | None = None) -> str:
    """The ``topology`` part of a fingerprint: the machines the spec runs on (none for a model
    that runs on no machine of the catalog)."""
    if spec["model"] not in TOPOLOGY_MODELS:
        return _digest(None)
    params = spec.params(overrides) if params is None else params
    return _digest({t: machine_digest(t) for t in _machines_named(spec, params)})


# What the SAN package reads from outside it: corr05's generator takes the time slice from the
# NUMA model, the SAN and corr05 parameters their declarations and domains from the vocabulary,
# and the compiled walker its compiler from core/jit.py.
SAN_IMPORTS = ("vocabulary/parameters.py", "vocabulary/domains.py", "models/numa/timeslice.py", "core/jit.py")
# The SAN files a fit does not run: the SimPy cross-check (the reference walker and its compiled
# one, with its compiler) and the solve/simulate commands.
NOT_IN_A_FIT = ("san/simulate.py", "san/compiled_walk.py", "san/walk_kernel.py", "san/slots_kernels.py",
                "san/layout.yaml", "san/run.py", "core/jit.py")


def san_files() -> list[Path]:
    """The files SAN results depend on besides the machines: the SAN package and what it
    imports from the models."""
    return _files([ROOT / "san"]) + [ROOT / name for name in SAN_IMPORTS]


def fit_files() -> list[Path]:
    """The files a SAN fit's value depends on: :func:`san_files` but the simulator and the
    solve/simulate commands (a fit only solves), so a faster cross-check keeps a recorded fit."""
    skip = {ROOT / name for name in NOT_IN_A_FIT}
    return [p for p in san_files() if p not in skip]


def fingerprint_files(model: str) -> list[Path]:
    """The files a model's results depend on besides the machines: the simulator core, the
    model package, the registry and the runner (for ``san``: :func:`san_files`)."""
    if model == "san":
        return san_files()
    own = _files([ROOT / "core", ROOT / "models" / model])
    shared = [ROOT / "models" / "__init__.py", ROOT / "models" / "registry.py", ROOT / "experiments" / "runner.py"]
    return own + shared


def _hash_files(files) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(ROOT.parent).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def code_fingerprint(model: str) -> str:
    """Hash of :func:`fingerprint_files` (with the catalog's machines for a model that runs on
    them): SAN results are remade when their code or a machine changes."""
    files = _hash_files(fingerprint_files(model))
    return _digest([files, catalog_digest()]) if model in TOPOLOGY_MODELS else files


def fit_fingerprint() -> str:
    """Hash of :func:`fit_files` and the catalog's machines: a recorded SAN fit is made again
    when one of them changes."""
    return _digest([_hash_files(fit_files()), catalog_digest()])


@functools.lru_cache(maxsize=None)
def _model_code(model: str) -> str:
    return _hash_files(fingerprint_files(model))


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _seed_digest(spec, root_seed: int) -> str:
    """The root seed and, when cells share seeds, that they do (per-cell keeps the old digest)."""
    shared = spec.data.get("seeds", "per-cell") == "shared"
    return _digest([int(root_seed), "shared"] if shared else int(root_seed))


def simulation_fingerprint(spec, root_seed: int, overrides: dict | None = None) -> dict:
    """``{"hash": H, "parts": {part: hash}}`` of everything a spec's raw rows depend on: model,
    parameters (spec, preset and overrides), policies, grid, root seed, model code, topologies."""
    params = spec.params(overrides)
    parts = {
        "experiment": _digest(spec.id), "model": _digest(spec["model"]), "params": _digest(params),
        "policies": _digest(spec.policies), "grid": _digest(spec.grid), "seed": _seed_digest(spec, root_seed),
        "code": _model_code(spec["model"]), "topology": topology_digest(spec, overrides, params),
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
        raise InputError(
            f"{path}: is not a raw batch file ({str(err).splitlines()[0] if str(err) else type(err).__name__})."
        ) from None
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
