"""headline.tex: the box that opens the report, per paper how many claims reproduce (with the paper's
number, as a direction, predicted on a calibrated baseline), how many do not and are calibrated, and
the main reason why claims do not reproduce."""

from __future__ import annotations

import re
from pathlib import Path

from simcore.report.data import HEADER, tex_escape
from simcore.report.provenance import run_values
from simcore.report.scorecard import PARTITION, STANDINGS, note_ref, notes, reproduced, standing_counts

GIST = 108   # characters of a reason's first clause the box shows (one line beside its paper)


def headline_tex(specs, results_dir: Path) -> str:
    """The box: a row of counts per paper and in all, what the columns mean, and one line per paper
    with the reason most of its claims that do not reproduce cite."""
    per_paper = standing_counts(specs, results_dir)
    total = {k: sum(c[k] for c in per_paper.values()) for k in STANDINGS}
    found, _ = notes(specs, results_dir)
    scale = run_values(specs, results_dir)["scale"]
    rows = [_row(f"{tex_escape(p)} (\\S\\ref{{sec:{p}}})", c) for p, c in per_paper.items()]
    lines = [HEADER.rstrip(), r"\par\noindent\fbox{\parbox{\dimexpr\linewidth-2\fboxsep-2\fboxrule\relax}{\small",
             f"\\textbf{{What reproduces, at the {tex_escape(scale)} scale:}} {sum(total[k] for k in PARTITION)} "
             "claims of the papers' figures and tables, each judged on the simulated replications "
             r"(every claim: Table~\ref{tab:scorecard}).\par\smallskip",
             r"\centering\begin{tabular}{@{}lrrrrrrr@{}}", r"\toprule",
             r" & & \multicolumn{2}{c}{reproduced} & right direction, & explained & not & \\",
             r"\cmidrule(lr){3-4}",
             r"Paper & claims & number + direction & predicted & other size & by a reading & reproduced & calibrated \\",
             r"\midrule", *rows, r"\midrule", _row(r"\textbf{all}", total), r"\bottomrule", r"\end{tabular}\par",
             r"\raggedright\smallskip",
             "Claims = reproduced + other size + explained + not reproduced + calibrated. Reproduced: with the "
             "paper's number, or a claim of direction only with an effect of practical size; predicted: of these, "
             "judged on a value calibrated on another claim; calibrated: its number chose a model value, not counted "
             r"(Section~\ref{sec:scorecard}).\par\smallskip",
             r"\textbf{Main reason where claims do not reproduce} (the note of Section~\ref{sec:scorecard} most of "
             r"them cite):\par"]
    lines += [_reason_line(p, c, found) for p, c in per_paper.items()]
    return "\n".join(lines + [r"}}\par\medskip", ""])


def _row(name: str, c: dict[str, int]) -> str:
    """A paper's counts; the reproduced as their sum, number + direction."""
    cells = [str(sum(c[k] for k in PARTITION)),
             f"{reproduced(c)} = {c['reproduced with magnitude']} + {c['reproduced direction']}", str(c["predicted"]),
             *(str(c[k]) for k in ("other size", "explained", "not reproduced", "calibrated"))]
    return f"{name} & " + " & ".join(cells) + r" \\"


def _reason_line(paper: str, counts: dict[str, int], found) -> str:
    """'amir: R1 (9 of 11) Both methods ... (its first clause)', or why there is none."""
    missing = sum(counts[k] for k in PARTITION) - reproduced(counts) - counts["calibrated"]
    head = f"\\textbf{{{tex_escape(paper)}}}: "
    if not missing:
        return head + r"every claim reproduces or is calibrated.\par"
    cited = [note for note in found if note.reason and note.papers.get(paper)]
    if not cited:
        return head + f"no reason identified yet ({missing} claims).\\par"
    main = max(cited, key=lambda note: note.papers[paper])   # ties: the first note
    if main.papers[paper] == 1 < len(cited):
        return head + f"no reason shared: {len(cited)} of the {missing} claims each give their own (" + \
            ", ".join(note_ref(note.number) for note in cited) + ").\\par"
    return head + f"{note_ref(main.number)} ({main.papers[paper]} of {missing}) {tex_escape(gist(main.text))}\\par"


def gist(text: str, limit: int = GIST) -> str:
    """A reason's first clause, its parentheses left out, cut at a word before ``limit`` characters."""
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\s*\([^()]*\)", "", text)
    clause = re.split(r"(?<=[.;:])\s", text.strip())[0].rstrip(".;:")
    if len(clause) <= limit:
        return clause + "."
    return clause[:limit].rsplit(" ", 1)[0].rstrip(",;") + "..."
