"""``simcore calibrate``: fit a calibration (or take its recorded fit) and write its files.

``OUT/fit.yaml``: the values, objective, median absolute relative error, held-out fits and how
the fit was obtained; ``OUT/points.csv``: every published point beside the control simulated at
the values; ``OUT/holdout.csv``: each held-out group's points predicted by the fit without them;
``OUT/search.csv`` (a fit made now): every setting the search tried, point by point.
A recorded fit's points are simulated again at its values (one evaluation per fit, cheap).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from simcore.calibration import fit as F
from simcore.calibration.record import calibration_key, entry_of, record, recorded
from simcore.calibration.spec import Calibration
from simcore.core.output import write_text
from simcore.errors import InputError


def _replay(cal: Calibration, entry: dict, reps: int, seed: int, jobs: int, progress) -> F.Result:
    """The Result of a recorded entry: its points (and held-out points) simulated at its values."""
    everything = list(range(len(cal.points)))
    with F.Evaluator(cal, reps, seed, jobs, progress) as ev:
        rows = F._point_rows(cal, ev.means([entry["values"]], everything)[0], everything)
        held = []
        for h in entry.get("holdout") or []:
            test = [i for i, p in enumerate(cal.points) if cal.group(p) == h["held_out"]]
            pts = F._point_rows(cal, ev.means([h["values"]], test)[0], test)
            held.append({**h, "points": pts, "median_abs_error": float(np.median([abs(r["rel_error"]) for r in pts]))})
    return F.Result(dict(entry["values"]), float(entry["objective"]), rows, int(entry["evaluations"]), reps,
                    float(entry["wall_seconds"]), int(entry["jobs"]), held)


def calibrate(cal: Calibration, scale: str, out: Path, seed: int, jobs: int = 1, progress=None,
              cache: Path | None = None, record_to: Path | None = None, holdout: bool = True,
              recorded_only: bool = False) -> str:
    """Fit ``cal`` at ``scale`` (or take the fit recorded in ``cache``), write ``out``'s files;
    ``record_to``: store a fit made now; ``recorded_only``: refuse to fit (a workflow's run takes
    the recorded fit its experiments ran with, never a new one). Returns a summary line."""
    reps = cal.replications[scale]
    key = calibration_key(cal, reps, seed)
    stored = recorded(cache, key) if cache else None
    if stored is None and recorded_only:
        raise InputError(f"{cache}: no {scale} fit of {cal.id} recorded under key {key} (the model's code, the "
                         f"calibration or its points changed): run `make calibrate ID={cal.id}` and commit the record.")
    if stored is not None:
        result, how = _replay(cal, stored, reps, seed, jobs, progress), f"recorded in {cache} on {stored['computed']}"
        entry = {**stored, "how": how}
    else:
        result = F.fit(cal, reps, seed, jobs, progress, holdout)
        entry = entry_of(cal, key, result, scale)
        how = f"fitted now: {result.evaluations} evaluations in {result.wall_seconds:.0f} s on {jobs} jobs"
        if record_to:
            record(record_to, entry)
            how += f"; recorded in {record_to}"
        entry = {**entry, "how": how}
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "fit.yaml", yaml.safe_dump(entry, sort_keys=False))
    write_text(out / "points.csv", pd.DataFrame(result.points).to_csv(index=False))
    if result.searched:     # a fit made now: every setting the search tried (values as their repr)
        write_text(out / "search.csv", pd.DataFrame(result.searched).to_csv(index=False))
    write_text(out / "holdout.csv", pd.DataFrame([{**r, "held_out_group": h["held_out"]} for h in result.holdout
                                                  for r in h["points"]]).to_csv(index=False))
    values = ", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}" for k, v in result.values.items())
    return (f"{cal.id}: {values}; median |relative error| {result.median_abs_error:.1%} over {len(result.points)} "
            f"points ({how}, key {key})")
