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
from simcore.errors import InputError

HEADER = ("# Recorded calibrations (simcore calibrate --record): the workflow takes the entry whose key\n"
          "# matches (model code, calibration file, target specs, replications, seed) instead of fitting\n"
          "# again; see simcore/calibration/record.py. Values are the fit's; 'holdout' the held-out fits.\n")


def calibration_key(cal: Calibration, replications: int, root_seed: int) -> str:
    """The key a fit of ``cal`` is recorded under (module docstring): the model's code, the
    calibration file, every point's parameters and published value, the replications and seed."""
    from simcore.experiments.fingerprint import code_fingerprint

    points = [[p.experiment, p.params, p.value] for p in cal.points]
    what = {"code": code_fingerprint(cal.model), "calibration": cal.path.read_text(), "points": points,
            "replications": replications, "seed": root_seed}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]


def record_path(calibration: Path) -> Path:
    """Where the fits of the calibration file ``calibration`` are recorded: ``fits/ID.yaml`` beside it."""
    return calibration.parent / "fits" / f"{calibration.stem}.yaml"


def calibrated_values(calibration: Path, scale: str = "full") -> dict:
    """The values of the fit recorded for ``calibration`` at ``scale`` (an experiment's
    ``calibration``): its fixed values and fitted ones, each checked against its domain."""
    entry = next((e for e in _entries(record_path(calibration)) if e.get("scale") == scale), None)
    if entry is None:
        raise InputError(f"{record_path(calibration)}: no recorded {scale} fit of {calibration.stem}; "
                         f"run `simcore calibrate {calibration.stem} --record {record_path(calibration)}`.")
    return dict(entry["values"])


def _entries(path: Path) -> list[dict]:
    from simcore.inputs import read_yaml

    if not path.exists():
        return []
    entries = read_yaml(path) or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "key" in e for e in entries):
        raise InputError(f"{path}: expected a list of recorded calibrations, each with a 'key'.")
    return entries


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
