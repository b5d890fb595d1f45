"""Machines from SLIT matrices and the sched-domain hierarchies built on them."""

import re
from functools import partial
from pathlib import Path

import pytest
import yaml

from simcore.topology import TopologyError, catalog, load_topology, this_machine
from simcore.topology.domains import BUILDERS, NODE_GROUPS, describe
from simcore.topology.domains import domains_for as build_domains
from simcore.topology.machine import make_machine

# these tests pin the child-spans reading of a node level's groups; per-node: tests/test_node_groups.py
domains_for = partial(build_domains, node_groups="child-spans")

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "config/topologies"
STATED_LEVELS = {"corr05-4x2": 4, "corr05-4x4": 4, "altix-16x2": 6, "superdome-16x4": 3, "mehta-s1": 6,
                 "mehta-s2": 6, "mehta-s3": 6, "mehta-8-4-6": 6, "mehta-8-2-3": 3, "epyc-2s": 3, "xeon-snc": 3,
                 "altix-64x4": 5, "opteron-4s": 3, "xeon-e7-4s": 2}


def shape(machine, builder, cpu=0):
    """(name, span size, sorted group sizes) per level of one CPU's hierarchy."""
    return [(d.name, len(d.span), sorted(len(g) for g in d.groups)) for d in domains_for(machine, builder)[cpu]]


def structure(machine, builder):
    return [[(d.level, d.name, d.span, d.groups, d.min_interval, d.busy_factor, d.flags) for d in doms]
            for doms in domains_for(machine, builder)]


def test_machine_api():
    m = make_machine("test", "m", [2, 3], [[10, 20], [20, 10]], "two nodes", "made up")
    assert (m.nodes, m.cpus, m.levels, m.cpu_node) == (2, 5, (10, 20), (0, 0, 1, 1, 1))
    assert m.node_cpus(1) == (2, 3, 4) and m.distance(0, 1) == 10 and m.distance(1, 4) == 20
    assert (m.name, m.description, m.source) == ("m", "two nodes", "made up")
    with pytest.raises(Exception):
        m.name = "other"  # frozen


def test_catalog_is_complete():
    assert set(STATED_LEVELS) <= set(catalog(CATALOG))


@pytest.mark.parametrize("name", catalog(CATALOG))
def test_catalog_loads_with_its_stated_levels(name):
    m = load_topology(name, CATALOG)
    assert m.name == name and m.source and m.description
    said = re.search(r"(\d+) (?:memory\s+access\s+)?levels", m.description)
    assert said, f"{name}: the description should say how many levels the machine has"
    assert len(m.levels) == int(said.group(1)) == STATED_LEVELS.get(name, int(said.group(1)))
    for builder in BUILDERS:
        for groups in NODE_GROUPS:
            for cpu, doms in enumerate(build_domains(m, builder, node_groups=groups)):
                assert doms[-1].span == frozenset(range(m.cpus))  # the top spans the machine
                own = frozenset(m.node_cpus(m.cpu_node[cpu]))
                for k, d in enumerate(doms):
                    assert d.level == k and cpu in d.span
                    assert frozenset().union(*d.groups) == d.span and sum(map(len, d.groups)) == len(d.span)
                    local = next(g for g in d.groups if cpu in g)  # the local group: the child's span, or the node
                    assert local == (frozenset([cpu]) if d.name == "cpu" else
                                     doms[k - 1].span if k and groups == "child-spans" else own)
                    assert k == 0 or doms[k - 1].span < d.span


def test_hand_checked_hierarchies():
    four = load_topology("corr05-4x2", CATALOG)  # a line of 4 nodes: 10/22/26/30
    assert shape(four, "linux-2level") == [("cpu", 2, [1, 1]), ("node", 8, [2, 2, 2, 2])]
    assert shape(four, "multilevel") == [("cpu", 2, [1, 1]), ("node-d22", 4, [2, 2]), ("node-d26", 6, [2, 4]),
                                         ("node", 8, [2, 6])]
    assert shape(four, "multilevel", cpu=2) == [("cpu", 2, [1, 1]), ("node-d22", 6, [2, 2, 2]), ("node", 8, [2, 6])]
    sd = load_topology("superdome-16x4", CATALOG)  # 4 crossbars of 4 cells
    assert shape(sd, "multilevel") == [("cpu", 4, [1] * 4), ("node-d17", 16, [4] * 4), ("node", 64, [16] * 4)]
    assert shape(sd, "linux-2level") == [("cpu", 4, [1] * 4), ("node", 64, [4] * 16)]
    altix = load_topology("altix-16x2", CATALOG)  # 8 routers on a ring, 2 nodes each
    assert shape(altix, "multilevel") == [("cpu", 2, [1, 1]), ("node-d19", 4, [2, 2]), ("node-d23", 12, [4, 4, 4]),
                                          ("node-d27", 20, [4, 4, 12]), ("node-d31", 28, [8, 20]),
                                          ("node", 32, [4, 28])]
    assert shape(altix, "linux-2level") == [("cpu", 2, [1, 1]), ("node", 32, [2] * 16)]
    s1 = load_topology("mehta-s1", CATALOG)  # 16-2-6
    assert len(domains_for(s1, "multilevel")[0]) == 6 and len(domains_for(s1, "linux-2level")[0]) == 2
    assert [s for _, s, _ in shape(s1, "multilevel")] == [2, 4, 12, 20, 28, 32]
    s3 = load_topology("mehta-s3", CATALOG)  # 32-2-6
    assert [(s, len(g)) for _, s, g in shape(s3, "multilevel")] == [(2, 2), (8, 4), (24, 3), (40, 3), (56, 2),
                                                                   (64, 2)]


def test_groups_of_nested_neighbourhoods_are_child_spans():
    """Ultrametric matrices: every group is the span of some member CPU's child domain."""
    for name in ("superdome-16x4", "epyc-2s", "xeon-snc", "mehta-8-2-3"):
        per_cpu = domains_for(load_topology(name, CATALOG), "multilevel")
        for doms in per_cpu:
            for k in range(1, len(doms)):
                for g in doms[k].groups:
                    assert any(per_cpu[c][k - 1].span == g for c in g)


def test_groups_of_non_nested_neighbourhoods():
    opt = load_topology("opteron-4s", CATALOG)  # real dump, 16-neighbourhoods overlap
    top = domains_for(opt, "multilevel")[0][-1]
    nodes = [sorted({opt.cpu_node[c] for c in g}) for g in top.groups]
    assert nodes == [[0, 1, 2, 4, 6], [3, 5], [7]]  # own 16-neighbourhood, then the rest around node 3, then 7
    big = load_topology("altix-64x4", CATALOG)
    assert shape(big, "multilevel") == [("cpu", 4, [1] * 4), ("node-d22", 16, [4] * 4), ("node-d26", 48, [16] * 3),
                                        ("node-d30", 160, [16, 32, 32, 32, 48]), ("node", 256, [96, 160])]


def test_multilevel_equals_linux_2level_on_one_node_and_on_equal_distances():
    one = make_machine("test", "one", 4, [[10]])
    flat = make_machine("test", "flat", [2, 3, 1], [[10, 20, 20], [20, 10, 20], [20, 20, 10]])
    for m in (one, flat, load_topology("xeon-e7-4s", CATALOG)):
        assert structure(m, "multilevel") == structure(m, "linux-2level")
    assert [d.name for d in domains_for(one, "multilevel")[0]] == ["cpu"]
    assert [d.name for d in domains_for(flat, "multilevel")[5]] == ["node"]  # a 1-CPU node has no CPU level


def test_builders_and_describe():
    assert set(BUILDERS) == {"linux-2level", "multilevel"}
    m = load_topology("corr05-4x2", CATALOG)
    with pytest.raises(TopologyError, match="builder 'nope' is unknown"):
        domains_for(m, "nope")
    text = describe(m, "multilevel")
    assert "4 memory access levels [10, 22, 26, 30]" in text and " 10  22  26  30" in text
    assert "level 3:" in text and "node-d26" in text and "80-320 ms" in text
    x86 = domains_for(m, "multilevel", node_init="x86_64-2.6.12")[0]
    assert (x86[0].min_interval, x86[1].min_interval, x86[1].busy_factor) == (1, 8, 32)


def _write(tmp_path, data) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


GOOD = {"name": "t", "description": "2 levels", "source": "test", "cpus_per_node": 2,
        "distances": [[10, 20], [20, 10]]}
BAD = {
    "asymmetric": ({"distances": [[10, 20, 20], [21, 10, 20], [20, 20, 10]]}, "distances",
                   "[0][1] = 20 but [1][0] = 21"),
    "diagonal not 10": ({"distances": [[10, 20], [20, 30]]}, "distances", "row 1: the node's own distance is 30"),
    "diagonal scaled": ({"distances": [[20, 40], [40, 20]]}, "distances", "row 0: the node's own distance is 20"),
    "diagonal tie": ({"distances": [[10, 10], [10, 10]]}, "distances", "strictly below"),
    "remote below own": ({"distances": [[10, 5], [5, 10]]}, "distances", "smallest remote one is 5"),
    "non-positive": ({"distances": [[10, 0], [0, 10]]}, "distances", "[0][1] = 0 is not an integer from 1 to 255"),
    "not a number": ({"distances": [[10, float("nan")], [float("nan"), 10]]}, "distances", "[0][1] = nan"),
    "infinite": ({"distances": [[10, float("inf")], [float("inf"), 10]]}, "distances", "[0][1] = inf"),
    "beyond a byte": ({"distances": [[10, 256], [256, 10]]}, "distances", "from 1 to 255"),
    "non-integer": ({"distances": [[1.0, 1.6], [1.6, 1.0]]}, "distances", "divided by 10"),
    "not numbers": ({"distances": [[10, "far"], ["far", 10]]}, "distances", "'far'"),
    "wrong size": ({"distances": [[10, 20, 30], [20, 10]]}, "distances", "row 0 has 3 entries but there are 2"),
    "not a matrix": ({"distances": 10}, "distances", "list of rows"),
    "nested entry": ({"distances": [[10, 20], [20, []]]}, "distances", "[1][1] = [] is not an integer"),
    "cpus list length": ({"cpus_per_node": [2, 2, 2]}, "cpus_per_node", "3 entries"),
    "cpus not positive": ({"cpus_per_node": 0}, "cpus_per_node", "positive"),
    "cpus not integer": ({"cpus_per_node": [2, 1.5]}, "cpus_per_node", "positive integer"),
    "unknown key": ({"colour": "red"}, "colour", "not a topology key"),
    "name not text": ({"name": 3}, "name", "non-empty string"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_topology_files_name_file_and_key(case, tmp_path):
    change, key, words = BAD[case]
    path = _write(tmp_path, {**GOOD, **change})
    with pytest.raises(TopologyError) as err:
        load_topology(path)
    msg = str(err.value)
    assert msg.startswith(str(path)) and f"'{key}'" in msg and words in msg and msg.count("\n") == 0


@pytest.mark.parametrize("key", ["name", "description", "source", "cpus_per_node", "distances"])
def test_missing_key(key, tmp_path):
    path = _write(tmp_path, {k: v for k, v in GOOD.items() if k != key})
    with pytest.raises(TopologyError, match=f"key '{key}' is missing"):
        load_topology(path)


def test_unreadable_files_and_unknown_names(tmp_path):
    with pytest.raises(TopologyError, match="not valid YAML"):
        load_topology(_write(tmp_path, "name: [unclosed\n"))
    with pytest.raises(TopologyError, match="must be a mapping"):
        load_topology(_write(tmp_path, "- 1\n"))
    with pytest.raises(TopologyError, match="no topology 'nowhere'"):
        load_topology("nowhere", CATALOG)
    with pytest.raises(TopologyError, match="no such topology file"):
        load_topology(tmp_path / "absent.yaml")


def _node(root, k, cpus=None, dist=None):
    d = root / f"node{k}"
    d.mkdir(parents=True)
    if cpus is not None:
        (d / "cpulist").write_text(cpus + "\n")
    if dist is not None:
        (d / "distance").write_text(dist + "\n")


def test_this_machine_reads_sysfs(tmp_path):
    _node(tmp_path, 0, "0-1,4", "10 21 17")
    _node(tmp_path, 2, "2-3,5-6", "21 10 17")
    _node(tmp_path, 3, "", "17 17 10")  # memory only: left out
    (tmp_path / "possible").write_text("0,2-3\n")
    m = this_machine(tmp_path)
    assert m.cpus_per_node == (3, 4) and m.distances.tolist() == [[10, 21], [21, 10]] and m.name == "this-machine"
    assert this_machine(tmp_path / "absent").nodes == 1


def test_this_machine_without_slit_and_with_bad_files(tmp_path):
    _node(tmp_path / "a", 0, "0-3")
    _node(tmp_path / "a", 1, "4-7")
    assert this_machine(tmp_path / "a").distances.tolist() == [[10, 20], [20, 10]]  # Linux's fallback
    _node(tmp_path / "b", 0, "0-x", "10")
    with pytest.raises(TopologyError, match="cpulist"):
        this_machine(tmp_path / "b")
    _node(tmp_path / "c", 0, "0", "10 20")
    with pytest.raises(TopologyError, match="distance"):
        this_machine(tmp_path / "c")


def test_this_machine_on_the_real_sysfs():
    m = this_machine()
    doms = domains_for(m, "multilevel")[0]
    assert m.cpus >= 1 and (not doms or doms[-1].span == frozenset(range(m.cpus)))


def test_cli_topology(simcore_cli, tmp_path):
    proc = simcore_cli("topology", "corr05-4x2", "--builder", "multilevel")
    assert proc.returncode == 0 and "node-d26" in proc.stdout
    bad = _write(tmp_path, {**GOOD, "distances": [[10, 20], [21, 10]]})
    proc = simcore_cli("topology", bad)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "'distances'" in proc.stderr


def test_a_name_the_file_system_cannot_hold_is_refused(simcore_cli, tmp_path):
    """A topology name of 300 characters makes the file system refuse the lookup (ENAMETOOLONG):
    an input error in one line (exit 2), not an internal one, and nothing written."""
    with pytest.raises(TopologyError, match="not a topology name or file"):
        load_topology("x" * 300)
    out = tmp_path / "x.parquet"
    proc = simcore_cli("run", "corr05-fig9", "--cell", 0, "--reps", "0:1", "--scale", "smoke", "--out", out,
                       "--set", "topology=" + "x" * 300)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and not out.exists()


# -- a machine of 1,024 nodes ------------------------------------------------------------------------
def tree_distances(nodes: int = 1024) -> list[list[int]]:
    """Routers in a tree: 20 within a block of 8 nodes, 30 within a block of 64, 40 beyond."""
    def d(i, j):
        return 10 if i == j else 20 if i // 8 == j // 8 else 30 if i // 64 == j // 64 else 40
    return [[d(i, j) for j in range(nodes)] for i in range(nodes)]


def test_a_machine_of_1024_nodes_is_built_level_by_level():
    """Hand-derived from the tree: under ``multilevel`` node 77's domains span its block of 8
    (8 single nodes), its block of 64 (8 blocks of 8, its own first) and the machine (16 blocks
    of 64, its own first, then by number); under ``linux-2level`` one level of 1,024 single nodes,
    its own first. Two CPUs a node, so a CPU level below. Equal CPU sets are one object."""
    m = make_machine("test", "tree-1024", 2, tree_distances())
    assert (m.nodes, m.cpus, m.levels) == (1024, 2048, (10, 20, 30, 40))
    cpu = 2 * 77
    multi = domains_for(m, "multilevel")[cpu]
    assert [(d.name, len(d.span), len(d.groups)) for d in multi] == [
        ("cpu", 2, 2), ("node-d20", 16, 8), ("node-d30", 128, 8), ("node", 2048, 16)]
    blocks = [sorted(m.cpu_node[c] for c in g)[0] for g in multi[2].groups]
    assert blocks == [72, 64, 80, 88, 96, 104, 112, 120]                 # own block of 8, then by number
    assert [sorted(g)[0] // 128 for g in multi[3].groups] == [1, 0] + list(range(2, 16))   # blocks of 64
    per_cpu = domains_for(m, "linux-2level")
    flat = per_cpu[cpu]
    assert [(d.name, len(d.span), len(d.groups)) for d in flat] == [("cpu", 2, 2), ("node", 2048, 1024)]
    order = [m.cpu_node[min(g)] for g in flat[1].groups]
    assert order[:9] == [77, 72, 73, 74, 75, 76, 78, 79, 64] and sorted(order) == list(range(1024))
    other = per_cpu[2 * 500]
    assert all(a is b for a, b in zip(sorted(flat[1].groups, key=min), sorted(other[1].groups, key=min)))


def test_a_1024_node_table_is_refused_at_its_first_fault():
    """A broken 1,024-node table is refused naming its first fault in reading order."""
    rows = tree_distances()
    rows[700][3] = 41
    with pytest.raises(TopologyError, match=r"\[3\]\[700\] = 40 but \[700\]\[3\] = 41"):
        make_machine("test", "t", 1, rows)
    rows = tree_distances()
    rows[900][900] = 0
    with pytest.raises(TopologyError, match=r"entry \[900\]\[900\] = 0"):
        make_machine("test", "t", 1, rows)
    rows = tree_distances()
    rows[900][900] = 15
    with pytest.raises(TopologyError, match="row 900: the node's own distance is 15"):
        make_machine("test", "t", 1, rows)


def test_cli_topology_of_a_large_machine(simcore_cli, tmp_path):
    """``simcore topology`` on a 256-node file: a domain of 256 groups shows its first ones, the
    count and its last, and the matrix is not printed (above 64 nodes). (Reading YAML costs about
    20 microseconds an entry in PyYAML, so the 1,024-node machine is tested without a file.)"""
    path = tmp_path / "tree.yaml"
    body = ",\n  ".join("[" + ", ".join(map(str, row)) + "]" for row in tree_distances(256))
    path.write_text(f"name: tree\ndescription: 4 levels\nsource: test\ncpus_per_node: 1\ndistances: [\n  {body}]\n")
    proc = simcore_cli("topology", path, "--builder", "linux-2level")
    assert proc.returncode == 0, proc.stderr
    assert "256 nodes, 256 CPUs" in proc.stdout and "(256 x 256: not printed above 64 nodes)" in proc.stdout
    assert "{0} {1} {2} {3} {4} {5} ... (256 groups in all) ... {255}" in proc.stdout
    text = describe(make_machine("test", "tree", 1, tree_distances()), "linux-2level")
    assert text.count("(1024 groups in all)") == 1024 and len(text.splitlines()) < 1100
