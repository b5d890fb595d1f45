"""Readings sweeps (``grid_design: one-at-a-time``): how much each open assumption moves a claim;
and maps of a claim's statistic over two crossed readings (``output.kind: map``).

Cell 0 holds every assumption at its default reading; every other cell changes one of them. For a
claim, the statistic of each cell (a paired ratio or difference with its interval) is set beside
the default one; an assumption's *influence* is the largest change it makes, on the claim's
analysis scale (log for ratios, as the verdicts use): the one-at-a-time sensitivity ranking.
"""

from __future__ import annotations

import math

from simcore.stats.claims import MARGIN, NULL, STATISTIC, cell_statistics, cell_verdict, effect_interval


def analysis_scale(kind: str):
    """The scale on which a claim's statistic is judged: log for ratios, else as it is."""
    return math.log if STATISTIC[kind] == "ratio" else (lambda x: x)


def cell_table(spec, raw, claim: dict) -> list[dict]:
    """One row per cell the claim names: the cell's grid values, the statistic, its interval and
    the verdict the claim would get in that cell alone."""
    cells = {c.index: c for c in spec.all_cells()}
    return [{"cell": index, "values": cells[index].values, "mean": iv.mean, "low": iv.low, "high": iv.high,
             "verdict": _verdict(claim, iv)} for index, iv in sorted(cell_statistics(spec, raw, claim).items())]


def readings(spec, raw, claim: dict) -> list[dict]:
    """One row per cell: the varied parameter (None for the default cell), its value, the
    statistic, its interval and its change from the default cell on the analysis scale."""
    stats = cell_statistics(spec, raw, claim)
    cells = {c.index: c for c in spec.all_cells()}
    scale = analysis_scale(claim["kind"])
    base = stats.get(0)
    rows = []
    for index, iv in sorted(stats.items()):
        name = spec.varied(cells[index])
        change = (scale(iv.mean) - scale(base.mean)) if base is not None and _positive(claim, iv, base) else math.nan
        rows.append({"cell": index, "parameter": name, "value": cells[index].values[name] if name else None,
                     "mean": iv.mean, "low": iv.low, "high": iv.high, "change": change,
                     "verdict": _verdict(claim, iv)})
    return rows


def _verdict(claim: dict, iv) -> str:
    """The verdict the claim would get in this one cell (docs/statistics.md, "Verdicts")."""
    if not (math.isfinite(iv.low) and math.isfinite(iv.high)):
        return "inconclusive"
    published = claim.get("published_effect")
    published = float(published) if isinstance(published, (int, float)) and not isinstance(published, bool) else None
    threshold = float(claim.get("threshold", NULL[STATISTIC[claim["kind"]]]))
    return cell_verdict(*effect_interval(claim["kind"], iv.low, iv.high, threshold, published))


def _positive(claim: dict, iv, base) -> bool:
    return STATISTIC[claim["kind"]] != "ratio" or (iv.mean > 0 and base.mean > 0)


def influence(rows: list[dict]) -> list[tuple[str, float]]:
    """(parameter, largest |change| over its values), most influential first; ties by name."""
    out: dict[str, float] = {}
    for r in rows:
        if r["parameter"] is not None and math.isfinite(r["change"]):
            out[r["parameter"]] = max(out.get(r["parameter"], 0.0), abs(r["change"]))
    return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))


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
