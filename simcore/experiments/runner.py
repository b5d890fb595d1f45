"""Run a batch of replications of one cell for every policy of a spec."""

from __future__ import annotations

import json
import time

import pandas as pd

from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.experiments.spec import Spec


def run_batch(spec: Spec, cell_index: int, reps: range, root_seed: int, overrides: dict | None = None,
              progress=None) -> pd.DataFrame:
    """Raw rows (one per replication x policy) for replications ``reps`` of one cell.

    The result depends only on the spec, the overrides, the root seed and the replication
    indices: how replications are split into batches never changes a row (wall time aside).
    """
    cell = spec.cell(cell_index)
    params = spec.params({**cell.values, **(overrides or {})})
    params_json = json.dumps(params, sort_keys=True, default=str)
    rows = []
    for rep in reps:
        streams = Streams(replication_seed(root_seed, spec.id, spec.seed_cell(cell.index), rep))
        start = time.perf_counter()
        try:
            results = spec.model.run_replication(params, spec.policies, streams)
        except InputError as err:
            raise InputError(f"{spec.path}: {err}") from None
        wall = (time.perf_counter() - start) / max(len(results), 1)
        for policy in spec.policies:
            rows.append({
                "experiment": spec.id, "cell": cell.index, **cell.values, "policy": policy,
                "rep": rep, "spawn_key": streams.spawn_key, **results[policy],
                "wall_time": wall, "params": params_json,
            })
        if progress:
            progress(rep)
    return pd.DataFrame(rows)


def write_batch(path, frame: pd.DataFrame, spec: Spec, root_seed: int, overrides: dict | None = None) -> None:
    """Write a batch's rows atomically, with the fingerprint of what made them in its metadata."""
    from simcore.core.output import write_parquet
    from simcore.experiments.fingerprint import METADATA_KEY, fingerprint_text, simulation_fingerprint

    fingerprint = simulation_fingerprint(spec, root_seed, overrides)
    write_parquet(path, frame, {METADATA_KEY: fingerprint_text(fingerprint).encode()})
