"""The report's layout: the LaTeX log checker, and the generated tables' shape."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from simcore.experiments import load_spec
from simcore.report.layout import MAX_OVERFULL_PT, check_log, layout_faults
from simcore.report.tables import table_tex

# A pdflatex log as TeX Live writes it: files opened with '(' and closed with ')', pages shipped
# as '[N]', lines broken at 79 characters, a box's contents after its warning up to a blank line.
LOG = r"""This is pdfTeX, Version 3.141592653-2.6-1.40.26 (TeX Live 2025/dev/Debian) (preloaded format=pdflatex)
(./report.tex
LaTeX2e <2024-11-01> patch level 2
(./sections/mehta.tex [61]
Overfull \hbox ({wide}pt too wide) in paragraph at lines 142--174
[]\T1/ptm/m/it/10 Tables 1--2 and the traces (un-der the same read-ings. \T1/ptm
 []

(./generated/paper-mehta.tex (./tables/mehta-table1-s1-500ms-readings-with-a-na
me-that-wraps.tex
Underfull \hbox (badness 10000) in paragraph at lines 12--12
[]\T1/ptm/m/n/10 text)
 []

LaTeX Warning: Float too large for page by 599.21213pt on input line 198.

) [62] [63 <./figures//mehta-table1.pdf>]))
(./sections/zhou91.tex
Overfull \vbox (2.5pt too high) has occurred while \output is active []

) [64] )
"""


def test_a_92pt_box_and_a_float_too_large_are_faults_named_by_file_line_and_page():
    """Derived by hand from LOG: the 92 pt box sits in sections/mehta.tex lines 142--174, after
    page 61 was shipped (so on page 62); the float warning comes inside the wrapped table file,
    still before [62]; the underfull box and the 2.5 pt vbox (under 5 pt) are no faults."""
    faults = layout_faults(LOG.replace("{wide}", "92.43974"))
    assert faults == [
        "sections/mehta.tex:142--174 (page 62): overfull \\hbox, 92.4 pt too wide",
        "tables/mehta-table1-s1-500ms-readings-with-a-name-that-wraps.tex:198 (page 62): "
        "float too large for the page by 599.2 pt",
    ]


def test_a_box_within_the_threshold_passes():
    """3 pt is below the 5 pt threshold, and the log has no float warning once it is removed."""
    log = LOG.replace("{wide}", "3.0").replace("LaTeX Warning: Float too large", "LaTeX Warning: Reference")
    assert MAX_OVERFULL_PT == 5.0 and layout_faults(log) == []


def test_check_layout_exits_1_naming_each_fault_and_0_on_a_clean_log(tmp_path, simcore_cli):
    bad, good = tmp_path / "bad.log", tmp_path / "good.log"
    bad.write_text(LOG.replace("{wide}", "92.43974"))
    good.write_text(LOG.replace("{wide}", "3.0").replace("Float too large", "Reference"))
    run = simcore_cli("check-layout", bad)
    assert run.returncode == 1
    assert "sections/mehta.tex:142--174 (page 62): overfull \\hbox, 92.4 pt" in run.stderr
    assert "float too large for the page by 599.2 pt" in run.stderr and "2 layout faults" in run.stderr
    run = simcore_cli("check-layout", good)
    assert (run.returncode, run.stderr) == (0, "")


def test_check_layout_of_a_missing_log_is_one_sentence_and_exit_2(tmp_path, simcore_cli):
    run = simcore_cli("check-layout", tmp_path / "none.log")
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "none.log: no such LaTeX log" in run.stderr


# ---------------------------------------------------------------- every generated table's shape

_ENV = re.compile(r"\\(begin|end)\{(tabular|longtable)\}")
_RULE = re.compile(r"^\\(toprule|midrule|bottomrule|cmidrule(\(\w*\))?\{[\d-]+\}|endhead|endfirsthead|endfoot|"
                   r"endlastfoot|hline|caption\*?(\[[^]]*\])?\{.*\}|label\{[^}]*\})\s*")


def _group(text: str, start: int) -> int:
    """The index just past the brace group that opens at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise ValueError(f"unbalanced braces in {text[start:start + 80]!r}")


def tabulars(tex: str) -> list[tuple[str, str]]:
    """(column spec, body) of every tabular and longtable in ``tex``, nested ones taken out of
    their parent's body (each stands for one cell there)."""
    found, stack, pieces = [], [], []
    for m in _ENV.finditer(tex):
        if m.group(1) == "begin":
            position = re.match(r"\[\w*\]", tex[m.end():])       # tabular's [t], [b]
            stack.append((m.start(), m.end() + (position.end() if position else 0)))
            continue
        begin, start = stack.pop()
        spec_end = _group(tex, start)
        body = tex[spec_end:m.start()]
        for inner in reversed([p for p in pieces if begin < p[0] and p[1] <= m.start()]):
            body = body.replace(tex[inner[0]:inner[1]], "{nested}")
        pieces.append((begin, m.end()))
        found.append((tex[start + 1:spec_end - 1], body))
    return found


def declared_columns(colspec: str) -> int:
    """Columns of a column spec: l, c, r, p{..}, m{..}, b{..}, X; @{..}, !{..}, >{..}, <{..} and | add none;
    *{n}{spec} repeats."""
    count, i = 0, 0
    while i < len(colspec):
        c = colspec[i]
        if c in "@!><":
            i = _group(colspec, i + 1)
            continue
        if c == "*":
            end = _group(colspec, i + 1)
            times = int(colspec[i + 2:end - 1])
            inner_end = _group(colspec, end)
            count += times * declared_columns(colspec[end + 1:inner_end - 1])
            i = inner_end
            continue
        if c in "pmb":
            count += 1
            i = _group(colspec, i + 1)
            continue
        count += c in "lcrX"
        i += 1
    return count


def row_cells(row: str) -> int:
    """Cells of one row: its unescaped & plus one, \\multicolumn{n} counting n."""
    cells = len(re.findall(r"(?<!\\)&", row)) + 1
    for m in re.finditer(r"\\multicolumn\{(\d+)\}", row):
        cells += int(m.group(1)) - 1
    return cells


def table_rows(body: str) -> list[str]:
    """The rows of a tabular's body (split at \\\\), without rules, heads and captions."""
    rows = []
    for row in re.split(r"\\\\(?:\[[^]]*\])?", body):
        row = row.strip()
        while _RULE.match(row):
            row = _RULE.sub("", row, count=1).strip()
        if row:
            rows.append(row)
    return rows


def test_the_shape_parser_counts_what_latex_would():
    """Hand-counted: 'l' + 'rr' x 2 = 5 columns; p{..}, @{}, >{..} and *{3}{r} = 1 + 3; a header
    with \\multicolumn{2} twice and one cell is 5 cells; a row of 2 & is 3 cells."""
    assert declared_columns("lrrrr") == 5 and declared_columns(">{\\raggedright}p{3cm}@{ }*{3}{r}") == 4
    assert row_cells(" & \\multicolumn{2}{c}{a} & \\multicolumn{2}{c}{b}") == 5 and row_cells("a & b \\& c & d") == 3
    tex = (
        "\\begin{tabular}{@{}c@{}}\\begin{tabular}{lr}\\toprule a & b \\\\\\bottomrule\\end{tabular}\\\\"
        "\\end{tabular} \\begin{longtable}{lr} x & \\begin{tabular}[t]{@{}r@{}}1 \\\\ 2\\end{tabular} "
        "\\\\\\end{longtable}"
    )
    assert [(declared_columns(s), [row_cells(r) for r in table_rows(b)]) for s, b in tabulars(tex)] == \
        [(2, [2]), (1, [1]), (1, [1, 1]), (2, [2])]


@pytest.mark.slow
def test_every_generated_table_fills_the_columns_it_declares_in_every_row(root):
    """Every experiment's table from the committed reference (what `simcore table` writes): each row of
    each tabular or longtable has as many cells as its column spec declares."""
    wrong = []
    for path in sorted((root / "config/experiments").glob("*.yaml")):
        spec = load_spec(path)
        for colspec, body in tabulars(table_tex(spec, root / "results/reference")):
            want = declared_columns(colspec)
            wrong += [f"{spec.id}: {row_cells(r)} cells of {want}: {r[:80]}" for r in table_rows(body)
                      if row_cells(r) != want]
    assert wrong == [], "\n".join(wrong[:20])


# ---------------------------------------------------------------- the whole report from the reference

@pytest.mark.slow
def test_the_full_scale_report_from_the_reference_has_no_layout_fault(tmp_path, root, simcore_cli):
    """`make report-from-reference`'s steps into tmp_path: the report's sources, every input from
    results/reference/, latexmk; then no float too large for its page and no box past the margin."""
    paper = tmp_path / "paper"
    shutil.copytree(root / "paper", paper, ignore=shutil.ignore_patterns("build", "figures", "tables", "generated"))
    made = simcore_cli("report-from-results", "--results", root / "results/reference", "--paper", paper)
    assert made.returncode == 0, made.stderr
    latex = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-outdir=build",
                            "report.tex"], cwd=paper, capture_output=True, text=True, timeout=1800)
    assert latex.returncode == 0, latex.stdout[-3000:]
    assert check_log(paper / "build/report.log") == []
    assert simcore_cli("check-layout", paper / "build/report.log").returncode == 0


@pytest.mark.parametrize("exp", ["mehta-sensitivity", "corr05-map"])
def test_a_maps_title_lies_inside_its_figure(tmp_path, root, monkeypatch, exp):
    """The heat map's title (claim, statistic, published value) is drawn whole: every title's box
    ends inside the figure (mehta-sensitivity's one line was cut at 'Linux (one do')."""
    from simcore.report import figures

    drawn = []
    monkeypatch.setattr(figures.plt, "close", drawn.append)   # keep the figure make_figure would close
    figures.make_figure(load_spec(root / f"config/experiments/{exp}.yaml"), root / "results/reference",
                        tmp_path / "map.pdf")
    fig = drawn[0]
    renderer = fig.canvas.get_renderer()
    titles = [ax._left_title for ax in fig.axes if ax._left_title.get_text()]
    assert titles and all(t.get_window_extent(renderer).x1 <= fig.bbox.x1 for t in titles)
    monkeypatch.undo()
    figures.plt.close(fig)
