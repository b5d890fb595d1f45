"""The recorded fits of calibrated controls, as experiments read them (``calibration`` in a spec).

A calibration file ``config/calibration/ID.yaml`` keeps its fits in
``config/calibration/fits/ID.yaml``: a list of entries, one per scale, made by
:mod:`simcore.calibration`. An experiment runs with the values of the ``full`` entry.
"""

from __future__ import annotations

from pathlib import Path

from simcore.errors import InputError
from simcore.inputs import read_yaml


def record_path(calibration: Path) -> Path:
    """Where the fits of the calibration file ``calibration`` are recorded: ``fits/ID.yaml`` beside it."""
    return calibration.parent / "fits" / f"{calibration.stem}.yaml"


def calibrated_values(calibration: Path, scale: str = "full") -> dict:
    """The values of the fit recorded for ``calibration`` at ``scale`` (an experiment's
    ``calibration``; the spec checks each against its parameter's domain)."""
    entry = next((e for e in entries(record_path(calibration)) if e.get("scale") == scale), None)
    if entry is None:
        raise InputError(f"{record_path(calibration)}: no recorded {scale} fit of {calibration.stem}; "
                         f"run `make calibrate ID={calibration.stem}`.")
    return dict(entry["values"])


def fitted_parameters(calibration: Path) -> set[str]:
    """The parameters a calibration file sets: its open quantities and those tied to them (read
    without loading its points or simulating; empty when the file is missing or not a mapping)."""
    if not calibration.exists():
        return set()
    data = read_yaml(calibration)
    return set(data.get("open") or {}) | set(data.get("tied") or {}) if isinstance(data, dict) else set()


def entries(path: Path) -> list[dict]:
    """The entries of a record file ([] without one)."""
    if not path.exists():
        return []
    data = read_yaml(path) or []
    if not isinstance(data, list) or not all(isinstance(e, dict) and "key" in e for e in data):
        raise InputError(f"{path}: expected a list of recorded calibrations, each with a 'key'.")
    check_keys(path, data)
    return data


def check_keys(path: Path, data: list[dict]) -> None:
    """Every recorded key is text: YAML reads a hexadecimal key of digits alone, unquoted, as a
    number, which no computed key equals."""
    for i, entry in enumerate(data):
        if not isinstance(entry["key"], str):
            raise InputError(f"{path}: key '{i}.key' ({entry['key']!r}) is not text; quote it "
                             f"(key: '{entry['key']}'), as the record's writers do.")
