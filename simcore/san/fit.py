"""Fit one parameter of a SAN model file to the published curve it carries (``simcore san-fit``).

The model file's ``published`` section gives ``measure``, ``time`` and ``value``; the fit
minimises the root-mean-square difference between the solved measure and those values over a
parameter searched on a log scale within bounds (scipy's bounded Brent method). Each evaluation
is one transient solution with the file's ``solve`` options, so fit on a small instance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import minimize_scalar

from simcore.core.output import write_text
from simcore.errors import InputError
from simcore.san.descriptor import Descriptor
from simcore.san.measures import reward_vector
from simcore.san.model import load_san
from simcore.san.solve import solve_transient


@dataclass
class Fit:
    parameter: str
    value: float
    rmse: float
    evaluations: int
    low: float
    high: float


def published_curve(san, model) -> tuple[str, np.ndarray, np.ndarray]:
    """(measure, times, values) of the model file's ``published`` section."""
    pub = san.published
    for key in ("measure", "time", "value"):
        if key not in pub:
            raise InputError(f"{model}: key 'published.{key}' is missing; san-fit needs the published curve.")
    times, values = np.asarray(pub["time"], float), np.asarray(pub["value"], float)
    if times.shape != values.shape or times.ndim != 1 or (np.diff(times) < 0).any():
        raise InputError(f"{model}: keys 'published.time' and 'published.value' must be lists of the same "
                         "length, times non-decreasing.")
    if pub["measure"] not in san.measures:
        raise InputError(f"{model}: key 'published.measure' names no measure of the model ({pub['measure']!r}).")
    return str(pub["measure"]), times, values


def solve_measure(san, measure: str, times: np.ndarray, progress=None) -> np.ndarray:
    """The measure at ``times`` with the model file's solve options."""
    desc = Descriptor(san)
    reward = {measure: reward_vector(desc, san.measures[measure])}
    sol = solve_transient(desc, times, reward, str(san.solve.get("method", "uniformization")),
                          float(san.solve.get("tol", 1e-10)), int(san.solve.get("krylov_dim", 30)), progress)
    return sol.measures[measure]


def fit(model: str | Path, parameter: str, low: float, high: float, scale: str | None = None,
        progress=None) -> Fit:
    """The value of ``parameter`` in [low, high] whose solution is closest to the published curve.

    ``progress`` (see :mod:`simcore.progress`) hears of the solutions done, and in its note
    of the model time the current one has reached."""
    if not 0 < low < high or not math.isfinite(high):
        raise InputError(f"--bounds {low}:{high}: need 0 < LOW < HIGH.")
    san = load_san(model, scale)
    measure, times, values = published_curve(san, model)
    calls = []

    def solving(done, total, unit, note=""):
        progress(len(calls), None, "solutions", f"solution {len(calls) + 1}: {done:.3g}/{total:.3g} {unit}")

    def rmse(log_value: float) -> float:
        curve = solve_measure(load_san(model, scale, {parameter: math.exp(log_value)}), measure, times,
                              solving if progress else None)
        calls.append(float(np.sqrt(np.mean((curve - values) ** 2))))
        if progress:
            progress(len(calls), None, "solutions", f"last RMSE {calls[-1]:.4g}")
        return calls[-1]

    res = minimize_scalar(rmse, bounds=(math.log(low), math.log(high)), method="bounded",
                          options={"xatol": 5e-3})    # 0.5 % of the value: three digits
    return Fit(parameter, math.exp(res.x), float(res.fun), len(calls), low, high)


def fit_to_csv(model, parameter: str, bounds: str, out, scale: str | None = None, progress=None) -> str:
    """Run :func:`fit` and write one CSV row; returns a summary line."""
    try:
        low, high = (float(x) for x in bounds.split(":"))
    except ValueError:
        raise InputError(f"--bounds '{bounds}': expected LOW:HIGH.") from None
    result = fit(model, parameter, low, high, scale, progress)
    write_text(out, "parameter,value,rmse,evaluations,low,high\n"
                    f"{result.parameter},{result.value:.6g},{result.rmse:.6g},{result.evaluations},{low:g},{high:g}\n")
    return f"{model}: {parameter} = {result.value:.4g} (RMSE {result.rmse:.4g}, {result.evaluations} solutions)"
