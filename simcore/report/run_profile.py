"""How the run used the machine, from the workflow's benchmark files (``simcore run-profile``).

Snakemake writes one benchmark file per job of most rules (``logs/benchmarks/``): its wall
time ``s`` and its CPU time. A file is written when its job ends, so its modification time is
the job's end and ``end - s`` its start. Every rule declares ``threads: 1``, so a running job
holds one core: from the files, the cores held over the run, the job time (wall times added up)
per paper, and the run's span, the time during which at least one job ran (a run stopped and
resumed is measured without its pauses); as a figure and LaTeX macros for the report's
appendix. The CPU time is Snakemake's sampled one (every half second for a job's first 15 s,
then every 30 s), which misses what a job spends after its last sample, up to 30 s: a lower
bound (on the 2-core build machine's full run, 69% of the job time, while ``top`` showed each
job at 98% of its core). The profile counts the simulation, aggregation and SAN jobs, the ones
that finish before it is drawn; jobs of another scale are left out (the scale is in a
simulation's and an aggregation's path); SAN jobs count at any scale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simcore.core.output import atomic_path, write_text
from simcore.report.data import tex_escape


def paper_of(rule: str, name: str) -> str:
    """The paper a job counts for: its experiment's (or SAN model's) prefix, e.g. corr05 for
    corr05-fig8-2sched; a SAN model of no paper (no prefix, e.g. the solver's example) counts
    as "san"."""
    if rule == "san" and "-" not in name:
        return "san"
    return name.split("-")[0]


def job_of(parts: tuple[str, ...], scale: str) -> tuple[str, str] | None:
    """(rule, experiment or SAN model) of a benchmark file from its path's parts below the
    benchmarks folder; None for a job the profile leaves out (another scale, figures, tables,
    the report: drawn after the profile)."""
    if parts[0] == "simulate":                      # simulate/EXP/SCALE/cCELL/rA-B.tsv
        return ("simulate", parts[1]) if len(parts) >= 3 and parts[2] == scale else None
    if parts[0] == "aggregate":                     # aggregate/SCALE/EXP.tsv
        return ("aggregate", Path(parts[2]).stem) if len(parts) == 3 and parts[1] == scale else None
    if parts[0] == "san":                           # san/MODEL-STEP.tsv
        return "san", Path(parts[-1]).stem.rsplit("-", 1)[0]
    return None


def load_jobs(benchmarks: Path, scale: str, only=None) -> pd.DataFrame:
    """One row per job: rule, experiment (or SAN model), paper, start and end (s since the epoch),
    wall and CPU seconds; of the benchmark files ``only`` (paths in ``benchmarks``) if given."""
    rows = []
    for path in sorted(benchmarks.rglob("*.tsv")) if only is None else sorted(p for p in only if p.is_file()):
        job = job_of(path.relative_to(benchmarks).parts, scale)
        if job is None:
            continue
        rule, name = job
        table = pd.read_csv(path, sep="\t")
        if table.empty:
            continue
        wall, cpu = float(table["s"].iloc[-1]), float(table.get("cpu_time", pd.Series([np.nan])).iloc[-1])
        end = path.stat().st_mtime
        rows.append({"rule": rule, "name": name, "paper": paper_of(rule, name), "start": end - wall, "end": end,
                     "wall": wall, "cpu": cpu})
    return pd.DataFrame(rows, columns=["rule", "name", "paper", "start", "end", "wall", "cpu"])


def busy_cores(jobs: pd.DataFrame, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(minutes since the first start, cores held): each job holds one core while it runs
    (``threads: 1``), averaged over bins of ``step`` seconds."""
    t0, t1 = jobs.start.min(), jobs.end.max()
    edges = np.arange(t0, t1 + step, step)
    busy = np.zeros(len(edges) - 1)
    for job in jobs.itertuples():
        busy += np.clip(np.minimum(edges[1:], job.end) - np.maximum(edges[:-1], job.start), 0, None) / step
    return (edges[:-1] - t0) / 60.0, busy


def busy_seconds(jobs: pd.DataFrame, t0: float, t1: float) -> float:
    """Seconds of [t0, t1] during which at least one of ``jobs`` runs: the wall time of a run
    that was stopped and resumed, without its pauses (and without Snakemake's second or two
    between one job's end and the next one's start when nothing else runs)."""
    spans = jobs[(jobs.end > t0) & (jobs.start < t1)].sort_values("start")
    total, reach = 0.0, t0
    for start, end in zip(spans.start.clip(lower=t0), spans.end.clip(upper=t1)):
        total += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    return total


def save_jobs(benchmarks: Path, scale: str, cores: int, out: Path, names: list[str] | None = None) -> pd.DataFrame:
    """The jobs of ``load_jobs`` (only those of the experiments or SAN models ``names``, if given)
    as a CSV with the machine's cores (benchmark files keep their times only in their
    modification times, which a copy or a commit loses)."""
    from simcore.core.output import write_csv

    jobs = load_jobs(benchmarks, scale)
    if names is not None:
        jobs = jobs[jobs.name.isin(names)]
    jobs = jobs.assign(cores=cores)
    write_csv(out, jobs)
    return jobs


def read_jobs(path: Path) -> tuple[pd.DataFrame, int]:
    """The jobs and cores saved by :func:`save_jobs`."""
    jobs = pd.read_csv(path)
    cores = int(jobs.cores.iloc[0]) if len(jobs) else 1
    san = jobs.rule == "san"   # files saved before paper_of labelled a SAN model of no paper by its name
    jobs.loc[san, "paper"] = [paper_of("san", n) for n in jobs.name[san]]
    return jobs.drop(columns=["cores"]), cores


def draw_profile(jobs: pd.DataFrame, scale: str, figure: Path, tex: Path, cores: int) -> str:
    """The figure and the macros of ``jobs`` on a machine of ``cores``; returns a summary line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 2.6))
    if jobs.empty:
        ax.text(0.5, 0.5, "no benchmark file of this scale", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        lines = _macros(None, cores, scale)
    else:
        span = jobs.end.max() - jobs.start.min()
        minutes, busy = busy_cores(jobs, max(span / 300.0, 1.0))
        ax.fill_between(minutes, busy, step="post", alpha=0.6, label="cores held by jobs (one each)")
        ax.axhline(cores, color="k", lw=0.8, ls="--", label=f"cores of this machine ({cores})")
        ax.set_xlabel("minutes since the first job started")
        ax.set_ylabel("cores")
        ax.set_ylim(0, max(cores, busy.max()) * 1.15)
        ax.legend(loc="lower left", fontsize=7)
        lines = _macros(jobs, cores, scale)
    fig.tight_layout()
    figure.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(figure) as tmp:
        fig.savefig(tmp, format="pdf")
    plt.close(fig)
    write_text(tex, "\n".join(lines) + "\n")
    return f"run profile: {len(jobs)} jobs of scale {scale}"


def _macros(jobs: pd.DataFrame | None, cores: int, scale: str) -> list[str]:
    def macro(name: str, value: str) -> str:
        return f"\\newcommand{{\\RunProfile{name}}}{{{value}}}"

    lines = ["% Generated by `simcore run-profile`; do not edit.", macro("Scale", tex_escape(scale)),
             macro("Cores", str(cores))]
    if jobs is None:
        return lines + [macro("Jobs", "0"), macro("Span", "--"), macro("Clock", "--"), macro("JobTime", "--"),
                        macro("Cpu", "--"),
                        macro("Use", "--"), macro("Papers", "no job of this scale left a benchmark file")]
    clock = (jobs.end.max() - jobs.start.min()) / 60.0
    span = busy_seconds(jobs, jobs.start.min(), jobs.end.max()) / 60.0
    held = jobs.wall.sum() / 60.0
    per_paper = jobs.groupby("paper").wall.sum().sort_values(ascending=False) / 60.0
    papers = ", ".join(f"{tex_escape(p)} {m:.1f}" for p, m in per_paper.items())
    return lines + [macro("Jobs", str(len(jobs))), macro("Span", f"{span:.1f}"), macro("Clock", f"{clock:.1f}"),
                    macro("JobTime", f"{held:.1f}"),
                    macro("Cpu", f"{jobs.cpu.sum() / 60.0:.1f}"),
                    macro("Use", f"{100.0 * held / (span * cores):.0f}" if span > 0 else "--"),
                    macro("Papers", papers)]


def experiment_times(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per experiment (or SAN model), by paper: jobs, their wall times added up and their sampled
    CPU time (minutes, a lower bound), and its span: the run's busy time (:func:`busy_seconds`)
    from its first job's start to its last one's end (minutes); the longest first within a paper."""
    groups = jobs.groupby(["paper", "name"])
    table = pd.DataFrame({"jobs": groups.size(), "job_min": groups.wall.sum() / 60.0,
                          "cpu_min": groups.cpu.sum() / 60.0,
                          "span_min": groups.apply(lambda g: _span(jobs, g), include_groups=False)}).reset_index()
    return table.sort_values(["paper", "job_min", "name"], ascending=[True, False, True], ignore_index=True)


def _span(run: pd.DataFrame, part: pd.DataFrame) -> float:
    """Minutes the run was busy between the first start and the last end of ``part``'s jobs."""
    return busy_seconds(run, part.start.min(), part.end.max()) / 60.0 if len(part) else 0.0


def markdown_times(jobs: pd.DataFrame, cores: int) -> str:
    """:func:`experiment_times` as a Markdown table, with a line per paper and one for the run."""
    rows = ["| experiment | jobs | job min | CPU min (sampled, at least) | span min |", "|---|---:|---:|---:|---:|"]

    def line(name: str, part: pd.DataFrame, span: float) -> str:
        return f"| {name} | {int(part.jobs.sum())} | {part.job_min.sum():.1f} | {part.cpu_min.sum():.1f} | {span:.1f} |"

    table = experiment_times(jobs)
    for paper, part in table.groupby("paper", sort=True):
        rows += [line(f"`{r.name}`", part[part.name == r.name], r.span_min) for r in part.itertuples()]
        mine = jobs[jobs.paper == paper]
        rows.append(line(f"**{paper}**", part, _span(jobs, mine)))
    rows.append(line(f"**all, {cores} cores**", table, _span(jobs, jobs)))
    return "\n".join(rows) + "\n"
