"""Is a small run consistent with the full-scale reference? (``simcore evaluate``, docs/statistics.md)

Two independent estimates of the same quantity, each with its own spread, are compared by a
test of "no difference", and the many comparisons of one evaluation are corrected together by
Holm's step-down method, so that the chance of naming any consistent quantity is at most
``alpha`` over the whole family (the summaries' means form one family, the claims another).

Under the null hypothesis both runs draw from one distribution: the same model, spec and seeds
(the fingerprints say whether they are), only more replications in the reference. So the two
runs share one variance, and it is estimated from both, each weighted by its degrees of freedom:
the reference's hundreds of replications carry it where a small run has three. A small run's
own spread is a poor estimate (three draws can spread ten times less than the population), and
a test that trusts it, Welch's, reads that luck as precision.

- A summary row (one cell, policy and metric) gives its mean, standard deviation and
  replications: Student's two-sample t test with the pooled variance.
- A claim gives its estimate and an interval at some level, built by whichever method suits its
  statistic (t, delta method, Clopper-Pearson, on the log scale for ratios). Its standard error
  is read back from the half of the interval that faces the other estimate, divided by the normal
  quantile of its level, on the scale the verdicts use (log for positive ratios). Intervals built
  with t quantiles or exact binomial bounds are wider than the normal ones, so this standard
  error is too large if anything and the test errs towards "consistent". With each run's
  replications n1 and n2, the standard errors are pooled like the variances above (se_i^2 n_i is
  run i's variance); without them they are added. Then z = difference / se, two-sided.

Where both spreads are zero (deterministic quantities) the two values must agree to 1e-9
relative, else p = 0.

Replications both runs hold (same seeds) are compared pair by pair. Across platforms, each pair's
relative difference (:func:`relative_differences`) is averaged over the values of one replication
that are not independent of each other, and :func:`shift_test` tests those means, one per
independent replication, for a shift; :func:`power` is its probability of detecting one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EXACT = 1e-9  # relative tolerance of two deterministic values


@dataclass(frozen=True)
class Comparison:
    """One quantity in both runs: the difference small - reference, its standard error, the test
    statistic (t or z) and the two-sided p value before correction."""

    difference: float
    se: float
    statistic: float
    p: float


def _exact(a: float, b: float) -> Comparison:
    same = math.isclose(a, b, rel_tol=EXACT, abs_tol=EXACT)
    return Comparison(a - b, 0.0, 0.0 if same else math.inf, 1.0 if same else 0.0)


def pooled_t(mean1: float, sd1: float, n1: int, mean2: float, sd2: float, n2: int) -> Comparison:
    """Student's t test of equal means from two summaries (n >= 2 each), with the variance
    pooled over both: ((n1 - 1) sd1^2 + (n2 - 1) sd2^2) / (n1 + n2 - 2), df n1 + n2 - 2."""
    from scipy import stats

    if n1 < 2 or n2 < 2:
        raise ValueError(f"the t test needs two replications on each side, not {n1} and {n2}")
    se = pooled_se(sd1 / math.sqrt(n1), n1, sd2 / math.sqrt(n2), n2)
    if se == 0:
        return _exact(mean1, mean2)
    test = stats.ttest_ind_from_stats(mean1, sd1, n1, mean2, sd2, n2, equal_var=True)
    return Comparison(mean1 - mean2, se, float(test.statistic), float(test.pvalue))


def pooled_se(se1: float, n1: float, se2: float, n2: float) -> float:
    """The standard error of a difference of two estimates from n1 and n2 replications whose own
    standard errors are se1 and se2, with one variance pooled over both runs (se_i^2 n_i is run
    i's); without two replications on each side, sqrt(se1^2 + se2^2)."""
    if not (n1 >= 2 and n2 >= 2):          # also False for NaN
        return math.hypot(se1, se2)
    variance = ((n1 - 1) * n1 * se1 ** 2 + (n2 - 1) * n2 * se2 ** 2) / (n1 + n2 - 2)
    return math.sqrt(variance * (1.0 / n1 + 1.0 / n2))


def interval_se(estimate: float, low: float, high: float, level: float, toward: float) -> float:
    """Standard error read back from an interval: the half facing ``toward`` over the normal
    quantile of ``level``."""
    from scipy import stats

    half = (high - estimate) if toward >= estimate else (estimate - low)
    if half <= 0:
        return 0.0
    if not 0 < level < 1:
        raise ValueError(f"an interval of width {high - low:g} needs a level in (0, 1), not {level}")
    return half / float(stats.norm.ppf(0.5 + level / 2.0))


def analysis_scale(statistic: str, *values: float) -> tuple[float, ...]:
    """The scale verdicts use: log for a ratio whose values are all positive, else as given."""
    if statistic == "ratio" and all(v > 0 for v in values):
        return tuple(math.log(v) for v in values)
    return values


#: statistics whose two runs' errors are added in quadrature, not pooled: a slope's variance is
#: sigma^2 / Sxx, and the spread of its regressor over n replications (Sxx / n) is not one quantity
#: across runs when the regressor is heavy-tailed (amir's slowdowns), so n se^2 is no common variance
UNPOOLED = ("slope",)


def interval_z(small: tuple[float, float, float, float], reference: tuple[float, float, float, float],
               statistic: str, n: tuple[float, float] = (math.nan, math.nan)) -> Comparison:
    """z test of equal values from two (estimate, low, high, level) intervals of one statistic,
    made from ``n`` replications (pooled, see :func:`pooled_se`; a statistic of ``UNPOOLED``: the
    two errors in quadrature)."""
    (e1, lo1, hi1, lv1), (e2, lo2, hi2, lv2) = small, reference
    e1, lo1, hi1, e2, lo2, hi2 = analysis_scale(statistic, e1, lo1, hi1, e2, lo2, hi2)
    se1, se2 = interval_se(e1, lo1, hi1, lv1, e2), interval_se(e2, lo2, hi2, lv2, e1)
    se = math.hypot(se1, se2) if statistic in UNPOOLED else pooled_se(se1, n[0], se2, n[1])
    if se == 0:
        return _exact(e1, e2)
    from scipy import stats

    z = (e1 - e2) / se
    return Comparison(e1 - e2, se, z, float(2.0 * stats.norm.sf(abs(z))))


def holm(pvalues) -> np.ndarray:
    """Holm's adjusted p values: with p_(1) <= ... <= p_(m), the k-th is max over j <= k of
    min(1, (m - j + 1) p_(j)). Rejecting those <= alpha is Holm's step-down test at family-wise
    level alpha (reject while p_(k) <= alpha / (m - k + 1); stop at the first that is not)."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    steps = np.minimum(1.0, (len(p) - np.arange(len(p))) * p[order])
    adjusted = np.empty(len(p))
    adjusted[order] = np.maximum.accumulate(steps) if len(p) else steps
    return adjusted


# Two values of one replication that differ by less than this, relative to the larger, differ in
# floating point's last bits (and the tables' ten significant digits), not in the model.
LAST_BITS = 1e-8


def last_bits(small: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per replication, whether the two values agree to :data:`LAST_BITS` (NaN on both sides agrees)."""
    small, reference = np.asarray(small, dtype=float), np.asarray(reference, dtype=float)
    both_nan = np.isnan(small) & np.isnan(reference)
    with np.errstate(invalid="ignore"):
        close = np.abs(small - reference) <= LAST_BITS * np.maximum(np.abs(small), np.abs(reference))
    return both_nan | close


def relative_differences(small, reference) -> np.ndarray:
    """Per replication, the difference of the two values over the mean of their magnitudes,
    2 (small - reference) / (|small| + |reference|), in [-2, 2]: 0 where they agree to
    :data:`LAST_BITS` (NaN on both sides, or zero on both, agrees), NaN where only one side has a
    value. A shift that multiplies every value by 1 + s gives :func:`relative_shift` of s."""
    small, reference = np.asarray(small, dtype=float), np.asarray(reference, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = 2.0 * (small - reference) / (np.abs(small) + np.abs(reference))
    return np.where(last_bits(small, reference), 0.0, d)


def relative_shift(s: float) -> float:
    """The relative difference (:func:`relative_differences`) of a value multiplied by 1 + s:
    2 s / (2 + s)."""
    return 2.0 * s / (2.0 + s)


def shift_test(d) -> Comparison:
    """Student's t test of a mean shift from independent relative differences ``d`` (one per
    replication), k - 1 degrees of freedom. None differs from 0 (or none given): p = 1; a single
    replication cannot tell a shift from chance: p = 1; the same difference in every replication,
    to :data:`LAST_BITS`: p = 0; a NaN: p = 0."""
    from scipy import stats

    d = np.asarray(d, dtype=float)
    if np.isnan(d).any():
        return Comparison(math.nan, math.inf, math.inf, 0.0)
    if not d.any():
        return Comparison(0.0, 0.0, 0.0, 1.0)
    mean = float(d.mean())
    if d.size == 1:
        return Comparison(mean, math.inf, math.nan, 1.0)
    if d.max() - d.min() <= LAST_BITS:
        return Comparison(mean, 0.0, math.inf, 0.0)
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    t = mean / se
    return Comparison(mean, se, t, float(2.0 * stats.t.sf(abs(t), d.size - 1)))


def power(se: float, k: int, alpha: float, shift: float) -> float:
    """The probability that :func:`shift_test` at level ``alpha`` detects a true mean shift
    ``shift`` from ``k`` differences of standard error ``se`` (noncentral t with k - 1 degrees of
    freedom and noncentrality shift / se, both tails). 1 when se is 0 (the replications agree
    among themselves: a shift shows the same in each); 0 from one replication (the test never
    rejects); NaN without differences, or without a finite se."""
    from scipy import stats

    if k < 1:
        return math.nan
    if k == 1:
        return 0.0
    if not math.isfinite(se):
        return math.nan
    if se == 0:
        return 1.0
    df, critical = k - 1, float(stats.t.ppf(1 - alpha / 2, k - 1))
    nc = shift / se
    found = float(stats.nct.sf(critical, df, nc) + stats.nct.cdf(-critical, df, nc))
    return found if math.isfinite(found) else 1.0     # SciPy's NaN for a noncentrality beyond ~1e12: certain
