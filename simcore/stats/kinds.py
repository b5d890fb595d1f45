"""The kinds of claim a spec may state: the statistic each compares, its value of no effect and
the side it claims, and the published effect of a claim in one cell. Kept apart from
:mod:`simcore.stats.claims` (pandas, scipy) because every spec check reads them."""

from __future__ import annotations

from simcore.vocabulary.cells import where_matches

STATISTIC = {
    "value": "value",
    "less": "difference",
    "greater": "difference",
    "ratio-above": "ratio",
    "ratio-below": "ratio",
    "share-less": "share",
    "gain-grows": "slope",
    "spread": "spread",
}
NULL = {"value": 0.0, "difference": 0.0, "ratio": 1.0, "share": 0.5, "slope": 0.0, "spread": 0.0}
SIDE = {"value": 1, "less": -1, "ratio-below": -1, "greater": 1, "ratio-above": 1, "share-less": 1, "gain-grows": 1,
        "spread": 1}


def published_in_cell(published: list, claim: dict, values: dict) -> float | None:
    """The paper's effect for ``claim`` in the cell with grid ``values``, from a spec's
    ``published`` list (``published_effect: table``); None where the list gives none."""
    def find(policy, than=None):
        for e in published:
            if (e.get("policy") == policy and e.get("than") == than and e["metric"] == claim["metric"]
                    and where_matches(e.get("where"), values)):
                return float(e["value"])
        return None

    policy, kind = claim["policy"], claim["kind"]
    if kind == "value":
        return find(policy)
    than = claim.get("than")
    ratio = kind.startswith("ratio")
    direct = find(policy, than) if ratio else None
    if direct is not None:
        return direct
    a, b = find(policy), find(than)
    if a is None or b is None:
        return None
    return a / b if ratio else a - b
