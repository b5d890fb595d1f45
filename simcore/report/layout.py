"""The report's layout, read from pdflatex's log: floats too large for their page and boxes that
run past the margin by more than :data:`MAX_OVERFULL_PT` (underfull boxes are not faults)."""

from __future__ import annotations

import re
from pathlib import Path

from simcore.errors import InputError

#: an overfull box wider (or taller) than this, in TeX points, is a layout fault
MAX_OVERFULL_PT = 5.0
#: pdflatex breaks its log's lines at this width (TeX Live's max_print_line)
LOG_WIDTH = 79

_BOX = re.compile(r"^(Overfull|Underfull) \\([hv]box) \((?:badness \d+|(-?[\d.]+)pt too (wide|high))\)"
                  r".*?(?:lines? (\d+(?:--\d+)?))?\S*$")
_FLOAT = re.compile(r"^LaTeX Warning: Float too large for page by ([\d.]+)pt on input line (\d+)\.")
_PAGE = re.compile(r"\[(\d+)(?=[\s\]<{]|$)")
_OPEN = re.compile(r"\(([^\s()\[\]{}]*)|\)")


def layout_faults(log: str) -> list[str]:
    """One sentence per fault in the text of a pdflatex log: where (file, lines, page) and by how much."""
    faults, files, page, skipping = [], [], 1, False
    for line in _logical_lines(log):
        if skipping:            # an overfull or underfull box's contents, up to the blank line after it
            skipping = bool(line.strip())
            continue
        box, big = _BOX.match(line), _FLOAT.match(line)
        where = f"{_current(files)}:{{}} (page {page})"
        if box:
            skipping = box.group(2) == "hbox"
            size = float(box.group(3) or 0)
            if box.group(1) == "Overfull" and size > MAX_OVERFULL_PT:
                faults.append(f"{where.format(box.group(5) or '?')}: overfull \\{box.group(2)}, "
                              f"{size:.1f} pt too {box.group(4)}")
            continue
        if big:
            faults.append(f"{where.format(big.group(2))}: float too large for the page by {float(big.group(1)):.1f} pt")
            continue
        for token in _OPEN.finditer(line):
            if token.group(0) == ")":
                files = files[:-1]
            else:
                files.append(token.group(1) if re.search(r"\.\w+$", token.group(1)) else None)
        page = max([page, *(int(n) + 1 for n in _PAGE.findall(line))])
    return faults


def _logical_lines(log: str) -> list[str]:
    """The log's lines with those pdflatex broke at :data:`LOG_WIDTH` joined again."""
    lines, held = [], ""
    for line in log.splitlines():
        held += line
        if len(line) != LOG_WIDTH:
            lines.append(held)
            held = ""
    return lines + ([held] if held else [])


def _current(files: list) -> str:
    """The innermost file being read, as the log names it (without a leading ./)."""
    named = [f for f in files if f]
    return named[-1].removeprefix("./") if named else "?"


def check_log(path: Path) -> list[str]:
    """The layout faults of the pdflatex log at ``path``; InputError when there is no such log."""
    if not path.is_file():
        raise InputError(f"{path}: no such LaTeX log; build the report first (latexmk writes it beside the PDF).")
    return layout_faults(path.read_text(encoding="latin-1"))
