"""Structured claims and their verdicts (docs/statistics.md, "Verdicts").

A claim compares ``policy`` with ``than`` (default: the baseline) on one metric, in every cell it
names, through one statistic: the policy's own value (``value``: a level the paper reports, such
as a share of failed attempts; no ``than``), the paired difference policy - than (``less``/``greater``), the
ratio policy/than (``ratio-below``/``ratio-above``), the share of replications in which
policy < than (``share-less``, Clopper-Pearson), the slope of the relative gain
(than - policy) / than over than's value (``gain-grows``) or the standard deviation over the
replications of the paired ratio policy/than (``spread``: how much one policy's advantage varies
between executions, delta method). The statistic is compared with the claim's ``threshold`` (the
value of no effect: 0 for differences and slopes, 1 for ratios, unless stated) and, where the
paper gives one, with its ``published_effect``: a number, or ``table``: in each cell, the
value the spec's ``published`` list gives there (for ``value``, the policy's; for a ratio or a
difference, a published ratio row policy/than, else the two policies' values combined).

Per cell, on the analysis scale (log for positive ratios, else linear), with the effect e
measured from the threshold towards the claimed side, its estimate e (the point), the interval
[lo, hi], the published effect P > 0 and the margin m = MARGIN x P:

- ``contradicted``: hi < 0, the whole interval on the other side;
- without a published effect, with the practical size d (:func:`practical_size`):
  ``reproduced`` if lo > 0 and e >= d; ``negligible`` if hi < d (no effect of practical size
  is consistent with the data); else ``inconclusive``;
- with one: ``reproduced`` if lo > 0 and |e - P| <= m (the margin bounds the point estimate,
  never the far end of the interval); ``smaller than published`` if lo > 0, e >= d and
  hi < P - m (``negligible`` if lo > 0 and hi < d);
  ``larger than published`` if lo > P + m; ``absent`` if lo <= 0 and hi < P - m (no effect is
  consistent with the data, the published one is not); otherwise ``inconclusive``.

An inconclusive row states the replications that would decide it: with the interval's half
width h at n replications and h* the largest half width that decides (see
:func:`replications_to_decide`), n (h / h*)^2, keeping the pilot's spread.

Several cells: the claim is ``reproduced`` when every cell reproduces it (an intersection-union
test, valid at the spec's level without correction); a cell's other decided verdict (contradicted,
absent, smaller, larger) counts only if it also holds at the Bonferroni level 1 - (1 - level)/k
over the claim's k cells, else the cell is inconclusive. The claim takes the first verdict of
VERDICT_ORDER among its cells. A claim with ``across: mean`` is about one statistic instead: the mean over its cells of
the per-cell difference or ratio (a paper's "average improvement" over its workloads), with the
interval of a mean of independent estimates (:func:`simcore.stats.intervals.mean_of_independent`),
judged as one cell.

A claim about part of a curve (``where``) whose figure the paper gives elsewhere with the other
sign (the published pair policy/than lies on the far side of the threshold in cells outside
``where``: gains at light loads, losses at heavy ones) says that the sign changes there (a number marked ``untested``
gives no sign). Its direction, reproduced or of another magnitude, is ``not specific`` when the reproduction shows
the same direction, of practical size and decided at the Bonferroni level over those cells, in a
cell where the paper's curve has the other sign: an offset everywhere is not the paper's change
of sign. The row then gives that cell and its interval. A claim marked ``calibrated`` (its number was used to choose a
model value) has the verdict ``calibrated`` and keeps the statistical one beside it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from simcore.stats.intervals import Interval, mean_of_independent, mean_of_paired, sd_estimate
from simcore.stats.kinds import NULL, SIDE, STATISTIC, published_in_cell  # noqa: F401 (re-exported)
from simcore.stats.summary import metric_estimate
from simcore.vocabulary.cells import grid_values, where_matches

MARGIN = 0.25  # equivalence margin: a quarter of the published effect, on the analysis scale
PRACTICAL = 0.25  # practical size: a quarter of the smallest effect the paper reports for the figure...
PRACTICAL_DEFAULT = math.log(1.01)  # ...or 1 % where it reports none (log of a ratio)
VERDICT_ORDER = ("contradicted", "absent", "negligible", "not specific", "smaller than published",
                 "larger than published", "inconclusive", "reproduced")
VERDICTS = (*VERDICT_ORDER, "calibrated")
COLUMNS = ["experiment", "claim", "text", "kind", "metric", "policy", "than", "statistic", "threshold",
           "published_effect", "margin", "across", "cells", "cells_reproduced", "deciding_cell", "estimate", "ci_low",
           "ci_high", "level", "n", "required_replications", "verdict", "statistical_verdict", "calibrated",
           "practical_size", "calibrated_input"]


def _scale(kind: str, values) -> tuple:
    """The analysis scale: log for ratios whose values are all positive, else linear."""
    if STATISTIC[kind] == "ratio" and all(v > 0 for v in values):
        return tuple(math.log(v) for v in values)
    return tuple(values)


def effect_interval(kind: str, low: float, high: float, threshold: float, published: float | None,
                    estimate: float | None = None):
    """(lo, hi, P, e): the interval, the published effect and the estimate as effects from the
    threshold towards the claimed side, on the analysis scale (P, e: None when not given)."""
    given = [v for v in (published, estimate) if v is not None]
    scaled = _scale(kind, [low, high, threshold, *given])
    side, zero = SIDE[kind], scaled[2]
    lo, hi = sorted((side * (scaled[0] - zero), side * (scaled[1] - zero)))
    rest = iter(side * (v - zero) for v in scaled[3:])
    return lo, hi, (next(rest) if published is not None else None), (next(rest) if estimate is not None else None)


def cell_verdict(lo: float, hi: float, effect: float | None, estimate: float | None = None,
                 practical: float = 0.0) -> str:
    """The verdict of one interval of effects [lo, hi] with its point ``estimate`` (default: the
    interval's centre) against the published effect, or without one against the ``practical``
    size (module doc)."""
    if hi < 0:
        return "contradicted"
    e = (lo + hi) / 2 if estimate is None else estimate
    if effect is None:
        if lo > 0 and e >= practical:
            return "reproduced"
        return "negligible" if hi < practical else "inconclusive"
    margin = MARGIN * effect
    if lo > 0 and abs(e - effect) <= margin:
        return "reproduced"
    if hi + margin < effect:
        if lo > 0 and e >= practical:
            return "smaller than published"
        if lo <= 0:
            return "absent"
        return "negligible" if hi < practical else "inconclusive"
    if lo - margin > effect:
        return "larger than published"
    return "inconclusive"


def replications_to_decide(n: int, lo: float, hi: float, effect: float | None, estimate: float | None = None,
                           practical: float = 0.0) -> float:
    """Replications after which an interval with the same centre and spread decides the verdict.

    With centre c (the estimate) and half width h, the verdict is decided once h < h*, the
    largest of the distances the interval must clear: -c (contradicted), c when c is where the
    claim reproduces (|c - P| <= m, or c >= d without P), P - m - c (smaller, absent), c - P - m
    (larger), d - c (negligible). h shrinks as 1/sqrt(n): n (h / h*)^2. NaN when h* <= 0 (the
    estimate sits on a boundary) or the interval is not finite.
    """
    centre = (lo + hi) / 2 if estimate is None else estimate
    half = (hi - lo) / 2
    if effect is None:
        targets = [-centre, practical - centre, centre if centre >= practical else 0.0]
        if practical == 0:
            targets.append(abs(centre))
    else:
        margin = MARGIN * effect
        targets = [-centre, effect - margin - centre, centre - effect - margin,
                   centre if abs(centre - effect) <= margin else 0.0]
    target = max(targets)
    if not (math.isfinite(half) and target > 0):
        return math.nan
    return float(max(n, math.ceil(n * (half / target) ** 2)))


def figure_effect(published: list) -> float | None:
    """The smallest effect the paper reports for a figure, as |log| of a ratio: over its published
    ratio rows (``than``) and the pairs of policies it gives on one metric at one point (None:
    it reports no comparison)."""
    sizes, points = [], {}
    for e in published:
        value = float(e["value"])
        if e.get("than") is not None:
            sizes.append(abs(math.log(value)) if value > 0 else math.nan)
            continue
        key = (e["metric"], repr(sorted((e.get("where") or {}).items())))
        points.setdefault(key, []).append(value)
    for values in points.values():
        sizes += [abs(math.log(a / b)) for i, a in enumerate(values) for b in values[i + 1:] if a > 0 and b > 0]
    sizes = [x for x in sizes if math.isfinite(x) and x > 0]
    return min(sizes) if sizes else None


def practical_size(spec, claim: dict, than_value: float | None) -> float:
    """A direction claim's practical size d on the analysis scale: a quarter of the smallest
    effect the paper reports for the figure (:func:`figure_effect`), or 1 % where it reports
    none, as a ratio (log) or as that share of ``than``'s value (differences); 0 for values,
    shares, slopes and spreads, whose threshold is the paper's own statement."""
    smallest = figure_effect(spec.data.get("published") or [])
    log_size = PRACTICAL * smallest if smallest is not None else PRACTICAL_DEFAULT
    statistic = STATISTIC[claim["kind"]]
    if statistic == "ratio":
        return log_size
    if statistic == "difference" and than_value is not None and math.isfinite(than_value):
        return math.expm1(log_size) * abs(than_value)
    return 0.0


def _paired_values(rows: pd.DataFrame, policy: str, than: str, metric: str):
    a = rows[rows.policy == policy].sort_values("rep")[metric].to_numpy(float)
    b = rows[rows.policy == than].sort_values("rep")[metric].to_numpy(float)
    return a, b


def _share_less(a, b, level: float) -> Interval:
    from scipy import stats

    wins, n = int((a < b).sum()), len(a)
    ci = stats.binomtest(wins, n).proportion_ci(confidence_level=level, method="exact")
    return Interval(n, wins / n, float("nan"), level, ci.low, ci.high)


def _gain_slope(a, b, level: float) -> Interval:
    """Slope of the relative gain (b - a) / b on b (0 for a constant proportional gain), least
    squares, with the heteroscedasticity-consistent standard error HC3 (the gain's spread changes
    with b, which the plain least-squares error assumes it does not) and a t interval on n - 2
    degrees of freedom."""
    from scipy import stats

    x, y = np.asarray(b, float), (np.asarray(b, float) - np.asarray(a, float)) / np.asarray(b, float)
    fit = stats.linregress(x, y)
    se = hc3_slope_se(x, y - (fit.intercept + fit.slope * x))
    half = stats.t.ppf(0.5 + level / 2, len(x) - 2) * se
    return Interval(len(x), fit.slope, se, level, fit.slope - half, fit.slope + half)


def hc3_slope_se(x: np.ndarray, residuals: np.ndarray) -> float:
    """HC3 standard error of a simple regression's slope (MacKinnon and White 1985; Long and Ervin
    2000): sqrt(sum (x - mean)^2 e^2 / (1 - h)^2) / Sxx, h the leverages 1/n + (x - mean)^2 / Sxx."""
    xc = x - x.mean()
    sxx = float(xc @ xc)
    h = 1.0 / len(x) + xc ** 2 / sxx
    return float(np.sqrt(np.sum(xc ** 2 * residuals ** 2 / (1.0 - h) ** 2)) / sxx)


def _cell_estimate(spec, rows, claim, metric, than):
    """The policy's value, the paired difference or ratio policy vs than in one cell, or the
    spread of the ratio (an Estimate)."""
    if claim["kind"] == "value":
        return metric_estimate(spec.model, rows[rows.policy == claim["policy"]], metric)
    if claim["kind"] == "spread":
        a, b = _paired_values(rows, claim["policy"], than, metric["name"])
        return sd_estimate(a / b)
    a = metric_estimate(spec.model, rows[rows.policy == claim["policy"]], metric)
    b = metric_estimate(spec.model, rows[rows.policy == than], metric)
    return a / b if claim["kind"].startswith("ratio") else a - b


def _cell_interval(spec, rows, claim, metric, than, level: float) -> Interval:
    kind = claim["kind"]
    if kind in ("share-less", "gain-grows"):
        a, b = _paired_values(rows, claim["policy"], than, metric.get("name"))
        return (_share_less if kind == "share-less" else _gain_slope)(a, b, level)
    return _cell_estimate(spec, rows, claim, metric, than).interval(level)


def _judge(kind: str, iv: Interval, threshold: float, published: float | None,
           practical: float = 0.0) -> tuple[str, float]:
    """A cell's verdict and the replications that would decide it (NaN unless inconclusive)."""
    if not (math.isfinite(iv.low) and math.isfinite(iv.high)):
        return "inconclusive", math.nan
    lo, hi, effect, e = effect_interval(kind, iv.low, iv.high, threshold, published, iv.mean)
    verdict = cell_verdict(lo, hi, effect, e, practical)
    needed = replications_to_decide(iv.n, lo, hi, effect, e, practical) if verdict == "inconclusive" else math.nan
    return verdict, needed


def _than_value(spec, rows, claim, metric, than) -> float | None:
    """``than``'s value in a cell (the scale of a difference claim's practical size)."""
    if STATISTIC[claim["kind"]] != "difference":
        return None
    return metric_estimate(spec.model, rows[rows.policy == than], metric).value


def _grid_values(spec, rows: pd.DataFrame) -> dict:
    """The grid values of one cell's rows, as Python scalars."""
    return grid_values(spec, rows.iloc[0])


def _cell_published(spec, claim, rows, than):
    """The claim's published effect in one cell (None: no magnitude)."""
    value = claim.get("published_effect")
    if value != "table":
        return value
    values = _grid_values(spec, rows)
    return published_in_cell(spec.data.get("published") or [], {**claim, "than": than}, values)


def than_label(claim: dict, than: str) -> str:
    """The name of the other side: the policy, or with ``than_cell`` the policy in that cell."""
    other = claim.get("than_cell")
    if not other:
        return than
    return f"{than} at " + ", ".join(f"{k} = {v}" for k, v in other.items())


def _chosen(spec, raw, claim) -> list[tuple]:
    """(cell index, rows) of every cell the claim names. With ``than_cell``, each cell's rows
    also hold the other side: the rows of ``than`` in the cell whose grid values are this cell's
    with ``than_cell``'s substituted, renamed ``than_label`` (replication r of both cells shares
    its seed: the spec shares seeds, so they pair), on the replications both cells ran (a
    precision round may have run one further). A cell whose other cell was not run, or is the
    cell itself, is left out."""
    where = claim.get("where")
    cells = [(i, rows) for i, rows in raw.groupby("cell", sort=True) if where_matches(where, _grid_values(spec, rows))]
    other = claim.get("than_cell")
    if not other:
        return cells
    by_values = {tuple(sorted(_grid_values(spec, rows).items())): rows for _, rows in raw.groupby("cell", sort=True)}
    than = claim.get("than", spec.baseline)
    out = []
    for i, rows in cells:
        own = _grid_values(spec, rows)
        values = {**own, **other}
        match = by_values.get(tuple(sorted(values.items())))
        if match is None or values == own:
            continue
        common = set(rows.rep) & set(match.rep)      # a precision round may have run one cell further
        out.append(
            (
                i,
                pd.concat(
                    [
                        rows[rows.rep.isin(common)],
                        match[(match.policy == than) & match.rep.isin(common)].assign(policy=than_label(claim, than)),
                    ]
                ),
            )
        )
    return out


def _pooled(spec, raw, claim, metric, than, threshold) -> list[tuple]:
    """``across: mean``: one (None, interval, verdict, replications, published effect) for the
    mean over the cells (with ``table``, the published effect is the mean of the cells' too).
    Cells with seeds of their own are independent; cells sharing seeds pair replication by
    replication, so the mean's influence values are the mean of theirs."""
    chosen = _chosen(spec, raw, claim)
    if not chosen:
        return []
    estimates = [_cell_estimate(spec, rows, claim, metric, than) for _, rows in chosen]
    iv = (mean_of_paired(estimates).interval(spec.confidence) if spec.shares_seeds
          else mean_of_independent(estimates, spec.confidence))
    each = [_cell_published(spec, claim, rows, than) for _, rows in chosen]
    published = None if any(p is None for p in each) else sum(each) / len(each)
    thans = [_than_value(spec, rows, claim, metric, than) for _, rows in chosen]
    practical = practical_size(spec, claim, None if None in thans else sum(thans) / len(thans))
    return [(None, iv, *_judge(claim["kind"], iv, threshold, published, practical), published, practical)]


def _cells(spec, raw, claim, metric, than, threshold) -> list[tuple]:
    """(cell, interval, verdict, replications to decide, published effect) for every cell the
    claim names."""
    chosen = _chosen(spec, raw, claim)
    strict = 1 - (1 - spec.confidence) / max(len(chosen), 1)  # Bonferroni over the claim's cells
    out = []
    for cell_index, rows in chosen:
        published = _cell_published(spec, claim, rows, than)
        practical = practical_size(spec, claim, _than_value(spec, rows, claim, metric, than))
        iv = _cell_interval(spec, rows, claim, metric, than, spec.confidence)
        verdict, needed = _judge(claim["kind"], iv, threshold, published, practical)
        if verdict not in ("reproduced", "inconclusive") and len(chosen) > 1:
            strict_iv = _cell_interval(spec, rows, claim, metric, than, strict)
            if _judge(claim["kind"], strict_iv, threshold, published, practical)[0] != verdict:
                lo, hi, effect, e = effect_interval(claim["kind"], strict_iv.low, strict_iv.high, threshold,
                                                    published, strict_iv.mean)
                verdict, needed = "inconclusive", replications_to_decide(iv.n, lo, hi, effect, e, practical)
        out.append((cell_index, iv, verdict, needed, published, practical))
    return out


def _opposite_cells(spec, raw, claim, than, threshold) -> list[tuple]:
    """(cell, rows) outside the claim's ``where`` where the paper's curve has the other sign:
    its published policy/than there lies on the far side of ``threshold`` (none for a claim on
    one statistic per cell, ``across``, ``than_cell`` or no ``where``). A published number marked
    ``untested`` (shown beside ours, the text stating nothing of it) gives no sign."""
    where = claim.get("where")
    if (
        not where
        or claim.get("across")
        or claim.get("than_cell")
        or STATISTIC[claim["kind"]] not in ("ratio", "difference")
    ):
        return []
    published = [e for e in spec.data.get("published") or [] if "untested" not in e]
    out = []
    for i, rows in raw.groupby("cell", sort=True):
        values = _grid_values(spec, rows)
        if where_matches(where, values):
            continue
        paper = published_in_cell(published, {**claim, "than": than}, values)
        if paper is not None and SIDE[claim["kind"]] * (paper - threshold) < 0:
            out.append((i, rows))
    return out


def _unspecific(spec, raw, claim, metric, than, threshold) -> tuple | None:
    """(cell, interval) of the first cell where the paper's curve has the other sign and the
    reproduction shows the claim's direction, of practical size, at the Bonferroni level over
    those cells; None if there is none."""
    cells = _opposite_cells(spec, raw, claim, than, threshold)
    strict = 1 - (1 - spec.confidence) / max(len(cells), 1)
    for i, rows in cells:
        practical = practical_size(spec, claim, _than_value(spec, rows, claim, metric, than))
        iv = _cell_interval(spec, rows, claim, metric, than, strict)
        if not (math.isfinite(iv.low) and math.isfinite(iv.high)):
            continue
        lo, _, _, e = effect_interval(claim["kind"], iv.low, iv.high, threshold, None, iv.mean)
        if lo > 0 and e >= practical:
            return i, _cell_interval(spec, rows, claim, metric, than, spec.confidence)
    return None


SPECIFIC = ("reproduced", "smaller than published", "larger than published")   # what "not specific" can overrule


def _terms(spec, claim: dict) -> tuple[dict, str, str, float]:
    """The claim's metric (its spec entry), other policy, statistic and threshold."""
    metric = next(m for m in spec.metrics if m["name"] == claim["metric"])
    than = "" if claim["kind"] == "value" else than_label(claim, claim.get("than", spec.baseline))
    statistic = STATISTIC[claim["kind"]]
    return metric, than, statistic, float(claim.get("threshold", NULL[statistic]))


def evaluate_claim(spec, raw: pd.DataFrame, claim: dict) -> dict:
    """The verdict of one claim and the interval behind it."""
    metric, than, statistic, threshold = _terms(spec, claim)
    published = claim.get("published_effect")
    base = {"experiment": spec.id, "claim": claim["id"], "text": claim["text"], "kind": claim["kind"],
            "metric": claim["metric"], "policy": claim["policy"], "than": than, "statistic": statistic,
            "threshold": threshold, "published_effect": math.nan,
            "margin": MARGIN if published is not None else math.nan, "across": claim.get("across", ""),
            "calibrated": claim.get("calibrated", ""), "calibrated_input": claim.get("calibrated_input", ""),
            "practical_size": math.nan}
    pooled = claim.get("across") == "mean"
    cells = (_pooled if pooled else _cells)(spec, raw, claim, metric, than, threshold)
    if not cells:
        return {**base, "cells": 0, "cells_reproduced": 0, "verdict": "inconclusive",
                "statistical_verdict": "inconclusive"}
    rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
    cell_index, iv, verdict, needed, effect, practical = min(
        cells, key=lambda c: (rank[c[2]], -abs(c[1].mean - threshold))
    )
    if verdict == "inconclusive":  # every undecided cell must be decided
        counts = [c[3] for c in cells if c[2] == "inconclusive"]
        needed = math.nan if any(math.isnan(x) for x in counts) else max(counts)
    reproduced = math.nan if pooled else sum(c[2] == "reproduced" for c in cells)
    elsewhere = _unspecific(spec, raw, claim, metric, than, threshold) if verdict in SPECIFIC else None
    if elsewhere is not None:
        (cell_index, iv), verdict, needed = elsewhere, "not specific", math.nan
    return {
        **base,
        "published_effect": math.nan if effect is None else float(effect),
        "practical_size": float(practical),
        "cells": len(_chosen(spec, raw, claim)),
        "cells_reproduced": reproduced,
        "deciding_cell": math.nan if cell_index is None else cell_index,
        "estimate": iv.mean,
        "ci_low": iv.low,
        "ci_high": iv.high,
        "level": iv.level,
        "n": iv.n,
        "required_replications": needed,
        "verdict": "calibrated" if claim.get("calibrated") else verdict,
        "statistical_verdict": verdict,
    }


def undecided_cells(spec, raw: pd.DataFrame, claim: dict) -> dict[int, float]:
    """Cell index -> the replications that would decide it, for every cell that keeps the claim
    ``inconclusive`` (NaN where no count can be estimated); empty once the claim is decided.
    Under ``across: mean`` every cell of the claim counts, with the mean's count."""
    row = evaluate_claim(spec, raw, claim)
    if row["statistical_verdict"] != "inconclusive":
        return {}
    if claim.get("across") == "mean":
        return {int(i): row["required_replications"] for i, _ in _chosen(spec, raw, claim)}
    metric, than, _, threshold = _terms(spec, claim)
    return {int(c[0]): c[3] for c in _cells(spec, raw, claim, metric, than, threshold) if c[2] == "inconclusive"}


def cell_statistics(spec, raw: pd.DataFrame, claim: dict) -> dict[int, Interval]:
    """Cell index -> the claim's statistic in that cell with its interval at the spec's level
    (every cell the claim names; readings figures set them side by side)."""
    metric, than, _, _ = _terms(spec, claim)
    return {
        int(i): _cell_interval(spec, rows, claim, metric, than, spec.confidence)
        for i, rows in _chosen(spec, raw, claim)
    }


def cell_estimates(spec, raw: pd.DataFrame, claim: dict) -> dict[int, tuple]:
    """Cell index -> (the claim's statistic as an Estimate, its replications in order), for the
    statistics that have per-replication influence values (all but share-less and gain-grows)."""
    if claim["kind"] in ("share-less", "gain-grows"):
        return {}
    metric, than, _, _ = _terms(spec, claim)
    return {int(i): (_cell_estimate(spec, rows, claim, metric, than), tuple(sorted(rows.rep.unique())))
            for i, rows in _chosen(spec, raw, claim)}


def evaluate_claims(spec, raw: pd.DataFrame) -> pd.DataFrame:
    """One row per claim of the spec (COLUMNS); for an experiment that judges another, one row per
    judged claim and reading (:func:`evaluate_readings`)."""
    if "judged_claims" in spec.data:
        return evaluate_readings(spec, raw)
    rows = [evaluate_claim(spec, raw, c) for c in spec.data.get("claims") or []]
    return pd.DataFrame(rows, columns=COLUMNS)


# what a judged claim's row adds: the judged experiment and claim, the reading (its parameter
# values), whether it is that experiment's own, whether the paper supports every value, and how
READING_COLUMNS = ["judged", "judged_claim", "reading", "default_reading", "supported", "support"]


def reading_text(combination: dict) -> str:
    """'name = value; ...' of one reading (``Spec.reading_combinations``)."""
    return "; ".join(f"{name} = {entry['value']}" for name, entry in combination.items())


def _reading_rows(spec, raw: pd.DataFrame, values: dict) -> pd.DataFrame:
    """The rows of the cells whose grid holds a reading's ``values``."""
    cells = [rows for _, rows in raw.groupby("cell", sort=True) if where_matches(values, _grid_values(spec, rows))]
    return pd.concat(cells) if cells else raw.iloc[:0]


def evaluate_readings(spec, raw: pd.DataFrame) -> pd.DataFrame:
    """``judges``: each claim of the judged experiment in the cells of each reading (the claim's
    own cells with the reading's values), judged as there (docs/statistics.md, "Judged
    readings"). The claim column names the claim and the reading, so a row's key stays
    (experiment, claim)."""
    rows = []
    for k, combination in enumerate(spec.reading_combinations()):
        values = {name: entry["value"] for name, entry in combination.items()}
        text = reading_text(combination)
        support = " ".join(f"{name} = {e['value']}: {e['support']}" for name, e in combination.items() if e["support"])
        own = _reading_rows(spec, raw, values)   # a claim's other cells (its curve) are this reading's too
        for claim in spec.data["judged_claims"]:
            row = evaluate_claim(spec, own, {**claim, "where": {**(claim.get("where") or {}), **values}})
            rows.append({**row, "claim": f"{claim['id']} | {text}", "judged": spec.data["judges"],
                         "judged_claim": claim["id"], "reading": text, "default_reading": k == 0,
                         "supported": all(e["support"] for e in combination.values()), "support": support})
    return pd.DataFrame(rows, columns=COLUMNS + READING_COLUMNS)

