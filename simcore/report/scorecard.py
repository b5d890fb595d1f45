"""scorecard.tex: every claim's verdict, per paper and in total, the findings, and how each claim stands
under the readings tried."""

from __future__ import annotations

from pathlib import Path

from simcore.report.data import (HEADER, VERDICT_COLOURS, by_paper, claim_rows, claim_statistic, int_or_dash, isnum,
                                 ragged, tex_escape, tex_id, verdict_of, verdict_sentence, verdict_tex)
from simcore.report.provenance import scale_caption
from simcore.stats.claims import VERDICTS


STANDINGS = ("reproduced with magnitude", "reproduced in direction only", "explained", "not reproduced", "calibrated",
             "judged under readings")

def standing_counts(specs, results_dir: Path) -> dict[str, dict[str, int]]:
    """Per paper, how many claims reproduce under the default reading, are explained by a reading
    the text supports (:func:`simcore.report.judged.standing`), are calibrated or reproduce under
    no reading tried; and how many were judged under readings at all."""
    from simcore.report.judged import judged_rows, standing

    judged = judged_rows(specs, results_dir)
    out: dict[str, dict[str, int]] = {}
    for spec in specs:
        counts = out.setdefault(spec["paper"], {k: 0 for k in STANDINGS})
        for claim, row in claim_rows(spec, results_dir):
            rows = judged.get((spec.id, claim["id"]), [])
            counts[standing(verdict_of(row), rows, bool(row) and isnum(row.get("published_effect")))] += 1
            counts["judged under readings"] += bool(rows)
    return out

def standing_sentence(counts: dict[str, int]) -> str:
    """'12 reproduced with the paper's magnitude, 5 in direction only, 3 explained by a reading the
    paper's text supports, ...' (every count, zeros included: the sentence is the report's first
    summary)."""
    return (f"{counts['reproduced with magnitude']} reproduced with the paper's magnitude and "
            f"{counts['reproduced in direction only']} in direction only under the default reading, "
            f"{counts['explained']} explained by a reading the paper's text supports, {counts['not reproduced']} "
            f"not reproduced under any reading tried, and {counts['calibrated']} calibrated "
            f"({counts['judged under readings']} of all claims were judged under readings of their paper's own "
            "simulator)")

class FigureClaims:
    """The claims of a published SAN figure (``published.claim`` of its model files; verdicts in
    results/FIGURE/claims.csv from `simcore san-compare`), standing in for a spec in the scorecard."""

    def __init__(self, figure: str, claims: list[dict]):
        self.id = figure
        self.data = {"paper": figure.split("-")[0], "claims": claims, "source": "figure"}

    def __getitem__(self, key: str):
        return self.data[key]

def figure_claims(san_dir: Path = Path("config/san")) -> list[FigureClaims]:
    """A :class:`FigureClaims` for every published SAN figure whose models state a claim."""
    from simcore.experiments.targets import san_figures
    from simcore.inputs import read_yaml

    out = []
    for figure, models in san_figures(san_dir).items():
        claims = []
        for model in models:
            claim = ((read_yaml(Path(san_dir) / f"{model}.yaml") or {}).get("published") or {}).get("claim")
            if isinstance(claim, dict) and {"id", "text"} <= set(claim):
                claims.append({k: str(claim[k]) for k in ("id", "text", "if_not_reproduced") if k in claim})
        if claims:
            out.append(FigureClaims(figure, claims))
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
    lines = [r"\begin{table}[ht]\centering\small",
             r"\caption{Claims per paper and verdict.}\label{tab:verdict-counts}",
             r"\begin{tabular}{@{}l" + "r" * (len(seen) + 1) + "@{}}", r"\toprule",
             "Paper & " + " & ".join(_short_verdict(v) for v in seen) + r" & claims \\", r"\midrule"]
    lines += [f"{name} & " + " & ".join(map(str, n)) + f" & {sum(n)} \\\\" for name, n in rows]
    return lines + [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]

DECIDED_OTHERWISE = ("contradicted", "absent", "negligible", "not specific", "smaller than published",
                     "larger than published")

def _claim_ref(spec, claim) -> str:
    return f"\\hyperref[tab:{spec.id}]{{{tex_id(spec.id)}}}~{tex_id(claim['id'])}"

def findings_tex(specs, results_dir: Path) -> list[str]:
    """One paragraph per paper under the counts table: what reproduces, what does not (each with
    its statistic and the claim's ``if_not_reproduced`` reason), what the replications leave open."""
    lines = []
    for paper, paper_specs in by_paper(specs).items():
        rows = [(spec, claim, row) for spec in paper_specs for claim, row in claim_rows(spec, results_dir)]
        by = {v: [(s, c, r) for s, c, r in rows if verdict_of(r) == v] for v in (*VERDICTS, "missing")}
        counts = verdict_sentence({v: len(x) for v, x in by.items()})
        plural = "" if len(rows) == 1 else "s"
        text = [f"\\paragraph{{{tex_escape(paper)}.}} {len(rows)} claim{plural}: {counts}."]
        if by["reproduced"]:
            text.append("Reproduced: " + "; ".join(_claim_ref(s, c) for s, c, _ in by["reproduced"]) + ".")
        groups: dict[str, list[str]] = {}   # one reason, said once for the claims it explains
        for verdict in DECIDED_OTHERWISE + ("calibrated",):
            for spec, claim, row in by[verdict]:
                groups.setdefault(_why_not(claim, verdict, row), []).append(
                    f"{_claim_ref(spec, claim)} {verdict_tex(verdict)}, {claim_statistic(row)}")
        for why, items in groups.items():   # the claims' texts are in the table below
            text.append("; ".join(items) + f". {why[0].upper()}{why[1:].rstrip('.')}.")
        partly: dict[str, list[str]] = {}
        for spec, claim, _ in rows:
            if claim.get("calibrated_input"):
                partly.setdefault(claim["calibrated_input"], []).append(_claim_ref(spec, claim))
        for why, refs in partly.items():
            text.append("Partly calibrated (the verdict stands): " + "; ".join(refs)
                        + f": {tex_escape(why.rstrip('.'))}.")
        open_ = by["inconclusive"]
        if open_:
            needs = [int(r["required_replications"]) for _, _, r in open_ if isnum(r.get("required_replications"))]
            more = f" (the largest count asked for: about {max(needs):,} replications per cell)" if needs else ""
            text.append("Undecided at these replications: "
                        + "; ".join(_claim_ref(s, c) for s, c, _ in open_) + more.replace(",", "\\,") + ".")
        lines += [" ".join(text), ""]
    return [r"\begingroup\sloppy", *lines, r"\par\endgroup", ""] if lines else []  # long ids: break between words

def _why_not(claim: dict, verdict: str, row=None) -> str:
    if verdict == "calibrated":  # the spec says why, or (a SAN figure's claim) the row the rule wrote
        return f"its number chose a model value: {tex_escape(claim.get('calibrated') or row['calibrated'])}"
    reason = claim.get("if_not_reproduced")
    return f"most likely reason: {tex_escape(reason)}" if reason else "no reason identified yet"

def scorecard_tex(specs, results_dir: Path) -> str:
    from simcore.report.judged import judged_rows, summary_note

    judged = judged_rows(specs, results_dir)
    head = r"\toprule Paper & Experiment & Claim & Statistic, estimate [CI] & Verdict & Best reading the text supports \\ \midrule"
    lines = [HEADER.rstrip(), *verdict_counts_tex(specs, results_dir), *findings_tex(specs, results_dir),
             r"\begingroup\small",
             r"\begin{longtable}{@{}" + ragged(0.065, 0.15, 0.21, 0.18, 0.1, 0.145) + "@{}}",
             r"\caption{Scorecard: every claim of every paper and its verdict. The statistic is the one "
             r"behind the verdict (in the cell that decides it), with its confidence interval and the "
             r"threshold it is tested against. Last column: where an experiment judges the claim under "
             r"readings of the paper's own simulator, the reading the paper's text supports under which it "
             r"comes nearest to reproducing, with its verdict and statistic." + scale_caption(specs, results_dir)
             + r"}\label{tab:scorecard}\\",
             head, r"\endfirsthead", head, r"\endhead", r"\bottomrule", r"\endlastfoot"]
    for spec in specs:
        for claim, row in claim_rows(spec, results_dir):
            rows = judged.get((spec.id, claim["id"]))
            cells = ""
            if row and isnum(row.get("cells")) and int(row["cells"]) > 1:
                cells = (f" (mean over {int_or_dash(row['cells'])} cells)" if row.get("across") == "mean" else
                         f" ({int_or_dash(row.get('cells_reproduced'))}/{int_or_dash(row['cells'])} cells)")
            lines.append(" & ".join([
                tex_escape(spec["paper"]),
                f"\\hyperref[tab:{spec.id}]{{{tex_id(spec.id)}}}",
                tex_escape(claim["text"]),
                (claim_statistic(row) if row else "--") + cells,
                verdict_tex(row.get("verdict") if row else None) + _partly_calibrated(claim),
                summary_note(rows) if rows else "--",
            ]) + r" \\")
    lines += [r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines)

def _partly_calibrated(claim: dict) -> str:
    """' (partly calibrated)' for a claim whose statistic holds a value chosen on another claim's
    number (``calibrated_input``; the findings say which), else ''."""
    return " (partly calibrated)" if claim.get("calibrated_input") else ""
