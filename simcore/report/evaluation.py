"""Artifact evaluation: a small run's results against the committed full-scale reference
(``simcore evaluate``, ``make evaluate``).

Three checks, each mechanical: every experiment produced its outputs; every claim's estimate is
consistent with the reference's, and every reproduced mean with the reference's mean (the tests
and their correction for many comparisons are in :mod:`simcore.stats.consistency`). A claim is
compared only where both runs estimate the same quantity: the same deciding cell and the same
number of cells behind it (a smoke run thins the grids), and, for the published SAN figures,
only at the reference's scale (smaller scales solve a smaller machine). The rest are listed with
the reason. The verdict page is Markdown a committee can paste.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from simcore.errors import InputError
from simcore.report.reference import read_scale
from simcore.stats.consistency import holm, interval_z, pooled_t

ALPHA = 0.01          # family-wise level of each family of comparisons (claims; means)
OUTPUTS = ("summary.csv", "claims.csv", "provenance.json")
KEYS = ["experiment", "cell", "policy", "metric"]


@dataclass
class Evaluation:
    """What ``evaluate`` found; ``ok`` when nothing is missing and nothing is inconsistent."""

    scale: str
    reference_scale: str
    provenance: dict
    reference_provenance: dict
    experiments: list[str]
    missing: list[str]
    claims: pd.DataFrame
    means: pd.DataFrame
    alpha: float = ALPHA
    shared: tuple[int, int] = (0, 0)   # replications both runs hold, and how many are identical
    other_code: tuple[str, ...] = ()   # experiments the reference made from other specs, seed or code

    @property
    def inconsistent_claims(self) -> pd.DataFrame:
        return self.claims[self.claims.inconsistent]

    @property
    def inconsistent_means(self) -> pd.DataFrame:
        return self.means[self.means.inconsistent]

    @property
    def ok(self) -> bool:
        return not self.missing and self.inconsistent_claims.empty and self.inconsistent_means.empty


def _concat(folder: Path, ids: list[str], name: str) -> pd.DataFrame:
    frames = [pd.read_csv(folder / i / name) for i in ids if (folder / i / name).exists()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _provenances(folder: Path, ids: list[str]) -> dict[str, dict]:
    """Each experiment's provenance.json that ``folder`` holds."""
    return {i: json.loads((folder / i / "provenance.json").read_text()) for i in ids
            if (folder / i / "provenance.json").exists()}


def _provenance(folder: Path, ids: list[str]) -> dict:
    """The run's commit(s), root seed(s) and summed wall time, from the experiments' provenance;
    experiments that read another's replications share its fingerprint and count once."""
    found = _provenances(folder, ids).values()
    simulated = {p.get("fingerprint") or id(p): float(p.get("wall_time_s") or 0) for p in found}
    return {"commit": sorted({p.get("commit", "?") for p in found}),
            "root_seed": sorted({p.get("root_seed") for p in found if p.get("root_seed") is not None}),
            "wall_time_s": sum(simulated.values())}


def other_fingerprints(results: Path, reference: Path, ids: list[str]) -> tuple[str, ...]:
    """The experiments whose simulation fingerprint (spec, preset, seed, model code, topologies; not
    the scale) differs between the two runs' provenance: the reference was made by other inputs."""
    here, there = _provenances(results, ids), _provenances(reference, ids)
    return tuple(i for i in ids if i in here and i in there and here[i].get("fingerprint") != there[i].get("fingerprint"))


def missing_outputs(results: Path, experiments: list[str], extra: list[str], targets: list[Path]) -> list[str]:
    """The outputs the run should have made and did not: each experiment's summary, claims and
    provenance, the published SAN figures' claims, and the given ``targets`` (figures, tables,
    the report)."""
    wanted = [results / e / name for e in experiments for name in OUTPUTS]
    wanted += [results / f / "claims.csv" for f in extra] + list(targets)
    return [str(p) for p in wanted if not p.exists()]


def compare_means(small: pd.DataFrame, reference: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """One row per summary row present in both runs with two replications or more on each side:
    Student's t test with the pooled variance, Holm-adjusted over all of them."""
    both = small.merge(reference, on=KEYS, suffixes=("", "_ref"))
    both = both[(both.n >= 2) & (both.n_ref >= 2) & both[["mean", "sd", "mean_ref", "sd_ref"]].notna().all(axis=1)]
    tests = [pooled_t(r.mean, r.sd, int(r.n), r.mean_ref, r.sd_ref, int(r.n_ref)) for r in both.itertuples()]
    out = both[KEYS + ["n", "mean", "ci_low", "ci_high", "n_ref", "mean_ref", "ci_low_ref", "ci_high_ref"]].copy()
    out["difference"] = [t.difference for t in tests]
    out["se"] = [t.se for t in tests]
    out["statistic_value"] = [t.statistic for t in tests]
    out["p_adjusted"] = holm([t.p for t in tests])
    out["inconsistent"] = out.p_adjusted <= alpha
    return out.reset_index(drop=True)


def identical_replications(results: Path, reference: Path, experiments: list[str]) -> tuple[int, int]:
    """(replications both runs hold, those equal in every value). Replication r of a cell draws
    from the same seeds at every scale, so on the same code and platform each one the reference
    also holds must come out identical; on another platform floating point may differ in the
    last digits, which is why this is reported, not judged."""
    from simcore.report.data import read_csv

    total = same = 0
    for exp in experiments:
        small, ref = read_csv(results / exp / "replications.csv"), read_csv(reference / exp / "replications.csv")
        if small is None or ref is None or small.empty:
            continue
        keys = ["cell", "policy", "rep"]
        both = small.merge(ref, on=keys, suffixes=("", "_ref"))
        values = [c for c in small.columns if c not in keys and f"{c}_ref" in both.columns]
        equal = pd.Series(True, index=both.index)
        for c in values:
            equal &= (both[c] == both[f"{c}_ref"]) | (both[c].isna() & both[f"{c}_ref"].isna())
        total, same = total + len(both), same + int(equal.sum())
    return total, same


def _not_comparable(row, same_scale: bool, san_figures: set[str]) -> str:
    """Why a claim's two estimates are not of one quantity ('' when they are)."""
    if row.experiment in san_figures and not same_scale:
        return "SAN figure: smaller scales solve a smaller machine"
    if pd.isna(row.estimate) or pd.isna(row.estimate_ref):
        return "no estimate in one of the runs"
    if not _same(row.deciding_cell, row.deciding_cell_ref):
        return f"deciding cells differ ({_cell(row.deciding_cell)} here, {_cell(row.deciding_cell_ref)} in the reference)"
    if not _same(row.cells, row.cells_ref):
        return f"cells differ ({_cell(row.cells)} here, {_cell(row.cells_ref)} in the reference)"
    return ""


def _same(a, b) -> bool:
    return (pd.isna(a) and pd.isna(b)) or (not pd.isna(a) and not pd.isna(b) and float(a) == float(b))


def _cell(value) -> str:
    return "none" if pd.isna(value) else str(int(value))


def compare_claims(small: pd.DataFrame, reference: pd.DataFrame, alpha: float, same_scale: bool,
                   san_figures: set[str]) -> pd.DataFrame:
    """Every claim of either run, with both verdicts; where both estimate the same quantity, the
    z test of their intervals, Holm-adjusted over the comparable claims."""
    keep = ["experiment", "claim", "statistic", "verdict", "estimate", "ci_low", "ci_high", "level", "n",
            "deciding_cell", "cells"]
    both = small[keep].merge(reference[keep], on=["experiment", "claim"], how="outer", suffixes=("", "_ref"))
    both["statistic"] = both.statistic.fillna(both.statistic_ref)
    both["reason"] = [_not_comparable(r, same_scale, san_figures) for r in both.itertuples()]
    comparable = both.reason == ""
    tests = [interval_z((r.estimate, r.ci_low, r.ci_high, r.level), (r.estimate_ref, r.ci_low_ref, r.ci_high_ref,
                        r.level_ref), r.statistic, (r.n, r.n_ref)) for r in both[comparable].itertuples()]
    both["difference"] = np.nan
    both["se"] = np.nan
    both["statistic_value"] = np.nan
    both["p_adjusted"] = np.nan
    both.loc[comparable, "difference"] = [t.difference for t in tests]
    both.loc[comparable, "se"] = [t.se for t in tests]
    both.loc[comparable, "statistic_value"] = [t.statistic for t in tests]
    both.loc[comparable, "p_adjusted"] = holm([t.p for t in tests])
    both["inconsistent"] = comparable & (both.p_adjusted <= alpha)
    return both.drop(columns=["statistic_ref"]).sort_values(["experiment", "claim"]).reset_index(drop=True)


def evaluate(results: Path, reference: Path, experiments: list[str], san_figures: set[str],
             targets: list[Path] = (), alpha: float = ALPHA) -> Evaluation:
    """Compare ``results`` (a run at any scale) with ``reference`` (the committed full scale)."""
    if not 0 < alpha < 1:
        raise InputError(f"--alpha: must be in (0, 1), not {alpha}.")
    scale, ref_scale = read_scale(results), read_scale(reference)
    ids = sorted(experiments)
    figures = sorted(san_figures)
    small_claims, ref_claims = _concat(results, ids + figures, "claims.csv"), _concat(reference, ids + figures, "claims.csv")
    if ref_claims.empty:
        raise InputError(f"{reference}: holds no claims.csv; it is not the full-scale reference.")
    small_means, ref_means = _concat(results, ids, "summary.csv"), _concat(reference, ids, "summary.csv")
    none = pd.DataFrame({"inconsistent": pd.Series(dtype=bool)})
    return Evaluation(
        scale=scale, reference_scale=ref_scale,
        provenance=_provenance(results, ids), reference_provenance=_provenance(reference, ids),
        experiments=ids,
        missing=missing_outputs(results, ids, figures, list(targets)),
        claims=compare_claims(small_claims, ref_claims, alpha, scale == ref_scale, set(figures))
        if not small_claims.empty else none,
        means=compare_means(small_means, ref_means, alpha) if not small_means.empty else none,
        alpha=alpha, shared=identical_replications(results, reference, ids),
        other_code=other_fingerprints(results, reference, ids))


def _interval(estimate, low, high) -> str:
    if pd.isna(estimate):
        return "–"
    if pd.isna(low) or low == high:
        return f"{estimate:.4g}"
    return f"{estimate:.4g} [{low:.4g}, {high:.4g}]"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]


def _sigmas(row) -> str:
    """How far apart, in standard errors of the difference."""
    return "exact values differ" if row.se == 0 else f"{abs(row.statistic_value):.1f} se"


def markdown(ev: Evaluation) -> str:
    """The verdict page (results/evaluation.md)."""
    bad_claims, bad_means = ev.inconsistent_claims, ev.inconsistent_means
    compared = ev.claims[ev.claims.reason == ""] if "reason" in ev.claims else ev.claims
    if ev.ok:
        verdict = "**consistent**: every output is there, and no claim or mean differs from the reference beyond chance"
    else:
        verdict = (f"**INCONSISTENT**: {len(ev.missing)} missing outputs, {len(bad_claims)} claims and "
                   f"{len(bad_means)} means differ from the reference beyond chance")
    run, ref = ev.provenance, ev.reference_provenance
    lines = [f"# Artifact evaluation: the {ev.scale} run against the {ev.reference_scale}-scale reference", "",
             f"Verdict: {verdict}.", "",
             f"- This run: scale {ev.scale}, commit {', '.join(run['commit'])}, root seed "
             f"{', '.join(map(str, run['root_seed']))}, {run['wall_time_s'] / 60:.1f} min of simulation.",
             f"- Reference: scale {ev.reference_scale}, commit {', '.join(ref['commit'])}, root seed "
             f"{', '.join(map(str, ref['root_seed']))}, {ref['wall_time_s'] / 60:.1f} min of simulation.",
             f"- Outputs: {len(ev.experiments)} experiments; "
             + ("all present." if not ev.missing else f"{len(ev.missing)} missing (listed below)."),
             f"- Claims: {len(compared)} compared, {len(ev.claims) - len(compared)} not comparable, "
             f"{len(bad_claims)} inconsistent.",
             f"- Means: {len(ev.means)} compared, {len(bad_means)} inconsistent.",
             "- Inputs: " + ("every experiment's spec, preset, root seed, model code and topologies are the "
                             "reference's (their fingerprints agree)." if not ev.other_code else
                             f"{len(ev.other_code)} experiments were simulated from other specs, seed or model "
                             f"code than the reference's ({', '.join(ev.other_code)}): their differences may "
                             "come from that, not from chance."),
             f"- Replications (per cell and policy) the reference also holds, with the same seeds: {ev.shared[0]}; identical in every value: "
             f"{ev.shared[1]} (reported, not judged: another platform may differ in the last digits).", ""]
    if ev.missing:
        lines += ["## Missing outputs", ""] + [f"- `{path}`" for path in ev.missing] + [""]
    if not bad_claims.empty:
        lines += ["## Claims that differ from the reference", ""]
        lines += _table(["experiment", "claim", "here", "reference", "difference", "adjusted p"],
                        [[r.experiment, r.claim, _interval(r.estimate, r.ci_low, r.ci_high),
                          _interval(r.estimate_ref, r.ci_low_ref, r.ci_high_ref),
                          f"{r.difference:+.4g} ({_sigmas(r)})", f"{r.p_adjusted:.2g}"] for r in bad_claims.itertuples()])
        lines.append("")
    if not bad_means.empty:
        lines += ["## Means that differ from the reference", ""]
        lines += _table(["experiment", "cell", "policy", "metric", "here", "reference", "difference", "adjusted p"],
                        [[r.experiment, int(r.cell), r.policy, r.metric, _interval(r.mean, r.ci_low, r.ci_high),
                          _interval(r.mean_ref, r.ci_low_ref, r.ci_high_ref), f"{r.difference:+.4g} ({_sigmas(r)})",
                          f"{r.p_adjusted:.2g}"] for r in bad_means.itertuples()])
        lines.append("")
    if "reason" in ev.claims:
        lines += ["## Every claim's verdict, here and in the reference", ""]
        lines += _table(["experiment", "claim", f"verdict ({ev.scale})", f"verdict ({ev.reference_scale})", "compared"],
                        [[r.experiment, r.claim, r.verdict if isinstance(r.verdict, str) else "–",
                          r.verdict_ref if isinstance(r.verdict_ref, str) else "–",
                          ("**inconsistent**" if r.inconsistent else "consistent") if not r.reason else r.reason]
                         for r in ev.claims.itertuples()])
        lines.append("")
    lines += ["## The tests", "",
              "A verdict may differ between scales: fewer replications give wider intervals, and an undecided "
              "claim is not a contradiction. What must not differ is the estimate, beyond what the two "
              "intervals allow. Under the null hypothesis both runs draw from one distribution (same model, "
              "spec and seeds), so they share one variance, pooled over both runs' replications: a small "
              "run's own spread, from a few replications, is a poor estimate of it. Each mean is compared "
              "with the reference's by Student's t test with that pooled variance (from the means, standard "
              "deviations and replications); each claim's estimate by a z test whose standard errors are "
              "read back from the two intervals (the half facing the other estimate, over the normal "
              "quantile of the interval's level, on the log scale for ratios) and pooled the same way, which "
              "errs towards consistency for t and exact binomial intervals. Claims are compared only where both runs "
              "estimate the same quantity (same deciding cell, same cells). The p values of each family "
              f"(claims, means) are adjusted by Holm's method, and a difference is named when its adjusted "
              f"p value is at most {ev.alpha:g}: the chance of naming any consistent quantity is at most "
              f"{ev.alpha:g} per family.", ""]
    return "\n".join(lines)
