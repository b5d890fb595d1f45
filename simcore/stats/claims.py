"""Structured claims and their verdicts: ``reproduced``, ``not significant``, ``contradicted``.

A claim compares ``policy`` with ``than`` (default: the baseline) on one metric, in every
cell it names. ``less``/``greater`` use the paired difference policy - than (symmetric
t-interval); ``ratio-above``/``ratio-below`` use the ratio policy/than against ``threshold``
(log-scale interval for metrics that cannot be negative). ``share-less`` asks whether the
share of replications in which policy < than exceeds ``threshold`` (Clopper-Pearson interval);
``gain-grows`` whether the gain (than - policy) grows with than's value (regression slope > 0).
A claim over several cells is reproduced only if every cell reproduces it, contradicted if any
cell contradicts it.
"""

from __future__ import annotations

import pandas as pd
from scipy import stats

from simcore.stats.intervals import Interval
from simcore.stats.summary import metric_estimate

STATISTIC = {"less": "difference", "greater": "difference", "ratio-above": "ratio", "ratio-below": "ratio",
             "share-less": "share", "gain-grows": "slope"}
VERDICT_ORDER = {"contradicted": 0, "not significant": 1, "reproduced": 2}


def _verdict(kind: str, low: float, high: float, threshold: float) -> str:
    below, above = high < threshold, low > threshold
    if kind in ("less", "ratio-below"):
        return "reproduced" if below else "contradicted" if above else "not significant"
    return "reproduced" if above else "contradicted" if below else "not significant"


def _cell_matches(cell_rows: pd.DataFrame, where: dict) -> bool:
    first = cell_rows.iloc[0]
    for key, wanted in where.items():
        options = wanted if isinstance(wanted, list) else [wanted]
        if first[key] not in options:
            return False
    return True


def _paired_values(rows: pd.DataFrame, policy: str, than: str, metric: str):
    a = rows[rows.policy == policy].sort_values("rep")[metric].to_numpy(float)
    b = rows[rows.policy == than].sort_values("rep")[metric].to_numpy(float)
    return a, b


def _share_less(a, b, level: float) -> Interval:
    wins, n = int((a < b).sum()), len(a)
    ci = stats.binomtest(wins, n).proportion_ci(confidence_level=level, method="exact")
    return Interval(n, wins / n, float("nan"), level, ci.low, ci.high)


def _gain_slope(a, b, level: float) -> Interval:
    fit = stats.linregress(b, b - a)
    half = stats.t.ppf(0.5 + level / 2, len(a) - 2) * fit.stderr
    return Interval(len(a), fit.slope, fit.stderr, level, fit.slope - half, fit.slope + half)


def _cell_interval(spec, rows, claim, metric, than) -> Interval:
    kind, level = claim["kind"], spec.confidence
    if kind in ("share-less", "gain-grows"):
        a, b = _paired_values(rows, claim["policy"], than, metric.get("name"))
        return (_share_less if kind == "share-less" else _gain_slope)(a, b, level)
    a = metric_estimate(spec.model, rows[rows.policy == claim["policy"]], metric)
    b = metric_estimate(spec.model, rows[rows.policy == than], metric)
    return (a / b if kind.startswith("ratio") else a - b).interval(level)


def evaluate_claim(spec, raw: pd.DataFrame, claim: dict) -> dict:
    """The verdict of one claim and the interval behind it."""
    metric = next(m for m in spec.metrics if m["name"] == claim["metric"])
    than = claim.get("than", spec.baseline)
    threshold = float(claim.get("threshold", 0.0))
    cells = []
    for cell_index, rows in raw.groupby("cell", sort=True):
        if not _cell_matches(rows, claim.get("where") or {}):
            continue
        iv = _cell_interval(spec, rows, claim, metric, than)
        cells.append((cell_index, iv, _verdict(claim["kind"], iv.low, iv.high, threshold)))
    if not cells:
        return {"experiment": spec.id, "claim": claim["id"], "verdict": "not significant",
                "text": claim["text"], "cells": 0}
    worst = min(cells, key=lambda c: (VERDICT_ORDER[c[2]], -abs(c[1].mean - threshold)))
    cell_index, iv, verdict = worst
    return {
        "experiment": spec.id, "claim": claim["id"], "text": claim["text"], "kind": claim["kind"],
        "metric": claim["metric"], "policy": claim["policy"], "than": than,
        "statistic": STATISTIC[claim["kind"]], "threshold": threshold,
        "cells": len(cells), "cells_reproduced": sum(c[2] == "reproduced" for c in cells),
        "deciding_cell": cell_index, "estimate": iv.mean, "ci_low": iv.low, "ci_high": iv.high,
        "level": iv.level, "n": iv.n, "verdict": verdict,
    }


def evaluate_claims(spec, raw: pd.DataFrame) -> pd.DataFrame:
    columns = ["experiment", "claim", "text", "kind", "metric", "policy", "than", "statistic", "threshold",
               "cells", "cells_reproduced", "deciding_cell", "estimate", "ci_low", "ci_high", "level", "n",
               "verdict"]
    rows = [evaluate_claim(spec, raw, c) for c in spec.data.get("claims") or []]
    return pd.DataFrame(rows, columns=columns)
