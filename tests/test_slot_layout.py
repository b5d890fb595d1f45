"""The buffers' slots generated from one table per model (simcore.core.layout): the committed
modules match their tables, the layout they write is contiguous and in the table's order, the
row helpers and views read what the kernels read, a prefix means one kind of slot in every table,
and no slot is defined (or numbered by hand) outside its module."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest
import yaml

from simcore.core import layout
from simcore.models.numa import slots_kernels as SL

ROOT = Path(layout.__file__).resolve().parents[1]


def test_every_slots_module_is_what_its_table_generates():
    """``python -m simcore.core.layout --check``: each model's slots module is its table's
    rendering, byte for byte (edit the table, not the module)."""
    assert layout.tables(), "no layout table found"
    assert layout.main(["--check"]) == 0
    for table in layout.tables():
        target = table.parent / yaml.safe_load(table.read_text())["module"]
        assert target.read_text() == layout.render(table)


def _modules():
    """Each table's (table, slots module)."""
    return [(yaml.safe_load(t.read_text()), importlib.import_module(layout.module_name(t))) for t in layout.tables()]


def test_header_slots_are_numbered_in_the_tables_order():
    """In every model's module, each buffer's header slots are 0, 1, ... in the table's order and
    its size counts them; each column set's columns likewise, with its _COLS."""
    assert {mod.__name__ for _, mod in _modules()} >= {f"simcore.models.{m}.slots_kernels" for m in
                                                       ("numa", "cluster", "pools")} | {"simcore.san.slots_kernels"}
    for table, mod in _modules():
        for buf in table["buffers"]:
            assert [getattr(mod, name) for name, _ in buf["header"]] == list(range(len(buf["header"])))
            assert getattr(mod, buf["size"]) == len(buf["header"])
        for key, cols in table.get("columns", {}).items():
            assert [getattr(mod, name) for name, _ in cols["names"]] == list(range(len(cols["names"])))
            assert getattr(mod, f"{key}_COLS") == len(cols["names"])


@pytest.mark.parametrize("sizes", [(1, 1, 1, 1, 1, 0, 0), (4, 9, 12, 2, 3, 57, 5), (64, 400, 192, 16, 3, 9000, 0)])
def test_layout_puts_each_block_after_the_last(sizes):
    """For CPUs, tasks, domains, nodes, levels, draws and log rows: SI's blocks start after its
    header and each where the one before it ends (its rows times its width, ``dims``), in the
    table's order; SF's the same after Z_SIZE; the sizes returned are where the last blocks end.
    By hand: the tasks' ints (14 columns) come first, then the CPUs' (14), then their run-queue
    lists (2 x 40 x 2); the tasks' floats (11 columns) first in SF."""
    n, T, domains, nodes, levels, draws, logcap = sizes
    head = np.zeros(SL.Y_SIZE, dtype=np.int64)
    isize, fsize = SL.layout(*sizes, head)
    assert head[SL.O_TI] == SL.Y_SIZE and head[SL.O_RI] == SL.Y_SIZE + 14 * T
    assert head[SL.O_Q] == SL.Y_SIZE + 14 * T + 14 * n and head[SL.O_LORD] == head[SL.O_Q] + 160 * n
    assert head[SL.OF_TF] == SL.Z_SIZE and head[SL.OF_RF] == SL.Z_SIZE + 11 * T
    shapes = SL.dims(*sizes)
    for buf, start, end in (("SI", SL.Y_SIZE, isize), ("SF", SL.Z_SIZE, fsize)):
        at = start
        for name, (where, _, _) in SL.BLOCKS.items():
            if where == buf:
                assert head[getattr(SL, name)] == at, name
                at += shapes[name][0] * shapes[name][1]
        assert at == end


def test_row_helpers_and_views_read_the_systems_rows():
    """On a system built for a run (corr05-4x2, 12 tasks): ``task_row`` and ``cpu_frow`` are where
    the kernels read a task's and a CPU's rows, ``views`` gives the same blocks as the system's own
    views, and ``dump`` names each slot with its value."""
    from simcore.core.rng import Streams, replication_seed
    from simcore.models.numa import full_params, simulate
    from simcore.models.numa.model import load_machine, make_workload

    params = full_params({"topology": "corr05-4x2", "n_tasks": 12})
    streams = Streams(replication_seed(3, "layout", 0, 0))
    machine = load_machine(params["topology"])
    system = simulate(params, make_workload(params, streams, machine.cpus), "linux-2level", streams).system
    SI, SF = system.SI, system.SF
    assert SL.task_row(5, SI) == SI[SL.O_TI] + 5 * SL.T_COLS
    assert SL.cpu_frow(3, SI) == SI[SL.OF_RF] + 3 * SL.RF_COLS
    sizes = {"n": 8, "T": 12, "domains": 8 * system.balancer.L, "nodes": 4, "levels": len(system.levels),
             "draws": int(SI[SL.OF_FR] - SI[SL.OF_D]), "logcap": 0}
    views = layout.views(SL, {"SI": SI, "SF": SF}, **sizes)
    for name in ("O_TI", "OF_TF", "O_RI", "OF_RF", "O_Q"):
        assert np.array_equal(views[name], system.block(name, views[name].shape[0])), name
    assert views["OF_TF"][:, SL.F_FIN].tolist() == system.outcome.finished.tolist()
    text = layout.dump(SL, {"SI": SI, "SF": SF}, **sizes)
    assert f"SI.Y_N = {SI[SL.Y_N]}" in text and "SI.Y_T = 12" in text
    assert f"O_TI[0] T_PRIO={SI[SL.task_row(0, SI) + SL.T_PRIO]}" in text


def test_a_bad_table_is_refused_with_its_file(tmp_path):
    """A name defined twice, or a block whose offset is not an int header's slot, is refused
    naming the table."""
    table = yaml.safe_load((ROOT / "models/numa/layout.yaml").read_text())
    table["columns"]["T"]["names"].append(["Y_EID", "again"])
    bad = tmp_path / "layout.yaml"
    bad.write_text(yaml.safe_dump(table))
    with pytest.raises(ValueError, match=rf"{bad}: names defined more than once: Y_EID"):
        layout.render(bad)
    table = yaml.safe_load((ROOT / "models/numa/layout.yaml").read_text())
    table["blocks"][0]["offset"] = "Z_WORK"
    bad.write_text(yaml.safe_dump(table))
    with pytest.raises(ValueError, match=rf"{bad}: block Z_WORK: not a slot of an int header"):
        layout.render(bad)


def test_a_bad_table_without_entities_is_refused(tmp_path):
    """A column set that does not say what one row describes is refused, naming it."""
    table = yaml.safe_load((ROOT / "models/pools/layout.yaml").read_text())
    del table["columns"]["PQ"]["entity"]
    bad = tmp_path / "layout.yaml"
    bad.write_text(yaml.safe_dump(table))
    with pytest.raises(ValueError, match=rf"{bad}: columns PQ: no entity"):
        layout.render(bad)


def _prefix(name: str) -> str | None:
    return name.split("_")[0] if "_" in name else None


def _kinds(table: dict) -> dict[str, set]:
    """Per prefix of a table's names, the kinds of slot it names: a header slot of an int or a
    float buffer, a block's offset, a column of an entity's int or float row, a named number."""
    kinds: dict[str, set] = {}
    dtypes = {buf["name"]: buf["dtype"] for buf in table["buffers"]}
    for buf in table["buffers"]:
        for name, _ in [*buf["header"], (buf["size"], "")]:
            kind = ("offset",) if _prefix(name) in ("O", "OF") else ("header", buf["dtype"])
            kinds.setdefault(_prefix(name), set()).add(kind)
    for key, cols in table.get("columns", {}).items():
        held = {dtypes[b["buffer"]] for b in table.get("blocks", []) if b.get("columns") == key}
        dtype = cols.get("dtype") or held.pop()
        for name in [n for n, _ in cols["names"]] + [f"{key}_COLS"]:
            kinds.setdefault(_prefix(name), set()).add(("column", dtype, cols["entity"]))
    for name, _, _ in table.get("constants", []):
        if _prefix(name):
            kinds.setdefault(_prefix(name), set()).add(("constant",))
    return kinds


def test_a_prefix_means_one_kind_of_slot_in_every_table():
    """Across every table (NUMA, cluster, pools, the SAN walker) a prefix names one kind of slot:
    Y_ an int header's, Z_ a float header's, R_ a CPU's int column, C_ a calendar slot's, ... By
    hand: the pools' CPU columns are R_/RF_ as NUMA's, and no table uses F_ but for a task's
    floats."""
    seen: dict[str, set] = {}
    for table, mod in _modules():
        for prefix, kinds in _kinds(table).items():
            seen.setdefault(prefix, set()).update((kind, mod.__name__) for kind in kinds)
    for prefix, uses in seen.items():
        assert len({kind for kind, _ in uses}) == 1, (prefix, sorted(uses))
    assert {kind for kind, _ in seen["R"]} == {("column", "int64", "cpu")}
    assert {mod for _, mod in seen["R"]} >= {"simcore.models.numa.slots_kernels", "simcore.models.pools.slots_kernels"}
    assert {kind for kind, _ in seen["F"]} == {("column", "float64", "task")}
    assert {kind for kind, _ in seen["Y"]} == {("header", "int64")}


def test_the_prefix_check_sees_a_clash(tmp_path):
    """The check above, on a table whose CPU floats were named F_ (a task's floats in NUMA): two
    kinds for F."""
    table = yaml.safe_load((ROOT / "models/pools/layout.yaml").read_text())
    numa = yaml.safe_load((ROOT / "models/numa/layout.yaml").read_text())
    table["columns"]["RF"]["names"] = [["F_" + n[3:], m] for n, m in table["columns"]["RF"]["names"]]
    kinds = _kinds(numa)["F"] | _kinds(table)["F"]
    assert kinds == {("column", "float64", "task"), ("column", "float64", "cpu")}


def test_no_slot_is_defined_outside_its_module():
    """No file beside a slots module assigns a name that module defines: each slot lives once."""
    for _, mod in _modules():
        _nowhere_else(Path(mod.__file__), mod)


def test_no_slot_is_numbered_by_hand_anywhere():
    """No file of the package but the generated modules binds a name with a slot's prefix (Y_,
    Z_, O_, T_, R_, W_, ...): a slot is numbered only from its table."""
    prefixes = {p for table, _ in _modules() for p in _kinds(table)} - {None}
    generated = {Path(mod.__file__) for _, mod in _modules()}
    for path in sorted(ROOT.rglob("*.py")):
        if path in generated:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                names = [n for target in node.targets for n in _bound(target)]
                bad = [n for n in names if n.isupper() and _prefix(n) in prefixes]
                assert not bad, (path.relative_to(ROOT).as_posix(), bad)


def _nowhere_else(module: Path, mod) -> None:
    slots = {name for name in vars(mod) if name.isupper()}
    for path in sorted(module.parent.glob("*.py")):
        if path == module:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                names = [n for target in node.targets for n in _bound(target)]
                assert not slots.intersection(names), (path.name, names)


def _bound(target) -> list[str]:
    """The names an assignment's target binds (not the names it indexes with)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _bound(t)]
    return []
