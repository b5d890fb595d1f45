"""Sched-domain hierarchies: Linux's stock two levels, and one level per distance (corr05 2.2).

Every CPU gets a list of domains, bottom to top. A domain's ``groups`` are what it balances
between: single CPUs at the lowest level, and above it the spans of child domains. Levels
that would balance a single group are left out, as Linux drops degenerate domains.

Balancing parameters come from ``../shared/reference/linux26-sched.md`` section 2 (the
2.6.12 SD_*_INIT table): the CPU level uses SD_CPU_INIT (generic), every level above it
SD_NODE_INIT; which architecture's SD_NODE_INIT is a parameter (``NODE_INITS``).
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.topology.machine import Machine, TopologyError


@dataclass(frozen=True)
class Domain:
    """One sched domain of one CPU. Intervals and cache_hot_time are in ms."""

    level: int
    name: str
    span: frozenset
    groups: tuple
    min_interval: float
    max_interval: float
    busy_factor: int
    imbalance_pct: int
    cache_hot_time: float
    cache_nice_tries: int
    flags: frozenset


# Sheet section 2, "SD_*_INIT values" (2.6.12 rows [A]); cache_hot_time from [G] (2.6.11 defaults).
SD_CPU_INIT = dict(min_interval=1, max_interval=4, busy_factor=64, imbalance_pct=125, cache_hot_time=2.5,
                   cache_nice_tries=1,
                   flags=frozenset({"LOAD_BALANCE", "BALANCE_NEWIDLE", "BALANCE_EXEC", "WAKE_AFFINE",
                                    "WAKE_IDLE", "WAKE_BALANCE"}))
NODE_INITS = {
    "ia64-2.6.12": dict(min_interval=80, max_interval=320, busy_factor=320, imbalance_pct=125, cache_hot_time=10.0,
                        cache_nice_tries=1,
                        flags=frozenset({"LOAD_BALANCE", "BALANCE_EXEC", "BALANCE_NEWIDLE", "WAKE_IDLE",
                                         "WAKE_BALANCE"})),
    "x86_64-2.6.12": dict(min_interval=8, max_interval=32, busy_factor=32, imbalance_pct=125, cache_hot_time=10.0,
                          cache_nice_tries=1,
                          flags=frozenset({"LOAD_BALANCE", "BALANCE_NEWIDLE", "BALANCE_EXEC", "WAKE_IDLE",
                                           "WAKE_BALANCE"})),
}
DEFAULT_NODE_INIT = "ia64-2.6.12"  # the papers' machines (Altix, Superdome) are Itanium


def _node_levels(machine: Machine, node: int, builder: str) -> list[tuple[str, int]]:
    """(name, distance threshold) of each level above the node, nearest first."""
    if machine.nodes == 1:
        return []
    row = machine.distances[node]
    remote = sorted({int(d) for d in row} - {int(row[node])})
    if builder == "linux-2level":
        return [("node", remote[-1])]
    return [("node" if d == remote[-1] else f"node-d{d}", d) for d in remote]


def _nodes_within(machine: Machine, node: int, threshold: int) -> list[int]:
    return [j for j in range(machine.nodes) if machine.distances[node][j] <= threshold]


def _node_groups(machine: Machine, node: int, members: list[int], inner: int) -> list[list[int]]:
    """Disjoint node groups covering ``members``: around each member (nearest to ``node`` first),
    the not yet covered members within the previous level's threshold ``inner`` of it."""
    order = sorted(members, key=lambda j: (machine.distances[node][j], j != node, j))
    groups, covered = [], set()
    for j in order:
        if j in covered:
            continue
        group = [l for l in members if l not in covered and machine.distances[j][l] <= inner]
        groups.append(group)
        covered.update(group)
    return groups


def _cpu_domains(machine: Machine, cpu: int, builder: str, node_init: dict) -> list[Domain]:
    node = machine.cpu_node[cpu]
    own = machine.node_cpus(node)
    out = []
    if len(own) > 1:
        out.append(Domain(0, "cpu", frozenset(own), tuple(frozenset([c]) for c in own), **SD_CPU_INIT))
    inner = int(machine.distances[node][node])
    for name, threshold in _node_levels(machine, node, builder):
        members = _nodes_within(machine, node, threshold)
        groups = _node_groups(machine, node, members, inner)
        inner = threshold
        if len(groups) < 2:
            continue
        span = frozenset(c for j in members for c in machine.node_cpus(j))
        cpu_groups = tuple(frozenset(c for j in g for c in machine.node_cpus(j)) for g in groups)
        out.append(Domain(len(out), name, span, cpu_groups, **node_init))
    return out


def domains_for(machine: Machine, builder: str, node_init: str = DEFAULT_NODE_INIT) -> list[list[Domain]]:
    """Each CPU's sched domains, bottom to top, as ``builder`` makes them."""
    if builder not in BUILDERS:
        raise TopologyError(f"sched-domain builder '{builder}' is unknown (known: {', '.join(BUILDERS)}).")
    if node_init not in NODE_INITS:
        raise TopologyError(f"node_init '{node_init}' is unknown (known: {', '.join(NODE_INITS)}).")
    return [_cpu_domains(machine, cpu, builder, NODE_INITS[node_init]) for cpu in range(machine.cpus)]


BUILDERS = ("linux-2level", "multilevel")


def _cpus_text(cpus) -> str:
    """Compact CPU list, e.g. 0-3,8-11."""
    cpus, parts = sorted(cpus), []
    start = prev = cpus[0]
    for c in cpus[1:] + [None]:
        if c is not None and c == prev + 1:
            prev = c
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if c is not None:
            start = prev = c
    return ",".join(parts)


def describe(machine: Machine, builder: str) -> str:
    """The machine and the hierarchy ``builder`` makes for the first CPU of each node, as text."""
    lines = [f"machine {machine.name}: {machine.nodes} nodes, {machine.cpus} CPUs, "
             f"{len(machine.levels)} memory access levels {list(machine.levels)}"]
    if machine.description:
        lines.append(f"  {machine.description}")
    lines.append("  SLIT distances:")
    lines += ["    " + " ".join(f"{int(v):3d}" for v in row) for row in machine.distances]
    lines.append(f"sched domains by {builder} (first CPU of each node):")
    per_cpu = domains_for(machine, builder)
    for node in range(machine.nodes):
        cpu = machine.node_cpus(node)[0]
        lines.append(f"  node {node}, cpu {cpu}:")
        for d in per_cpu[cpu]:
            groups = " ".join("{" + _cpus_text(g) + "}" for g in d.groups)
            lines.append(f"    L{d.level} {d.name:<10} span {_cpus_text(d.span):<12} interval {d.min_interval:g}-"
                         f"{d.max_interval:g} ms x{d.busy_factor} busy, imb {d.imbalance_pct}%  groups {groups}")
    return "\n".join(lines)
