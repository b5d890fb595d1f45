"""The groups of a node level, under its two readings (``node_groups``): 'per-node' (one group per
node at every level, Linux 2.6.11's node domain) and 'child-spans' (the child level's spans, cut
to stay disjoint); derived by hand on the Altix, and followed into the numa model and the SAN."""

from __future__ import annotations

from pathlib import Path

import pytest

from simcore.cli import build_parser
from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models.numa import PARAMETERS, full_params, run_replication
from simcore.models.numa.model import default_domains_for
from simcore.san.corr05 import build
from simcore.topology import load_topology
from simcore.topology.domains import DEFAULT_NODE_GROUPS, NODE_GROUPS, domains_for
from simcore.topology.machine import TopologyError

CATALOG = Path(__file__).resolve().parents[1] / "config/topologies"


def node_sets(machine, domain) -> list[list[int]]:
    """A domain's groups as the sorted nodes of each, in the domain's order."""
    return [sorted({machine.cpu_node[c] for c in g}) for g in domain.groups]


# SLIT row of node 0 in config/topologies/altix-16x2.yaml (8 routers on a ring, 2 nodes each):
#   node:  0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15
#   d:    10  19  23  23  27  27  31  31  35  35  31  31  27  27  23  23
# Remote distances 19 < 23 < 27 < 31 < 35, so multilevel makes five node levels over the CPU
# level {0, 1} (node k holds CPUs 2k, 2k+1). Members, in the order groups are opened (distance
# from node 0, then node number): 0 | 1 | 2 3 14 15 | 4 5 12 13 | 6 7 10 11 | 8 9.
#
# per-node: each member is its own group, in that order, at every level.
#
# child-spans: a member not yet covered opens a group of the uncovered members within the child
# level's threshold of it (rows of nodes 2, 4, 6, 8, 12, 14 of the same file):
#   d19 (child 10): members {0, 1}: {0} {1}.
#   d23 (child 19): members {0-3, 14, 15}: node 0 takes {0, 1} (d(0,1) = 19); node 2 takes {2, 3};
#       node 14 takes {14, 15} (d(14,15) = 19, d(14,0) = 23).
#   d27 (child 23): members {0-5, 12-15}: node 0 takes {0-3, 14, 15} (its row <= 23); node 4, first
#       uncovered (27, lowest number), reaches {2-7} within 23, cut to uncovered members: {4, 5};
#       node 12 reaches {10-15}, cut to {12, 13}.
#   d31 (child 27): members all but 8, 9 (35): node 0 takes {0-5, 12-15}; node 6 reaches {2-11}
#       within 27, cut to {6, 7, 10, 11}.
#   node (child 31): all 16: node 0 takes all but 8, 9; node 8 takes {8, 9}.
ALTIX_NODE0 = {
    "per-node": [
        ("node-d19", [[0], [1]]),
        ("node-d23", [[0], [1], [2], [3], [14], [15]]),
        ("node-d27", [[0], [1], [2], [3], [14], [15], [4], [5], [12], [13]]),
        ("node-d31", [[0], [1], [2], [3], [14], [15], [4], [5], [12], [13], [6], [7], [10], [11]]),
        ("node", [[0], [1], [2], [3], [14], [15], [4], [5], [12], [13], [6], [7], [10], [11], [8], [9]]),
    ],
    "child-spans": [
        ("node-d19", [[0], [1]]),
        ("node-d23", [[0, 1], [2, 3], [14, 15]]),
        ("node-d27", [[0, 1, 2, 3, 14, 15], [4, 5], [12, 13]]),
        ("node-d31", [[0, 1, 2, 3, 4, 5, 12, 13, 14, 15], [6, 7, 10, 11]]),
        ("node", [[0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15], [8, 9]]),
    ],
}
# The spans (the union of each level's groups): 2, 6, 10, 14 and 16 nodes, the same under both.
ALTIX_SPANS = [2, 6, 10, 14, 16]


@pytest.mark.parametrize("reading", sorted(ALTIX_NODE0))
def test_the_groups_of_altix_cpu0_at_every_level(reading):
    altix = load_topology("altix-16x2", CATALOG)
    doms = domains_for(altix, "multilevel", node_groups=reading)[0]
    assert (doms[0].name, [sorted(g) for g in doms[0].groups]) == ("cpu", [[0], [1]])
    assert [(d.name, node_sets(altix, d)) for d in doms[1:]] == ALTIX_NODE0[reading]
    assert [len(d.span) // 2 for d in doms[1:]] == ALTIX_SPANS
    assert all(sorted(c for g in d.groups for c in g) == sorted(d.span) for d in doms)   # disjoint, covering


def test_a_level_over_the_cpu_level_is_one_group_per_node_under_both_readings():
    """linux-2level's only node level, and multilevel's first, already have one group per node
    (their child is the CPU level): the reading changes neither, on any catalog machine."""
    for path in sorted(CATALOG.glob("*.yaml")):
        machine = load_topology(str(path))
        flat = {g: domains_for(machine, "linux-2level", node_groups=g) for g in NODE_GROUPS}
        assert flat["per-node"] == flat["child-spans"], path.stem
        multi = {g: domains_for(machine, "multilevel", node_groups=g) for g in NODE_GROUPS}
        first = {g: [[d for d in doms if d.name != "cpu"][:1] for doms in per_cpu] for g, per_cpu in multi.items()}
        assert first["per-node"] == first["child-spans"], path.stem


def test_the_reading_is_named_and_checked():
    assert set(NODE_GROUPS) == {"per-node", "child-spans"} and DEFAULT_NODE_GROUPS == "per-node"
    altix = load_topology("altix-16x2", CATALOG)
    assert domains_for(altix, "multilevel") == domains_for(altix, "multilevel", node_groups="per-node")
    with pytest.raises(TopologyError) as err:
        domains_for(altix, "multilevel", node_groups="per-cpu")
    assert str(err.value) == "node_groups 'per-cpu' is unknown (known: per-node, child-spans)."
    with pytest.raises(InputError) as err:
        default_domains_for(altix, "multilevel", "ia64-2.6.12", "per-cpu")
    assert str(err.value) == "numa model: parameter 'node_groups' must be one of per-node, child-spans, not 'per-cpu'"
    assert PARAMETERS["node_groups"].default == DEFAULT_NODE_GROUPS
    with pytest.raises(InputError, match="node_groups"):
        full_params({"node_groups": "per-cpu"})
    parser = build_parser()
    assert [parser.parse_args(["topology", "altix-16x2", "--node-groups", g]).node_groups for g in NODE_GROUPS] == \
        list(NODE_GROUPS)
    with pytest.raises(SystemExit):
        parser.parse_args(["topology", "altix-16x2", "--node-groups", "per-cpu"])


def test_the_numa_model_builds_its_domains_with_the_reading():
    """One replication of 100 tasks on the Altix: multilevel balances over other groups under
    'per-node' than under 'child-spans' (levels 2-5 differ, above), so its run differs;
    linux-2level's domains are the same (above), so its metrics are equal to the last bit."""
    runs = {g: run_replication({"topology": "altix-16x2", "n_tasks": 100, "node_groups": g},
                               ["linux-2level", "multilevel"], Streams(replication_seed(7, "node-groups", 0, 0)))
            for g in NODE_GROUPS}
    assert runs["per-node"]["linux-2level"] == runs["child-spans"]["linux-2level"]
    assert runs["per-node"]["multilevel"] != runs["child-spans"]["multilevel"]


def test_the_corr05_san_takes_the_reading():
    """corr05-4x2 is a line (row of node 0: 10 22 26 30). CPU 0's node levels pull P from the CPUs
    of the other groups, a level's share split evenly between its other groups and then their
    CPUs. d22: {0} {1} under both. d26 (nodes 0-2): child-spans {0, 1} {2}, per-node {0} {1} {2};
    top (nodes 0-3): child-spans {0, 1, 2} {3}, per-node {0} {1} {2} {3}. So under 'per-node'
    node 1 (CPU 2) is pulled from by two more levels and node 2 (CPU 4) shares d26 with node 1:
    pull0_2 grows, pull0_4 shrinks (d26: 1/2 -> 1/4 per CPU; top: 0 -> 1/6; the node levels
    balance equally often, so -1/4 + 1/6 < 0). Left out, the reading is the default."""
    def pulls(**reading):
        san = build("corr05-4x2", "n", **reading)
        return {j: next(e.rate for e in san.events if e.name == f"pull0_{j}") for j in range(1, 8)}

    child, per_node = pulls(node_groups="child-spans"), pulls(node_groups="per-node")
    assert pulls() == per_node
    assert per_node[2] > child[2] and per_node[4] < child[4]


def test_cli_topology_shows_the_reading(simcore_cli):
    """By default (per-node) the Altix top level of 16 single nodes shows its first 6, the count
    and its last (node 9: CPUs 18-19); under child-spans node 0's top level is {0-15,20-31} {16-19}."""
    proc = simcore_cli("topology", "altix-16x2", "--builder", "multilevel")
    assert proc.returncode == 0, proc.stderr
    assert "(node init ia64-2.6.12, node groups per-node)" in proc.stdout
    assert "{0-1} {2-3} {4-5} {6-7} {28-29} {30-31} ... (16 groups in all) ... {18-19}" in proc.stdout
    proc = simcore_cli("topology", "altix-16x2", "--builder", "multilevel", "--node-groups", "child-spans")
    assert "node groups child-spans" in proc.stdout and "groups {0-15,20-31} {16-19}" in proc.stdout
