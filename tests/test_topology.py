"""Machines from SLIT matrices and the sched-domain hierarchies built on them."""

from pathlib import Path

import pytest
import yaml

from simcore.topology import TopologyError, catalog, load_topology, this_machine
from simcore.topology.domains import domains_for
from simcore.topology.machine import make_machine

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "config/topologies"


def shape(machine, builder, cpu=0):
    """(name, span size, group sizes) per level of one CPU's hierarchy."""
    return [(d.name, len(d.span), sorted(len(g) for g in d.groups)) for d in domains_for(machine, builder)[cpu]]


def structure(machine, builder):
    return [[(d.level, d.span, d.groups, d.min_interval, d.busy_factor) for d in doms]
            for doms in domains_for(machine, builder)]


@pytest.mark.parametrize("name", catalog(CATALOG))
def test_catalog_loads_with_its_stated_levels(name):
    m = load_topology(name, CATALOG)
    assert m.name == name and m.source and m.description
    stated = {"corr05-4x2": 4, "corr05-4x4": 4, "altix-16x2": 6, "superdome-16x4": 3, "mehta-s1": 6,
              "mehta-s2": 6, "mehta-s3": 6, "mehta-8-4-6": 6, "mehta-8-2-3": 3, "epyc-2s": 3, "xeon-snc": 3}
    if name in stated:
        assert len(m.levels) == stated[name]
    for builder in ("linux-2level", "multilevel"):
        for doms in domains_for(m, builder):
            assert doms[-1].span == frozenset(range(m.cpus))  # the top spans the machine
            for d in doms:  # groups are disjoint and cover the span
                assert frozenset().union(*d.groups) == d.span and sum(map(len, d.groups)) == len(d.span)


def test_hand_checked_hierarchies():
    four = load_topology("corr05-4x2", CATALOG)  # a line of 4 nodes: 10/22/26/30
    assert shape(four, "linux-2level") == [("cpu", 2, [1, 1]), ("node", 8, [2, 2, 2, 2])]
    assert shape(four, "multilevel") == [("cpu", 2, [1, 1]), ("node-d22", 4, [2, 2]), ("node-d26", 6, [2, 4]),
                                         ("node", 8, [2, 6])]
    assert len(domains_for(four, "multilevel")[2]) == 3  # node 1 sees only two remote distances
    sd = load_topology("superdome-16x4", CATALOG)
    assert shape(sd, "multilevel") == [("cpu", 4, [1] * 4), ("node-d17", 16, [4] * 4), ("node", 64, [16] * 4)]
    assert shape(sd, "linux-2level") == [("cpu", 4, [1] * 4), ("node", 64, [4] * 16)]
    altix = load_topology("altix-16x2", CATALOG)  # 8 routers on a ring, 2 nodes each
    assert [s for _, s, _ in shape(altix, "multilevel")] == [2, 4, 12, 20, 28, 32]
    assert len(shape(altix, "linux-2level")) == 2
    s1 = load_topology("mehta-s1", CATALOG)
    assert len(domains_for(s1, "multilevel")[0]) == 6 and len(s1.levels) == 6


def test_multilevel_equals_linux_2level_on_one_node_and_on_equal_distances():
    one = make_machine("test", "one", 4, [[10]])
    flat = make_machine("test", "flat", [2, 3, 2], [[10, 20, 20], [20, 10, 20], [20, 20, 10]])
    for m in (one, flat):
        assert structure(m, "multilevel") == structure(m, "linux-2level")
    assert len(domains_for(one, "multilevel")[0]) == 1


def _write(tmp_path, data) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


GOOD = {"name": "t", "cpus_per_node": 2, "distances": [[10, 20], [20, 10]]}
BAD = {
    "asymmetric": ({"distances": [[10, 20], [21, 10]]}, "distances", "symmetric"),
    "diagonal not minimum": ({"distances": [[10, 20], [20, 30]]}, "distances", "own distance"),
    "non-positive": ({"distances": [[10, 0], [0, 10]]}, "distances", "positive"),
    "wrong size": ({"distances": [[10, 20, 30], [20, 10]]}, "distances", "row 0"),
    "cpus list length": ({"cpus_per_node": [2, 2, 2]}, "cpus_per_node", "3 entries"),
    "cpus not positive": ({"cpus_per_node": 0}, "cpus_per_node", "positive"),
    "unknown key": ({"colour": "red"}, "colour", "not a topology key"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_topology_files_name_file_and_key(case, tmp_path):
    change, key, words = BAD[case]
    path = _write(tmp_path, {**GOOD, **change})
    with pytest.raises(TopologyError) as err:
        load_topology(path)
    assert str(path) in str(err.value) and f"'{key}'" in str(err.value) and words in str(err.value)


def test_missing_key_and_unknown_name(tmp_path):
    with pytest.raises(TopologyError, match="'distances' is missing"):
        load_topology(_write(tmp_path, {"name": "x", "cpus_per_node": 1}))
    with pytest.raises(TopologyError, match="no topology 'nowhere'"):
        load_topology("nowhere", CATALOG)


def test_this_machine_reads_sysfs(tmp_path):
    for node, (cpus, dist) in enumerate([("0-1,4", "10 21"), ("2-3,5-6", "21 10")]):
        d = tmp_path / f"node{node}"
        d.mkdir()
        (d / "cpulist").write_text(cpus + "\n")
        (d / "distance").write_text(dist + "\n")
    m = this_machine(tmp_path)
    assert m.cpus_per_node == (3, 4) and m.distances.tolist() == [[10, 21], [21, 10]]
    assert this_machine(tmp_path / "absent").nodes == 1


def test_cli_topology(simcore_cli, tmp_path):
    proc = simcore_cli("topology", "corr05-4x2", "--builder", "multilevel")
    assert proc.returncode == 0 and "node-d26" in proc.stdout
    bad = _write(tmp_path, {**GOOD, "distances": [[10, 20], [21, 10]]})
    proc = simcore_cli("topology", bad)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "'distances'" in proc.stderr
