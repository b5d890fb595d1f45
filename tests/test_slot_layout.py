"""The buffers' slots generated from one table per model (simcore.core.layout): the committed
modules match their tables, the layout they write is contiguous and in the table's order, the
row helpers and views read what the kernels read, and no slot is defined outside its module."""

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
    """Each model's (table, slots module)."""
    return [(yaml.safe_load(t.read_text()), importlib.import_module(f"simcore.models.{t.parent.name}.slots_kernels"))
            for t in layout.tables()]


def test_header_slots_are_numbered_in_the_tables_order():
    """In every model's module, each buffer's header slots are 0, 1, ... in the table's order and
    its size counts them; each column set's columns likewise, with its _COLS."""
    assert {mod.__name__.split(".")[2] for _, mod in _modules()} >= {"numa", "cluster"}
    for table, mod in _modules():
        for buf in table["buffers"]:
            assert [getattr(mod, name) for name, _ in buf["header"]] == list(range(len(buf["header"])))
            assert getattr(mod, buf["size"]) == len(buf["header"])
        for key, cols in table["columns"].items():
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
    views = SL.views({"SI": SI, "SF": SF}, **sizes)
    for name in ("O_TI", "OF_TF", "O_RI", "OF_RF", "O_Q"):
        assert np.array_equal(views[name], system.block(name, views[name].shape[0])), name
    assert views["OF_TF"][:, SL.F_FIN].tolist() == system.outcome.finished.tolist()
    text = SL.dump({"SI": SI, "SF": SF}, **sizes)
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


def test_no_slot_is_defined_outside_its_module():
    """No file of a model assigns a name its slots module defines: each slot lives once."""
    for _, mod in _modules():
        _nowhere_else(Path(mod.__file__))


def _nowhere_else(module: Path) -> None:
    slots = {name for name in vars(importlib.import_module(f"simcore.models.{module.parent.name}.slots_kernels"))
             if name.isupper()}
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
