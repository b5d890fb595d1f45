"""Fit one parameter of a SAN model file to the published curve it carries (``simcore san-fit``).

The model file's ``published`` section gives ``measure``, ``time`` and ``value``; the fit
minimises the root-mean-square difference between the solved measure and those values over a
parameter searched on a log scale within bounds (scipy's bounded Brent method). Each evaluation
is one transient solution with the file's ``solve`` options, so fit on a small instance.

A fit takes minutes to an hour (corr05's 8-CPU model: about seven solutions of six minutes), so
fits are kept in a record (``config/san/fits.yaml``) under a key of everything they depend on:
the code a fit runs and the topology catalog (the ``san`` results' files but the SimPy
cross-check and the solve/simulate commands: ``fit_files`` in
:mod:`simcore.experiments.fingerprint`), the model file's text, the parameter, the bounds and the scale. ``simcore
san-fit --record FILE`` stores a fit there; ``--cache FILE`` takes the stored fit whose key matches instead of solving
again, and the CSV says so (``computed``: when the stored fit was made). Any change of code, model or bounds
changes the key, and the fit is made again.
"""

from __future__ import annotations

import datetime
import hashlib
import json
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


def fit_key(model, parameter: str, low: float, high: float, scale: str | None) -> str:
    """The key a fit is recorded under: a hash of what its result depends on (module docstring)."""
    from simcore.experiments.fingerprint import fit_fingerprint

    what = {"code": fit_fingerprint(), "model": Path(model).read_text(), "parameter": parameter,
            "bounds": [low, high], "scale": scale}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def _record_entries(path: Path) -> list[dict]:
    from simcore.experiments.calibrated import check_keys
    from simcore.inputs import read_yaml

    if not path.exists():
        return []
    entries = read_yaml(path) or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "key" in e for e in entries):
        raise InputError(f"{path}: expected a list of recorded fits, each with a 'key'.")
    check_keys(path, entries)
    return entries


def recorded_fit(path: Path, key: str) -> dict | None:
    """The fit recorded under ``key`` in the record file ``path`` (None: none, or no file)."""
    return next((e for e in _record_entries(path) if e["key"] == key), None)


def record_fit(path: Path, key: str, model, result: Fit, scale: str | None) -> None:
    """Store ``result`` in the record file under ``key`` (replacing an entry of the same model,
    parameter and scale)."""
    import yaml

    entry = {"key": key, "model": Path(model).stem, "scale": scale, "parameter": result.parameter,
             "value": float(f"{result.value:.6g}"), "rmse": float(f"{result.rmse:.6g}"),
             "evaluations": result.evaluations, "low": result.low, "high": result.high,
             "computed": datetime.date.today().isoformat()}
    same = (entry["model"], scale, result.parameter)
    kept = [e for e in _record_entries(path) if (e.get("model"), e.get("scale"), e.get("parameter")) != same]
    header = ("# Recorded SAN fits (simcore san-fit --record): the workflow takes an entry whose key matches\n"
              "# (SAN code, model file, parameter, bounds, scale) instead of fitting again; see simcore/san/fit.py.\n")
    write_text(path, header + yaml.safe_dump(kept + [entry], sort_keys=False))


def fit_to_csv(model, parameter: str, bounds: str, out, scale: str | None = None, progress=None,
               cache: str | Path | None = None, record: str | Path | None = None) -> str:
    """Run :func:`fit`, or take it from the record ``cache`` where its key matches, and write one
    CSV row (``computed``: the date of a recorded fit, empty when fitted now); ``record``: store
    a fit made now in that record file. Returns a summary line."""
    try:
        low, high = (float(x) for x in bounds.split(":"))
    except ValueError:
        raise InputError(f"--bounds '{bounds}': expected LOW:HIGH.") from None
    if not 0 < low < high or not math.isfinite(high):
        raise InputError(f"--bounds {low}:{high}: need 0 < LOW < HIGH.")
    key = fit_key(model, parameter, low, high, scale) if cache or record else None
    stored = recorded_fit(Path(cache), key) if cache else None
    if stored is not None:
        result = Fit(parameter, float(stored["value"]), float(stored["rmse"]), int(stored["evaluations"]), low, high)
        computed, how = str(stored["computed"]), f"recorded in {cache} on {stored['computed']}, key {key}"
    else:
        result = fit(model, parameter, low, high, scale, progress)
        computed, how = "", f"{result.evaluations} solutions"
        if record:
            record_fit(Path(record), key, model, result, scale)
            how += f"; recorded in {record}, key {key}"
    write_text(out, "parameter,value,rmse,evaluations,low,high,computed\n"
                    f"{result.parameter},{result.value:.6g},{result.rmse:.6g},{result.evaluations},{low:g},{high:g},"
                    f"{computed}\n")
    return f"{model}: {parameter} = {result.value:.4g} (RMSE {result.rmse:.4g}, {how})"
