"""The committed full-scale reference (``results/reference/``) and the report built from it alone.

``save_reference`` keeps what the report and ``simcore evaluate`` read of a full run, never the
raw batch files: each experiment's summary, claims, provenance and per-replication table (gzip,
without a timestamp, so the bytes depend only on the table), its traces and queue samples where
it has them; the SAN solutions, simulations and fits; every claim in one table; the run's jobs
(from the benchmark files) and its scale. ``rebuild_report`` makes every input of
``paper/report.tex`` from such a folder with the functions the workflow's rules call, so
``make report-from-reference`` gives the full-scale PDF in seconds, without simulating.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pandas as pd

from simcore.core.output import atomic_path, write_csv, write_text
from simcore.errors import InputError

KEPT = ("summary.csv", "claims.csv", "provenance.json", "traces.txt", "monitor.csv")
SAN_KEPT = ("solution.csv", "simulation.csv", "fit.csv", "fingerprint.json")


def read_scale(results: Path) -> str:
    """The scale of a folder of workflow results (its scale.txt); InputError when it has none."""
    path = results / "scale.txt"
    if not path.exists():
        raise InputError(f"{path}: missing; {results} is not a folder of workflow results.")
    return json.loads(path.read_text(encoding="utf-8"))


def _gzip(src: Path, dst: Path) -> None:
    """``src`` gzipped into ``dst`` with neither a time nor a file name in its header."""
    with atomic_path(dst) as tmp, open(src, "rb") as raw, open(tmp, "wb") as sink, \
            gzip.GzipFile(filename="", mode="wb", fileobj=sink, mtime=0) as packed:
        shutil.copyfileobj(raw, packed)


def check_commits(results: Path, experiments: list[str]) -> None:
    """InputError unless every experiment's provenance names a commit a reader can check out
    from the current branch (:func:`~simcore.experiments.provenance.unreachable_reason`)."""
    from simcore.experiments.provenance import unreachable_reason

    for exp in experiments:
        path = results / exp / "provenance.json"
        if not path.exists():
            raise InputError(f"{path}: missing; a result without its provenance cannot enter the reference.")
        reason = unreachable_reason(str(json.loads(path.read_text(encoding="utf-8")).get("commit", "unknown")))
        if reason:
            raise InputError(f"{path}: key 'commit': {reason}.")


def save_reference(results: Path, experiments: list[str], san_figures: list[str], benchmarks: Path,
                   out: Path, cores: int) -> int:
    """Copy a full run's results into ``out``; returns the number of files written."""
    from simcore.report.run_profile import save_jobs

    scale = read_scale(results)
    if scale != "full":
        raise InputError(f"{results / 'scale.txt'}: the reference is a full-scale run, not '{scale}'.")
    missing = [str(results / e / "summary.csv") for e in experiments if not (results / e / "summary.csv").exists()]
    if missing:
        raise InputError(f"{missing[0]}: missing ({len(missing)} experiments have no results); finish the run first.")
    check_commits(results, experiments)
    written = 0
    for exp in experiments + san_figures:
        for name in KEPT:
            if (results / exp / name).exists():
                (out / exp).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(results / exp / name, out / exp / name)
                written += 1
        if (results / exp / "replications.csv").exists():
            _gzip(results / exp / "replications.csv", out / exp / "replications.csv.gz")
            written += 1
    for model in sorted(p.name for p in (results / "san").iterdir() if p.is_dir()):
        for name in SAN_KEPT:
            if (results / "san" / model / name).exists():
                (out / "san" / model).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(results / "san" / model / name, out / "san" / model / name)
                written += 1
    written += _copy_calibrations(results, out)
    claims = [
        pd.read_csv(out / e / "claims.csv") for e in experiments + san_figures if (out / e / "claims.csv").exists()
    ]
    write_csv(out / "claims.csv", pd.concat(claims, ignore_index=True))
    save_jobs(benchmarks, scale, cores, out / "jobs-full.csv")
    shutil.copyfile(results / "scale.txt", out / "scale.txt")
    write_text(out / "README.md", reference_readme(out))
    return written + 4


CALIBRATION_KEPT = ("fit.yaml", "points.csv", "holdout.csv")


def _copy_calibrations(results: Path, out: Path) -> int:
    """Copy each calibration's replayed fit (``results/calibration/ID/``); returns the files written."""
    written = 0
    for folder in sorted(p for p in (results / "calibration").glob("*") if p.is_dir()):
        (out / "calibration" / folder.name).mkdir(parents=True, exist_ok=True)
        for name in CALIBRATION_KEPT:
            if (folder / name).exists():
                shutil.copyfile(folder / name, out / "calibration" / folder.name / name)
                written += 1
    return written


def update_reference(results: Path, experiments: list[str], known: list[str], san_figures: list[str],
                     benchmarks: Path, out: Path, cores: int, jobs_out: Path) -> int:
    """Replace only ``experiments`` (of the ``known`` ids) in the reference ``out`` with those of
    a full run that reran them (after a change of their model's code): their kept files, every
    claim in one table again (the experiments', then the SAN figures', as ``save_reference``
    orders them), and the rerun's jobs of those experiments in ``jobs_out`` (the benchmark folder
    may hold other jobs of the same run); the other experiments, the SAN results and the
    end-to-end run's jobs stay, and the README is made again. Returns the number of files written."""
    from simcore.report.run_profile import save_jobs

    unknown = [e for e in experiments if e not in known]
    if unknown:
        raise InputError(f"--experiments: '{unknown[0]}' is not an experiment id (see: simcore list).")
    for folder in (results, out):
        if read_scale(folder) != "full":
            raise InputError(f"{folder / 'scale.txt'}: the reference is a full-scale run, not '{read_scale(folder)}'.")
    missing = [str(results / e / "summary.csv") for e in experiments if not (results / e / "summary.csv").exists()]
    if missing:
        raise InputError(
            f"{missing[0]}: missing ({len(missing)} of the experiments have no results); finish the run first."
        )
    check_commits(results, experiments)
    written = 0
    for exp in experiments:
        stale = out / exp
        if stale.exists():
            shutil.rmtree(stale)
        stale.mkdir(parents=True)
        for name in KEPT:
            if (results / exp / name).exists():
                shutil.copyfile(results / exp / name, out / exp / name)
                written += 1
        if (results / exp / "replications.csv").exists():
            _gzip(results / exp / "replications.csv", out / exp / "replications.csv.gz")
            written += 1
    written += _copy_calibrations(results, out)
    claims = [pd.read_csv(out / e / "claims.csv") for e in sorted(known) + sorted(san_figures)
              if (out / e / "claims.csv").exists()]
    write_csv(out / "claims.csv", pd.concat(claims, ignore_index=True))
    save_jobs(benchmarks, "full", cores, jobs_out, names=experiments)
    write_text(out / "README.md", reference_readme(out))
    return written + 3


#: a jobs file's name carries its run's commit as a dash-separated token of 7 to 40 hex digits
COMMIT_IN_NAME = re.compile(r"(?<=-)[0-9a-f]{7,40}(?=[-.])")


def named_commits(folder: Path) -> dict[str, list[str]]:
    """Every commit the reference at ``folder`` names, with the files that name it: each
    experiment's provenance and the jobs files whose names carry the commit of their run."""
    named: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*/provenance.json")):
        commit = str(json.loads(path.read_text(encoding="utf-8")).get("commit", "unknown"))
        named.setdefault(commit, []).append(str(path.relative_to(folder)))
    for path in sorted(folder.glob("jobs-*.csv")):
        for commit in COMMIT_IN_NAME.findall(path.name):
            named.setdefault(commit, []).append(path.name)
    return named


def _commit_rows(provenance: list[dict]) -> list[str]:
    """One table row per commit: its experiments, when they were simulated and re-stamped."""
    rows = []
    for commit in sorted({p["commit"] for p in provenance}):
        mine = [p for p in provenance if p["commit"] == commit]
        simulated = sorted(str(p.get("date", "?"))[:10] for p in mine)
        restamped = sorted({str(p["restamp"]["date"])[:10] for p in mine if p.get("restamp")})
        identical = sum(int(p["restamp"]["identical_replications"]) for p in mine if p.get("restamp"))
        again = (f"{', '.join(restamped)}: {identical:,} shared replications identical" if restamped else "no")
        rows.append(f"| `{commit}` | {len(mine)} | {simulated[0]} to {simulated[-1]} | {again} |")
    return rows


def _jobs_rows(folder: Path) -> list[str]:
    """One table row per jobs file: its jobs, the span from first start to last end, CPU time."""
    rows = []
    for path in sorted(folder.glob("jobs-*.csv")):
        jobs = pd.read_csv(path)
        span = (jobs.end.max() - jobs.start.min()) / 60 if len(jobs) else 0.0
        rows.append(f"| `{path.name}` | {len(jobs)} | {span:.0f} min | {jobs.cpu.sum() / 60:.0f} min |")
    return rows


def reference_readme(folder: Path) -> str:
    """The reference's README, made from its files alone (so no number in it can drift)."""
    provenance = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*/provenance.json"))]
    models = sorted(p.name for p in (folder / "san").iterdir() if p.is_dir()) if (folder / "san").is_dir() else []
    seeds = sorted({str(p.get("root_seed")) for p in provenance})
    return "\n".join(
        [
            "# The full-scale reference",
            "",
            "Generated from the files of this folder by `simcore save-reference` (and by `scripts/restamp.py`): "
            "do not edit it by hand.",
            "",
            f"The aggregated results of {len(provenance)} experiments and {len(models)} SAN models "
            f"({', '.join(models) or 'none'}) at the "
            f"`{read_scale(folder) if (folder / 'scale.txt').exists() else '?'}` "
            f"scale, root seed {', '.join(seeds)}. Each experiment's `provenance.json` names the commit of the code "
            "that carries its results, always one of this repository's history (`git show COMMIT`): the commit of the "
            "run, or of the re-stamp that showed the code of that commit gives every replication it shares with "
            "the reference identically (`scripts/restamp.py`, docs/architecture.md).",
            "",
            "| commit | experiments | simulated | re-stamped |",
            "|---|---|---|---|",
            *_commit_rows(provenance),
            "",
            "The jobs of the runs (wall and CPU seconds, start and end of each job), for the report's run profile "
            "and the per-experiment times; `jobs-full.csv` is the end-to-end run's:",
            "",
            "| file | jobs | first start to last end | CPU |",
            "|---|---|---|---|",
            *_jobs_rows(folder),
            "",
            "- `EXPERIMENT/summary.csv`, `claims.csv`, `provenance.json`: as the workflow writes them in `results/`;",
            "- `EXPERIMENT/replications.csv.gz`: the per-replication table (gzip without a timestamp); the raw batch "
            "files are not kept;",
            "- `EXPERIMENT/traces.txt`, `monitor.csv`: the traced and monitored replications where the experiment has "
            "them;",
            "- `san/MODEL/`: the SAN solutions, simulations and fits; `corr05-fig8/claims.csv`: its claims;",
            "- `calibration/ID/`: a calibrated control's recorded fit (`fit.yaml`), its published points beside the "
            "control simulated at the fit (`points.csv`) and each machine's held-out prediction (`holdout.csv`);",
            "- `claims.csv`: every claim in one table; `scale.txt`: the scale.",
            "",
            "`make report-from-reference` builds the report from this folder alone; `make evaluate` checks a smoke run "
            "against it. Which reruns made which experiments, and why: docs/reference-history.md.",
            "",
        ]
    )


def rebuild_report(results: Path, paper: Path, specs: list, san_dir: Path, untested: list,
                   progress=None) -> list[Path]:
    """Every input of ``paper/report.tex`` from ``results`` (the reference, or any run's results):
    tables, figures, queue figures, the SAN figures and appendix, the macros and the run profile;
    ``progress(done, total, "report inputs", note)`` as each starts, the note naming it, and at
    the end (:mod:`simcore.progress`)."""
    steps = list(_report_steps(results, paper, specs, san_dir, untested))
    made = []
    for done, (files, make) in enumerate(steps):
        if progress is not None:
            progress(done, len(steps), "report inputs", f"now {', '.join(f.name for f in files) or 'the macros'}")
        make()
        made += files
    if progress is not None:
        progress(len(steps), len(steps), "report inputs")
    return made


def _report_steps(results: Path, paper: Path, specs: list, san_dir: Path, untested: list):
    """(the files it makes, a function making them) of every step of :func:`rebuild_report`
    (the macros' step lists none)."""
    from functools import partial

    from simcore.experiments.targets import san_figures, san_model_files
    from simcore.report.figures import make_figure, make_monitor_figure
    from simcore.report.inputs import write_report_inputs
    from simcore.report.san import make_figure as make_san_figure
    from simcore.report.san import write_report
    from simcore.report.san_published import compare
    from simcore.report.tables import make_table

    scale = read_scale(results)
    for spec in specs:
        table = paper / "tables" / f"{spec.id}.tex"
        yield [table], partial(make_table, spec, results, table)
        if spec["output"]["kind"] != "table":
            figure = paper / "figures" / f"{spec.id}.pdf"
            yield [figure], partial(make_figure, spec, results, figure)
        if spec["output"].get("monitor"):
            figure = paper / "figures" / f"{spec.id}-monitor.pdf"
            yield [figure], partial(make_monitor_figure, spec, results, figure)
    for model in (p.stem for p in san_model_files(san_dir)):
        figure = paper / "figures" / f"san-{model}.pdf"
        yield [figure], partial(make_san_figure, model, results / "san", figure)
    appendix = paper / "generated" / "san.tex"
    yield [appendix], partial(write_report, results / "san", appendix)
    for fig, models in san_figures(san_dir).items():
        figure, tex = paper / "figures" / f"{fig}.pdf", paper / "generated" / f"{fig}.tex"
        yield [figure, tex], partial(compare, models, results / "san", scale, figure, tex, None)
    for folder in sorted(p for p in (results / "calibration").glob("*") if (p / "fit.yaml").exists()):
        figure, tex = (
            paper / "figures" / f"calibration-{folder.name}.pdf",
            paper / "generated" / f"calibration-{folder.name}.tex",
        )
        yield [figure, tex], partial(_calibration, folder, specs, tex, figure)
    yield [], partial(write_report_inputs, specs, results, paper / "generated", untested, san_dir, results)
    if (results / "jobs-full.csv").exists():
        figure, tex = paper / "figures" / "run-profile.pdf", paper / "generated" / "run-profile.tex"
        yield [figure, tex], partial(_run_profile, results / "jobs-full.csv", scale, figure, tex)


def _calibration(folder: Path, specs: list, tex: Path, figure: Path) -> None:
    from simcore.calibration.spec import load_calibration
    from simcore.report.calibration import write

    config = specs[0].path.parent.parent if specs else Path("config")
    cal = load_calibration(config / "calibration" / f"{folder.name}.yaml", config / "experiments")
    write(cal, folder, tex, figure, f"figures/{figure.name}")


def _run_profile(jobs_file: Path, scale: str, figure: Path, tex: Path) -> None:
    from simcore.report.run_profile import draw_profile, read_jobs

    jobs, cores = read_jobs(jobs_file)
    draw_profile(jobs, scale, figure, tex, cores)
