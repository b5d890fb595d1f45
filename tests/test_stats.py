"""Replication statistics against direct computations and known coverage."""

import numpy as np
import pytest
from scipy import stats

from simcore.stats import mean_interval, paired_difference, ratio_estimator, ratio_of_means
from simcore.stats.claims import _verdict


def test_mean_interval_matches_scipy_t_interval():
    x = np.array([3.1, 2.7, 3.9, 4.2, 3.3, 2.8])
    iv = mean_interval(x, 0.9)
    low, high = stats.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert iv.mean == pytest.approx(x.mean())
    assert (iv.low, iv.high) == pytest.approx((low, high))


def test_paired_difference_is_interval_of_differences():
    rng = np.random.default_rng(1)
    common = rng.exponential(size=50)
    a, b = common + 0.1 + rng.normal(0, 0.01, 50), common
    paired = paired_difference(a, b)
    assert paired.low > 0.09 and paired.high < 0.11  # common random numbers cancel the noise
    direct = mean_interval(a - b)
    assert (paired.mean, paired.low, paired.high) == pytest.approx((direct.mean, direct.low, direct.high))


def test_interval_coverage_close_to_nominal():
    rng = np.random.default_rng(7)
    hits = sum(mean_interval(rng.exponential(2.0, 30), 0.9).excludes(2.0) is False for _ in range(2000))
    assert 0.87 < hits / 2000 < 0.93


def test_ratio_estimator_equals_sum_ratio_and_covers():
    rng = np.random.default_rng(3)
    den = rng.integers(50, 150, 400).astype(float)
    num = den * 2.5 + rng.normal(0, 5, 400)
    iv = ratio_estimator(num, den)
    assert iv.mean == pytest.approx(num.sum() / den.sum())
    assert iv.low < 2.5 < iv.high


def test_ratio_of_means_for_paired_samples():
    rng = np.random.default_rng(4)
    b = rng.exponential(10, 500)
    a = 1.5 * b
    iv = ratio_of_means(a, b)
    assert iv.mean == pytest.approx(1.5)
    assert iv.high - iv.low < 1e-9


@pytest.mark.parametrize("kind,low,high,threshold,expected", [
    ("less", -2, -1, 0, "reproduced"), ("less", -1, 1, 0, "not significant"), ("less", 1, 2, 0, "contradicted"),
    ("greater", 1, 2, 0, "reproduced"), ("ratio-above", 1.1, 1.3, 1.0, "reproduced"),
    ("ratio-below", 1.1, 1.3, 1.0, "contradicted"), ("share-less", 0.95, 0.99, 0.9, "reproduced"),
])
def test_verdicts(kind, low, high, threshold, expected):
    assert _verdict(kind, low, high, threshold) == expected
