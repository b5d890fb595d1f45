"""Confidence intervals over independent replications.

Every estimator here is a smooth function of replication means, so its interval comes from
the same recipe: an estimate, one linearised influence value per replication (the delta
method), and a Student-t interval on those. For a plain mean the influence values are the
centred observations and the interval is the textbook t-interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


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


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its per-replication influence values."""

    value: float
    influence: np.ndarray

    def interval(self, level: float) -> Interval:
        n = self.influence.size
        if n < 2:
            return Interval(n, self.value, math.nan, level, math.nan, math.nan)
        sd = float(self.influence.std(ddof=1))
        half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
        return Interval(n, self.value, sd, level, self.value - half, self.value + half)

    def __sub__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.value - other.value, self.influence - other.influence)

    def __truediv__(self, other: "Estimate") -> "Estimate":
        ratio = self.value / other.value
        return Estimate(ratio, (self.influence - ratio * other.influence) / other.value)


def mean_estimate(values) -> Estimate:
    x = np.asarray(values, dtype=float)
    return Estimate(float(x.mean()), x - x.mean())


def ratio_estimate(numerators, denominators) -> Estimate:
    """sum(num)/sum(den), e.g. the mean slowdown over all jobs of all replications."""
    y, x = np.asarray(numerators, dtype=float), np.asarray(denominators, dtype=float)
    ratio = float(y.sum() / x.sum())
    return Estimate(ratio, (y - ratio * x) / x.mean())


def mean_interval(values, level: float = 0.95) -> Interval:
    """Student-t interval for the mean of independent replications."""
    return mean_estimate(values).interval(level)


def paired_difference(values, baseline, level: float = 0.95) -> Interval:
    """Interval for mean(values) - mean(baseline), replications paired by index (common random numbers)."""
    a, b = np.asarray(values, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired samples must have the same length")
    return (mean_estimate(a) - mean_estimate(b)).interval(level)


def ratio_estimator(numerators, denominators, level: float = 0.95) -> Interval:
    """Interval for sum(num)/sum(den) over replications (delta method)."""
    return ratio_estimate(numerators, denominators).interval(level)


def ratio_of_means(values, baseline, level: float = 0.95) -> Interval:
    """Interval for mean(values)/mean(baseline), replications paired by index."""
    return (mean_estimate(values) / mean_estimate(baseline)).interval(level)


def required_replications(values, rel_half_width: float, level: float = 0.95) -> int:
    """Replications needed for a relative half-width target, from a pilot sample."""
    iv = mean_interval(values, level)
    if iv.n < 2 or iv.mean == 0 or not math.isfinite(iv.sd):
        return iv.n
    z = stats.t.ppf(0.5 + level / 2, iv.n - 1)
    return max(iv.n, math.ceil((z * iv.sd / (rel_half_width * abs(iv.mean))) ** 2))
