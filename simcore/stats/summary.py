"""From raw replication rows to ``summary.csv``: per (cell, policy, metric) intervals,
paired differences and ratios against the baseline, and the published value. Each interval is
taken on the scale of the metric's declared range (:func:`metric_range`,
:mod:`simcore.stats.intervals`): ci_* on the metric's scale, diff_* symmetric, ratio_* on the
log scale (for metrics that cannot be negative)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from simcore.errors import InputError
from simcore.stats.intervals import Estimate, mean_estimate, quotient_range, ratio_estimate


def metric_range(model, metric: dict) -> str:
    """The range of a spec's metric: the model's declaration; for ``ratio: [num, den]`` a share
    when the model declares num part of den, else the range of a quotient (positive)."""
    if "ratio" not in metric:
        return model.METRICS[metric["name"]].range
    num, den = metric["ratio"]
    if model.METRICS[num].part_of == den:
        return "share"
    return quotient_range(model.METRICS[num].range, model.METRICS[den].range)


def metric_estimate(model, rows: pd.DataFrame, metric: dict) -> Estimate:
    """The estimate of one metric of ``model`` over the replications in ``rows`` (sorted by rep)."""
    rows, range_ = rows.sort_values("rep"), metric_range(model, metric)
    if "ratio" in metric:
        num, den = metric["ratio"]
        return ratio_estimate(rows[num], rows[den], range_)
    return mean_estimate(rows[metric["name"]], range_)


def published_value(spec, cell_values: dict, policy: str, metric: str) -> dict | None:
    """The published absolute value for this cell, policy and metric (ratios ``than`` excluded)."""
    for entry in spec.data.get("published") or []:
        if "than" in entry or entry.get("policy", policy) != policy or entry["metric"] != metric:
            continue
        where = entry.get("where") or {}
        if all(cell_values.get(k) == v for k, v in where.items()):
            return entry
    return None


def _check_pairing(rows: pd.DataFrame, spec) -> None:
    counts = rows.groupby(["cell", "policy"])["rep"].apply(lambda r: tuple(sorted(r)))
    for cell, per_policy in counts.groupby(level="cell"):
        if per_policy.nunique() != 1:
            raise InputError(
                f"--raw: cell {cell} of {spec.id} has different replications per policy; cannot pair them."
            )


def summarize(spec, raw: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, policy, metric), in spec order."""
    _check_pairing(raw, spec)
    level = spec.confidence
    grid_names = list(spec.grid)
    out = []
    for cell_index, cell_rows in raw.groupby("cell", sort=True):
        values = {k: cell_rows[k].iloc[0] for k in grid_names}
        by_policy = {p: r for p, r in cell_rows.groupby("policy")}
        for metric in spec.metrics:
            base = metric_estimate(spec.model, by_policy[spec.baseline], metric)
            for policy in spec.policies:
                est = metric_estimate(spec.model, by_policy[policy], metric)
                out.append(_row(spec, cell_index, values, policy, metric["name"], est, base, level))
    return pd.DataFrame(out)


def _row(spec, cell_index, values, policy, metric, est: Estimate, base: Estimate, level) -> dict:
    iv = est.interval(level)
    row = {"experiment": spec.id, "cell": cell_index, **values, "policy": policy, "metric": metric,
           "n": iv.n, "mean": iv.mean, "sd": iv.sd, "level": level, "ci_low": iv.low, "ci_high": iv.high,
           "baseline": spec.baseline}
    diff = (est - base).interval(level) if policy != spec.baseline else None
    ratio = (est / base).interval(level) if policy != spec.baseline and base.value else None
    row.update(diff_mean=diff.mean if diff else math.nan, diff_low=diff.low if diff else math.nan,
               diff_high=diff.high if diff else math.nan)
    row.update(ratio_mean=ratio.mean if ratio else math.nan, ratio_low=ratio.low if ratio else math.nan,
               ratio_high=ratio.high if ratio else math.nan)
    pub = published_value(spec, values, policy, metric)
    row["published"] = pub["value"] if pub else math.nan
    row["published_source"] = pub["source"] if pub else ""
    row["rel_error"] = (iv.mean - pub["value"]) / pub["value"] if pub and pub["value"] else math.nan
    return row


def replication_table(spec, raw: pd.DataFrame) -> pd.DataFrame:
    """Per-replication metric values (no wall time), for scatter plots and notebooks."""
    keep = ["cell", *spec.grid, "policy", "rep", "spawn_key", *sorted(spec.model.METRICS)]
    keep = [c for c in keep if c in raw.columns]
    return raw[keep].sort_values(["cell", "policy", "rep"]).reset_index(drop=True)


def finite(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x)) and np.isfinite(x)
