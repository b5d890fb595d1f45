"""The Snakemake workflow: lint, dry run of the full DAG, and the smoke scale end to end."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import copy_workflow
from pypdf import PdfReader

from simcore.experiments.spec import load_spec
from simcore.stats.claims import VERDICTS

BIN = Path(sys.executable).parent


# The runs that simulate have no time limit of their own: how long the smoke workflow takes
# depends on the machine and what else it runs (15 min quiet, over 20 on a busy 2-core machine), and
# the limit belongs to CI (`.ci/run`, 90 min). Dry runs and lint, which should take seconds, keep
# a hang guard.
HANG_GUARD = 1200


def _snakemake(cwd: Path, *args, timeout=HANG_GUARD):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([str(BIN / "snakemake"), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of the workflow's sources, so the test never touches the user's results/."""
    root = Path(__file__).resolve().parents[1]
    work = copy_workflow(tmp_path_factory.mktemp("repro"))
    shutil.copytree(root / "paper", work / "paper",
                    ignore=shutil.ignore_patterns("build", "figures", "tables", "generated"))
    return work


def test_lint_is_clean(workdir):
    proc = _snakemake(workdir, "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr


def test_full_dag_dry_run(workdir):
    proc = _snakemake(workdir, "-n", "--quiet", "rules", "--config", "scale=full")
    assert proc.returncode == 0, proc.stderr
    counts = dict(line.split()[:2] for line in proc.stdout.splitlines() if line.split()[:1] and
                  line.split()[0] in ("simulate", "aggregate", "figure", "table", "report"))
    assert int(counts["aggregate"]) == len(list((workdir / "config/experiments").glob("*.yaml")))
    # one simulate job per group of cells (cells_per_job) and replication batch of every experiment that simulates
    jobs = 0
    for path in sorted((workdir / "config/experiments").glob("*.yaml")):
        spec = load_spec(path)
        if spec.source_id == spec.id:
            jobs += len(spec.cell_groups("full")) * len(spec.batches("full", 50))
    assert int(counts["simulate"]) == jobs
    assert int(counts["report"]) == 1


def test_a_bad_scale_stops_the_workflow_with_one_sentence_naming_the_key(workdir):
    """Snakemake's schema validation printed the schema and the instance over ten lines."""
    proc = _snakemake(workdir, "-n", "--config", "scale=huge")
    assert proc.returncode != 0
    assert (
        proc.stderr == "config/config.yaml or --config: key 'scale': 'huge' is not one of ['smoke', 'quick', 'full'].\n"
    )


@pytest.mark.workflow
def test_smoke_workflow_builds_report_with_scorecard(workdir):
    proc = _snakemake(workdir, "--profile", "workflow/profiles/ci", timeout=None)
    assert proc.returncode == 0, proc.stderr[-4000:]
    # the overall line at the start and every minute, against the same jobs' committed smoke job-minutes
    assert re.search(r"overall: \d+ of \d+ jobs done, [\d.]+ job-min of about [\d.]+ \(their times in the committed "
                     r"smoke run\)",
                     proc.stdout + proc.stderr), (proc.stdout + proc.stderr)[-2000:]
    pdf = workdir / "paper/build/report.pdf"
    assert pdf.exists()
    pages = [page.extract_text() for page in PdfReader(pdf).pages]
    text = "\n".join(pages)
    assert "Scorecard" in text
    holes = [line for line in text.splitlines() if "??" in line]
    assert not holes, holes[:5]
    commits = {json.loads(p.read_text())["commit"] for p in workdir.glob("results/*/provenance.json")}
    assert "smoke" in pages[0] and "Not the artifact" in pages[0] and all(c in pages[0] for c in commits)
    assert "SAN solver: numerical solution against simulation" in text
    assert (workdir / "results/san/example/simulation.csv").exists()
    assert "Figure 8: the analytical model" in text and (workdir / "paper/figures/corr05-fig8.pdf").exists()
    fig8 = (workdir / "paper/generated/corr05-fig8.tex").read_text()
    assert r"\newcommand{\SanFigMachineA}{corr05-4x1}" in fig8 and r"\SanFigTable" in fig8
    fit = pd.read_csv(workdir / "results/san/corr05-fig8-2sched/fit.csv")
    assert fit.parameter[0] == "expired_wait" and 0.5 < fit.value[0] < 10
    claims = pd.concat(pd.read_csv(p) for p in workdir.glob("results/*/claims.csv"))
    assert len(claims) >= 15
    assert set(claims.verdict) <= set(VERDICTS)
    summary = pd.read_csv(workdir / "results/barak96-table1/summary.csv")
    assert summary["published"].notna().sum() == 6 * 4  # six smoke cells x four policies
    # precision mode (amir-table2 at smoke: cap 12, one round): round 1 ran, its batch was
    # simulated, and the experiment and its readers were judged on 12 replications at 97.5%
    plan = json.loads((workdir / "results/raw/amir-table2/smoke/precision/round1.json").read_text())
    assert plan["batches"] and (workdir / "results/raw/amir-table2/smoke" / f"{plan['batches'][0]}.parquet").exists()
    assert json.loads((workdir / "results/amir-table2/provenance.json").read_text())["precision"][0]["round"] == 1
    for exp in ("amir-table2", "amir-fig1"):
        amir = pd.read_csv(workdir / f"results/{exp}/claims.csv")
        assert set(amir["level"]) == {0.975} and set(amir["n"]) == {12}, exp
    assert summary.groupby(["cell", "policy"]).size().eq(1).all()
    _snakemake_report_holds_the_figures_with_their_captions(workdir)
    _a_saved_reference_rebuilds_the_report(workdir)
    _the_smoke_run_is_consistent_with_the_committed_reference(workdir)
    # the benchmark files of the simulations, SAN jobs, aggregations and the report feed the appendix
    for rule in ("simulate", "san", "aggregate/smoke", "figure/smoke", "table/smoke", "report/smoke"):
        assert list((workdir / "logs/benchmarks" / rule).rglob("*.tsv")), rule


def _snakemake_report_holds_the_figures_with_their_captions(workdir):
    """`snakemake --report` lists every figure under its paper with the caption's words filled in."""
    proc = _snakemake(workdir, "--profile", "workflow/profiles/ci", "--report", "report.html")
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = (workdir / "report.html").read_text(encoding="utf-8")
    spec = load_spec(workdir / "config/experiments/zhou91-fig1.yaml")
    for text in ("ID=zhou91-fig1", spec["title"], "ID=san-example", "corr05-fig8",
                 "The LaTeX report", "numa-lb-repro at scale"):
        assert text in html, text


def _a_saved_reference_rebuilds_the_report(workdir):
    """save-reference keeps no raw batch and packs the per-replication tables byte for byte the
    same each time; report-from-results makes every input of the report from that folder alone,
    and latexmk builds it (the smoke run relabelled full: save-reference takes full runs only)."""
    from simcore.cli import main

    results, ref = workdir / "as-full/results", workdir / "as-full/reference"
    shutil.copytree(workdir / "results", results, ignore=shutil.ignore_patterns("raw"))
    (results / "scale.txt").write_text('"full"')
    common = ["--specs", str(workdir / "config/experiments")]
    save = [*common, "save-reference", "--results", str(results), "--benchmarks", str(workdir / "logs/benchmarks"),
            "--san", str(workdir / "config/san"), "--cores", "2", "--out", str(ref)]
    assert main(save) == 0
    packed = (ref / "corr05-fig9/replications.csv.gz").read_bytes()
    assert main(save) == 0 and (ref / "corr05-fig9/replications.csv.gz").read_bytes() == packed
    assert not list(ref.rglob("*.parquet")) and not (ref / "corr05-fig9/replications.csv").exists()
    each = sum(len(pd.read_csv(p)) for p in ref.glob("*/claims.csv"))
    assert len(pd.read_csv(ref / "claims.csv")) == each > 0
    paper = workdir / "as-full/paper"
    paper.mkdir()
    shutil.copy(workdir / "paper/report.tex", paper)
    shutil.copytree(workdir / "paper/sections", paper / "sections")
    assert main([*common, "report-from-results", "--results", str(ref), "--paper", str(paper), "--san",
                 str(workdir / "config/san"), "--untested", str(workdir / "config/untested.yaml")]) == 0
    done = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-outdir=build",
                           "report.tex"], cwd=paper, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    pages = [page.extract_text() for page in PdfReader(paper / "build/report.pdf").pages]
    assert "Scorecard" in "\n".join(pages) and "smoke" in pages[0]   # the provenance still says smoke
    # `make evaluate`'s check of the run against that reference (itself): everything there, nothing differs
    out = workdir / "as-full/evaluation.md"
    assert main([*common, "evaluate", "--results", str(workdir / "results"), "--reference", str(ref),
                 "--san", str(workdir / "config/san"), "--out", str(out)]) == 0
    page = out.read_text()
    assert "Verdict: **consistent**" in page and "- Outputs: " in page and "all present." in page
    assert "Claims: 0 compared" not in page and "value for value; they are." in page
    shared, identical = map(
        int, re.search(r"same seeds\): (\d+) \(per cell and policy\), (\d+) identical", page).groups()
    )
    assert shared == identical > 0


def _the_smoke_run_is_consistent_with_the_committed_reference(workdir):
    """`make evaluate`'s check on this smoke run: every output there, no claim or mean differing
    from the committed full-scale results beyond chance (Holm, 1% per family), and every
    experiment simulated from the reference's inputs (spec, preset, seed, model code, topologies),
    so the reference on main is of the current code."""
    from simcore.cli import main

    root = Path(__file__).resolve().parents[1]
    out = workdir / "evaluation.md"
    code = main(["--specs", str(workdir / "config/experiments"), "evaluate", "--results", str(workdir / "results"),
                 "--reference", str(root / "results/reference"), "--san", str(workdir / "config/san"),
                 "--out", str(out)])
    page = out.read_text()
    assert code == 0, page[:6000]
    assert "Verdict: **consistent**" in page and "Claims: 0 compared" not in page
    assert "(their fingerprints agree)" in page, page[:3000]
    shared, identical = map(
        int, re.search(r"same seeds\): (\d+) \(per cell and policy\), (\d+) identical", page).groups()
    )
    assert shared == identical > 0
    # no experiment's shared replications named: those on one platform (both runs record its CPU model)
    # identical, value for value; the others (paired) not shifted, nor even different
    assert "Shared replications that differ" not in page, page[:3000]
    assert "value for value; they are." in page or "Mode: **identical**" not in page, page[:3000]


def _clean_env():
    """No virtualenv on PATH: rules must find `simcore` without it."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())
    return env


def test_a_preset_change_reruns_the_simulation_without_snakemake_metadata(tmp_path):
    """Run amir-table2 at smoke scale, change thrashing_factor in its preset, delete .snakemake/,
    run again: the simulation reruns and the summary's rows come from the new fingerprint (never
    old rows under a new hash). Snakemake runs with a PATH that holds no virtualenv."""
    from simcore.experiments import load_spec
    from simcore.experiments.fingerprint import read_batch_fingerprint, simulation_fingerprint

    copy_workflow(tmp_path)
    target = "results/amir-table2/provenance.json"
    args = [str(BIN / "snakemake"), "--cores", "1", target, "--config", "scale=smoke", "experiments=[amir-table2]"]

    def run():
        proc = subprocess.run(args, cwd=tmp_path, env=_clean_env(), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stderr

    def current():
        spec = load_spec(tmp_path / "config/experiments/amir-table2.yaml")
        return simulation_fingerprint(spec, yaml.safe_load((tmp_path / "config/config.yaml").read_text())["seed"])

    run()
    raw = sorted((tmp_path / "results/raw/amir-table2/smoke").glob("c*/*.parquet"))
    assert raw and all(read_batch_fingerprint(p) == current() for p in raw)
    before = current()
    preset = tmp_path / "config/presets/amir.yaml"
    preset.write_text(preset.read_text().replace("thrashing_factor: 10", "thrashing_factor: 12"))
    shutil.rmtree(tmp_path / ".snakemake")
    log = run()
    assert "simulate amir-table2 (smoke) cell 0" in log
    after = current()
    assert after["hash"] != before["hash"] and after["parts"]["params"] != before["parts"]["params"]
    assert all(read_batch_fingerprint(p) == after for p in raw)
    assert json.loads((tmp_path / target).read_text())["fingerprint"] == after["hash"]
    shutil.rmtree(tmp_path / ".snakemake")
    assert "simulate amir-table2" not in run()   # nothing changed: nothing reruns


def test_shell_commands_quote_every_wildcard_and_path():
    """A wildcard reaches a shell command only quoted (`{wildcards.exp:q}`), as do the paths built from it."""
    import re

    rules = Path(__file__).resolve().parents[1] / "workflow/rules"
    shells = [m.group(1) for f in rules.glob("*.smk")
              for m in re.finditer(r"shell:\n((?:\s+\".*\"\n?)+)", f.read_text())]
    assert len(shells) >= 10
    fields = [field for text in shells for field in re.findall(r"\{([^{}]+)\}", text)]
    assert any(f.startswith("wildcards.exp") for f in fields)
    unquoted = [f for f in fields if f.split(".")[0].split("[")[0] in ("wildcards", "input", "output", "log")
                and not f.endswith(":q")]
    assert unquoted == []


def test_an_unknown_experiment_is_no_target(workdir):
    """The `exp` wildcard matches experiment ids only: anything else has no rule (not a KeyError)."""
    for target in ("results/no-such-exp/summary.csv", "results/raw/a b/smoke/c000/r00000-00003.parquet"):
        proc = _snakemake(workdir, "-n", "--config", "scale=smoke", "--", target, timeout=300)
        assert proc.returncode != 0 and "MissingRuleException" in proc.stdout + proc.stderr, proc.stderr[-2000:]


@pytest.mark.workflow
def test_a_change_of_the_analysis_code_redraws_without_simulating(tmp_path):
    """After amir-table2's table is built at smoke scale, a changed simcore/report/tables.py makes
    the aggregate and the table stale (they read the analysis code), never the simulations (they
    depend on the model code through their fingerprints)."""
    copy_workflow(tmp_path, ("simcore",))   # the workflow reads this copy's mtimes
    args = [str(BIN / "snakemake"), "--cores", "1", "paper/tables/amir-table2.tex", "--config", "scale=smoke",
            "experiments=[amir-table2]"]
    proc = subprocess.run(args, cwd=tmp_path, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    code = tmp_path / "simcore/report/tables.py"
    later = (tmp_path / "paper/tables/amir-table2.tex").stat().st_mtime + 10
    code.write_text(code.read_text() + "# changed\n")   # Snakemake compares small inputs' checksums too
    os.utime(code, (later, later))
    dry = subprocess.run([*args, "-n"], cwd=tmp_path, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert dry.returncode == 0, dry.stderr[-3000:]
    planned = dry.stdout + dry.stderr
    assert "rule table:" in planned and "rule aggregate:" in planned
    assert "rule simulate:" not in planned


def test_a_copy_of_the_workflow_without_the_code_reads_the_installed_code(tmp_path):
    """`make evaluate` copies Snakefile, workflow/ and config/ only: its aggregates and its run
    profile still list the analysis code their jobs run (the installed package's) as input, so a
    change to it remakes them there too."""
    import simcore

    copy_workflow(tmp_path)
    args = [str(BIN / "snakemake"), "--cores", "1", "-n", "paper/generated/run-profile.tex", "--config",
            "scale=smoke", "experiments=[amir-table2]"]
    dry = subprocess.run(args, cwd=tmp_path, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert dry.returncode == 0, dry.stderr[-3000:]
    code = Path(simcore.__file__).parent
    inputs = {rule: line for rule, line in re.findall(r"rule (\w+):\n\s+input: ([^\n]*)", dry.stdout)}
    assert str(code / "stats/claims.py") in inputs["aggregate"]
    assert str(code / "report/run_profile.py") in inputs["run_profile"]



def test_make_unlock_clears_the_lock_a_killed_run_left(tmp_path):
    """A run killed with no time to clean up (SIGKILL) leaves its lock; Snakemake then refuses to
    start until `make unlock` clears it, and the run resumes (the README's advice)."""
    import signal
    import time

    copy_workflow(tmp_path, extra=("Makefile", "scripts"))
    venv = Path(sys.executable).parent.parent
    locks = tmp_path / ".snakemake/locks"
    args = ("--cores", "1", "results/amir-table2/provenance.json", "--config", "scale=smoke",
            "experiments=[amir-table2]")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    log = tmp_path / "killed.log"
    with log.open("w") as out:
        run = subprocess.Popen([str(BIN / "snakemake"), *args], cwd=tmp_path, env=env, start_new_session=True,
                               stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not (locks.is_dir() and any(locks.iterdir())) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert locks.is_dir() and any(locks.iterdir()), log.read_text()[-3000:]
    refused = _snakemake(tmp_path, *args)
    assert refused.returncode != 0 and "cannot be locked" in refused.stdout + refused.stderr
    proc = subprocess.run(["make", "-s", "-C", str(tmp_path), "unlock", "SCALE=smoke", f"VENV={venv}", "STAMP="],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not locks.exists() or not any(locks.iterdir())
    resumed = _snakemake(tmp_path, *args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (tmp_path / "results/amir-table2/provenance.json").exists()
