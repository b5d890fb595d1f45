"""scorecard.tex: every claim's verdict, per paper and in total, the notes that say why a claim does not
reproduce (each written once, numbered), and how each claim stands under its paper's best supported reading set."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from simcore.report.data import (
    HEADER,
    VERDICT_COLOURS,
    by_paper,
    claim_rows,
    claim_statistic,
    int_or_dash,
    isnum,
    ragged,
    resize_to_width,
    statistic_unit,
    tex_escape,
    tex_id,
    verdict_of,
    verdict_tex,
)
from simcore.report.provenance import scale_caption
from simcore.stats.claims import VERDICTS

#: each claim in exactly one of these (the first page's counts; docs/statistics.md, "Verdicts")
PARTITION = ("reproduced with magnitude", "reproduced direction", "other size", "explained", "not reproduced",
             "calibrated")
#: ...and two counts across them: the reproduced claims judged on a calibrated value, the claims judged under readings
STANDINGS = (*PARTITION, "predicted", "judged under readings")


def paper_sets(specs, results_dir: Path) -> dict:
    """Per paper, its best supported reading set (:func:`simcore.report.reading_sets.best_sets`);
    the set of the judged experiments' own values takes their own rows."""
    from simcore.report.judged import judged_rows
    from simcore.report.reading_sets import best_sets

    defaults = {(spec.id, claim["id"]): row for spec in specs for claim, row in claim_rows(spec, results_dir) if row}
    return best_sets(specs, judged_rows(specs, results_dir), defaults)


def claim_standings(specs, results_dir: Path):
    """Each claim as (spec, claim, its row, its part of PARTITION, its verdict under the paper's
    best supported set or None when no experiment judges it there): the part is
    :func:`simcore.report.judged.standing` of the default verdict and the verdict under that set."""
    from simcore.report.judged import standing

    sets = paper_sets(specs, results_dir)
    for spec in specs:
        best = sets.get(spec["paper"])
        for claim, row in claim_rows(spec, results_dir):
            under = best.verdict((spec.id, claim["id"])) if best else None
            part = standing(verdict_of(row), under, published_number(row), claim.get("kind") != "value")
            yield spec, claim, row, part, under


def published_number(row) -> bool:
    """Whether a claim's row states the paper's number (a published effect, a number or 'table')."""
    return bool(row) and (isnum(row.get("published_effect")) or row.get("published_effect") == "table")


def standing_counts(specs, results_dir: Path) -> dict[str, dict[str, int]]:
    """Per paper, how many claims stand in each part of PARTITION (:func:`claim_standings`), how many
    reproduce though judged on a value calibrated on another claim (``calibrated_input``:
    predicted), and how many were judged under readings at all."""
    from simcore.report.judged import judged_rows

    judged = judged_rows(specs, results_dir)
    out: dict[str, dict[str, int]] = {spec["paper"]: {k: 0 for k in STANDINGS} for spec in specs}
    for spec, claim, row, part, _ in claim_standings(specs, results_dir):
        counts = out[spec["paper"]]
        counts[part] += 1
        counts["predicted"] += verdict_of(row) == "reproduced" and bool(claim.get("calibrated_input"))
        counts["judged under readings"] += (spec.id, claim["id"]) in judged
    return out


def reproduced(counts: dict[str, int]) -> int:
    """The claims reproduced: with the paper's number and direction claims (the verdict 'reproduced';
    never 'other size', smaller or larger than published)."""
    return counts["reproduced with magnitude"] + counts["reproduced direction"]


def standing_sentence(counts: dict[str, int]) -> str:
    """'43 of 127 claims reproduced (9 with the paper's number, 34 direction claims; 3 of them
    predicted), ...': every part of PARTITION, zeros included, in words that add up."""
    total = sum(counts[k] for k in PARTITION)
    return (f"{reproduced(counts)} of {total} claims reproduced ({counts['reproduced with magnitude']} with the "
            f"paper's number, {counts['reproduced direction']} direction claims; {counts['predicted']} of them "
            f"predicted on a calibrated baseline), {counts['other size']} in the paper's direction with another size, "
            f"{counts['explained']} explained by the paper's best reading set its text supports, "
            f"{counts['not reproduced']} not reproduced and {counts['calibrated']} calibrated "
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

def verdict_counts(specs, results_dir: Path, sets: dict | None = None) -> dict[str, dict[str, int]]:
    """Per paper, the number of claims of each verdict (every verdict and 'missing' a key): the default
    reading's, or with ``sets`` (:func:`paper_sets`) a claim's verdict under its paper's best
    supported set where an experiment judges it there, else its default."""
    per_paper: dict[str, dict[str, int]] = {}
    for spec in specs:
        counts = per_paper.setdefault(spec["paper"], {v: 0 for v in (*VERDICTS, "missing")})
        best = (sets or {}).get(spec["paper"])
        for claim, row in claim_rows(spec, results_dir):
            counts[(best and best.verdict((spec.id, claim["id"]))) or verdict_of(row)] += 1
    return per_paper

def verdict_counts_tex(specs, results_dir: Path, sets: dict | None = None) -> list[str]:
    """A small table: claims per paper and verdict (the verdicts that occur), with totals; with
    ``sets``, beneath a paper that has a best supported set, its claims' verdicts under that set."""
    per_paper = verdict_counts(specs, results_dir)
    under = verdict_counts(specs, results_dir, sets) if sets else {}
    seen = [v for v in (*VERDICTS, "missing") if any(c.get(v) for c in [*per_paper.values(), *under.values()])]
    total = {v: sum(c.get(v, 0) for c in per_paper.values()) for v in seen}
    rows = []
    for p, c in per_paper.items():
        rows.append((tex_escape(p), [c.get(v, 0) for v in seen]))
        if sets and sets.get(p):
            rows.append((r"\quad under its best set", [under[p].get(v, 0) for v in seen]))
    rows.append((r"\textbf{all}", [total[v] for v in seen]))
    if any((sets or {}).values()):
        rows.append((r"\quad under the best sets", [sum(c.get(v, 0) for c in under.values()) for v in seen]))
    tabular = [r"\begin{tabular}{@{}l" + "r" * (len(seen) + 1) + "@{}}", r"\toprule",
               "Paper & " + " & ".join(_short_verdict(v) for v in seen) + r" & claims \\", r"\midrule"]
    tabular += [f"{name} & " + " & ".join(map(str, n)) + f" & {sum(n)} \\\\" for name, n in rows]
    tabular += [r"\bottomrule", r"\end{tabular}"]
    caption = "Claims per paper and verdict (the default reading's" + (
        "; beneath a paper whose claims are judged under readings, each claim's verdict under the paper's best "
        "supported reading set, named in Table~\\ref{tab:scorecard}, the default where no experiment judges it" if sets
        else "") + ")."
    return [r"\begin{table}[ht]\centering\small",
            rf"\caption{{{caption}}}\label{{tab:verdict-counts}}",
            resize_to_width("\n".join(tabular)).rstrip(), r"\end{table}", ""]

def standing_parts(specs, results_dir: Path) -> dict[str, dict[str, int]]:
    """Over all claims, each part of PARTITION as the default verdicts of its claims: part -> verdict -> n."""
    out: dict[str, dict[str, int]] = {part: {} for part in PARTITION}
    for _, _, row, part, _ in claim_standings(specs, results_dir):
        out[part][verdict_of(row)] = out[part].get(verdict_of(row), 0) + 1
    return out

def reconciliation(parts: dict[str, dict[str, int]]) -> str:
    """How the verdicts over all claims make up the first page's counts (``parts``:
    :func:`standing_parts`): a sentence whose sums can be checked by eye."""
    def made_of(part: str) -> str:
        found = parts[part]
        return " + ".join(f"{found[v]} {tex_escape(SHORT_VERDICTS.get(v, v))}" for v in (*VERDICTS, "missing")
                          if found.get(v)) or "none"

    number, direction = (sum(parts[k].values()) for k in ("reproduced with magnitude", "reproduced direction"))
    return (f"The verdict reproduced ({number + direction}) is the first page's reproduced: {number} with the "
            f"paper's number + {direction} direction claims; its right direction, other size "
            f"({sum(parts['other size'].values())}) is {made_of('other size')}; its explained under the paper's best "
            f"supported reading set ({sum(parts['explained'].values())}) is {made_of('explained')}; its not reproduced "
            f"({sum(parts['not reproduced'].values())}) is {made_of('not reproduced')}; its calibrated "
            f"({sum(parts['calibrated'].values())}) is {made_of('calibrated')} (each claim counted by its default "
            "verdict).")

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
    from simcore.report.judged import judged_rows

    judged = judged_rows(specs, results_dir)
    judged_ids = {experiment for experiment, _ in judged}
    sets = paper_sets(specs, results_dir)
    found, cites = notes(specs, results_dir)
    head = (r"\toprule Experiment & Claim & Statistic (unit), estimate [CI] & Verdict [note] & "
            r"Under the paper's best supported reading set \\ \midrule")
    lines = [HEADER.rstrip(), *verdict_counts_tex(specs, results_dir, sets),
             reconciliation(standing_parts(specs, results_dir)), "",
             *notes_tex(found, unexplained_counts(specs, results_dir)),
             r"\begingroup\footnotesize",
             r"\begin{longtable}{@{}" + ragged(0.12, 0.295, 0.2, 0.11, 0.17) + "@{}}",
             r"\caption{Scorecard: every claim of every paper and its verdict. The statistic is the one "
             r"behind the verdict (in the cell that decides it), in the unit given beside its name, with its "
             r"confidence interval and the threshold it is tested against; R1, R2, \ldots: the notes above. "
             r"Last column: where an experiment judges the claim under "
             r"readings of the paper's own simulator, its verdict and statistic under the paper's best reading set "
             r"the text supports, one set for all the paper's claims (named in the paper's row)."
             + scale_caption(specs, results_dir) + r"}\label{tab:scorecard}\\",
             head, r"\endfirsthead", head, r"\endhead", r"\bottomrule", r"\endlastfoot"]
    paper = None
    for spec in specs:
        if spec["paper"] != paper:
            paper = spec["paper"]
            lines.append(_paper_row(paper, sets.get(paper), any(s.id in judged_ids for s in by_paper(specs)[paper])))
        for claim, row in claim_rows(spec, results_dir):
            key = (spec.id, claim["id"])
            lines.append(_scorecard_row(spec, claim, row, key in judged, sets.get(paper), cites.get(key, [])))
    lines += [r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines)

def _paper_row(paper: str, best, judged: bool) -> str:
    """A paper's heading row in the scorecard: its name and its best supported reading set."""
    from simcore.report.judged import reading_tex

    what = (f": best supported reading set {reading_tex({'reading': best.text()})}" if best else
            ": no reading set the text supports" if judged else "")
    return rf"\multicolumn{{5}}{{@{{}}p{{\linewidth}}@{{}}}}{{\textbf{{{tex_escape(paper)}}}{what}}} \\*"

def _scorecard_row(spec, claim: dict, row, judged: bool, best, cited: list[int]) -> str:
    """One claim's row: experiment, claim, statistic with its unit, verdict with the notes it
    cites, its verdict under the paper's best supported reading set (``best``) where it is judged."""
    from simcore.report.judged import summary_note

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
        summary_note(best and best.rows.get((spec.id, claim["id"])), unit) if judged else "--",
    ]) + r" \\"

def _partly_calibrated(claim: dict) -> str:
    """' (partly calibrated)' for a claim whose statistic holds a value chosen on another claim's
    number (``calibrated_input``; its note says which), else ''."""
    return " (partly calibrated)" if claim.get("calibrated_input") else ""
