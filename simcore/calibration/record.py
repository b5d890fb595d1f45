"""Recorded calibrations (``config/calibration/fits.yaml``) and a fit's files.

A fit is kept under a key of everything its result depends on: the model's code and machines
(:func:`simcore.experiments.fingerprint.code_fingerprint`), the calibration file, the files of
its target experiments (their published points and presets), the replications and the root
seed. ``simcore calibrate --cache`` takes the entry whose key matches instead of fitting again;
any change of code, ranges or points changes the key, and the fit is made again.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path

import yaml

from simcore.calibration.fit import Result
from simcore.calibration.spec import Calibration
from simcore.core.output import write_text
from simcore.experiments.calibrated import entries as _entries
from simcore.experiments.calibrated import record_path  # noqa: F401 (where a calibration file's fits are)

HEADER = ("# Recorded calibrations (simcore calibrate --record): the workflow takes the entry whose key\n"
          "# matches (model code, calibration file, target specs, replications, seed) instead of fitting\n"
          "# again; see simcore/calibration/record.py. Values are the fit's; 'holdout' the held-out fits.\n")


def calibration_key(cal: Calibration, replications: int, root_seed: int) -> str:
    """The key a fit of ``cal`` is recorded under (module docstring): the model's code, the
    calibration file, every point's parameters and published value (and its metric, when the file
    names several; its policy and ratio, with several controls or a ratio), the replications and seed."""
    from simcore.experiments.fingerprint import code_fingerprint

    points = [[p.experiment, p.params, p.value, *([p.metric] if len(cal.metrics) > 1 else []),
               *([p.policy, list(p.ratio)] if len(cal.policies) > 1 or p.ratio else [])] for p in cal.points]
    what = {"code": code_fingerprint(cal.model), "calibration": cal.path.read_text(), "points": points,
            "replications": replications, "seed": root_seed}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]


def recorded(path: Path, key: str) -> dict | None:
    """The entry recorded under ``key`` (None: none, or no file)."""
    return next((e for e in _entries(path) if e["key"] == key), None)


def _short(value):
    return float(f"{value:.6g}") if isinstance(value, float) else value


def entry_of(cal: Calibration, key: str, result: Result, scale: str) -> dict:
    """The record entry of a fit made now."""
    return {"key": key, "calibration": cal.id, "scale": scale, "replications": result.replications,
            "values": dict(result.values), "objective": _short(result.objective),
            "median_abs_error": _short(result.median_abs_error), "evaluations": result.evaluations,
            "wall_seconds": round(result.wall_seconds), "jobs": result.jobs,
            "holdout": [{"held_out": h["held_out"], "values": dict(h["values"]),
                         "median_abs_error": _short(h["median_abs_error"])} for h in result.holdout],
            "computed": datetime.date.today().isoformat()}


def record(path: Path, entry: dict) -> None:
    """Store ``entry``, replacing one of the same calibration and scale."""
    same = (entry["calibration"], entry["scale"])
    kept = [e for e in _entries(path) if (e.get("calibration"), e.get("scale")) != same]
    write_text(path, HEADER + yaml.safe_dump(kept + [entry], sort_keys=False))
