"""The report layer: figures, tables, macros, scorecard and the LaTeX build, on small synthetic
results built for real specs (amir-table2 and its scatter amir-fig1, amir-table4, barak96-table1)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simcore.experiments import load_spec
from simcore.models.cluster.model import split_by_oversized
from simcore.report.data import fmt, fmt_ci, pair_ratio, tex_escape, tex_id
from simcore.report.figures import make_figure
from simcore.report.inputs import write_report_inputs
from simcore.report.macros import NOT_RUN, numbers
from simcore.report.provenance import run_values
from simcore.report.tables import make_table
from simcore.stats.claims import VERDICTS, evaluate_claims
from simcore.stats.summary import replication_table, summarize

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "config" / "experiments"
IDS = ["amir-table2", "amir-table4", "amir-fig1", "barak96-table1"]
AMIR_MEANS = {"pvm": 14.0, "enhanced-pvm": 9.8, "mosix": 8.6, "enhanced-mosix": 7.5}


def _amir_raw(reps: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    hardness = rng.lognormal(0.0, 0.5, reps)
    rows = []
    for policy, mean in AMIR_MEANS.items():
        for r in range(reps):
            jobs = 100 + r % 7
            slow = mean * hardness[r] * (1 + 0.02 * rng.standard_normal())
            row = {
                "cell": 0,
                "policy": policy,
                "rep": r,
                "spawn_key": f"(1, 0, {r})",
                "mean_slowdown": slow,
                "slowdown_sum": slow * 1.07 * jobs,
                "jobs": jobs,
                "max_slowdown": 3 * slow,
                "makespan": 1000 + r,
                "migrations": 0,
                "thrashing_share": 0.01 * (1 + r % 3),
                "events": 500,
                "wall_time": 0.01,
            }
            rows.append({**row, **split_by_oversized(row, r % 10 == 0)})  # executions 0, 10, 20, 30: oversized
    return pd.DataFrame(rows)


def _barak_raw(spec, reps: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for cell in spec.cells("smoke"):
        n = cell.values["n_procs"]
        rounds = -(-n // 16)
        base = {"optimal": 300 * n / 16 if n > 16 else 300.0, "mosix": 300 * max(1, n / 16) * 1.02 + 2,
                "pvm": 300.0 * rounds + 3, "pvm-on-mosix": 300 * max(1, n / 16) * 1.01 + 3}
        for policy in spec.policies:
            for r in range(reps):
                noise = 0.0 if policy == "optimal" else rng.uniform(0, 2)
                rows.append({"cell": cell.index, "n_procs": n, "policy": policy, "rep": r,
                             "spawn_key": f"(2, {cell.index}, {r})", "makespan": base[policy] + noise,
                             "mean_slowdown": 1.0, "slowdown_sum": n, "jobs": n, "max_slowdown": 1.0,
                             "migrations": 0, "events": 100, "wall_time": 0.002})
    return pd.DataFrame(rows)


def _write(spec, raw, results: Path) -> None:
    out = results / spec.id
    out.mkdir(parents=True, exist_ok=True)
    summarize(spec, raw).to_csv(out / "summary.csv", index=False, float_format="%.10g")
    evaluate_claims(spec, raw).to_csv(out / "claims.csv", index=False, float_format="%.10g")
    replication_table(spec, raw).to_csv(out / "replications.csv", index=False, float_format="%.10g")
    prov = {
        "experiment": spec.id,
        "paper": spec["paper"],
        "source": spec["source"],
        "commit": "abc123def456",
        "config_hash": "0123456789abcdef",
        "scale": "smoke",
        "root_seed": 20240501,
        "cells": int(raw.cell.nunique()),
        "replications_per_cell": int(raw.groupby(["cell", "policy"]).size().min()),
        "policies": spec.policies,
        "events": int(raw.events.sum()),
        "wall_time_s": 1.5,
        "platform": "Linux-test_x86_64",
        "packages": {"python": "3.11.2", "numpy": "1.26.4"},
    }
    (out / "provenance.json").write_text(json.dumps(prov))


@pytest.fixture(scope="module")
def specs():
    return {i: load_spec(SPECS / f"{i}.yaml") for i in IDS}


@pytest.fixture(scope="module")
def results(tmp_path_factory, specs) -> Path:
    results = tmp_path_factory.mktemp("results")
    amir = _amir_raw()
    for i in ("amir-table2", "amir-table4", "amir-fig1"):
        _write(specs[i], amir[amir.policy.isin(specs[i].policies)], results)
    _write(specs["barak96-table1"], _barak_raw(specs["barak96-table1"]), results)
    return results


def _summary(results, exp):
    return pd.read_csv(results / exp / "summary.csv")


# ---------------------------------------------------------------- formatting

def test_number_format_and_escaping():
    assert fmt(14.3338) == "14.33"
    assert fmt(604.36) == "604.4"
    assert fmt(300.0) == "300"
    assert fmt(1.0) == "1"
    assert fmt(-0.5) == r"\ensuremath{-}0.5"
    assert fmt(float("nan")) == "--"
    assert fmt(12345.6) == "12346"
    assert fmt_ci(1.0, 0.9, 1.1) == "1.000 [0.900, 1.100]"
    assert fmt_ci(300.0, 300.0, 300.0) == "300"
    assert fmt_ci(2000.0, 0.31, 5000.0) == "2000 [0.31, 5000]"  # a positive bound is not printed as 0
    assert fmt_ci(2000.0, 0.0, 5000.0) == "2000 [0, 5000]"
    assert tex_escape("a_b & 50% #1 {x} ~") == r"a\_b \& 50\% \#1 \{x\} \textasciitilde{}"


# ---------------------------------------------------------------- figures

@pytest.mark.parametrize("exp", ["amir-fig1", "barak96-table1"])
def test_figures_are_pdfs(tmp_path, specs, results, exp):
    out = tmp_path / f"{exp}.pdf"
    make_figure(specs[exp], results, out)
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and b"%%EOF" in data[-32:]
    again = tmp_path / "again.pdf"
    make_figure(specs[exp], results, again)
    assert again.read_bytes() == data, "figure bytes are not deterministic"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_table_experiment_has_no_figure(tmp_path, specs, results):
    with pytest.raises(ValueError, match="table"):
        make_figure(specs["amir-table2"], results, tmp_path / "x.pdf")
    assert not (tmp_path / "x.pdf").exists()


# ---------------------------------------------------------------- tables

def test_table_metrics_sets_published_beside_reproduced(tmp_path, specs, results):
    out = tmp_path / "t.tex"
    make_table(specs["amir-table2"], results, out)
    tex = out.read_text()
    assert r"\label{tab:amir-table2}" in tex and r"\toprule" in tex and "Table 2" in tex
    assert "14.3338" in tex and "8.20262" in tex
    s = _summary(results, "amir-table2")
    row = s[(s.policy == "pvm") & (s.metric == "mean_slowdown")].iloc[0]
    assert fmt_ci(row["mean"], row.ci_low, row.ci_high) in tex


def test_table_pairs_has_published_ratios(tmp_path, specs, results):
    out = tmp_path / "t.tex"
    make_table(specs["amir-table4"], results, out)
    tex = out.read_text()
    for value in ("1.67514", "1.14467", "1.46346", "1.63515", "1.13585", "1.43957"):
        assert value in tex
    assert "PVM / Enh.\\ PVM" in tex or "PVM / Enh. PVM" in tex
    assert tex.count(r"\%") >= 6  # relative errors


def test_table_pairs_gives_the_same_pairs_in_the_metrics_the_paper_has_no_ratio_of(tmp_path, specs, results):
    """amir-table4's split by oversized executions (here 0, 10, 20 and 30 of 40): after the six
    published ratios, PVM / Mosix, Enh. PVM / Mosix and PVM / Enh. PVM in each split metric, paper
    and error '--', the ratio that of the means over those executions alone."""
    out = tmp_path / "t.tex"
    make_table(specs["amir-table4"], results, out)
    rows = [line for line in out.read_text().splitlines() if "executions with a job larger" in line]
    assert [r.split(" & ")[0] for r in rows] == ["PVM / Mosix", "Enh. PVM / Mosix", "PVM / Enh. PVM"]
    reps = pd.read_csv(results / "amir-table4" / "replications.csv")
    over = reps[reps.rep % 10 == 0].set_index(["policy", "rep"]).mean_slowdown
    by_hand = over["pvm"].mean() / over["mosix"].mean()
    iv = pair_ratio(specs["amir-table4"], reps, "pvm", "mosix", "mean_slowdown_oversized")
    assert iv.mean == pytest.approx(by_hand, rel=1e-12)
    assert rows[0].split(" & ")[2:] == ["--", fmt_ci(iv.mean, iv.low, iv.high), "-- \\\\"]


def test_a_scatter_marks_the_executions_its_metric_flags(specs, results):
    """amir-fig1 marks the oversized executions (0, 10, 20, 30 of the synthetic 40), read on its x
    policy; with no mark, none."""
    from simcore.report.figures import _marked

    reps = pd.read_csv(results / "amir-fig1" / "replications.csv")
    index = pd.MultiIndex.from_tuples([(0, r) for r in range(40)], names=["cell", "rep"])
    marked = _marked(reps, "pvm", specs["amir-fig1"]["output"]["mark"], index)
    assert list(np.flatnonzero(marked)) == [0, 10, 20, 30]
    assert not _marked(reps, "pvm", None, index).any()


def test_table_lines_rows_per_cell(tmp_path, specs, results):
    out = tmp_path / "t.tex"
    make_table(specs["barak96-table1"], results, out)
    tex = out.read_text()
    assert "604.36" in tex and "916.11" in tex and "PVM on MOSIX" in tex
    s = _summary(results, "barak96-table1")
    row = s[(s.policy == "pvm") & (s.n_procs == 17)].iloc[0]
    assert fmt_ci(row["mean"], row.ci_low, row.ci_high) in tex
    assert len(re.findall(r"^\d+ & ", tex, re.M)) == len(specs["barak96-table1"].cells("smoke"))


def test_table_ratio_is_the_summarys_log_scale_ratio(specs, results):
    """The ratio a table prints is the summary's ratio policy/baseline, on the log scale."""
    spec = specs["amir-table4"]
    reps = pd.read_csv(results / "amir-table4" / "replications.csv")
    iv = pair_ratio(spec, reps, "pvm", "mosix", "mean_slowdown")
    s = _summary(results, "amir-table4")
    row = s[(s.policy == "pvm") & (s.metric == "mean_slowdown")].iloc[0]
    assert (iv.mean, iv.low, iv.high) == pytest.approx((row.ratio_mean, row.ratio_low, row.ratio_high), rel=1e-8)
    assert iv.low * iv.high == pytest.approx(iv.mean ** 2)


def test_table_scatter_lists_claims(tmp_path, specs, results):
    out = tmp_path / "t.tex"
    make_table(specs["amir-fig1"], results, out)
    tex = out.read_text()
    claims = pd.read_csv(results / "amir-fig1" / "claims.csv")
    assert "share" in tex and claims.verdict.iloc[0] in tex


# ---------------------------------------------------------------- macros, scorecard, provenance

@pytest.fixture(scope="module")
def generated(tmp_path_factory, specs, results) -> Path:
    out = tmp_path_factory.mktemp("generated")
    write_report_inputs(list(specs.values()), results, out)
    return out


def test_numbers_keys_and_values(specs, results, generated):
    tex = (generated / "numbers.tex").read_text()
    assert r"\providecommand{\val}" in tex and r"\valmissing" in tex
    values = numbers(list(specs.values()), results)
    s = _summary(results, "amir-table2")
    row = s[(s.policy == "enhanced-pvm") & (s.metric == "mean_slowdown")].iloc[0]
    key = "amir-table2/enhanced-pvm/mean_slowdown"
    assert values[f"{key}/mean"] == fmt(row["mean"])
    assert values[f"{key}/low"] == fmt(row.ci_low) and values[f"{key}/high"] == fmt(row.ci_high)
    assert values[f"{key}/published"] == "9.79463"
    assert values[f"{key}/diff"] == fmt(row.diff_mean) and values[f"{key}/ratio"] == fmt(row.ratio_mean)
    assert values[f"{key}/relerr"].endswith(r"\%")
    b = _summary(results, "barak96-table1")
    row = b[(b.policy == "pvm") & (b.n_procs == 17)].iloc[0]
    assert values["barak96-table1/n_procs=17/pvm/makespan/mean"] == fmt(row["mean"])
    assert values["barak96-table1/n_procs=31/optimal/makespan/published"] == "563"
    assert "amir-table4/pvm/over/enhanced-pvm/mean_slowdown/ratio" in values
    per_cell = {k.split("/")[1]: v for k, v in values.items()
                if k.startswith("barak96-table1/n_procs=") and k.endswith("/pvm/over/mosix/makespan/ratio")
                and v != NOT_RUN}
    for name, pick in (("max", max), ("min", min)):   # the largest and smallest ratio over the cells
        cell = pick(per_cell, key=lambda c: float(per_cell[c]))
        assert values[f"barak96-table1/{name}/pvm/over/mosix/makespan/ratio"] == per_cell[cell]
        assert values[f"barak96-table1/{name}/pvm/over/mosix/makespan/at"] == cell.split("=")[1]
    claims = pd.concat([pd.read_csv(results / i / "claims.csv") for i in IDS])
    c = claims[(claims.experiment == "amir-table2") & (claims.claim == "emosix-beats-mosix")].iloc[0]
    assert values["amir-table2/claim/emosix-beats-mosix/verdict"] == c.verdict
    assert values["amir-table2/claim/emosix-beats-mosix/estimate"] == fmt(c.estimate)
    for verdict in VERDICTS:
        assert values[f"score/{verdict.replace(' ', '')}"] == str(int((claims.verdict == verdict).sum()))
    counts = claims.verdict.value_counts()
    assert values["score/sentence"] == ", ".join(f"{v} {counts[v]}" for v in VERDICTS if v in counts)
    assert values["score/total"] == str(len(claims))
    # the report's own macros also count corr05 Fig. 8's claim (a SAN figure, no result here)
    assert f"\\valdef{{score/total}}{{{len(claims) + 1}}}" in tex and "\\valdef{score/corr05/missing}{1}" in tex


def test_scorecard_lists_every_claim(specs, results, generated):
    tex = (generated / "scorecard.tex").read_text()
    assert r"\begin{longtable}" in tex
    for exp in IDS:
        claims = pd.read_csv(results / exp / "claims.csv")
        for _, c in claims.iterrows():
            line = next(l for l in tex.splitlines() if tex_escape(c.text) in l)
            assert c.verdict in line and exp in line
            claim = next(k for k in specs[exp].data["claims"] if k["id"] == c.claim)
            assert ("partly calibrated" in line) == bool(claim.get("calibrated_input")), line
    assert "Partly calibrated (the verdict stands)" in tex and "by calibration barak96-control" in tex


def test_provenance_assumptions_and_papers(generated):
    prov = (generated / "provenance.tex").read_text()
    assert "abc123def456" in prov and "0123456789abcdef" in prov and "numpy~1.26.4" in prov
    assert prov.count("numpy~1.26.4") == 1
    assumptions = (generated / "assumptions.tex").read_text()
    assert tex_id("mosix_known_machines") in assumptions and tex_id("migration_cost") in assumptions
    paper = (generated / "paper-amir.tex").read_text()
    assert r"\input{tables/amir-table2.tex}" in paper and "figures/amir-fig1.pdf" in paper
    assert (generated / "paper-barak96.tex").exists() and (generated / "experiments.tex").exists()


NOT_RUN_CELL = "barak96-table1/n_procs=20"  # in the full grid, not in the smoke grid


def test_cells_not_run_at_this_scale_get_words_unknown_keys_none(specs, results):
    values = numbers(list(specs.values()), results)
    assert values[f"{NOT_RUN_CELL}/pvm/makespan/mean"] == r"\valnotrun"
    assert values[f"{NOT_RUN_CELL}/pvm/makespan/ratiohigh"] == r"\valnotrun"
    assert values[f"{NOT_RUN_CELL}/pvm/over/optimal/makespan/ratio"] == r"\valnotrun"
    assert values[f"{NOT_RUN_CELL}/optimal/makespan/published"] == "450"  # published values stay
    assert values["barak96-table1/n_procs=17/pvm/makespan/mean"] != r"\valnotrun"
    typos = (f"{NOT_RUN_CELL}/pvm/makespan/meen", f"{NOT_RUN_CELL}/pvn/makespan/mean",
             "barak96-table1/n_procs=21/pvm/makespan/mean",  # not in the full grid
             f"{NOT_RUN_CELL}/mosix/makespan/diff")  # the baseline has no diff
    for typo in typos:
        assert typo not in values


def _pdflatex(folder: Path, body: str, preamble: str) -> tuple[str, str]:
    """Compile ``body`` after ``preamble`` in ``folder``: the PDF's text and the log."""
    pypdf = pytest.importorskip("pypdf")
    (folder / "t.tex").write_text(preamble + "\\begin{document}\n" + body + "\n\\end{document}\n")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=folder,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:]
    text = "".join(page.extract_text() for page in pypdf.PdfReader(folder / "t.pdf").pages)
    return " ".join(text.split()), (folder / "t.log").read_text(errors="replace")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_cell_not_run_prints_words_once_and_a_typo_the_red_marker(tmp_path, generated):
    preamble = ("\\documentclass{article}\\usepackage{xcolor}\\usepackage{hyperref}\n"
                f"\\input{{{generated / 'numbers.tex'}}}\n")
    body = (f"A: \\valci{{{NOT_RUN_CELL}/pvm/makespan}}. B: \\valratioci{{{NOT_RUN_CELL}/pvm/makespan}}. "
            f"C: \\val{{{NOT_RUN_CELL}/pvm/makespan/meen}}. D: \\valci{{barak96-table1/n_procs=17/pvm/makespan}}.")
    text, _ = _pdflatex(tmp_path, body, preamble)
    assert "A: not run at this scale. B: not run at this scale. C: [??" in text
    assert text.count("not run") == 2 and re.search(r"D: [\d.]+ \[[\d.]+, [\d.]+\]\.", text), text


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_scorecard_fits_the_text_width_with_long_ids(tmp_path, specs, results):
    long_id = load_spec(SPECS / "mehta-table1-8-2-3-cpu.yaml")  # no results: its claims say so
    write_report_inputs([*specs.values(), long_id], results, tmp_path / "generated")
    preamble = (ROOT / "paper/report.tex").read_text().split("\\begin{document}")[0]
    text, log = _pdflatex(tmp_path, "\\input{generated/scorecard}", preamble)
    assert "mehta-table1-8-2-3-cpu" in text.replace("- ", "-") and "Overfull \\hbox" not in log


def _provenance(results: Path, exp: str, **fields) -> None:
    (results / exp).mkdir(parents=True, exist_ok=True)
    (results / exp / "provenance.json").write_text(json.dumps({"experiment": exp, **fields}))


def test_run_values_from_provenance(tmp_path, specs):
    smoke = {"scale": "smoke", "commit": "0123abcd-dirty"}
    _provenance(tmp_path, "amir-table2", replications_per_cell=8, date="2025-03-02T10:00:00+00:00", **smoke)
    _provenance(tmp_path, "barak96-table1", replications_per_cell=3, date="2025-03-04T09:00:00+00:00", **smoke)
    values = run_values(list(specs.values()), tmp_path)
    assert (values["scale"], values["reps"], values["commit"], values["date"]) == \
        ("smoke", "3--8", "0123abcd-dirty", "2025-03-04")
    assert "Not the artifact's result" in values["scalenote"] and "smoke run" in values["scalenote"]
    _provenance(tmp_path, "amir-table4", scale="full", commit="4567ef", replications_per_cell=30)
    values = run_values(list(specs.values()), tmp_path)
    assert values["scale"] == "mixed" and values["reps"] == "3--30"
    assert values["commit"] == r"0123abcd-dirty, \allowbreak{}4567ef" and "full, smoke" in values["scalenote"]
    for exp in ("amir-table2", "barak96-table1"):
        _provenance(tmp_path, exp, scale="full", commit="4567ef", replications_per_cell=30)
    values = run_values(list(specs.values()), tmp_path)
    assert (values["scale"], values["reps"], values["scalenote"]) == ("full", "30", "")


# ---------------------------------------------------------------- the whole report

@pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk is not installed")
def test_report_compiles(tmp_path, specs, results):
    pypdf = pytest.importorskip("pypdf")
    paper = tmp_path / "paper"
    shutil.copytree(ROOT / "paper", paper, ignore=shutil.ignore_patterns("build", "figures", "tables", "generated"))
    for exp, spec in specs.items():
        make_table(spec, results, paper / "tables" / f"{exp}.tex")
        if spec["output"]["kind"] != "table":
            make_figure(spec, results, paper / "figures" / f"{exp}.pdf")
    write_report_inputs(list(specs.values()), results, paper / "generated")
    run = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-outdir=build",
                          "report.tex"], cwd=paper, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:]
    text = "".join(page.extract_text() for page in pypdf.PdfReader(paper / "build" / "report.pdf").pages)
    assert "Scorecard" in text
    assert "Enhanced PVM" in text


def test_gain_panel_uses_the_papers_ratio_or_its_two_values(root):
    """The paper's gain beside the paired one: from a published ratio where the paper gives one,
    else from the published values of the policy and the baseline in the same cell."""
    from simcore.experiments import load_spec
    from simcore.report.data import has_gain_panel
    from simcore.report.figures import _published_gain

    mehta = load_spec(root / "config/experiments/mehta-table4-w1.yaml")
    assert _published_gain(mehta, {"n_tasks": 200}, "conservative-soft", "mean_turnaround") == pytest.approx(11.59)
    assert _published_gain(mehta, {"n_tasks": 200}, "conservative-hard", "mean_turnaround") is None
    corr = load_spec(root / "config/experiments/corr05-fig10.yaml")
    assert _published_gain(corr, {"n_tasks": 50}, "multilevel", "mean_turnaround_s") == pytest.approx(
        100 * (1 - 20.503 / 21.955))
    assert has_gain_panel(corr) and not has_gain_panel(load_spec(root / "config/experiments/amir-table2.yaml"))


def test_the_scorecard_counts_claims_per_paper_and_verdict(monkeypatch):
    """Two papers, three claims: one row per paper, a column per verdict that occurs (short
    heads), a total row and a total column; a claim without result counts as 'no result'."""
    from simcore.report import scorecard

    specs = [_Paper("amir", [{"verdict": "reproduced"}, {"verdict": "smaller than published"}]),
             _Paper("barak96", [None])]
    monkeypatch.setattr(scorecard, "claim_rows", lambda spec, results: [({}, row) for row in spec.rows])
    tex = "\n".join(scorecard.verdict_counts_tex(specs, Path("results")))
    assert r"\begin{tabular}{@{}lrrrr@{}}" in tex
    assert "{reproduced}" in tex and "{smaller}" in tex and "{no result}" in tex and "inconclusive" not in tex
    assert r"amir & 1 & 1 & 0 & 2 \\" in tex and r"barak96 & 0 & 0 & 1 & 1 \\" in tex
    assert r"\textbf{all} & 1 & 1 & 1 & 3 \\" in tex


class _Paper:
    """A spec stand-in: spec['paper'] and the rows claim_rows gives."""

    def __init__(self, paper: str, rows: list):
        self.paper, self.rows = paper, rows

    def __getitem__(self, key):
        return getattr(self, key)


def test_a_san_figures_claim_is_scored_with_the_papers_claims(tmp_path, specs, results):
    """corr05 Fig. 8's claim (published.claim of its model file) has no experiment spec: its
    row, written by `simcore san-compare` to results/corr05-fig8/claims.csv, joins the scorecard,
    the counts per paper and the score macros; without the row it counts as 'no result'."""
    from simcore.report.macros import numbers
    from simcore.report.scorecard import figure_claims

    [fig8] = figure_claims(ROOT / "config/san")
    assert fig8.id == "corr05-fig8" and fig8["paper"] == "corr05"
    assert [c["id"] for c in fig8.data["claims"]] == ["multilevel-finishes-more"]
    before = numbers(list(specs.values()), results, [fig8])
    assert before["score/corr05/missing"] == "1"
    shutil.copytree(results, tmp_path / "results")
    (tmp_path / "results/corr05-fig8").mkdir()
    pd.DataFrame([{"experiment": "corr05-fig8", "claim": "multilevel-finishes-more", "statistic": "difference",
                   "kind": "greater", "estimate": -0.002, "ci_low": -0.002, "ci_high": -0.002, "threshold": 0.0,
                   "published_effect": 0.0082, "verdict": "contradicted"}]).to_csv(
        tmp_path / "results/corr05-fig8/claims.csv", index=False)
    after = numbers(list(specs.values()), tmp_path / "results", [fig8])
    assert after["score/corr05/contradicted"] == "1" and after["score/corr05/missing"] == "0"
    assert int(after["score/total"]) == int(before["score/total"])
    assert after["corr05-fig8/claim/multilevel-finishes-more/estimate"] == r"\ensuremath{-}0.002"
    write_report_inputs(list(specs.values()), tmp_path / "results", tmp_path / "generated", san_dir=ROOT / "config/san")
    scorecard = (tmp_path / "generated/scorecard.tex").read_text()
    assert r"\hyperref[tab:corr05-fig8]" in scorecard and "has finished with a higher probability" in scorecard


def test_few_queues_are_lines_and_many_their_mean_and_band():
    """Two queues: one step line each. Five queues sampled at 0 and 1 with (0, 1, 2, 3, 4) and
    (5, 5, 5, 5, 10): the mean line (2, 6) and a band from 0 to 10."""
    import matplotlib.pyplot as plt

    from simcore.report.figures import _queues_panel

    fig, (few, many) = plt.subplots(1, 2)
    try:
        _queues_panel(few, pd.DataFrame({"time": [0, 0, 1, 1], "queue": ["a", "b"] * 2, "value": [1, 2, 3, 4]}))
        assert [list(line.get_ydata()) for line in few.lines] == [[1, 3], [2, 4]] and not few.collections
        _queues_panel(many, pd.DataFrame({"time": [0] * 5 + [1] * 5, "queue": [f"q{i}" for i in range(5)] * 2,
                                          "value": [0, 1, 2, 3, 4, 5, 5, 5, 5, 10]}))
        assert len(many.lines) == 1 and list(many.lines[0].get_ydata()) == [2.0, 6.0]
        ys = many.collections[0].get_paths()[0].vertices[:, 1]
        assert (ys.min(), ys.max()) == (0.0, 10.0)
    finally:
        plt.close(fig)


def test_a_percent_sign_in_a_title_is_escaped_once(tmp_path):
    """solsona-readings' title says '80% load': the caption must read 80\\% (one backslash), or
    LaTeX takes the rest of the caption for a comment."""
    from simcore.report.tables import make_table

    out = tmp_path / "t.tex"
    make_table(load_spec("config/experiments/solsona-readings.yaml"), tmp_path, out)
    text = out.read_text()
    assert "at 80\\% load" in text and "80\\\\%" not in text


def test_the_run_profile_counts_each_job_for_its_cpu_over_its_wall_time(tmp_path):
    """Two simulation jobs of the smoke scale and one SAN job, each holding one core while it runs:
    A 0-60 s (60 CPU s sampled), B 30-90 s (30), the SAN solve 60-90 s (30); a quick-scale file is
    left out. In 30 s bins: 1, 2 and 2 cores held. The span is 1.5 min, the job time 2.5 min,
    2.5 / (1.5 x 2 cores) = 83 % of the machine; the sampled CPU 2 min; job time per paper:
    corr05 1.5 (B and the SAN solve), amir 1.0."""
    import os

    from simcore.report.run_profile import busy_cores, draw_profile, load_jobs

    bench = tmp_path / "benchmarks"
    t0 = 1.7e9

    def job(rel, wall, cpu, end):
        path = bench / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{wall}\t0:00:{int(wall)}\t10\t{cpu}\n")
        os.utime(path, (t0 + end, t0 + end))

    job("simulate/amir-table2/smoke/c000/r00000-00004.tsv", 60, 60, 60)
    job("simulate/corr05-fig9/smoke/c000/r00000-00003.tsv", 60, 30, 90)
    job("simulate/corr05-fig9/quick/c000/r00000-00020.tsv", 600, 600, 900)
    job("san/corr05-fig8-2sched-solve.tsv", 30, 30, 90)
    job("aggregate/quick/corr05-fig9.tsv", 5, 5, 905)         # another scale
    job("figure/smoke/corr05-fig9.tsv", 5, 5, 95)             # drawn after the profile
    job("report/smoke/report.tsv", 5, 5, 100)
    jobs = load_jobs(bench, "smoke")
    assert sorted(jobs.name) == ["amir-table2", "corr05-fig8-2sched", "corr05-fig9"]
    minutes, busy = busy_cores(jobs, 30.0)
    assert minutes.tolist() == [0.0, 0.5, 1.0] and busy.tolist() == [1.0, 2.0, 2.0]
    draw_profile(jobs, "smoke", tmp_path / "profile.pdf", tmp_path / "profile.tex", 2)
    tex = (tmp_path / "profile.tex").read_text()
    for name, value in (("Jobs", "3"), ("Span", "1.5"), ("JobTime", "2.5"), ("Cpu", "2.0"), ("Use", "83"),
                        ("Cores", "2"), ("Papers", "corr05 1.5, amir 1.0")):
        assert f"\\newcommand{{\\RunProfile{name}}}{{{value}}}" in tex
    assert (tmp_path / "profile.pdf").stat().st_size > 1000
    # saved with the reference and read back (a copy loses the files' times): the same macros
    from simcore.report.run_profile import read_jobs, save_jobs

    save_jobs(bench, "smoke", 2, tmp_path / "jobs.csv")
    jobs, cores = read_jobs(tmp_path / "jobs.csv")
    assert cores == 2 and len(jobs) == 3
    draw_profile(jobs, "smoke", tmp_path / "again.pdf", tmp_path / "again.tex", cores)
    assert (tmp_path / "again.tex").read_text() == tex
    job("aggregate/smoke/amir-table2.tsv", 30, 30, 90)       # an aggregation of this scale counts
    jobs = load_jobs(bench, "smoke")
    assert sorted(jobs.rule) == ["aggregate", "san", "simulate", "simulate"]


def test_a_san_model_of_no_paper_counts_as_san_not_as_a_paper(tmp_path):
    """corr05-fig8-2sched's SAN jobs count for corr05; the solver's example model, named without a
    paper's prefix, for "san"; a jobs file saved with the old label reads with the new one."""
    from simcore.report.run_profile import paper_of, read_jobs

    assert [paper_of("san", "corr05-fig8-2sched"), paper_of("san", "example"), paper_of("simulate", "amir-map")] \
        == ["corr05", "san", "amir"]
    pd.DataFrame(
        [("san", "example", "example", 0, 6, 6, 6, 2)],
        columns=["rule", "name", "paper", "start", "end", "wall", "cpu", "cores"],
    ).to_csv(tmp_path / "j.csv", index=False)
    jobs, cores = read_jobs(tmp_path / "j.csv")
    assert jobs.paper.tolist() == ["san"] and cores == 2


def test_a_run_stopped_and_resumed_is_measured_without_its_pause(tmp_path):
    """x: 0-60 s and, after a stop, 1000-1060 s; y: 30-90 s. The clock runs 1060 s, but jobs ran
    0-90 and 1000-1060: 150 s = 2.5 min, the span of the run and of x (y's: 1.0 min). 3 job
    minutes on 2 cores over 2.5 min: 60 % of the machine (not 3 / (1060 / 60 x 2) = 8 %)."""
    from simcore.report.run_profile import busy_seconds, draw_profile, experiment_times

    jobs = pd.DataFrame([("simulate", "x", "p", 0, 60, 60, 60), ("simulate", "x", "p", 1000, 1060, 60, 60),
                         ("simulate", "y", "p", 30, 90, 60, 60)],
                        columns=["rule", "name", "paper", "start", "end", "wall", "cpu"])
    assert busy_seconds(jobs, 0, 1060) == 150 and busy_seconds(jobs, 45, 1010) == 55
    assert experiment_times(jobs).set_index("name").span_min.to_dict() == {"x": 2.5, "y": 1.0}
    draw_profile(jobs, "full", tmp_path / "profile.pdf", tmp_path / "profile.tex", 2)
    tex = (tmp_path / "profile.tex").read_text()
    for name, value in (("Span", "2.5"), ("Clock", "17.7"), ("JobTime", "3.0"), ("Use", "60")):
        assert f"\\newcommand{{\\RunProfile{name}}}{{{value}}}" in tex


def test_the_readme_table_of_times_adds_each_experiments_jobs_and_spans_them(tmp_path):
    """Paper p: x1 runs 0-60 s (60 CPU s), 60-120 s (30 CPU s) and aggregates 120-126 s (6): 3 jobs,
    126 s = 2.1 min of jobs, 96 s = 1.6 min CPU, spanning 2.1 min; x2 one job 0-30 s, 0.5 min each
    way. Paper q: y 30-90 s, 1.0 min. The run: 5 jobs, 3.6 job min, 3.1 CPU min, 0-126 s = 2.1 min.
    x1 comes before x2 (more job time); the same table through the command line."""
    from simcore.cli import main
    from simcore.report.run_profile import markdown_times

    jobs = pd.DataFrame([("simulate", "x1", "p", 0, 60, 60, 60), ("simulate", "x1", "p", 60, 120, 60, 30),
                         ("aggregate", "x1", "p", 120, 126, 6, 6), ("simulate", "x2", "p", 0, 30, 30, 30),
                         ("simulate", "y", "q", 30, 90, 60, 60)],
                        columns=["rule", "name", "paper", "start", "end", "wall", "cpu"])
    table = markdown_times(jobs, 2).splitlines()
    assert table[2:] == ["| `x1` | 3 | 2.1 | 1.6 | 2.1 |", "| `x2` | 1 | 0.5 | 0.5 | 0.5 |",
                         "| **p** | 4 | 2.6 | 2.1 | 2.1 |", "| `y` | 1 | 1.0 | 1.0 | 1.0 |",
                         "| **q** | 1 | 1.0 | 1.0 | 1.0 |", "| **all, 2 cores** | 5 | 3.6 | 3.1 | 2.1 |"]
    jobs.assign(cores=2).to_csv(tmp_path / "jobs-full.csv", index=False)
    assert main(["run-profile", "--jobs", str(tmp_path / "jobs-full.csv"), "--figure", str(tmp_path / "f.pdf"),
                 "--tex", str(tmp_path / "f.tex"), "--markdown", str(tmp_path / "times.md")]) == 0
    assert (tmp_path / "times.md").read_text().splitlines() == table


def test_tables_are_read_from_their_gzip_copy_when_the_plain_file_is_absent(tmp_path):
    """The reference keeps replications.csv as replications.csv.gz; readers find either."""
    import gzip

    from simcore.report.data import read_csv

    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(b"a,b\n1,2\n"))
    assert read_csv(tmp_path / "t.csv").to_dict("records") == [{"a": 1, "b": 2}]
    (tmp_path / "t.csv").write_text("a,b\n3,4\n")                  # the plain file comes first
    assert read_csv(tmp_path / "t.csv").to_dict("records") == [{"a": 3, "b": 4}]
    assert read_csv(tmp_path / "u.csv") is None


def test_artifact_checklist_times_each_experiment_from_the_saved_jobs(tmp_path):
    """x at quick: two simulations of 30 s and 90 s wall (60 + 60 s CPU) and an aggregation of 6 s
    (3 s CPU): 126 s = 2.1 min of jobs, 123 s = 2.0 min of CPU. A figure job is not counted. y has
    no job at quick; no scale but quick was measured."""
    from types import SimpleNamespace

    from simcore.report.artifact import artifact_tex

    pd.DataFrame([("simulate", "x", 30, 60), ("simulate", "x", 90, 60), ("aggregate", "x", 6, 3),
                  ("figure", "x", 50, 50), ("simulate", "z", 5, 5)], columns=["rule", "name", "wall", "cpu"]
                 ).assign(paper="p", start=0, end=1, cores=2).to_csv(tmp_path / "jobs-quick.csv", index=False)
    tex = artifact_tex([SimpleNamespace(id="x"), SimpleNamespace(id="y")], tmp_path)
    assert r"\texttt{x} & \texttt{make figure ID=x} & -- & 2.1 / 2.0 & -- \\" in tex
    assert r"\texttt{y} & \texttt{make figure ID=y} & -- & -- & -- \\" in tex
    assert "Scales not yet measured: smoke, full." in tex and "Results Reproduced" in tex


@pytest.mark.slow
def test_the_full_scale_references_macros_fit_texs_string_pool(root):
    """numbers.tex defines one control sequence (val@KEY) per value, and pdflatex keeps every
    name in its string pool: TeX Live's pdflatex stops with 'TeX capacity exceeded, sorry [pool
    size=5840942]' beyond it (a full run with every cell of the judged readings did). The macros
    of the committed full-scale reference stay under 5,000,000 characters of names, leaving the
    rest of the pool to the report's own."""
    from simcore.report.macros import numbers

    specs = [load_spec(p) for p in sorted(SPECS.glob("*.yaml"))]
    names = numbers(specs, root / "results/reference")
    assert sum(len("val@") + len(k) for k in names) < 5_000_000


def test_a_judged_experiment_without_a_grid_gives_each_readings_levels(root):
    """amir-table2-readings (one cell per reading): each policy's level per reading, as the amir
    section quotes them, is that reading's row of the summary (reading 1: the calibrated control,
    effective load); an experiment with a grid of its own gives none (corr05-fig9-readings)."""
    from simcore.report.data import fmt, read_summary
    from simcore.report.judged import rows_of_reading
    from simcore.report.macros import numbers

    specs = [load_spec(SPECS / f"{name}.yaml") for name in ("amir-table2-readings", "corr05-fig9-readings")]
    names = numbers(specs, root / "results/reference")
    spec = specs[0]
    combo = spec.reading_combinations()[1]
    assert [e["value"] for e in combo.values()] == ["amir-control", "effective"]
    row = rows_of_reading(read_summary(spec, root / "results/reference"), combo)
    mean = row[(row.policy == "mosix") & (row.metric == "mean_slowdown")]["mean"].iloc[0]
    assert names["amir-table2-readings/reading1/mosix/mean_slowdown/mean"] == fmt(mean)
    assert not any(k.startswith("corr05-fig9-readings/reading1/multilevel/") for k in names)


def test_a_one_at_a_time_grid_names_a_cell_by_what_it_changes():
    """amir-readings changes one reading per cell: its macros name only the changed value
    ('slowdown_demand=machine/'), the default cell 'default/' (its 15 parameters in every
    name overflowed pdflatex's string pool); a crossed grid names every value."""
    from simcore.report.data import cell_key

    spec = load_spec(SPECS / "amir-readings.yaml")
    keys = {cell_key(spec, c.values) for c in spec.all_cells()}
    assert "default/" in keys and "slowdown_demand=machine/" in keys and "thrashing_factor=3/" in keys
    assert len(keys) == len(spec.all_cells())
    crossed = load_spec(SPECS / "amir-map.yaml")
    assert cell_key(crossed, crossed.all_cells()[0].values) == "mosix_known_machines=1/mean_interarrival=5/"


def test_a_cell_read_back_from_a_csv_is_named_by_its_grid_values():
    """measure_until mixes a word and a number ('last-completion', 10000.0), so a CSV gives the
    number back as the text '10000.0': the row is still the grid's 10000.0, named
    'measure_until=10000/' as the figure, the table and the macros name it."""
    from simcore.report.data import cell_key, cell_values

    spec = load_spec(SPECS / "amir-readings.yaml")
    row = pd.Series({**spec.all_cells()[0].values, "measure_until": "10000.0"})
    assert cell_values(spec, row)["measure_until"] == 10000.0
    assert cell_key(spec, cell_values(spec, row)) == "measure_until=10000/"


def test_a_figure_caption_promises_published_markers_only_where_the_figure_draws_them(root):
    """zhou91-fig1's spec gives no published values (its figure's points are lost), so its caption
    must not promise open markers; corr05-fig9's spec gives Linux's and the multilevel balancer's
    turnaround at several loads, so its caption does, on the curves and on the gain panel."""
    from simcore.report.sections import paper_tex

    reference = root / "results/reference"
    captions = {}
    for paper, ids in (("zhou91", ["zhou91-fig1"]), ("corr05", ["corr05-fig9"])):
        tex = paper_tex(paper, [load_spec(SPECS / f"{i}.yaml") for i in ids], reference)
        captions[ids[0]] = re.search(r"\\caption\{(.*?)\}\\label\{fig:", tex).group(1)
    assert "open markers" not in captions["zhou91-fig1"]
    assert "the paper gives no values to draw beside them" in captions["zhou91-fig1"]
    assert "published values as open markers" in captions["corr05-fig9"]
    assert "the paper's gain as open markers" in captions["corr05-fig9"]
