"""Fit one open quantity on one figure, predict the others (``output.kind: fit``).

The grid crosses the open quantity ``output.x`` with the figures' machines ``output.by``. On the
machine ``output.fit_on`` the policy's level is interpolated, linearly in log x, between the two
grid values that bracket its published level: that x is the fit x*. Every machine's level and
gain (policy / baseline) are then read off its own curve at x*, and each level is set against its
published one (the prediction error; on the fitted machine it is zero by construction).

The cells share seeds (``seeds: shared``), so replication r of every cell is one draw of the
whole vector of cell means; x* and each prediction are smooth functions of a few of those means,
and their intervals come from the delta method on the replications' influence values (the
gradient taken numerically), as every other interval of the artifact (docs/statistics.md).
"""

from __future__ import annotations

import math

import numpy as np

from simcore.report.data import published_for
from simcore.stats.intervals import Estimate, Interval
from simcore.stats.summary import metric_estimate


def curves(spec, reps, statistic) -> dict:
    """by value -> [(x, Estimate)] sorted by x, where ``statistic(rows)`` gives a cell's Estimate."""
    out: dict = {}
    x, by = spec["output"]["x"], spec["output"]["by"]
    for _, rows in reps.groupby("cell", sort=True):
        first = rows.iloc[0]
        out.setdefault(first[by], []).append((float(first[x]), statistic(rows)))
    return {k: sorted(v, key=lambda p: p[0]) for k, v in out.items()}


def level_of(spec):
    """The statistic 'level': the mean of output.metric under output.policy in a cell."""
    out = spec["output"]
    metric = next(m for m in spec.metrics if m["name"] == out["metric"])
    return lambda rows: metric_estimate(spec.model, rows[rows.policy == out["policy"]], metric)


def gain_policy(spec) -> str:
    """The policy whose gain over the baseline is read off at x*: the first other one."""
    return next(p for p in spec.policies if p != spec.baseline)


def ratio_of(spec):
    """The statistic 'gain': the gain policy's mean over the baseline's, paired in a cell."""
    metric = next(m for m in spec.metrics if m["name"] == spec["output"]["metric"])
    mean = lambda rows, p: metric_estimate(spec.model, rows[rows.policy == p], metric)  # noqa: E731
    return lambda rows: mean(rows, gain_policy(spec)) / mean(rows, spec.baseline)


def bracket(points: list, target: float) -> int | None:
    """Index k of the first pair (k, k + 1) of grid values whose levels bracket ``target``."""
    for k in range(len(points) - 1):
        a, b = points[k][1].value, points[k + 1][1].value
        if min(a, b) <= target <= max(a, b) and a != b:
            return k
    return None


def _log_x(x0, x1, y0, y1, level):
    """log x where the line through (log x0, y0) and (log x1, y1) reaches ``level``."""
    return math.log(x0) + (level - y0) / (y1 - y0) * (math.log(x1) - math.log(x0))


def _at(points, log_x):
    """The statistic read off the curve at log x, linearly in log x between grid values (the end
    segments extended)."""
    xs = [math.log(x) for x, _ in points]
    k = min(max(int(np.searchsorted(xs, log_x)) - 1, 0), len(xs) - 2)
    w = (log_x - xs[k]) / (xs[k + 1] - xs[k])
    return (1 - w) * points[k][1] + w * points[k + 1][1]


def delta(func, estimates: list[Estimate]) -> Estimate:
    """func(values) with influence values by the delta method (central differences)."""
    if len({e.influence.size for e in estimates}) != 1:
        raise ValueError("a fit needs the same replications in every cell (seeds: shared, no precision rounds)")
    values = np.array([e.value for e in estimates], float)
    value = float(func(values))
    influence = np.zeros_like(estimates[0].influence, dtype=float)
    for i, e in enumerate(estimates):
        h = 1e-6 * max(abs(values[i]), 1.0)
        up, down = values.copy(), values.copy()
        up[i] += h
        down[i] -= h
        influence = influence + (func(up) - func(down)) / (2 * h) * e.influence
    return Estimate(value, influence)


def fit(spec, reps) -> dict:
    """{'x': Interval of x* (NaN when the fitted machine's curve never reaches its published
    level), 'rows': per machine: by value, published level, level at the first grid value (the
    stated reading), predicted level at x* (Interval), relative error, gain at x* (Interval)}."""
    out, level = spec["output"], spec.confidence
    levels, ratios = curves(spec, reps, level_of(spec)), curves(spec, reps, ratio_of(spec))
    base = levels.get(out["fit_on"], [])
    target = published(spec, out["fit_on"])
    k = bracket(base, target) if target is not None else None
    nan = Interval(0, math.nan, math.nan, level, math.nan, math.nan)
    x_star = None
    if k is not None:
        pair = [base[k][1], base[k + 1][1]]
        x_star = delta(lambda v: _log_x(base[k][0], base[k + 1][0], v[0], v[1], target), pair)
    rows, stated = [], float(spec.grid[out["x"]][0])
    for name in (n for n in spec.grid[out["by"]] if n in levels):
        paper = published(spec, name)
        at_stated = next((e for x, e in levels[name] if x == stated), None)
        row = {"by": name, "published": paper, "stated": at_stated.interval(level) if at_stated else nan,
               "level": nan, "error": math.nan, "gain": nan}
        if x_star is not None:
            row["level"] = _predict(levels[name], x_star, base, k, target).interval(level)
            row["gain"] = _predict(ratios[name], x_star, base, k, target).interval(level)
            if paper:
                row["error"] = (row["level"].mean - paper) / paper
        rows.append(row)
    x_iv = Estimate(math.exp(x_star.value), x_star.influence * math.exp(x_star.value), "positive").interval(level) \
        if x_star is not None else nan
    return {"x": x_iv, "target": target, "rows": rows}


def _predict(points, x_star, base, k, target) -> Estimate:
    """The statistic of ``points`` at x*, with x*'s own uncertainty (it depends on the fitted
    machine's two bracketing means)."""
    estimates = [e for _, e in points] + [base[k][1], base[k + 1][1]]
    n = len(points)

    def at(v):
        log_x = _log_x(base[k][0], base[k + 1][0], v[n], v[n + 1], target)
        curve = [(x, float(value)) for (x, _), value in zip(points, v[:n])]
        return _at(curve, log_x)

    return delta(at, estimates)


def published(spec, name, than: str | None = None) -> float | None:
    """The published level of machine ``name`` (``than`` None), or the gain policy's published
    ratio over ``than`` there."""
    out = spec["output"]
    if than is None:
        return published_for(spec, {out["by"]: name}, out["policy"], out["metric"])
    for e in spec.data.get("published") or []:
        if (e.get("than") == than and e["policy"] == gain_policy(spec) and e["metric"] == out["metric"]
                and (e.get("where") or {}).get(out["by"]) == name):
            return float(e["value"])
    return None
