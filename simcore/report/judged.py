"""Judged readings (``judges``): a paper's claims under every reading of what its simulator did.

An experiment that judges another (``output.kind: judged``) holds one claims.csv row per judged
claim and reading (:func:`simcore.stats.claims.evaluate_readings`). This module draws them (each
judged statistic against the load, one line per reading, the published points over them, and
the hierarchy's effect on a mechanism diagnostic), tabulates them with their support and the
diagnostics, and says how a claim stands under its paper's best supported reading set
(:mod:`simcore.report.reading_sets`), for the scorecard.
"""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

import pandas as pd

from simcore.report.data import (
    LongTable,
    claim_statistic,
    fmt,
    isnum,
    label_and_numbers,
    metric_label,
    ragged,
    read_claims,
    read_summary,
    statistic_ci,
    tex_escape,
    tex_id,
    verdict_tex,
)
from simcore.report.reading_sets import supported
from simcore.stats.claims import reading_text

DIAGNOSTICS = ("mean_migrations", "mean_migration_level", "home_return_share", "share_level_0", "active_pushes",
               "lb_attempts_per_s")


def judged_rows(specs, results_dir: Path) -> dict[tuple[str, str], list[dict]]:
    """(judged experiment, claim id) -> the rows of every experiment that judges it, one per reading."""
    out: dict[tuple[str, str], list[dict]] = {}
    for spec in specs:
        if "judges" not in spec.data:
            continue
        claims = read_claims(spec, results_dir)
        for row in [] if claims is None else claims.to_dict("records"):
            out.setdefault((row["judged"], row["judged_claim"]), []).append({**row, "readings_experiment": spec.id})
    return out


def rows_of_reading(frame: pd.DataFrame, combination: dict) -> pd.DataFrame:
    """The rows of ``frame`` (a summary or replications table) in the cells of one reading
    (``Spec.reading_combinations``: parameter -> entry with its value)."""
    for name, entry in combination.items():
        frame = frame[_equals(frame[name], entry["value"])]
    return frame


def _equals(column: pd.Series, value) -> pd.Series:
    """Where ``column`` holds ``value``: numbers as numbers (a CSV reads 5.0 back as 5), anything
    else (text, booleans) as its text."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return column.astype(float) == float(value)
    return column.astype(str) == str(value)


DIRECTION_ONLY = ("smaller than published", "larger than published")


def standing(default_verdict, under_set: str | None, magnitude: bool = True, direction: bool = True) -> str:
    """Under the default reading 'reproduced with magnitude' (reproduced, with a published effect)
    or 'reproduced direction' (a direction claim reproduced); 'calibrated'; 'explained' (not by
    default, but under its paper's best supported reading set, ``under_set``: the claim's verdict
    there, None when no experiment judges it); 'other size' (the published direction with a decided
    effect of practical size but another magnitude; never for a claim of a value, ``direction``
    False, whose sign says nothing), or 'not reproduced'."""
    if default_verdict == "calibrated":
        return default_verdict
    if default_verdict == "reproduced":
        return "reproduced with magnitude" if magnitude else "reproduced direction"
    if under_set == "reproduced":
        return "explained"
    return "other size" if default_verdict in DIRECTION_ONLY and direction else "not reproduced"


def reading_tex(row: dict) -> str:
    """A reading's values, short: 'locality scope lifetime, active balance False, ...', breakable
    after a value's hyphens (narrow table columns)."""
    parts = [p.strip().partition(" = ") for p in str(row["reading"]).split(";")]
    return ", ".join(tex_escape(f"{name.replace('_', ' ')} {value}").replace("-", r"-\allowbreak{}")
                     for name, _, value in parts)


# --------------------------------------------------------------------------- figure

def measures_home(spec) -> bool:
    """Whether the middle panel is the home-node CPU share (a model that measures it), else the
    policy's own level."""
    return "share_level_0" in spec.model.METRICS


def draw(spec, results_dir: Path, axes) -> None:
    """Left: the first judged claim that compares two policies (policy / baseline on its metric;
    else the first claim's own value) against output.x, one line per reading (solid: supported
    by the text; dotted: not), the published numbers as black circles; without output.x (a
    judged experiment with no grid), one point per reading. Middle: the same policy's paired
    difference in home-node CPU share (its own share when it is the baseline), or, for a model
    that measures no home node (the cluster), the policy's own level of the claim's metric.
    Right: the legend."""
    summary = read_summary(spec, results_dir)
    if summary is None:
        raise FileNotFoundError(f"{results_dir}/{spec.id}/summary.csv is missing: aggregate {spec.id} first.")
    x = spec["output"].get("x")
    claims = spec.data["judged_claims"]
    claim = next((c for c in claims if c.get("than")), claims[0])
    policy, metric, col = claim["policy"], claim["metric"], "ratio" if claim.get("than") else "mean"
    home = "diff" if policy != spec.baseline else "mean"      # the baseline's own share: no difference to draw
    homed = measures_home(spec)
    second, second_col = ("share_level_0", home) if homed else (metric, "mean")
    names = list(spec.data["readings"])
    colours = [f"C{i}" for i in range(10)]
    for k, combo in enumerate(spec.reading_combinations()):
        rows = rows_of_reading(summary[summary.policy == policy], combo)
        text_supports = all(e["support"] for e in combo.values())
        label = ", ".join(f"{entry['value']}" for entry in combo.values())
        style = {
            "color": colours[k % 10],
            "linestyle": "-" if text_supports else ":",
            "linewidth": 1.6 if k == 0 else 0.9,
        }
        for ax, m, c in ((axes[0], metric, col), (axes[1], second, second_col)):
            part = rows[rows.metric == m].sort_values(x) if x else rows[rows.metric == m]
            if part.empty:
                continue
            mean, low, high = _band(part, c)
            if x is None:      # one point per reading, its interval as an error bar
                ax.errorbar([k], mean, yerr=[mean - low, high - mean], marker="o", markersize=3, color=style["color"],
                            linestyle="none", mfc=style["color"] if text_supports else "none",
                            label=label if ax is axes[0] else None)
                continue
            xs = part[x].to_numpy(float)
            ax.plot(xs, mean, label=label if ax is axes[0] else None, **style)
            if k == 0:
                ax.fill_between(xs, low, high, color=style["color"], alpha=0.2, linewidth=0)
    pub = _published_ratios(spec, policy, metric, x) if col == "ratio" else _published_values(spec, policy, metric, x)
    if pub:
        axes[0].plot(*zip(*pub), linestyle="none", marker="o", markersize=4, markerfacecolor="none",
                     markeredgecolor="black", label="paper")
    if col == "ratio":
        axes[0].axhline(1.0, color="0.3", linewidth=0.6, linestyle="--")
    name = metric_label(spec, metric).split(" (")[0]
    axes[0].set_ylabel(f"{name}, ratio" if col == "ratio" else name)
    over = f" /\n{spec.label(spec.baseline)}" if col == "ratio" else ""
    axes[0].set_title(f"{spec.label(policy)}{over}", fontsize=8)   # two lines: panels side by side
    if homed and home == "diff":
        axes[1].axhline(0.0, color="0.3", linewidth=0.6, linestyle="--")
    axes[1].set_ylabel("home-node CPU share" + (", difference" if home == "diff" else "") if homed else name)
    axes[1].set_title(f"{spec.label(policy)} -\n{spec.label(spec.baseline)}" if homed and home == "diff"
                      else spec.label(policy), fontsize=8)
    for ax in axes[:2]:
        ax.set_xlabel(spec["output"].get("xlabel", x.replace("_", " ")) if x else "reading (see the legend)")
        if x is None:
            ax.set_xticks([])
        ax.grid(True, linewidth=0.3, alpha=0.5)
    handles, labels = axes[0].get_legend_handles_labels()
    axes[2].axis("off")
    axes[2].legend(handles, labels, loc="center left", fontsize=6, title="reading:\n" + "\n".join(
        n.replace("_", " ") for n in names), title_fontsize=6)


def _band(part: pd.DataFrame, col: str):
    """(mean, low, high) arrays of a summary's ``col`` ('ratio', 'diff' or 'mean': the value's own)."""
    low, high = ("ci_low", "ci_high") if col == "mean" else (f"{col}_low", f"{col}_high")
    return (part[f"{col}_mean" if col != "mean" else "mean"].to_numpy(float), part[low].to_numpy(float),
            part[high].to_numpy(float))


def _published_values(spec, policy: str, metric: str, x: str | None) -> list[tuple[float, float]]:
    """(x, published value) of one policy's metric (x = 0, the first reading's place, with no grid)."""
    return sorted((float(e["where"][x]) if x else 0.0, float(e["value"])) for e in spec.data.get("published") or []
                  if "than" not in e and e["metric"] == metric and e.get("policy", spec.baseline) == policy
                  and (x is None or x in (e.get("where") or {})))


def _published_ratios(spec, policy: str, baseline_metric: str, x: str | None) -> list[tuple[float, float]]:
    """(x, published policy/baseline) where the paper gives both values (x = 0 with no grid)."""
    values: dict = {}
    for e in spec.data.get("published") or []:
        if "than" in e or e["metric"] != baseline_metric or (x and x not in (e.get("where") or {})):
            continue
        values.setdefault(e["where"][x] if x else 0, {})[e.get("policy", spec.baseline)] = float(e["value"])
    return sorted((float(k), v[policy] / v[spec.baseline]) for k, v in values.items()
                  if policy in v and spec.baseline in v and v[spec.baseline])


# --------------------------------------------------------------------------- table

def table(spec, results_dir: Path):
    """Every judged claim under every reading (a heading row per reading, saying whether the text
    supports it): its statistic and verdict; then the diagnostics per reading and policy at the
    lightest and the heaviest load. Returns ([claims, diagnostics] as LongTables, note), or a
    tabular and a note when there are no results."""
    claims, summary = read_claims(spec, results_dir), read_summary(spec, results_dir)
    if claims is None or summary is None:
        body = "\\begin{tabular}{l}\n\\toprule\nNo results yet.\\\\\n\\bottomrule\n\\end{tabular}"
        return body, f"(Results of {tex_escape(spec.id)} are missing.)"
    rows = []
    for k, (_, group) in enumerate(groupby(claims.to_dict("records"), key=lambda r: r["reading"])):
        group = list(group)
        rows.append(_reading_row(3, k, group[0]["reading"], "supported by the paper's text" if supported(group[0])
                                 else "not supported by the paper's text"))
        rows += [f"{tex_id(r['judged_claim'])} & {claim_statistic(r)} & {verdict_tex(r.get('verdict'))} \\\\"
                 for r in group]
    judged = LongTable(
        "@{}" + ragged(0.25, 0.5, 0.2) + "@{}", ["Claim & Statistic, estimate [CI] & Verdict \\\\"], rows
    )
    supports = {
        f"{name} = {e['value']}": e["support"] for name, entries in spec.data["readings"].items() for e in entries
    }
    said = "; ".join(
        f"{tex_escape(k)}: {tex_escape(v) if v else 'no sentence of the paper'}" for k, v in supports.items()
    )
    note = (
        f"Each claim of \\texttt{{{tex_escape(spec.data['judges'])}}} judged in the cells of each reading, "
        "as it is judged there (the first reading is that experiment's own); a reading is supported by the text "
        f"when the paper supports every value of it ({said}). After the claims, the mechanism's diagnostics (mean "
        "over the replications) at the lightest and the heaviest load (the one load of an experiment without a grid)."
    )
    return [judged, _diagnostics(spec, summary)], note


def _reading_row(columns: int, k: int, reading: str, more: str = "") -> str:
    """A row across the table that heads reading k's rows: 'Reading k: its values (more)'."""
    what = f"\\emph{{Reading {k + 1}:}} {reading_tex({'reading': reading})}" + (f" ({more})" if more else "")
    return ("\\midrule\n" if k else "") + f"\\multicolumn{{{columns}}}{{@{{}}p{{\\linewidth}}@{{}}}}{{{what}}} \\\\*"


def _diagnostics(spec, summary: pd.DataFrame) -> LongTable:
    """Per reading (a heading row), load (the lightest and the heaviest) and policy, the mean of
    each diagnostic the spec measures (``output.diagnostics``, else DIAGNOSTICS)."""
    x = spec["output"].get("x")
    metrics = [m for m in spec["output"].get("diagnostics", DIAGNOSTICS) if m in {d["name"] for d in spec.metrics}]
    loads = sorted(summary[x].unique()) if x else [None]
    loads = [loads[0], loads[-1]] if len(loads) > 1 else loads
    columns = bool(x) + 1 + len(metrics)
    rows = []
    for k, combo in enumerate(spec.reading_combinations()):
        part = rows_of_reading(summary, combo)
        rows.append(_reading_row(columns, k, reading_text(combo)))
        for load in loads:
            for policy in spec.policies:
                here = part[((part[x] == load) if x else True) & (part.policy == policy)]
                cells = []
                for m in metrics:
                    v = here[here.metric == m]["mean"]
                    cells.append(fmt(v.iloc[0], 3) if len(v) and isnum(v.iloc[0]) else "--")
                rows.append(" & ".join([*([fmt(load)] if x else []), tex_escape(spec.label(policy)), *cells]) + " \\\\")
    header = " & ".join([*([tex_escape(x.replace("_", " "))] if x else []), "Policy",
                         *(tex_escape(metric_label(spec, m)) for m in metrics)]) + " \\\\"
    return LongTable(label_and_numbers(len(metrics), lead_number=bool(x)), [header], rows)


def summary_note(row: dict | None, unit: tuple[str, float] | None = None) -> str:
    """The scorecard's cell for one claim: its verdict and statistic (in ``unit``,
    :func:`simcore.report.data.statistic_unit`) under its paper's best supported set (``row``: the
    claim's row there, None when the paper has no supported set)."""
    if row is None:
        return "no reading set the text supports"
    name, factor = unit or ("", 1.0)
    return f"{verdict_tex(row.get('verdict'))} ({statistic_ci(row, factor)}{' ' + name if name else ''})"
