"""Progress of long commands on stderr: a tqdm bar on a terminal, else one plain line every ~10 s.

Library functions take an optional callback ``progress(done, total, unit, note="")``: ``done``
units of work out of ``total`` (None when unknown), counted from the start of a phase that
``unit`` names ("replications", "model time", ...). A :class:`Reporter` is such a callback;
a new unit starts a new phase. Progress never writes to stdout and touches no random stream,
so it cannot change a result.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, TextIO

from tqdm import tqdm

from simcore.errors import InputError

MODES = ("auto", "bar", "lines", "off")
ENV = "SIMCORE_PROGRESS"
INTERVAL = 10.0  # seconds between two lines in lines mode


def resolve_mode(flag: str | None, stream: TextIO | None = None, environ=None) -> str:
    """'bar', 'lines' or 'off' from ``--progress`` (wins) or $SIMCORE_PROGRESS, else auto."""
    environ = os.environ if environ is None else environ
    stream = sys.stderr if stream is None else stream
    source, value = ("--progress", flag) if flag is not None else (f"environment variable {ENV}",
                                                                   environ.get(ENV) or "auto")
    if value not in MODES:
        raise InputError(f"{source}: '{value}' is not one of {', '.join(MODES)}.")
    if value == "auto":
        return "bar" if _isatty(stream) else "lines"
    return value


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.3g}"


def _interval(seconds: float) -> str:
    return tqdm.format_interval(max(seconds, 0))


class Reporter:
    """The progress callback of one command: ``with Reporter(label, mode) as progress: work(progress)``.

    ``lines`` mode writes ``LABEL: DONE/TOTAL UNIT (P%), MM:SS elapsed, ~MM:SS left`` at most
    once per ``interval`` seconds of ``clock`` and a final line per phase when the work ends
    without an error; a phase's time counts from the end of the previous one (or from the
    reporter's creation). ``bar`` mode shows a tqdm bar per phase; ``off`` shows nothing.
    """

    def __init__(self, label: str, mode: str, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, interval: float = INTERVAL):
        if mode not in ("bar", "lines", "off"):
            raise ValueError(f"mode: {mode!r} is not bar, lines or off (see resolve_mode).")
        self.label, self.mode, self.clock, self.interval = label, mode, clock, interval
        self.stream = sys.stderr if stream is None else stream
        self.unit: str | None = None
        self.bar: tqdm | None = None
        self.done, self.total, self.note = 0, None, ""
        self.started = self.last = clock() if mode == "lines" else 0.0

    def __enter__(self) -> "Reporter":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self._end_phase(self.clock() if self.mode == "lines" else 0.0, final=kind is None)

    def __call__(self, done: float, total: float | None, unit: str, note: str = "") -> None:
        if self.mode == "off":
            return
        now = self.clock() if self.mode == "lines" else 0.0
        if unit != self.unit:
            self._end_phase(now, final=True)
            self._start_phase(unit, total)
        self.done, self.total, self.note = done, total, note
        if self.bar is not None:
            if note:
                self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(done - self.bar.n)
        elif now - self.last >= self.interval:
            self._line(now)

    def _start_phase(self, unit: str, total: float | None) -> None:
        self.unit = unit
        if self.mode == "bar":
            count = "{n:.3g}/{total:.3g}" if isinstance(total, float) else "{n_fmt}/{total_fmt}"
            fmt = (f"{{desc}}: {{percentage:3.0f}}%|{{bar}}| {count} {{unit}} [{{elapsed}}<{{remaining}}{{postfix}}]"
                   if total else "{desc}: {n_fmt} {unit} [{elapsed}{postfix}]")
            self.bar = tqdm(total=total, desc=self.label, unit=unit, file=self.stream, bar_format=fmt,
                            dynamic_ncols=True, leave=True)

    def _end_phase(self, now: float, final: bool) -> None:
        if self.unit is None:
            return
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif final and self.mode == "lines":
            self._line(now, final=True)
        self.unit, self.started, self.last = None, now, now

    def _line(self, now: float, final: bool = False) -> None:
        elapsed = now - self.started
        count = f"{_number(self.done)} {self.unit}"
        if self.total:
            count = f"{_number(self.done)}/{_number(self.total)} {self.unit} ({100 * self.done / self.total:.0f}%)"
        parts = [count, f"{_interval(elapsed)} elapsed"]
        if self.total and 0 < self.done < self.total and not final:
            parts.append(f"~{_interval(elapsed * (self.total - self.done) / self.done)} left")
        if self.note:
            parts.append(self.note)
        print(f"{self.label}: {', '.join(parts)}", file=self.stream, flush=True)
        self.last = now


def reporter(label: str, flag: str | None, stream: TextIO | None = None) -> Reporter:
    """The reporter of a command, its mode from ``--progress`` or $SIMCORE_PROGRESS."""
    stream = sys.stderr if stream is None else stream
    return Reporter(label, resolve_mode(flag, stream), stream)


# -- the whole workflow -------------------------------------------------------------------------

OVERALL_INTERVAL = 60.0   # seconds between two overall lines of a workflow run
RATE_AFTER = 600.0        # seconds of a run before the rate of its ended jobs gives the time left


def overall_line(benchmarks, scale: str, expected, planned, started: float, now: float | None = None,
                 cores: int | None = None) -> str:
    """One line on a workflow run so far: of the simulation, SAN and aggregation jobs it
    ``planned`` (their benchmark files of ``scale``, as Snakemake scheduled them), those that ended
    since ``started`` (s since the epoch) and their job-minutes, against what the same jobs took in
    the committed run (``expected``: a jobs file such as results/reference/jobs-full.csv, or None;
    :func:`expected_minutes`), and the time left at the rate of the jobs that ended. A job counts
    when it ends, so in the first :data:`RATE_AFTER` seconds that rate lags the run's: with
    ``cores`` known, the time left is then taken at every core busy."""
    from pathlib import Path

    import pandas as pd

    from simcore.report.run_profile import load_jobs

    now = time.time() if now is None else now
    counted = _counted(Path(benchmarks), scale, planned)
    jobs = load_jobs(Path(benchmarks), scale, only=counted)
    jobs = jobs[jobs.end >= started]        # a file from an earlier run is not this run's job
    done = float(jobs.wall.sum()) / 60.0
    line = f"overall: {len(jobs)} of {len(counted)} jobs done, {done:.1f} job-min"
    total = None
    if expected is not None and Path(expected).exists():
        total = expected_minutes(pd.read_csv(expected), counted.values())
        line += f" of about {total:.1f} (their times in the committed {scale} run)"
    elapsed = now - started
    left = max(total - done, 0.0) if total is not None else None
    if total is not None and done >= total:
        line += "; past their committed total (a slower machine than the one that made it): time left unknown"
    elif left is not None and cores and elapsed < RATE_AFTER:
        line += f"; about {_interval(60.0 * left / cores)} left if all {cores} cores stay busy"
    elif left is not None and len(jobs) and elapsed > 0:
        rate = done / (elapsed / 60.0)          # job-min per minute: cores busy
        line += f"; about {_interval(60.0 * left / rate) if rate > 0 else '?'} left at {rate:.2g} cores busy"
    return line


def _counted(benchmarks, scale: str, planned) -> dict:
    """{benchmark file: (rule, name)} of the ``planned`` files the overall line counts."""
    from pathlib import Path

    from simcore.report.run_profile import job_of

    counted = {}
    for path in map(Path, planned):
        job = job_of(path.relative_to(benchmarks).parts, scale) if path.is_relative_to(benchmarks) else None
        if job is not None:
            counted[path] = job
    return counted


def expected_minutes(committed, jobs) -> float:
    """Job-minutes the ``jobs`` ((rule, name) pairs) took in the ``committed`` run's jobs table:
    each the mean of that run's jobs of its rule and name, else of its rule (an experiment the
    run did not have), else nothing."""
    by_name = committed.groupby(["rule", "name"]).wall.mean()
    by_rule = committed.groupby("rule").wall.mean()
    return sum(float(by_name.get(job, by_rule.get(job[0], 0.0))) for job in jobs) / 60.0


def committed_jobs(scale: str, here=None):
    """The committed jobs file of ``scale`` (results/reference/jobs-SCALE.csv) in the working
    folder, else in the repository simcore runs from (a copy of the workflow, such as `make
    evaluate`'s, holds no results/); None without one."""
    from pathlib import Path

    for root in (Path(here or "."), Path(__file__).resolve().parents[1]):
        path = root / "results" / "reference" / f"jobs-{scale}.csv"
        if path.exists():
            return path
    return None


def start_overall(benchmarks, scale: str, expected, planned, stream: TextIO | None = None,
                  interval: float = OVERALL_INTERVAL, cores: int | None = None):
    """Print :func:`overall_line` of the ``planned`` jobs at once and then every ``interval``
    seconds from a daemon thread (the workflow's ``onstart``): it dies with the run. Returns the
    thread."""
    import threading

    stream = sys.stderr if stream is None else stream
    started = time.time()

    def loop():
        while True:
            try:
                print(overall_line(benchmarks, scale, expected, planned, started, cores=cores), file=stream, flush=True)
            except Exception:      # a progress line never stops a run
                pass
            time.sleep(interval)

    thread = threading.Thread(target=loop, name="simcore-overall", daemon=True)
    thread.start()
    return thread
