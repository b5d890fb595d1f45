"""Progress of long commands: where it goes (stderr only), how often (lines every 10 s of a
scripted clock, a final line), how it is chosen (--progress, SIMCORE_PROGRESS), and that it
never changes a result."""

from __future__ import annotations

import io
import re

import pandas as pd
import pandas.testing as pdt
import pytest

from simcore.errors import InputError
from simcore.progress import Reporter, resolve_mode

EXAMPLE = "config/san/example.yaml"


class Clock:
    """A clock the test sets by hand."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_lines_mode_writes_at_most_one_line_per_interval_and_a_final_line():
    """Reporter made at t=0; 10 tasks; a line is due once 10 s have passed since the last one.

    t=0 done 1: 0 s since start, no line.   t=9.9 done 2: 9.9 s, no line.
    t=10 done 3: 10 s, line; left = 10 * 7/3 = 23.3 s -> 00:23.
    t=15 done 4: 5 s since the last line, no line.
    t=20 done 8: 10 s, line; left = 20 * 2/8 = 5 s -> 00:05.
    t=21 done 10: 1 s, no line.   The end at t=21: final line, 10/10, no time left.
    """
    clock, out = Clock(), io.StringIO()
    with Reporter("job", "lines", out, clock) as progress:
        for now, done in ((0, 1), (9.9, 2), (10, 3), (15, 4), (20, 8), (21, 10)):
            clock.now = now
            progress(done, 10, "tasks")
    assert _lines(out) == [
        "job: 3/10 tasks (30%), 00:10 elapsed, ~00:23 left",
        "job: 8/10 tasks (80%), 00:20 elapsed, ~00:05 left",
        "job: 10/10 tasks (100%), 00:21 elapsed",
    ]


def test_a_new_unit_ends_the_phase_and_times_the_next_from_there():
    """Reporter made at t=0. t=12: 30 of 30 model time, 12 s since the start: a line (nothing
    left, so no estimate). t=13: a new unit ends the first phase with its final line (13 s) and
    starts the second there; 0 s since, no line. t=23: 10 s since, a line of the count with no
    total and the note. The end at t=23: the second phase's final line, the same."""
    clock, out = Clock(), io.StringIO()
    with Reporter("solve", "lines", out, clock) as progress:
        clock.now = 12
        progress(30.0, 30.0, "model time")
        clock.now = 13
        progress(100, None, "iterations", "residual 1e-3")
        clock.now = 23
        progress(400, None, "iterations", "residual 1e-9")
    assert _lines(out) == [
        "solve: 30/30 model time (100%), 00:12 elapsed",
        "solve: 30/30 model time (100%), 00:13 elapsed",
        "solve: 400 iterations, 00:10 elapsed, residual 1e-9",
        "solve: 400 iterations, 00:10 elapsed, residual 1e-9",
    ]


def test_no_final_line_when_the_work_fails():
    clock, out = Clock(), io.StringIO()
    with pytest.raises(RuntimeError):
        with Reporter("job", "lines", out, clock) as progress:
            progress(1, 10, "tasks")
            raise RuntimeError("model failed")
    assert out.getvalue() == ""


def test_off_mode_writes_nothing():
    clock, out = Clock(), io.StringIO()
    with Reporter("job", "off", out, clock) as progress:
        for done in range(1, 11):
            clock.now += 100
            progress(done, 10, "tasks")
    assert out.getvalue() == ""


def test_bar_mode_draws_a_tqdm_bar():
    out = io.StringIO()
    with Reporter("job", "bar", out) as progress:
        for done in range(1, 11):
            progress(done, 10, "tasks")
    text = out.getvalue()
    assert "\r" in text and "job: 100%|##########| 10/10 tasks" in text  # tqdm's ASCII bar on a non-terminal


class Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_mode_from_flag_then_environment_then_terminal():
    assert resolve_mode(None, Stream(True), {}) == "bar"
    assert resolve_mode(None, Stream(False), {}) == "lines"
    assert resolve_mode(None, Stream(False), {"SIMCORE_PROGRESS": ""}) == "lines"
    assert resolve_mode(None, Stream(True), {"SIMCORE_PROGRESS": "off"}) == "off"
    assert resolve_mode("lines", Stream(True), {"SIMCORE_PROGRESS": "off"}) == "lines"  # the flag wins
    assert resolve_mode("auto", Stream(True), {"SIMCORE_PROGRESS": "off"}) == "bar"
    with pytest.raises(InputError, match="environment variable SIMCORE_PROGRESS: 'loud'"):
        resolve_mode(None, Stream(True), {"SIMCORE_PROGRESS": "loud"})
    with pytest.raises(InputError, match="--progress: 'loud'"):
        resolve_mode("loud", Stream(True), {"SIMCORE_PROGRESS": "off"})


# -- the commands -------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "san", "san-fit", "report-from-results"])
def test_progress_is_in_the_help(simcore_cli, command):
    proc = simcore_cli(command, "--help")
    assert proc.returncode == 0 and "--progress MODE" in proc.stdout and "SIMCORE_PROGRESS" in proc.stdout


@pytest.mark.parametrize("bad, names", [(("--progress", "loud"), "--progress"), ((), "SIMCORE_PROGRESS")])
def test_a_bad_mode_is_bad_input(simcore_cli, tmp_path, monkeypatch, bad, names):
    monkeypatch.setenv("SIMCORE_PROGRESS", "loud")
    out = tmp_path / "x.csv"
    proc = simcore_cli("san", EXAMPLE, "--times", "0:1:1", "--out", out, *bad)
    assert proc.returncode == 2 and not out.exists()
    assert len(proc.stderr.splitlines()) == 1 and names in proc.stderr and "loud" in proc.stderr


def test_simulation_bytes_are_the_same_in_every_mode(simcore_cli, tmp_path, monkeypatch):
    monkeypatch.delenv("SIMCORE_PROGRESS", raising=False)
    outputs = {}
    for mode in ("off", "lines", "bar"):
        out = tmp_path / f"{mode}.csv"
        proc = simcore_cli("san", EXAMPLE, "--times", "0:2:0.5", "--simulate", "50", "--out", out,
                           "--progress", mode)
        assert proc.returncode == 0 and proc.stdout == "", proc.stderr
        outputs[mode] = (out.read_bytes(), proc.stderr)
    assert outputs["off"][0] == outputs["lines"][0] == outputs["bar"][0]
    assert outputs["off"][1].splitlines() == [f"{EXAMPLE}: 50 simulated trajectories, seed 0"]
    assert outputs["lines"][1].splitlines()[0].startswith("simcore san example: 50/50 trajectories (100%), ")
    assert "| 50/50 trajectories" in outputs["bar"][1]


def test_run_rows_are_the_same_with_and_without_progress(simcore_cli, tmp_path, monkeypatch):
    """Off by the environment variable alone, and by default (auto) with stderr not a terminal,
    as in a workflow job, where it means lines."""
    frames = {}
    for mode in ("off", "auto"):
        if mode == "off":
            monkeypatch.setenv("SIMCORE_PROGRESS", "off")
        else:
            monkeypatch.delenv("SIMCORE_PROGRESS", raising=False)
        out = tmp_path / f"{mode}.parquet"
        proc = simcore_cli("run", "barak96-table1", "--cell", 5, "--reps", "0:2", "--out", out, "--scale", "smoke")
        assert proc.returncode == 0 and proc.stdout == "", proc.stderr
        frames[mode] = (pd.read_parquet(out).drop(columns=["wall_time"]), proc.stderr)
    pdt.assert_frame_equal(frames["off"][0], frames["auto"][0])
    assert frames["off"][1] == ""
    assert re.fullmatch(r"simcore run barak96-table1 cell 5: 2/2 replications \(100%\), \d\d:\d\d elapsed\n",
                        frames["auto"][1])


def test_solve_reports_model_time_and_steady_state_iterations(simcore_cli, tmp_path):
    proc = simcore_cli("san", EXAMPLE, "--times", "0:2:0.5", "--steady", "--method", "power",
                       "--out", tmp_path / "s.csv", "--progress", "lines")
    assert proc.returncode == 0, proc.stderr
    model_time, power, summary = proc.stderr.splitlines()
    assert model_time.startswith("simcore san example: 2/2 model time (100%), ")
    iterations = re.search(r"steady \(power\): (\d+) iterations", summary).group(1)
    assert power.startswith(f"simcore san example: {iterations} power iterations, ")


def test_fit_reports_every_solution(simcore_cli, tmp_path, exponential_fit_model):
    """The fit's final line counts as many solutions as the CSV's evaluations column."""
    model = exponential_fit_model
    out = tmp_path / "fit.csv"
    proc = simcore_cli("san-fit", model, "--parameter", "lam", "--bounds", "0.1:5", "--out", out,
                       "--progress", "lines")
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    evaluations = int(pd.read_csv(out).evaluations[0])
    assert evaluations > 3
    assert proc.stderr.splitlines()[0].startswith(f"simcore san-fit {model.stem}: {evaluations} solutions, ")


def test_the_report_from_results_counts_its_inputs_and_names_each_as_it_starts(root, tmp_path):
    """amir-table2 is a table only (no figure, no monitor), the SAN folder holds no model, and the
    reference has jobs-full.csv and the calibrations of amir, barak96, corr05 and mehta: eight
    steps, the table, the SAN appendix, each calibration's page (in the order of their folders),
    the macros (no file of their own in the list) and the run profile; the callback hears each as
    it starts and the end. `make report-from-reference` was silent for a minute while they were
    made."""
    from simcore.experiments.spec import load_spec
    from simcore.report.reference import rebuild_report

    calls = []
    (tmp_path / "san").mkdir()
    spec = load_spec(root / "config/experiments/amir-table2.yaml")
    made = rebuild_report(root / "results/reference", tmp_path / "paper", [spec], tmp_path / "san", [],
                          lambda *call: calls.append(call))
    unit = "report inputs"
    cals = [f"calibration-{c}-control" for c in ("amir", "barak96", "corr05", "mehta")]
    assert calls == [(0, 8, unit, "now amir-table2.tex"), (1, 8, unit, "now san.tex"),
                     *((2 + i, 8, unit, f"now {c}.pdf, {c}.tex") for i, c in enumerate(cals)),
                     (6, 8, unit, "now the macros"),
                     (7, 8, unit, "now run-profile.pdf, run-profile.tex"), (8, 8, unit)]
    assert [p.relative_to(tmp_path / "paper").as_posix() for p in made] == [
        "tables/amir-table2.tex",
        "generated/san.tex",
        *(f for c in cals for f in (f"figures/{c}.pdf", f"generated/{c}.tex")),
        "figures/run-profile.pdf",
        "generated/run-profile.tex",
    ]


def test_long_workflow_jobs_log_progress_lines(root):
    """simulate, san_solve, san_simulate and san_fit name their log in their message and send
    stderr there with progress left to auto (not a terminal: lines) or set to lines."""
    text = "".join(p.read_text() for p in sorted((root / "workflow/rules").glob("*.smk")))
    for rule in ("simulate", "san_solve", "san_simulate", "san_fit"):
        body = re.search(rf"^rule {rule}:\n(.*?)(?=^rule |\Z)", text, re.S | re.M).group(1)
        message, shell = re.search(r"message:(.*?)shell:(.*)", body, re.S).groups()
        assert "tail -f {log}" in message, rule
        assert re.search(r'2> \{log(:q)?\}"$', shell.rstrip()), rule
        assert set(re.findall(r"--progress\s+(\S+)", shell)) <= {"lines", "auto"}, rule


def test_the_overall_line_measures_the_jobs_this_run_does_against_the_same_jobs_committed(tmp_path):
    """A rerun of one experiment x: Snakemake scheduled x's four simulation jobs c000-c003, its
    aggregation, a simulation of z (an experiment the committed run did not have) and a figure
    (a rule the committed jobs do not time: left out). Committed: x's simulations 300 s each,
    its aggregation 60 s, y's one simulation 6000 s; so about 4 x 300 + 60 + 1440 (z at the mean
    simulation, (4 x 300 + 6000) / 5) = 2700 s = 45.0 job-min, not the 7260 s of the whole
    committed run. Since the start, 240 s ago, c000 and c001 ended (120 s each: 4.0 job-min),
    and so did y's simulation (not scheduled here), while c003's file is an earlier run's: 2 of
    6 jobs done; 4 job-min in 4 min is 1 core busy, so the 41 job-min left take 41 min. Once the
    line compared 1.8 job-min of a one-figure rerun with the whole quick run's 38.6."""
    import os

    import pandas as pd

    from simcore.progress import overall_line

    started, bench = 1_000_000.0, tmp_path / "bench"
    planned = [bench / f"simulate/x/full/c00{k}/r00000-00010.tsv" for k in range(4)] + [
        bench / "aggregate/full/x.tsv", bench / "simulate/z/full/c000/r00000-00010.tsv", bench / "figure/full/x.tsv"]
    for path, end in [(planned[0], started + 120), (planned[1], started + 240), (planned[3], started - 1000),
                      (bench / "simulate/y/full/c000/r00000-00010.tsv", started + 100), (planned[6], started + 200)]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("s\th:m:s\tcpu_time\n120\t0:02:00\t118\n")
        os.utime(path, (end, end))
    pd.DataFrame({"rule": ["simulate"] * 4 + ["aggregate", "simulate"], "name": ["x"] * 5 + ["y"],
                  "wall": [300.0] * 4 + [60.0, 6000.0]}).to_csv(tmp_path / "jobs.csv", index=False)

    def line(expected="jobs.csv", since=started, **kw):
        return overall_line(bench, "full", expected and tmp_path / expected, planned, since, now=started + 240, **kw)

    assert line() == ("overall: 2 of 6 jobs done, 4.0 job-min of about 45.0 (their times in the committed full "
                      "run); about 41:00 left at 1 cores busy")
    assert line(None) == "overall: 2 of 6 jobs done, 4.0 job-min"
    # with the run's 2 cores known: in its first 10 min the time left is taken at both busy (the
    # jobs running now count only when they end), 41 job-min in 20.5 min; after them, as measured
    assert line(cores=2).endswith("; about 20:30 left if all 2 cores stay busy")
    assert line(since=started - 360, cores=2).endswith("; about 1:42:30 left at 0.4 cores busy")
    # a slower machine: more job-minutes done than these jobs took in the committed run
    pd.DataFrame({"rule": ["simulate"], "name": ["x"], "wall": [30.0]}).to_csv(tmp_path / "short.csv", index=False)
    assert line("short.csv").endswith("of about 2.5 (their times in the committed full run); past their committed "
                                      "total (a slower machine than the one that made it): time left unknown")
