"""How a spec's ``where`` selects grid cells, and a row's grid values: the one reading of
``where`` for specs, claims, published values and the report."""

from __future__ import annotations


def options(wanted) -> list:
    """The values a ``where`` allows for one parameter: one value or a list of values."""
    return wanted if isinstance(wanted, list) else [wanted]


def where_matches(where: dict | None, values: dict) -> bool:
    """Whether the cell with parameter ``values`` lies in a spec's ``where``; the one reading of
    ``where`` for claims, published values and the report."""
    return all(values.get(k) in options(v) for k, v in (where or {}).items())


def grid_values(spec, row) -> dict:
    """The grid values of a row of raw, summary or replication data, as the spec's grid gives them
    (a column that mixes words and numbers, e.g. 'last-completion' and 10000.0, is read back from
    a CSV as text: '10000.0' is the grid's 10000.0)."""
    return {k: _as_in_grid(row[k].item() if hasattr(row[k], "item") else row[k], spec.grid[k]) for k in spec.grid}


def _as_in_grid(value, values: list):
    """``value``, or the grid value it is the text of."""
    if value in values:
        return value
    return next((v for v in values if str(v) == str(value)), value)
