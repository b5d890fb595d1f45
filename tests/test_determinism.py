"""Results depend only on spec, seed and replication indices, never on the batch split."""

import pandas as pd
import pandas.testing as pdt
import pytest

from simcore.experiments import load_spec
from simcore.experiments.runner import run_batch


def _rows(spec, cell, ranges, seed=11):
    frames = [run_batch(spec, cell, range(a, b), seed) for a, b in ranges]
    return pd.concat(frames, ignore_index=True).drop(columns=["wall_time"])


def test_one_batch_equals_three_batches(root):
    spec = load_spec(root / "config/experiments/amir-table2.yaml")
    whole = _rows(spec, 0, [(0, 6)])
    split = _rows(spec, 0, [(0, 1), (1, 4), (4, 6)])
    pdt.assert_frame_equal(whole, split)


@pytest.mark.slow
def test_cli_batches_give_identical_bytes_of_rows(root, simcore_cli, tmp_path):
    files = []
    for name, reps in (("all", "0:3"), ("a", "0:2"), ("b", "2:3")):
        out = tmp_path / f"{name}.parquet"
        proc = simcore_cli("run", "barak96-fig2", "--cell", 6, "--reps", reps, "--out", out)
        assert proc.returncode == 0, proc.stderr
        files.append(pd.read_parquet(out).drop(columns=["wall_time"]))
    pdt.assert_frame_equal(files[0], pd.concat(files[1:], ignore_index=True))


def test_different_seeds_give_different_workloads(root):
    spec = load_spec(root / "config/experiments/amir-table2.yaml")
    a, b = _rows(spec, 0, [(0, 2)], seed=1), _rows(spec, 0, [(0, 2)], seed=2)
    assert not a["mean_slowdown"].equals(b["mean_slowdown"])


def test_the_batch_size_is_no_part_of_the_fingerprint(root):
    """A spec's `batch` only cuts the work into jobs (docs/architecture.md, "Scales"): changing it
    keeps the fingerprint, so results made with other batch sizes stay valid; a parameter does not."""
    import copy

    from simcore.experiments.fingerprint import simulation_fingerprint
    from simcore.experiments.spec import Spec

    spec = load_spec(root / "config/experiments/corr05-fig9.yaml")
    data = copy.deepcopy(spec.data)
    data["scales"]["full"]["batch"] = 7
    data["scales"]["full"]["precision"]["batch"] = 3
    rebatched = Spec(spec.path, data)
    assert rebatched.batches("full")[:2] == [(0, 7), (7, 14)] and rebatched.precision("full")["batch"] == 3
    assert simulation_fingerprint(rebatched, 11) == simulation_fingerprint(spec, 11)
    data["fixed"] = {**data["fixed"], "topology": "corr05-4x4"}
    assert simulation_fingerprint(Spec(spec.path, data), 11) != simulation_fingerprint(spec, 11)


def test_cells_per_job_groups_the_scales_cells_and_keeps_the_fingerprint(root):
    """`cells_per_job: 3` cuts a scale's cells into consecutive groups of three, the last one
    shorter; like `batch`, it only cuts the work into jobs and keeps the fingerprint."""
    import copy

    from simcore.experiments.fingerprint import simulation_fingerprint
    from simcore.experiments.spec import Spec, SpecError

    spec = load_spec(root / "config/experiments/barak96-fig2.yaml")
    data = copy.deepcopy(spec.data)
    data["scales"]["full"].pop("cells_per_job", None)
    single = Spec(spec.path, copy.deepcopy(data))
    data["scales"]["full"]["cells_per_job"] = 3
    grouped = Spec(spec.path, data)
    n = len(spec.cells("full"))
    groups = grouped.cell_groups("full")
    assert [len(g) for g in groups] == [3] * (n // 3) + ([n % 3] if n % 3 else [])
    assert [c.index for g in groups for c in g] == [c.index for c in spec.cells("full")]
    assert [c.index for c in grouped.cells_between("full", 3, 6)] == [3, 4, 5]
    with pytest.raises(SpecError, match="no cell of scale 'full' lies in"):
        grouped.cells_between("full", n, n + 5)
    assert [len(g) for g in single.cell_groups("full")] == [1] * n        # the default: one cell a job
    assert simulation_fingerprint(grouped, 11) == simulation_fingerprint(single, 11) == simulation_fingerprint(spec, 11)


def test_a_job_of_several_cells_writes_the_rows_of_one_job_per_cell(root, simcore_cli, tmp_path):
    """`simcore run --cells 5:7` writes, in one file, the rows `--cell 5` and `--cell 6` write."""
    files = []
    for name, which in (("both", ("--cells", "5:7")), ("five", ("--cell", 5)), ("six", ("--cell", 6))):
        out = tmp_path / f"{name}.parquet"
        proc = simcore_cli("run", "barak96-table1", *which, "--reps", "0:2", "--out", out, "--scale", "full")
        assert proc.returncode == 0, proc.stderr
        files.append(pd.read_parquet(out).drop(columns=["wall_time"]))
    pdt.assert_frame_equal(files[0], pd.concat(files[1:], ignore_index=True))
    bad = simcore_cli("run", "barak96-table1", "--cells", "7:5", "--reps", "0:2", "--out", tmp_path / "bad.parquet")
    assert bad.returncode == 2 and "--cells '7:5': expected A:B" in bad.stderr
    assert not (tmp_path / "bad.parquet").exists()


def test_a_job_never_groups_values_of_different_kinds(root, simcore_cli, tmp_path):
    """mehta-readings sweeps `creation_cpu` over 'random', 'round-robin' and CPU 0 one at a time,
    its last axis: of its 17 full-scale cells the 16 before the CPU-0 cell fit one job
    (`cells_per_job: 16`), so they make two groups, the CPU-0 cell alone after the others (one file's column holds one
    type: the run that grouped them died in pyarrow), and `simcore run --cells` over both kinds is refused with one
    sentence, writing nothing."""
    spec = load_spec(root / "config/experiments/mehta-readings.yaml")
    cells = spec.cells("full")
    numeric = [c.index for c in cells if not isinstance(c.values["creation_cpu"], str)]
    assert len(numeric) == 1 and spec.scale("full")["cells_per_job"] >= len(cells) - 1
    groups = spec.cell_groups("full")
    assert [[c.index for c in g] for g in groups] == [
        [c.index for c in cells if c.index < numeric[0]], numeric, [c.index for c in cells if c.index > numeric[0]]][
        :2 + (numeric[0] < cells[-1].index)]
    out = tmp_path / "mixed.parquet"
    proc = simcore_cli("run", "mehta-readings", "--cells", f"0:{numeric[0] + 1}", "--reps", "0:1", "--out", out)
    assert proc.returncode == 2 and "give parameter 'creation_cpu' values of different kinds" in proc.stderr
    assert proc.stderr.count("\n") == 1 and not out.exists()
