"""Precision mode: more replications for the cells of claims the replications cannot decide.

A scale may give a ``precision`` section (``max_replications``, ``batch``, ``rounds``; see
:meth:`Spec.precision`). After the scale's own replications, each round looks at the claims of
the experiment and of every experiment that reads its data, and gives every cell that keeps a
claim ``inconclusive`` the replications its interval says would decide it
(:func:`simcore.stats.claims.undecided_cells`; at least one batch more, never more than the cap).
The additions are ordinary replication batches, cut into jobs of the scale's own ``batch`` (or of
the precision ``batch`` if larger): replication r of a cell has its own seed, so a cell extended
over rounds holds exactly the replications a single batch of the same range gives.
The rounds stop when no undecided cell is below the cap, or after ``rounds`` of them. Every look
at the verdicts is a test, so at such a scale the claims are judged at the Bonferroni level over
rounds + 1 looks (:meth:`Spec.claim_level`), the final look included.
"""

from __future__ import annotations

import math

import pandas as pd

from simcore.stats.claims import undecided_cells


def cell_counts(raw: pd.DataFrame) -> dict[int, int]:
    """Cell -> replications present (replication indices run 0..n-1)."""
    return {int(c): int(reps.max()) + 1 for c, reps in raw.groupby("cell")["rep"]}


def targets(specs, raw: pd.DataFrame, scale: str) -> dict[int, int]:
    """Cell -> the replications it should reach: the largest count any undecided cell of any
    claim of ``specs`` (all reading ``raw``) asks for, capped; only cells that grow."""
    precision = specs[0].precision(scale)
    cap, batch = precision["max_replications"], precision["batch"]
    have = cell_counts(raw)
    want: dict[int, int] = {}
    for spec in specs:
        judged = spec.at_level(spec.claim_level(scale))
        for claim in spec.data.get("claims") or []:
            for cell, needed in undecided_cells(judged, raw, claim).items():
                n = have[cell]
                goal = cap if math.isnan(needed) else max(int(math.ceil(needed)), n + batch)
                want[cell] = max(want.get(cell, 0), min(goal, cap))
    return {c: t for c, t in sorted(want.items()) if t > have[c]}


def batches(have: dict[int, int], want: dict[int, int], batch: int) -> list[tuple[int, int, int]]:
    """(cell, a, b) replication ranges [a, b) that take each cell from ``have`` to ``want``."""
    return [
        (cell, a, min(a + batch, want[cell])) for cell in sorted(want) for a in range(have[cell], want[cell], batch)
    ]


def plan_round(specs, raw: pd.DataFrame, scale: str, round_: int) -> dict:
    """The batches round ``round_`` (1, 2, ...) adds, given the replications so far; ``specs``:
    the experiment that simulates first, then those reading its data. The precision ``batch`` is
    the least a cell gets; the jobs hold the scale's ``batch`` where that is larger."""
    precision = specs[0].precision(scale)
    if precision is None:
        raise ValueError(f"{specs[0].path}: scale '{scale}' has no precision mode.")
    have = cell_counts(raw)
    want = targets(specs, raw, scale) if round_ <= precision["rounds"] else {}
    added = batches(have, want, max(precision["batch"], specs[0].batch_size(scale)))
    reason = ("more replications asked for" if added else
              "last round done" if round_ > precision["rounds"] else
              "every claim decided or every undecided cell at the cap")
    return {"experiment": specs[0].id, "scale": scale, "round": round_, "precision": precision,
            "level": specs[0].claim_level(scale), "replications": {str(c): n for c, n in have.items()},
            "targets": {str(c): n for c, n in want.items()}, "reason": reason,
            "batches": [f"c{cell:03d}/r{a:05d}-{b:05d}" for cell, a, b in added]}


def replay(specs, raw: pd.DataFrame, scale: str) -> dict[int, int]:
    """Cell -> the replications the precision rounds reach when each round sees only the rows of
    ``raw`` the rounds before it kept: the counts a full run of today's rules would end with, if
    ``raw`` holds them (a committed reference's table, to check its counts against the rules)."""
    start = specs[0].replications(scale)
    have = {cell: min(start, n) for cell, n in cell_counts(raw).items()}
    for round_ in range(1, specs[0].precision(scale)["rounds"] + 1):
        seen = raw[raw["rep"] < raw["cell"].map(have)]
        have.update(targets(specs, seen, scale))
    return have
