"""provenance.tex: what every experiment's results were made with; and the scale they were run at, which the
report's text and scorecard quote."""

from __future__ import annotations

from pathlib import Path

from simcore.report.data import HEADER, isnum, ragged, read_provenance, tex_escape, tex_id

SCALE_NOTES = {
    "smoke": "a smoke run (a thinned grid, {reps} replications per cell), made to check that the workflow "
             "runs end to end",
    "quick": "a quick run ({reps} replications per cell), made for a first look",
    "mixed": "experiments run at different scales ({scales})",
}

def run_values(specs, results_dir: Path) -> dict:
    """What the results were made with, from their provenance: ``scale`` (``mixed`` when the
    experiments disagree), ``reps`` per cell (min--max), ``commit``, ``date`` (of the latest
    result) and ``scalenote``, a boxed warning unless the scale is full."""
    provs = [p for p in (read_provenance(s, results_dir) for s in specs) if p]
    scales = sorted({tex_escape(p.get("scale")) for p in provs})
    reps = sorted(int(p["replications_per_cell"]) for p in provs if isnum(p.get("replications_per_cell")))
    commits = sorted({str(p.get("commit", "unknown")) for p in provs})
    dates = sorted(str(p["date"])[:10] for p in provs if p.get("date"))
    scale = scales[0] if len(scales) == 1 else "mixed" if scales else "--"
    return {
        "scale": scale,
        "reps": _span(reps),
        "commit": ", \\allowbreak{}".join(tex_escape(c) for c in commits) or "--",
        "date": dates[-1] if dates else r"\today",
        "scalenote": _scale_note(scale, _span(reps), scales),
    }

def _scale_note(scale: str, reps: str, scales: list[str]) -> str:
    """A boxed warning that the verdicts of a smoke, quick or mixed run are not the artifact's."""
    if scale not in SCALE_NOTES:
        return ""
    what = SCALE_NOTES[scale].format(reps=reps, scales=", ".join(scales))
    return (f"\\valwarning{{\\textbf{{Not the artifact's result.}} These verdicts come from {what}. "
            "They are not the reproduction's verdicts: those are the full scale's "
            "(\\mbox{\\texttt{make reproduce}}).}")

def _span(numbers: list[int]) -> str:
    """'3' or '3--20' for sorted numbers; '--' for none."""
    if not numbers:
        return "--"
    return str(numbers[0]) if numbers[0] == numbers[-1] else f"{numbers[0]}--{numbers[-1]}"

def scale_caption(specs, results_dir: Path) -> str:
    """A sentence for the scorecard's caption when the results are not (all) at the full scale."""
    scale = run_values(specs, results_dir)["scale"]
    if scale not in SCALE_NOTES:
        return ""
    return (f" \\textbf{{Scale {scale}: these verdicts are not the artifact's result}}, which is the "
            "full scale's.")

def provenance_tex(specs, results_dir: Path) -> str:
    lines = [
        HEADER.rstrip(),
        r"\begingroup\footnotesize\setlength\tabcolsep{4pt}",
        r"\begin{longtable}{@{}" + ragged(0.19) + "lllrrrr@{}}",
        r"\caption{Provenance of every experiment's results.}\label{tab:provenance}\\",
        r"\toprule Experiment & Commit & Config hash & Scale & Seed & Cells $\times$ reps & Events & Wall time (s) \\ "
        r"\midrule",
        r"\endfirsthead",
        r"\toprule Experiment & Commit & Config hash & Scale & Seed & Cells $\times$ reps & Events & Wall time (s) \\ "
        r"\midrule",
        r"\endhead",
        r"\bottomrule",
        r"\endlastfoot",
    ]
    package_sets: dict = {}
    platforms: dict = {}
    for spec in specs:
        prov = read_provenance(spec, results_dir)
        if prov is None:
            lines.append(f"{tex_id(spec.id)} & \\multicolumn{{7}}{{l}}{{no results}} \\\\")
            continue
        reps = prov.get("replications_per_cell", "--")
        most = prov.get("replications_per_cell_max", reps)
        cells = f"{prov.get('cells', '--')} $\\times$ {reps}" + (f"--{most}" if most != reps else "")
        events = prov.get("events")
        wall = prov.get("wall_time_s")
        lines.append(" & ".join([
            tex_id(spec.id), f"\\texttt{{{tex_escape(prov.get('commit', '--'))}}}",
            f"\\texttt{{{tex_escape(prov.get('config_hash', '--'))}}}", tex_escape(prov.get("scale", "--")),
            tex_escape(prov.get("root_seed", "--")), cells,
            f"{int(events):,}".replace(",", "\\,") if isnum(events) else "--",
            f"{float(wall):.1f}" if isnum(wall) else "--",
        ]) + r" \\")
        packages = prov.get("packages") or {}
        key = tuple(sorted(packages.items()))
        package_sets.setdefault(key, []).append(spec.id)
        platforms.setdefault(str(prov.get("platform", "unknown")), []).append(spec.id)
    lines += [r"\end{longtable}", r"\endgroup", ""]
    lines += _precision_tex(specs, results_dir)
    if package_sets:
        lines.append(r"\begingroup\raggedright\paragraph{Software.}")
        for key, exps in package_sets.items():
            versions = ", ".join(f"{tex_escape(k)}~{tex_escape(v)}" for k, v in key)
            scope = "" if len(package_sets) == 1 else f" (experiments {tex_escape(', '.join(exps))})"
            lines.append(f"Package versions{scope}: {versions}.")
        for plat, exps in platforms.items():
            scope = "" if len(platforms) == 1 else f" (experiments {tex_escape(', '.join(exps))})"
            lines.append(f"Platform{scope}: \\texttt{{{tex_escape(plat)}}}.")
        lines += [r"\par\endgroup", ""]
    return "\n".join(lines) + "\n"

def _precision_tex(specs, results_dir: Path) -> list[str]:
    """A paragraph on the precision rounds that ran: per experiment, its rule and what each round
    added (docs/statistics.md, "Precision mode")."""
    entries = []
    for spec in specs:
        rounds = (read_provenance(spec, results_dir) or {}).get("precision") or []
        if not rounds or spec.source_id != spec.id:
            continue
        rule = rounds[0]["precision"]
        added = [f"round {r['round']} took {_cells_to(r['targets'])}" if r["targets"] else
                 f"round {r['round']} added nothing ({tex_escape(r['reason'])})" for r in rounds]
        entries.append(f"{tex_id(spec.id)}: at most {rule['max_replications']} replications per cell "
                       f"in batches of {rule['batch']}, {rule['rounds']} round(s), claims at "
                       f"{100 * rounds[0]['level']:.4g}\\,\\%; " + "; ".join(added) + ".")
    if not entries:
        return []
    return [r"\paragraph{Precision rounds.} Replications added to the cells of undecided claims "
            r"(Section~\ref{sec:scorecard}); experiments reading another's data share its rounds.",
            r"\begin{itemize}\setlength\itemsep{0pt}", *(f"\\item {e}" for e in entries), r"\end{itemize}", ""]

def _cells_to(targets: dict) -> str:
    """'cell 0 to 12 replications, cell 3 to 40'."""
    parts = [f"cell {c} to {n}" for c, n in sorted(targets.items(), key=lambda kv: int(kv[0]))]
    return ", ".join(parts) + " replications"
