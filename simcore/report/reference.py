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
    claims = [pd.read_csv(out / e / "claims.csv") for e in experiments + san_figures if (out / e / "claims.csv").exists()]
    write_csv(out / "claims.csv", pd.concat(claims, ignore_index=True))
    jobs = save_jobs(benchmarks, scale, cores, out / "jobs-full.csv")
    shutil.copyfile(results / "scale.txt", out / "scale.txt")
    write_text(out / "README.md", _readme(out, experiments, jobs, cores))
    return written + 4


def update_reference(results: Path, experiments: list[str], known: list[str], san_figures: list[str],
                     benchmarks: Path, out: Path, cores: int, jobs_out: Path) -> int:
    """Replace only ``experiments`` (of the ``known`` ids) in the reference ``out`` with those of
    a full run that reran them (after a change of their model's code): their kept files, every
    claim in one table again (the experiments', then the SAN figures', as ``save_reference``
    orders them), and the rerun's jobs of those experiments in ``jobs_out`` (the benchmark folder
    may hold other jobs of the same run); the other experiments, the SAN results,
    the end-to-end run's jobs and the README stay. Returns the number of files written."""
    from simcore.report.run_profile import save_jobs

    unknown = [e for e in experiments if e not in known]
    if unknown:
        raise InputError(f"--experiments: '{unknown[0]}' is not an experiment id (see: simcore list).")
    for folder in (results, out):
        if read_scale(folder) != "full":
            raise InputError(f"{folder / 'scale.txt'}: the reference is a full-scale run, not '{read_scale(folder)}'.")
    missing = [str(results / e / "summary.csv") for e in experiments if not (results / e / "summary.csv").exists()]
    if missing:
        raise InputError(f"{missing[0]}: missing ({len(missing)} of the experiments have no results); finish the run first.")
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
    claims = [pd.read_csv(out / e / "claims.csv") for e in sorted(known) + sorted(san_figures)
              if (out / e / "claims.csv").exists()]
    write_csv(out / "claims.csv", pd.concat(claims, ignore_index=True))
    save_jobs(benchmarks, "full", cores, jobs_out, names=experiments)
    return written + 2


def _readme(out: Path, experiments: list[str], jobs: pd.DataFrame, cores: int) -> str:
    """What the folder holds and where it comes from, for a reader of the repository."""
    provenance = [json.loads((out / e / "provenance.json").read_text()) for e in experiments
                  if (out / e / "provenance.json").exists()]
    commits = ", ".join(sorted({str(p.get("commit")) for p in provenance}))
    dates = sorted(str(p.get("date", ""))[:10] for p in provenance)
    span = (jobs.end.max() - jobs.start.min()) / 60 if len(jobs) else float("nan")
    return "\n".join([
        "# The full-scale reference", "",
        f"The aggregated results of one full-scale run (`make reproduce`, then `make reference`) of commit(s) "
        f"{commits}, finished {dates[-1] if dates else '?'}, on a {cores}-core machine: {len(experiments)} "
        f"experiments, {len(jobs)} simulation, aggregation and SAN jobs, {span:.0f} min from the first job's "
        f"start to the last one's end, {jobs.cpu.sum() / 60:.0f} CPU min.", "",
        "- `EXPERIMENT/summary.csv`, `claims.csv`, `provenance.json`: as the workflow writes them in `results/`;",
        "- `EXPERIMENT/replications.csv.gz`: the per-replication table (gzip without a timestamp); the raw batch "
        "files are not kept;",
        "- `EXPERIMENT/traces.txt`, `monitor.csv`: the traced and monitored replications where the experiment has them;",
        "- `san/MODEL/`: the SAN solutions, simulations and fits; `corr05-fig8/claims.csv`: its claims;",
        "- `claims.csv`: every claim in one table; `jobs-SCALE.csv`: the jobs of a run at that scale (wall and CPU "
        "seconds, start and end), for the report's run profile and per-experiment times;",
        "- `scale.txt`: `full`.", "",
        "`make report-from-reference` builds the report from this folder alone; `make evaluate` checks a smoke run "
        "against it.", ""])


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
    yield [], partial(write_report_inputs, specs, results, paper / "generated", untested, san_dir, results)
    if (results / "jobs-full.csv").exists():
        figure, tex = paper / "figures" / "run-profile.pdf", paper / "generated" / "run-profile.tex"
        yield [figure, tex], partial(_run_profile, results / "jobs-full.csv", scale, figure, tex)


def _run_profile(jobs_file: Path, scale: str, figure: Path, tex: Path) -> None:
    from simcore.report.run_profile import draw_profile, read_jobs

    jobs, cores = read_jobs(jobs_file)
    draw_profile(jobs, scale, figure, tex, cores)
