"""headline.tex: the box that opens the report, per paper how many claims reproduce (with the paper's
number, as a direction, predicted on a calibrated baseline), how many do not and are calibrated, its
verdicts by default and under its best supported reading set (named), and the main reason why claims
do not reproduce."""

from __future__ import annotations

import re
from pathlib import Path

from simcore.report.data import HEADER, tex_escape
from simcore.report.provenance import run_values
from simcore.report.reading_sets import BEST_SET
from simcore.report.scorecard import (
    PARTITION,
    SHORT_VERDICTS,
    STANDINGS,
    note_ref,
    notes,
    paper_sets,
    reproduced,
    standing_counts,
    verdict_counts,
)

GIST = 108   # characters of a reason's first clause the box shows (one line beside its paper)
#: the verdict columns of the box's second table: smaller and larger than published are one, other size
VERDICT_COLUMNS = (("reproduced", ("reproduced",)), ("other size", ("smaller than published", "larger than published")),
                   *((v, (v,)) for v in ("contradicted", "absent", "negligible", "not specific", "inconclusive",
                                         "calibrated", "missing")))


def headline_tex(specs, results_dir: Path) -> str:
    """The box: a row of counts per paper and in all, what the columns mean, each paper's verdicts by
    default and under its best supported reading set, the set named, and one line per paper with the
    reason most of its claims that do not reproduce cite."""
    per_paper = standing_counts(specs, results_dir)
    sets = paper_sets(specs, results_dir)
    total = {k: sum(c[k] for c in per_paper.values()) for k in STANDINGS}
    found, _ = notes(specs, results_dir)
    scale = run_values(specs, results_dir)["scale"]
    rows = [_row(f"{tex_escape(p)} (\\S\\ref{{sec:{p}}})", c) for p, c in per_paper.items()]
    lines = [
        HEADER.rstrip(),
        r"\par\noindent\fbox{\parbox{\dimexpr\linewidth-2\fboxsep-2\fboxrule\relax}{\small",
        f"\\textbf{{What reproduces, at the {tex_escape(scale)} scale:}} {sum(total[k] for k in PARTITION)} "
        "claims of the papers' figures and tables, each judged on the simulated replications "
        r"(every claim: Table~\ref{tab:scorecard}).\par\smallskip",
        r"\centering{\setlength{\tabcolsep}{4pt}\begin{tabular}{@{}lrrrrrrr@{}}",
        r"\toprule",
        r" & & \multicolumn{2}{c}{reproduced} & right direction, & explained by & not & \\",
        r"\cmidrule(lr){3-4}",
        r"Paper & claims & number + direction & predicted & other size & the best set & reproduced & calibrated \\",
        r"\midrule",
        *rows,
        r"\midrule",
        _row(r"\textbf{all}", total),
        r"\bottomrule",
        r"\end{tabular}}\par",
        r"\raggedright\smallskip",
        "Claims = reproduced + other size + explained + not reproduced + calibrated. Reproduced: with the "
        "paper's number, or a claim of direction only with an effect of practical size (never smaller or larger "
        "than published); predicted: of these, judged on a value calibrated on another claim; explained: not "
        "reproduced by default, reproduced under its paper's best supported reading set; calibrated: its number "
        r"chose a model value, not counted (Section~\ref{sec:scorecard}).\par\smallskip",
        *_set_table(verdict_counts(specs, results_dir), verdict_counts(specs, results_dir, sets)),
        *_set_lines(sets, {p: c["judged under readings"] for p, c in per_paper.items()}),
        r"\smallskip",
        r"\textbf{Main reason where claims do not reproduce} (the note of Section~\ref{sec:scorecard} most of "
        r"them cite):\par",
    ]
    lines += [_reason_line(p, c, found) for p, c in per_paper.items()]
    return "\n".join(lines + [r"}}\par\medskip", ""])


def _set_table(default: dict[str, dict[str, int]], under: dict[str, dict[str, int]]) -> list[str]:
    """Per paper and in all, each verdict's count by default / under the paper's best supported
    reading set (every claim judged under it; a claim no experiment judges keeps its default
    verdict), the columns that occur."""
    columns = [(name, vs) for name, vs in VERDICT_COLUMNS if any(c[v] for c in default.values() for v in vs)
               or any(c[v] for c in under.values() for v in vs)]

    def cells(d: dict, u: dict) -> str:
        return " & ".join(f"{sum(d[v] for v in vs)} / {sum(u[v] for v in vs)}" for _, vs in columns)

    total = [{v: sum(c[v] for c in t.values()) for v in next(iter(t.values()))} for t in (default, under)]
    return [r"\textbf{Verdicts by default / under the paper's best supported reading set}, one set of values of "
            "the readings of the paper's own simulator, every value backed by a sentence of the paper, applied to "
            f"all its claims: {tex_escape(BEST_SET)}.\\par",
            r"\centering{\footnotesize\setlength{\tabcolsep}{3pt}\begin{tabular}{@{}l" + "r" * len(columns) + "@{}}",
            r"\toprule",
            "Paper & " + " & ".join(tex_escape(SHORT_VERDICTS.get(n, n)) for n, _ in columns) + r" \\", r"\midrule",
            *(f"{tex_escape(p)} & {cells(default[p], under[p])} \\\\" for p in default), r"\midrule",
            rf"\textbf{{all}} & {cells(*total)} \\", r"\bottomrule", r"\end{tabular}}\par", r"\raggedright\smallskip"]


def _set_lines(sets: dict, judged: dict[str, int]) -> list[str]:
    """'mehta: rules scope all, ...': each paper's best supported reading set, or that it has none
    (``judged``: per paper, its claims judged under readings); the papers without readings in one line."""
    from simcore.report.judged import reading_tex

    lines = []
    for paper, best in sets.items():
        if not judged.get(paper):
            continue
        said = (reading_tex({"reading": best.text()}) + " (its judged experiments' own values)" * best.own if best
                else "no reading set the text supports (its default verdicts)")
        lines.append(f"\\textbf{{{tex_escape(paper)}}}: {said}.\\par")
    rest = [rf"\textbf{{{tex_escape(p)}}}" for p in sets if not judged.get(p)]
    return lines + [", ".join(rest) + r": no claim judged under readings (their default verdicts).\par"] * bool(rest)


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
