"""A NUMA machine: nodes, CPUs per node and the ACPI SLIT distance matrix.

CPUs are numbered node by node. A valid SLIT matrix is square, symmetric, made of integers
from 1 to 255, each node's own distance is 10 and every remote distance is above it (Linux's
``slit_valid`` refuses any other table). The memory access levels are the distinct distances.
Every check is vectorised, so a table of a thousand nodes is read or refused in a moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from simcore.errors import InputError


class TopologyError(InputError):
    """A topology file or matrix that is not a valid machine; the message names file and key."""


@dataclass(frozen=True, eq=False)
class Machine:
    """A machine: SLIT ``distances`` (nodes x nodes) and ``cpus_per_node``."""

    name: str
    description: str
    source: str
    cpus_per_node: tuple[int, ...]
    distances: np.ndarray

    @property
    def nodes(self) -> int:
        return len(self.cpus_per_node)

    @property
    def cpus(self) -> int:
        return int(sum(self.cpus_per_node))

    @cached_property
    def levels(self) -> tuple[int, ...]:
        """Sorted distinct distances: the memory access levels (own node first)."""
        return tuple(sorted({int(d) for d in self.distances.flat}))

    @cached_property
    def cpu_node(self) -> tuple[int, ...]:
        """The node of each CPU."""
        return tuple(n for n, k in enumerate(self.cpus_per_node) for _ in range(k))

    @cached_property
    def _first_cpu(self) -> tuple[int, ...]:
        return tuple(int(x) for x in np.concatenate([[0], np.cumsum(self.cpus_per_node)[:-1]]))

    def node_cpus(self, node: int) -> tuple[int, ...]:
        """The CPUs of ``node``."""
        start = self._first_cpu[node]
        return tuple(range(start, start + self.cpus_per_node[node]))

    def distance(self, cpu_a: int, cpu_b: int) -> int:
        """SLIT distance between the nodes of two CPUs."""
        return int(self.distances[self.cpu_node[cpu_a], self.cpu_node[cpu_b]])

    def level_of(self, distance: int) -> int:
        """Index of a distance among the machine's memory access levels."""
        return self.levels.index(int(distance))


def _fail(where: str, key: str, what: str):
    raise TopologyError(f"{where}: key '{key}': {what}")


SLIT_MAX = 255  # ACPI SLIT entries are one byte (255: unreachable)
LOCAL_DISTANCE = 10  # a node's distance to itself in every SLIT (ACPI; Linux's slit_valid)


def _entry_ok(v) -> bool:
    """A SLIT entry: an integer 1..255, written as an int or a whole float (never NaN or infinite)."""
    return (not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))
            and 0 < v <= SLIT_MAX and v == int(v))


def _check_entries(where: str, rows) -> int:
    """The number of nodes, once every row has one positive integer per node."""
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, (list, tuple)) for r in rows):
        _fail(where, "distances", "must be a non-empty list of rows, one per node.")
    n = len(rows)
    if all(len(row) == n for row in rows):
        try:
            table = np.array(rows)
        except (ValueError, TypeError):    # a nested entry (a list where a number belongs)
            table = np.zeros(0, dtype=object)
        if table.dtype.kind == "i" and table.shape == (n, n) and ((table > 0) & (table <= SLIT_MAX)).all():
            return n    # plain integers in range (bools, floats and text give numpy other kinds)
    for i, row in enumerate(rows):
        if len(row) != n:
            _fail(where, "distances", f"row {i} has {len(row)} entries but there are {n} nodes (rows).")
        for j, v in enumerate(row):
            if not _entry_ok(v):
                hint = " (SLIT distances are integers, 10 for the own node; hwloc prints them divided by 10)" \
                    if isinstance(v, float) and 0 < v < 10 else ""
                _fail(where, "distances", f"entry [{i}][{j}] = {v!r} is not an integer from 1 to {SLIT_MAX}{hint}.")
    return n


def check_distances(where: str, rows) -> np.ndarray:
    """The SLIT matrix as a read-only integer array, or a TopologyError saying what is wrong."""
    n = _check_entries(where, rows)
    d = np.array(rows, dtype=np.int64)
    asymmetric = np.argwhere(np.triu(d != d.T, 1))      # row by row, as a reader scans the table
    if asymmetric.size:
        i, j = asymmetric[0]
        _fail(where, "distances", f"the matrix is not symmetric: [{i}][{j}] = {d[i, j]} but [{j}][{i}] = {d[j, i]}.")
    own = np.flatnonzero(np.diag(d) != LOCAL_DISTANCE)
    if own.size:
        i = own[0]
        _fail(where, "distances", f"row {i}: the node's own distance is {d[i, i]}, but a SLIT gives every node "
                                  f"{LOCAL_DISTANCE} to itself (Linux refuses any other table).")
    remote = np.where(np.eye(n, dtype=bool), SLIT_MAX + 1, d).min(axis=1) if n > 1 else np.full(1, SLIT_MAX + 1)
    near = np.flatnonzero(remote <= LOCAL_DISTANCE)
    if near.size:
        i = near[0]
        _fail(where, "distances", f"row {i}: the node's own distance {d[i, i]} must be strictly below every "
                                  f"remote distance in its row, but the smallest remote one is {remote[i]}.")
    d.flags.writeable = False
    return d


def check_cpus(where: str, cpus, nodes: int) -> tuple[int, ...]:
    """``cpus_per_node`` (one integer for all nodes, or one per node) as a tuple, or a TopologyError."""
    if isinstance(cpus, int) and not isinstance(cpus, bool):
        cpus = [cpus] * nodes
    if not isinstance(cpus, (list, tuple)) or not cpus or \
            not all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in cpus):
        _fail(where, "cpus_per_node", f"must be a positive integer or a list of positive integers, not {cpus!r}.")
    if len(cpus) != nodes:
        _fail(where, "cpus_per_node", f"has {len(cpus)} entries but 'distances' has {nodes} nodes.")
    return tuple(cpus)


def make_machine(where: str, name: str, cpus_per_node, distances, description: str = "", source: str = "") -> Machine:
    """A validated Machine; ``where`` names the file (or origin) in error messages."""
    d = check_distances(where, distances)
    return Machine(name, description, source, check_cpus(where, cpus_per_node, len(d)), d)
