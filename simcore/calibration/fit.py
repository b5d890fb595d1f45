"""Fit a calibration's open quantities on its published points, and hold parts out.

The objective of a parameter vector over a set of points is the mean squared relative error
of the simulated control against the published value (``squared-relative-error``), or the mean
over the file's metric groups of each group's mean (``squared-relative-error-per-group``: each
published quantity weighs alike, however many points it has). Each point is the mean of ``replications``
runs of its cell (the points of one cell share them), whose seeds depend only on the
calibration, the cell and the replication (common random numbers: every vector sees the same
task sets, so differences between vectors are not noise of the draws). The search, rerun identically from the file's
``search.seed``:

1. a scrambled Sobol design of ``search.design`` vectors over the unit cube (one coordinate per
   quantity: a range mapped linearly or on a log scale, a list of choices cut into equal parts);
2. from the design's best vector, Nelder-Mead over the continuous quantities (the choices kept),
   restarted from its best with a smaller simplex when it stops, for at most ``search.polish``
   evaluations.

Held out (``holdout``, e.g. ``topology``): for each value of that parameter among the points,
the same search on the other points only (the design's evaluations reused, a polish of
``search.holdout_polish`` evaluations), then the held-out points predicted at its result.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

from simcore.calibration.spec import Calibration, Quantity
from simcore.core.rng import Streams, replication_seed

STEP = 0.1       # the first simplex's edge in the unit cube; each restart halves it
MIN_STEP = 0.005  # no restart below this edge


@dataclass
class Result:
    """A fit: the values, its objective, the points at the values, and the held-out fits."""

    values: dict
    objective: float
    points: list[dict]
    evaluations: int
    replications: int
    wall_seconds: float
    jobs: int
    holdout: list[dict] = field(default_factory=list)
    searched: list[dict] = field(default_factory=list)     # every point mean the search computed

    @property
    def median_abs_error(self) -> float:
        return float(np.median([abs(p["rel_error"]) for p in self.points]))


# -- coordinates ---------------------------------------------------------------------------------
def to_value(q: Quantity, u: float):
    """The quantity's value at coordinate ``u`` in [0, 1], a range's to six significant digits
    (what the record keeps, so that a recorded fit is replayed exactly)."""
    u = min(max(float(u), 0.0), 1.0)
    if q.integer:
        return int(round(_on_scale(q, u)))
    if q.choices:
        return q.choices[min(int(u * len(q.choices)), len(q.choices) - 1)]
    return min(max(float(f"{_on_scale(q, u):.6g}"), q.low), q.high)


def _on_scale(q: Quantity, u: float) -> float:
    if q.scale == "log":
        return math.exp(math.log(q.low) + u * (math.log(q.high) - math.log(q.low)))
    return q.low + u * (q.high - q.low)


def values_at(cal: Calibration, u) -> dict:
    """{parameter: value} at the coordinates ``u`` (one per quantity, in the file's order), and
    the parameters tied to them."""
    return cal.expand({q.name: to_value(q, x) for q, x in zip(cal.quantities, u)})


def _key(values: dict) -> tuple:
    return tuple((k, repr(v)) for k, v in values.items())


# -- evaluation ----------------------------------------------------------------------------------
def _run_one(args) -> list[float]:
    """One replication of one cell: (model, params, policies, [(policy, model metric)], seed
    parts) -> those metrics, every policy on the replication's one workload."""
    from simcore.models import get_model

    model, params, policies, wanted, seed = args
    streams = Streams(replication_seed(*seed))
    out = get_model(model).run_replication(params, list(policies), streams)
    return [float(out[policy][m]) for policy, m in wanted]


def _columns(points) -> list[tuple[str, str]]:
    """The model metrics a cell's points read, per policy: a metric, or a ratio's two parts."""
    return list(dict.fromkeys((p.policy, m) for p in points for m in (p.ratio or (p.metric,))))


class Evaluator:
    """Simulated point means per parameter vector, each cell simulated once (``cache``: the
    mean of each of its points' metrics)."""

    def __init__(self, cal: Calibration, replications: int, root_seed: int, jobs: int = 1, progress=None):
        self.cal, self.reps, self.root, self.jobs, self.progress = cal, replications, root_seed, jobs, progress
        self.cache: dict = {}
        self.vectors: set = set()
        self._pool = None
        # per cell: its points, the (policy, model metric) columns they read, its policies, and its
        # first point (whose parameters and seeds it runs)
        self._points = {c: [p for p in cal.points if p.cell == c] for c in cal.cells}
        self._columns = {c: _columns(points) for c, points in self._points.items()}
        self._policies = {c: list(dict.fromkeys(p.policy for p in points)) for c, points in self._points.items()}
        self._first = {p.cell: p for p in reversed(cal.points)}

    def __enter__(self):
        if self.jobs > 1:
            self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("fork"))
        return self

    def __exit__(self, *exc):
        if self._pool is not None:
            self._pool.shutdown()

    def means(self, vectors: list[dict], indices: list[int]) -> list[np.ndarray]:
        """The simulated means of points ``indices`` at each of ``vectors`` (one array each)."""
        cal, todo, queued = self.cal, [], set()
        columns, first = self._columns, self._first
        for values in vectors:
            for c in dict.fromkeys(cal.points[i].cell for i in indices):
                key = (_key(values), c)
                if key not in self.cache and key not in queued:
                    queued.add(key)
                    params = {**first[c].params, **values}
                    todo += [(key, (cal.model, params, self._policies[c], columns[c], (self.root, cal.id, c, r)))
                             for r in range(self.reps)]
        if todo:
            args = [t[1] for t in todo]
            out = list(self._pool.map(_run_one, args, chunksize=max(1, len(args) // (8 * self.jobs)))
                       if self._pool is not None else map(_run_one, args))
            for k in range(0, len(todo), self.reps):
                key = todo[k][0]
                self.cache[key] = self._cell_means(key[1], out[k:k + self.reps])
        for values in vectors:
            self.vectors.add(_key(values))
        if self.progress:
            self.progress(len(self.vectors), None, "evaluations", f"{len(self.cache)} cell means")
        return [np.array([self.cache[(_key(v), cal.points[i].cell)][(cal.points[i].policy, cal.points[i].metric)]
                          for i in indices]) for v in vectors]

    def _cell_means(self, c, rows: list[list[float]]) -> dict:
        """{(policy, metric): its value over the replications ``rows``}: the mean, or for a ratio
        its parts' sums' quotient."""
        columns = self._columns[c]
        means = dict(zip(columns, np.mean(rows, axis=0)))
        sums = dict(zip(columns, np.sum(rows, axis=0)))
        return {(p.policy, p.metric): float(sums[(p.policy, p.ratio[0])] / sums[(p.policy, p.ratio[1])]) if p.ratio
                else float(means[(p.policy, p.metric)]) for p in self._points[c]}


def objective(cal: Calibration, means: np.ndarray, indices: list[int]) -> float:
    """The calibration's objective (module docstring) of ``means`` against the published values
    of ``indices``."""
    published = np.array([cal.points[i].value for i in indices])
    squared = (means / published - 1.0) ** 2
    if cal.objective == "squared-relative-error":
        return float(np.mean(squared))
    groups = np.array([cal.metric_groups.get(cal.points[i].metric, cal.points[i].metric) for i in indices])
    return float(np.mean([squared[groups == g].mean() for g in dict.fromkeys(groups)]))


# -- search --------------------------------------------------------------------------------------
def design(cal: Calibration) -> np.ndarray:
    """The Sobol design: ``search.design`` coordinate vectors (rows) from ``search.seed``."""
    sampler = qmc.Sobol(len(cal.quantities), scramble=True, seed=np.random.default_rng(cal.search["seed"]))
    n = cal.search["design"]
    m = max(0, math.ceil(math.log2(max(n, 1))))
    return sampler.random_base2(m)[:n]


def _polish(ev: Evaluator, start: np.ndarray, indices: list[int], budget: int) -> tuple[np.ndarray, float]:
    """Nelder-Mead from ``start`` over the continuous coordinates (the choices kept), restarted
    from the best vector with a simplex half as large whenever a run ends, within ``budget``
    evaluations in all; returns the best coordinates and objective seen."""
    cal = ev.cal
    free = [k for k, q in enumerate(cal.quantities) if q.continuous]
    best = [start.copy(), objective(cal, ev.means([values_at(cal, start)], indices)[0], indices)]
    calls = [0]

    def f(x):
        calls[0] += 1
        u = best[0].copy()
        u[free] = np.clip(x, 0.0, 1.0)
        value = objective(cal, ev.means([values_at(cal, u)], indices)[0], indices)
        if value < best[1]:
            best[:] = [u, value]
        return value

    step = STEP
    while free and calls[0] < budget and step >= MIN_STEP:
        x0 = best[0][free]
        simplex = np.vstack([x0] + [x0 + np.where(np.arange(len(free)) == k, step if x0[k] + step <= 1 else -step, 0.0)
                                    for k in range(len(free))])
        minimize(f, x0, method="Nelder-Mead", bounds=[(0.0, 1.0)] * len(free),
                 options={"maxfev": budget - calls[0], "initial_simplex": simplex, "xatol": 1e-3, "fatol": 1e-7})
        step /= 2
    return best[0], best[1]


def _search(ev: Evaluator, cube: np.ndarray, indices: list[int], budget: int) -> tuple[np.ndarray, float]:
    """The design's best vector for ``indices``, polished."""
    cal = ev.cal
    scores = [objective(cal, m, indices) for m in ev.means([values_at(cal, u) for u in cube], indices)]
    return _polish(ev, cube[int(np.argmin(scores))], indices, budget)


def _where(cal: Calibration, point) -> dict:
    """A point's columns in the fit's tables: its experiment (its policy, with several controls),
    its held-out group, its load and metric."""
    policy = {"policy": point.policy} if len(cal.policies) > 1 else {}
    return {"experiment": point.experiment, **policy, cal.holdout: cal.group(point),
            "n_tasks": point.params.get("n_tasks"), "metric": point.metric}


def _point_rows(cal: Calibration, means: np.ndarray, indices: list[int]) -> list[dict]:
    return [{**_where(cal, cal.points[i]), "published": cal.points[i].value,
             "simulated": float(m), "rel_error": float(m / cal.points[i].value - 1.0)}
            for i, m in zip(indices, means)]


def fit(cal: Calibration, replications: int, root_seed: int, jobs: int = 1, progress=None,
        holdout: bool = True) -> Result:
    """The calibration's fit on all points and, with ``holdout``, one per held-out group."""
    cube, everything, start = design(cal), list(range(len(cal.points))), time.perf_counter()
    with Evaluator(cal, replications, root_seed, jobs, progress) as ev:
        ev.means([values_at(cal, u) for u in cube], everything)      # the design on every point, once
        u, best = _search(ev, cube, everything, cal.search["polish"])
        values = values_at(cal, u)
        rows = _point_rows(cal, ev.means([values], everything)[0], everything)
        held = [_held_out(ev, cube, group) for group in cal.groups()] if holdout else []
        searched = [{**{k: v for k, v in key}, "point": i, **_where(cal, p), "simulated": means[(p.policy, p.metric)]}
                    for (key, c), means in ev.cache.items() for i, p in enumerate(cal.points) if p.cell == c]
        return Result(values, best, rows, len(ev.vectors), replications, time.perf_counter() - start, jobs, held,
                      searched)


def _held_out(ev: Evaluator, cube: np.ndarray, group: str) -> dict:
    """Fit without ``group``'s points, then predict them."""
    cal = ev.cal
    train = [i for i, p in enumerate(cal.points) if cal.group(p) != group]
    test = [i for i, p in enumerate(cal.points) if cal.group(p) == group]
    u, train_objective = _search(ev, cube, train, cal.search["holdout_polish"])
    values = values_at(cal, u)
    rows = _point_rows(cal, ev.means([values], test)[0], test)
    return {"held_out": group, "values": values, "train_objective": train_objective,
            "objective": objective(cal, np.array([r["simulated"] for r in rows]), test),
            "median_abs_error": float(np.median([abs(r["rel_error"]) for r in rows])), "points": rows}


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
