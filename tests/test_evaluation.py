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
    from simcore.report.evaluation import identical_replications

    columns = ["cell", "policy", "rep", "spawn_key", "m", "share"]
    small = pd.DataFrame([[0, "p", 0, "1.0.0", 1.5, float("nan")], [0, "p", 1, "1.0.1", 2.0, 0.5],
                          [0, "p", 2, "1.0.2", 3.0, 0.5]], columns=columns)
    ref = pd.DataFrame([[0, "p", 0, "1.0.0", 1.5, float("nan")], [0, "p", 1, "1.0.1", 2.0000001, 0.5]], columns=columns)
    for folder, frame in (("run", small), ("ref", ref)):
        (tmp_path / folder / "x").mkdir(parents=True)
        frame.to_csv(tmp_path / folder / "x/replications.csv", index=False)
    assert identical_replications(tmp_path / "run", tmp_path / "ref", ["x", "absent"]) == (2, 1)


def _replications(folder, exp, rows, platform=PLATFORM, cpu=None):
    """A result folder holding ``exp``'s replications (cell, policy, rep, m) and a provenance."""
    (folder / exp).mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=["cell", "policy", "rep", "spawn_key", "m"]).to_csv(folder / exp / "replications.csv", index=False)
    record = {"commit": "abc", "root_seed": 7, "wall_time_s": 1.0, "fingerprint": "f0", "platform": platform,
              "packages": {"python": "3.11.7", "numpy": "2.4.6"}}
    (folder / exp / "provenance.json").write_text(json.dumps({**record, **({"cpu": cpu} if cpu else {})}))


REF = [10.0, 12.0, 9.0, 11.0]


def _rows(values):
    return [[0, "p", r, f"1.0.{r}", v] for r, v in enumerate(values)]


def test_the_platform_decides_how_shared_replications_are_compared(tmp_path):
    """Another kernel on the same CPU model is the same platform; another C library, or another
    CPU, is not; a run that records no CPU model cannot show one platform (paired)."""
    from simcore.report.evaluation import platform_of, replication_mode

    _replications(tmp_path / "ref", "x", _rows(REF), cpu="A")
    _replications(tmp_path / "nocpu", "x", _rows(REF))
    _replications(tmp_path / "kernel", "x", _rows(REF), platform="Linux-6.1.0-9-amd64-x86_64-with-glibc2.36", cpu="A")
    _replications(tmp_path / "libc", "x", _rows(REF), platform="Linux-6.18.44-fc-v669-x86_64-with-glibc2.39")
    _replications(tmp_path / "cpuA", "x", _rows(REF), cpu="A")
    _replications(tmp_path / "cpuB", "x", _rows(REF), cpu="B")
    assert platform_of(json.loads((tmp_path / "libc/x/provenance.json").read_text())) == {
        "arch": "x86_64", "libc": "glibc2.39", "python": "3.11.7", "numpy": "2.4.6"}
    assert replication_mode(tmp_path / "kernel", tmp_path / "ref", ["x"])[0] == "identical"
    assert replication_mode(tmp_path / "nocpu", tmp_path / "ref", ["x"]) == (
        "paired", "one of the runs records no CPU model, so one platform cannot be shown")
    mode, why = replication_mode(tmp_path / "libc", tmp_path / "ref", ["x"])
    assert mode == "paired" and "libc" in why
    assert replication_mode(tmp_path / "cpuA", tmp_path / "cpuB", ["x"]) == (
        "paired", "this run's platform differs from the reference's in cpu")
    assert replication_mode(tmp_path / "libc", tmp_path / "ref", ["x"], "identical")[0] == "identical"
    with pytest.raises(InputError, match="--replications"):
        replication_mode(tmp_path / "libc", tmp_path / "ref", ["x"], "sometimes")


def test_on_one_platform_a_shared_replication_must_be_identical(tmp_path):
    """Replications 0-2 here, 0-3 in the reference; replication 1 differs in its 10th digit: on
    one platform that is inconsistent, and the page names replication 1."""
    from simcore.report.evaluation import compare_replications

    _replications(tmp_path / "ref", "x", _rows(REF))
    _replications(tmp_path / "run", "x", _rows([10.0, 12.000000001, 9.0]))
    out, first = compare_replications(tmp_path / "run", tmp_path / "ref", ["x"], "identical", 0.01)
    assert out[["k", "identical", "agree"]].values.tolist() == [[3, 2, 3]] and out.inconsistent.tolist() == [True]
    assert first == "x, cell 0, policy p, replication 1: m = 12.000000001 here, 12.0 in the reference"
    out, first = compare_replications(tmp_path / "ref", tmp_path / "ref", ["x"], "identical", 0.01)
    assert not out.inconsistent.any() and first == ""


def test_on_another_platform_last_bits_pass_and_a_five_percent_shift_fails(tmp_path):
    """Paired mode. Every value times (1 + 1e-12): floating point's last bits, consistent, and any
    shift is detectable (0). Every value times 1.05: differences 0.5, 0.6, 0.45, 0.55, mean
    0.525, sd sqrt(0.0125 / 3) = 0.06455, se 0.032275, t = 16.27 on 3 df, p = 5.1e-4 <= 0.01:
    inconsistent. The shift detected with power 0.8 at 0.01: (t_0.995,3 + t_0.8,3) se =
    (5.8409 + 0.9785) 0.032275 = 0.2201, 2.10% of the reference's mean 10.5."""
    from simcore.report.evaluation import compare_replications

    _replications(tmp_path / "ref", "x", _rows(REF))
    _replications(tmp_path / "bits", "x", _rows([v * (1 + 1e-12) for v in REF]))
    _replications(tmp_path / "shift", "x", _rows([v * 1.05 for v in REF]))
    out, _ = compare_replications(tmp_path / "bits", tmp_path / "ref", ["x"], "paired", 0.01)
    assert out.agree.tolist() == [4] and out.p.tolist() == [1.0] and out.detectable.tolist() == [0.0]
    assert not out.inconsistent.any()
    out, _ = compare_replications(tmp_path / "shift", tmp_path / "ref", ["x"], "paired", 0.01)
    se = math.sqrt(0.0125 / 3) / 2
    assert out.se[0] == pytest.approx(se) and out.difference[0] == pytest.approx(0.525)
    assert out.p[0] == pytest.approx(2 * stats.t.sf(0.525 / se, 3)) and out.p[0] < 0.001
    assert out.inconsistent.tolist() == [True]
    assert out.detectable[0] == pytest.approx((stats.t.ppf(0.995, 3) + stats.t.ppf(0.8, 3)) * se / 10.5)
    assert out.detectable[0] == pytest.approx(0.02096, abs=1e-4)


def test_the_paired_test_of_one_value():
    """No difference left after the last bits: p = 1. One differing replication, or the same
    difference in each: p = 0. A value on one side only: p = 0."""
    from simcore.stats.consistency import detectable_shift, paired_t

    assert paired_t([1.0, 2.0], [1.0, 2.0 + 1e-12]).p == 1.0
    assert paired_t([1.5], [1.0]).p == 0.0 and paired_t([2.0, 3.0], [1.0, 2.0]).p == 0.0
    assert paired_t([float("nan"), 1.0], [1.0, 1.0]).p == 0.0
    assert paired_t([float("nan"), 1.0], [float("nan"), 1.0]).p == 1.0
    assert detectable_shift(0.0, 3, 0.01) == 0.0 and detectable_shift(1.0, 1, 0.01) == math.inf
    with pytest.raises(ValueError, match="same replications"):
        paired_t([1.0], [1.0, 2.0])


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
    assert ev.ok and ev.means.empty and len(ev.replications) == 1 and ev.mode == "identical"
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
    """In a scratch copy of the configuration, barak96's migration cost 0.3 -> 0.33 s: barak96-fig2
    simulated at smoke scale from it has another fingerprint and other replications, and `simcore
    evaluate` against the committed reference exits 1 naming it (the reference records no CPU
    model, so its shared replications are compared in paired mode: they differ too). The same run
    from the committed preset (the control) has the reference's inputs and agreeing replications;
    it exits 1 only because it made no figures, tables or report."""
    import shutil

    pages = {}
    for name, cost in (("control", "0.3"), ("sabotaged", "0.33")):
        config = tmp_path / name / "config"
        shutil.copytree(root / "config", config)
        preset = config / "presets/barak96.yaml"
        text = preset.read_text()
        assert "    value: 0.3\n" in text
        preset.write_text(text.replace("    value: 0.3\n", f"    value: {cost}\n"))
        only = tmp_path / name / "specs"
        only.mkdir()
        shutil.copy(config / "experiments/barak96-fig2.yaml", only)
        shutil.copytree(config / "presets", tmp_path / name / "presets")
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
    assert "(their fingerprints agree)" in pages["control"] and "Shared replications that differ" not in pages["control"]
    assert "1 experiments simulated from other inputs than the reference's" in pages["sabotaged"]
    assert "barak96-fig2 (parameters (spec, preset))" in pages["sabotaged"]
    assert "Mode: **paired**" in pages["sabotaged"] and "Shared replications that differ" in pages["sabotaged"]


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
