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
    for part in ("experiments", "presets", "readings"):
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


@pytest.mark.parametrize("edit, where", [
    (lambda t: t.replace("fixed:\n", "fixed:\n  demand_max: 500\n", 1), "key 'demand_max' is given twice"),
    (lambda t: t.replace("confidence: 0.95\n", "confidence: 0.95\nconfidence: 0.9\n", 1), "key 'confidence' is given twice"),
])
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
