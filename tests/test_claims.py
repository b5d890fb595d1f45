"""Verdicts with magnitudes on synthetic data sets whose answers are known by construction.

The claim is 'policy is faster than base' (ratio-below) with the published ratio 0.8 (a 20%
gain): on the log scale the published effect is P = -log 0.8 = 0.2231 and the margin
m = MARGIN x P = 0.0558. Each data set multiplies the same baseline replications by a chosen
ratio and a small spread, so the interval of the ratio is known to lie where the docstring says.
"""

import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from simcore.models import Metric
from simcore.stats.claims import (
    COLUMNS,
    MARGIN,
    VERDICTS,
    cell_verdict,
    effect_interval,
    evaluate_claim,
    published_in_cell,
    replications_to_decide,
)

BASE = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
NOISE = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
MODEL = SimpleNamespace(METRICS={"t": Metric("a time", "positive")})
CLAIM = {"id": "faster", "text": "policy is 20% faster", "kind": "ratio-below", "metric": "t", "policy": "new",
         "published_effect": 0.8}


def _spec(confidence=0.95, metric=None, grid=None, published=None, shares_seeds=False):
    """The toy experiment: policies new and base, metric t (MODEL's unless ``metric``), cells
    k = 1, 2 unless ``grid``, the ``published`` values if given."""
    model = MODEL if metric is None else SimpleNamespace(METRICS={"t": metric})
    return SimpleNamespace(id="toy", data={} if published is None else {"published": published},
                           shares_seeds=shares_seeds, model=model, metrics=[{"name": "t"}], baseline="base",
                           confidence=confidence, grid={"k": [1, 2]} if grid is None else grid)


def _raw(*cells):
    """cells: (new values, base values) per cell."""
    rows = []
    for cell, (new, base) in enumerate(cells):
        for policy, values in (("new", new), ("base", base)):
            rows += [{"cell": cell, "k": cell + 1, "policy": policy, "rep": r, "t": float(v)}
                     for r, v in enumerate(values)]
    return pd.DataFrame(rows)


def _verdict(ratio, spread=0.0, claim=None):
    row = evaluate_claim(_spec(), _raw((BASE * ratio * (1 + spread * NOISE), BASE)), {**CLAIM, **(claim or {})})
    return row


@pytest.mark.parametrize("ratio,spread,expected", [
    (0.8, 0.01, "reproduced"),               # log ratio 0.223 +- ~0.01: P inside
    (0.83, 0.01, "reproduced"),              # effect 0.186: |0.186 - P| = 0.037 <= m = 0.056
    (0.85, 0.01, "inconclusive"),            # effect 0.163: 0.060 from P, beyond m, but hi ~ 0.17 > P - m
    (0.95, 0.01, "smaller than published"),  # effect 0.051 > 0, hi + m ~ 0.11 < P
    (0.5, 0.01, "larger than published"),    # effect 0.693, lo - m ~ 0.63 > P
    (1.0, 0.01, "absent"),                   # interval ~ [-0.01, 0.01] holds 0; hi + m < P
    (1.2, 0.01, "contradicted"),             # effect -0.18, whole interval below 0
    (0.9, 0.5, "inconclusive"),              # +-50% spread: the interval holds 0 and P - m
])
def test_each_verdict_on_a_data_set_built_for_it(ratio, spread, expected):
    row = _verdict(ratio, spread)
    assert row["verdict"] == expected, row
    assert row["published_effect"] == 0.8 and row["margin"] == MARGIN


def test_direction_only_claims_are_reproduced_contradicted_or_inconclusive():
    """Without a published effect, smaller and larger effects are both 'reproduced'."""
    direction = {"published_effect": None}
    assert [_verdict(r, 0.01, direction)["verdict"] for r in (0.95, 0.5, 1.2)] == \
        ["reproduced", "reproduced", "contradicted"]
    assert _verdict(1.0, 0.01, direction)["verdict"] == "inconclusive"


def test_a_calibrated_claim_is_not_counted_as_reproduced():
    row = _verdict(0.8, 0.01, {"calibrated": "the migration cost was chosen to give this ratio"})
    assert (row["verdict"], row["statistical_verdict"]) == ("calibrated", "reproduced")
    assert "calibrated" in VERDICTS


@pytest.mark.parametrize("lo,hi,effect,expected", [
    (0.1, 0.3, 0.2, "reproduced"), (0.1, 0.3, None, "reproduced"), (-0.1, 0.3, None, "inconclusive"),
    (-0.3, -0.1, 0.2, "contradicted"), (-0.3, -0.1, None, "contradicted"),
    (0.01, 0.05, 0.2, "smaller than published"),  # 0.05 + 0.05 < 0.2
    (0.01, 0.15, 0.2, "inconclusive"),            # centre 0.08, 0.12 from P; hi reaches P - m = 0.15
    (0.26, 0.4, 0.2, "larger than published"),    # 0.26 - 0.05 > 0.2
    (0.25, 0.4, 0.2, "inconclusive"),             # centre 0.325, 0.125 from P; lo = P + m is not above it
    (-0.05, 0.1, 0.2, "absent"),                  # holds 0, 0.1 + 0.05 < 0.2
    (-0.05, 0.16, 0.2, "inconclusive"),           # holds 0 and reaches P - m = 0.15
])
def test_cell_verdict_by_hand(lo, hi, effect, expected):
    """Margin m = 0.25 x 0.2 = 0.05 on effects measured towards the claimed side; the estimate is
    the interval's centre (the margin bounds it, not the interval's far end)."""
    assert cell_verdict(lo, hi, effect) == expected


@pytest.mark.parametrize("lo,hi,effect,estimate,practical,expected", [
    (0.1, 0.3, 0.2, 0.24, 0.0, "reproduced"),            # |0.24 - 0.2| <= m = 0.05
    (0.1, 0.3, 0.2, 0.26, 0.0, "inconclusive"),          # 0.06 > m, the interval reaching inside
    (0.12, 0.14, 0.2, 0.13, 0.0, "smaller than published"),  # hi < P - m = 0.15
    (0.12, 0.14, 0.2, 0.13, 0.125, "smaller than published"),  # e = 0.13 >= d
    (0.12, 0.14, 0.2, 0.13, 0.135, "inconclusive"),      # e < d, but hi reaches d
    (0.12, 0.14, 0.2, 0.13, 0.15, "negligible"),         # the whole interval below d: real but negligible
    (-0.01, 0.14, 0.2, 0.13, 0.15, "absent"),            # holds 0 and stays below P - m
    (0.02, 0.04, None, 0.03, 0.01, "reproduced"),        # direction claim: lo > 0 and e >= d
    (0.001, 0.003, None, 0.002, 0.01, "negligible"),     # a 0.2% effect with a tight interval, d = 1%
    (-0.001, 0.003, None, 0.001, 0.01, "negligible"),    # no effect of practical size fits either way
    (0.001, 0.02, None, 0.005, 0.01, "inconclusive"),    # e < d, hi beyond d
    (-0.02, -0.01, None, -0.015, 0.01, "contradicted"),
])
def test_cell_verdict_with_its_estimate_and_practical_size(lo, hi, effect, estimate, practical, expected):
    """The margin applies to the point estimate; a direction (without P) reproduces only with
    an effect of practical size d, and an interval below d is negligible."""
    assert cell_verdict(lo, hi, effect, estimate, practical) == expected


def test_a_tiny_effect_with_a_tight_interval_is_not_reproduced():
    """A synthetic 'ratio-below' direction claim: the policy 0.1% below the baseline in every
    replication (ratio 0.999 +- 0.0001): the interval excludes 1, but 0.1% is below the
    practical size, 1% where the paper reports no comparison (log 1.01): negligible. A 5%
    effect reproduces."""
    claim = {**CLAIM, "published_effect": None}
    tiny = evaluate_claim(_spec(), _raw((BASE * 0.999 * (1 + 0.0001 * NOISE), BASE)), claim)
    assert tiny["ci_high"] < 1 and tiny["practical_size"] == pytest.approx(math.log(1.01))
    assert tiny["verdict"] == "negligible"
    assert evaluate_claim(_spec(), _raw((BASE * 0.95 * (1 + 0.0001 * NOISE), BASE)), claim)["verdict"] == "reproduced"


def test_the_practical_size_is_a_quarter_of_the_figures_smallest_published_effect():
    """The figure publishes 10 and 8 at k = 1 (a ratio 1.25) and a ratio row 0.9 at k = 2: the
    smallest |log| is log(1/0.9) = 0.1054, a quarter of it 0.0263 (a ratio 1.027). A ratio
    claim's d is that; a difference claim's is (e^0.0263 - 1) x |than's value|."""
    from simcore.stats.claims import figure_effect, practical_size

    published = [{"policy": "new", "metric": "t", "value": 10.0, "where": {"k": 1}},
                 {"policy": "base", "metric": "t", "value": 8.0, "where": {"k": 1}},
                 {"policy": "new", "than": "base", "metric": "t", "value": 0.9, "where": {"k": 2}}]
    assert figure_effect(published) == pytest.approx(math.log(1 / 0.9))
    spec = _toy(published=published)
    d = 0.25 * math.log(1 / 0.9)
    assert practical_size(spec, {"kind": "ratio-below"}, None) == pytest.approx(d)
    assert practical_size(spec, {"kind": "less"}, 40.0) == pytest.approx(math.expm1(d) * 40.0)
    assert practical_size(spec, {"kind": "share-less"}, None) == 0.0
    assert practical_size(_toy(), {"kind": "ratio-above"}, None) == pytest.approx(math.log(1.01))


def test_effects_are_measured_towards_the_claimed_side_on_the_log_scale_for_ratios():
    lo, hi, p, e = effect_interval("ratio-below", 0.7, 0.9, 1.0, 0.8, 0.75)
    assert (lo, hi, p, e) == pytest.approx((-math.log(0.9), -math.log(0.7), -math.log(0.8), -math.log(0.75)))
    assert effect_interval("greater", -1.0, 3.0, 0.0, 2.0) == (-1.0, 3.0, 2.0, None)
    assert effect_interval("less", -1.0, 3.0, 0.5, None, 1.0) == (-2.5, 1.5, None, -0.5)
    assert effect_interval("ratio-above", -0.5, 2.0, 1.0, None) == (-1.5, 1.0, None, None)  # not all positive: linear


def test_required_replications_checked_against_a_direct_computation():
    """Differences policy - base = -1, 1, -3, 0, -2: mean -1, sd sqrt 2.5, n = 5; at 95%
    h = t_{0.975,4} sqrt(2.5/5) = 1.963, the interval [-2.96, 0.96] holds 0: inconclusive. The
    effect towards 'less' is centred at 1, so h* = 1 and 5 x 1.963^2 = 19.3 -> 20 replications.
    Directly: the same differences repeated four times (n = 20) give an interval that excludes 0."""
    base = np.array([10.0, 10.0, 10.0, 10.0, 10.0])
    diffs = np.array([-1.0, 1.0, -3.0, 0.0, -2.0])
    spec = _spec(0.95, Metric("t", "real"), grid={})
    claim = {"id": "c", "text": "t", "kind": "less", "metric": "t", "policy": "new"}
    row = evaluate_claim(spec, _raw((base + diffs, base)), claim)
    h = float(stats.t.ppf(0.975, 4)) * math.sqrt(2.5 / 5)
    assert row["verdict"] == "inconclusive" and row["required_replications"] == math.ceil(5 * h**2) == 20
    more = evaluate_claim(spec, _raw((np.tile(base + diffs, 4), np.tile(base, 4))), claim)
    assert more["verdict"] == "reproduced" and more["n"] == 20


def test_replications_to_decide_with_a_published_effect():
    """Centre 0.05, half 0.1 at n = 10, P = 0.2 (m = 0.05): leaving 0 needs h < 0.05, falling
    below P - m = 0.15 needs h < 0.1 -> h* = 0.1, already met up to rounding: n stays 10; with
    half 0.2: 10 x (0.2 / 0.1)^2 = 40."""
    assert replications_to_decide(10, -0.05, 0.15, 0.2) == 10
    assert replications_to_decide(10, -0.15, 0.25, 0.2) == 40
    assert replications_to_decide(10, -0.15, 0.25, None) == 10 * (0.2 / 0.05) ** 2
    assert math.isnan(replications_to_decide(10, -0.1, 0.1, None))  # centred on 0: never decided


def test_several_cells_need_every_cell_and_bonferroni_for_the_rest():
    """Claim 'less' at 90% on differences. Cell 1: -5, -6, -7 (reproduced at any level). Cell 2:
    +0.5, +1, +1.5 (mean 1, sd 0.5): at 90% h = 2.92 x 0.5 / sqrt 3 = 0.84 -> [0.16, 1.84],
    contradicted alone; over k = 2 cells the Bonferroni level 95% gives h = 4.30 x 0.5 / sqrt 3
    = 1.24 -> [-0.24, 2.24], so the cell and the claim are inconclusive."""
    spec = _spec(0.9, Metric("t", "real"))
    base = np.zeros(3)
    claim = {"id": "c", "text": "t", "kind": "less", "metric": "t", "policy": "new"}
    raw = _raw((np.array([-5.0, -6.0, -7.0]), base), (np.array([0.5, 1.0, 1.5]), base))
    both = evaluate_claim(spec, raw, claim)
    assert (both["verdict"], both["cells"], both["cells_reproduced"], both["deciding_cell"]) == (
        "inconclusive",
        2,
        1,
        1,
    )
    alone = evaluate_claim(spec, raw, {**claim, "where": {"k": 2}})
    assert (alone["verdict"], alone["cells"]) == ("contradicted", 1)
    first = evaluate_claim(spec, raw, {**claim, "where": {"k": [1]}})
    assert first["verdict"] == "reproduced"


@pytest.mark.parametrize("published,expected", [(None, "reproduced"), (-1.5, "reproduced"), (-1.9, "reproduced"),
                                                (-3.0, "inconclusive"), (-4.0, "smaller than published")])
def test_a_claim_across_cells_judges_the_mean_of_the_cell_effects(published, expected):
    """'less' with ``across: mean`` at 95%. Cell 1: differences -1, -2, -3 (mean -2, variance 1),
    cell 2: 0, -1, -2 (mean -1, variance 1). The mean over cells is -1.5 with standard error
    sqrt(1/3 + 1/3) / 2 = 0.408 and Welch-Satterthwaite df (2/3)^2 / (2 (1/3)^2 / 2) = 4:
    h = t_{0.975,4} x 0.408 = 1.133, the interval [-2.633, -0.367]. As effects towards 'less':
    [0.367, 2.633], estimate 1.5. Published -1.9: P = 1.9, m = 0.475, |1.5 - 1.9| = 0.4 <= m:
    reproduced; published -3: P = 3, m = 0.75, the estimate 1.5 from P, the interval reaching
    P - m = 2.25: inconclusive; published -4: P = 4, hi = 2.633 < P - m = 3: smaller than
    published. The baseline is 0, so a direction's practical size is 0. Cell by cell, cell 2 alone would be
    inconclusive (its interval, -1 +- 2.48, holds 0)."""
    spec = _spec(0.95, Metric("t", "real"))
    base = np.zeros(3)
    raw = _raw((np.array([-1.0, -2.0, -3.0]), base), (np.array([0.0, -1.0, -2.0]), base))
    claim = {"id": "c", "text": "t", "kind": "less", "metric": "t", "policy": "new", "across": "mean"}
    if published is not None:
        claim["published_effect"] = published
    row = evaluate_claim(spec, raw, claim)
    h = float(stats.t.ppf(0.975, 4)) * math.sqrt(2 / 3) / 2
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == pytest.approx((-1.5, -1.5 - h, -1.5 + h))
    assert (row["verdict"], row["cells"], row["across"], row["n"]) == (expected, 2, "mean", 3)
    assert math.isnan(row["cells_reproduced"]) and math.isnan(row["deciding_cell"])
    per_cell = evaluate_claim(spec, raw, {k: v for k, v in claim.items() if k not in ("across", "published_effect")})
    assert per_cell["verdict"] == "inconclusive"


def test_gain_grows_judges_the_relative_gain():
    """than = 1..5. policy = 0.8 than: the relative gain is 0.2 everywhere, slope exactly 0 (the
    absolute gain 0.2 than would have slope 0.2): the interval is [0, 0], not a growing gain.
    policy = than - 0.1 than^2: relative gain 0.1 than, slope exactly 0.1: reproduced."""
    spec = _spec(0.95, Metric("t", "positive"), grid={})
    than = np.arange(1.0, 6.0)
    claim = {"id": "g", "text": "t", "kind": "gain-grows", "metric": "t", "policy": "new"}
    flat = evaluate_claim(spec, _raw((0.8 * than, than)), claim)
    assert flat["estimate"] == pytest.approx(0.0, abs=1e-12) and flat["verdict"] != "reproduced"
    grows = evaluate_claim(spec, _raw((than - 0.1 * than**2, than)), claim)
    assert (grows["estimate"], grows["verdict"]) == (pytest.approx(0.1), "reproduced")


def test_published_values_per_cell_come_from_the_published_list():
    """'table': a value claim takes the policy's own entry; a ratio claim a ratio row if there is
    one, else the two policies' values divided; a difference claim subtracts them."""
    published = [{"policy": "new", "metric": "t", "value": 6.0, "where": {"k": 1}},
                 {"policy": "base", "metric": "t", "value": 8.0, "where": {"k": 1}},
                 {"policy": "new", "metric": "t", "value": 3.0, "where": {"k": 2}},
                 {"policy": "new", "than": "base", "metric": "t", "value": 0.7, "where": {"k": 2}}]
    claim = {"metric": "t", "policy": "new", "than": "base"}
    assert published_in_cell(published, {**claim, "kind": "value"}, {"k": 1}) == 6.0
    assert published_in_cell(published, {**claim, "kind": "ratio-below"}, {"k": 1}) == 0.75
    assert published_in_cell(published, {**claim, "kind": "less"}, {"k": 1}) == -2.0
    assert published_in_cell(published, {**claim, "kind": "ratio-below"}, {"k": 2}) == 0.7
    assert published_in_cell(published, {**claim, "kind": "less"}, {"k": 2}) is None  # no base value at k=2
    assert published_in_cell(published, {**claim, "kind": "value"}, {"k": 3}) is None


def test_a_value_claim_judges_each_cell_against_its_published_value():
    """The policy's own value: 0.5 +- 0.01 in both cells (interval about [0.489, 0.511]). Cell 1's
    published 0.5 lies inside: reproduced. Cell 2's published 0.9 (m = 0.225): hi + m = 0.736 <
    0.9, also at the Bonferroni level: smaller than published, which decides the claim."""
    published = [{"policy": "new", "metric": "t", "value": v, "where": {"k": k}} for k, v in ((1, 0.5), (2, 0.9))]
    spec = _spec(metric=Metric("t", "share"), published=published)
    share = 0.5 + 0.01 * NOISE
    claim = {"id": "v", "text": "t", "kind": "value", "metric": "t", "policy": "new", "published_effect": "table"}
    row = evaluate_claim(spec, _raw((share, share), (share, share)), claim)
    assert (row["verdict"], row["deciding_cell"], row["published_effect"], row["cells_reproduced"]) == \
        ("smaller than published", 1, 0.9, 1)
    assert row["than"] == "" and row["estimate"] == pytest.approx(0.5)


def test_a_claim_on_no_cell_is_inconclusive():
    row = evaluate_claim(_spec(), _raw((BASE, BASE)), {**CLAIM, "where": {"k": 9}})
    assert (row["verdict"], row["cells"]) == ("inconclusive", 0)


LESS = {"id": "less", "text": "Enhanced Mosix is faster", "kind": "less", "metric": "mean_slowdown",
        "policy": "enhanced-mosix", "than": "mosix"}


@pytest.mark.parametrize(
    "change,message",
    [
        (
            {"published_effect": 5.0},
            r"claims\.0\.published_effect': 5\.0 is not on the side 'less' claims \(beyond 0\)",
        ),
        (
            {"kind": "share-less", "threshold": 0.5, "published_effect": 0.9},
            r"claims\.0\.published_effect': only value, ratio, difference and spread claims state a published effect, "
            r"not 'share-less'",
        ),
        (
            {"kind": "ratio-below", "threshold": 1.0, "published_effect": -0.5},
            r"claims\.0\.published_effect': -0\.5 is not a positive finite number",
        ),
        ({"calibrated": ""}, r"claims/0/calibrated|claims\.0\.calibrated"),
        (
            {"kind": "share-less", "threshold": 0.5, "across": "mean"},
            r"claims\.0\.across': only value, difference, ratio and spread claims average over cells, not 'share-less'",
        ),
    ],
)
def test_a_published_effect_off_the_claimed_side_is_bad_input(tmp_path, change, message):
    """amir-table2's first claim, made a plain 'less' (a difference below 0), then changed."""
    import shutil

    import yaml

    from simcore.experiments.spec import SpecError, load_spec

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    shutil.copytree(root / "config", tmp_path / "config")
    path = tmp_path / "config/experiments/amir-table2.yaml"
    data = yaml.safe_load(path.read_text())
    data["claims"][0] = {**LESS, **change}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SpecError, match=message):
        load_spec(path)


def test_a_published_effect_on_the_claimed_side_loads(tmp_path):
    import shutil

    import yaml

    from simcore.experiments.spec import load_spec

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    shutil.copytree(root / "config", tmp_path / "config")
    path = tmp_path / "config/experiments/amir-table2.yaml"
    data = yaml.safe_load(path.read_text())
    data["claims"][0] = {**LESS, "published_effect": -0.5, "calibrated": "chosen to match"}
    path.write_text(yaml.safe_dump(data))
    assert load_spec(path).data["claims"][0]["published_effect"] == -0.5


def test_share_less_is_a_clopper_pearson_interval_of_the_wins():
    """new < base in 5 of the 6 replications (the last one ties, and a tie is no win): the share
    is 5/6 with the exact interval [beta(0.025; 5, 2), beta(0.975; 6, 1)] = [0.359, 0.996];
    it holds the threshold 0.5, so one cell is inconclusive. With 60 replications and 55 wins
    the interval leaves 0.5 (reproduced); with 5 wins of 60 it lies below (contradicted)."""
    claim = {"id": "s", "text": "t", "kind": "share-less", "metric": "t", "policy": "new", "threshold": 0.5}
    new = BASE.copy()
    new[:5] -= 1.0  # replication 5: a tie
    row = evaluate_claim(_spec(), _raw((new, BASE)), claim)
    assert row["estimate"] == pytest.approx(5 / 6)
    assert row["ci_low"] == pytest.approx(stats.beta.ppf(0.025, 5, 2))
    assert row["ci_high"] == pytest.approx(stats.beta.ppf(0.975, 6, 1))
    assert (row["statistic"], row["n"], row["verdict"]) == ("share", 6, "inconclusive")
    base = np.arange(1.0, 61.0)
    wins = base - np.where(np.arange(60) < 55, 1.0, -1.0)
    assert evaluate_claim(_spec(), _raw((wins, base)), claim)["verdict"] == "reproduced"
    losses = base - np.where(np.arange(60) < 5, 1.0, -1.0)
    assert evaluate_claim(_spec(), _raw((losses, base)), claim)["verdict"] == "contradicted"


@pytest.mark.parametrize("lo,hi,effect,expected", [
    (-0.1, 0.0, None, "inconclusive"),     # touching zero from below is not the other side
    (0.0, 0.2, None, "inconclusive"),      # touching zero from above is not the claimed side
    (0.0, 0.3, 0.2, "inconclusive"),       # the published effect inside, but lo = 0 holds no effect
    (-0.25, 0.375, 0.5, "inconclusive"),   # hi + m = 0.375 + 0.125 = P exactly: not excluded
    (0.125, 0.375, 0.5, "inconclusive"),   # the same upper end with lo > 0: the centre 0.25 is 0.25 from P
    (0.0, 0.25, 0.5, "absent"),            # hi + m = 0.375 < P and lo = 0: no effect fits
    (0.625, 0.75, 0.5, "inconclusive"),    # lo = P + m: not above it; the centre 0.6875 beyond m
    (0.75, 1.0, 0.5, "larger than published"),
])
def test_cell_verdict_at_its_boundaries(lo, hi, effect, expected):
    """Binary-exact boundaries (P = 0.5, m = 0.125): strict inequalities at 0 and at P -+ m, as the
    module states them; an estimate exactly m from P reproduces (|e - P| <= m)."""
    assert cell_verdict(lo, hi, effect) == expected
    if (lo, hi) == (0.125, 0.375):
        assert cell_verdict(lo, hi, effect, 0.375) == "reproduced"   # e = P - m
    if (lo, hi) == (0.625, 0.75):
        assert cell_verdict(lo, hi, effect, 0.625) == "reproduced"   # e = P + m


def test_effects_are_measured_from_a_threshold_that_is_not_the_null():
    """'less' than a threshold of 2 with interval [1, 3] and published value 5: effects
    2 - x, so [-1, 1] and P = 2 - 5 = -3. A ratio interval touching 0 cannot go to the log
    scale: it stays linear, effects 1 - x: [0.5, 1]."""
    assert effect_interval("less", 1.0, 3.0, 2.0, 5.0) == (-1.0, 1.0, -3.0, None)
    assert effect_interval("ratio-below", 0.0, 0.5, 1.0, None) == (0.5, 1.0, None, None)


def _three(*cells):
    """cells: (new, other) values per cell; 'base' (the baseline) runs as 'other' plus 100."""
    rows = []
    for cell, (new, other) in enumerate(cells):
        for policy, values in (("new", new), ("other", other), ("base", np.asarray(other) + 100.0)):
            rows += [{"cell": cell, "k": cell + 1, "policy": policy, "rep": r, "t": float(v)}
                     for r, v in enumerate(values)]
    return pd.DataFrame(rows)


THREE_CLAIM = {"id": "c3", "text": "new beats other by more than one", "kind": "less", "metric": "t", "policy": "new",
               "than": "other", "threshold": 1.0, "calibrated": "the threshold was fitted to this"}
PM = np.array([0.1, -0.1, 0.1, -0.1, 0.1, -0.1])


def test_every_column_of_a_claim_row():
    """'less' than a threshold of 1 against a policy that is not the baseline, over two cells.
    Differences new - other: cell 0 0.5 +- 0.1 (mean 0.5), cell 1 -2.5 +- 0.1 (mean -2.5); each
    interval m +- t(0.975, 5) x 0.10954 / sqrt 6 lies below 1: both reproduced. The deciding
    cell is the one farthest from the threshold: cell 1 (|-2.5 - 1| = 3.5 against 0.5). The
    claim is calibrated: its verdict says so, the statistical verdict stays beside it."""
    other = BASE
    raw = _three((other + 0.5 + PM, other), (other - 2.5 + PM, other))
    row = evaluate_claim(_spec(), raw, THREE_CLAIM)
    half = stats.t.ppf(0.975, 5) * np.std(PM, ddof=1) / math.sqrt(6)
    expected = {"experiment": "toy", "claim": "c3", "text": THREE_CLAIM["text"], "kind": "less", "metric": "t",
                "policy": "new", "than": "other", "statistic": "difference", "threshold": 1.0,
                "published_effect": math.nan, "margin": math.nan, "across": "", "cells": 2, "cells_reproduced": 2,
                "deciding_cell": 1, "estimate": -2.5, "ci_low": -2.5 - half, "ci_high": -2.5 + half, "level": 0.95,
                "n": 6, "required_replications": math.nan, "verdict": "calibrated",
                "statistical_verdict": "reproduced", "calibrated": THREE_CLAIM["calibrated"]}
    assert set(row) == set(COLUMNS)
    for key, value in expected.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(row[key]), key
        else:
            assert row[key] == pytest.approx(value), key


def test_a_claim_row_on_no_cell_says_so_in_every_column():
    """No cell matches: nothing to judge, every count 0, the verdict inconclusive both ways."""
    row = evaluate_claim(_spec(), _three((BASE, BASE)), {**THREE_CLAIM, "where": {"k": 2}, "calibrated": ""})
    assert (row["cells"], row["cells_reproduced"], row["verdict"], row["statistical_verdict"]) == \
        (0, 0, "inconclusive", "inconclusive")
    assert (row["than"], row["threshold"], row["across"], row["calibrated"]) == ("other", 1.0, "", "")


def test_an_undecided_claim_needs_every_cell_decided():
    """Two inconclusive cells (the other policy's value 35: a direction's practical size d is
    1% of it, 0.35): cell 0's differences 0.5 +- 2 (h = t s / sqrt 6 around 0.5 from the threshold
    1, above d: decided after n (h / 0.5)^2 replications), cell 1's centred exactly on the threshold
    (decided negligible once h < d - 0 = 0.35). The claim needs the larger count, whatever the
    order of the cells; the first alone gives its own. Without a practical size a cell centred on
    the threshold is never decided (NaN), and then neither is the claim."""
    wide = 20 * PM
    raw = _three((BASE + 0.5 + wide, BASE), (BASE + 1.0 + wide, BASE))
    claim = {**THREE_CLAIM, "calibrated": ""}
    both = evaluate_claim(_spec(), raw, claim)
    h = stats.t.ppf(0.975, 5) * np.std(wide, ddof=1) / math.sqrt(6)
    assert both["statistical_verdict"] == "inconclusive"
    assert both["required_replications"] == math.ceil(6 * (h / 0.35) ** 2)
    first = evaluate_claim(_spec(), raw, {**claim, "where": {"k": 1}})
    assert first["required_replications"] == math.ceil(6 * (h / 0.5) ** 2)
    assert math.isnan(replications_to_decide(6, -h, h, None, 0.0, 0.0))


def _toy(grid=None, published=None, confidence=0.95, range_="real"):
    return _spec(confidence, Metric("t", range_), grid or {"k": [1, 2]}, published or [])


def test_bonferroni_applies_to_decided_verdicts_only_and_keeps_the_magnitude():
    """'greater' over two cells whose differences are 0.3 +- 0.2449 (s / sqrt 6 = 0.1). At 95%
    h = 2.571 x 0.1: [0.043, 0.557], reproduced in each cell with no correction (an
    intersection-union test needs none), although at the Bonferroni level 97.5% h = 3.163 x 0.1
    and lo = -0.016 < 0. With a published difference of 0.9 (m = 0.225): at 95% hi + m = 0.782 <
    0.9, smaller than published; at 97.5% lo < 0 makes it absent instead, so the cell is
    inconclusive and needs n (h / h*)^2 replications with the 97.5% interval's h and h* =
    max(|0.3|, (1 - 0.25) 0.9 - 0.3) = 0.375: the published effect still counts."""
    spread = 0.1 * math.sqrt(6) / np.std(PM, ddof=1) * PM
    base = np.zeros(6)  # the baseline's value 0: a direction's practical size is 0
    new = base + 0.3 + spread
    raw = _raw((new, base), (new, base))
    claim = {"id": "g", "text": "t", "kind": "greater", "metric": "t", "policy": "new"}
    assert evaluate_claim(_toy(), raw, claim)["verdict"] == "reproduced"
    alone = evaluate_claim(_toy(), raw, {**claim, "published_effect": 0.9, "where": {"k": 1}})
    assert alone["verdict"] == "smaller than published"
    row = evaluate_claim(_toy(), raw, {**claim, "published_effect": 0.9})
    assert row["verdict"] == "inconclusive"
    h = stats.t.ppf(1 - 0.025 / 2, 5) * 0.1
    assert row["required_replications"] == max(6, math.ceil(6 * (h / 0.375) ** 2)) == 6  # 7 with h* = 0.3


def test_cells_are_taken_in_index_order_whatever_the_row_order():
    """Two identical reproduced cells tie for the deciding cell: the first by index decides,
    also when the raw rows list cell 1 first."""
    new = BASE - 2.0 + PM
    raw = _raw((new, BASE), (new, BASE))
    reversed_raw = pd.concat([raw[raw.cell == 1], raw[raw.cell == 0]], ignore_index=True)
    claim = {"id": "l", "text": "t", "kind": "less", "metric": "t", "policy": "new"}
    assert evaluate_claim(_toy(), reversed_raw, claim)["deciding_cell"] == 0


def test_a_value_claim_reads_only_its_own_policy():
    """The policy's own mean (BASE + 1: 36), not the baseline's (35) beside it."""
    claim = {"id": "v", "text": "t", "kind": "value", "metric": "t", "policy": "new", "where": {"k": 1}}
    row = evaluate_claim(_toy(), _raw((BASE + 1.0, BASE)), claim)
    assert row["estimate"] == pytest.approx(36.0)


def test_one_replication_gives_no_interval_and_an_inconclusive_verdict():
    row = evaluate_claim(_toy(), _raw((BASE[:1] - 1.0, BASE[:1])), {"id": "l", "text": "t", "kind": "less",
                                                                     "metric": "t", "policy": "new"})
    assert (row["verdict"], row["n"]) == ("inconclusive", 1) and math.isnan(row["ci_low"])


def test_an_inconclusive_row_counts_replications_against_the_published_effect():
    """Differences 0.1 +- 2 (h = t(0.975, 5) x 2 x 0.10954 / 0.1 ... ) against a published 1: the
    interval holds 0 and P - m, inconclusive; decided once h < h* = (1 - 0.25) x 1 - 0.1 (absent),
    not |centre| = 0.1 as without a magnitude."""
    wide = 20 * PM
    claim = {"id": "g", "text": "t", "kind": "greater", "metric": "t", "policy": "new", "published_effect": 1.0,
             "where": {"k": 1}}
    row = evaluate_claim(_toy(), _raw((BASE + 0.1 + wide, BASE)), claim)
    h = stats.t.ppf(0.975, 5) * np.std(wide, ddof=1) / math.sqrt(6)
    assert row["verdict"] == "inconclusive"
    assert row["required_replications"] == math.ceil(6 * (h / 0.65) ** 2)


def test_published_table_against_the_baseline_and_across_cells():
    """'table' with no 'than': the baseline's published values. Ratio new/base published 30/40 =
    0.75 in cell 1 and 30/60 = 0.5 in cell 2; the data give 0.75 and 0.5 exactly (+- 1%), so each
    cell reproduces its own; across: mean judges the mean ratio 0.625 against the mean of the
    published ones, 0.625, at the spec's level (90%)."""
    published = [{"policy": "new", "metric": "t", "value": 30.0, "where": {"k": 1}},
                 {"policy": "base", "metric": "t", "value": 40.0, "where": {"k": 1}},
                 {"policy": "new", "metric": "t", "value": 30.0, "where": {"k": 2}},
                 {"policy": "base", "metric": "t", "value": 60.0, "where": {"k": 2}}]
    spec = _toy(published=published, confidence=0.9, range_="positive")
    raw = _raw((BASE * 0.75 * (1 + 0.01 * NOISE), BASE), (BASE * 0.5 * (1 + 0.01 * NOISE), BASE))
    claim = {"id": "r", "text": "t", "kind": "ratio-below", "threshold": 1.0, "metric": "t", "policy": "new",
             "published_effect": "table"}
    row = evaluate_claim(spec, raw, claim)
    assert (row["verdict"], row["cells_reproduced"], row["level"]) == ("reproduced", 2, 0.9)
    pooled = evaluate_claim(spec, raw, {**claim, "across": "mean"})
    assert (pooled["verdict"], pooled["level"]) == ("reproduced", 0.9)
    assert pooled["published_effect"] == pytest.approx(0.625) and pooled["estimate"] == pytest.approx(0.625, rel=2e-3)


def test_cells_are_matched_on_grid_values_of_any_type():
    """A grid of words: the claim names one by its value."""
    spec = _toy(grid={"mode": ["a", "b"]})
    raw = _raw((BASE - 1.0, BASE), (BASE + 1.0, BASE))
    raw["mode"] = np.where(raw.cell == 0, "a", "b")
    claim = {"id": "l", "text": "t", "kind": "less", "metric": "t", "policy": "new", "where": {"mode": "b"}}
    row = evaluate_claim(spec, raw, claim)
    assert (row["cells"], row["deciding_cell"], row["verdict"]) == (1, 1, "contradicted")


def test_the_gain_slopes_error_is_robust_to_a_spread_that_changes_with_b():
    """b = 1, 2, 3, 4 and relative gains 0, 0, 0, 1: slope 1.5 / 5 = 0.3 (x - mean: -1.5, -0.5,
    0.5, 1.5; Sxx = 5), intercept -0.5, residuals 0.2, -0.1, -0.4, 0.3, leverages 0.7, 0.3, 0.3,
    0.7. HC3: (2.25 * 0.04 / 0.09 + 0.25 * 0.01 / 0.49 + 0.25 * 0.16 / 0.49 + 2.25 * 0.09 / 0.09)
    / 25 = 3.3367347 / 25, against the plain least-squares 0.3 / (2 * 5) = 0.03 (its residual
    variance 0.3 / 2 over Sxx)."""
    from simcore.stats.claims import _gain_slope

    b = np.array([1.0, 2.0, 3.0, 4.0])
    a = b * (1 - np.array([0.0, 0.0, 0.0, 1.0]))
    iv = _gain_slope(a, b, 0.95)
    hc3 = math.sqrt((2.25 * 0.04 / 0.09 + 0.25 * 0.01 / 0.49 + 0.25 * 0.16 / 0.49 + 2.25 * 0.09 / 0.09) / 25)
    assert (iv.mean, iv.sd) == pytest.approx((0.3, hc3))
    assert stats.linregress(b, (b - a) / b).stderr == pytest.approx(math.sqrt(0.03))
    half = stats.t.ppf(0.975, 2) * hc3
    assert (iv.low, iv.high) == pytest.approx((0.3 - half, 0.3 + half))


def test_gain_grows_interval_by_hand():
    """The slope of (b - a) / b on b by least squares with its HC3 t interval on n - 2 degrees of
    freedom, at the spec's level."""
    from simcore.stats.claims import evaluate_claims

    b = BASE
    a = b * (1 - 0.002 * b) + PM
    spec = _toy(confidence=0.9)
    spec.data["claims"] = [{"id": "g", "text": "t", "kind": "gain-grows", "metric": "t", "policy": "new",
                            "where": {"k": 1}}]
    table = evaluate_claims(spec, _raw((a, b), (a, b)))
    assert list(table.columns) == COLUMNS
    row = table.iloc[0]
    from simcore.stats.claims import hc3_slope_se

    fit = stats.linregress(b, (b - a) / b)
    half = stats.t.ppf(0.95, 4) * hc3_slope_se(b, (b - a) / b - (fit.intercept + fit.slope * b))
    assert (row["estimate"], row["ci_low"], row["ci_high"], row["level"]) == \
        pytest.approx((fit.slope, fit.slope - half, fit.slope + half, 0.9))


def test_a_published_table_value_off_the_claimed_side_is_bad_input(tmp_path):
    """Per-cell published effects obey the rule of a stated one: on the claimed side. A paper
    table whose cell shows the other direction cannot support the claim in that cell."""
    from simcore.experiments.spec import SpecError, load_spec

    src = Path(__file__).resolve().parents[1] / "config"
    shutil.copytree(src, tmp_path / "config")
    path = tmp_path / "config/experiments/amir-table2.yaml"
    data = yaml.safe_load(path.read_text())
    data["published"].append({"policy": "enhanced-mosix", "than": "mosix", "metric": "mean_slowdown", "value": 1.2,
                              "source": "test"})
    data["claims"][0]["published_effect"] = "table"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(SpecError, match=r"claims\.0\.published_effect': 1\.2 \(from 'published' at the only cell\) "
                                        r"is not on the side 'ratio-below' claims \(beyond 1\)"):
        load_spec(path)


def test_a_cell_of_one_row_is_judged():
    """A value claim on a cell holding a single row (one policy, one replication): no interval."""
    raw = pd.DataFrame([{"cell": 0, "k": 1, "policy": "new", "rep": 0, "t": 3.0}])
    row = evaluate_claim(_toy(), raw, {"id": "v", "text": "t", "kind": "value", "metric": "t", "policy": "new"})
    assert (row["cells"], row["estimate"], row["verdict"]) == (1, 3.0, "inconclusive")


SPREAD = {"id": "sd", "text": "the slowdown varies by 10%", "kind": "spread", "metric": "t", "policy": "new",
          "published_effect": 0.1}


def _spread_cell(sd_of_ratio):
    """new = base x (1 + e) with e = +-sd_of_ratio x sqrt(5/6) alternating over six replications:
    the per-replication ratios 1 + e have sample sd exactly sd_of_ratio (mean 1, squared
    deviations all (5/6) sd^2, summed 5 sd^2, over n - 1 = 5)."""
    e = NOISE * sd_of_ratio * math.sqrt(5 / 6)
    return BASE * (1 + e), BASE


@pytest.mark.parametrize("sd,expected", [
    (0.1, "reproduced"),              # every squared deviation equal: influence 0, interval [0.1, 0.1]
    (0.05, "smaller than published"),  # [0.05, 0.05]: 0.05 + m = 0.075 < 0.1
    (0.2, "larger than published"),   # 0.2 - m = 0.175 > 0.1
])
def test_a_spread_claim_judges_the_standard_deviation_of_the_paired_ratio(sd, expected):
    """The statistic is the sd over replications of new/base (not of the values themselves,
    whose spread comes from BASE); margin m = 0.25 x 0.1 = 0.025."""
    row = evaluate_claim(_spec(), _raw(_spread_cell(sd)), SPREAD)
    assert (row["statistic"], row["verdict"]) == ("spread", expected)
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == (pytest.approx(sd),) * 3


def test_a_spread_claim_across_cells_is_the_mean_of_the_cells_spreads():
    """Cells with ratio sd 0.05 and 0.15 (each interval a point): the mean 0.10 is the paper's
    'averaged standard deviation', reproduced; cell by cell the claim is not (0.05 is smaller)."""
    raw = _raw(_spread_cell(0.05), _spread_cell(0.15))
    pooled = evaluate_claim(_spec(), raw, {**SPREAD, "across": "mean"})
    assert (pooled["estimate"], pooled["verdict"]) == (pytest.approx(0.1), "reproduced")
    assert evaluate_claim(_spec(), raw, SPREAD)["verdict"] == "smaller than published"


# -- claims across cells (than_cell) and means over cells that share seeds ---------------------------

def _shared_spec(range_="positive"):
    return _spec(metric=Metric("t", range_), shares_seeds=True)


def test_a_claim_across_cells_pairs_the_policy_with_itself_in_the_other_cell():
    """base at k = 2 against base at k = 1 (rep by rep: [2, 4, 6] / [1, 2, 3]): the ratio is 2
    exactly, with zero spread (every influence value (a - 2 b) / mean(b) is 0); the cell k = 1
    would compare with itself and is left out, so one cell judges the claim."""
    raw = _raw(([9, 9, 9], [1, 2, 3]), ([9, 9, 9], [2, 4, 6]))
    claim = {"id": "c", "text": "t", "kind": "ratio-above", "metric": "t", "policy": "base", "than": "base",
             "threshold": 1.0, "than_cell": {"k": 1}}
    row = evaluate_claim(_shared_spec(), raw, claim)
    assert (row["than"], row["cells"], row["deciding_cell"]) == ("base at k = 1", 1, 1)
    assert row["estimate"] == pytest.approx(2.0) and row["ci_low"] == pytest.approx(2.0)
    assert row["verdict"] == "reproduced"


def test_a_claim_across_cells_pairs_only_the_replications_both_cells_ran():
    """A precision round ran cell k = 2 to five replications, k = 1 stayed at three: base at k = 2
    [2, 4, 6, 100, 100] against k = 1 [1, 2, 3] pairs replications 0-2 only, a ratio of exactly 2
    on 3 replications (with the two extra ones it would not pair at all)."""
    raw = _raw(([9, 9, 9], [1, 2, 3]), ([9, 9, 9, 9, 9], [2, 4, 6, 100, 100]))
    claim = {"id": "c", "text": "t", "kind": "ratio-above", "metric": "t", "policy": "base", "than": "base",
             "threshold": 1.0, "than_cell": {"k": 1}}
    row = evaluate_claim(_shared_spec(), raw, claim)
    assert (row["n"], row["estimate"]) == (3, pytest.approx(2.0))


def test_a_claim_across_cells_skips_cells_whose_other_cell_was_not_run():
    """With only the cell k = 2 in the raw table (a thinned scale), nothing pairs: no cell."""
    raw = _raw(([9, 9, 9], [1, 2, 3]))
    raw["cell"], raw["k"] = 1, 2
    claim = {"id": "c", "text": "t", "kind": "ratio-above", "metric": "t", "policy": "base", "threshold": 1.0,
             "than_cell": {"k": 1}}
    assert evaluate_claim(_shared_spec(), raw, claim)["cells"] == 0


def test_a_mean_over_cells_that_share_seeds_pairs_their_replications():
    """Values (a real metric) of 'new' [1, 2, 3] in cell 1 and [3, 4, 5] in cell 2, replication by replication:
    their mean per replication is [2, 3, 4], mean 3, sd 1, so the interval is
    3 +- t(0.975, 2) / sqrt(3). Treated as independent cells it would be narrower:
    sqrt(1/3 + 1/3) / 2 = 0.408 against 1 / sqrt(3) = 0.577."""
    raw = _raw(([1, 2, 3], [5, 5, 5]), ([3, 4, 5], [5, 5, 5]))
    claim = {"id": "v", "text": "t", "kind": "value", "metric": "t", "policy": "new", "across": "mean"}
    half = float(stats.t.ppf(0.975, 2)) / math.sqrt(3)
    row = evaluate_claim(_shared_spec("real"), raw, claim)
    assert row["estimate"] == pytest.approx(3.0)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((3 - half, 3 + half))
    spec = _shared_spec("real")
    spec.shares_seeds = False
    independent = evaluate_claim(spec, raw, claim)
    assert independent["estimate"] == pytest.approx(3.0) and independent["ci_high"] - 3 < half


@pytest.mark.parametrize("change,message", [
    ({"than_cell": {"k": 1}}, "comparing two cells needs 'seeds: shared'"),
    ({"seeds": "shared", "than_cell": {"nope": 1}}, "than_cell.nope': 'nope' is not a grid parameter"),
    ({"seeds": "shared", "than_cell": {"k": 7}}, r"than_cell.k': 7 is not in the grid"),
    ({"seeds": "shared", "than_cell": {"k": 1}, "kind": "value"}, "a 'value' claim judges one policy's own value"),
])
def test_than_cell_is_checked_when_the_spec_loads(tmp_path, change, message):
    """A toy grid k in [1, 2]; a claim comparing k = 2 with a bad other cell is refused."""
    from simcore.experiments.spec import SpecError, _check_than_cell

    data = {"seeds": change.pop("seeds", None), "grid": {"k": [1, 2]}}
    claim = {"id": "c", "text": "t", "kind": "ratio-above", "metric": "t", "policy": "base", "threshold": 1.0, **change}
    with pytest.raises(SpecError, match=message):
        _check_than_cell(tmp_path / "x.yaml", 0, claim, data, data["grid"])


# undecided_cells, cell_statistics and cell_estimates (precision mode and readings sweeps use them).
# Differences new - base over five replications: DECIDED -5, -6, -7, -5, -7 (mean -6, deviations
# 1, 0, -1, 1, -1: sd 1); UNDECIDED -1, 1, -3, 0, -2 (mean -1, sd sqrt 2.5; 20 replications to
# decide at 95%, derived in test_required_replications_checked_against_a_direct_computation);
# OPPOSED +5, +6, +7, +5, +7 (mean +6, sd 1).
TEN = np.full(5, 10.0)
DECIDED = np.array([-5.0, -6.0, -7.0, -5.0, -7.0])
UNDECIDED = np.array([-1.0, 1.0, -3.0, 0.0, -2.0])
OPPOSED = -DECIDED
LESS_NEW = {"id": "l", "text": "t", "kind": "less", "metric": "t", "policy": "new"}


def test_undecided_cells_are_the_inconclusive_cells_of_an_undecided_claim():
    """'less' at 95% over k = 1, 2: cell 0 (DECIDED, -6 +- t(0.975, 4) / sqrt 5 = +-1.24) is
    reproduced, cell 1 (UNDECIDED, -1 +- 2.776 x sqrt(2.5 / 5) = +-1.96, holds 0) is inconclusive
    and needs ceil(5 x 1.963^2) = 20 replications: the claim is inconclusive, and only cell 1 needs
    more, 20. Over k = 2, 3 the claim is decided: cell 2 (OPPOSED) is contradicted also at the
    Bonferroni level 97.5% (6 -+ t(0.9875, 4) / sqrt 5 = 6 -+ 1.56 lies above 0), so no cell needs
    more although cell 1 is still inconclusive on its own."""
    from simcore.stats.claims import undecided_cells

    spec = _toy(grid={"k": [1, 2, 3]})
    raw = _raw((TEN + DECIDED, TEN), (TEN + UNDECIDED, TEN), (TEN + OPPOSED, TEN))
    h = stats.t.ppf(0.975, 4) * math.sqrt(2.5 / 5)
    assert undecided_cells(spec, raw, {**LESS_NEW, "where": {"k": [1, 2]}}) == {1: math.ceil(5 * h**2)} == {1: 20}
    assert evaluate_claim(spec, raw, {**LESS_NEW, "where": {"k": [2, 3]}})["verdict"] == "contradicted"
    assert undecided_cells(spec, raw, {**LESS_NEW, "where": {"k": [2, 3]}}) == {}
    assert undecided_cells(spec, raw, {**LESS_NEW, "where": {"k": 1}}) == {}


def test_undecided_cells_of_a_mean_claim_take_the_mean_s_count():
    """'less' with ``across: mean`` over two UNDECIDED cells: each difference has variance of
    its mean 2.5 / 5 = 0.5, so the mean -1 has standard error sqrt(0.5 + 0.5) / 2 = 0.5 and
    Welch-Satterthwaite df 1^2 / (2 x 0.5^2 / 4) = 8: h = t(0.975, 8) x 0.5 = 1.153, the
    interval [-2.153, 0.153] holds 0. Towards 'less' the centre is 1: decided after
    ceil(5 x 1.153^2) = 7 replications, which both cells get (cell by cell each would need 20)."""
    from simcore.stats.claims import undecided_cells

    raw = _raw((TEN + UNDECIDED, TEN), (TEN + UNDECIDED, TEN))
    h = stats.t.ppf(0.975, 8) * 0.5
    assert undecided_cells(_toy(), raw, {**LESS_NEW, "across": "mean"}) == {0: math.ceil(5 * h**2), 1: 7}
    assert undecided_cells(_toy(), raw, LESS_NEW) == {0: 20, 1: 20}


def test_cell_statistics_give_each_cell_s_interval_at_the_spec_s_level():
    """At 90%, no Bonferroni correction (the readings set cells side by side, they do not judge
    the claim): cell 0 -6 +- t(0.95, 4) x 1 / sqrt 5, cell 1 -1 +- t(0.95, 4) x sqrt 2.5 / sqrt 5,
    each with n = 5 and the sd of the per-replication differences. Only the cells ``where`` names."""
    from simcore.stats.claims import cell_statistics

    spec = _toy(confidence=0.9, grid={"k": [1, 2, 3]})
    raw = _raw((TEN + DECIDED, TEN), (TEN + UNDECIDED, TEN), (TEN + OPPOSED, TEN))
    got = cell_statistics(spec, raw, {**LESS_NEW, "where": {"k": [1, 2]}})
    assert sorted(got) == [0, 1]
    t = stats.t.ppf(0.95, 4)
    for cell, mean, sd in ((0, -6.0, 1.0), (1, -1.0, math.sqrt(2.5))):
        iv = got[cell]
        assert (iv.n, iv.mean, iv.sd, iv.level, iv.low, iv.high) == \
            pytest.approx((5, mean, sd, 0.9, mean - t * sd / math.sqrt(5), mean + t * sd / math.sqrt(5)))


def test_cell_statistics_of_a_share_less_claim_are_clopper_pearson_at_the_spec_s_level():
    """5 wins in 6 (the tie of test_share_less_is_a_clopper_pearson_interval_of_the_wins) at 90%:
    [beta(0.05; 5, 2), beta(0.95; 6, 1)]; a share has no sd (NaN); the claim row states the level."""
    from simcore.stats.claims import cell_statistics

    claim = {"id": "s", "text": "t", "kind": "share-less", "metric": "t", "policy": "new", "threshold": 0.5}
    new = BASE.copy()
    new[:5] -= 1.0
    raw = _raw((new, BASE))
    iv = cell_statistics(_spec(0.9), raw, claim)[0]
    assert (iv.n, iv.mean, iv.level) == (6, pytest.approx(5 / 6), 0.9) and math.isnan(iv.sd)
    assert (iv.low, iv.high) == pytest.approx((stats.beta.ppf(0.05, 5, 2), stats.beta.ppf(0.95, 6, 1)))
    row = evaluate_claim(_spec(0.9), raw, claim)
    assert (row["level"], row["ci_low"]) == (0.9, pytest.approx(stats.beta.ppf(0.05, 5, 2)))


def test_cell_estimates_carry_the_statistic_s_influence_values_and_replications():
    """new 1, 2, 6 (mean 3, influence -2, -1, 3) against base 4, 4, 7 (mean 5, influence -1, -1,
    2), the rows given in reverse: a value claim's estimate is new's own mean 3 with influence
    -2, -1, 3; a difference claim's -2 with influence -1, 0, 1; both over replications (0, 1, 2)
    in order. share-less and gain-grows have no influence values: nothing."""
    from simcore.stats.claims import cell_estimates

    raw = _raw((np.array([1.0, 2.0, 6.0]), np.array([4.0, 4.0, 7.0])))[::-1].reset_index(drop=True)
    value = cell_estimates(_toy(), raw, {**LESS_NEW, "kind": "value"})
    diff = cell_estimates(_toy(), raw, LESS_NEW)
    assert list(value) == list(diff) == [0]
    for got, mean, influence in ((value[0], 3.0, [-2.0, -1.0, 3.0]), (diff[0], -2.0, [-1.0, 0.0, 1.0])):
        estimate, reps = got
        assert (estimate.value, list(estimate.influence), reps) == (pytest.approx(mean), pytest.approx(influence),
                                                                    (0, 1, 2))
    for kind in ("share-less", "gain-grows"):
        assert cell_estimates(_toy(), raw, {**LESS_NEW, "kind": kind}) == {}


def test_a_claim_without_calibration_has_an_empty_calibrated_column():
    """No ``calibrated`` key: the column is the empty string (claims.csv), the verdict the
    statistical one (cell 0 of the undecided-cells test: reproduced)."""
    row = evaluate_claim(_toy(), _raw((TEN + DECIDED, TEN)), LESS_NEW)
    assert (row["calibrated"], row["verdict"], row["statistical_verdict"]) == ("", "reproduced", "reproduced")


def test_a_published_effect_that_rounds_to_zero_is_not_exceeded_by_an_interval_from_zero():
    """'ratio-above' a threshold of 3 with the published ratio one ulp above 3 (the loader
    accepts it: strictly beyond the threshold): on the log scale log(3 + ulp) and log 3 round to
    the same double, so P = 0 and m = 0. The ratio's interval [3, 3.6] gives effects
    [0, log 1.2]. It holds P itself: not larger than published (lo - m = 0 is not > P = 0), not
    reproduced (lo = 0 is not > 0), not absent (hi + m = 0.18 is not < 0): inconclusive."""
    lo, hi, p, _ = effect_interval("ratio-above", 3.0, 3.6, 3.0, float(np.nextafter(3.0, 4.0)))
    assert (lo, hi, p) == (0.0, pytest.approx(math.log(1.2)), 0.0)
    assert cell_verdict(lo, hi, p) == "inconclusive"


def test_than_cell_compares_with_the_baseline_unless_the_claim_names_another_policy():
    """Cells k = 1: new [4, 8, 12], base [1, 2, 3]; k = 2: new [2, 4, 6], base [5, 5, 5].
    Without ``than`` the other side is the baseline at k = 1: new at k = 2 over base at k = 1 is
    [2, 4, 6] / [1, 2, 3] = 2 exactly, every influence value (a - 2 b) / mean(b) = 0, so the
    interval is the point [2, 2], above 1. With ``than: new`` it is new at k = 2 over new at
    k = 1: [2, 4, 6] / [4, 8, 12] = 0.5 exactly, the point [0.5, 0.5], below 1. (Any other pairing,
    e.g. base at k = 2, would give neither number; no rows of the named side would give no estimate.)"""
    raw = _raw(([4, 8, 12], [1, 2, 3]), ([2, 4, 6], [5, 5, 5]))
    base = {"id": "c", "text": "t", "kind": "ratio-above", "metric": "t", "policy": "new", "threshold": 1.0,
            "than_cell": {"k": 1}}
    row = evaluate_claim(_shared_spec(), raw, base)
    assert (row["than"], row["cells"], row["deciding_cell"], row["verdict"]) == ("base at k = 1", 1, 1, "reproduced")
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == pytest.approx((2.0, 2.0, 2.0))
    own = evaluate_claim(_shared_spec(), raw, {**base, "kind": "ratio-below", "than": "new"})
    assert (own["than"], own["cells"], own["deciding_cell"], own["verdict"]) == ("new at k = 1", 1, 1, "reproduced")
    assert (own["estimate"], own["ci_low"], own["ci_high"]) == pytest.approx((0.5, 0.5, 0.5))


def test_than_label_names_every_substituted_grid_value():
    """The other side is the policy at each ``than_cell`` value, written 'name = value' and
    separated by a comma and a space, in the order given; without ``than_cell`` the policy alone."""
    from simcore.stats.claims import than_label

    assert than_label({"than_cell": {"k": 1, "nodes": 4}}, "base") == "base at k = 1, nodes = 4"
    assert than_label({"than_cell": {"k": 1}}, "new") == "new at k = 1"
    assert than_label({}, "base") == "base"


CURVE = [{"policy": p, "metric": "t", "value": v, "where": {"k": k}}
         for k, (new, base) in enumerate([(90.0, 100.0), (95.0, 100.0), (110.0, 100.0)], start=1)
         for p, v in (("new", new), ("base", base))]


@pytest.mark.parametrize("offsets, verdict, cell", [
    ((5.0, 5.0, 5.0), "not specific", 0),    # slower everywhere: the paper's light-load gains are not there
    ((-5.0, -5.0, 5.0), "reproduced", 2),    # the sign changes where the paper's does
    ((0.1, 0.1, 5.0), "reproduced", 2),      # slower at light loads too, but below the practical size
    ((5.0, -5.0, 5.0), "not specific", 0),   # one light load is enough
])
def test_a_claim_on_part_of_a_curve_needs_the_sign_the_paper_has_elsewhere(offsets, verdict, cell):
    """'new is slower from k = 3 on' (greater, where k = 3) on a figure whose published curve has
    new faster at k = 1, 2 (90 and 95 against 100) and slower at k = 3 (110). Practical size: a
    quarter of the smallest published effect, |log 0.95| / 4 = 0.0128, times the baseline's mean 35:
    0.449. Each data set adds an offset to the baseline per cell (spread +-0.1, decided at the
    Bonferroni level 97.5% over the two opposite cells). At k = 3 the offset 5 reproduces the claim;
    it is 'not specific' when a light load shows the same decided slowdown of practical size (the
    row then gives that cell), not when the light loads are faster or only slower by 0.1, nor when
    the light loads' published numbers are marked untested (then no cell has the other sign)."""
    raw = _raw(*[(BASE + off + PM, BASE) for off in offsets])
    claim = {"id": "worse-heavy", "text": "t", "kind": "greater", "metric": "t", "policy": "new", "where": {"k": 3}}
    spec = _toy(grid={"k": [1, 2, 3]}, published=CURVE)
    row = evaluate_claim(spec, raw, claim)
    assert (row["verdict"], row["deciding_cell"]) == (verdict, cell)
    assert row["estimate"] == pytest.approx(offsets[cell])
    assert evaluate_claim(_toy(grid={"k": [1, 2, 3]}), raw, claim)["verdict"] == "reproduced"   # no curve, no rule
    untested = [{**e, "untested": "the text states nothing of it"} if e["where"]["k"] < 3 else e for e in CURVE]
    assert evaluate_claim(_toy(grid={"k": [1, 2, 3]}, published=untested), raw, claim)["verdict"] == "reproduced"
