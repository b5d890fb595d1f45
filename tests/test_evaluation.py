"""Artifact evaluation: the consistency tests (derived by hand here) and `simcore evaluate` on
small result folders whose differences are known."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from simcore.cli import main
from simcore.errors import InputError
from simcore.report.evaluation import compare_claims, compare_means, evaluate, markdown
from simcore.stats.consistency import holm, interval_se, interval_z, pooled_se, pooled_t

Z95 = 1.959963984540054


def test_the_t_test_pools_the_variance_of_both_runs():
    """10 vs 12, sd 1 and 2, n 4 and 16: pooled variance (3 x 1 + 15 x 4) / 18 = 3.5, se =
    sqrt(3.5 (1/4 + 1/16)) = 1.0458, t = -2 / 1.0458 = -1.912 on 18 df."""
    c = pooled_t(10.0, 1.0, 4, 12.0, 2.0, 16)
    assert c.difference == -2.0 and c.se == pytest.approx(math.sqrt(3.5 * 0.3125))
    assert c.statistic == pytest.approx(-2.0 / math.sqrt(3.5 * 0.3125))
    assert c.p == pytest.approx(2 * stats.t.sf(2.0 / math.sqrt(3.5 * 0.3125), 18.0))
    # the spreads the other way round: (3 x 4 + 15 x 1) / 18 = 1.5, se = sqrt(1.5 x 0.3125)
    assert pooled_t(10.0, 2.0, 4, 12.0, 1.0, 16).se == pytest.approx(math.sqrt(1.5 * 0.3125))
    # two replications on each side are enough: variance (1 + 1) / 2 = 1, se 1, t = -1 on 2 df
    two = pooled_t(1.0, 1.0, 2, 2.0, 1.0, 2)
    assert two.se == pytest.approx(1.0) and two.p == pytest.approx(2 * stats.t.sf(1.0, 2.0))


def test_a_small_run_without_spread_borrows_the_references():
    """Three replications that all saw 0 of a rare event against 0.003 (sd 0.004, n 300): the
    pooled sd is 0.004 sqrt(299 / 301) = 0.0039867, se = 0.0039867 sqrt(1/3 + 1/300) = 0.0023132,
    t = -1.297, p = 0.196: consistent. Welch's test would take the small run's zero spread at its
    word: se = 0.004 / sqrt(300) = 0.000231, t = -13."""
    c = pooled_t(0.0, 0.0, 3, 0.003, 0.004, 300)
    se = 0.004 * math.sqrt(299 / 301) * math.sqrt(1 / 3 + 1 / 300)
    assert c.se == pytest.approx(se) and c.statistic == pytest.approx(-0.003 / se)
    assert c.p == pytest.approx(2 * stats.t.sf(0.003 / se, 301)) and c.p > 0.19


def test_the_t_test_on_deterministic_values_asks_for_equality():
    """Equal to 1e-9, relative (1e6 and 1e6 + 1e-4) or absolute (0 and 1e-10): t = 0, p = 1;
    else t infinite, p = 0. The difference is kept, the standard error is 0."""
    same = pooled_t(0.5, 0.0, 3, 0.5, 0.0, 100)
    assert (same.difference, same.se, same.statistic, same.p) == (0.0, 0.0, 0.0, 1.0)
    apart = pooled_t(0.5, 0.0, 3, 0.5 + 1e-6, 0.0, 100)
    assert apart.difference == pytest.approx(-1e-6) and (apart.se, apart.statistic, apart.p) == (0.0, math.inf, 0.0)
    assert pooled_t(1e6, 0.0, 3, 1e6 + 1e-4, 0.0, 3).p == 1.0 and pooled_t(0.0, 0.0, 3, 1e-10, 0.0, 3).p == 1.0
    with pytest.raises(ValueError, match="two replications"):
        pooled_t(1.0, 1.0, 1, 1.0, 1.0, 5)


def test_pooled_standard_errors_of_two_runs():
    """se 0.5 from 10 and 0.1 from 10: variances 2.5 and 0.1, pooled (9 x 2.5 + 9 x 0.1) / 18 =
    1.3, se = sqrt(1.3 x 0.2) = sqrt(0.26) = hypot(0.5, 0.1) (equal n: as if added). se 0 from 4
    and 0.1 from 100: (99 x 100 x 0.01) / 102 = 0.97059, se = sqrt(0.97059 x 0.26) = 0.50235.
    Without the replications: added."""
    assert pooled_se(0.5, 10, 0.1, 10) == pytest.approx(math.hypot(0.5, 0.1))
    assert pooled_se(0.0, 4, 0.1, 100) == pytest.approx(math.sqrt(99 * 100 * 0.01 / 102 * 0.26))
    assert pooled_se(0.5, float("nan"), 0.1, 10) == pytest.approx(math.hypot(0.5, 0.1))
    # two replications are enough on either side: (99 x 100 x 0.01) / 100 = 0.99, x (1/2 + 1/100)
    assert pooled_se(0.0, 2, 0.1, 100) == pytest.approx(math.sqrt(0.99 * 0.51))
    assert pooled_se(0.1, 100, 0.0, 2) == pytest.approx(math.sqrt(0.99 * 0.51))


def test_interval_se_reads_the_half_that_faces_the_other_estimate():
    """[0.8, 1.5] around 1 at 95%: towards 2 the upper half 0.5, towards 0 the lower half 0.2,
    each over the normal quantile 1.96."""
    assert interval_se(1.0, 0.8, 1.5, 0.95, toward=2.0) == pytest.approx(0.5 / Z95)
    assert interval_se(1.0, 0.8, 1.5, 0.95, toward=0.0) == pytest.approx(0.2 / Z95)
    assert interval_se(1.0, 0.8, 1.5, 0.90, toward=2.0) == pytest.approx(0.5 / 1.6448536269514722)
    assert interval_se(1.0, 1.0, 1.0, float("nan"), toward=2.0) == 0.0
    assert interval_se(1.0, 0.8, 1.5, 0.95, toward=1.0) == pytest.approx(0.5 / Z95)   # a tie reads the upper half
    for level in (0.0, 1.0, 1.5):   # an interval with a width needs a level strictly between 0 and 1
        with pytest.raises(ValueError, match=r"an interval of width 0.7 needs a level in \(0, 1\)"):
            interval_se(1.0, 0.8, 1.5, level, toward=2.0)


def test_a_ratio_with_a_value_of_zero_is_compared_on_its_own_scale():
    from simcore.stats.consistency import analysis_scale

    assert analysis_scale("ratio", 0.0, 1.0) == (0.0, 1.0)
    assert analysis_scale("ratio", 1.0, math.e) == pytest.approx((0.0, 1.0))


def test_ratios_are_compared_on_the_log_scale():
    """exp(0.1) in [1, exp(0.2)] against 1 in [exp(-0.05), exp(0.05)], both at 95%: on the log
    scale se = sqrt(0.1^2 + 0.05^2) / 1.96 and z = 0.1 / se = 1.753."""
    small = (math.exp(0.1), 1.0, math.exp(0.2), 0.95)
    ref = (1.0, math.exp(-0.05), math.exp(0.05), 0.95)
    c = interval_z(small, ref, "ratio")
    assert c.difference == pytest.approx(0.1)
    assert c.statistic == pytest.approx(0.1 * Z95 / math.hypot(0.1, 0.05))
    assert c.p == pytest.approx(2 * stats.norm.sf(0.1 * Z95 / math.hypot(0.1, 0.05)))
    linear = interval_z(small, ref, "difference")       # the same numbers as differences: linear
    assert linear.difference == pytest.approx(math.exp(0.1) - 1.0)


def test_a_slopes_errors_are_not_pooled():
    """A slope of -0.06 in [-0.2, 0.09] from 12 replications against 0.001 in [0.0004, 0.0016]
    from 3000, both at 97.5%: the halves facing each other are 0.15 and 0.0006, over the normal
    quantile 2.2414; added in quadrature, z = 0.061 / (hypot(0.15, 0.0006) / 2.2414) = 0.911.
    Pooled, as a mean's would be, the 3000 replications' small spread would set the error
    ((11 * 12 * 0.0669^2 + 2999 * 3000 * 0.000268^2) / 3010 * (1/12 + 1/3000)): z near 10."""
    q = stats.norm.ppf(0.9875)
    small, ref = (-0.06, -0.2, 0.09, 0.975), (0.001, 0.0004, 0.0016, 0.975)
    slope = interval_z(small, ref, "slope", (12, 3000))
    assert slope.se == pytest.approx(math.hypot(0.15, 0.0006) / q)
    assert slope.statistic == pytest.approx(-0.061 * q / math.hypot(0.15, 0.0006))
    assert abs(interval_z(small, ref, "difference", (12, 3000)).statistic) > 9


def test_holm_steps_down_and_keeps_the_adjusted_values_monotone():
    """p = 0.01, 0.04, 0.03, 0.005: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03,
    0.06, 0.04, running maximum 0.02, 0.03, 0.06, 0.06. At 0.035 Holm names the first and last
    (Bonferroni, 4 p, would name only the last: 0.04 > 0.035)."""
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert (adjusted <= 0.035).tolist() == [True, False, False, True]
    # 0.001, 0.012, 0.011: 0.003, 0.022, then 1 x 0.012 raised to 0.022 (it cannot be named
    # once a smaller p value was not)
    assert holm([0.001, 0.012, 0.011]).tolist() == pytest.approx([0.003, 0.022, 0.022])
    assert holm([]).tolist() == []
    assert holm([0.6, 0.7]).tolist() == [1.0, 1.0]   # 2 x 0.6 = 1.2 is capped at 1


def _claim(exp, claim, estimate, low, high, n=10, cell=0, cells=1, statistic="difference", verdict="reproduced"):
    return {"experiment": exp, "claim": claim, "statistic": statistic, "verdict": verdict, "estimate": estimate,
            "ci_low": low, "ci_high": high, "level": 0.95, "n": n, "deciding_cell": cell, "cells": cells}


def test_claims_are_compared_only_where_both_runs_estimate_one_quantity():
    """a: 1.0 +- 0.5 against 1.1 +- 0.1: z = 0.1 / (sqrt(0.5^2 + 0.1^2) / 1.96) = 0.38, consistent.
    b: 3.0 +- 0.5 against 1.0 +- 0.1: z = 2 x 1.96 / 0.51 = 7.7, p = 1.6e-14, named.
    c: deciding cells 2 and 5; d: a SAN figure at another scale; e: only in the reference."""
    small = pd.DataFrame([_claim("x", "a", 1.0, 0.5, 1.5), _claim("x", "b", 3.0, 2.5, 3.5),
                          _claim("x", "c", 1.0, 0.5, 1.5, cell=2), _claim("fig8", "d", 0.5, 0.5, 0.5, cell=None),
                          _claim("x", "f", 0.0, 0.0, 0.0, n=4)])
    ref = pd.DataFrame([_claim("x", "a", 1.1, 1.0, 1.2), _claim("x", "b", 1.0, 0.9, 1.1),
                        _claim("x", "c", 1.0, 0.9, 1.1, cell=5), _claim("fig8", "d", 0.9, 0.9, 0.9, cell=None),
                        _claim("x", "e", 1.0, 0.9, 1.1), _claim("x", "f", 0.2, 0.1, 0.3, n=100)])
    out = compare_claims(small, ref, 0.01, same_scale=False, san_figures={"fig8"}).set_index("claim")
    assert out.loc["a", "statistic_value"] == pytest.approx(-0.1 * Z95 / math.hypot(0.5, 0.1))
    assert not out.loc["a", "inconsistent"] and out.loc["b", "inconsistent"]
    assert out.loc["b", "statistic_value"] == pytest.approx(2.0 * Z95 / math.hypot(0.5, 0.1))
    # f: 4 replications without spread against 0.2 +- 0.1 from 100. se_ref = 0.1 / 1.96 = 0.05102,
    # its variance 100 x 0.05102^2 = 0.26032, pooled 99 x 0.26032 / 102 = 0.25266, se =
    # sqrt(0.25266 (1/4 + 1/100)) = 0.2563, z = -0.78: consistent (added, z = -3.92, p = 9e-5)
    se_f = math.sqrt(99 * 100 * (0.1 / Z95) ** 2 / 102 * 0.26)
    assert out.loc["f", "statistic_value"] == pytest.approx(-0.2 / se_f) and not out.loc["f", "inconsistent"]
    assert out.loc["c", "reason"] == "deciding cells differ (2 here, 5 in the reference)"
    assert out.loc["d", "reason"].startswith("SAN figure")
    assert out.loc["e", "reason"] == "no estimate in one of the runs"
    assert not out.loc[["c", "d", "e"], "inconsistent"].any()
    # at the reference's own scale the SAN figure's exact values are compared: 0.5 against 0.9
    same = compare_claims(small, ref, 0.01, same_scale=True, san_figures={"fig8"}).set_index("claim")
    assert same.loc["d", "reason"] == "" and same.loc["d", "inconsistent"]


PLATFORM = "Linux-6.18.44-fc-v669-x86_64-with-glibc2.36"


def _summary(exp, rows):
    columns = ["experiment", "cell", "policy", "metric", "n", "mean", "sd", "level", "ci_low", "ci_high"]
    return pd.DataFrame([[exp, c, p, "m", n, m, s, 0.95, m - s, m + s] for c, p, n, m, s in rows], columns=columns)


def test_means_compared_by_the_pooled_t_test_and_holm_over_the_family():
    """Cell 0: 10 +- 1 (n 4) against 10.2 +- 2 (n 16), t = -0.19: consistent. Cell 1: 10 +- 1
    (n 4) against 20 +- 2 (n 16): pooled se sqrt(3.5 x 0.3125) = 1.0458, t = -9.56 on 18 df,
    p = 1.8e-8, x 2 comparisons: named. Cell 2 has one replication here: not compared."""
    small = _summary("x", [(0, "p", 4, 10.0, 1.0), (1, "p", 4, 10.0, 1.0), (2, "p", 1, 3.0, 0.0)])
    ref = _summary("x", [(0, "p", 16, 10.2, 2.0), (1, "p", 16, 20.0, 2.0), (2, "p", 16, 3.0, 1.0)])
    out = compare_means(small, ref, 0.01).set_index("cell")
    assert list(out.index) == [0, 1]
    p1 = 2 * stats.t.sf(10.0 / math.sqrt(3.5 * 0.3125), 18.0)
    assert out.loc[1, "p_adjusted"] == pytest.approx(min(1.0, 2 * p1)) and out.loc[1, "inconsistent"]
    assert not out.loc[0, "inconsistent"]


def _results(folder, scale, claims, summary, provenance=True, fingerprints=None, parts=None, platform=PLATFORM):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scale.txt").write_text(json.dumps(scale))
    for exp, frame in claims.groupby("experiment"):
        (folder / exp).mkdir(exist_ok=True)
        frame.to_csv(folder / exp / "claims.csv", index=False)
    for exp, frame in summary.groupby("experiment"):
        frame.to_csv(folder / exp / "summary.csv", index=False)
        if provenance:
            record = {"commit": "abc", "root_seed": 7, "wall_time_s": 60.0, "platform": platform,
                      "packages": {"python": "3.11.7", "numpy": "2.4.6"},
                      "fingerprint": (fingerprints or {}).get(exp, "f0")}
            if parts and exp in parts:
                record["fingerprint_parts"] = parts[exp]
            (folder / exp / "provenance.json").write_text(json.dumps(record))


def test_evaluate_names_what_is_missing_and_what_differs(tmp_path):
    claims = pd.DataFrame([_claim("x", "a", 1.0, 0.5, 1.5), _claim("x", "b", 3.0, 2.5, 3.5)])
    ref_claims = pd.DataFrame([_claim("x", "a", 1.1, 1.0, 1.2), _claim("x", "b", 1.0, 0.9, 1.1)])
    summary = _summary("x", [(0, "p", 4, 10.0, 1.0)])
    _results(tmp_path / "run", "smoke", claims, summary, provenance=False)
    _results(tmp_path / "ref", "full", ref_claims, _summary("x", [(0, "p", 16, 10.2, 2.0)]))
    ev = evaluate(tmp_path / "run", tmp_path / "ref", ["x"], set(), [tmp_path / "report.pdf"])
    assert not ev.ok
    assert ev.missing == [str(tmp_path / "run/x/provenance.json"), str(tmp_path / "report.pdf")]
    assert ev.inconsistent_claims.claim.tolist() == ["b"] and ev.inconsistent_means.empty
    page = markdown(ev)
    assert "**INCONSISTENT**: 2 missing outputs; 1 claims and 0 means differ beyond chance" in page
    assert "| x | b | 3 [2.5, 3.5] | 1 [0.9, 1.1] | +2 (7.7 se) |" in page
    # the same run with the claim at the reference's value and its outputs present is consistent
    claims.loc[1, ["estimate", "ci_low", "ci_high"]] = [1.1, 0.6, 1.6]
    _results(tmp_path / "run", "smoke", claims, summary)
    (tmp_path / "report.pdf").write_text("%PDF")
    ev = evaluate(tmp_path / "run", tmp_path / "ref", ["x"], set(), [tmp_path / "report.pdf"])
    assert ev.ok and "Verdict: **consistent**" in markdown(ev) and "(their fingerprints agree)" in markdown(ev)


def test_evaluate_names_the_experiments_simulated_from_other_inputs_than_the_reference(tmp_path):
    """x and y agree with the reference, but y's fingerprint differs (another spec, seed or model
    code): the run is inconsistent, naming y and what differs, unless the change is allowed. Each
    experiment took 60 s; in the reference both share one fingerprint (y reads x's replications),
    so it counts once: 1.0 min, against 2.0 min here."""
    claims = pd.DataFrame([_claim("x", "a", 1.0, 0.9, 1.1), _claim("y", "a", 1.0, 0.9, 1.1)])
    summary = pd.concat([_summary("x", [(0, "p", 4, 10.0, 1.0)]), _summary("y", [(0, "p", 4, 10.0, 1.0)])])
    _results(tmp_path / "run", "smoke", claims, summary, fingerprints={"y": "f1"},
             parts={"y": {"params": "p1", "seed": "s0", "code": "c1"}})
    _results(tmp_path / "ref", "full", claims, summary, parts={"y": {"params": "p0", "seed": "s0", "code": "c0"}})
    ev = evaluate(tmp_path / "run", tmp_path / "ref", ["x", "y"], set())
    assert ev.other_code == ("y",) and ev.changed == {"y": ["parameters (spec, preset)", "model code"]}
    assert not ev.ok and ev.inconsistent_claims.empty and ev.inconsistent_means.empty
    page = markdown(ev)
    assert "**INCONSISTENT**: 1 experiments simulated from other inputs than the reference's" in page
    assert "y (parameters (spec, preset), model code)" in page and "--allow-changed" in page
    assert "root seed 7, 2.0 min of simulation." in page.split("- Reference:")[0]
    assert "root seed 7, 1.0 min of simulation." in page.split("- Reference:")[1]
    allowed = evaluate(tmp_path / "run", tmp_path / "ref", ["x", "y"], set(), allow_changed=True)
    assert allowed.ok and "Allowed (`--allow-changed`)" in markdown(allowed)
    # a reference that records only the hash: the page says the fingerprint differs
    _results(tmp_path / "old", "full", claims, summary)
    assert evaluate(tmp_path / "run", tmp_path / "old", ["x", "y"], set()).changed == {"y": ["fingerprint"]}


def test_evaluate_refuses_a_folder_that_is_no_reference(tmp_path):
    _results(tmp_path / "run", "smoke", pd.DataFrame([_claim("x", "a", 1.0, 0.5, 1.5)]), _summary("x", []))
    with pytest.raises(InputError, match="scale.txt: missing"):
        evaluate(tmp_path / "run", tmp_path / "nothing", ["x"], set())
    with pytest.raises(InputError, match="alpha"):
        evaluate(tmp_path / "run", tmp_path / "run", ["x"], set(), alpha=1.5)


def test_cli_exit_codes_and_verdict_page(tmp_path, capsys):
    """Exit 1 and the page when inconsistent; exit 2 and one sentence when the reference is not one."""
    specs = tmp_path / "specs"
    specs.mkdir()
    out = tmp_path / "evaluation.md"
    code = main(["--specs", str(specs), "evaluate", "--results", str(tmp_path), "--reference", str(tmp_path / "none"),
                 "--san", str(tmp_path), "--out", str(out)])
    assert code == 2 and "scale.txt: missing" in capsys.readouterr().err and not out.exists()


def test_cli_exit_1_and_the_page_when_outputs_are_missing(tmp_path, capsys):
    """A run that made nothing, against a reference with one claim: every experiment's outputs are
    missing, the page says so, and the exit code is 1."""
    root = Path(__file__).resolve().parents[1]
    _results(tmp_path / "ref", "full", pd.DataFrame([_claim("zhou91-fig1", "a", 1.0, 0.9, 1.1)]), _summary("x", []))
    (tmp_path / "run").mkdir()
    (tmp_path / "run/scale.txt").write_text('"smoke"')
    out = tmp_path / "evaluation.md"
    code = main(["--specs", str(root / "config/experiments"), "evaluate", "--results", str(tmp_path / "run"),
                 "--reference", str(tmp_path / "ref"), "--san", str(root / "config/san"), "--out", str(out)])
    assert code == 1 and "evaluate: INCONSISTENT" in capsys.readouterr().err
    page = out.read_text()
    assert "**INCONSISTENT**" in page and str(tmp_path / "run/zhou91-fig1/summary.csv") in page


def test_replications_the_reference_also_holds_are_counted_and_compared_value_by_value(tmp_path):
    """Cell 0 replication 0 equal (a NaN on both sides counts as equal), replication 1 differing in
    one value, replication 2 only here: 2 shared, 1 identical."""
    from simcore.report.evaluation import read_shared, shared_replications

    columns = ["cell", "policy", "rep", "spawn_key", "m", "share"]
    small = pd.DataFrame([[0, "p", 0, "1.0.0", 1.5, float("nan")], [0, "p", 1, "1.0.1", 2.0, 0.5],
                          [0, "p", 2, "1.0.2", 3.0, 0.5]], columns=columns)
    ref = pd.DataFrame([[0, "p", 0, "1.0.0", 1.5, float("nan")], [0, "p", 1, "1.0.1", 2.0000001, 0.5]], columns=columns)
    for folder, frame in (("run", small), ("ref", ref)):
        (tmp_path / folder / "x").mkdir(parents=True)
        frame.to_csv(tmp_path / folder / "x/replications.csv", index=False)
    counts = shared_replications(read_shared(tmp_path / "run", tmp_path / "ref", ["x", "absent"]))
    assert counts.values.tolist() == [["x", 0, "p", 2, 1]]


def _replications(folder, exp, rows, platform=PLATFORM, cpu=None):
    """A result folder holding ``exp``'s replications (cell, policy, rep, m) and a provenance."""
    (folder / exp).mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=["cell", "policy", "rep", "spawn_key", "m"]).to_csv(
        folder / exp / "replications.csv", index=False
    )
    record = {"commit": "abc", "root_seed": 7, "wall_time_s": 1.0, "fingerprint": "f0", "platform": platform,
              "packages": {"python": "3.11.7", "numpy": "2.4.6"}}
    (folder / exp / "provenance.json").write_text(json.dumps({**record, **({"cpu": cpu} if cpu else {})}))


REF = [10.0, 12.0, 9.0, 11.0]


def _rows(values):
    return [[0, "p", r, f"1.0.{r}", v] for r, v in enumerate(values)]


def _compared(run, ref, mode, exps=("x",)):
    from simcore.report.evaluation import compare_replications, read_shared

    return compare_replications(read_shared(run, ref, list(exps)), mode, 0.01)


def test_the_platform_decides_how_shared_replications_are_compared(tmp_path):
    """Another kernel on the same CPU model is the same platform; another C library, or another
    CPU, is not; a run that records no CPU model cannot show one platform (paired). Each
    experiment is judged by its own two provenances: x records the CPU model on both sides, y not
    in the reference, so x is compared identically and y paired."""
    from simcore.report.evaluation import platform_of, replication_modes

    for exp in ("x", "y"):
        _replications(tmp_path / "ref", exp, _rows(REF), cpu="A" if exp == "x" else None)
        _replications(tmp_path / "cpuA", exp, _rows(REF), cpu="A")
    _replications(tmp_path / "nocpu", "x", _rows(REF))
    _replications(tmp_path / "kernel", "x", _rows(REF), platform="Linux-6.1.0-9-amd64-x86_64-with-glibc2.36", cpu="A")
    _replications(tmp_path / "libc", "x", _rows(REF), platform="Linux-6.18.44-fc-v669-x86_64-with-glibc2.39")
    _replications(tmp_path / "cpuB", "x", _rows(REF), cpu="B")
    assert platform_of(json.loads((tmp_path / "libc/x/provenance.json").read_text())) == {
        "arch": "x86_64", "libc": "glibc2.39", "python": "3.11.7", "numpy": "2.4.6"}
    assert replication_modes(tmp_path / "kernel", tmp_path / "ref", ["x"])["x"][0] == "identical"
    assert replication_modes(tmp_path / "nocpu", tmp_path / "ref", ["x"])["x"] == (
        "paired", "one of the runs records no CPU model, so one platform cannot be shown")
    mode, why = replication_modes(tmp_path / "libc", tmp_path / "ref", ["x"])["x"]
    assert mode == "paired" and "libc" in why
    assert replication_modes(tmp_path / "cpuA", tmp_path / "cpuB", ["x"])["x"] == (
        "paired", "this run's platform differs from the reference's in cpu")
    modes = replication_modes(tmp_path / "cpuA", tmp_path / "ref", ["x", "y"])
    assert {exp: mode for exp, (mode, _) in modes.items()} == {"x": "identical", "y": "paired"}
    assert replication_modes(tmp_path / "libc", tmp_path / "ref", ["x"], "identical")["x"][0] == "identical"
    with pytest.raises(InputError, match="--replications"):
        replication_modes(tmp_path / "libc", tmp_path / "ref", ["x"], "sometimes")


def test_on_one_platform_a_shared_replication_must_be_identical(tmp_path):
    """Replications 0-2 here, 0-3 in the reference; replication 1 differs in its 10th digit: on
    one platform that is inconsistent, and the page names replication 1."""
    _replications(tmp_path / "ref", "x", _rows(REF))
    _replications(tmp_path / "run", "x", _rows([10.0, 12.000000001, 9.0]))
    out, first = _compared(tmp_path / "run", tmp_path / "ref", "identical")
    assert out[["metric", "k", "identical", "agree"]].values.tolist() == [["m", 3, 2, 3]]
    assert out.inconsistent.tolist() == [True]
    assert first == "x, cell 0, policy p, replication 1: m = 12.000000001 here, 12.0 in the reference"
    out, first = _compared(tmp_path / "ref", tmp_path / "ref", "identical")
    assert not out.inconsistent.any() and first == ""


def test_on_another_platform_last_bits_pass_and_a_five_percent_shift_fails(tmp_path):
    """Paired mode, one policy, 4 replications. Every value times (1 + 1e-12): floating point's
    last bits, every relative difference 0, p = 1, and any shift detected (power 1). Every value
    times 1.05: each replication's relative difference is 2 x 0.05 / 2.05 = 0.04878, the same
    shift in every replication (to the last bits: rounding): p = 0, inconsistent. Replication 0 at 11 instead of 10, the
    others equal: differences a = 2 / 21, 0, 0, 0, mean a / 4, sd sqrt((a^2 - 4 (a / 4)^2) / 3) = a / 2,
    se a / 4, t = 1 on 3 df, p = 0.391: within chance."""
    _replications(tmp_path / "ref", "x", _rows(REF))
    _replications(tmp_path / "bits", "x", _rows([v * (1 + 1e-12) for v in REF]))
    _replications(tmp_path / "shift", "x", _rows([v * 1.05 for v in REF]))
    _replications(tmp_path / "one", "x", _rows([11.0] + REF[1:]))
    out, _ = _compared(tmp_path / "bits", tmp_path / "ref", "paired")
    assert out[["agree", "replications", "p", "power_5%", "power_20%"]].values.tolist() == [[4, 4, 1.0, 1.0, 1.0]]
    assert not out.inconsistent.any()
    out, _ = _compared(tmp_path / "shift", tmp_path / "ref", "paired")
    assert out.difference[0] == pytest.approx(0.1 / 2.05) and out.p.tolist() == [0.0]
    assert out.inconsistent.tolist() == [True]
    out, _ = _compared(tmp_path / "one", tmp_path / "ref", "paired")
    a = 2 / 21
    assert out.difference[0] == pytest.approx(a / 4) and out.se[0] == pytest.approx(a / 4)
    assert out.statistic_value[0] == pytest.approx(1.0) and out.p[0] == pytest.approx(2 * stats.t.sf(1.0, 3))
    assert out.inconsistent.tolist() == [False]


def test_the_shift_test_pools_the_policies_of_one_replication(tmp_path):
    """Two cells, two replications, policies a and b: 4 independent replications.
    Cell 0 rep 0: a 10 -> 11 (2 x 1 / 21), b 20 -> 20 (1 + 1e-12) (last bits: 0); mean 1/21.
    Cell 0 rep 1: a 10 -> 10 (0), b 0 -> 0 (a zero: left out); mean 0.
    Cell 1 rep 0: a 4 -> 4 (0), b NaN -> NaN (left out); mean 0.
    Cell 1 rep 1: a 5 -> 6 (2 x 1 / 11), b 8 -> 8 (0); mean 1/11.
    Mean (1/21 + 1/11) / 4 = 8/231 = 0.034632; sd^2 = (1/441 + 1/121 - 4 (8/231)^2) / 3 = 0.0019115,
    se = sqrt(0.0019115 / 4) = 0.021860, t = 1.5842 on 3 df. Of 8 values 5 are identical and 6
    agree to the last bits. With 3 here for that 0 and 1 for that NaN (a zero or a value on one
    side only: no multiplicative shift makes them), 3 values are identical and the test is the same."""
    from simcore.report.evaluation import compare_replications, read_shared

    keys = [(0, "a", 0), (0, "b", 0), (0, "a", 1), (0, "b", 1), (1, "a", 0), (1, "b", 0), (1, "a", 1), (1, "b", 1)]
    nan = float("nan")
    ref = [10.0, 20.0, 10.0, 0.0, 4.0, nan, 5.0, 8.0]
    run = [11.0, 20.0 * (1 + 1e-12), 10.0, 0.0, 4.0, nan, 6.0, 8.0]
    for side, values in (("ref", ref), ("run", run), ("one-sided", run[:3] + [3.0, 4.0, 1.0] + run[6:])):
        (tmp_path / side / "x").mkdir(parents=True)
        pd.DataFrame([[c, p, r, f"1.{c}.{r}", v] for (c, p, r), v in zip(keys, values)],
                     columns=["cell", "policy", "rep", "spawn_key", "m"]).to_csv(tmp_path / side / "x/replications.csv",
                                                                                 index=False)
    out, _ = compare_replications(read_shared(tmp_path / "run", tmp_path / "ref", ["x"]), "paired", 0.01)
    assert out[["k", "identical", "agree", "replications"]].values.tolist() == [[8, 5, 6, 4]]
    se = math.sqrt((1 / 441 + 1 / 121 - 4 * (8 / 231) ** 2) / 3 / 4)
    assert out.difference[0] == pytest.approx(8 / 231) and out.se[0] == pytest.approx(se)
    assert out.statistic_value[0] == pytest.approx(1.5842, abs=1e-4) and not out.inconsistent[0]
    one_sided, _ = compare_replications(read_shared(tmp_path / "one-sided", tmp_path / "ref", ["x"]), "paired", 0.01)
    assert one_sided[["k", "identical", "agree", "replications"]].values.tolist() == [[8, 3, 4, 4]]
    assert one_sided[["difference", "se", "p"]].values.tolist() == out[["difference", "se", "p"]].values.tolist()


def test_the_shift_test_and_its_power():
    """No difference left, or one replication (no spread to judge it by): p = 1; the same
    difference in each replication (to 1e-8), or a NaN: p = 0. A relative difference is
    2 (a - b) / (|a| + |b|): 0 within the last bits, zero or NaN on both sides; 2 against a zero;
    NaN against a NaN. Power: 1 without spread, 0 from one replication; against no shift, the
    test's level (the central t); with 10,001 replications (t almost normal) and a shift of
    (z_0.995 + z_0.8) se = (2.5758 + 0.8416) se, 0.8 at level 0.01."""
    from simcore.stats.consistency import power, relative_differences, relative_shift, shift_test

    assert shift_test([0.0, 0.0]).p == 1.0 and shift_test([]).p == 1.0
    assert shift_test([0.1, 0.1 + 1e-12]).p == 0.0 and shift_test([0.3]).p == 1.0
    assert shift_test([float("nan"), 0.0]).p == 0.0 and 0.0 < shift_test([0.1, 0.1 + 1e-6]).p < 1e-4
    d = relative_differences([1.0, 2.0, 0.0, float("nan"), float("nan"), 3.0, 6.0],
                             [1.0, 2.0 + 1e-12, 0.0, float("nan"), 1.0, 0.0, 4.0])
    assert d[:4].tolist() == [0.0] * 4 and math.isnan(d[4]) and d[5] == 2.0 and d[6] == pytest.approx(0.4)
    assert relative_shift(0.2) == pytest.approx(0.4 / 2.2) and relative_shift(0.05) == pytest.approx(0.1 / 2.05)
    assert power(0.0, 3, 0.01, 0.1) == 1.0 and power(0.0, 1, 0.01, 0.1) == 0.0 and math.isnan(power(0.0, 0, 0.01, 0.1))
    assert power(math.inf, 1, 0.01, 0.1) == 0.0 and power(1e-14, 3, 0.01, 0.2) == 1.0   # 2e13 se: certain
    assert power(0.05, 5, 0.01, 0.0) == pytest.approx(0.01)
    assert power(1.0, 10001, 0.01, 2.5758293035489 + 0.8416212335729) == pytest.approx(0.8, abs=2e-3)


def test_a_mean_over_shared_replications_is_judged_by_them_not_by_the_pooled_test(tmp_path):
    """The reference's mean is 10.5 and this run's 10.33 over replications 0-2: the pooled t test
    would compare them; with the replications identical, the run is consistent and the mean is
    not compared a second time."""
    claims = pd.DataFrame([_claim("x", "a", 1.0, 0.9, 1.1)])
    _results(tmp_path / "run", "smoke", claims, _summary("x", [(0, "p", 3, 10.33, 1.5)]))
    _results(tmp_path / "ref", "full", claims, _summary("x", [(0, "p", 4, 10.5, 1.3)]))
    _replications(tmp_path / "ref", "x", _rows(REF), cpu="A")
    _replications(tmp_path / "run", "x", _rows(REF[:3]), cpu="A")
    ev = evaluate(tmp_path / "run", tmp_path / "ref", ["x"], set())
    assert ev.ok and ev.means.empty and len(ev.replications) == 1 and ev.modes["x"][0] == "identical"
    assert "On one platform each must be identical, value for value; they are." in markdown(ev)


def test_the_page_says_what_consistent_establishes_and_gives_the_references_scorecard(tmp_path):
    claims = pd.DataFrame([_claim("x", "a", 1.0, 0.9, 1.1)])
    summary = _summary("x", [(0, "p", 4, 10.0, 1.0)])
    _results(tmp_path / "run", "smoke", claims, summary)
    _results(tmp_path / "ref", "full", claims, summary)
    card = {"reproduced with magnitude": 9, "reproduced direction": 34, "other size": 21, "explained": 19,
            "not reproduced": 42, "calibrated": 2, "predicted": 3, "judged under readings": 63}
    page = markdown(evaluate(tmp_path / "run", tmp_path / "ref", ["x"], set(), scorecard=card, report="run/report.pdf"))
    head = page.split("\n- This run")[0]
    assert "It does not say the papers reproduce." in head
    assert ("has 43 of 127 claims reproduced (9 with the paper's number, 34 direction claims; 3 of them predicted "
            "on a calibrated baseline), 21 in the paper's direction with another size, 19 explained") in head
    assert "This run's report: `run/report.pdf`." in head


def test_a_preset_sabotaged_by_ten_percent_fails_the_evaluation(root, simcore_cli, tmp_path):
    """In a scratch copy of the configuration, barak96's information period 1.0 -> 1.1 s (not a
    quantity its calibration fits, which would replace it): barak96-fig2
    simulated at smoke scale from it has another fingerprint and other replications, and `simcore
    evaluate` against the committed reference exits 1 naming it, and its verdict names it again for
    its shared replications, which are not identical (on one platform or not). The same run
    from the committed preset (the control) has the reference's inputs and agreeing replications;
    it exits 1 only because it made no figures, tables or report."""
    import shutil

    pages = {}
    for name, period in (("control", "1.0"), ("sabotaged", "1.1")):
        config = tmp_path / name / "config"
        shutil.copytree(root / "config", config)
        preset = config / "presets/barak96.yaml"
        text = preset.read_text()
        assert "  info_interval:\n    value: 1.0\n" in text
        preset.write_text(
            text.replace("  info_interval:\n    value: 1.0\n", f"  info_interval:\n    value: {period}\n")
        )
        only = tmp_path / name / "specs"
        only.mkdir()
        shutil.copy(config / "experiments/barak96-fig2.yaml", only)
        shutil.copytree(config / "presets", tmp_path / name / "presets")
        shutil.copytree(config / "calibration", tmp_path / name / "calibration")
        results = tmp_path / name / "results"
        raw = tmp_path / name / "raw.parquet"
        common = ["--specs", only, "--config", root / "config/config.yaml"]
        proc = simcore_cli(*common, "run", "barak96-fig2", "--cells", "0:12", "--reps", "0:3", "--scale", "smoke",
                           "--out", raw, "--progress", "off")
        assert proc.returncode == 0, proc.stderr
        proc = simcore_cli(*common, "aggregate", "barak96-fig2", "--raw", raw, "--outdir", results / "barak96-fig2",
                           "--scale", "smoke")
        assert proc.returncode == 0, proc.stderr
        (results / "scale.txt").write_text('"smoke"')
        out, san = tmp_path / name / "evaluation.md", tmp_path / name / "san"
        san.mkdir()
        proc = simcore_cli(*common, "evaluate", "--results", results, "--reference", root / "results/reference",
                           "--san", san, "--out", out)
        assert proc.returncode == 1, proc.stderr       # both lack the figures, tables and report
        pages[name] = out.read_text()
    assert (
        "(their fingerprints agree)" in pages["control"] and "Shared replications that differ" not in pages["control"]
    )
    assert "1 experiments simulated from other inputs than the reference's" in pages["sabotaged"]
    assert "barak96-fig2 (parameters (spec, preset))" in pages["sabotaged"]
    verdict = next(line for line in pages["sabotaged"].splitlines() if line.startswith("Verdict: "))
    assert "barak96-fig2" in verdict and "Shared replications that differ" in pages["sabotaged"]


def test_a_san_figure_claim_agrees_within_the_solvers_stated_tolerance(tmp_path):
    """corr05 Fig. 8's claim compares two solutions whose model files state tol 1e-8: two runs
    agree within 2 (1e-8 + 1e-8) = 4e-8. Another machine's -0.003039676253 against the
    reference's -0.00303967627 (1.7e-14 apart) is consistent, and so is 5e-9 apart, which two
    exact values (1e-9) would call different; 1e-7 apart is not."""
    from simcore.report.evaluation import san_tolerances

    for name in ("m2", "m4"):
        (tmp_path / f"{name}.yaml").write_text("automata: {a: [x, y]}\nsolve: {tol: 1.0e-8}\n")
    tolerance = san_tolerances(tmp_path, {"fig": ["m2", "m4"]})
    assert tolerance == {"fig": pytest.approx(4e-8)}
    ref = pd.DataFrame([_claim("fig", "c", -0.00303967627, -0.00303967627, -0.00303967627)])
    for estimate, inconsistent in ((-0.003039676253, False), (-0.00303967627 + 5e-9, False),
                                   (-0.00303967627 + 1e-7, True)):
        small = pd.DataFrame([_claim("fig", "c", estimate, estimate, estimate)])
        out = compare_claims(small, ref, 0.01, True, {"fig"}, tolerance)
        assert out.inconsistent.tolist() == [inconsistent]
    shifted = -0.00303967627 + 5e-9
    exact = compare_claims(pd.DataFrame([_claim("fig", "c", shifted, shifted, shifted)]), ref, 0.01, True, {"fig"})
    assert exact.inconsistent.tolist() == [True]     # without the tolerance: two exact values, within 1e-9


def test_the_committed_reference_is_of_the_current_code(root):
    """Every experiment's fingerprint computed now is the one the committed reference records
    (an experiment that reads another's replications records its source's), every SAN model's
    fingerprint file holds the current SAN code, and the recorded corr05 Figure 8 fit sits under
    the key the current code gives it. A change of a model's code, a preset or a machine fails
    here in seconds, until the reference is rerun (or re-stamped, where the change provably
    leaves every result alone: docs/architecture.md, "Fingerprints of raw batches")."""
    import json

    import yaml

    from simcore.experiments import load_spec
    from simcore.experiments.fingerprint import code_fingerprint, simulation_fingerprint
    from simcore.san.fit import fit_key

    ref = root / "results/reference"
    seed = yaml.safe_load((root / "config/config.yaml").read_text())["seed"]
    specs = {s.id: s for s in (load_spec(p) for p in sorted((root / "config/experiments").glob("*.yaml")))}
    stale = []
    for exp, spec in specs.items():
        recorded = json.loads((ref / exp / "provenance.json").read_text())
        now = simulation_fingerprint(specs[spec.source_id], seed)
        if (recorded["fingerprint"], recorded["fingerprint_parts"]) != (now["hash"], now["parts"]):
            stale.append(exp)
    assert not stale, f"the reference was not made by the current code: {stale}"
    for path in sorted((ref / "san").glob("*/fingerprint.json")):
        assert json.loads(path.read_text())["code"] == code_fingerprint("san"), path
    fits = yaml.safe_load((root / "config/san/fits.yaml").read_text())
    for fit in fits:
        key = fit_key(root / f"config/san/{fit['model']}.yaml", fit["parameter"], fit["low"], fit["high"], fit["scale"])
        assert fit["key"] == key, fit["model"]


def test_the_committed_replication_counts_are_what_the_current_verdict_rules_decide(root):
    """A precision round adds replications to the cells whose claims the rules cannot decide;
    the rules are not part of a fingerprint, so a change of them leaves the reference's counts
    stale without a word (eight mehta experiments once were). Replayed on the reference's own
    tables, each round seeing only what the rounds before it kept, today's rules must end at the
    counts the reference holds, for every experiment with a full-scale precision mode."""
    from simcore.experiments import load_spec
    from simcore.experiments.precision import cell_counts, replay

    ref = root / "results/reference"
    specs = [load_spec(p) for p in sorted((root / "config/experiments").glob("*.yaml"))]
    drift = []
    for spec in specs:
        if spec.source_id != spec.id or spec.precision("full") is None:
            continue
        readers = [s for s in specs if s.source_id == spec.id and s.id != spec.id]
        table = pd.read_csv(ref / spec.id / "replications.csv.gz", dtype={"spawn_key": str})
        held, decided = cell_counts(table), replay([spec, *readers], table, "full")
        drift += [f"{spec.id} cell {c}: {held[c]} held, {decided[c]} decided" for c in held if held[c] != decided[c]]
    assert not drift, drift


TAMPERED = "corr05-fig10"
TURNAROUNDS = ("mean_turnaround", "mean_turnaround_s")
THIS_CPU = "AMD EPYC"      # the CPU model a run records (the committed reference does for the mehta experiments)


@pytest.fixture(scope="module")
def smoke_pair(tmp_path_factory):
    """Two result folders made of the committed reference's files, no simulation, for every
    experiment it holds: ``ref`` as committed, but the CPU model left out of every provenance (as it
    is for most experiments); ``run`` with the same claims, the summary rows and replications a
    smoke run holds (the smoke cells, their first smoke-count replications) and provenances that
    record this machine's CPU model, fingerprints intact. ``ref`` holds the same replications: the
    ones the comparison reads."""
    import shutil

    from simcore.experiments import load_spec

    root, base = Path(__file__).resolve().parents[1], tmp_path_factory.mktemp("smoke-pair")
    committed = root / "results/reference"
    for side, scale in (("ref", "full"), ("run", "smoke")):
        (base / side).mkdir()
        (base / side / "scale.txt").write_text(json.dumps(scale))
    for path in sorted(committed.glob("*/replications.csv.gz")):
        exp = path.parent.name
        spec = load_spec(root / f"config/experiments/{exp}.yaml")
        table = pd.read_csv(path, dtype={"spawn_key": str})
        smoke = table[
            table.cell.isin([c.index for c in spec.cells("smoke")]) & (table.rep < spec.replications("smoke"))
        ]
        provenance = json.loads((committed / exp / "provenance.json").read_text())
        provenance.pop("cpu", None)
        for side, record in (("ref", provenance), ("run", {**provenance, "cpu": THIS_CPU})):
            shutil.copytree(committed / exp, base / side / exp, ignore=shutil.ignore_patterns("replications.*"))
            (base / side / exp / "provenance.json").write_text(json.dumps(record))
            smoke.to_csv(base / side / exp / "replications.csv", index=False)
        summary = pd.read_csv(committed / exp / "summary.csv")
        summary[summary.cell.isin(smoke.cell)].to_csv(base / "run" / exp / "summary.csv", index=False)
    return base


def _smoke_pair(smoke_pair, tmp_path, cpu_in_reference=(), factor=1.0, columns=TURNAROUNDS):
    """A copy of ``smoke_pair``: the experiments in ``cpu_in_reference`` record this machine's CPU
    model in the reference too (as a re-stamp records it); corr05-fig10's ``columns`` are multiplied
    by ``factor`` in the run."""
    import shutil

    shutil.copytree(smoke_pair, tmp_path / "pair")
    run, ref = tmp_path / "pair/run", tmp_path / "pair/ref"
    for exp in cpu_in_reference:
        path = ref / exp / "provenance.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "cpu": THIS_CPU}))
    table = pd.read_csv(run / TAMPERED / "replications.csv", dtype={"spawn_key": str})
    table.assign(**{c: table[c] * factor for c in columns}).to_csv(run / TAMPERED / "replications.csv", index=False)
    return run, ref


def _verdict_of(run, ref, experiments=None):
    """The evaluation of ``run`` against ``ref`` (of ``experiments``, default every one they hold),
    its page and its verdict line."""
    ev = evaluate(run, ref, experiments or sorted(p.name for p in ref.iterdir() if p.is_dir()), set())
    page = markdown(ev)
    return ev, page, next(line for line in page.splitlines() if line.startswith("Verdict: "))


def test_a_twenty_percent_shift_of_one_experiment_fails_on_one_platform(smoke_pair, tmp_path):
    """Every turnaround of corr05-fig10's smoke replications times 1.2, fingerprints intact, among
    every experiment of a smoke evaluation. The reference records this machine's CPU model for
    corr05-fig10 (as a re-stamp does) and for no other: corr05-fig10 is shown on one platform, so
    its shared replications must be identical; they are not, and the verdict names it, alone."""
    run, ref = _smoke_pair(smoke_pair, tmp_path, cpu_in_reference=(TAMPERED,), factor=1.2)
    ev, page, verdict = _verdict_of(run, ref)
    assert not ev.ok and ev.inconsistent_claims.empty and ev.inconsistent_means.empty and not ev.missing
    assert verdict == ("Verdict: **INCONSISTENT**: the shared replications of 1 experiments differ: corr05-fig10 "
                       "(not identical on one platform).")
    assert "Mode: **identical** for 1 experiments (this run's platform is the reference's" in page
    assert "corr05-fig10, cell 0, policy linux-2level, replication 0: mean_turnaround = " in page


def test_a_twenty_percent_shift_of_one_experiment_fails_across_platforms(smoke_pair, tmp_path):
    """The same tampered run against a reference that records no CPU model (another platform cannot
    be excluded). corr05-fig10's 6 independent replications (2 smoke cells x 3; each the mean over
    its 2 policies) each carry the relative difference 2 x 0.2 / 2.2 = 0.1818 in both turnaround
    metrics, and no other of its values differs: the same shift in every replication, p = 0, which
    Holm's correction over the experiment-metric tests cannot lift above 0.01. (Per cell, policy
    and value, 3 replications each, the best p was 1.1e-5: times 12,140 values, not named.) The
    verdict names it shifted, with the two metrics, and no other experiment."""
    run, ref = _smoke_pair(smoke_pair, tmp_path, factor=1.2)
    ev, page, verdict = _verdict_of(run, ref)
    assert not ev.ok and ev.inconsistent_claims.empty and ev.inconsistent_means.empty and not ev.missing
    assert verdict == ("Verdict: **INCONSISTENT**: the shared replications of 1 experiments differ: corr05-fig10 "
                       "(shifted: mean_turnaround, mean_turnaround_s).")
    held = len(list((Path(__file__).resolve().parents[1] / "results/reference").glob("*/replications.csv.gz")))
    assert f"Mode: **paired** for {held} experiments (one of the runs records no CPU model" in page
    shifted = ev.inconsistent_replications
    assert shifted.metric.tolist() == list(TURNAROUNDS) and shifted.replications.tolist() == [6, 6]
    assert shifted.difference.tolist() == pytest.approx([0.4 / 2.2] * 2)


def test_an_untampered_pair_passes_and_last_bits_are_named_within_chance(smoke_pair, tmp_path):
    """corr05-fig10 and zhou91-fig1. Identical values: consistent on one platform and across
    platforms, no experiment named. Every value of corr05-fig10 times (1 + 1e-12), floating point's
    last bits (below 1e-8 relative): on one platform that is a difference (named, failing); across
    platforms it is none (every relative difference counts as 0, p = 1), so the run is consistent
    and the verdict names corr05-fig10 as not identical, within chance."""
    pair = [TAMPERED, "zhou91-fig1"]
    table = pd.read_csv(smoke_pair / "run" / TAMPERED / "replications.csv", nrows=1)
    values = [c for c in table.columns if c not in ("cell", "policy", "rep", "spawn_key")]
    for name, platform in (("one", (TAMPERED,)), ("across", ())):
        run, ref = _smoke_pair(smoke_pair, tmp_path / name, cpu_in_reference=platform)
        ev, page, verdict = _verdict_of(run, ref, pair)
        assert ev.ok and verdict.startswith("Verdict: **consistent**") and "identical" not in verdict, verdict
        assert "Shared replications that differ" not in page
    run, ref = _smoke_pair(smoke_pair, tmp_path / "bits-one", (TAMPERED,), 1 + 1e-12, values)
    ev, page, verdict = _verdict_of(run, ref, pair)
    assert not ev.ok and verdict.endswith("corr05-fig10 (not identical on one platform)."), verdict
    run, ref = _smoke_pair(smoke_pair, tmp_path / "bits-across", (), 1 + 1e-12, values)
    ev, page, verdict = _verdict_of(run, ref, pair)
    assert ev.ok and verdict.startswith("Verdict: **consistent**")
    assert verdict.endswith("; not identical, within chance (another platform): corr05-fig10."), verdict
