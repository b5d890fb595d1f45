"""Sched-domain hierarchies: Linux's stock two levels, and one level per distance (corr05 section 2.2).

Every CPU gets a list of domains, bottom to top. The lowest is the CPU level: the CPU's node,
balancing between single CPUs (left out when the node has one CPU). Above it come node levels,
each given by a distance threshold ``t``: the domain of a CPU on node ``i`` spans the nodes ``j``
with ``distance(i, j) <= t``.

- ``linux-2level``: one node level, ``t`` = the largest distance in node i's row (the machine).
- ``multilevel``: one node level per distinct remote distance in node i's row, ascending; the
  last spans the machine. The span grows at every level, so no level is degenerate.

Groups of a node level (the ``node_groups`` reading, ``NODE_GROUPS``): a member's group is
gathered within a *reach* ``r``: take the member nodes in order of distance from ``i`` (``i``
first, ties by node number); each member not yet covered opens a group holding the uncovered
members within ``r`` of it.

- ``per-node``: ``r`` is the own distance, so every node is a group of its own at every level,
  as in Linux 2.6.11's node domain (docs/linux26-scheduler.md, "Building NUMA domains").
- ``child-spans``: ``r`` is the child level's threshold ``c`` (the own distance for the first
  node level), so the first group is exactly the child domain's span. corr05 does not say how
  the groups of its extra levels are built (its Code 1 leaves them to be made dynamically).

The two readings agree on a level whose child is the CPU level (``linux-2level``'s one node
level, ``multilevel``'s first). Under ``child-spans``, when the matrix is ultrametric
(neighbourhoods nested, e.g. routers in a tree) every group is the span of the child-level
domain of its nodes. When it is not (a line, a ring, a hypercube), the radius-``c``
neighbourhood of a member can reach outside the span or into a group already made; it is cut
to the uncovered members, so the groups stay disjoint and cover the span. A level that would
balance a single group is left out, as Linux drops degenerate domains (under ``per-node`` a
level of more than one node never does).

Cost: per node and level, a sort of the members and one vectorised pass over them per group
(single-node groups need none), so a machine of ``n`` nodes is built in O(n^2 log n) steps;
equal CPU sets are made once and shared between the nodes' domains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.topology.machine import LOCAL_DISTANCE, Machine, TopologyError


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


# Flag names as in docs/linux26-scheduler.md, "Domain flags" (SD_ prefix dropped).
LB, NI, EX, FK = "LOAD_BALANCE", "BALANCE_NEWIDLE", "BALANCE_EXEC", "BALANCE_FORK"
WI, WA, WB, SCP = "WAKE_IDLE", "WAKE_AFFINE", "WAKE_BALANCE", "SHARE_CPUPOWER"

# Balancing parameters of Linux 2.6.12 (standing in for 2.6.11). All from docs/linux26-scheduler.md,
# section "Domain parameters per level and version", the rows marked 2.6.12 (source K11);
# cache_hot_time is kept in ms. The initial balance_interval (column bi0) is not set on
# Domain: the model starts at min_interval.
SD_SIBLING_INIT = dict(  # notes under that table (2.6.12 SD_SIBLING_INIT); cache_nice_tries
    min_interval=1, max_interval=2, busy_factor=8, imbalance_pct=110, cache_hot_time=0.0,  # and flags
    cache_nice_tries=0, flags=frozenset({LB, NI, EX, WA, WI, SCP}))  # are not in the table (2.6.12 topology.h)
SD_CPU_INIT = dict(  # row "SD_CPU_INIT generic, 2.6.12"; 2.5 ms hot time also in IM05
    min_interval=1, max_interval=4, busy_factor=64, imbalance_pct=125, cache_hot_time=2.5,
    cache_nice_tries=1, flags=frozenset({LB, NI, EX, WA, WI, WB}))
SD_NODE_INIT_IA64 = dict(  # row "SD_NODE_INIT ia64, 2.6.12"
    min_interval=80, max_interval=320, busy_factor=320, imbalance_pct=125, cache_hot_time=10.0,
    cache_nice_tries=1, flags=frozenset({LB, EX, NI, WI, WB}))
SD_NODE_INIT_X86_64 = dict(  # row "SD_NODE_INIT x86_64, 2.6.12"
    min_interval=8, max_interval=32, busy_factor=32, imbalance_pct=125, cache_hot_time=10.0,
    cache_nice_tries=1, flags=frozenset({LB, NI, EX, WI, WB}))
SD_ALLNODES_INIT_IA64 = dict(  # row "SD_ALLNODES_INIT ia64, 2.6.12"; only ia64 builds an allnodes
    min_interval=80, max_interval=320, busy_factor=320, imbalance_pct=125, cache_hot_time=10.0,  # level
    cache_nice_tries=1, flags=frozenset({LB, EX}))  # ("Building NUMA domains"), so neither builder uses it

NODE_INITS = {"ia64-2.6.12": SD_NODE_INIT_IA64, "x86_64-2.6.12": SD_NODE_INIT_X86_64}
DEFAULT_NODE_INIT = "ia64-2.6.12"  # the papers' machines (Altix, Superdome) are Itanium

# reading -> what makes the groups of a node level, and its support
NODE_GROUPS = {
    "per-node": "one group per node at every node level (Linux 2.6.11's node domain, docs/linux26-scheduler.md)",
    "child-spans": "the child level's spans, cut to stay disjoint (corr05 does not say; the model's first reading)",
}
DEFAULT_NODE_GROUPS = "per-node"


def _linux_2level(machine: Machine, node: int) -> list[tuple[str, int]]:
    """One node level spanning the machine (2.6.11 outside ia64; docs/linux26-scheduler.md, "Building NUMA domains")."""
    return [] if machine.nodes == 1 else [("node", int(machine.distances[node].max()))]


def _multilevel(machine: Machine, node: int) -> list[tuple[str, int]]:
    """One node level per distinct remote distance of the node, nearest first (corr05 2.2)."""
    row = machine.distances[node]
    remote = sorted({int(d) for d in row} - {int(row[node])})
    return [("node" if d == remote[-1] else f"node-d{d}", d) for d in remote]


# name -> function(machine, node) giving the (name, distance threshold) of each node level
BUILDERS = {"linux-2level": _linux_2level, "multilevel": _multilevel}


def _reach(node_groups: str, child: int) -> int:
    """The distance within which a group's first node gathers the others (module docstring)."""
    return LOCAL_DISTANCE if node_groups == "per-node" else child


def _node_groups(machine: Machine, node: int, members: np.ndarray, reach: int) -> list[tuple[int, ...]]:
    """Disjoint groups of ``members`` (ascending node numbers), each gathered within ``reach``
    (see the module docstring)."""
    d = machine.distances
    order = members[np.lexsort((members, members != node, d[node, members]))]  # distance, own node, number
    if reach == LOCAL_DISTANCE:      # every remote distance is above it: each member alone
        return list(zip(order.tolist()))
    free = np.ones(len(members), dtype=bool)
    place = {j: k for k, j in enumerate(members.tolist())}
    groups = []
    for j in order.tolist():
        if free[place[j]]:
            hit = free & (d[j, members] <= reach)
            groups.append(tuple(members[hit].tolist()))
            free &= ~hit
    return groups


def _cpus_of(machine: Machine, nodes: tuple[int, ...], made: dict) -> frozenset:
    """The CPUs of ``nodes``, one frozenset per distinct set of nodes (``made`` keeps them)."""
    cpus = made.get(nodes)
    if cpus is None:
        cpus = made[nodes] = frozenset(c for j in nodes for c in machine.node_cpus(j))
    return cpus


def _node_domains(machine: Machine, node: int, builder: str, node_init: dict, node_groups: str,
                  made: dict) -> list[Domain]:
    """The domains shared by every CPU of ``node``, bottom to top."""
    own = machine.node_cpus(node)
    out = []
    if len(own) > 1:
        out.append(Domain(0, "cpu", frozenset(own), tuple(frozenset([c]) for c in own), **SD_CPU_INIT))
    child = int(machine.distances[node][node])
    for name, threshold in BUILDERS[builder](machine, node):
        members = np.flatnonzero(machine.distances[node] <= threshold)
        groups = _node_groups(machine, node, members, _reach(node_groups, child))
        child = threshold
        if len(groups) > 1:
            out.append(Domain(len(out), name, _cpus_of(machine, tuple(members.tolist()), made),
                              tuple([_cpus_of(machine, g, made) for g in groups]), **node_init))
    return out


def domains_for(machine: Machine, builder: str, node_init: str = DEFAULT_NODE_INIT,
                node_groups: str = DEFAULT_NODE_GROUPS) -> list[list[Domain]]:
    """Each CPU's sched domains, bottom to top, as ``builder`` makes them, with node-level
    groups of the ``node_groups`` reading."""
    if builder not in BUILDERS:
        raise TopologyError(f"sched-domain builder '{builder}' is unknown (known: {', '.join(BUILDERS)}).")
    if node_init not in NODE_INITS:
        raise TopologyError(f"node_init '{node_init}' is unknown (known: {', '.join(NODE_INITS)}).")
    if node_groups not in NODE_GROUPS:
        raise TopologyError(f"node_groups '{node_groups}' is unknown (known: {', '.join(NODE_GROUPS)}).")
    made: dict = {}
    per_node = [_node_domains(machine, n, builder, NODE_INITS[node_init], node_groups, made)
                for n in range(machine.nodes)]
    return [list(per_node[n]) for n in machine.cpu_node]


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


SHOWN_GROUPS = 8  # a domain with more groups shows its first ones, the count and its last
SHOWN_NODES = 64  # a larger SLIT matrix is not printed


def _groups_text(groups) -> str:
    texts = ["{" + _cpus_text(g) + "}" for g in (groups if len(groups) <= SHOWN_GROUPS else
                                               (*groups[:SHOWN_GROUPS - 2], groups[-1]))]
    if len(groups) > SHOWN_GROUPS:
        texts.insert(SHOWN_GROUPS - 2, f"... ({len(groups)} groups in all) ...")
    return " ".join(texts)


def describe(machine: Machine, builder: str, node_init: str = DEFAULT_NODE_INIT,
             node_groups: str = DEFAULT_NODE_GROUPS) -> str:
    """The machine, its SLIT matrix and, level by level, the domains ``builder`` makes per node."""
    lines = [f"machine {machine.name}: {machine.nodes} nodes, {machine.cpus} CPUs "
             f"({', '.join(map(str, machine.cpus_per_node))} per node), "
             f"{len(machine.levels)} memory access levels {list(machine.levels)}",
             f"  {machine.description}", f"  source: {machine.source}", "  SLIT distances:"]
    width = max(3, len(str(max(machine.levels))))
    if machine.nodes <= SHOWN_NODES:
        lines += ["    " + " ".join(f"{int(v):{width}d}" for v in row) for row in machine.distances]
    else:
        lines.append(f"    ({machine.nodes} x {machine.nodes}: not printed above {SHOWN_NODES} nodes)")
    per_cpu = domains_for(machine, builder, node_init, node_groups)
    per_node = [per_cpu[machine.node_cpus(n)[0]] for n in range(machine.nodes)]
    lines.append(f"sched domains by {builder} (node init {node_init}, node groups {node_groups}), per level and node:")
    for level in range(max(map(len, per_node))):
        lines.append(f"  level {level}:")
        for node, doms in enumerate(per_node):
            if level < len(doms):
                d = doms[level]
                groups = _groups_text(d.groups)
                lines.append(f"    node {node:<3} {d.name:<9} span {_cpus_text(d.span):<10} interval "
                             f"{d.min_interval:g}-{d.max_interval:g} ms (x{d.busy_factor} busy), imb "
                             f"{d.imbalance_pct}%, groups {groups}")
    return "\n".join(lines)
