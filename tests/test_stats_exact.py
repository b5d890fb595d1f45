"""Summary rows and intervals against values computed by hand from their formulas.

Three replications at confidence 0.9: t = t_{0.95, 2} = 2.919986 (scipy only supplies the
quantile). Positive metrics get m exp(+- t sd / (m sqrt 3)); paired differences m +- t sd / sqrt 3.
"""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simcore.errors import InputError
from simcore.models import Metric
from simcore.stats.intervals import (
    Interval,
    mean_estimate,
    paired_difference,
    quotient_range,
    ratio_estimate,
    required_replications,
    sd_estimate,
)
from simcore.stats.summary import finite, metric_range, published_value, replication_table, summarize

T = float(stats.t.ppf(0.95, 2))
MODEL = SimpleNamespace(METRICS={"x": Metric("x", "positive"), "num": Metric("n", "positive"),
                                 "den": Metric("d", "positive"), "part": Metric("p", "nonnegative", part_of="den"),
                                 "gap": Metric("g", "real")})


def _spec(**extra):
    data = {"published": [
        {"policy": "base", "metric": "x", "value": 1.0, "source": "T1"},          # another policy
        {"policy": "worse", "metric": "x", "than": "base", "value": 2.0, "source": "T1"},  # a ratio
        {"metric": "num", "value": 3.0, "source": "T1"},                          # another metric
        {"metric": "x", "value": 12.0, "source": "Table 9", "where": {"mu": 1.0}},  # any policy
    ]}
    return SimpleNamespace(id="toy", model=MODEL, grid={"mu": [1.0, 100.0]}, policies=["base", "worse"],
                           baseline="base", metrics=[{"name": "x"}], confidence=0.9, data=data, **extra)


def _raw():
    """Cell 1 (mu = 100) first, so the output's cell order is the sort's, not the input's."""
    rows = []
    for cell, mu, base, worse in ((1, 100.0, [4, 4, 4], [5, 5, 5]), (0, 1.0, [1, 2, 3], [2, 4, 9])):
        for policy, xs in (("base", base), ("worse", worse)):
            rows += [{"cell": cell, "mu": mu, "policy": policy, "rep": r, "spawn_key": f"{cell}-{r}", "x": float(x),
                      "num": 1.0, "den": 1.0, "part": 0.0, "gap": 0.0, "wall_time": 0.1}
                     for r, x in enumerate(xs)]
    return pd.DataFrame(rows)


def test_summary_rows_equal_the_hand_computed_intervals():
    """Cell 0: base x = 1, 2, 3 (mean 2, sd 1); worse 2, 4, 9 (mean 5, sd sqrt 13); paired
    differences 1, 2, 6 (mean 3, sd sqrt 7); ratio 5/2 with influence (worse - 2.5 base) / 2 =
    -0.25, -0.5, 0.75 (sd sqrt 0.4375); published 12 at mu = 1 for every policy without an entry of its own."""
    s = summarize(_spec(), _raw())
    assert list(s.cell) == [0, 0, 1, 1] and list(s.policy) == ["base", "worse"] * 2
    base, worse = s.iloc[0], s.iloc[1]
    h = T * 1 / math.sqrt(3)
    assert (base.n, base["mean"], base.sd, base.level) == (3, 2.0, 1.0, 0.9)
    assert (base.ci_low, base.ci_high) == pytest.approx((2 * math.exp(-h / 2), 2 * math.exp(h / 2)), rel=1e-12)
    assert base.experiment == "toy" and base.baseline == "base" and base.mu == 1.0 and base.metric == "x"
    assert math.isnan(base.diff_mean) and math.isnan(base.ratio_mean) and math.isnan(base.ratio_low)
    assert (base.published, base.published_source, base.rel_error) == (1.0, "T1", 1.0)  # its own entry first
    assert worse.sd == pytest.approx(math.sqrt(13))
    hd = T * math.sqrt(7) / math.sqrt(3)
    assert (worse.diff_mean, worse.diff_low, worse.diff_high) == pytest.approx((3, 3 - hd, 3 + hd), rel=1e-12)
    hr = T * math.sqrt(0.4375) / math.sqrt(3)
    assert (worse.ratio_mean, worse.ratio_low, worse.ratio_high) == pytest.approx(
        (2.5, 2.5 * math.exp(-hr / 2.5), 2.5 * math.exp(hr / 2.5)), rel=1e-12)
    assert worse.rel_error == pytest.approx((5 - 12) / 12)
    far = s.iloc[3]  # cell 1: no published value, a zero-spread interval
    assert math.isnan(far.published) and far.published_source == "" and math.isnan(far.rel_error)
    assert (far.ci_low, far.ci_high, far.diff_low, far.diff_high) == (5.0, 5.0, 1.0, 1.0)


def test_a_baseline_of_mean_zero_has_no_ratio():
    raw = _raw()
    raw.loc[raw.policy == "base", "x"] = 0.0
    spec = _spec()
    spec.model = SimpleNamespace(METRICS={**MODEL.METRICS, "x": Metric("x", "nonnegative")})
    worse = summarize(spec, raw).iloc[1]
    assert math.isnan(worse.ratio_mean) and worse.diff_mean == 5.0


def test_unpaired_replications_are_bad_input():
    raw = _raw()
    raw = raw[~((raw.policy == "worse") & (raw.rep == 2) & (raw.cell == 0))]
    with pytest.raises(InputError, match="cell 0 of toy has different replications per policy"):
        summarize(_spec(), raw)


def test_published_value_skips_ratios_other_policies_and_metrics():
    spec = _spec()
    assert published_value(spec, {"mu": 1.0}, "worse", "x")["source"] == "Table 9"
    assert published_value(spec, {"mu": 1.0}, "base", "x")["value"] == 1.0
    assert published_value(spec, {"mu": 100.0}, "worse", "x") is None
    assert published_value(spec, {"mu": 100.0}, "worse", "num")["value"] == 3.0


def test_metric_range_of_ratios():
    """num/den of positives is positive; a part over its whole is a share; a real side makes it real."""
    assert metric_range(MODEL, {"name": "x"}) == "positive"
    assert metric_range(MODEL, {"name": "q", "ratio": ["num", "den"]}) == "positive"
    assert metric_range(MODEL, {"name": "q", "ratio": ["part", "den"]}) == "share"
    assert metric_range(MODEL, {"name": "q", "ratio": ["gap", "den"]}) == "real"
    assert metric_range(MODEL, {"name": "q", "ratio": ["num", "gap"]}) == "real"
    assert [quotient_range(a, b) for a, b in (("real", "positive"), ("positive", "real"), ("nonnegative", "share"))] \
        == ["real", "real", "positive"]


def test_replication_table_keeps_the_replication_keys_and_metrics_only():
    t = replication_table(_spec(), _raw())
    assert list(t.columns) == ["cell", "mu", "policy", "rep", "spawn_key", "den", "gap", "num", "part", "x"]
    assert list(t.index) == list(range(12)) and list(t.cell[:6]) == [0] * 6


def test_finite():
    assert [finite(v) for v in (None, math.nan, np.nan, math.inf, -np.inf, 1, 2.5, np.float64(3))] == \
        [False, False, False, False, False, True, True, True]


def test_interval_carries_n_and_level_and_excludes_only_outside():
    iv = mean_estimate([1.0, 2.0, 3.0]).interval(0.9)
    assert (iv.n, iv.level) == (3, 0.9)
    one = mean_estimate([4.0]).interval(0.8)
    assert (one.n, one.level, one.mean) == (1, 0.8, 4.0) and math.isnan(one.low) and math.isnan(one.sd)
    box = Interval(3, 1.5, 0.1, 0.9, 1.0, 2.0)
    assert [box.excludes(v) for v in (0.999, 1.0, 1.5, 2.0, 2.001)] == [True, False, False, False, True]
    assert box.half_width == 0.5


def test_a_ratio_with_a_real_side_gets_a_symmetric_interval():
    """gap (real) / x (positive): 'real', so m +- half; positive/positive: log scale."""
    real = mean_estimate([-1.0, 1.0, 3.0], "real") / mean_estimate([1.0, 1.0, 1.0], "positive")
    assert real.range == "real"
    iv = real.interval(0.9)
    assert iv.low + iv.high == pytest.approx(2 * iv.mean)
    assert (mean_estimate([1.0, 2.0], "nonnegative") / mean_estimate([1.0, 3.0], "positive")).range == "positive"
    assert (mean_estimate([1.0, 2.0], "positive") / mean_estimate([-1.0, 3.0], "real")).range == "real"
    assert ratio_estimate([1.0, 2.0], [2.0, 2.0]).range == "positive"


def test_an_unknown_range_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"^unknown range 'odd' \(use one of real, nonnegative, positive, share\)$"):
        mean_estimate([1.0, 2.0], "odd")


def test_paired_samples_of_different_length_are_refused():
    with pytest.raises(ValueError, match="^paired samples must have the same length$"):
        paired_difference([1.0, 2.0], [1.0])


def test_required_replications_from_a_pilot():
    """Pilot 9, 11, 10, 12, 8: mean 10, sd sqrt 2.5; at 95% t_{0.975,4} = 2.776445. A half width
    of 5% of the mean needs (2.776445 sqrt 2.5 / 0.5)^2 = 77.08 -> 78 replications."""
    pilot = [9.0, 11.0, 10.0, 12.0, 8.0]
    assert required_replications(pilot, 0.05, 0.95) == required_replications(pilot, 0.05) == 78
    # two replications are a pilot too: t_{0.975,1} = 12.7062, sd sqrt 2 -> 1292
    assert required_replications([9.0, 11.0], 0.05) == math.ceil(
        (float(stats.t.ppf(0.975, 1)) * math.sqrt(2) / 0.5) ** 2
    )
    assert required_replications(pilot, 10.0, 0.95) == 5            # already precise enough
    assert required_replications([3.0], 0.05) == 1                   # no spread to go on
    assert required_replications([-1.0, 1.0], 0.05) == 2             # mean 0: no relative target
    t90 = float(stats.t.ppf(0.95, 4))
    assert required_replications(pilot, 0.05, 0.9) == math.ceil((t90 * math.sqrt(2.5) / 0.5) ** 2)


def test_mean_of_independent_estimates_by_hand():
    """Cells [1, 2, 3] (mean 2, variance 1, n 3) and [4, 6, 8, 10] (mean 7, variance 20/3, n 4):
    mean 4.5; squared standard errors 1/3 and 5/3, so se = sqrt(2) / 2; Welch-Satterthwaite
    df = 2^2 / ((1/3)^2 / 2 + (5/3)^2 / 3) = 216/53; n is the fewer replications (3) and sd the
    se scaled back to it. Real range: 4.5 +- t se; both positive: 4.5 exp(+- t se / 4.5);
    one cell of one replication: no interval."""
    from simcore.stats.intervals import mean_of_independent

    a, b = mean_estimate([1.0, 2.0, 3.0]), mean_estimate([4.0, 6.0, 8.0, 10.0])
    half = stats.t.ppf(0.95, 216 / 53) * math.sqrt(2) / 2
    iv = mean_of_independent([a, b], 0.9)
    assert (iv.n, iv.level) == (3, 0.9)
    assert (iv.mean, iv.sd, iv.low, iv.high) == pytest.approx(
        (4.5, math.sqrt(2) / 2 * math.sqrt(3), 4.5 - half, 4.5 + half)
    )
    pos = [mean_estimate([1.0, 2.0, 3.0], "positive"), mean_estimate([4.0, 6.0, 8.0, 10.0], "positive")]
    iv = mean_of_independent(pos, 0.9)
    assert (iv.low, iv.high) == pytest.approx((4.5 * math.exp(-half / 4.5), 4.5 * math.exp(half / 4.5)))
    mixed = mean_of_independent([pos[0], b], 0.9)
    assert (mixed.low, mixed.high) == pytest.approx((4.5 - half, 4.5 + half))
    # equal replications in every cell: df = (n - 1) when the variances are equal, sum of dfs
    same = mean_of_independent([mean_estimate([1.0, 2.0, 3.0]), mean_estimate([2.0, 3.0, 4.0])])
    assert same.high - same.mean == pytest.approx(stats.t.ppf(0.975, 4) * math.sqrt(2 / 3) / 2)
    # no spread anywhere: df falls back to n - 1 and the interval is the point
    flat = mean_of_independent([mean_estimate([2.0, 2.0]), mean_estimate([4.0, 4.0, 4.0])])
    assert (flat.mean, flat.low, flat.high, flat.n) == (3.0, 3.0, 3.0, 2)
    one = mean_of_independent([mean_estimate([1.0]), b])
    assert one.n == 1 and one.mean == 4.0 and math.isnan(one.low) and math.isnan(one.high)


def test_the_spread_of_replications_by_hand():
    """x = 1, 2, 3, 4: s = sqrt(5/3) = 1.29099 (ddof 1), plug-in variance v = 1.25, squared
    deviations 2.25, 0.25, 0.25, 2.25, so the influence values (d^2 - v) / (2 s) are +-1/(2 s) =
    +-0.38730 (signs +, -, -, +), their sd (ddof 1) 0.38730 sqrt(4/3) = 0.44721. At 0.95,
    t_{0.975, 3} = 3.18245: half width 3.18245 x 0.44721 / 2 = 0.71162, taken on the log scale
    (a nonnegative quantity): s exp(+-0.71162 / s) = s exp(+-0.55122) = [0.74393, 2.24034]."""
    est = sd_estimate([1.0, 2.0, 3.0, 4.0])
    s = math.sqrt(5 / 3)
    assert est.value == pytest.approx(s) and est.range == "nonnegative"
    assert est.influence == pytest.approx(np.array([1, -1, -1, 1]) / (2 * s))
    iv = est.interval(0.95)
    half = stats.t.ppf(0.975, 3) * (1 / (2 * s)) * math.sqrt(4 / 3) / 2
    assert (iv.low, iv.high) == (pytest.approx(s * math.exp(-half / s)), pytest.approx(s * math.exp(half / s)))
    assert (iv.low, iv.high) == (pytest.approx(0.74393, abs=1e-5), pytest.approx(2.24034, abs=1e-5))


def test_no_spread_is_the_point_zero():
    """Equal replications: s = 0 with influence 0, so the interval is [0, 0] (no division by 0)."""
    iv = sd_estimate([2.0, 2.0, 2.0]).interval(0.95)
    assert (iv.mean, iv.low, iv.high) == (0.0, 0.0, 0.0)
