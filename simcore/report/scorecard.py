"""scorecard.tex: every claim's verdict, per paper and in total, the notes that say why a claim does not
reproduce (each written once, numbered), and how each claim stands under the readings tried."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from simcore.report.data import (HEADER, VERDICT_COLOURS, claim_rows, claim_statistic, int_or_dash, isnum, ragged,
                                 resize_to_width, statistic_unit, tex_escape, tex_id, verdict_of, verdict_tex)
from simcore.report.provenance import scale_caption
from simcore.stats.claims import VERDICTS


#: each claim in exactly one of these (the first page's counts; docs/statistics.md, "Verdicts")
PARTITION = ("reproduced with magnitude", "reproduced direction", "other size", "explained", "not reproduced",
             "calibrated")
#: ...and two counts across them: the reproduced claims judged on a calibrated value, the claims judged under readings
STANDINGS = (*PARTITION, "predicted", "judged under readings")

def standing_counts(specs, results_dir: Path) -> dict[str, dict[str, int]]:
    """Per paper, how many claims stand in each part of PARTITION (:func:`simcore.report.judged.standing`),
    how many reproduce though judged on a value calibrated on another claim (``calibrated_input``:
    predicted), and how many were judged under readings at all."""
    from simcore.report.judged import judged_rows, standing

    judged = judged_rows(specs, results_dir)
    out: dict[str, dict[str, int]] = {}
    for spec in specs:
        counts = out.setdefault(spec["paper"], {k: 0 for k in STANDINGS})
        for claim, row in claim_rows(spec, results_dir):
            rows = judged.get((spec.id, claim["id"]), [])
            counts[standing(verdict_of(row), rows, bool(row) and isnum(row.get("published_effect")))] += 1
            counts["predicted"] += verdict_of(row) == "reproduced" and bool(claim.get("calibrated_input"))
            counts["judged under readings"] += bool(rows)
    return out

def reproduced(counts: dict[str, int]) -> int:
    """The claims reproduced: with the paper's number and direction claims (the verdict 'reproduced')."""
    return counts["reproduced with magnitude"] + counts["reproduced direction"]

def standing_sentence(counts: dict[str, int]) -> str:
    """'43 of 127 claims reproduced (9 with the paper's number, 34 direction claims; 3 of them
    predicted), ...': every part of PARTITION, zeros included, in words that add up."""
    total = sum(counts[k] for k in PARTITION)
    return (f"{reproduced(counts)} of {total} claims reproduced ({counts['reproduced with magnitude']} with the "
            f"paper's number, {counts['reproduced direction']} direction claims; {counts['predicted']} of them "
            f"predicted on a calibrated baseline), {counts['other size']} in the paper's direction with another size, "
            f"{counts['explained']} explained by a reading the paper's text supports, {counts['not reproduced']} "
            f"not reproduced under any reading tried and {counts['calibrated']} calibrated "
            f"({counts['judged under readings']} claims were judged under readings of their paper's own simulator)")

class FigureClaims:
    """The claims of a published SAN figure (``published.claim`` of its model files; verdicts in
    results/FIGURE/claims.csv from `simcore san-compare`), standing in for a spec in the scorecard."""

    def __init__(self, figure: str, claims: list[dict], measures: tuple[str, ...] = ()):
        self.id = figure
        self.data = {"paper": figure.split("-")[0], "claims": claims, "source": "figure"}
        self.metrics = [{"name": m, "label": "probability"} for m in measures]   # a SAN measure: a state's probability

    def __getitem__(self, key: str):
        return self.data[key]

def figure_claims(san_dir: Path = Path("config/san")) -> list[FigureClaims]:
    """A :class:`FigureClaims` for every published SAN figure whose models state a claim."""
    from simcore.experiments.targets import san_figures
    from simcore.inputs import read_yaml

    out = []
    for figure, models in san_figures(san_dir).items():
        claims, measures = [], []
        for model in models:
            published = (read_yaml(Path(san_dir) / f"{model}.yaml") or {}).get("published") or {}
            claim = published.get("claim")
            if isinstance(claim, dict) and {"id", "text"} <= set(claim):
                claims.append({k: str(claim[k]) for k in ("id", "text", "if_not_reproduced") if k in claim})
                measures.append(str(published.get("measure")))
        if claims:
            out.append(FigureClaims(figure, claims, tuple(dict.fromkeys(measures))))
    return out

SHORT_VERDICTS = {"smaller than published": "smaller", "larger than published": "larger", "missing": "no result"}

def _short_verdict(verdict: str) -> str:
    """A verdict as a short coloured column head."""
    colour = VERDICT_COLOURS.get(verdict, "gray")
    return rf"\textcolor{{{colour}}}{{\textbf{{{tex_escape(SHORT_VERDICTS.get(verdict, verdict))}}}}}"

def verdict_counts(specs, results_dir: Path) -> dict[str, dict[str, int]]:
    """Per paper, the number of claims of each verdict (every verdict and 'missing' a key)."""
    per_paper: dict[str, dict[str, int]] = {}
    for spec in specs:
        counts = per_paper.setdefault(spec["paper"], {v: 0 for v in (*VERDICTS, "missing")})
        for _, row in claim_rows(spec, results_dir):
            counts[verdict_of(row)] += 1
    return per_paper

def verdict_counts_tex(specs, results_dir: Path) -> list[str]:
    """A small table: claims per paper and verdict (the verdicts that occur), with totals."""
    per_paper = verdict_counts(specs, results_dir)
    seen = [v for v in (*VERDICTS, "missing") if any(c.get(v) for c in per_paper.values())]
    total = {v: sum(c.get(v, 0) for c in per_paper.values()) for v in seen}
    rows = [(tex_escape(p), [c.get(v, 0) for v in seen]) for p, c in per_paper.items()]
    rows.append((r"\textbf{all}", [total[v] for v in seen]))
    tabular = [r"\begin{tabular}{@{}l" + "r" * (len(seen) + 1) + "@{}}", r"\toprule",
               "Paper & " + " & ".join(_short_verdict(v) for v in seen) + r" & claims \\", r"\midrule"]
    tabular += [f"{name} & " + " & ".join(map(str, n)) + f" & {sum(n)} \\\\" for name, n in rows]
    tabular += [r"\bottomrule", r"\end{tabular}"]
    return [r"\begin{table}[ht]\centering\small",
            r"\caption{Claims per paper and verdict.}\label{tab:verdict-counts}",
            resize_to_width("\n".join(tabular)).rstrip(), r"\end{table}", ""]

def reconciliation(counts: dict[str, int], standings: dict[str, int]) -> str:
    """How the verdicts over all claims (``counts``, :func:`verdict_counts` summed) make up the first
    page's counts (``standings`` summed): a sentence whose sums can be checked by eye."""
    otherwise = [v for v in VERDICTS if v not in ("reproduced", "smaller than published", "larger than published",
                                                    "calibrated")] + ["missing"]
    others = " + ".join(f"{counts[v]} {tex_escape(SHORT_VERDICTS.get(v, v))}" for v in otherwise if counts[v])
    return (f"The verdict reproduced ({counts['reproduced']}) is the first page's reproduced: "
            f"{standings['reproduced with magnitude']} with the paper's number + {standings['reproduced direction']} "
            f"direction claims; smaller + larger than published ({counts['smaller than published']} + "
            f"{counts['larger than published']}) are its right direction, other size "
            f"({standings['other size']}); the other verdicts ({others or 'none'}) are its explained by a reading "
            f"({standings['explained']}) and not reproduced ({standings['not reproduced']}).")

@dataclass
class Note:
    """One text the scorecard cites by number (R1, R2, ...): why claims do not reproduce, what a
    calibrated claim's number chose, or what a partly calibrated claim's statistic holds."""
    number: int
    text: str                                    # as the spec or the row gives it (not escaped)
    reason: bool                                 # an if_not_reproduced reason (else a calibration)
    papers: dict = field(default_factory=dict)   # paper -> claims citing it

NOT_REPRODUCED = ("contradicted", "absent", "negligible", "not specific", "smaller than published",
                  "larger than published")

def notes(specs, results_dir: Path) -> tuple[list[Note], dict[tuple[str, str], list[int]]]:
    """The notes, each distinct text once, numbered from 1 in the order of the claims that first
    cite them, and the numbers each claim (experiment id, claim id) cites."""
    found: dict[tuple[str, bool], Note] = {}
    cites: dict[tuple[str, str], list[int]] = {}
    for spec in specs:
        for claim, row in claim_rows(spec, results_dir):
            for text, reason in _claim_notes(claim, row):
                note = found.setdefault((text, reason), Note(len(found) + 1, text, reason))
                note.papers[spec["paper"]] = note.papers.get(spec["paper"], 0) + 1
                cites.setdefault((spec.id, claim["id"]), []).append(note.number)
    return list(found.values()), cites

def _claim_notes(claim: dict, row) -> list[tuple[str, bool]]:
    """(text, is a reason) of what a claim's row cites: the claim's reason when it is decided
    otherwise than reproduced, what its number chose when calibrated, what it holds when partly calibrated."""
    verdict = verdict_of(row)
    out = []
    if verdict == "calibrated":   # the spec says why, or (a SAN figure's claim) the row the rule wrote
        out.append((f"Calibrated: its number chose a model value: {claim.get('calibrated') or row['calibrated']}"
                    .rstrip(".") + ".", False))
    elif verdict in NOT_REPRODUCED and claim.get("if_not_reproduced"):
        out.append((claim["if_not_reproduced"], True))
    if claim.get("calibrated_input"):
        out.append((f"Partly calibrated (the verdict stands): {claim['calibrated_input']}".rstrip(".") + ".", False))
    return out

def note_ref(number: int) -> str:
    return f"\\hyperref[note:{number}]{{R{number}}}"

def notes_tex(found: list[Note], unexplained: dict[str, int]) -> list[str]:
    """The numbered notes, each with the papers and number of claims citing it, and how many
    claims decided otherwise cite no reason (``unexplained``: per paper)."""
    if not found and not any(unexplained.values()):
        return []
    lines = [r"\paragraph{Why claims do not reproduce.} The scorecard's verdicts cite these notes (each "
             "written once): the most likely reason for a claim decided otherwise than reproduced, and what a "
             "calibrated or partly calibrated claim's number chose.",
             r"\begin{description}\setlength{\itemsep}{0pt}\small"]
    for note in found:
        who = ", ".join(f"{tex_escape(p)} {n}" for p, n in note.papers.items())
        lines.append(f"\\item[R{note.number}]\\label{{note:{note.number}}} "
                     f"({who} claim{'s' * (sum(note.papers.values()) > 1)}) {tex_escape(note.text)}")
    if any(unexplained.values()):
        who = ", ".join(f"{tex_escape(p)} {n}" for p, n in unexplained.items() if n)
        lines.append(f"\\item[--] No reason identified yet for {sum(unexplained.values())} claims decided otherwise "
                     f"({who}).")
    return lines + [r"\end{description}", ""]

def unexplained_counts(specs, results_dir: Path) -> dict[str, int]:
    """Per paper, the claims decided otherwise than reproduced that give no reason."""
    out: dict[str, int] = {}
    for spec in specs:
        for claim, row in claim_rows(spec, results_dir):
            missing = verdict_of(row) in NOT_REPRODUCED and not claim.get("if_not_reproduced")
            out[spec["paper"]] = out.get(spec["paper"], 0) + missing
    return out

def scorecard_tex(specs, results_dir: Path) -> str:
    from simcore.report.judged import judged_rows, summary_note

    judged = judged_rows(specs, results_dir)
    found, cites = notes(specs, results_dir)
    counts = verdict_counts(specs, results_dir)
    standings = standing_counts(specs, results_dir)
    head = (r"\toprule Experiment & Claim & Statistic (unit), estimate [CI] & Verdict [note] & "
            r"Best reading the text supports \\ \midrule")
    lines = [HEADER.rstrip(), *verdict_counts_tex(specs, results_dir),
             reconciliation(_sum(counts.values()), _sum(standings.values())), "",
             *notes_tex(found, unexplained_counts(specs, results_dir)),
             r"\begingroup\footnotesize",
             r"\begin{longtable}{@{}" + ragged(0.12, 0.295, 0.2, 0.11, 0.17) + "@{}}",
             r"\caption{Scorecard: every claim of every paper and its verdict. The statistic is the one "
             r"behind the verdict (in the cell that decides it), in the unit given beside its name, with its "
             r"confidence interval and the threshold it is tested against; R1, R2, \ldots: the notes above. "
             r"Last column: where an experiment judges the claim under "
             r"readings of the paper's own simulator, the reading the paper's text supports under which it "
             r"comes nearest to reproducing, with its verdict and statistic." + scale_caption(specs, results_dir)
             + r"}\label{tab:scorecard}\\",
             head, r"\endfirsthead", head, r"\endhead", r"\bottomrule", r"\endlastfoot"]
    paper = None
    for spec in specs:
        if spec["paper"] != paper:
            paper = spec["paper"]
            lines.append(rf"\multicolumn{{5}}{{@{{}}l}}{{\textbf{{{tex_escape(paper)}}}}} \\*")
        for claim, row in claim_rows(spec, results_dir):
            lines.append(_scorecard_row(spec, claim, row, judged.get((spec.id, claim["id"])),
                                        cites.get((spec.id, claim["id"]), []), summary_note))
    lines += [r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines)

def _scorecard_row(spec, claim: dict, row, readings, cited: list[int], summary_note) -> str:
    """One claim's row: experiment, claim, statistic with its unit, verdict with the notes it
    cites, the best reading the text supports."""
    unit = statistic_unit(spec, row) if row else None
    cells = ""
    if row and isnum(row.get("cells")) and int(row["cells"]) > 1:
        cells = (f" (mean over {int_or_dash(row['cells'])} cells)" if row.get("across") == "mean" else
                 f" ({int_or_dash(row.get('cells_reproduced'))}/{int_or_dash(row['cells'])} cells)")
    verdict = verdict_tex(row.get("verdict") if row else None) + _partly_calibrated(claim)
    if cited:
        verdict += " [" + ", ".join(note_ref(n) for n in cited) + "]"
    return " & ".join([
        f"\\hyperref[tab:{spec.id}]{{{tex_id(spec.id)}}}",
        tex_escape(claim["text"]),
        (claim_statistic(row, unit) if row else "--") + cells,
        verdict,
        summary_note(readings, unit) if readings else "--",
    ]) + r" \\"

def _sum(tables) -> dict[str, int]:
    """Counts added over the papers."""
    out: dict[str, int] = {}
    for table in tables:
        for key, n in table.items():
            out[key] = out.get(key, 0) + n
    return out

def _partly_calibrated(claim: dict) -> str:
    """' (partly calibrated)' for a claim whose statistic holds a value chosen on another claim's
    number (``calibrated_input``; its note says which), else ''."""
    return " (partly calibrated)" if claim.get("calibrated_input") else ""
