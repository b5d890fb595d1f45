"""Every input bounded before it costs memory or time: keys given twice, grids and replication
counts beyond the stated limits. Each bad input exits 2 with one sentence naming the file and
key, and writes nothing."""

from __future__ import annotations

import io
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from simcore.cli import main
from simcore.errors import InputError
from simcore.inputs import load_yaml_text, read_yaml

ROOT = Path(__file__).resolve().parents[1]


def _simcore(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([*map(str, args)])
    return code, err.getvalue()


def _copy_config(tmp_path: Path) -> Path:
    config = tmp_path / "config"
    for part in ("experiments", "presets", "readings", "calibration"):
        shutil.copytree(ROOT / "config" / part, config / part)
    shutil.copy(ROOT / "config/config.yaml", config / "config.yaml")
    return config


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\nfixed:\n  mst: 2\n  x: 3\n  mst: 4\n")
    with pytest.raises(InputError, match=r"x.yaml: key 'mst' is given twice in one mapping \(lines 3 and 5\)"):
        read_yaml(path)
    # the same key in two mappings, and a merge key's override, are fine
    assert load_yaml_text("a: {k: 1}\nb: {k: 2}\n") == {"a": {"k": 1}, "b": {"k": 2}}
    assert load_yaml_text("a: &x {b: 1}\nc:\n  <<: *x\n  b: 2\n")["c"] == {"b": 2}
    with pytest.raises(Exception, match="key 'k' is given twice"):
        load_yaml_text("{k: 1, k: 2}")


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda t: t.replace("fixed:\n", "fixed:\n  demand_max: 500\n", 1), "key 'demand_max' is given twice"),
        (
            lambda t: t.replace("confidence: 0.95\n", "confidence: 0.95\nconfidence: 0.9\n", 1),
            "key 'confidence' is given twice",
        ),
    ],
)
def test_a_spec_with_a_key_twice_exits_2_naming_the_file(tmp_path, edit, where):
    """barak96-fig2 with `demand_max` twice under `fixed`, or `confidence` twice at the top:
    `simcore validate` exits 2 with one sentence naming the file and the key, and `simcore run`
    writes nothing."""
    config = _copy_config(tmp_path)
    spec = config / "experiments/barak96-fig2.yaml"
    spec.write_text(edit(spec.read_text()))
    code, err = _simcore("--specs", config / "experiments", "validate", "barak96-fig2")
    assert code == 2 and err.count("\n") == 1 and str(spec) in err and where in err, err
    out = tmp_path / "raw.parquet"
    code, err = _simcore("--specs", config / "experiments", "--config", config / "config.yaml", "run", "barak96-fig2",
                         "--cell", 0, "--reps", "0:1", "--out", out)
    assert code == 2 and where in err and not out.exists()


def test_a_set_value_with_a_key_twice_is_refused():
    code, err = _simcore("run", "barak96-fig2", "--cell", 0, "--reps", "0:1", "--out", "/nonexistent/x.parquet",
                         "--set", "machines=[{name: a, name: b}]")
    assert code == 2 and "key 'name' is given twice" in err, err


def test_a_grid_beyond_the_limit_is_refused_before_a_cell_is_built(tmp_path):
    """Seven swept parameters of ten values: 10,000,000 cells, refused by `validate`, `list` and
    `run` with the size (before, every cell was built: 2.6-3.5 GB)."""
    from simcore.experiments.spec import MAX_CELLS

    config = _copy_config(tmp_path)
    spec = config / "experiments/barak96-fig2.yaml"
    text = spec.read_text()
    start, end = text.index("grid:\n"), text.index("policies:")
    values = "[" + ", ".join(str(v) for v in range(1, 11)) + "]"
    grid = "grid:\n  n_procs: " + values + "\n" + "".join(
        f"  {name}: [{', '.join(str(0.1 * k + 0.05) for k in range(10))}]\n"
        for name in ("min_residency", "info_interval", "balance_interval", "memory_threshold", "load_threshold"))
    grid += f"  mosix_known_machines: {values}\n"
    spec.write_text(text[:start] + grid + text[end:])
    assert 10 ** 7 > MAX_CELLS
    for args in (("validate", "barak96-fig2"), ("list",),
                 ("run", "barak96-fig2", "--cell", 5, "--reps", "0:1", "--out", tmp_path / "raw.parquet")):
        code, err = _simcore("--specs", config / "experiments", "--config", config / "config.yaml", *args)
        assert code == 2 and f"{spec}: key 'grid': 10,000,000 cells, more than the 10,000" in err, err
    assert not (tmp_path / "raw.parquet").exists()


def test_a_replication_count_beyond_the_limit_is_refused(tmp_path):
    config = _copy_config(tmp_path)
    spec = config / "experiments/barak96-fig2.yaml"
    spec.write_text(
        spec.read_text().replace("precision: {max_replications: 90}", "precision: {max_replications: 10000000}")
    )
    code, err = _simcore("--specs", config / "experiments", "validate", "barak96-fig2")
    assert code == 2 and "key 'scales.full.precision.max_replications': 10,000,000 replications of a cell" in err, err
    code, err = _simcore("run", "barak96-fig2", "--cell", 0, "--reps", "0:200000", "--out", tmp_path / "x.parquet")
    assert code == 2 and "--reps '0:200000': replications up to 200,000, more than the 100,000" in err, err


@pytest.mark.parametrize(
    "name", ["mehta-table4-w1-readings", "corr05-fig13-readings", "amir-readings", "zhou91-fig4", "zhou91-fig5"]
)
def test_a_cell_computed_from_its_index_is_the_grids(name):
    """`Spec.cell(i)` (from the index alone for a product grid) is cell i of the built grid."""
    from simcore.experiments.spec import load_spec

    spec = load_spec(ROOT / f"config/experiments/{name}.yaml")
    cells = spec.all_cells()
    assert spec.grid_size() == len(cells) > 1
    assert [spec.cell(i) for i in range(len(cells))] == cells


def test_sizes_parse_and_bad_ones_are_one_sentence():
    from simcore.resources import parse_size

    assert parse_size("512") == 512 and parse_size("8G") == 8 * 2 ** 30 and parse_size("1.5KiB") == 1536
    assert parse_size("2t") == 2 * 2 ** 40
    for bad in ("lots", "-1G", "0", "inf"):
        with pytest.raises(InputError, match="SIMCORE_MEMORY_LIMIT"):
            parse_size(bad)


def test_a_san_model_too_large_for_memory_is_refused_before_it_is_built(tmp_path, monkeypatch):
    """26 automata of 2 states: 2^26 = 67,108,864 product-space states, 25 bytes each to build
    the descriptor (a flag, a frontier index, the diagonal and its corrector): 1.56 GiB, above a
    1 GiB limit. `simcore san` exits 2 with one sentence and writes nothing; under a 2 GiB limit
    the estimate passes. The committed corr05 Figure 8 model at full scale (55,427,328 states)
    needs 1.29 GiB, within any machine the README asks for."""
    from simcore.resources import SAN_BUILD_BYTES, check_san, human, san_build_bytes
    from simcore.san.model import load_san

    model = tmp_path / "wide.yaml"
    model.write_text("automata:\n" + "".join(f"  a{i}: [off, on]\n" for i in range(26))
                     + "local:\n  - {automaton: a0, from: off, to: on, rate: 1.0}\n")
    assert SAN_BUILD_BYTES == 25 and san_build_bytes((2,) * 26) == 25 * 2 ** 26
    monkeypatch.setenv("SIMCORE_MEMORY_LIMIT", "1G")
    out = tmp_path / "x.csv"
    code, err = _simcore("san", model, "--times", "0:1:1", "--out", out)
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert f"{model}: the descriptor over 6.71e+07 product-space states would need about 1.56 GiB of memory, " \
           "more than the 1 GiB allowed" in err
    monkeypatch.setenv("SIMCORE_MEMORY_LIMIT", "2G")
    check_san(load_san(model))
    full = load_san(ROOT / "config/san/corr05-fig8-2sched.yaml", "full")
    shape = tuple(len(s) for s in full.automata.values())
    assert san_build_bytes(shape) == 25 * 55_427_328 and human(san_build_bytes(shape)) == "1.29 GiB"


def test_a_san_solution_too_large_for_memory_is_refused_once_its_descriptor_is_built(tmp_path, monkeypatch):
    """11 automata that each switch on and off: all 2^11 = 2,048 states are reachable. Building
    needs 25 bytes a product state (51,200 B); a Krylov solution with a basis of 100 keeps 102
    vectors of 2,048 doubles (1,671,168 B, 1.59 MiB) beside the descriptor: refused under a
    1 MiB limit with one sentence and no file. Uniformization's 6 vectors (98,304 B) pass."""
    from simcore.resources import san_solution_bytes

    model = tmp_path / "toggles.yaml"
    model.write_text("automata:\n" + "".join(f"  a{i}: [off, on]\n" for i in range(11)) + "local:\n"
                     + "".join(f"  - {{automaton: a{i}, from: off, to: on, rate: 1.0}}\n"
                               f"  - {{automaton: a{i}, from: on, to: off, rate: 2.0}}\n" for i in range(11))
                     + "solve: {method: krylov, krylov_dim: 100}\n")
    assert san_solution_bytes(2048, ["krylov"], 100) == 1_671_168
    assert san_solution_bytes(2048, ["uniformization", "gmres"], 100) == 8 * 2048 * 42
    monkeypatch.setenv("SIMCORE_MEMORY_LIMIT", "1M")
    out = tmp_path / "x.csv"
    code, err = _simcore("san", model, "--times", "0:1:1", "--out", out, "--progress", "off")
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert f"{model}: the krylov solution over 2,048 reachable states would need about 1.6" in err
    assert "more than the 1 MiB allowed" in err
    code, err = _simcore("san", model, "--times", "0:1:1", "--out", out, "--transient", "uniformization",
                         "--progress", "off")
    assert code == 0 and out.exists(), err


@pytest.mark.parametrize("entry, words", [
    ("krylov_dim: abc", "key 'solve.krylov_dim': 'abc' is not an integer in [5, 100]"),
    ("krylov_dim: 0", "key 'solve.krylov_dim': 0 is not an integer in [5, 100]"),
    ("tol: 2", "key 'solve.tol': 2 is not a real in (0, 1)"),
    ("simulate: {full: 0}", "key 'solve.simulate': {'full': 0} is not a positive integer or"),
    ("times: abc", "key 'solve.times' 'abc': expected START:STOP:STEP"),
    ("times: '0:1e12:1e-12'", "key 'solve.times' '0:1e12:1e-12': more than the 100,000 times"),
])
def test_a_san_files_solve_section_is_checked(tmp_path, entry, words):
    """A Krylov basis of 0 once ran for ever (steps of 1e-6 s towards a horizon of 1 s, ~1,700 h
    announced) and 'abc' was an internal error: every number of ``solve`` has its domain, and a
    grid of times its size limit, each refused in one sentence naming file and key."""
    model = tmp_path / "m.yaml"
    model.write_text("automata:\n  a: [off, on]\nlocal:\n  - {automaton: a, from: off, to: on, rate: 1.0}\n"
                     f"solve: {{{entry}}}\n")
    code, err = _simcore("san", model, "--out", tmp_path / "x.csv", "--progress", "off")
    assert code == 2 and err.count("\n") == 1 and f"{model}: {words}" in err, err


def test_a_run_whose_state_would_not_fit_in_memory_is_refused(tmp_path, monkeypatch):
    """corr05-fig9 with `--set n_tasks=1000000000`: 11,300 bytes a task (bench/bench_resources.py's
    5.6 kB, doubled) make 1.13e13 bytes, 10.3 TiB: refused with one sentence before a replication
    runs, no file. barak96-fig2 with 10^7 processes: 1.84e10 bytes, 17.1 GiB, above a 1 GiB limit.
    No committed experiment comes near: every full-scale cell needs under 16 MiB."""
    from simcore.experiments.spec import load_spec
    from simcore.resources import MODEL_MEMORY, run_bytes

    assert run_bytes("numa", {"n_tasks": 10 ** 9}) == 11_300 * 10 ** 9 and run_bytes("cosched", {"nst": 10 ** 9}) == 0
    out = tmp_path / "x.parquet"
    code, err = _simcore(
        "run", "corr05-fig9", "--cell", 0, "--reps", "0:1", "--set", "n_tasks=1000000000", "--out", out
    )
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert "cell 0 (n_tasks = 1,000,000,000) would need about 10.3 TiB of memory" in err
    monkeypatch.setenv("SIMCORE_MEMORY_LIMIT", "1G")
    code, err = _simcore("run", "barak96-fig2", "--cell", 0, "--reps", "0:1", "--set", "n_procs=10000000", "--out", out)
    assert code == 2 and "(n_procs = 10,000,000) would need about 17.1 GiB of memory, more than the 1 GiB" in err, err
    largest = max(run_bytes(spec["model"], spec.params(cell.values))
                  for path in sorted((ROOT / "config/experiments").glob("*.yaml"))
                  for spec in [load_spec(path)] if spec["model"] in MODEL_MEMORY for cell in spec.cells("full"))
    assert 0 < largest < 16 * 2 ** 20


def test_a_run_estimated_beyond_the_time_limit_is_refused_and_a_long_one_announced(tmp_path, monkeypatch):
    """The estimate is size ** exponent scaled from MODEL_TIME's measured point, times the
    replications and the policies. With the cluster measured at 2 s for 1,000 processes and
    exponent 2, barak96-fig2 (policies mosix and pvm) at 10,000 processes and 3 replications
    takes 2 s x 10^2 x 3 x 2 = 1,200 s = 20 min: refused under a 15-minute limit, announced (above
    10 minutes) under the default one. Its cell 0 at 8 processes under a measured point of
    400 s at 8 processes, one replication: 800 s, announced, and the run goes on."""
    from simcore import resources

    monkeypatch.setattr(resources, "MODEL_TIME", {"cluster": (1_000, 2.0, 2.0)})
    assert resources.replication_seconds("cluster", {"n_procs": 10_000}) == 200.0
    assert resources.replication_seconds("cosched", {"nst": 10 ** 9}) == 0.0
    assert resources.check_time(1_200.0, "it").startswith("it would take about 20 min of CPU")
    assert resources.check_time(599.0, "it") is None
    out = tmp_path / "x.parquet"
    monkeypatch.setenv("SIMCORE_TIME_LIMIT", "15m")
    code, err = _simcore("run", "barak96-fig2", "--cell", 0, "--reps", "0:3", "--set", "n_procs=10000",
                         "--out", out, "--progress", "off")
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert "1 cell(s) x 3 replication(s) x 2 policies would take about 20 min of CPU" in err
    assert "more than the 15 min allowed (SIMCORE_TIME_LIMIT raises the limit" in err
    monkeypatch.setenv("SIMCORE_TIME_LIMIT", "a week")
    code, err = _simcore("run", "barak96-fig2", "--cell", 0, "--reps", "0:1", "--out", out)
    assert code == 2 and "SIMCORE_TIME_LIMIT: 'a week' is not a duration" in err, err
    monkeypatch.delenv("SIMCORE_TIME_LIMIT")
    monkeypatch.setattr(resources, "MODEL_TIME", {"cluster": (8, 400.0, 1.0)})
    code, err = _simcore("run", "barak96-fig2", "--cell", 0, "--set", "n_procs=8", "--reps", "0:1", "--out", out,
                         "--progress", "off")
    assert code == 0 and out.exists() and "would take about 13 min of CPU" in err, err


def test_no_committed_run_is_announced_as_long():
    """A full-scale job holds about 30 s of work: no committed cell's replication comes near the
    10-minute announcement, so the workflow's logs carry no estimate."""
    from simcore.experiments.spec import load_spec
    from simcore.resources import ANNOUNCE, MODEL_TIME, replication_seconds

    longest = max(replication_seconds(spec["model"], spec.params(cell.values)) * len(spec.policies)
                  for path in sorted((ROOT / "config/experiments").glob("*.yaml"))
                  for spec in [load_spec(path)] if spec["model"] in MODEL_TIME for cell in spec.cells("full"))
    assert 0 < longest < ANNOUNCE / 10


def test_a_san_model_too_long_to_build_is_refused_and_a_long_build_announced(tmp_path, monkeypatch):
    """Building a descriptor costs SAN_BUILD_SECONDS per product-space state. With 1 s a state,
    three automata of 10 states (1,000 states) take 1,000 s, about 17 min: refused under a
    15-minute limit, announced (above 10 minutes) under the default one; at 0.5 s a state, 500 s:
    neither."""
    from simcore import resources
    from simcore.san.model import load_san

    model = tmp_path / "m.yaml"
    states = ", ".join(f"s{k}" for k in range(10))
    model.write_text("automata:\n" + "".join(f"  a{i}: [{states}]\n" for i in range(3))
                     + "local:\n  - {automaton: a0, from: s0, to: s1, rate: 1.0}\n")
    monkeypatch.setattr(resources, "SAN_BUILD_SECONDS", 1.0)
    assert "building it, at most) would take about 17 min of CPU" in resources.check_san(load_san(model))
    monkeypatch.setenv("SIMCORE_TIME_LIMIT", "15m")
    out = tmp_path / "x.csv"
    code, err = _simcore("san", model, "--times", "0:1:1", "--out", out)
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert "over 1e+03 product-space states (building it, at most) would take about 17 min of CPU" in err
    assert "more than the 15 min allowed (SIMCORE_TIME_LIMIT raises the limit; or give the model fewer states)" in err
    monkeypatch.setattr(resources, "SAN_BUILD_SECONDS", 0.5)
    assert resources.check_san(load_san(model)) is None
