"""Artifact evaluation: a small run's results against the committed full-scale reference
(``simcore evaluate``, ``make evaluate``).

Four checks, each mechanical: every experiment was simulated from the reference's inputs (its
fingerprint: spec, preset, seed, model code, topologies), unless ``allow_changed``; every
experiment produced its outputs; every replication both runs hold (same seeds) agrees with the
reference's: per experiment, identical where both record one platform, else without a shift of
any metric beyond chance over the experiment's replications; every claim's
estimate is consistent with the reference's, and every mean without shared replications with the
reference's mean (the tests and their correction for many comparisons are in
:mod:`simcore.stats.consistency`). A claim is
compared only where both runs estimate the same quantity: the same deciding cell and the same
number of cells behind it (a smoke run thins the grids), and, for the published SAN figures,
only at the reference's scale (smaller scales solve a smaller machine). The rest are listed with
the reason. The verdict page is Markdown a committee can paste.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from simcore.errors import InputError
from simcore.report.reference import read_scale
from simcore.stats.consistency import (
    LAST_BITS,
    Comparison,
    holm,
    interval_z,
    last_bits,
    pooled_t,
    power,
    relative_differences,
    relative_shift,
    shift_test,
)

ALPHA = 0.01          # family-wise level of each family of comparisons (claims; means)
OUTPUTS = ("summary.csv", "claims.csv", "provenance.json")
KEYS = ["experiment", "cell", "policy", "metric"]
REP_KEYS = ["cell", "policy", "rep"]
SHIFTS = (0.05, 0.20)  # the shifts of a metric the page states the paired test's power against
POWER = 0.8           # ... as the share of tests that detect them with at least this probability
MODES = ("auto", "identical", "paired")
WITHIN_CHANCE = "not identical, within chance"
PART_NAMES = {"experiment": "experiment id", "model": "model", "params": "parameters (spec, preset)",
              "policies": "policies", "grid": "grid", "seed": "root seed", "code": "model code",
              "topology": "topologies"}


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
    changed: dict = None               # experiment -> the fingerprint parts that differ from the reference's
    allow_changed: bool = False        # report changed inputs without failing
    modes: dict = None                 # experiment -> (how its shared replications are compared, why)
    replications: pd.DataFrame = None  # one row per experiment and metric with shared replications
    first_difference: str = ""         # identical mode: the first shared replication that differs
    scorecard: dict = None             # the reference's standing counts (reproduced, explained, ...)
    report: str = ""                   # the run's report, linked from the page

    def __post_init__(self):
        self.changed = dict(self.changed or {})
        self.modes = dict(self.modes or {})
        if self.replications is None:
            self.replications = pd.DataFrame({"inconsistent": pd.Series(dtype=bool)})

    @property
    def other_code(self) -> tuple[str, ...]:
        """Experiments the reference made from other specs, seed or code."""
        return tuple(self.changed)

    @property
    def inconsistent_claims(self) -> pd.DataFrame:
        return self.claims[self.claims.inconsistent]

    @property
    def inconsistent_means(self) -> pd.DataFrame:
        return self.means[self.means.inconsistent]

    @property
    def inconsistent_replications(self) -> pd.DataFrame:
        return self.replications[self.replications.inconsistent]

    @property
    def replication_verdicts(self) -> dict[str, str]:
        """Every experiment whose shared replications are not all identical, with what that means:
        not identical on one platform, or on another platform shifted (naming the metrics) or
        :data:`WITHIN_CHANCE`."""
        reps = self.replications
        out = {}
        for exp, rows in reps[reps.identical < reps.k].groupby("experiment", sort=True) if len(reps) else ():
            if (rows["mode"] == "identical").any():
                out[exp] = "not identical on one platform"
            else:
                shifted = rows.metric[rows.inconsistent].tolist()
                out[exp] = f"shifted: {', '.join(shifted)}" if shifted else WITHIN_CHANCE
        return out

    @property
    def inputs_ok(self) -> bool:
        return not self.changed or self.allow_changed

    @property
    def ok(self) -> bool:
        return (self.inputs_ok and not self.missing and self.inconsistent_claims.empty
                and self.inconsistent_means.empty and self.inconsistent_replications.empty)


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


def changed_inputs(results: Path, reference: Path, ids: list[str]) -> dict[str, list[str]]:
    """Experiment -> what differs between the inputs of the two runs (the fingerprint parts both
    provenances record: spec parameters, root seed, model code, topologies, ...; 'fingerprint'
    when one of them records only the hash), for every experiment whose fingerprint differs."""
    here, there = _provenances(results, ids), _provenances(reference, ids)
    out = {}
    for i in ids:
        if i in here and i in there and here[i].get("fingerprint") != there[i].get("fingerprint"):
            mine, theirs = here[i].get("fingerprint_parts"), there[i].get("fingerprint_parts")
            parts = ([PART_NAMES.get(k, k) for k in PART_NAMES if mine.get(k) != theirs.get(k)]
                     if isinstance(mine, dict) and isinstance(theirs, dict) else [])
            out[i] = parts or ["fingerprint"]
    return out


def platform_of(provenance: dict) -> dict:
    """What a replication's floating point depends on, from a provenance: CPU architecture and C
    library (from ``platform``), the CPU model where recorded, Python, NumPy, SciPy and numba."""
    import re

    found = re.search(
        r"-(x86_64|aarch64|arm64|i\d86|ppc64le|s390x|riscv64)-.*?with-(\w+[\d.]*)", provenance.get("platform", "")
    )
    key = {"arch": found.group(1), "libc": found.group(2)} if found else {"platform": provenance.get("platform")}
    packages = provenance.get("packages") or {}
    key.update({k: packages[k] for k in ("python", "numpy", "scipy", "numba", "llvmlite") if k in packages})
    if provenance.get("cpu"):
        key["cpu"] = provenance["cpu"]
    return key


def replication_modes(
    results: Path, reference: Path, ids: list[str], requested: str = "auto"
) -> dict[str, tuple[str, str]]:
    """Per experiment, how the replications both runs hold are compared, with the reason the page
    gives: ``identical`` when its two provenances show one platform (:func:`one_platform`), else
    ``paired``; ``requested`` (not ``auto``) for every experiment."""
    if requested not in MODES:
        raise InputError(f"--replications: must be one of {', '.join(MODES)}, not '{requested}'.")
    if requested != "auto":
        return dict.fromkeys(ids, (requested, "asked for on the command line"))
    here, there = _provenances(results, ids), _provenances(reference, ids)
    return {i: one_platform(here.get(i), there.get(i)) for i in ids}


def one_platform(here: dict | None, there: dict | None) -> tuple[str, str]:
    """``identical`` when two provenances show one platform (:func:`platform_of`: every key both
    record agrees, and both record the CPU model), else ``paired``; with the reason."""
    if here is None or there is None:
        return "paired", "one of the runs records no provenance"
    a, b = platform_of(here), platform_of(there)
    differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    if differ:
        return "paired", f"this run's platform differs from the reference's in {', '.join(differ)}"
    if "cpu" not in a or "cpu" not in b:
        # the compiled kernels are built for the CPU they run on: without its model, one platform is not shown
        return "paired", "one of the runs records no CPU model, so one platform cannot be shown"
    return "identical", "this run's platform is the reference's: architecture, C library, CPU model, packages"


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


def read_shared(results: Path, reference: Path, experiments: list[str]) -> dict[str, tuple[pd.DataFrame, list[str]]]:
    """Per experiment, the replications both runs hold (merged on cell, policy and replication, the
    reference's columns suffixed ``_ref``) and the numeric value columns they share."""
    from simcore.report.data import read_csv

    out = {}
    for exp in experiments:
        small, ref = read_csv(results / exp / "replications.csv"), read_csv(reference / exp / "replications.csv")
        if small is None or ref is None or small.empty or ref.empty:
            out[exp] = pd.DataFrame(columns=REP_KEYS), []
            continue
        both = small.merge(ref, on=REP_KEYS, suffixes=("", "_ref"))
        out[exp] = (
            both,
            [
                c
                for c in small.columns
                if c not in REP_KEYS
                and f"{c}_ref" in both.columns
                and pd.api.types.is_numeric_dtype(small[c])
                and pd.api.types.is_numeric_dtype(both[f"{c}_ref"])
            ],
        )
    return out


def compare_replications(shared: dict[str, tuple[pd.DataFrame, list[str]]], modes: dict[str, str] | str,
                         alpha: float) -> tuple[pd.DataFrame, str]:
    """Per experiment and metric (value column) of :func:`read_shared`'s replications both runs
    hold (same seeds): how many values they share (``k``), how many are identical and agree to their
    last bits, and the shift test over its independent replications (:func:`replication_differences`,
    :func:`~simcore.stats.consistency.shift_test`), with its power against :data:`SHIFTS` at the
    Bonferroni level. ``modes`` (experiment -> mode, or one mode for all) judges it: ``identical``,
    inconsistent when any value differs at all (the first difference named); ``paired``, when the
    shift test's p value, Holm-adjusted over the paired experiments' metrics, is at most ``alpha``."""
    rows, first = [], ""
    for exp, (both, values) in shared.items():
        mode = modes if isinstance(modes, str) else modes.get(exp, "paired")
        units = replication_differences(both, values)
        for column in values:
            here, there = both[column].to_numpy(float), both[f"{column}_ref"].to_numpy(float)
            equal = _equal(here, there)
            if mode == "identical" and not first and not equal.all():
                first = _first_difference(exp, column, both[~equal].iloc[0])
            test = shift_test(units[column])
            rows.append({"experiment": exp, "metric": column, "mode": mode, "k": len(both),
                         "identical": int(equal.sum()), "agree": int(last_bits(here, there).sum()),
                         "replications": len(units[column]), "difference": test.difference, "se": test.se,
                         "statistic_value": test.statistic, "p": test.p})
    out = pd.DataFrame(rows, columns=["experiment", "metric", "mode", "k", "identical", "agree", "replications",
                                      "difference", "se", "statistic_value", "p"])
    paired = (out["mode"] == "paired").to_numpy()
    out["p_adjusted"] = np.nan
    out.loc[paired, "p_adjusted"] = holm(out.p[paired])
    out["inconsistent"] = np.where(paired, out.p_adjusted <= alpha, out.identical < out.k)
    per_test = alpha / max(int(paired.sum()), 1)
    for shift in SHIFTS:
        out[_power_column(shift)] = [power(r.se, r.replications, per_test, relative_shift(shift))
                                     for r in out.itertuples()]
    return out.reset_index(drop=True), first


def replication_differences(both: pd.DataFrame, values: list[str]) -> dict[str, np.ndarray]:
    """Per value column, one relative difference per independent replication (a cell and a
    replication index: its policies saw one workload, so their values are not independent): the
    mean over its policies of :func:`~simcore.stats.consistency.relative_differences`. A shift
    multiplies values, so a pair with a zero or a missing value on either side says nothing of one
    and is left out (a replication without another pair, too)."""
    here = both[values].to_numpy(float)
    there = both[[f"{c}_ref" for c in values]].to_numpy(float)
    telling = (here != 0) & (there != 0) & np.isfinite(here) & np.isfinite(there)
    d = pd.DataFrame(np.where(telling, relative_differences(here, there), np.nan), columns=values)
    means = d.groupby([both.cell.to_numpy(), both.rep.to_numpy()]).mean()
    return {c: means[c].dropna().to_numpy() for c in values}


def _first_difference(exp: str, column: str, row) -> str:
    return (f"{exp}, cell {int(row['cell'])}, policy {row['policy']}, replication {int(row['rep'])}: {column} = "
            f"{float(row[column])!r} here, {float(row[f'{column}_ref'])!r} in the reference")


def _power_column(shift: float) -> str:
    return f"power_{shift:.0%}"


def shared_replications(shared: dict[str, tuple[pd.DataFrame, list[str]]]) -> pd.DataFrame:
    """Per experiment, cell and policy of :func:`read_shared`'s tables, the replications both runs
    hold (``shared``) and those equal in every value (``identical``): replication r of a cell draws
    from the same seeds at every scale, so on one platform each must come out identical."""
    frames = []
    for exp, (both, values) in shared.items():
        equal = np.ones(len(both), bool)
        for column in values:
            equal &= _equal(both[column].to_numpy(float), both[f"{column}_ref"].to_numpy(float))
        frames.append(both[["cell", "policy"]].assign(experiment=exp, shared=1, identical=equal.astype(int)))
    columns = ["experiment", "cell", "policy", "shared", "identical"]
    if not any(len(f) for f in frames):
        return pd.DataFrame(columns=columns)
    return pd.concat(frames).groupby(columns[:3], sort=True)[columns[3:]].sum().reset_index()


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element by element: the same value, or NaN on both sides."""
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _not_comparable(row, same_scale: bool, san_figures: set[str]) -> str:
    """Why a claim's two estimates are not of one quantity ('' when they are)."""
    if row.experiment in san_figures and not same_scale:
        return "SAN figure: smaller scales solve a smaller machine"
    if pd.isna(row.estimate) or pd.isna(row.estimate_ref):
        return "no estimate in one of the runs"
    if not _same(row.deciding_cell, row.deciding_cell_ref):
        return (
            f"deciding cells differ ({_cell(row.deciding_cell)} here, {_cell(row.deciding_cell_ref)} in the reference)"
        )
    if not _same(row.cells, row.cells_ref):
        return f"cells differ ({_cell(row.cells)} here, {_cell(row.cells_ref)} in the reference)"
    return ""


def _same(a, b) -> bool:
    return (pd.isna(a) and pd.isna(b)) or (not pd.isna(a) and not pd.isna(b) and float(a) == float(b))


def _cell(value) -> str:
    return "none" if pd.isna(value) else str(int(value))


def san_tolerances(san_dir: Path, figures: dict[str, list[str]]) -> dict[str, float]:
    """Per published SAN figure, how far two runs' estimates of its claim may lie apart: each
    solution is within its model's stated tolerance (``solve.tol``, default 1e-10) of the exact
    one, a claim compares two solutions, so two runs agree within 2 (tol_a + tol_b). SAN
    solutions are not bit-identical across machines (the order of BLAS's sums differs)."""
    from simcore.inputs import read_yaml

    out = {}
    for figure, models in figures.items():
        tols = [float(((read_yaml(Path(san_dir) / f"{m}.yaml") or {}).get("solve") or {}).get("tol", 1e-10))
                for m in models]
        out[figure] = 2.0 * sum(tols)
    return out


def _within(difference: float, tolerance: float) -> Comparison:
    same = abs(difference) <= tolerance
    return Comparison(difference, 0.0, 0.0 if same else math.inf, 1.0 if same else 0.0)


def compare_claims(small: pd.DataFrame, reference: pd.DataFrame, alpha: float, same_scale: bool,
                   san_figures: set[str], san_tolerance: dict[str, float] | None = None) -> pd.DataFrame:
    """Every claim of either run, with both verdicts; where both estimate the same quantity, the
    z test of their intervals (a published SAN figure's solutions: agreement within
    ``san_tolerance``, :func:`san_tolerances`), Holm-adjusted over the comparable claims."""
    san_tolerance = san_tolerance or {}
    keep = ["experiment", "claim", "statistic", "verdict", "estimate", "ci_low", "ci_high", "level", "n",
            "deciding_cell", "cells"]
    both = small[keep].merge(reference[keep], on=["experiment", "claim"], how="outer", suffixes=("", "_ref"))
    both["statistic"] = both.statistic.fillna(both.statistic_ref)
    both["reason"] = [_not_comparable(r, same_scale, san_figures) for r in both.itertuples()]
    comparable = both.reason == ""
    tests = [_within(r.estimate - r.estimate_ref, san_tolerance[r.experiment]) if r.experiment in san_tolerance else
             interval_z((r.estimate, r.ci_low, r.ci_high, r.level), (r.estimate_ref, r.ci_low_ref, r.ci_high_ref,
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
             targets: list[Path] = (), alpha: float = ALPHA, allow_changed: bool = False,
             replications: str = "auto", scorecard: dict | None = None, report: str = "",
             san_tolerance: dict[str, float] | None = None) -> Evaluation:
    """Compare ``results`` (a run at any scale) with ``reference`` (the committed full scale)."""
    if not 0 < alpha < 1:
        raise InputError(f"--alpha: must be in (0, 1), not {alpha}.")
    scale, ref_scale = read_scale(results), read_scale(reference)
    ids = sorted(experiments)
    figures = sorted(san_figures)
    small_claims, ref_claims = (
        _concat(results, ids + figures, "claims.csv"),
        _concat(reference, ids + figures, "claims.csv"),
    )
    if ref_claims.empty:
        raise InputError(f"{reference}: holds no claims.csv; it is not the full-scale reference.")
    modes = replication_modes(results, reference, ids, replications)
    tables = read_shared(results, reference, ids)
    reps, first = compare_replications(tables, {i: m for i, (m, _) in modes.items()}, alpha)
    shared = shared_replications(tables)
    small_means, ref_means = _concat(results, ids, "summary.csv"), _concat(reference, ids, "summary.csv")
    if not small_means.empty and len(shared):    # a mean over shared replications is judged by them
        paired = shared[["experiment", "cell", "policy"]].assign(_paired=True)
        small_means = small_means.merge(paired, on=["experiment", "cell", "policy"], how="left")
        small_means = small_means[small_means._paired.isna()].drop(columns="_paired")
    none = pd.DataFrame({"inconsistent": pd.Series(dtype=bool)})
    return Evaluation(
        scale=scale, reference_scale=ref_scale,
        provenance=_provenance(results, ids), reference_provenance=_provenance(reference, ids),
        experiments=ids,
        missing=missing_outputs(results, ids, figures, list(targets)),
        claims=compare_claims(small_claims, ref_claims, alpha, scale == ref_scale, set(figures), san_tolerance)
        if not small_claims.empty else none,
        means=compare_means(small_means, ref_means, alpha) if not small_means.empty else none,
        alpha=alpha, shared=(int(shared.shared.sum()), int(shared.identical.sum())),
        changed=changed_inputs(results, reference, ids), allow_changed=allow_changed,
        modes=modes, replications=reps, first_difference=first,
        scorecard=scorecard, report=report)


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


def _verdict(ev: Evaluation) -> str:
    bad_claims, bad_means = ev.inconsistent_claims, ev.inconsistent_means
    named = ev.replication_verdicts
    within = [e for e, v in named.items() if v == WITHIN_CHANCE]
    chance = f"; {WITHIN_CHANCE} (another platform): {', '.join(within)}" if within else ""
    if ev.ok:
        return ("**consistent**: every experiment was simulated from the reference's inputs"
                + (" (or changed on purpose, `--allow-changed`)" if ev.changed else "")
                + ", every output is there, the replications both runs hold agree, and no claim or mean differs "
                "from the reference beyond chance" + chance)
    differ = {e: v for e, v in named.items() if v != WITHIN_CHANCE}
    problems = (
        [f"{len(ev.changed)} experiments simulated from other inputs than the reference's"] if not ev.inputs_ok else []
    )
    problems += [f"{len(ev.missing)} missing outputs"] * bool(ev.missing)
    problems += [f"the shared replications of {len(differ)} experiments differ: "
                 + ", ".join(f"{e} ({v})" for e, v in differ.items())] * bool(differ)
    problems += [f"{len(bad_claims)} claims and {len(bad_means)} means differ beyond chance"] * (
        not bad_claims.empty or not bad_means.empty)
    return "**INCONSISTENT**: " + "; ".join(problems) + chance


def _scorecard_line(ev: Evaluation) -> str:
    from simcore.report.scorecard import standing_sentence

    card = ev.scorecard or {}
    if not card:
        return ""
    return (f" The reference itself (the committed full scale) has {standing_sentence(card)}: "
            "that is what the report says about the papers.")


def _inputs_line(ev: Evaluation) -> str:
    if not ev.changed:
        return ("- Inputs: every experiment's spec, preset, root seed, model code and topologies are the "
                "reference's (their fingerprints agree).")
    named = "; ".join(f"{e} ({', '.join(parts)})" for e, parts in sorted(ev.changed.items()))
    return (f"- Inputs: {len(ev.changed)} experiments were simulated from other inputs than the reference's: "
            f"{named}. " + ("Allowed (`--allow-changed`): their differences are reported, and may come from the "
                            "change." if ev.allow_changed else
                            "This alone makes the run inconsistent: the reference says nothing about other inputs "
                            "(rerun with `--allow-changed` to report the differences of a deliberate change)."))


def _replications_line(ev: Evaluation) -> str:
    reps = ev.replications
    modes = {}
    for exp, (mode, why) in sorted(ev.modes.items()):
        modes.setdefault((mode, why), []).append(exp)
    head = (
        f"- Replications the reference also holds (same seeds): {ev.shared[0]} (per cell and policy), "
        f"{ev.shared[1]} identical in every value. Mode: "
        + "; ".join(f"**{mode}** for {len(exps)} experiments ({why})" for (mode, why), exps in sorted(modes.items()))
        + "."
    )
    if reps.empty:
        return head + " None to compare."
    if (reps["mode"] == "identical").any():
        head += (" On one platform each must be identical, value for value"
                 + (f"; the first that is not: {ev.first_difference}." if ev.first_difference else "; they are."))
    return head + _power_sentence(reps[reps["mode"] == "paired"], ev.alpha)


def _power_sentence(paired: pd.DataFrame, alpha: float) -> str:
    """The paired test and its power against :data:`SHIFTS`, for the page."""
    if paired.empty:
        return ""
    tested = paired[paired.replications > 0]
    against = [f"{int((tested[_power_column(shift)] >= POWER).sum())} against a {shift:.0%} shift"
               for shift in sorted(SHIFTS, reverse=True)]
    big = _power_column(max(SHIFTS))
    known = tested[big].dropna()
    weakest = tested.loc[known.idxmin()] if len(known) else None
    return (f" On another platform a shift is tested per experiment and metric: each shared value's relative "
            f"difference to its pair (below {LAST_BITS:g}, floating point's last bits, none), averaged over the "
            f"policies of one replication, by a t test over the replications (they are independent; the values "
            f"of one are not); Holm over {len(paired)} experiment-metric tests. Power (the probability of "
            f"detecting a shift of every value of a metric, at the level {alpha / len(paired):.2g}): at least "
            f"{POWER:g} in {' and '.join(against)}, of the {len(tested)} tests that have values to shift"
            + (f"; the least, {weakest[big]:.2f} against {max(SHIFTS):.0%}: {weakest.experiment}, {weakest.metric}."
               if weakest is not None and weakest[big] < POWER else "."))


def markdown(ev: Evaluation) -> str:
    """The verdict page (results/evaluation.md)."""
    bad_claims, bad_means = ev.inconsistent_claims, ev.inconsistent_means
    compared = ev.claims[ev.claims.reason == ""] if "reason" in ev.claims else ev.claims
    run, ref = ev.provenance, ev.reference_provenance
    lines = [f"# Artifact evaluation: the {ev.scale} run against the {ev.reference_scale}-scale reference", "",
             f"Verdict: {_verdict(ev)}.", "",
             "What \"consistent\" establishes: this run, on this machine, agrees with the committed full-scale "
             "reference (same inputs and code; replications that share seeds agree; estimates within chance of the "
             "reference's). It does not say the papers reproduce." + _scorecard_line(ev)
             + (f" This run's report: `{ev.report}`." if ev.report else ""), "",
             f"- This run: scale {ev.scale}, commit {', '.join(run['commit'])}, root seed "
             f"{', '.join(map(str, run['root_seed']))}, {run['wall_time_s'] / 60:.1f} min of simulation.",
             f"- Reference: scale {ev.reference_scale}, commit {', '.join(ref['commit'])}, root seed "
             f"{', '.join(map(str, ref['root_seed']))}, {ref['wall_time_s'] / 60:.1f} min of simulation.",
             _inputs_line(ev),
             f"- Outputs: {len(ev.experiments)} experiments; "
             + ("all present." if not ev.missing else f"{len(ev.missing)} missing (listed below)."),
             _replications_line(ev),
             f"- Claims: {len(compared)} compared, {len(ev.claims) - len(compared)} not comparable, "
             f"{len(bad_claims)} inconsistent.",
             f"- Means without shared replications: {len(ev.means)} compared, {len(bad_means)} inconsistent.", ""]
    if ev.missing:
        lines += ["## Missing outputs", ""] + [f"- `{path}`" for path in ev.missing] + [""]
    if not bad_claims.empty:
        lines += ["## Claims that differ from the reference", ""]
        lines += _table(
            ["experiment", "claim", "here", "reference", "difference", "adjusted p"],
            [
                [
                    r.experiment,
                    r.claim,
                    _interval(r.estimate, r.ci_low, r.ci_high),
                    _interval(r.estimate_ref, r.ci_low_ref, r.ci_high_ref),
                    f"{r.difference:+.4g} ({_sigmas(r)})",
                    f"{r.p_adjusted:.2g}",
                ]
                for r in bad_claims.itertuples()
            ],
        )
        lines.append("")
    differ = ev.replications[ev.replications.identical < ev.replications.k] if len(ev.replications) else ev.replications
    if not differ.empty:
        differ = differ.sort_values(["inconsistent", "p"], ascending=[False, True], kind="stable")
        lines += ["## Shared replications that differ from the reference's", ""]
        lines += _table(["experiment", "metric", "mode", "values", "identical", "to the last bits", "replications",
                         "mean relative difference", "adjusted p", "verdict"],
                        [[r.experiment, r.metric, r.mode, int(r.k), int(r.identical), int(r.agree), int(r.replications),
                          f"{r.difference:+.3g}", "–" if pd.isna(r.p_adjusted) else f"{r.p_adjusted:.2g}",
                          "**inconsistent**" if r.inconsistent else "within chance"]
                         for r in differ.head(50).itertuples()])
        lines += [f"({len(differ) - 50} more)"] * (len(differ) > 50) + [""]
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
              "Inputs first: a run simulated from another spec, preset, seed, model code or topology than the "
              "reference's is not evidence about the reference, so a differing fingerprint fails the evaluation "
              "unless `--allow-changed` says the change is deliberate. Replication r of a cell draws from the same "
              "seeds at every scale, so the replications both runs hold are compared pair by pair, experiment by "
              "experiment. Where both provenances show one platform (architecture, C library, CPU model, Python, "
              "NumPy, SciPy, numba) each must be identical in every value, and the first that is not is named. "
              "Where they do not (another platform, or a CPU model not recorded), floating point may differ in the "
              "last bits, and a simulation may take another branch on them, so each metric of an experiment is "
              "tested for a shift: each shared value's relative difference to its pair, 2 (a - b) / (|a| + |b|) "
              f"(below {LAST_BITS:g} relative, none), averaged over the policies of one replication (they saw one "
              "workload), and Student's t test over the experiment's replications, which are independent; Holm "
              "over the experiment-metric tests; the page states the power against a "
              + " and a ".join(f"{shift:.0%}" for shift in SHIFTS) + " shift. Every experiment whose shared "
              "replications are not identical is named in the verdict: on one platform, or shifted, it fails the "
              "evaluation; within chance, it does not. Means over replications the reference does not "
              "hold are compared by the unpaired test below. "
              "A verdict may differ between scales: fewer replications give wider intervals, and an undecided "
              "claim is not a contradiction. What must not differ is the estimate, beyond what the two "
              "intervals allow. Under the null hypothesis both runs draw from one distribution (same model, "
              "spec and seeds), so they share one variance, pooled over both runs' replications: a small "
              "run's own spread, from a few replications, is a poor estimate of it. Each mean is compared "
              "with the reference's by Student's t test with that pooled variance (from the means, standard "
              "deviations and replications); each claim's estimate by a z test whose standard errors are "
              "read back from the two intervals (the half facing the other estimate, over the normal "
              "quantile of the interval's level, on the log scale for ratios) and pooled the same way, which "
              "errs towards consistency for t and exact binomial intervals. A published SAN figure's claim "
              "compares numerical solutions, which are not bit-identical across machines (the order of BLAS's "
              "sums differs): two runs agree when their estimates lie within twice the sum of the models' stated "
              "tolerances (`solve.tol`), since each solution is within its tolerance of the exact one. "
              "Claims are compared only where both runs "
              "estimate the same quantity (same deciding cell, same cells). The p values of each family "
              f"(claims, means) are adjusted by Holm's method, and a difference is named when its adjusted "
              f"p value is at most {ev.alpha:g}: the chance of naming any consistent quantity is at most "
              f"{ev.alpha:g} per family.", ""]
    return "\n".join(lines)
