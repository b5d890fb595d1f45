"""``simcore san``: solve a SAN model file and write its measures over time as CSV."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from simcore.core.output import write_text
from simcore.errors import InputError
from simcore.resources import check_san_solution
from simcore.san.descriptor import Descriptor
from simcore.san.measures import reward_vector
from simcore.san.model import load_san
from simcore.san.solve import TRANSIENT, solve_transient, steady_state

_MEASURE = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=(.*)\Z", re.S)


MAX_TIMES = 100_000   # report times of one solution: each is a row and a solver stop


def parse_times(text: str, where: str = "--times") -> np.ndarray:
    """Times from ``START:STOP:STEP`` (STOP included) or a comma list ``0,1,2.5``, at most
    :data:`MAX_TIMES` of them; ``where`` names the argument or key in errors."""
    try:
        if ":" in text:
            start, stop, step = (float(p) for p in text.split(":"))
            if not (math.isfinite(start) and math.isfinite(stop) and step > 0 and 0 <= start <= stop):
                raise ValueError
            count = math.floor((stop - start) / step * (1 + 1e-12) + 1e-9) + 1
            times = start + step * np.arange(min(count, MAX_TIMES + 1))
        else:
            times = np.array([float(p) for p in text.split(",")])
    except ValueError:
        raise InputError(f"{where} '{text}': expected START:STOP:STEP with 0 <= START <= STOP and STEP > 0, "
                         "or a comma list of times.") from None
    if not np.isfinite(times).all() or (times < 0).any() or (np.diff(times) < 0).any():
        raise InputError(f"{where} '{text}': times must be finite, non-negative and non-decreasing.")
    if len(times) > MAX_TIMES:
        raise InputError(f"{where} '{text}': more than the {MAX_TIMES:,} times a solution reports.")
    return times


def parse_measures(items: list[str] | None) -> dict[str, str]:
    """``NAME=EXPR`` arguments as a mapping."""
    out = {}
    for item in items or []:
        match = _MEASURE.match(item)
        if not match or not match.group(2).strip():
            raise InputError(f"--measure '{item}': expected NAME=EXPRESSION.")
        out[match.group(1)] = match.group(2).strip()
    return out


def _row(values) -> str:
    return ",".join(v if isinstance(v, str) else f"{v:.12g}" for v in values)


def model_times(san, times: str | None) -> np.ndarray | None:
    """``--times`` if given, else the model file's ``solve.times``, else None."""
    if times is not None:
        return parse_times(str(times))
    text = san.solve.get("times")
    return None if text is None else parse_times(str(text), f"{san.source}: key 'solve.times'")


def simulate_to_csv(model: str | Path, out: str | Path, times: str | None, measures: dict[str, str],
                    reps: int, seed: int = 0, scale: str | None = None, progress=None) -> str:
    """Simulate ``reps`` trajectories of ``model`` (:mod:`simcore.san.simulate`) and write
    ``time, <m>, <m>_low, <m>_high`` rows (95% Student-t intervals) to ``out``; returns a summary.
    ``progress``: see :mod:`simcore.progress`."""
    from simcore.san.simulate import simulate

    if reps < 2:
        raise InputError(f"--simulate {reps}: at least 2 replications are needed for an interval.")
    san = load_san(model, scale)
    grid = model_times(san, times)
    if grid is None:
        raise InputError(f"san --simulate: give --times (or 'solve.times' in {model}).")
    wanted = {**san.measures, **measures}
    sim = simulate(san, grid, wanted, reps, seed, progress=progress)
    names = [c for m in wanted for c in (m, f"{m}_low", f"{m}_high")]
    lines = [_row(["time", *names])] + [_row([t, *(sim[c][i] for c in names)]) for i, t in enumerate(sim["time"])]
    write_text(out, "\n".join(lines) + "\n")
    return f"{model}: {reps} simulated trajectories, seed {seed}"


def solve_to_csv(model: str | Path, out: str | Path, times: str | None, measures: dict[str, str],
                 steady: bool = False, eps: float | None = None, method: str = "gmres",
                 transient_method: str | None = None, scale: str | None = None, progress=None) -> str:
    """Solve ``model`` and write ``time, <measures>, mass, error_bound`` rows to ``out``; returns a summary.

    Options not given fall back to the model file's ``solve`` section. A steady-state row has
    time ``inf`` and, as its error bound, the residual ``||π Q||_1``; with the Krylov transient
    ``error_bound`` is the summed local error estimate. ``progress``: see :mod:`simcore.progress`.
    """
    san = load_san(model, scale)
    grid = model_times(san, times)
    if grid is None and not steady:
        raise InputError("san: give --times, --steady or both.")
    eps = float(san.solve.get("tol", 1e-10)) if eps is None else eps
    if not 0 < eps < 1:
        raise InputError(f"--eps {eps}: must be in (0, 1).")
    kind = transient_method or str(san.solve.get("method", "uniformization"))
    if kind not in TRANSIENT:
        raise InputError(f"{model}: key 'solve.method' must be one of {', '.join(TRANSIENT)}, not {kind!r}.")
    desc = Descriptor(san)
    methods = ([kind] if grid is not None else []) + ([method] if steady else [])
    check_san_solution(desc, methods, int(san.solve.get("krylov_dim", 30)), str(model))
    wanted = {**san.measures, **measures}
    rewards = {name: reward_vector(desc, text, f"{model}: measure '{name}'" if name not in measures
                                   else f"--measure '{name}={text}'") for name, text in wanted.items()}
    lines = [_row(["time", *wanted, "mass", "error_bound"])]
    summary = [f"{model}: {desc.space.size} reachable of {desc.space.product} states"]
    if grid is not None:
        sol = solve_transient(desc, grid, rewards, kind, eps, int(san.solve.get("krylov_dim", 30)), progress)
        for i, t in enumerate(sol.times):
            lines.append(_row([t, *(sol.measures[n][i] for n in wanted), sol.mass[i], sol.bound[i]]))
        summary.append(
            f"transient ({kind}): {sol.products} products, error {'estimate' if kind == 'krylov' else 'bound'} "
            f"{sol.bound[-1]:.3g}"
        )
    if steady:
        ss = steady_state(desc, method=method, tol=max(eps, 1e-14), progress=progress)
        lines.append(_row(["inf", *(float(rewards[n] @ ss.pi) for n in wanted), ss.pi.sum(), ss.residual]))
        state = "" if ss.converged else " (NOT converged)"
        summary.append(f"steady ({method}): {ss.iterations} iterations, residual {ss.residual:.3g}{state}")
    write_text(out, "\n".join(lines) + "\n")
    return "; ".join(summary)
