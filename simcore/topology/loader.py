"""Machines from the catalog (``config/topologies/<name>.yaml``), a YAML file, or this machine's sysfs."""

from __future__ import annotations

import os
from pathlib import Path

from simcore.inputs import read_yaml
from simcore.topology.machine import LOCAL_DISTANCE, Machine, TopologyError, check_distances, make_machine
from simcore.vocabulary.domains import COUNT, TEXT, AnyOf, Structured, show
from simcore.vocabulary.parameters import Parameter


def _slit(value) -> str | None:
    try:
        check_distances("", value)
    except TopologyError as err:
        return str(err).split(": ", 2)[-1]
    return None


def _counts(value) -> str | None:
    ok = isinstance(value, list) and value and all(COUNT.admits(c) for c in value)
    return None if ok else "not a non-empty list of positive integers"


#: A topology file's keys, all required (``cpus_per_node`` must also list one count per node).
FIELDS = {
    "name": Parameter(None, "the machine's name", TEXT),
    "description": Parameter(None, "what the machine is", TEXT),
    "source": Parameter(None, "where its numbers come from", TEXT),
    "cpus_per_node": Parameter(
        None, "CPUs of every node, or of each node", AnyOf(COUNT, Structured("list of positive integers", _counts))
    ),
    "distances": Parameter(
        None,
        "the SLIT matrix, one row per node",
        Structured(
            "square symmetric matrix of integers 1-255, 10 on the diagonal, every remote distance above 10", _slit
        ),
    ),
}
KEYS = tuple(FIELDS)
CATALOG = "config/topologies"
_REPO_CATALOG = Path(__file__).resolve().parents[2] / CATALOG  # when run from elsewhere in the checkout
# Linux's fallback when no SLIT is given: LOCAL_DISTANCE / REMOTE_DISTANCE
# (docs/linux26-scheduler.md, "Building NUMA domains")
REMOTE_DISTANCE = 20


def catalog(catalog_dir: str | Path = CATALOG) -> list[str]:
    """Names of the catalog's machines."""
    return sorted(p.stem for p in Path(catalog_dir).glob("*.yaml"))


def _path(name_or_path: str | Path, catalog_dir: str | Path) -> Path:
    try:
        return _find(name_or_path, catalog_dir)
    except OSError as err:   # e.g. a name too long for the file system
        raise TopologyError(f"{name_or_path!s:.80}: not a topology name or file ({err.strerror or err}).") from None


def _find(name_or_path: str | Path, catalog_dir: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            raise TopologyError(f"{path}: no such topology file.")
        return path
    path = Path(catalog_dir) / f"{name_or_path}.yaml"
    if not path.exists() and str(catalog_dir) == CATALOG and (_REPO_CATALOG / path.name).exists():
        path = _REPO_CATALOG / path.name
    if not path.exists():
        known = ", ".join(catalog(catalog_dir)) or "none"
        raise TopologyError(f"{path}: no topology '{name_or_path}' in the catalog (known: {known}).")
    return path


def _read(path: Path) -> dict:
    data = read_yaml(path, TopologyError)
    if not isinstance(data, dict):
        raise TopologyError(f"{path}: must be a mapping with keys {', '.join(KEYS)}.")
    for key in KEYS:
        if key not in data:
            raise TopologyError(f"{path}: key '{key}' is missing.")
    unknown = sorted(set(data) - set(KEYS), key=str)
    if unknown:
        raise TopologyError(f"{path}: key '{unknown[0]}' is not a topology key (known: {', '.join(KEYS)}).")
    for key in ("name", "description", "source"):  # the machine's structure: make_machine, with its reasons
        problem = FIELDS[key].domain.problem(data[key])
        if problem:
            raise TopologyError(f"{path}: key '{key}': {show(data[key])} {problem}.")
    return data


def load_topology(name_or_path: str | Path, catalog_dir: str | Path = CATALOG) -> Machine:
    """A validated machine from a catalog name or a YAML file."""
    path = _path(name_or_path, catalog_dir)
    data = _read(path)
    return make_machine(str(path), data["name"].strip(), data["cpus_per_node"], data["distances"],
                        data["description"].strip(), data["source"].strip())


def parse_cpulist(text: str, where: str = "cpulist") -> list[int]:
    """CPU numbers from a sysfs cpulist such as ``0-3,8-11`` (empty for a CPU-less node)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        try:
            cpus.extend(range(int(a), int(b or a) + 1))
        except ValueError:
            raise TopologyError(f"{where}: '{part}' is not a CPU number or range.") from None
    return cpus


def _distance_row(path: Path) -> list[int]:
    """One node's sysfs distance row (empty when the file is absent)."""
    if not path.exists():
        return []
    try:
        return [int(x) for x in path.read_text().split()]
    except ValueError:
        raise TopologyError(f"{path}: key 'distance': not a list of integers.") from None


def this_machine(sysfs: str | Path = "/sys/devices/system/node") -> Machine:
    """The machine this runs on, from ``node*/distance`` and ``node*/cpulist`` (one node if absent).

    Nodes without CPUs (memory-only) are left out; CPUs are renumbered node by node.
    """
    root = Path(sysfs)
    dirs = sorted((p for p in root.glob("node[0-9]*") if p.name[4:].isdigit()), key=lambda p: int(p.name[4:]))
    cpus = [parse_cpulist((p / "cpulist").read_text(), str(p / "cpulist")) if (p / "cpulist").exists() else []
            for p in dirs]
    keep = [k for k, c in enumerate(cpus) if c]  # positions among all nodes: a distance row lists all of them
    if not keep:
        return make_machine(str(root), "this-machine", [os.cpu_count() or 1], [[LOCAL_DISTANCE]],
                            f"this machine: {root} holds no NUMA nodes with CPUs, so one node", str(root))
    rows = []
    for k in keep:
        row = _distance_row(dirs[k] / "distance")
        if not row:  # no SLIT: Linux's 10/20 fallback
            row = [LOCAL_DISTANCE if j == k else REMOTE_DISTANCE for j in range(len(dirs))]
        if len(row) != len(dirs):
            raise TopologyError(f"{dirs[k] / 'distance'}: key 'distance': {len(row)} entries for {len(dirs)} nodes.")
        rows.append([row[j] for j in keep])
    desc = f"this machine: nodes {', '.join(dirs[k].name for k in keep)} read from {root}; CPUs renumbered node by node"
    return make_machine(str(root), "this-machine", [len(cpus[k]) for k in keep], rows, desc, str(root))
