"""paper-<paper>.tex and experiments.tex: one subsection per experiment (source, description, figure, table,
claims with verdicts), and the list of the papers' files."""

from __future__ import annotations

from pathlib import Path

from simcore.experiments.papers import PAPER_TITLES
from simcore.report.data import (
    HEADER,
    claim_rows,
    claim_statistic,
    has_gain_panel,
    metric_label,
    read_summary,
    tex_escape,
    tex_id,
    verdict_tex,
)
from simcore.report.judged import measures_home


def paper_tex(paper: str, specs, results_dir: Path) -> str:
    """One subsection per experiment: source, description, figure, table, claims with verdicts."""
    lines = [HEADER.rstrip()]
    for spec in specs:
        eid = spec.id
        lines.append(f"\\subsection{{{tex_escape(spec['title'])}}}\\label{{sec:{eid}}}")
        text = (f"\\noindent\\emph{{Paper:}} {tex_escape(spec['source'])}. "
                f"\\emph{{Experiment:}} {tex_id(eid)}")
        if spec.source_id != eid:
            text += f" (replications of {tex_id(spec.source_id)})"
        lines.append(text + ".")
        if spec.data.get("description"):
            lines.append(tex_escape(spec.data["description"].strip()))
        lines.append("")
        if spec["output"]["kind"] != "table":
            lines.append(_figure_tex(spec, read_summary(spec, results_dir)))
        lines.append(f"\\IfFileExists{{tables/{eid}.tex}}{{\\input{{tables/{eid}.tex}}}}"
                     f"{{\\par\\emph{{(Table {tex_escape(eid)} not built.)}}\\par}}")
        claims = list(claim_rows(spec, results_dir))
        if claims:
            lines.append(r"\paragraph{Claims.}")
            lines.append(r"\begin{itemize}")
            for claim, row in claims:
                stat = claim_statistic(row) if row else "no result"
                lines.append(f"\\item {tex_escape(claim['text'])} --- {stat}: "
                             f"{verdict_tex(row.get('verdict') if row else None)}.")
            lines.append(r"\end{itemize}")
        lines += [r"\FloatBarrier", ""]
    return "\n".join(lines) + "\n"

def _figure_tex(spec, summary) -> str:
    """The figure of ``spec`` with its caption, which names what is drawn (``summary``: its results)."""
    eid, out = spec.id, spec["output"]
    level = f"{spec.confidence:.0%}".replace("%", r"\%")
    if out["kind"] == "readings":
        what = (f"Each statistic under the default reading (top) and under each reading that changes one "
                f"assumption, with its {level} confidence interval; readings in order of influence; "
                "dashed: no effect; line and band: the published effect and its equivalence margin.")
    elif out["kind"] == "map":
        what = (
            f"The statistic and the verdict it would get in each combination of "
            f"{tex_escape(out['x'].replace('_', ' '))} and {tex_escape(out['y'].replace('_', ' '))}; white: the "
            "published effect, the colour's depth: the distance from it on the analysis scale (four margins: full)."
        )
    elif out["kind"] == "fit":
        what = (
            f"Left: {tex_escape(spec.label(out['policy']))}'s {tex_escape(out['metric'].replace('_', ' '))} on each "
            f"machine against {tex_escape(out['x'].replace('_', ' '))}, with {level} confidence "
            "intervals; dashed: the published level in the machine's colour. Right: the ratio of the two policies, "
            "dotted: the published ratio. Vertical line and band: the value fitted on "
            f"{tex_escape(out['fit_on'])} and its interval."
        )
    elif out["kind"] == "judged":
        against = (f"against {tex_escape(out['x'].replace('_', ' '))} under every reading (solid: every value "
                   f"supported by the paper's text; dotted: not; thick, with its {level} band: the experiment's own "
                   "reading)" if out.get("x") else f"under every reading, one point each with its {level} interval "
                   "(filled: every value supported by the paper's text; open: not)")
        what = (f"Left: the statistic of the first claim of \\texttt{{{tex_escape(spec.data['judges'])}}} that "
                f"compares two policies (else its first claim's value) {against}; circles: the paper's numbers. "
                + ("Middle: the same policy's paired difference in the share of CPU time on the home node (its own "
                   "share when the claim is about the baseline alone)." if measures_home(spec) else
                   "Middle: the same policy's own level of that metric.")
                + " Right: the readings, as values of the parameters named above them.")
    elif out["kind"] == "scatter":
        what = (
            f"One point per execution: {tex_escape(spec.label(out['x']))} on x, "
            f"{tex_escape(spec.label(out['y']))} on y, with the line x = y"
            + (f"; the first {out['first']} executions" if out.get("first") else "")
            + (
                f"; crosses: executions with {tex_escape(out['mark']['label'])} (the "
                f"\\texttt{{{tex_escape(out['mark']['metric'])}}} "
                "executions), with their own share below x = y beside the others'"
                if out.get("mark")
                else ""
            )
            + "."
        )
    else:
        from simcore.report.figures import shows_published

        what = (f"Reproduced {tex_escape(metric_label(spec, out.get('metric', spec.metrics[0]['name'])))} "
                f"with {level} confidence intervals (lines, bands); "
                + ("published values as open markers in the same colour." if shows_published(spec, summary) else
                   "the paper gives no values to draw beside them."))
        if has_gain_panel(spec):
            what += (f" Right: gain over {tex_escape(spec.label(spec.baseline))}, "
                     r"100\,(1 $-$ policy/baseline)\,\%, with its paired interval (common random numbers)"
                     + ("; the paper's gain as open markers." if shows_published(spec, summary, gain=True) else "."))
    caption = f"{tex_escape(spec['title'])} ({tex_escape(spec['source'])}). {what}"
    width = 0.98 if has_gain_panel(spec) or out['kind'] in ('readings', 'fit', 'judged') else 0.62
    return (
        f"\\IfFileExists{{figures/{eid}.pdf}}{{\\begin{{figure}}[htbp]\\centering"
        f"\\includegraphics[width={width}\\linewidth]{{{eid}.pdf}}"
        f"\\caption{{{caption}}}\\label{{fig:{eid}}}\\end{{figure}}}}"
        f"{{\\par\\emph{{(Figure {tex_escape(eid)} not built.)}}\\par}}"
    ) + _monitor_tex(spec)

def _monitor_tex(spec) -> str:
    """The queue-occupancy figure of ``output.monitor``, if the spec asks for one."""
    from simcore.report.figures import MAX_QUEUE_LINES

    monitor = spec["output"].get("monitor")
    if not monitor:
        return ""
    eid = spec.id
    cell = spec.cell(monitor.get("cell", 0))
    where = ", ".join(f"{tex_escape(k)} = {tex_escape(str(v))}" for k, v in cell.values.items())
    caption = (
        f"Queues over time, {tex_escape(spec['title'])}: {tex_escape(monitor['why'])} One replication "
        f"(cell {cell.index}: {where}; replication {monitor.get('rep', 0)}) sampled every "
        f"{monitor['period']:g} for {monitor['time']:g} time units, as \\texttt{{simcore trace {tex_escape(eid)} "
        f"--monitor}} writes them; more than {MAX_QUEUE_LINES} queues are drawn as their mean and the band "
        "from the shortest to the longest."
    )
    return (f"\\IfFileExists{{figures/{eid}-monitor.pdf}}{{\\begin{{figure}}[htbp]\\centering"
            f"\\includegraphics[width=0.9\\linewidth]{{{eid}-monitor.pdf}}"
            f"\\caption{{{caption}}}\\label{{fig:{eid}-monitor}}\\end{{figure}}}}"
            f"{{\\par\\emph{{(Figure {tex_escape(eid)}-monitor not built.)}}\\par}}")

def experiments_tex(papers: list[str]) -> str:
    """Each paper's hand-written section if there is one, else a generated section."""
    lines = [HEADER.rstrip()]
    for paper in papers:
        title = tex_escape(PAPER_TITLES.get(paper, paper))
        lines.append(f"\\IfFileExists{{sections/{paper}.tex}}{{\\input{{sections/{paper}.tex}}}}"
                     f"{{\\section{{{title}}}\\label{{sec:{paper}}}\\input{{generated/paper-{paper}.tex}}}}")
    return "\n".join(lines) + "\n"
