"""mehta specs: Tables 1-5 are all present, small at smoke scale, and their published data are consistent."""

import pytest

from simcore.experiments import load_spec

TABLE1 = ["s1-500ms", "s1-200ms", "8-4-6", "8-2-3-cpu", "8-2-3-io"]
TURNAROUND = [f"mehta-table{t}-w{w}" for t in (3, 4, 5) for w in (1, 2, 3)]
NEW = [f"mehta-table1-{s}" for s in TABLE1] + ["mehta-table2"] + TURNAROUND[3:]


def _spec(root, name):
    return load_spec(root / "config/experiments" / f"{name}.yaml")


@pytest.mark.parametrize("name", NEW)
def test_mehta_spec_uses_the_preset_and_a_tiny_smoke_scale(root, name):
    spec = _spec(root, name)
    assert spec.data["preset"] == "mehta"
    assert spec.baseline == "multilevel"
    assert len(spec.cells("smoke")) <= 2
    smoke = spec.data["scales"]["smoke"]
    assert smoke["replications"] == 3 and smoke["batch"] == 3
    assert spec.data["scales"]["full"]["replications"] == 100
    params = spec.params()
    assert params["n_nice0"] >= params["n_tasks"] or all(c.values.get("n_tasks", 0) <= params["n_nice0"]
                                                         for c in spec.all_cells())


def test_table1_has_its_ten_rows(root):
    rows = [(name, e.get("where", {}).get("n_tasks"))
            for name in (f"mehta-table1-{s}" for s in TABLE1)
            for e in _spec(root, name).data["published"] if e["metric"] == "lb_attempts"]
    assert len(rows) == 10
    for name in (f"mehta-table1-{s}" for s in TABLE1):
        pub = {(e["metric"], str(e.get("where"))): e["value"] for e in _spec(root, name).data["published"]}
        for (metric, where), value in pub.items():
            if metric == "lb_no_imbalance_share":
                share = pub[("lb_no_imbalance", where)] / pub[("lb_attempts", where)]
                assert share == pytest.approx(value, abs=5e-4)
                assert pub[("lb_failed_share", where)] == value     # set beside the kernel's own failures


@pytest.mark.parametrize("name", ["mehta-table2"])
def test_table2_shares_sum_to_one(root, name):
    spec = _spec(root, name)
    shares = [e["value"] for e in spec.data["published"] if e["metric"].startswith("task_share_level_")]
    assert len(shares) == 6 and sum(shares) == pytest.approx(1.0)
    assert spec.params()["n_tasks"] == 200 and spec.params()["topology"] == "mehta-s1"


@pytest.mark.parametrize("name", TURNAROUND[3:])
def test_published_gain_matches_the_published_turnaround(root, name):
    """The stored ratio (1 - gain/100) agrees with conservative/Linux from the same table to rounding."""
    pub = _spec(root, name).data["published"]
    absolute = {(e["policy"], e["where"]["n_tasks"]): e["value"] for e in pub if "than" not in e}
    ratios = [e for e in pub if "than" in e]
    assert len(ratios) == len(absolute) // 2
    for e in ratios:
        n = e["where"]["n_tasks"]
        assert absolute[("conservative-soft", n)] / absolute[("multilevel", n)] == pytest.approx(e["value"], abs=0.006)
