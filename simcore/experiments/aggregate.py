"""Aggregate the raw batches of one experiment into summary, claims, replications, provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from simcore.core.output import write_csv, write_json
from simcore.errors import InputError
from simcore.experiments.fingerprint import check_batches, simulation_fingerprint
from simcore.experiments.provenance import provenance
from simcore.experiments.spec import load_spec
from simcore.stats.claims import evaluate_claims
from simcore.stats.summary import replication_table, summarize


def read_raw(paths) -> pd.DataFrame:
    """All raw rows of the given batch files, in a canonical order."""
    frames = [pd.read_parquet(p) for p in paths]
    if not frames:
        raise InputError("--raw: no raw batch files to aggregate.")
    raw = pd.concat(frames, ignore_index=True)
    dupes = raw.duplicated(["cell", "policy", "rep"])
    if dupes.any():
        first = raw[dupes].iloc[0]
        raise InputError(f"--raw: replication {first['rep']} of cell {first['cell']} appears in two batch files.")
    return raw.sort_values(["cell", "policy", "rep"]).reset_index(drop=True)


def load_raw(spec, paths, root_seed: int) -> tuple[pd.DataFrame, dict]:
    """The raw rows of ``spec`` (read from its data source's batches) and that source's
    fingerprint. Refuses (:class:`~simcore.experiments.fingerprint.StaleResults`) batches whose
    fingerprint is not the current one of the experiment that simulated them."""
    source = spec if spec.source_id == spec.id else load_spec(spec.path.parent / f"{spec.source_id}.yaml")
    fingerprint = simulation_fingerprint(source, root_seed)
    check_batches(paths, fingerprint)
    return read_raw(paths), fingerprint


def aggregate(spec, paths, outdir: Path, scale: str, root_seed: int, config_path: Path, plans=()) -> dict:
    """Write ``summary.csv``, ``claims.csv``, ``replications.csv`` and ``provenance.json`` in ``outdir``.

    Claims are judged at :meth:`Spec.claim_level`; ``plans``: the precision rounds' plan files
    (:mod:`simcore.experiments.precision`), kept in the provenance."""
    rounds = [_round_record(p) for p in plans]
    raw, fingerprint = load_raw(spec, paths, root_seed)
    summary = summarize(spec, raw)
    claims = evaluate_claims(spec.at_level(spec.claim_level(scale)), raw)
    record = provenance(spec, raw, scale, root_seed, config_path, fingerprint["hash"], fingerprint["parts"])
    if rounds:
        record["precision"] = rounds
    outdir = Path(outdir)
    write_csv(outdir / "summary.csv", summary)
    write_csv(outdir / "claims.csv", claims)
    write_csv(outdir / "replications.csv", replication_table(spec, raw))
    write_json(outdir / "provenance.json", record)
    return {"summary": summary, "claims": claims}


def _round_record(path) -> dict:
    """What a precision round's plan file says, for the provenance."""
    try:
        plan = json.loads(Path(path).read_text())
        return {k: plan[k] for k in ("round", "level", "precision", "targets", "reason", "batches")}
    except (OSError, ValueError, KeyError) as err:
        raise InputError(f"{path}: not a precision plan written by `simcore precision` ({err}).") from None
