"""Aggregate the raw batches of one experiment into summary, claims, replications, provenance."""

from __future__ import annotations

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


def aggregate(spec, paths, outdir: Path, scale: str, root_seed: int, config_path: Path) -> dict:
    """Write ``summary.csv``, ``claims.csv``, ``replications.csv`` and ``provenance.json`` in ``outdir``.

    Refuses (:class:`~simcore.experiments.fingerprint.StaleResults`) batches whose fingerprint is
    not the current one of the experiment that simulated them."""
    source = spec if spec.source_id == spec.id else load_spec(spec.path.parent / f"{spec.source_id}.yaml")
    fingerprint = simulation_fingerprint(source, root_seed)
    check_batches(paths, fingerprint)
    raw = read_raw(paths)
    summary = summarize(spec, raw)
    claims = evaluate_claims(spec, raw)
    outdir = Path(outdir)
    write_csv(outdir / "summary.csv", summary)
    write_csv(outdir / "claims.csv", claims)
    write_csv(outdir / "replications.csv", replication_table(spec, raw))
    write_json(outdir / "provenance.json", provenance(spec, raw, scale, root_seed, config_path,
                                                             fingerprint["hash"]))
    return {"summary": summary, "claims": claims}
