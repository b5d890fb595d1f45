"""What the workflow builds for an id: an experiment's table and figure, a SAN model's figure,
or a published SAN figure made of several models (e.g. ``corr05-fig8``)."""

from __future__ import annotations

import difflib
from pathlib import Path

import yaml

from simcore.errors import InputError
from simcore.inputs import load_yaml_text

#: the record of SAN fits (simcore san-fit --record) lives beside the models and is not one
FIT_RECORD = "fits.yaml"


def san_model_files(san_dir: str | Path = "config/san") -> list[Path]:
    """The SAN model files of ``san_dir``: its YAML files but the record of fits."""
    return sorted(p for p in Path(san_dir).glob("*.yaml") if p.name != FIT_RECORD)


def san_figures(san_dir: str | Path = "config/san") -> dict[str, list[str]]:
    """Published SAN figure id -> the model files (stems) whose ``published.figure`` names it."""
    out: dict[str, list[str]] = {}
    for path in san_model_files(san_dir):
        try:
            data = load_yaml_text(path.read_text()) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue   # `simcore san` reports a bad model file with its reason
        figure = (data.get("published") or {}).get("figure") if isinstance(data, dict) else None
        if isinstance(figure, str):
            out.setdefault(figure, []).append(path.stem)
    return out


def targets(name: str, specs_dir: str | Path = "config/experiments", san_dir: str | Path = "config/san") -> list[str]:
    """The workflow targets of ``name``; an unknown name raises InputError with the closest ids."""
    from simcore.experiments.spec import find_spec, load_spec

    specs = {p.stem: p for p in Path(specs_dir).glob("*.yaml")}
    models = {p.stem for p in san_model_files(san_dir)}
    figures = san_figures(san_dir)
    if name in specs:
        spec = load_spec(find_spec(name, specs_dir))
        out = [f"paper/tables/{name}.tex"]
        return out + ([f"paper/figures/{name}.pdf"] if spec["output"]["kind"] != "table" else [])
    if name in figures:
        return [f"paper/figures/{name}.pdf"]
    model = name.removeprefix("san-")
    if model in models:
        return [f"paper/figures/san-{model}.pdf"]
    known = sorted(specs) + sorted(figures) + sorted(f"san-{m}" for m in models)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else "see `simcore list`"
    raise InputError(f"'{name}' is no experiment, SAN model or published SAN figure ({hint}).")
