"""The simcore command's read-only verbs."""

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest


def test_list_shows_every_experiment(simcore_cli, root):
    proc = simcore_cli("list", "--scale", "smoke")
    assert proc.returncode == 0, proc.stderr
    ids = {line.split()[0] for line in proc.stdout.splitlines()}
    assert ids == {p.stem for p in (root / "config/experiments").glob("*.yaml")}


def test_list_columns_start_at_the_same_offsets(simcore_cli):
    """Columns are sized from their longest value, so long ids do not push a row's columns."""
    import re

    proc = simcore_cli("list", "--scale", "full")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line.split()[0]) for line in lines) > 18  # a long id, e.g. mehta-table1-8-2-3-cpu
    row = re.compile(r"\S+ +(\S+) +(\S+) +\d+ cells x +\d+ reps  (\S)")
    starts = {tuple(m.start(g) for g in (1, 2, 3)) for m in map(row.match, lines)}
    ends_of_numbers = {(line.index(" cells x"), line.index(" reps  ")) for line in lines}
    assert len(starts) == 1 and len(ends_of_numbers) == 1, (starts, ends_of_numbers)


def test_validate_all_specs(simcore_cli, root):
    """One 'ok' line per spec in config/experiments, naming it."""
    proc = simcore_cli("validate")
    assert proc.returncode == 0, proc.stderr
    specs = sorted(root.glob("config/experiments/*.yaml"))
    assert len(proc.stdout.splitlines()) == len(specs)
    assert {line.split(": ok")[0].rsplit("/", 1)[-1] for line in proc.stdout.splitlines()} == {p.name for p in specs}


def test_targets_name_table_and_figure(simcore_cli):
    assert simcore_cli("targets", "amir-table2").stdout.split() == ["paper/tables/amir-table2.tex"]
    assert simcore_cli("targets", "barak96-table1").stdout.split() == [
        "paper/tables/barak96-table1.tex", "paper/figures/barak96-table1.pdf"]


def test_run_writes_one_row_per_replication_and_policy(simcore_cli, tmp_path):
    import pandas as pd

    out = tmp_path / "raw.parquet"
    proc = simcore_cli("run", "barak96-table1", "--cell", 5, "--reps", "0:2", "--out", out, "--scale", "smoke")
    assert proc.returncode == 0, proc.stderr
    rows = pd.read_parquet(out)
    assert len(rows) == 2 * 4
    assert set(rows.policy) == {"optimal", "mosix", "pvm", "pvm-on-mosix"}
    assert (rows.n_procs == 17).all() and (rows.cell == 5).all()
    assert {"spawn_key", "makespan", "events", "wall_time", "params"} <= set(rows.columns)


def test_trace_prints_one_mehta_style_line_per_task(simcore_cli):
    import re

    proc = simcore_cli("trace", "corr05-fig9", "--policy", "multilevel", "--tasks", "3", "--set", "n_tasks=20")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    step = r"(P\d+\.(wait|run)\(\d+\)|IO\(\d+\))"
    assert all(re.fullmatch(rf"T\d+ nice \d+: {step}( - {step})*", line) for line in lines)
    again = simcore_cli("trace", "corr05-fig9", "--policy", "multilevel", "--tasks", "3", "--set", "n_tasks=20")
    assert again.stdout == proc.stdout  # same seeds as `simcore run`
    assert simcore_cli("trace", "amir-table2", "--policy", "pvm").returncode == 2


def test_trace_of_a_spec_with_sample_traces(simcore_cli, tmp_path):
    """`simcore trace ID --out F` takes policies, task count and selection from the spec's output.traces;
    every listed task was migrated, and segments beyond the zone are starred."""
    import re

    from simcore.experiments import load_spec
    from simcore.report.tables import table_tex

    out = tmp_path / "mehta-traces" / "traces.txt"
    proc = simcore_cli("trace", "mehta-traces", "--set", "n_tasks=120", "--out", out)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("# ")]
    assert [lines[i].split(":")[0] for i in heads] == ["# multilevel", "# conservative-soft"]
    tasks = [line for line in lines if not line.startswith("# ")]
    assert 0 < len(tasks) <= 10
    cpus = [re.findall(r"P(\d+)\.", line) for line in tasks]
    assert all(len(set(c[1:])) >= 2 or c[0] != c[-1] for c in cpus)   # moved at least once
    tex = table_tex(load_spec("config/experiments/mehta-traces.yaml"), tmp_path)
    assert "\\begin{verbatim}" in tex and tasks[0][:40] in tex


def test_params_lists_every_parameter_with_its_meaning(simcore_cli):
    from simcore.models.numa import PARAMETERS

    proc = simcore_cli("params", "numa")
    assert proc.returncode == 0, proc.stderr
    for name in ("memory_stall_fraction", "node_busy_factor", "domain_init", "rules_scope"):
        assert f"{name} = {PARAMETERS[name].default!r}" in proc.stdout
    assert "policies: " in proc.stdout and "conservative-soft" in proc.stdout
    assert "share_far" in simcore_cli("params", "numa", "--metrics").stdout
    bad = simcore_cli("params", "nope")
    assert bad.returncode == 2 and "unknown model 'nope'" in bad.stderr


def test_an_internal_error_is_one_line_unless_debug_asks_for_the_traceback(monkeypatch, capsys):
    """Exit 1 with one line naming the error; `--debug` (or SIMCORE_DEBUG) lets it propagate."""
    import pytest

    from simcore import cli

    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "cmd_list", broken)
    monkeypatch.delenv("SIMCORE_DEBUG", raising=False)
    assert cli.main(["list"]) == 1
    assert capsys.readouterr().err.strip().splitlines() == ["simcore: internal error: RuntimeError: boom"]
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["--debug", "list"])
    monkeypatch.setenv("SIMCORE_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["list"])


@pytest.mark.parametrize("args, fragment", [
    (["trace", "zhou91-fig3", "--monitor", "5"], "--monitor '5': give PERIOD:TIME"),
    (["trace", "amir-table2", "--monitor", "0:10"], "--monitor '0:10': the period must be positive"),
    (["trace", "zhou91-fig3", "--monitor", "5:10", "--policy", "nope"], "--policy 'nope': not one of"),
])
def test_a_monitor_that_cannot_run_is_one_sentence(simcore_cli, args, fragment):
    proc = simcore_cli(*args)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and fragment in proc.stderr


def test_trace_monitor_writes_the_queue_series(simcore_cli, tmp_path):
    """zhou91-fig3, cell 0 (not its output.monitor's cell), one policy, every 100 units for 200: three
    sampling times x the 12 pools of 5 x two probes = 72 rows, with the CSV header."""
    out = tmp_path / "series.csv"
    proc = simcore_cli("trace", "zhou91-fig3", "--monitor", "100:200", "--cell", "0", "--out", out)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "policy,time,queue,value" and len(lines) == 1 + 3 * 12 * 2


def test_trace_monitor_without_a_value_takes_the_spec_monitor(simcore_cli, tmp_path):
    """solsona-fig6's output.monitor: every 0.25 for 60 (241 samples), cell 7, three policies, three
    queues each: 3 x 241 x 3 rows; the run (10 000 tasks at mit = 1) lasts far beyond 60."""
    out = tmp_path / "node.csv"
    proc = simcore_cli("trace", "solsona-fig6", "--monitor", "--out", out)
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(out)
    assert list(frame.policy.unique()) == ["sdca", "dynamic", "rr"]
    assert sorted(frame.queue.unique()) == ["blocked", "mbq", "rq"]
    assert len(frame) == 3 * 241 * 3 and frame.time.max() == 60.0
    proc = simcore_cli("trace", "amir-table2", "--monitor")
    assert proc.returncode == 2 and "has no output.monitor to take them from" in proc.stderr


def test_monitor_figure_needs_its_samples(simcore_cli, tmp_path):
    out = tmp_path / "m.pdf"
    proc = simcore_cli("figure", "solsona-fig6", "--monitor", "--results", tmp_path, "--out", out)
    assert proc.returncode == 2 and "no queue samples" in proc.stderr and not out.exists()
    proc = simcore_cli("figure", "amir-table2", "--monitor", "--results", tmp_path, "--out", out)
    assert proc.returncode == 2 and "output.monitor': not given" in proc.stderr


def test_a_batch_job_does_not_load_scipy_stats(root, tmp_path):
    """`simcore run` checks its spec and simulates without scipy.stats (a second of start-up per
    batch job; the intervals import it only when they compute one)."""
    import subprocess
    import sys

    code = ("import sys; from simcore.cli import main; "
            f"main(['run', 'amir-table2', '--cell', '0', '--reps', '0:1', '--out', {str(tmp_path / 'r.parquet')!r}, "
            "'--scale', 'smoke', '--progress', 'off']); print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False" and (tmp_path / "r.parquet").exists()


def test_an_output_that_fails_while_it_is_written_is_bad_input_naming_it(tmp_path, capsys, root, monkeypatch):
    """--paper is a writable folder, so the check before the work passes; the folder `tables` the
    command makes in it is a file: exit 2, one line naming --paper and the file at fault (once
    an internal error, exit 1). An OS error about no output stays an internal error."""
    from simcore import cli

    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "tables").write_text("not a folder\n")
    code = cli.main(["report-from-results", "--results", str(root / "results/reference"), "--paper", str(paper)])
    assert code == 2
    assert capsys.readouterr().err == \
        f"simcore: error: --paper: cannot write {paper} ({paper / 'tables'}: File exists).\n"

    def unreadable(args):
        raise PermissionError(13, "Permission denied", str(tmp_path / "an input"))

    monkeypatch.setattr(cli, "cmd_san_report", unreadable)
    assert cli.main(["san-report", "--out", str(tmp_path / "san.tex")]) == 1
    assert capsys.readouterr().err.startswith("simcore: internal error: PermissionError")


def test_an_output_that_is_a_pipe_or_a_device_is_refused_before_anything_runs(tmp_path, capsys):
    """Outputs are renamed over their path, which would replace a device or a pipe (`--out
    /dev/null` as root made /dev/null a regular file): exit 2, one sentence, the pipe intact."""
    import os
    import stat

    from simcore.cli import main

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code = main(["run", "amir-table2", "--cell", "0", "--reps", "0:1", "--scale", "smoke", "--out", str(pipe),
                 "--progress", "off"])
    err = capsys.readouterr().err
    assert code == 2 and f"--out: {pipe} is not a regular file or folder" in err and err.count("\n") == 1
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    # every output option: --markdown of run-profile too
    assert main(["run-profile", "--benchmarks", str(tmp_path / "none"), "--scale", "smoke", "--figure",
                 str(tmp_path / "p.pdf"), "--tex", str(tmp_path / "p.tex"), "--markdown", str(pipe)]) == 2
    assert "--markdown:" in capsys.readouterr().err


HEAD = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=Path(__file__).resolve().parents[1],
                      capture_output=True, text=True, check=True).stdout.strip()
KEPT_JOBS = "rule,name,paper,start,end,wall,cpu,cores\naggregate,zhou91-fig1,zhou91,0,60,60,50,2\n"


def _results(folder, experiments: dict, scale: str = "full"):
    """A folder of workflow results: scale.txt and, per experiment, a summary and the claims given."""
    folder.mkdir(parents=True)
    (folder / "scale.txt").write_text(f'"{scale}"')
    for exp, claims in experiments.items():
        (folder / exp).mkdir()
        (folder / exp / "summary.csv").write_text(f"experiment\n{exp}\n")
        pd.DataFrame({"experiment": exp, "claim": claims}).to_csv(folder / exp / "claims.csv", index=False)
        (folder / exp / "provenance.json").write_text(json.dumps({"commit": HEAD}))
    return folder


def test_save_reference_of_some_experiments_replaces_only_those(simcore_cli, tmp_path):
    """A rerun of amir-table2 replaces its folder in the reference (a file the rerun lacks goes
    with it), rebuilds the claims table from every experiment's claims and then the SAN figure's
    (corr05-fig8), writes the rerun's jobs of amir-table2 apart (not another experiment's jobs in
    the same benchmark folder), leaves the other experiments and jobs-full.csv alone and makes
    the README again from the folder."""
    ref = _results(tmp_path / "ref", {"amir-table2": ["old"], "zhou91-fig1": ["z1", "z2"], "corr05-fig8": ["san"]})
    (ref / "amir-table2/traces.txt").write_text("old trace")
    (ref / "README.md").write_text("the end-to-end run")
    (ref / "jobs-full.csv").write_text(KEPT_JOBS)
    run = _results(tmp_path / "run", {"amir-table2": ["new1", "new2", "new3"]})
    (run / "amir-table2/replications.csv").write_text("policy,value\npvm,1.0\n")
    bench = tmp_path / "bench"   # the run's benchmark files: amir-table2's jobs and another experiment's
    for rel in ("simulate/amir-table2/full/c000/r00000-00750.tsv", "aggregate/full/amir-table2.tsv",
                "simulate/zhou91-fig1/full/c000/r00000-00010.tsv", "aggregate/full/zhou91-fig1.tsv"):
        (bench / rel).parent.mkdir(parents=True, exist_ok=True)
        (bench / rel).write_text("s\th:m:s\tcpu_time\n2.5\t0:00:02\t2.0\n")
    proc = simcore_cli("save-reference", "--results", run, "--benchmarks", bench, "--out", ref,
                       "--cores", "2", "--experiments", "amir-table2")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (ref / "amir-table2").iterdir()) == ["claims.csv", "provenance.json",
                                                                       "replications.csv.gz", "summary.csv"]
    assert pd.read_csv(ref / "claims.csv").claim.tolist() == ["new1", "new2", "new3", "z1", "z2", "san"]
    assert (ref / "zhou91-fig1/summary.csv").read_text() == "experiment\nzhou91-fig1\n"
    assert (ref / "jobs-full.csv").read_text() == KEPT_JOBS
    assert (ref / "README.md").read_text().startswith("# The full-scale reference")
    jobs = pd.read_csv(ref / "jobs-full-rerun.csv")
    assert sorted(zip(jobs.rule, jobs.name)) == [("aggregate", "amir-table2"), ("simulate", "amir-table2")]
    assert jobs.wall.tolist() == [2.5, 2.5] and jobs.cores.tolist() == [2, 2]


@pytest.mark.parametrize("args, fragment", [
    (["--experiments", "nope"], "--experiments: 'nope' is not an experiment id"),
    (["--experiments", "zhou91-fig1"], "zhou91-fig1/summary.csv: missing"),
    (["--jobs-out", "x.csv"], "--jobs-out: only with --experiments"),
])
def test_save_reference_of_some_experiments_refuses_bad_input_before_writing(simcore_cli, tmp_path, args, fragment):
    ref = _results(tmp_path / "ref", {"amir-table2": ["old"]})
    run = _results(tmp_path / "run", {"amir-table2": ["new"]})
    before = sorted(p.relative_to(ref) for p in ref.rglob("*"))
    proc = simcore_cli("save-reference", "--results", run, "--benchmarks", tmp_path, "--out", ref, *args)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and fragment in proc.stderr
    assert sorted(p.relative_to(ref) for p in ref.rglob("*")) == before
    assert pd.read_csv(ref / "amir-table2/claims.csv").claim.tolist() == ["old"]


def test_save_reference_of_some_experiments_needs_a_full_reference(simcore_cli, tmp_path):
    ref = _results(tmp_path / "ref", {"amir-table2": ["old"]}, scale="smoke")
    run = _results(tmp_path / "run", {"amir-table2": ["new"]})
    proc = simcore_cli("save-reference", "--results", run, "--benchmarks", tmp_path, "--out", ref,
                       "--experiments", "amir-table2")
    assert proc.returncode == 2 and "ref/scale.txt: the reference is a full-scale run, not 'smoke'" in proc.stderr
