"""assumptions.tex (every value a paper leaves open, with why) and untested.tex (the published results no
experiment tests)."""

from __future__ import annotations

from simcore.experiments.papers import PAPER_ORDER, PAPER_TITLES
from simcore.report.data import HEADER, by_paper, fmt, ragged, tex_escape, tex_id


def _value_tex(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{tex_escape(k)}~{_value_tex(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(_value_tex(v) for v in value)
    if isinstance(value, float):
        return fmt(value)
    return tex_escape(value)

def assumptions_tex(specs) -> str:
    lines = [HEADER.rstrip()]
    seen: dict = {}
    for paper, group in by_paper(specs).items():
        lines.append(f"\\subsection*{{{tex_escape(PAPER_TITLES.get(paper, paper))}}}")
        for spec in group:
            assumptions = spec.data.get("assumptions") or {}
            grid_why = spec.data.get("grid_why")
            lines.append(f"\\paragraph{{\\texttt{{{tex_escape(spec.id)}}}}} {tex_escape(spec['title'])}.")
            key = repr(sorted(assumptions.items(), key=lambda kv: kv[0]))
            if not assumptions:
                lines.append("No open parameters: every value comes from the paper.")
            elif key in seen:
                lines.append(f"The same assumptions as {tex_id(seen[key])}.")
            else:
                seen[key] = spec.id
                lines += [r"\begingroup\small",
                          r"\begin{longtable}{@{}" + ragged(0.25, 0.28, 0.41) + "@{}}",
                          r"\toprule Parameter & Value & Why \\ \midrule \endhead \bottomrule \endfoot"]
                for name, a in assumptions.items():
                    lines.append(f"{tex_id(name)} & {_value_tex(a.get('value'))} & "
                                 f"{tex_escape(a.get('why', ''))} \\\\")
                lines += [r"\end{longtable}", r"\endgroup"]
            if grid_why:
                lines.append(f"\\emph{{Grid:}} {tex_escape(grid_why)}")
            lines += _untested_tex(spec)
            lines.append("")
    return "\n".join(lines) + "\n"

def _untested_tex(spec) -> list[str]:
    """The published values no claim judges, grouped by the reason the spec gives."""
    reasons: dict[str, list[str]] = {}
    for e in spec.data.get("published") or []:
        if e.get("untested"):
            where = ", ".join(f"{tex_escape(k)}~{_value_tex(v)}" for k, v in (e.get("where") or {}).items())
            who = e.get("policy", spec.baseline) + (f"/{e['than']}" if e.get("than") else "")
            reasons.setdefault(e["untested"], []).append(
                f"{tex_id(e['metric'])} of {tex_escape(who)}" + (f" at {where}" if where else ""))
    if not reasons:
        return []
    items = [f"\\item {tex_escape(reason)} ({'; '.join(values)})" for reason, values in reasons.items()]
    return [
        "\\emph{Published values no claim judges, and why:}",
        "\\begin{itemize}\\raggedright",
        *items,
        "\\end{itemize}",
    ]


def untested_tex(untested: dict | None) -> str:
    """Per paper, the published results no experiment tests, each with its reason."""
    lines = [HEADER.rstrip()]
    for paper in sorted(untested or {}, key=lambda p: PAPER_ORDER.index(p) if p in PAPER_ORDER else len(PAPER_ORDER)):
        lines += [f"\\subsection*{{{tex_escape(PAPER_TITLES.get(paper, paper))}}}", r"\begin{itemize}"]
        lines += [f"\\item \\emph{{{tex_escape(item['source'])}}}: {tex_escape(item['result'])} "
                  f"\\emph{{Not tested:}} {tex_escape(item['why'])}" for item in untested[paper]]
        lines.append(r"\end{itemize}")
    if len(lines) == 1:
        lines.append("Every published result of the papers is tested by an experiment.")
    return "\n".join(lines) + "\n"
