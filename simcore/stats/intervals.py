"""Confidence intervals over independent replications.

Every estimator here is a smooth function of replication means, so its interval comes from
the same recipe: an estimate, one linearised influence value per replication (the delta
method), and a Student-t interval on those. For a plain mean the influence values are the
centred observations and the interval is the textbook t-interval.

The t-interval is taken on a scale that fits the estimate's ``range``, so that it never leaves
the values the quantity can take (the delta method for g(m), mapped back):

- 'real' (paired differences, anything that may be negative): m +- t sd / sqrt(n), symmetric;
- 'positive', 'nonnegative' (times, slowdowns, counts, ratios policy/baseline):
  g = log, m exp(+- t sd / (m sqrt n));
- 'share' (in [0, 1]; a mean of per-replication shares, or a ratio of sums such as failed over
  all attempts): g = logit, expit(logit m +- t sd / (m (1 - m) sqrt n)). Wilson or
  Clopper-Pearson would treat every attempt or task as an independent trial; here the
  replications are the independent units, as for every other metric. (A share of
  replications, a count of successes over independent trials, gets Clopper-Pearson in
  :mod:`simcore.stats.claims`.)

With zero spread (all replications equal: every share 1, every count 0) the interval is the
point [m, m]; so is it for a mean at a bound of the range (0, or 1 for a share), as all its
values sit there: a nonnegative metric whose mean is 0 gets [0, 0]. Fewer than two replications
give a NaN interval. An estimate outside its range is an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.vocabulary.parameters import RANGES


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval."""

    n: int
    mean: float
    sd: float
    level: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def excludes(self, value: float) -> bool:
        return value < self.low or value > self.high


def _bounds(m: float, half: float, range_: str) -> tuple[float, float]:
    """The interval m +- half taken on the scale of ``range_`` (``half`` on the original scale)."""
    if range_ == "real" or not math.isfinite(m):
        return m - half, m + half
    top = 1.0 if range_ == "share" else math.inf
    if not 0 <= m <= top:
        raise ValueError(f"a {range_} estimate {m} lies outside [0, {top}]")
    if half == 0 or m in (0.0, top):  # all replications equal, or all at a bound (up to rounding)
        return m, m
    if range_ == "share":
        from scipy import special  # imported here: scipy costs a second, and spec checks import this module

        h = half / (m * (1 - m))
        return float(special.expit(special.logit(m) - h)), float(special.expit(special.logit(m) + h))
    h = half / m
    return m * math.exp(-h), m * math.exp(h)


@dataclass(frozen=True)
class Estimate:
    """A point estimate, its per-replication influence values and its range (see the module)."""

    value: float
    influence: np.ndarray
    range: str = "real"

    def __post_init__(self):
        if self.range not in RANGES:
            raise ValueError(f"unknown range {self.range!r} (use one of {', '.join(RANGES)})")

    def interval(self, level: float) -> Interval:
        n = self.influence.size
        if n < 2:
            return Interval(n, self.value, math.nan, level, math.nan, math.nan)
        from scipy import stats

        sd = float(self.influence.std(ddof=1))
        half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
        return Interval(n, self.value, sd, level, *_bounds(self.value, half, self.range))

    def __sub__(self, other: "Estimate") -> "Estimate":
        """The paired difference: real, whatever the ranges of the two."""
        return Estimate(self.value - other.value, self.influence - other.influence)

    def __truediv__(self, other: "Estimate") -> "Estimate":
        """The paired ratio: positive when neither side can be negative, else real."""
        ratio = self.value / other.value
        return Estimate(ratio, (self.influence - ratio * other.influence) / other.value,
                        quotient_range(self.range, other.range))


def quotient_range(numerator: str, denominator: str) -> str:
    """The range of a ratio of two quantities with these ranges."""
    return "real" if "real" in (numerator, denominator) else "positive"


def mean_estimate(values, range_: str = "real") -> Estimate:
    x = np.asarray(values, dtype=float)
    return Estimate(float(x.mean()), x - x.mean(), range_)


def ratio_estimate(numerators, denominators, range_: str = "positive") -> Estimate:
    """sum(num)/sum(den), e.g. the mean slowdown over all jobs of all replications ('positive'),
    or the share of failed attempts among all attempts ('share'). Undefined (NaN) when no
    replication has a denominator, e.g. a mean over executions of a kind none of them was."""
    y, x = np.asarray(numerators, dtype=float), np.asarray(denominators, dtype=float)
    if not x.any():
        return Estimate(math.nan, np.full(x.shape, math.nan), range_)
    ratio = float(y.sum() / x.sum())
    return Estimate(ratio, (y - ratio * x) / x.mean(), range_)


def sd_estimate(values) -> Estimate:
    """The standard deviation of the replications' values (ddof 1), 'nonnegative'. It is a smooth
    function of the means of x and x^2, so its influence values are ((x - m)^2 - v) / (2 s), with v
    the plug-in variance (the delta method; zero where every value is equal)."""
    x = np.asarray(values, dtype=float)
    s = float(x.std(ddof=1)) if x.size > 1 else math.nan
    centred = (x - x.mean()) ** 2
    influence = (centred - centred.mean()) / (2 * s) if s > 0 else np.zeros_like(x)
    return Estimate(s, influence, "nonnegative")


def mean_interval(values, level: float = 0.95, range_: str = "real") -> Interval:
    """Student-t interval for the mean of independent replications, on the scale of ``range_``."""
    return mean_estimate(values, range_).interval(level)


def paired_difference(values, baseline, level: float = 0.95) -> Interval:
    """Interval for mean(values) - mean(baseline), replications paired by index (common random numbers)."""
    if np.shape(values) != np.shape(baseline):
        raise ValueError("paired samples must have the same length")
    return (mean_estimate(values) - mean_estimate(baseline)).interval(level)


def ratio_estimator(numerators, denominators, level: float = 0.95, range_: str = "positive") -> Interval:
    """Interval for sum(num)/sum(den) over replications (delta method)."""
    return ratio_estimate(numerators, denominators, range_).interval(level)


def ratio_of_means(values, baseline, level: float = 0.95) -> Interval:
    """Interval for mean(values)/mean(baseline) of positive quantities, replications paired by
    index, on the log scale."""
    return (mean_estimate(values, "positive") / mean_estimate(baseline, "positive")).interval(level)


def mean_of_paired(estimates) -> Estimate:
    """The mean of k estimates over the same replications (cells sharing seeds: replication r of
    each drew the same random numbers): its influence values are the mean of theirs, so the
    interval counts their correlation. The range is their common one (else real)."""
    ranges = {e.range for e in estimates}
    influence = np.mean([e.influence for e in estimates], axis=0)
    return Estimate(sum(e.value for e in estimates) / len(estimates), influence,
                    ranges.pop() if len(ranges) == 1 else "real")


def mean_of_independent(estimates, level: float = 0.95) -> Interval:
    """Interval for the mean of k independent estimates (one per grid cell, each from its own
    replications): standard error sqrt(sum of se_c^2) / k with Welch-Satterthwaite degrees of
    freedom, on the scale of the estimates' common range. ``n`` is the fewest replications of a
    cell (more replications per cell shrink the interval as 1/sqrt(n))."""
    ns = [e.influence.size for e in estimates]
    k = len(estimates)
    m = sum(e.value for e in estimates) / k
    if min(ns) < 2:
        return Interval(min(ns), m, math.nan, level, math.nan, math.nan)
    var = [float(e.influence.var(ddof=1)) / n for e, n in zip(estimates, ns)]
    se = math.sqrt(sum(var)) / k
    top = max(var)
    w = [v / top for v in var] if top > 0 else var   # scaled, so that tiny variances cannot underflow
    denom = sum(v * v / (n - 1) for v, n in zip(w, ns))
    df = sum(w) ** 2 / denom if denom > 0 else min(ns) - 1
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, df)) * se
    ranges = {e.range for e in estimates}
    range_ = ranges.pop() if len(ranges) == 1 else "real"
    return Interval(min(ns), m, se * math.sqrt(min(ns)), level, *_bounds(m, half, range_))


def required_replications(values, rel_half_width: float, level: float = 0.95) -> int:
    """Replications needed for a relative half-width target, from a pilot sample."""
    from scipy import stats

    iv = mean_interval(values, level)
    if iv.n < 2 or iv.mean == 0 or not math.isfinite(iv.sd):
        return iv.n
    z = stats.t.ppf(0.5 + level / 2, iv.n - 1)
    return max(iv.n, math.ceil((z * iv.sd / (rel_half_width * abs(iv.mean))) ** 2))
