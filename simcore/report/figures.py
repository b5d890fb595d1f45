"""Figures of experiments (PDF): reproduced curves with intervals and the published points
over them (``lines``), one point per replication against x = y (``scatter``), a claim's
statistic under each reading of the open assumptions (``readings``, ``map``), a paper's claims
under every reading of its simulator (``judged``, :mod:`simcore.report.judged`), or an open
quantity fitted on one machine and the others' levels read off at it (``fit``)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from simcore.core.output import atomic_path  # noqa: E402
from simcore.report.data import (  # noqa: E402
    cell_values,
    has_gain_panel,
    metric_label,
    published_for,
    read_replications,
    read_summary,
)

SIZE = (3.4, 2.6)
WIDE = (6.8, 2.6)   # lines with a gain panel beside the curves
PAGE_HEIGHT = 8.4   # inches: the tallest figure a report page holds at full width with its caption
STYLE = {
    "font.size": 8, "axes.labelsize": 8, "axes.titlesize": 8.5, "legend.fontsize": 7,
    "xtick.labelsize": 7.5, "ytick.labelsize": 7.5, "lines.linewidth": 1.2, "lines.markersize": 3.5,
    "axes.linewidth": 0.6, "legend.frameon": False, "pdf.fonttype": 42, "font.family": "DejaVu Sans",
    "svg.hashsalt": "simcore", "path.simplify": False,
}
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
DASHES = ["-", "--", ":", "-."]
PDF_METADATA = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": "simcore"}


def make_figure(spec, results_dir: Path, out: Path) -> None:
    """Draw the figure of ``spec`` from ``results_dir/<id>/`` into the PDF ``out`` (atomically)."""
    kind = spec["output"]["kind"]
    if kind == "table":
        raise ValueError(f"{spec.path}: experiment '{spec.id}' is a table (output.kind = table); it has no figure.")
    with plt.rc_context(STYLE):
        wide = has_gain_panel(spec)
        if kind == "readings":
            fig, axes = _readings_axes(spec)
        elif kind == "fit":
            fig, axes = plt.subplots(1, 2, figsize=WIDE, squeeze=False)
        elif kind == "judged":   # two panels and the legend's
            fig, axes = plt.subplots(1, 3, figsize=(WIDE[0], WIDE[1] * 1.15), squeeze=False,
                                     gridspec_kw={"width_ratios": [1, 1, 0.8]})
        elif kind == "map":
            n = max(len(_readings_claims(spec)), 1)
            fig, axes = plt.subplots(n, 1, figsize=(SIZE[0] * 1.6, n * SIZE[1] * 1.1), squeeze=False)
        else:
            fig, axes = plt.subplots(1, 2 if wide else 1, figsize=WIDE if wide else SIZE, squeeze=False)
        ax = axes[0][0]
        try:
            if kind in ("readings", "map"):
                (_readings if kind == "readings" else _map)(spec, Path(results_dir), [row[0] for row in axes])
                fig.tight_layout(pad=0.3)
                fig.subplots_adjust(left=max(fig.subplotpars.left, 0.3))   # room for 'parameter = value'
                with atomic_path(out) as tmp:
                    fig.savefig(tmp, format="pdf", metadata=PDF_METADATA)
                return
            elif kind == "lines":
                _lines(spec, Path(results_dir), ax)
                if wide:
                    _gain(spec, Path(results_dir), axes[0][1])
            elif kind == "scatter":
                _scatter(spec, Path(results_dir), ax)
            elif kind == "fit":
                _fit(spec, Path(results_dir), axes[0])
            elif kind == "judged":
                from simcore.report.judged import draw
                draw(spec, Path(results_dir), axes[0])
            else:
                raise ValueError(f"{spec.path}: key 'output.kind': unknown figure kind '{kind}'.")
            fig.tight_layout(pad=0.3)
            with atomic_path(out) as tmp:
                fig.savefig(tmp, format="pdf", metadata=PDF_METADATA)
        finally:
            plt.close(fig)


def _published_gain(spec, values: dict, policy: str, metric: str):
    """The paper's gain of ``policy`` over the baseline in this cell, %: from its ratio, else its values."""
    for e in spec.data.get("published") or []:
        if ("than" in e and (e["policy"], e["than"], e["metric"]) == (policy, spec.baseline, metric)
                and all(values.get(k) == v for k, v in (e.get("where") or {}).items())):
            return 100.0 * (1.0 - float(e["value"]))
    mine, base = (published_for(spec, values, p, metric) for p in (policy, spec.baseline))
    return 100.0 * (1.0 - mine / base) if mine is not None and base else None


def published_points(spec, rows, policy: str, metric: str, gain: bool = False) -> list[tuple[float, float]]:
    """(x, value) where the paper gives one in the cells of a line's summary ``rows``: the policy's
    published value, or with ``gain`` its published gain over the baseline (%)."""
    value = _published_gain if gain else published_for
    pub = [(r[spec["output"]["x"]], value(spec, cell_values(spec, r), policy, metric)) for _, r in rows.iterrows()]
    return [(a, b) for a, b in pub if b is not None]


def shows_published(spec, summary, gain: bool = False) -> bool:
    """Whether a line figure draws any published point (with ``gain``: on its gain panel)."""
    metric = spec["output"].get("metric", spec.metrics[0]["name"])
    rows = summary[summary.metric == metric] if summary is not None else None
    return rows is not None and any(published_points(spec, rows[rows.policy == p], p, metric, gain)
                                    for p in spec.policies if not (gain and p == spec.baseline))


def _gain(spec, results_dir: Path, ax) -> None:
    """Gain of each policy over the baseline, 100 (1 - policy/baseline) %, with its paired interval."""
    out = spec["output"]
    x, metric = out["x"], out.get("metric", spec.metrics[0]["name"])
    summary = _need(read_summary(spec, results_dir), "summary.csv", spec, results_dir)
    summary = summary[summary.metric == metric]
    for i, policy in enumerate(spec.policies):
        rows = summary[summary.policy == policy].sort_values(x)
        if policy == spec.baseline or rows.empty:
            continue
        colour, marker = COLOURS[i % len(COLOURS)], MARKERS[i % len(MARKERS)]
        xs = rows[x].to_numpy(float)
        gain = 100.0 * (1.0 - rows["ratio_mean"].to_numpy(float))
        low, high = (
            100.0 * (1.0 - rows["ratio_high"].to_numpy(float)),
            100.0 * (1.0 - rows["ratio_low"].to_numpy(float)),
        )
        ax.plot(xs, gain, color=colour, marker=marker, markersize=2.5, label=spec.label(policy), zorder=3)
        ok = np.isfinite(low) & np.isfinite(high)
        if ok.any():
            ax.fill_between(xs[ok], low[ok], high[ok], color=colour, alpha=0.2, linewidth=0, zorder=2)
        pub = published_points(spec, rows, policy, metric, gain=True)
        if pub:
            ax.plot(*zip(*pub), linestyle="none", marker=marker, markersize=5, markerfacecolor="none",
                    markeredgecolor=colour, markeredgewidth=0.9, zorder=4)
    ax.axhline(0.0, color="0.3", linewidth=0.6)
    ax.set_xlabel(out.get("xlabel", x.replace("_", " ")))
    ax.set_ylabel("gain over the baseline (%)")
    ax.grid(True, linewidth=0.3, alpha=0.5)
    ax.legend(loc="best", handlelength=1.6, title=f"over {spec.label(spec.baseline)}", title_fontsize=7)


def _readings_claims(spec) -> list[dict]:
    """The statistics a readings figure draws (output.statistics, written like claims), else the claims."""
    return list(spec["output"].get("statistics") or spec.data.get("claims") or [])


def _readings_axes(spec):
    """One panel per claim, each as tall as the cells it lists, the whole no taller than a page."""
    n = max(len(_readings_claims(spec)), 1)
    cells = len(spec.all_cells())
    return plt.subplots(n, 1, figsize=(SIZE[0] * 2, min(0.8 + n * (0.6 + 0.16 * cells), PAGE_HEIGHT)), squeeze=False)


def _readings(spec, results_dir: Path, axes) -> None:
    """Per claim: its statistic in the default cell and in each cell that changes one reading,
    parameters in order of influence (largest change first), with the threshold (dashed) and the
    published effect and its equivalence margin (line and band)."""
    from simcore.report.readings import influence, published_band, readings

    reps = _need(read_replications(spec, results_dir), "replications.csv", spec, results_dir)
    for ax, claim in zip(axes, _readings_claims(spec)):
        rows = readings(spec, reps, claim)
        order = {name: i for i, (name, _) in enumerate(influence(rows))}
        rows.sort(key=lambda r: (-1 if r["parameter"] is None else order.get(r["parameter"], len(order)), r["cell"]))
        ys = np.arange(len(rows))[::-1]
        means = np.array([r["mean"] for r in rows], float)
        low, high = np.array([r["low"] for r in rows], float), np.array([r["high"] for r in rows], float)
        ok = np.isfinite(low) & np.isfinite(high)
        colours = [
            "0.2" if r["parameter"] is None else COLOURS[order.get(r["parameter"], 0) % len(COLOURS)] for r in rows
        ]
        ax.scatter(means, ys, c=colours, s=10, zorder=3)
        ax.errorbar(means[ok], ys[ok], xerr=[means[ok] - low[ok], high[ok] - means[ok]], fmt="none", ecolor="0.4",
                    elinewidth=0.7, capsize=1.5, zorder=2)
        ax.set_yticks(ys, ["default reading" if r["parameter"] is None else f"{r['parameter']} = {r['value']}"
                           for r in rows])
        threshold = claim.get("threshold", 1.0 if claim["kind"].startswith("ratio") else 0.0)
        ax.axvline(threshold, color="0.5", linestyle="--", linewidth=0.7, label="no effect")
        band = published_band(claim)
        if band:
            ax.axvspan(band[0], band[2], color=COLOURS[1], alpha=0.12, linewidth=0)
            ax.axvline(band[1], color=COLOURS[1], linewidth=0.9, label="published (band: margin)")
        lo_x, hi_x = ax.get_xlim()
        if claim["kind"].startswith("ratio") and lo_x > 0 and hi_x / lo_x > 2:
            ax.set_xscale("log")   # ratios spread over a wide range: their analysis scale
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.25, 1.6, 2.0, 2.5, 3.2, 4.0, 5.0, 6.3, 8.0)))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(claim["id"], loc="right")
        ax.set_xlabel(_statistic_label(spec, claim))
        ax.grid(True, axis="x", linewidth=0.3, alpha=0.5)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, handlelength=1.6, borderaxespad=0.2)


MAP_TITLE_CHARS = 60   # a map's title lines: what fits its width at 7.5 pt
SHORT = {
    "reproduced": "reproduced",
    "smaller than published": "smaller",
    "larger than published": "larger",
    "absent": "absent",
    "negligible": "negligible",
    "not specific": "not specific",
    "contradicted": "contradicted",
    "inconclusive": "inconclusive",
}


def _map(spec, results_dir: Path, axes) -> None:
    """Per statistic: a map over the grid parameters output.x (columns) and output.y (rows); each
    square shows the statistic and the verdict it would get there, coloured by its distance from
    the published effect on the analysis scale (white: the published effect, the margin its edge)."""
    from simcore.report.readings import analysis_scale, cell_table, published_band

    out = spec["output"]
    reps = _need(read_replications(spec, results_dir), "replications.csv", spec, results_dir)
    xs, ys = list(spec.grid[out["x"]]), list(spec.grid[out["y"]])
    for ax, claim in zip(axes, _readings_claims(spec)):
        grid = np.full((len(ys), len(xs)), np.nan)
        labels = {}
        for r in cell_table(spec, reps, claim):
            i, j = ys.index(r["values"][out["y"]]), xs.index(r["values"][out["x"]])
            grid[i, j] = r["mean"]
            labels[(i, j)] = f"{r['mean']:.3g}\n{SHORT.get(r['verdict'], r['verdict'])}"
        band = published_band(claim)
        scale = analysis_scale(claim["kind"])
        colour = np.full(grid.shape, np.nan)
        if band is not None:
            margin = abs(scale(band[2]) - scale(band[1])) or 1.0
            ok = np.isfinite(grid) & (grid > 0 if claim["kind"].startswith("ratio") else np.isfinite(grid))
            colour[ok] = np.clip([(scale(v) - scale(band[1])) / (4 * margin) for v in grid[ok]], -1, 1)
        ax.imshow(colour, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        for (i, j), text in labels.items():
            dark = np.isfinite(colour[i, j]) and abs(colour[i, j]) > 0.6
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black")
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.set_yticks(range(len(ys)), [str(v) for v in ys])
        ax.set_xlabel(out.get("xlabel", out["x"].replace("_", " ")))
        ax.set_ylabel(out.get("ylabel", out["y"].replace("_", " ")))
        published = [f"published {band[1]:g} (white; margin {band[0]:.3g}-{band[2]:.3g})"] if band else []
        title = textwrap.wrap(f"{claim['id']}: {_statistic_label(spec, claim)}", MAP_TITLE_CHARS) + published
        ax.set_title("\n".join(title), loc="left", fontsize=7.5)


def _statistic_label(spec, claim: dict) -> str:
    """'mean turnaround: conservative, soft / Linux' (a ratio) or '... - ...' (a difference)."""
    metric = claim["metric"].replace("_", " ")
    if claim["kind"] == "value":
        return f"{metric}: {spec.label(claim['policy'])}"
    op = " / " if claim["kind"].startswith("ratio") else " - "
    return f"{metric}: {spec.label(claim['policy'])}{op}{spec.label(claim.get('than', spec.baseline))}"


def _fit(spec, results_dir: Path, axes) -> None:
    """Left: each machine's level against the open quantity (log x), its published level dashed;
    right: the gain policy's ratio to the baseline, the published ratio dotted. The fitted value
    (from the first machine's published level) and its interval: the vertical line and band."""
    from simcore.report.fit import curves, fit, gain_policy, level_of, published, ratio_of

    out = spec["output"]
    reps = _need(read_replications(spec, results_dir), "replications.csv", spec, results_dir)
    result = fit(spec, reps)
    level = spec.confidence
    panels = [(axes[0], curves(spec, reps, level_of(spec)), lambda name: published(spec, name)),
              (axes[1], curves(spec, reps, ratio_of(spec)), lambda name: published(spec, name, spec.baseline))]
    names = [n for n in spec.grid[out["by"]] if n in panels[0][1]]
    for ax, per_machine, paper in panels:
        for i, name in enumerate(names):
            xs = np.array([x for x, _ in per_machine[name]])
            ivs = [e.interval(level) for _, e in per_machine[name]]
            means = np.array([iv.mean for iv in ivs])
            err = np.array([[iv.mean - iv.low for iv in ivs], [iv.high - iv.mean for iv in ivs]])
            colour = COLOURS[i % len(COLOURS)]
            ax.errorbar(xs, means, yerr=np.nan_to_num(err), color=colour, marker=MARKERS[i % len(MARKERS)],
                        capsize=1.5, label=str(name) + (" (fitted)" if name == out["fit_on"] else ""))
            if paper(name) is not None:
                ax.axhline(paper(name), color=colour, linestyle="--" if ax is axes[0] else ":", linewidth=0.8)
        x_iv = result["x"]
        if np.isfinite(x_iv.mean):
            ax.axvline(x_iv.mean, color="0.3", linewidth=0.8)
            if np.isfinite(x_iv.low):
                ax.axvspan(x_iv.low, x_iv.high, color="0.5", alpha=0.15, linewidth=0)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.8, 2.5, 3.5, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(out.get("xlabel", out["x"]))
        ax.grid(True, linewidth=0.3, alpha=0.5)
    axes[0].set_ylabel(out.get("ylabel", out["metric"]))
    axes[1].set_ylabel(f"{spec.label(gain_policy(spec))} / {spec.label(spec.baseline)}")
    axes[1].axhline(1.0, color="0.5", linewidth=0.6)
    axes[0].legend(loc="best")


def _need(frame, what: str, spec, results_dir: Path):
    if frame is None:
        raise FileNotFoundError(
            f"{Path(results_dir) / spec.id}: no {what} for experiment '{spec.id}' (run aggregate first)."
        )
    return frame


def _line_series(spec, summary):
    """(policy, legend label, summary rows, (colour, marker, dash indices)) of each line: one per
    policy, or with ``series`` one per policy and value of that grid parameter (the policy named
    only if there are several, then coloured by policy and styled by value)."""
    series = spec["output"].get("series")
    if not series:
        return [(p, spec.label(p), summary[summary.policy == p], (i, i, 0)) for i, p in enumerate(spec.policies)]
    text = spec["output"].get("series_label", f"{series.replace('_', ' ')} = {{}}")
    several = len(spec.policies) > 1
    out = []
    for i, p in enumerate(spec.policies):
        for j, value in enumerate(spec.grid[series]):
            label = text.format(f"{value:g}" if isinstance(value, float) else value)
            if several:
                label = f"{spec.label(p)}, {label}"
            style = (i, j, j) if several else (len(out), len(out), 0)
            out.append((p, label, summary[(summary.policy == p) & (summary[series] == value)], style))
    return out


def _log_ticks(ax, values: list[float]) -> None:
    """Ticks at the grid's values on a log x axis, labelled where they do not crowd (a factor 1.3 apart)."""
    ax.set_xticks(values)
    labelled, last = [], None
    for v in values:
        show = last is None or v >= 1.3 * last
        labelled.append(f"{v:g}" if show else "")
        last = v if show else last
    ax.set_xticklabels(labelled)
    ax.xaxis.set_minor_formatter(NullFormatter())


def _lines(spec, results_dir: Path, ax) -> None:
    out = spec["output"]
    x, metric = out["x"], out.get("metric", spec.metrics[0]["name"])
    summary = _need(read_summary(spec, results_dir), "summary.csv", spec, results_dir)
    summary = summary[summary.metric == metric]
    handles = []
    any_published = False
    for policy, label, rows, (c, m, d) in _line_series(spec, summary):
        rows = rows.sort_values(x)
        if rows.empty:
            continue
        colour, marker, dashes = COLOURS[c % len(COLOURS)], MARKERS[m % len(MARKERS)], DASHES[d % len(DASHES)]
        xs = rows[x].to_numpy(float)
        mean = rows["mean"].to_numpy(float)
        low, high = rows["ci_low"].to_numpy(float), rows["ci_high"].to_numpy(float)
        ok = np.isfinite(low) & np.isfinite(high)
        (line,) = ax.plot(xs, mean, color=colour, marker=marker, linestyle=dashes, markersize=2.5, label=label,
                          zorder=3)
        handles.append(line)
        if ok.any():
            ax.fill_between(xs[ok], low[ok], high[ok], color=colour, alpha=0.2, linewidth=0, zorder=2)
            ax.errorbar(xs[ok], mean[ok], yerr=[mean[ok] - low[ok], high[ok] - mean[ok]], fmt="none",
                        ecolor=colour, elinewidth=0.6, capsize=1.5, zorder=3)
        pub = published_points(spec, rows, policy, metric)
        if pub:
            any_published = True
            px, py = zip(*pub)
            ax.plot(px, py, linestyle="none", marker=marker, markersize=5, markerfacecolor="none",
                    markeredgecolor=colour, markeredgewidth=0.9, zorder=4)
    if any_published:
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=5, markerfacecolor="none",
                              markeredgecolor="0.3", label="published (open markers)"))
        handles.append(Line2D([], [], color="0.3", marker="o", markersize=2.5,
                              label=f"reproduced, {spec.confidence:.0%} CI"))
    ax.set_xlabel(out.get("xlabel", x.replace("_", " ")))
    ax.set_ylabel(out.get("ylabel", metric_label(spec, metric)))
    if out.get("logy"):
        ax.set_yscale("log")
    if out.get("logx"):
        ax.set_xscale("log")
        _log_ticks(ax, sorted(summary[x].astype(float).unique()))
    ax.grid(True, linewidth=0.3, alpha=0.5)
    many = len(handles) > 6   # beside the axes: a long legend would hide the curves
    ax.legend(handles=handles, handlelength=2.2 if many else 1.6,
              **({"loc": "center left", "bbox_to_anchor": (1.02, 0.5)} if many else {"loc": "best"}))


def _scatter(spec, results_dir: Path, ax) -> None:
    out = spec["output"]
    px, py, metric = out["x"], out["y"], out.get("metric", spec.metrics[0]["name"])
    reps = _need(read_replications(spec, results_dir), "replications.csv", spec, results_dir)
    first = out.get("first")
    table = reps[reps.policy.isin([px, py])].pivot_table(index=["cell", "rep"], columns="policy", values=metric)
    table = table.sort_index(level=["rep", "cell"]).dropna()
    if first:
        table = table.iloc[: int(first)]
    if table.empty:
        raise ValueError(f"{spec.id}: no replications with both '{px}' and '{py}'.")
    xs, ys = table[px].to_numpy(float), table[py].to_numpy(float)
    marked = _marked(reps, px, out.get("mark"), table.index)
    size = 4 if len(xs) > 200 else 12  # many points: small and translucent; few: visible
    ax.scatter(xs[~marked], ys[~marked], s=size, marker="o", color=COLOURS[0], alpha=0.5 if len(xs) > 200 else 0.8,
               linewidths=0, rasterized=False,
               label="one execution")
    if marked.any():
        ax.scatter(xs[marked], ys[marked], s=2 * size, marker="x", color=COLOURS[1], linewidths=0.7,
                   label=out["mark"]["label"])
    values = np.concatenate([xs, ys])
    lo, hi = float(values.min()), float(values.max())
    positive = lo > 0
    if positive and hi / lo > 10:
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
        lo, hi = lo / 1.1, hi * 1.1
    else:
        pad = 0.05 * (hi - lo or 1.0)
        lo, hi = lo - pad, hi + pad
    ax.plot([lo, hi], [lo, hi], color="0.2", linewidth=0.8, linestyle="--", label="x = y")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    note = f"below x = y: {float((ys < xs).mean()):.1%} of {len(xs)}"
    if marked.any():
        rest = ~marked
        note += (f"\ndots: {float((ys[rest] < xs[rest]).mean()) if rest.any() else math.nan:.1%} of {int(rest.sum())}"
                 f"; crosses: {float((ys[marked] < xs[marked]).mean()):.1%} of {int(marked.sum())}")
    ax.text(0.97, 0.04, note, transform=ax.transAxes, ha="right", va="bottom", fontsize=7)
    ax.set_xlabel(spec.label(px))
    ax.set_ylabel(spec.label(py))
    ax.set_title(metric_label(spec, metric), pad=3)
    ax.grid(True, linewidth=0.3, alpha=0.5)
    ax.legend(loc="upper left", handlelength=1.6, markerscale=1.5 if marked.any() else 2, handletextpad=0.8,
              frameon=True, framealpha=0.85, edgecolor="none")


def _marked(reps, policy: str, mark: dict | None, index) -> np.ndarray:
    """Which of the executions ``index`` (cell, rep) ``mark``'s 0/1 metric flags, read on ``policy``."""
    if not mark:
        return np.zeros(len(index), dtype=bool)
    flags = reps[reps.policy == policy].set_index(["cell", "rep"])[mark["metric"]]
    return flags.reindex(index).fillna(0).to_numpy(float) > 0.5


def make_monitor_figure(spec, results_dir: Path, out: Path) -> None:
    """The queues of ``output.monitor`` over time (``results_dir/<id>/monitor.csv``, written by
    ``simcore trace ID --monitor``), one panel per policy, into the PDF ``out`` (atomically)."""
    from fnmatch import fnmatch

    import pandas as pd

    from simcore.errors import InputError
    from simcore.experiments.spec import SpecError

    monitor = spec["output"].get("monitor")
    if not monitor:
        raise SpecError(f"{spec.path}: key 'output.monitor': not given, so experiment '{spec.id}' has no queue figure.")
    path = Path(results_dir) / spec.id / "monitor.csv"
    if not path.exists():
        raise InputError(f"{path}: no queue samples (run `simcore trace {spec.id} --monitor --out {path}` first).")
    frame = pd.read_csv(path)
    patterns = monitor.get("queues") or ["*"]
    frame = frame[frame.queue.map(lambda q: any(fnmatch(q, p) for p in patterns))]
    policies = monitor.get("policies") or spec.policies
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(len(policies), 1, sharex=True, sharey=True, squeeze=False,
                                 figsize=(SIZE[0] * 1.9, 0.4 + 1.25 * len(policies)))
        try:
            for ax, policy in zip(axes[:, 0], policies):
                _queues_panel(ax, frame[frame.policy == policy])
                ax.set_title(spec.label(policy), loc="left")
                ax.set_ylabel("length")
                ax.grid(True, linewidth=0.3, alpha=0.5)
            axes[0][0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), handlelength=1.6, borderaxespad=0.0)
            axes[-1][0].set_xlabel(f"time (sampled every {monitor['period']:g})")
            fig.tight_layout(pad=0.3)
            with atomic_path(out) as tmp:
                fig.savefig(tmp, format="pdf", metadata=PDF_METADATA)
        finally:
            plt.close(fig)


MAX_QUEUE_LINES = 4   # more queues than this are drawn as their mean and min-max band


def _queues_panel(ax, rows) -> None:
    """Each queue as a step line, or (many queues) their mean and their min-max band at each sample."""
    queues = list(dict.fromkeys(rows.queue))
    if len(queues) <= MAX_QUEUE_LINES:
        for i, queue in enumerate(queues):
            series = rows[rows.queue == queue]
            ax.step(series.time, series.value, where="post", color=COLOURS[i % len(COLOURS)], linewidth=0.8,
                    label=queue)
        return
    wide = rows.pivot_table(index="time", columns="queue", values="value", sort=True)
    t = wide.index.to_numpy(float)
    ax.fill_between(t, wide.min(axis=1), wide.max(axis=1), step="post", color=COLOURS[0], alpha=0.25, linewidth=0,
                    label=f"min to max of {len(queues)} queues")
    ax.step(t, wide.mean(axis=1), where="post", color=COLOURS[0], linewidth=0.8, label="mean")
