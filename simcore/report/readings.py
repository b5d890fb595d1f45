"""Readings sweeps (``grid_design: one-at-a-time``): how much each open assumption moves a claim;
and maps of a claim's statistic over two crossed readings (``output.kind: map``).

Cell 0 holds every assumption at its default reading; every other cell changes one of them. For a
claim, the statistic of each cell (a paired ratio or difference with its interval) is set beside
the default one; an assumption's *influence* is the largest change it makes, on the claim's
analysis scale (log for ratios, as the verdicts use): the one-at-a-time sensitivity ranking.
When the cells share seeds (``seeds: shared``), replication r of every cell sees the same
workload, so a change is paired by replication and gets its own interval (the delta method on
the statistics' influence values); otherwise its interval is not defined (NaN).
"""

from __future__ import annotations

import math

from simcore.stats.claims import (
    MARGIN,
    NULL,
    STATISTIC,
    cell_estimates,
    cell_statistics,
    cell_verdict,
    effect_interval,
    practical_size,
)
from simcore.stats.intervals import Estimate


def analysis_scale(kind: str):
    """The scale on which a claim's statistic is judged: log for ratios, else as it is."""
    return math.log if STATISTIC[kind] == "ratio" else (lambda x: x)


def cell_table(spec, raw, claim: dict) -> list[dict]:
    """One row per cell the claim names: the cell's grid values, the statistic, its interval and
    the verdict the claim would get in that cell alone."""
    cells = {c.index: c for c in spec.all_cells()}
    return [{"cell": index, "values": cells[index].values, "mean": iv.mean, "low": iv.low, "high": iv.high,
             "verdict": _verdict(spec, claim, iv)} for index, iv in sorted(cell_statistics(spec, raw, claim).items())]


def readings(spec, raw, claim: dict) -> list[dict]:
    """One row per cell: the varied parameter (None for the default cell), its value, the
    statistic, its interval, and its change from the default cell on the analysis scale with
    the change's paired interval (``change_low``, ``change_high``; NaN unless seeds are shared)."""
    stats = cell_statistics(spec, raw, claim)
    cells = {c.index: c for c in spec.all_cells()}
    scale = analysis_scale(claim["kind"])
    base = stats.get(0)
    paired = cell_estimates(spec, raw, claim) if spec.shares_seeds else {}
    rows = []
    for index, iv in sorted(stats.items()):
        name = spec.varied(cells[index])
        change = (scale(iv.mean) - scale(base.mean)) if base is not None and _positive(claim, iv, base) else math.nan
        low, high = _change_interval(claim, paired.get(index), paired.get(0), spec.confidence) if name else (0.0, 0.0)
        rows.append({"cell": index, "parameter": name, "value": cells[index].values[name] if name else None,
                     "mean": iv.mean, "low": iv.low, "high": iv.high, "change": change,
                     "change_low": low if math.isfinite(change) else math.nan,
                     "change_high": high if math.isfinite(change) else math.nan, "verdict": _verdict(spec, claim, iv)})
    return rows


def _change_interval(claim: dict, cell, base, level: float) -> tuple[float, float]:
    """The paired interval of a cell's statistic minus the default cell's, on the analysis scale
    (log for ratios); NaN unless both have the same replications."""
    if cell is None or base is None or cell[1] != base[1]:
        return math.nan, math.nan
    (a, _), (b, _) = cell, base
    if STATISTIC[claim["kind"]] == "ratio":
        if not (a.value > 0 and b.value > 0):
            return math.nan, math.nan
        a = Estimate(math.log(a.value), a.influence / a.value)
        b = Estimate(math.log(b.value), b.influence / b.value)
    iv = (a - b).interval(level)
    return iv.low, iv.high


def _verdict(spec, claim: dict, iv) -> str:
    """The verdict the claim would get in this one cell (docs/statistics.md, "Verdicts")."""
    if not (math.isfinite(iv.low) and math.isfinite(iv.high)):
        return "inconclusive"
    published = claim.get("published_effect")
    published = float(published) if isinstance(published, (int, float)) and not isinstance(published, bool) else None
    threshold = float(claim.get("threshold", NULL[STATISTIC[claim["kind"]]]))
    practical = practical_size(spec, claim, None)
    return cell_verdict(*effect_interval(claim["kind"], iv.low, iv.high, threshold, published, iv.mean), practical)


def _positive(claim: dict, iv, base) -> bool:
    return STATISTIC[claim["kind"]] != "ratio" or (iv.mean > 0 and base.mean > 0)


def influence(rows: list[dict]) -> list[tuple[str, float]]:
    """(parameter, largest |change| over its values), most influential first; ties by name."""
    return [(name, size) for name, size, _ in ranked_changes(rows)]


def ranked_changes(rows: list[dict]) -> list[tuple[str, float, dict]]:
    """(parameter, largest |change| over its values, the row of that change), most influential
    first; ties by name."""
    out: dict[str, tuple[float, dict]] = {}
    for r in rows:
        if r["parameter"] is not None and math.isfinite(r["change"]):
            if abs(r["change"]) > out.get(r["parameter"], (-1.0, None))[0]:
                out[r["parameter"]] = (abs(r["change"]), r)
    return sorted(((name, size, row) for name, (size, row) in out.items()), key=lambda t: (-t[1], t[0]))


def published_band(claim: dict) -> tuple[float, float, float] | None:
    """(low, published, high): the published value and its equivalence margin (a quarter of the
    published effect, measured from the threshold on the analysis scale) on the statistic's own
    scale, or None without a numeric published effect."""
    p = claim.get("published_effect")
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        return None
    kind = claim["kind"]
    threshold = float(claim.get("threshold", NULL[STATISTIC[kind]]))
    if STATISTIC[kind] == "ratio" and p > 0 and threshold > 0:
        m = MARGIN * abs(math.log(p) - math.log(threshold))
        return math.exp(math.log(p) - m), float(p), math.exp(math.log(p) + m)
    m = MARGIN * abs(p - threshold)
    return p - m, float(p), p + m
