"""Replication statistics against direct computations and known coverage."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from simcore.models import RANGES, get_model
from simcore.stats import mean_estimate, mean_interval, paired_difference, ratio_estimator, ratio_of_means
from simcore.stats.summary import metric_range


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


def test_a_ratio_with_no_denominator_is_undefined_without_a_warning():
    """A mean over executions of a kind none of the replications was (every denominator 0, e.g.
    amir's executions with a job larger than the cluster in a short run): NaN, quietly; one
    replication with a denominator makes it that replication's quotient."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        iv = ratio_estimator([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert math.isnan(iv.mean) and math.isnan(iv.low) and math.isnan(iv.high)
    assert ratio_estimator([0.0, 6.0, 0.0], [0.0, 1.0, 0.0]).mean == 6.0


def test_ratio_of_means_for_paired_samples():
    rng = np.random.default_rng(4)
    b = rng.exponential(10, 500)
    a = 1.5 * b
    iv = ratio_of_means(a, b)
    assert iv.mean == pytest.approx(1.5)
    assert iv.high - iv.low < 1e-9


# ---------------------------------------------------------------- intervals that respect the range

def _t(level, n):
    return stats.t.ppf(0.5 + level / 2, n - 1)


def _expit(z):
    return 1 / (1 + math.exp(-z))


def test_positive_interval_is_the_t_interval_of_log_mean_by_the_delta_method():
    x = [2.0, 4.0, 9.0]  # mean 5, sd sqrt(13)
    h = _t(0.95, 3) * math.sqrt(13) / (5 * math.sqrt(3))  # sd of log(mean) = sd / mean
    iv = mean_interval(x, 0.95, "positive")
    assert (iv.mean, iv.sd) == pytest.approx((5.0, math.sqrt(13)))
    assert (iv.low, iv.high) == pytest.approx((math.exp(math.log(5) - h), math.exp(math.log(5) + h)))
    assert mean_interval(x, 0.95, "nonnegative") == iv


def test_slowdown_sample_that_gave_a_negative_bound_now_has_a_positive_one():
    """amir-table2 at smoke scale: enhanced PVM's slowdowns printed as 42.67 [-8.44, 93.78]."""
    x = [1.132, 3.133, 1.219, 137.299, 7.129, 45.115, 5.83, 140.52]
    old = mean_interval(x)
    assert old.low < 0  # the symmetric interval of the report
    iv = mean_interval(x, 0.95, "positive")
    assert 0 < iv.low < iv.mean < iv.high
    assert iv.low * iv.high == pytest.approx(iv.mean ** 2)  # symmetric on the log scale


def test_positive_metric_with_a_huge_spread_keeps_a_positive_lower_bound():
    iv = mean_interval([1e-3, 1e3, 2e-3, 5e-4], 0.99, "positive")
    assert iv.low > 0 and iv.high > iv.mean


def test_share_interval_is_the_t_interval_of_logit_mean_and_stays_below_one():
    """mehta-table2 at smoke scale: a share of tasks printed as 0.995 [0.9735, 1.017]."""
    x = [0.985, 1.0, 1.0]
    assert mean_interval(x).high > 1
    m, sd = 0.995, np.std(x, ddof=1)
    h = _t(0.95, 3) * sd / (m * (1 - m) * math.sqrt(3))  # sd of logit(mean) = sd / (m (1 - m))
    logit = math.log(m / (1 - m))
    iv = mean_interval(x, 0.95, "share")
    assert (iv.low, iv.high) == pytest.approx((_expit(logit - h), _expit(logit + h)))
    assert 0 < iv.low < m < iv.high < 1


@pytest.mark.parametrize("range_", RANGES)
@pytest.mark.parametrize("value", [0.0, 0.5, 1.0])
def test_all_replications_equal_give_a_point_interval(range_, value):
    """Every share exactly 1 (or 0), every count 0: zero width, whatever the scale."""
    iv = mean_interval([value] * 4, 0.95, range_)
    assert (iv.low, iv.mean, iv.high) == (value, value, value)


@pytest.mark.parametrize("range_", RANGES)
def test_fewer_than_two_replications_give_no_interval(range_):
    iv = mean_interval([0.5], 0.95, range_)
    assert iv.mean == 0.5 and math.isnan(iv.low) and math.isnan(iv.high) and math.isnan(iv.sd)


def test_nonnegative_metric_with_zeros():
    iv = mean_interval([0.0, 0.0, 3.0], 0.95, "nonnegative")
    assert 0 < iv.low < 1.0 < iv.high
    assert iv.low * iv.high == pytest.approx(1.0)  # geometric midpoint at the mean 1
    zero = mean_interval([0.0, 0.0, 0.0], 0.95, "nonnegative")
    assert (zero.low, zero.high) == (0.0, 0.0)


def test_shares_with_values_exactly_zero_and_one():
    iv = mean_interval([0.0, 1.0, 1.0, 0.0, 1.0], 0.9, "share")
    assert 0 < iv.low < 0.6 < iv.high < 1


def test_a_share_whose_mean_rounds_to_one_is_the_point_one():
    iv = mean_interval([1.0, 1.0, 1.0 - 2.0 ** -53], 0.95, "share")
    assert iv.sd > 0 and (iv.low, iv.mean, iv.high) == (1.0, 1.0, 1.0)


def test_an_estimate_outside_its_range_is_an_error():
    with pytest.raises(ValueError, match="share"):
        mean_interval([1.2, 1.4], 0.95, "share")
    with pytest.raises(ValueError, match="positive"):
        mean_interval([-1.0, -3.0], 0.95, "positive")
    with pytest.raises(ValueError, match="range"):
        mean_estimate([1.0, 2.0], "count")


def test_paired_difference_of_positive_metrics_stays_symmetric():
    a, b = np.array([3.0, 5.0, 4.0, 9.0]), np.array([4.0, 4.5, 6.0, 8.0])
    d = a - b
    half = _t(0.9, 4) * d.std(ddof=1) / 2
    iv = (mean_estimate(a, "positive") - mean_estimate(b, "positive")).interval(0.9)
    assert (iv.mean, iv.low, iv.high) == pytest.approx((d.mean(), d.mean() - half, d.mean() + half))
    assert iv.low < 0 < iv.high
    assert paired_difference(a, b, 0.9) == iv


def test_ratio_of_means_is_on_the_log_scale():
    a, b = np.array([3.0, 5.0, 4.0, 9.0]), np.array([4.0, 4.5, 6.0, 8.0])
    r = a.mean() / b.mean()
    log_influence = (a - a.mean()) / a.mean() - (b - b.mean()) / b.mean()  # of log(mean a) - log(mean b)
    h = _t(0.95, 4) * log_influence.std(ddof=1) / 2
    iv = ratio_of_means(a, b)
    assert (iv.mean, iv.low, iv.high) == pytest.approx((r, r * math.exp(-h), r * math.exp(h)))


def test_ratio_of_sums_that_is_a_share_stays_in_the_unit_interval():
    attempts = np.array([300.0, 520.0, 410.0])
    failed = attempts - np.array([0.0, 1.0, 3.0])
    r = failed.sum() / attempts.sum()
    influence = (failed - r * attempts) / attempts.mean()
    h = _t(0.95, 3) * influence.std(ddof=1) / (r * (1 - r) * math.sqrt(3))
    iv = ratio_estimator(failed, attempts, 0.95, "share")
    logit = math.log(r / (1 - r))
    assert (iv.low, iv.high) == pytest.approx((_expit(logit - h), _expit(logit + h)))
    assert iv.high < 1 < ratio_estimator(failed, attempts, 0.95, "positive").high


def test_spec_metric_ranges():
    numa, cluster = get_model("numa"), get_model("cluster")
    assert metric_range(numa, {"name": "share_level_0"}) == "share"
    assert metric_range(numa, {"name": "migrations"}) == "nonnegative"
    assert metric_range(numa, {"name": "lb_failed_share", "ratio": ["lb_failed", "lb_attempts"]}) == "share"
    assert metric_range(numa, {"name": "x", "ratio": ["lb_failed", "lb_attempts_live"]}) == "positive"
    assert metric_range(cluster, {"name": "slowdown_by_job", "ratio": ["slowdown_sum", "jobs"]}) == "positive"


samples = st.lists(st.floats(1e-6, 1e6), min_size=2, max_size=30)
levels = st.sampled_from([0.8, 0.9, 0.95, 0.99, 0.999])


@settings(max_examples=300, deadline=None)
@given(samples, levels)
def test_positive_intervals_have_a_positive_lower_bound(x, level):
    iv = mean_interval(x, level, "positive")
    assert 0 < iv.low <= iv.mean <= iv.high < math.inf


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=30), levels)
def test_share_intervals_stay_in_the_unit_interval(x, level):
    iv = mean_interval(x, level, "share")
    assert 0 <= iv.low <= iv.mean <= iv.high <= 1


# ------------------------------------------- the spread of replications, the mean of independent cells

@pytest.mark.parametrize("c", [1.0, 0.5])
def test_sd_estimate_and_its_influence_values_by_hand(c):
    """x = c (1, 2, 4): mean 7c/3, deviations c (-4, -1, 5) / 3, squared c^2 (16, 1, 25) / 9, summing
    to 14 c^2 / 3, so s = c sqrt(7/3) (ddof 1: 14/3 / 2 = 7/3) and the plug-in variance v = 14 c^2 / 9.
    Influence ((x - m)^2 - v) / (2 s) = c^2 (2, -13, 11) / 9 / (2 c sqrt(7/3)) = c (2, -13, 11) /
    (18 sqrt(7/3)). With c = 0.5, s = 0.764 lies below 1 and the influence values are still these
    (only s = 0 gives zeros)."""
    from simcore.stats.intervals import sd_estimate

    est = sd_estimate([c * 1.0, c * 2.0, c * 4.0])
    root = math.sqrt(7 / 3)
    assert (est.value, est.range) == (pytest.approx(c * root, rel=1e-12), "nonnegative")
    assert est.influence == pytest.approx(c * np.array([2.0, -13.0, 11.0]) / (18 * root), rel=1e-12)


def test_sd_estimate_of_two_three_equal_and_one_replication():
    """Two values 1, 3: s = sqrt 2 (ddof 1: (1 + 1) / 1 = 2); both squared deviations equal the
    plug-in variance 1, so the influence values are 0 and the interval is the point [sqrt 2, sqrt 2].
    Three equal values: s = 0 and the influence values are 0 (not 0 / 0), an interval of sd 0 at
    [0, 0]. One value: s is NaN and the influence 0, quietly: numpy is not asked for a ddof-1 spread
    of one value (which would warn; warnings are errors here)."""
    from simcore.stats.intervals import sd_estimate

    two = sd_estimate([1.0, 3.0])
    assert two.value == pytest.approx(math.sqrt(2), rel=1e-12)
    assert two.influence.tolist() == [0.0, 0.0]
    iv = two.interval(0.95)
    assert (iv.low, iv.high) == (pytest.approx(math.sqrt(2), rel=1e-12), pytest.approx(math.sqrt(2), rel=1e-12))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flat = sd_estimate([2.0, 2.0, 2.0])
        one = sd_estimate([3.0])
    assert (flat.value, flat.influence.tolist()) == (0.0, [0.0, 0.0, 0.0])
    iv = flat.interval(0.95)
    assert (iv.sd, iv.low, iv.high) == (0.0, 0.0, 0.0)
    assert math.isnan(one.value) and one.influence.tolist() == [0.0]


def test_mean_of_independent_with_a_cell_of_one_replication_has_no_interval():
    """Cells [5] and [1, 2, 3]: mean (5 + 2) / 2 = 3.5, n the fewer replications (1), level as asked
    (0.9); sd, low and high NaN."""
    from simcore.stats.intervals import mean_of_independent

    iv = mean_of_independent([mean_estimate([5.0]), mean_estimate([1.0, 2.0, 3.0])], 0.9)
    assert (iv.n, iv.mean, iv.level) == (1, 3.5, 0.9)
    assert math.isnan(iv.sd) and math.isnan(iv.low) and math.isnan(iv.high)


def test_mean_of_independent_cells_of_different_ranges_is_symmetric():
    """A 'share' cell [0.1, 0.2, 0.3] (mean 0.2, variance 0.01) and a 'positive' one [0.2, 0.4, 0.6]
    (mean 0.4, variance 0.04): no common range, so the interval is the real one, symmetric about
    m = 0.3. Squared standard errors 0.01/3 and 0.04/3: se = sqrt(0.05/3) / 2; Welch-Satterthwaite
    df = (0.05/3)^2 / ((0.01/3)^2 / 2 + (0.04/3)^2 / 2) = 0.0025 / 0.00085 = 50/17. Taken on the
    logit or the log scale it would not be symmetric."""
    from simcore.stats.intervals import mean_of_independent

    cells = [mean_estimate([0.1, 0.2, 0.3], "share"), mean_estimate([0.2, 0.4, 0.6], "positive")]
    half = stats.t.ppf(0.975, 50 / 17) * math.sqrt(0.05 / 3) / 2
    iv = mean_of_independent(cells, 0.95)
    assert (iv.mean, iv.low, iv.high) == pytest.approx((0.3, 0.3 - half, 0.3 + half), rel=1e-9)


def test_mean_of_independent_does_not_depend_on_the_unit():
    """Cells [1, 2, 3] and [2, 3, 4] (variances 1 and 1, Welch df (2/3)^2 / (2 (1/3)^2 / 2) = 4)
    give the interval 2.5 +- t_{0.975, 4} sqrt(2/3) / 2; in units 1e100 times smaller the same
    interval, scaled: the degrees of freedom cannot change with the unit (the squares of the
    squared standard errors, 1e-401, would underflow to 0 if taken unscaled)."""
    from simcore.stats.intervals import mean_of_independent

    half = stats.t.ppf(0.975, 4) * math.sqrt(2 / 3) / 2
    for unit in (1.0, 1e-100):
        cells = [mean_estimate([1 * unit, 2 * unit, 3 * unit]), mean_estimate([2 * unit, 3 * unit, 4 * unit])]
        iv = mean_of_independent(cells)
        assert (iv.low, iv.high) == pytest.approx(((2.5 - half) * unit, (2.5 + half) * unit), rel=1e-9, abs=0)

def test_mean_of_paired_keeps_the_common_range_and_is_real_for_mixed_ranges():
    """Two 'positive' cells [1, 2, 3] and [3, 4, 5] over the same replications: mean 3, influence
    the mean of (-1, 0, 1) and (-1, 0, 1) = (-1, 0, 1), sd 1, range 'positive': the interval is
    taken on the log scale, 3 exp(+- h / 3) with h = t(0.975, 2) / sqrt 3 (not symmetric). A 'share'
    cell [0.1, 0.2, 0.3] with a 'positive' one [0.2, 0.4, 0.6]: no common range, so 'real'; mean
    0.3, influence the mean of (-0.1, 0, 0.1) and (-0.2, 0, 0.2) = (-0.15, 0, 0.15), sd 0.15, the
    symmetric interval 0.3 +- t(0.975, 2) x 0.15 / sqrt 3."""
    from simcore.stats.intervals import mean_of_paired

    t = stats.t.ppf(0.975, 2)
    same = mean_of_paired([mean_estimate([1.0, 2.0, 3.0], "positive"), mean_estimate([3.0, 4.0, 5.0], "positive")])
    assert (same.value, same.range, same.influence.tolist()) == (3.0, "positive", [-1.0, 0.0, 1.0])
    h = t / math.sqrt(3)
    iv = same.interval(0.95)
    assert (iv.low, iv.high) == pytest.approx((3 * math.exp(-h / 3), 3 * math.exp(h / 3)), rel=1e-12)
    mixed = mean_of_paired([mean_estimate([0.1, 0.2, 0.3], "share"), mean_estimate([0.2, 0.4, 0.6], "positive")])
    assert (mixed.value, mixed.range) == (pytest.approx(0.3), "real")
    assert mixed.influence == pytest.approx([-0.15, 0.0, 0.15])
    h = t * 0.15 / math.sqrt(3)
    iv = mixed.interval(0.95)
    assert (iv.low, iv.high) == pytest.approx((0.3 - h, 0.3 + h), rel=1e-12)
