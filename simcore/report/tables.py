"""LaTeX table fragments (booktabs): each published value beside the reproduced mean and its
confidence interval, for every kind of experiment."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd

from simcore.core.output import write_text
from simcore.experiments.papers import PAPER_TITLES
from simcore.report.data import (
    LongTable,
    cell_values,
    claim_rows,
    claim_statistic,
    fmt,
    fmt_ci,
    fmt_percent,
    fmt_published,
    grid_names,
    isnum,
    label_and_numbers,
    metric_label,
    pair_ratio,
    published_for,
    published_ratios,
    ragged,
    read_replications,
    read_summary,
    resize_to_width,
    split_cells,
    tex_escape,
    tex_id,
    verdict_tex,
)
from simcore.vocabulary.cells import where_matches

GROUP_LABEL_CHARS = 24   # a column group's label longer than this takes several lines


def make_table(spec, results_dir: Path, out: Path) -> None:
    """Write the LaTeX table of ``spec`` (from ``results_dir/<id>/``) to ``out`` (atomically)."""
    write_text(out, table_tex(spec, Path(results_dir)))


def table_tex(spec, results_dir: Path) -> str:
    output = spec["output"]
    kind, rows = output["kind"], output.get("rows")
    summary = read_summary(spec, results_dir)
    if kind == "scatter":
        body, note = _scatter(spec, results_dir, summary)
    elif kind == "readings":
        body, note = _readings(spec, results_dir)
    elif kind == "fit":
        body, note = _fit(spec, results_dir)
    elif kind == "judged":
        from simcore.report.judged import table
        body, note = table(spec, results_dir)
    elif kind in ("lines", "map") or rows == "cells":
        body, note = _cells(spec, results_dir, summary)
    elif rows == "pairs":
        body, note = _pairs(spec, results_dir)
    else:
        body, note = _metrics(spec, summary)
    return _wrap(spec, summary, body, note) + _traces(spec, results_dir)


def _traces(spec, results_dir: Path, width: int = 112) -> str:
    """The sample per-task traces of ``output.traces`` (results/<id>/traces.txt), wrapped, verbatim."""
    wanted = spec["output"].get("traces")
    path = results_dir / spec.id / "traces.txt"
    if not wanted:
        return ""
    if not path.exists():
        return f"\\par\\emph{{(Traces of {tex_escape(spec.id)} not built.)}}\\par\n"
    lines = []
    for line in path.read_text().splitlines():
        lines += textwrap.wrap(line, width, subsequent_indent="    ", break_on_hyphens=False) or [""]
    what = "the first tasks the balancer moved" if wanted.get("migrated_only") else "the first tasks"
    head = (f"\\paragraph{{Sample traces.}} \\texttt{{simcore trace {tex_escape(spec.id)}}}: {what} in "
            f"replication {wanted.get('rep', 0)}; \\texttt{{**...**}} marks segments beyond the zone of the "
            "task's home node.\n")
    return head + "{\\scriptsize\n\\begin{verbatim}\n" + "\n".join(lines) + "\n\\end{verbatim}}\n"


def _wrap(spec, summary, body: str | list[LongTable], note: str) -> str:
    """A tabular as a float, its note in the caption; LongTables (a table too long for one page) one
    after the other, the first captioned, the note after them."""
    n = int(summary["n"].max()) if summary is not None and len(summary) and isnum(summary["n"].max()) else None
    paper = PAPER_TITLES.get(spec["paper"], spec["paper"])
    level = f"{spec.confidence:.0%}".replace("%", r"\%")   # the escaped parts are not escaped twice
    caption = (f"{tex_escape(spec['title'])}. Reproduction of {tex_escape(spec['source'])} of "
               f"{tex_escape(paper)}. Published values beside the reproduced mean and its "
               f"{level} confidence interval [low, high]")
    caption += f" over {n} replications." if n else "."
    if isinstance(body, list):
        tables = [t.tex(caption, f"tab:{spec.id}") if not i else t.tex() for i, t in enumerate(body)]
        about = f"\\emph{{About Table~\\ref{{tab:{spec.id}}}:}} {note}"
        return "\n".join(tables) + (f"{{\\small\\raggedright\\noindent {about}\\par}}\n" if note else "")
    if note:
        caption += " " + note
    return ("\\begin{table}[htbp]\n\\centering\n\\small\n"
            f"\\caption{{{caption}}}\n\\label{{tab:{spec.id}}}\n"
            f"{resize_to_width(body)}"
            "\\end{table}\n")


def _missing(spec) -> tuple[str, str]:
    body = "\\begin{tabular}{l}\n\\toprule\nNo results yet.\\\\\n\\bottomrule\n\\end{tabular}"
    return body, f"(Results of {tex_escape(spec.id)} are missing.)"


def _tabular(colspec: str, header: list[str], rows: list[list[str]]) -> str:
    lines = [f"\\begin{{tabular}}{{{colspec}}}", "\\toprule", *header, "\\midrule"]
    lines += _rows(rows)
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines)


def _rows(rows: list[list[str]]) -> list[str]:
    """Each row's cells as one line of a tabular."""
    return [" & ".join(r) + " \\\\" for r in rows]


def _group_header(first: list[str], groups: list[tuple[str, list[str]]]) -> list[str]:
    """Header lines: blank over the ``first`` columns' names, then each group's label over its
    sub-columns with a rule under it."""
    top, rules, bottom, col = [""] * len(first), [], list(first), len(first) + 1
    for label, sub in groups:
        top.append(f"\\multicolumn{{{len(sub)}}}{{c}}{{{_stacked(label)}}}")
        rules.append(f"\\cmidrule(lr){{{col}-{col + len(sub) - 1}}}")
        bottom += sub
        col += len(sub)
    return [" & ".join(top) + " \\\\", " ".join(rules), " & ".join(bottom) + " \\\\"]


def _stacked(tex: str, chars: int = GROUP_LABEL_CHARS) -> str:
    """A header's text in centred lines of at most ``chars`` characters (broken at spaces)."""
    lines = textwrap.wrap(tex, chars, break_long_words=False, break_on_hyphens=False) or [""]
    return lines[0] if len(lines) == 1 else "\\begin{tabular}[b]{@{}c@{}}" + " \\\\ ".join(lines) + "\\end{tabular}"


def _lookup(summary: pd.DataFrame, policy: str, metric: str, values: dict | None = None):
    rows = summary[(summary.policy == policy) & (summary.metric == metric)]
    for k, v in (values or {}).items():
        rows = rows[rows[k] == v]
    return rows.iloc[0] if len(rows) else None


def _metrics(spec, summary) -> tuple[str, str]:
    """Per metric and policy the published and the reproduced value: one row per metric, or per
    policy where there are more policies than metrics (the narrower table); a 'paper' column only
    where the paper gives a value."""
    if summary is None:
        return _missing(spec)
    metrics = [m["name"] for m in spec.metrics]
    by_policy = len(spec.policies) > len(metrics)
    row_keys, col_keys = (spec.policies, metrics) if by_policy else (metrics, spec.policies)

    def pair(r, c):       # (published, reproduced) of row key r and column key c
        m, p = (c, r) if by_policy else (r, c)
        return published_for(spec, {}, p, m), _lookup(summary, p, m)

    with_pub = {c for c in col_keys if any(pair(r, c)[0] is not None for r in row_keys)}
    names = {**{m: tex_escape(metric_label(spec, m)) for m in metrics},
             **{p: tex_escape(spec.label(p)) for p in spec.policies}}
    rows = []
    for r in row_keys:
        row = [names[r]]
        for c in col_keys:
            pub, got = pair(r, c)
            row += ([fmt_published(pub)] if c in with_pub else []) + [
                fmt_ci(got["mean"], got["ci_low"], got["ci_high"]) if got is not None else "--"]
        rows.append(row)
    groups = [(names[c], ["paper", "reproduced"] if c in with_pub else ["reproduced"]) for c in col_keys]
    header = _group_header(["Policy" if by_policy else "Metric"], groups)
    return _tabular("l" + "r" * sum(len(sub) for _, sub in groups), header, rows), ""


def _readings(spec, results_dir: Path) -> tuple[list[LongTable] | str, str]:
    """One row per reading (the default cell first), one column per claim drawn: its statistic
    with the interval over its verdict; the note ranks the readings by influence for each claim."""
    from simcore.report.figures import _readings_claims
    from simcore.report.readings import ranked_changes, readings

    reps = read_replications(spec, results_dir)
    if reps is None:
        return _missing(spec)
    claims = _readings_claims(spec)
    per_claim = {c["id"]: {r["cell"]: r for r in readings(spec, reps, c)} for c in claims}
    rows = []
    for cell in spec.all_cells():
        name = spec.varied(cell)
        label = "default reading" if name is None else f"{tex_escape(name)} = {tex_escape(cell.values[name])}"
        stats = [per_claim[c["id"]].get(cell.index) for c in claims]
        if any(stats):
            rows.append([label] + [f"{fmt_ci(r['mean'], r['low'], r['high'])}\\par {verdict_tex(r['verdict'])}"
                                   if r else "--" for r in stats])
    header = [" & ".join(["Reading"] + [tex_id(c["id"]) for c in claims]) + " \\\\"]
    ranks = []
    for c in claims:
        ranked = ranked_changes(list(per_claim[c["id"]].values()))
        scale = "log " if c["kind"].startswith("ratio") else ""
        ranks.append(f"\\texttt{{{tex_escape(c['id'])}}}: " + (", ".join(
            f"{tex_escape(p)} {fmt_ci(r['change'], r['change_low'], r['change_high'], 3)}" for p, _, r in ranked)
            or "--") + f" ({scale}change)")
    where = []
    for c in claims:
        good = [r for r in per_claim[c["id"]].values() if r["verdict"] == "reproduced"]
        names = [
            "the default reading"
            if r["parameter"] is None
            else f"{tex_escape(r['parameter'])} = {tex_escape(r['value'])}"
            for r in good
        ]
        where.append(f"\\texttt{{{tex_escape(c['id'])}}} under " + (", ".join(names) if names else "no reading"))
    note = ("Each reading changes one assumption from the default cell; the verdict is the one the statistic "
            "would get in that cell alone. Influence, the largest change of the statistic from the default reading"
            + (" (with its paired interval: every reading sees the same workloads)" if spec.shares_seeds else "")
            + ", most influential first: " + "; ".join(ranks) + ". Reproduced: " + "; ".join(where) + ".")
    return [LongTable(label_and_numbers(len(claims)), header, _rows(rows))], note


def _fit(spec, results_dir: Path) -> tuple[str, str]:
    """One row per machine: published level, level at the stated reading, level predicted at the
    fitted value and its error, published and reproduced gain ratio there."""
    from simcore.report.fit import fit, gain_policy, published

    reps = read_replications(spec, results_dir)
    if reps is None:
        return _missing(spec)
    out, result = spec["output"], fit(spec, reps)
    rows = []
    for r in result["rows"]:
        iv, gain = r["level"], r["gain"]
        fitted_here = r["by"] == out["fit_on"]
        name = tex_escape(r["by"]) + (" (fitted)" if fitted_here else "")
        error = "fitted" if fitted_here else (fmt_percent_signed(r["error"]) if isnum(r["error"]) else "--")
        rows.append([name, fmt_published(r["published"]), fmt_ci(r["stated"].mean, r["stated"].low, r["stated"].high),
                     fmt_ci(iv.mean, iv.low, iv.high), error, fmt_published(published(spec, r["by"], spec.baseline)),
                     fmt_ci(gain.mean, gain.low, gain.high)])
    x_name, stated = tex_escape(out["x"]), spec.grid[out["x"]][0]
    ratio = f"{tex_escape(spec.label(gain_policy(spec)))} / {tex_escape(spec.label(spec.baseline))}"
    header = [f"{tex_escape(out['by'])} & \\multicolumn{{4}}{{c}}{{{tex_escape(spec.label(out['policy']))}: "
              f"{tex_escape(metric_label(spec, out['metric']))}}} & \\multicolumn{{2}}{{c}}{{{ratio}}} \\\\",
              "\\cmidrule(lr){2-5} \\cmidrule(lr){6-7}",
              f" & paper & {x_name} = {fmt(stated)} & at the fit & error & paper & at the fit \\\\"]
    x_iv = result["x"]
    fitted = (
        f"the fitted {x_name} is {fmt_ci(x_iv.mean, x_iv.low, x_iv.high, 3)}, where {tex_escape(out['fit_on'])}'s "
        f"level reaches its published {fmt(result['target'])}"
        if isnum(x_iv.mean)
        else f"{tex_escape(out['fit_on'])}'s level never reaches its published {fmt(result['target'])} within the "
             "grid, "
        "so nothing is fitted"
    )
    note = (f"The open quantity {x_name} is fitted on one machine and every machine's values are read off "
            f"its own curve there (linearly in log {x_name} between grid values; intervals by the delta method, "
            f"the fit's own uncertainty included): {fitted}. Error: the predicted level against the paper's.")
    return _tabular("l" + "r" * 6, header, rows), note


def fmt_percent_signed(share: float) -> str:
    """A relative error as a signed percentage with one decimal: '+12.3\\%', '\\ensuremath{-}4.0\\%'."""
    return f"{100 * share:+.1f}\\%".replace("-", "\\ensuremath{-}")


def _pairs(spec, results_dir: Path) -> tuple[str, str]:
    """One row per published ratio policy/than (and cell): published, reproduced with CI, error;
    then the same pairs in each metric the paper gives no ratio of (paper and error '--')."""
    reps = read_replications(spec, results_dir)
    if reps is None:
        return _missing(spec)
    published = published_ratios(spec)
    pairs = list(dict.fromkeys((e["policy"], e["than"]) for e in published))
    extra = [{"policy": p, "than": t, "metric": m["name"], "value": None}
             for m in spec.metrics if all(e["metric"] != m["name"] for e in published) for p, t in pairs]
    rows = []
    for values, cell_rows in split_cells(spec, reps):
        for e in published + extra:
            if not where_matches(e.get("where"), values):
                continue
            iv = pair_ratio(spec, cell_rows, e["policy"], e["than"], e["metric"])
            where = ", ".join(f"{tex_escape(k)} = {values[k]}" for k in grid_names(spec))
            name = f"{tex_escape(spec.label(e['policy']))} / {tex_escape(spec.label(e['than']))}"
            rel = (iv.mean - e["value"]) / e["value"] if iv is not None and e["value"] else None
            rows.append(([name] + ([where] if where else []) +
                         [tex_escape(metric_label(spec, e["metric"])), fmt_published(e["value"]),
                          fmt_ci(iv.mean, iv.low, iv.high) if iv else "--", fmt_percent(rel)]))
    first = ["Ratio"] + (["Cell"] if grid_names(spec) else []) + ["Metric"]
    header = [" & ".join(first + ["Paper", "Reproduced", "Rel.\\ error"]) + " \\\\"]
    colspec = "l" * len(first) + "rrr"
    return _tabular(colspec, header, rows), "Ratios are computed from paired replications (delta method)."


def _cells(spec, results_dir: Path, summary) -> tuple[str, str]:
    """One row per grid cell: per policy published (when given) and reproduced; then the
    published ratios with their reproduced counterpart."""
    if summary is None:
        return _missing(spec)
    metric = spec["output"].get("metric", spec.metrics[0]["name"])
    x = spec["output"].get("x") or grid_names(spec)[0]
    with_pub = [p for p in spec.policies
                if any(published_for(spec, cell_values(spec, r), p, metric) is not None
                       for _, r in summary.iterrows())]
    ratios = []
    for e in published_ratios(spec):
        key = (e["policy"], e["than"])
        if e["metric"] == metric and key not in ratios:
            ratios.append(key)
    reps = read_replications(spec, results_dir) if ratios else None
    reps_by_cell = {int(c): r for c, r in reps.groupby("cell")} if reps is not None else {}
    cells = summary[summary.metric == metric].drop_duplicates("cell").sort_values("cell")
    rows, notes = [], []
    for _, cell in cells.iterrows():
        values = cell_values(spec, cell)
        row = [str(values[k]) for k in grid_names(spec)]
        for p in spec.policies:
            r = _lookup(summary, p, metric, {"cell": cell["cell"]})
            if p in with_pub:
                row.append(fmt_published(published_for(spec, values, p, metric)))
            row.append(fmt_ci(r["mean"], r["ci_low"], r["ci_high"]) if r is not None else "--")
        for policy, than in ratios:
            pub = [e for e in published_ratios(spec) if (e["policy"], e["than"]) == (policy, than)
                   and e["metric"] == metric and e.get("where") and where_matches(e["where"], values)]
            row.append(fmt_published(pub[0]["value"]) if pub else "--")
            cell_reps = reps_by_cell.get(int(cell["cell"]))
            iv = pair_ratio(spec, cell_reps, policy, than, metric) if cell_reps is not None else None
            row.append(fmt_ci(iv.mean, iv.low, iv.high, 3) if iv else "--")
        rows.append(row)
    for e in published_ratios(spec):
        if e["metric"] == metric and not e.get("where") and grid_names(spec):
            notes.append(f"The paper gives {tex_escape(spec.label(e['policy']))}/"
                         f"{tex_escape(spec.label(e['than']))} = {fmt_published(e['value'])} "
                         f"({tex_escape(e['source'])}) without saying for which "
                         f"{tex_escape(x.replace('_', ' '))}; compare it with every row.")
    groups = [(tex_escape(spec.label(p)), ["paper", "reproduced"] if p in with_pub else ["reproduced"])
              for p in spec.policies]
    groups += [(f"{tex_escape(spec.label(policy))} / {tex_escape(spec.label(than))}", ["paper", "reproduced"])
               for policy, than in ratios]
    header = _group_header([tex_escape(k.replace("_", " ")) for k in grid_names(spec)], groups)
    colspec = "r" * (len(grid_names(spec)) + sum(len(sub) for _, sub in groups))
    label = tex_escape(metric_label(spec, metric))
    note = f"Values: {label}." + (" " + " ".join(notes) if notes else "")
    return _tabular(colspec, header, rows), note


def _scatter(spec, results_dir: Path, summary) -> tuple[str, str]:
    """Per-policy means, the share of executions below the diagonal, and the claims with verdicts."""
    out = spec["output"]
    px, py = out["x"], out["y"]
    metric = out.get("metric", spec.metrics[0]["name"])
    rows = []
    if summary is not None:
        for p in (px, py):
            r = _lookup(summary, p, metric)
            if r is not None:
                rows.append([f"Mean, {tex_escape(spec.label(p))}", fmt_ci(r["mean"], r["ci_low"], r["ci_high"]), ""])
    reps = read_replications(spec, results_dir)
    if reps is not None:
        table = reps[reps.policy.isin([px, py])].pivot_table(index=["cell", "rep"], columns="policy",
                                                             values=metric).dropna()
        if len(table):
            iv = pair_ratio(spec, reps, py, px, metric)
            if iv is not None:
                rows.append([f"Ratio of means, {tex_escape(spec.label(py))} / {tex_escape(spec.label(px))}",
                             fmt_ci(iv.mean, iv.low, iv.high), ""])
            share = float((table[py] < table[px]).mean())
            rows.append([f"Share of executions below x = y (all {len(table)})", f"{100 * share:.1f}\\%", ""])
    for c, r in claim_rows(spec, results_dir):
        rows.append([f"Claim: {tex_escape(c['text'])}", claim_statistic(r) if r else "--",
                     verdict_tex(r.get("verdict") if r else None)])
    if not rows:
        return _missing(spec)
    header = ["Quantity & Reproduced [CI] & Verdict \\\\"]
    body = _tabular("@{}" + ragged(0.42) + ragged(0.36, flush="raggedleft") + ragged(0.17) + "@{}", header, rows)
    return body, (f"Metric: {tex_escape(metric_label(spec, metric))}; x = {tex_escape(spec.label(px))}, "
                  f"y = {tex_escape(spec.label(py))}.")
