"""A compiled model's flat buffers from one table: the slots module written from a layout table.

A model keeps its state in flat int and float buffers (numba passes an array cheaply, a tuple of
arrays dearly): a header per buffer, and blocks of rows whose offsets the int header holds. The
table (``simcore/models/<model>/layout.yaml``) names every header slot and every block's columns,
each with one line of meaning, in order; this module writes the model's slots module from it:

- the header slots and the columns as literal constants, numbered in the table's order, each with
  its meaning (numba reads literals, so the kernels compile as before);
- ``layout(<sizes>, head)``: every block's offset written into ``head``, the buffers' sizes
  returned;
- a row helper per block that names one (``task_row(t, SI)``: where task ``t``'s row starts);
- ``dims`` (each block's rows and width), ``BLOCKS`` and ``HEADERS``, which this module's
  :func:`views` (every block as a rows x columns array view) and :func:`dump` (a state by name,
  for debugging) read.

A table without blocks (the SAN walker's registers) gives its constants alone. Each column set
names the ``entity`` a row describes (and its ``dtype`` where no block holds it): a prefix means
one kind of thing in every table (tests/test_slot_layout.py).

``python -m simcore.core.layout TABLE...`` writes each table's module beside it; ``--check`` only
compares (tests/test_slot_layout.py runs it on every table).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import textwrap
from pathlib import Path

import yaml

__all__ = ["render", "write", "tables", "module_name", "views", "dump", "main"]

_PREAMBLE = '''"""{title}.

Generated from ``{table}``
by ``python -m simcore.core.layout``: do not edit; edit the table and run that command
(tests/test_slot_layout.py checks that the two match).

{doc}
"""

from __future__ import annotations
'''


def _ints(pairs: list, first: int = 0) -> list[tuple[str, int, str]]:
    """(name, number, meaning) for the table's [name, meaning] pairs, numbered from ``first``."""
    return [(name, first + i, meaning) for i, (name, meaning) in enumerate(pairs)]


def _constant_lines(rows: list[tuple[str, object, str]]) -> list[str]:
    """``NAME = value  # meaning``, aligned; a meaning too long for the line goes above it."""
    width = max(len(f"{name} = {value}") for name, value, _ in rows) + 2
    lines = []
    for name, value, meaning in rows:
        line = f"{f'{name} = {value}':<{width}}# {meaning}"
        lines += [line] if len(line) <= 120 else [*_comment(meaning), f"{name} = {value}"]
    return lines


def _tuple_lines(names, indent: str) -> list[str]:
    """A tuple of strings, written over as many lines of at most 120 characters as it needs."""
    text = ", ".join(repr(n) for n in names) + ("," if len(names) == 1 else "")
    return textwrap.wrap(f"({text})", 120 - len(indent), initial_indent=indent, subsequent_indent=indent + " ",
                         break_on_hyphens=False)


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, 98, initial_indent="# ", subsequent_indent="# ")


def _check(table: dict, path: Path) -> None:
    """Every name once; every block's offset a header slot of an int buffer; widths known; every
    column set's entity named."""
    for key, cols in table.get("columns", {}).items():
        if "entity" not in cols:
            raise ValueError(f"{path}: columns {key}: no entity (what one row describes)")
    names = [c[0] for c in table.get("constants", [])]
    for buf in table["buffers"]:
        names += [slot for slot, _ in buf["header"]] + [buf["size"]]
    for key, cols in table.get("columns", {}).items():
        names += [n for n, _ in cols["names"]] + [f"{key}_COLS"]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{path}: names defined more than once: {', '.join(dup)}")
    ints = {slot for buf in table["buffers"] if buf["dtype"] == "int64" for slot, _ in buf["header"]}
    known = set(table["sizes"]) | set(table.get("derived", {})) | {c[0] for c in table.get("constants", [])}
    known |= {f"{key}_COLS" for key in table.get("columns", {})}
    for block in table["blocks"]:
        if block["offset"] not in ints:
            raise ValueError(f"{path}: block {block['offset']}: not a slot of an int header")
        if ("columns" in block) == ("width" in block):
            raise ValueError(f"{path}: block {block['offset']}: give columns or width, not both or neither")
        if "columns" in block and block["columns"] not in table["columns"]:
            raise ValueError(f"{path}: block {block['offset']}: no columns {block['columns']!r}")
        for expr in (block["rows"], block.get("width", 1)):
            try:
                ast.parse(str(expr), mode="eval")
            except SyntaxError:
                raise ValueError(f"{path}: block {block['offset']}: {expr!r} is not an expression (quote it)") from None
            unknown = set(re.findall(r"[A-Za-z_]\w*", str(expr))) - known - {"max", "min"}
            if unknown:
                raise ValueError(f"{path}: block {block['offset']}: unknown size(s) {', '.join(sorted(unknown))}")


def _width(block: dict) -> str:
    return f"{block['columns']}_COLS" if "columns" in block else str(block["width"])


def _factor(expr) -> str:
    text = str(expr)
    return text if re.fullmatch(r"[\w.]+|\w+\(.*\)", text) else f"({text})"


def _size(block: dict) -> str:
    width = _width(block)
    return _factor(block["rows"]) if width == "1" else f"{_factor(block['rows'])} * {_factor(width)}"


def _layout_function(table: dict) -> list[str]:
    """``layout``: each buffer's blocks after its header, in the table's order."""
    sizes = ", ".join(table["sizes"])
    lines = ["", "", "@njit(cache=True)", f"def layout({sizes}, head):",
             '    """Every block\'s offset written into ``head`` (the int header that holds them), each',
             "    buffer's blocks after its header in the table's order; returns the buffers' sizes.\"\"\""]
    lines += [f"    {name} = {expr}" for name, expr in table.get("derived", {}).items()]
    ends = []
    for buf in table["buffers"]:
        blocks = [b for b in table["blocks"] if b["buffer"] == buf["name"]]
        if not blocks:
            continue
        at = f"at_{buf['name'].lower()}"
        lines.append(f"    {at} = {buf['size']}")
        for block in blocks:
            lines += [f"    head[{block['offset']}] = {at}", f"    {at} += {_size(block)}"]
        ends.append(at)
    lines.append(f"    return {', '.join(ends)}")
    return lines


def _dims_function(table: dict) -> list[str]:
    """``dims``: each block's rows and width, from the same expressions as ``layout``."""
    sizes = ", ".join(table["sizes"])
    lines = ["", "", f"def dims({sizes}) -> dict:",
             '    """Each block\'s (rows, width) for ``layout``\'s sizes, by its offset\'s name."""']
    lines += [f"    {name} = {expr}" for name, expr in table.get("derived", {}).items()]
    entries = [f"        {b['offset']!r}: ({b['rows']}, {_width(b)})," for b in table["blocks"]]
    return lines + (["    return {", *entries, "    }"] if entries else ["    return {}"])


def _row_helpers(table: dict) -> list[str]:
    """A helper per block that names its row, inlined where a kernel calls it (numba's IR, so a
    named row costs what the arithmetic spelled out costs: measured on bench_pools); the first
    block of a buffer starts where the buffer's header ends, a constant the compiler folds
    (``layout`` writes the same offset)."""
    lines = []
    heads = {slot: buf for buf in table["buffers"] for slot, _ in buf["header"]}
    sizes = {buf["name"]: buf["size"] for buf in table["buffers"]}
    first = {}
    for block in table["blocks"]:
        first.setdefault(block["buffer"], block["offset"])
    for block in table["blocks"]:
        if "row" not in block:
            continue
        head = heads[block["offset"]]["name"]
        at = sizes[block["buffer"]] if first[block["buffer"]] == block["offset"] else f"{head}[{block['offset']}]"
        lines += ["", "", '@njit(cache=True, inline="always")', f"def {block['row']}(i, {head}):",
                  f'    """Where row ``i`` of block {block["offset"]} starts in {block["buffer"]}."""',
                  f"    return {at} + i * {_width(block)}"]
    return lines


def _python_part(table: dict) -> list[str]:
    heads = {slot: buf["name"] for buf in table["buffers"] for slot, _ in buf["header"]}
    rows = []
    for b in table["blocks"]:
        cols = tuple(n for n, _ in table["columns"][b["columns"]]["names"]) if "columns" in b else ()
        rows += [f"    {b['offset']!r}: ({b['buffer']!r}, {heads[b['offset']]!r},", *_tuple_lines(cols, " " * 8)]
        rows[-1] += "),"
    headers = []
    for buf in table["buffers"]:
        headers += [f"    {buf['name']!r}:", *_tuple_lines([slot for slot, _ in buf["header"]], " " * 8)]
        headers[-1] += ","
    blocks = ["BLOCKS = {", *rows, "}"] if rows else ["BLOCKS = {}"]
    return ["", "", "#: per block: its buffer, the buffer whose header holds its offset, and its columns' names",
            *blocks, "#: per buffer, its header's slots in order", "HEADERS = {", *headers, "}"]


def views(slots, buffers: dict, **sizes) -> dict:
    """Every block of ``buffers`` (name -> array) as a rows x width view, by its offset's name;
    ``slots``: the model's slots module, ``sizes``: its ``layout``'s."""
    out = {}
    for name, (rows, width) in slots.dims(**sizes).items():
        buf, head, _ = slots.BLOCKS[name]
        at = int(buffers[head][getattr(slots, name)])
        out[name] = buffers[buf][at:at + rows * width].reshape(rows, width)
    return out


def dump(slots, buffers: dict, **sizes) -> str:
    """A state by name (for debugging): each header's slots, then each block's rows with its
    columns' names; ``slots``: the model's slots module."""
    lines = []
    for buf, names in slots.HEADERS.items():
        if buf in buffers:
            lines += [f"{buf}.{name} = {buffers[buf][getattr(slots, name)]}" for name in names]
    if all(head in buffers and buf in buffers for buf, head, _ in slots.BLOCKS.values()):
        for name, view in views(slots, buffers, **sizes).items():
            cols = slots.BLOCKS[name][2] or range(view.shape[1])
            for i, row in enumerate(view.tolist()):
                lines.append(f"{name}[{i}] " + " ".join(f"{c}={v}" for c, v in zip(cols, row)))
    return "\n".join(lines)


def render(table_path: Path) -> str:
    """The slots module's text for the table at ``table_path``."""
    table = yaml.safe_load(table_path.read_text())
    table.setdefault("blocks", [])
    table.setdefault("sizes", [])
    _check(table, table_path)
    rel = table_path.relative_to(Path(__file__).resolve().parents[2]).as_posix() if table_path.is_absolute() \
        else table_path.as_posix()
    doc = "\n".join(textwrap.wrap(table["doc"], 98))
    lines = _PREAMBLE.format(title=table["title"], table=rel, doc=doc).splitlines()
    if table["blocks"]:
        lines += ["", "from simcore.core.jit import njit"]
    if table.get("constants"):
        lines += ["", *_comment("named numbers the blocks use")]
        lines += _constant_lines([(n, v, m) for n, v, m in table["constants"]])
    for buf in table["buffers"]:
        slots = _ints(buf["header"])
        lines += ["", *_comment(f"{buf['name']} ({buf['dtype']}): its header")]
        lines += _constant_lines(slots + [(buf["size"], len(slots), f"slots of {buf['name']}'s header")])
    for key, cols in table.get("columns", {}).items():
        names = _ints(cols["names"])
        lines += ["", *_comment(f"{key}_*: {cols['about']}")]
        lines += _constant_lines(names + [(f"{key}_COLS", len(names), "columns")])
    if table["blocks"]:
        lines += _layout_function(table) + _row_helpers(table)
    lines += _dims_function(table) + _python_part(table)
    return "\n".join(line.rstrip() for line in lines).replace("\n\n\n\n", "\n\n\n") + "\n"


def tables(root: Path | None = None) -> list[Path]:
    """Every layout table under the package (each model's, the SAN walker's)."""
    root = root or Path(__file__).resolve().parents[1]
    return sorted(root.rglob("layout.yaml"))


def module_name(table_path: Path) -> str:
    """The dotted name of the module the table at ``table_path`` writes."""
    table = yaml.safe_load(table_path.read_text())
    rel = (table_path.resolve().parent / table["module"]).relative_to(Path(__file__).resolve().parents[2])
    return ".".join(rel.with_suffix("").parts)


def write(table_path: Path, check: bool = False) -> bool:
    """Write (or with ``check``, compare) the table's module; whether it was already up to date."""
    table = yaml.safe_load(table_path.read_text())
    target = table_path.parent / table["module"]
    text = render(table_path)
    same = target.is_file() and target.read_text() == text
    if not same and not check:
        target.write_text(text)
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simcore.core.layout", description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="*", type=Path, help="layout tables (default: every model's)")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if a module is stale")
    args = parser.parse_args(argv)
    stale = [t for t in (args.tables or tables()) if not write(t.resolve(), args.check)]
    for t in stale:
        print(f"{t}: {'stale' if args.check else 'written'}", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
