"""Machines from the catalog (``config/topologies/<name>.yaml``), a YAML file, or this machine's sysfs."""

from __future__ import annotations

from pathlib import Path

import yaml

from simcore.topology.machine import Machine, TopologyError, make_machine

KEYS = {"name", "description", "source", "cpus_per_node", "distances"}
CATALOG = "config/topologies"
_REPO_CATALOG = Path(__file__).resolve().parents[2] / CATALOG  # when run from elsewhere in the checkout


def catalog(catalog_dir: str | Path = CATALOG) -> list[str]:
    """Names of the catalog's machines."""
    return sorted(p.stem for p in Path(catalog_dir).glob("*.yaml"))


def _path(name_or_path: str | Path, catalog_dir: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        if not path.exists():
            raise TopologyError(f"{path}: no such topology file.")
        return path
    path = Path(catalog_dir) / f"{name_or_path}.yaml"
    if not path.exists() and str(catalog_dir) == CATALOG and (_REPO_CATALOG / path.name).exists():
        path = _REPO_CATALOG / path.name
    if not path.exists():
        known = ", ".join(catalog(catalog_dir)) or "none"
        raise TopologyError(f"{path}: no topology '{name_or_path}' in the catalog (known: {known}).")
    return path


def load_topology(name_or_path: str | Path, catalog_dir: str | Path = CATALOG) -> Machine:
    """A validated machine from a catalog name or a YAML file."""
    path = _path(name_or_path, catalog_dir)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise TopologyError(f"{path}: is not valid YAML ({str(err).splitlines()[0]}).") from None
    if not isinstance(data, dict):
        raise TopologyError(f"{path}: must be a mapping with keys {', '.join(sorted(KEYS))}.")
    for key in ("name", "cpus_per_node", "distances"):
        if key not in data:
            raise TopologyError(f"{path}: key '{key}' is missing.")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise TopologyError(f"{path}: key '{unknown[0]}' is not a topology key (known: {', '.join(sorted(KEYS))}).")
    return make_machine(str(path), str(data["name"]), data["cpus_per_node"], data["distances"],
                        str(data.get("description", "")), str(data.get("source", "")))


def parse_cpulist(text: str) -> list[int]:
    """CPU numbers from a sysfs cpulist such as ``0-3,8-11``."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        cpus.extend(range(int(a), int(b or a) + 1))
    return cpus


def this_machine(sysfs: str | Path = "/sys/devices/system/node") -> Machine:
    """The machine this runs on, from ``node*/distance`` and ``node*/cpulist`` (one node if absent)."""
    root = Path(sysfs)
    nodes = sorted(root.glob("node[0-9]*"), key=lambda p: int(p.name[4:]))
    nodes = [p for p in nodes if (p / "cpulist").exists() and parse_cpulist((p / "cpulist").read_text())]
    if not nodes:
        import os

        return make_machine(str(root), "this-machine", [os.cpu_count() or 1], [[10]],
                            "no NUMA information in sysfs: one node", str(root))
    ids = [int(p.name[4:]) for p in nodes]
    rows = []
    for p in nodes:
        row = [int(x) for x in (p / "distance").read_text().split()]
        rows.append([row[i] for i in ids] if len(row) > max(ids) else row)
    cpus = [len(parse_cpulist((p / "cpulist").read_text())) for p in nodes]
    return make_machine(str(root), "this-machine", cpus, rows, f"read from {root}", str(root))
