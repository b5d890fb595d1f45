"""A paper's reading sets: one value for every reading parameter of the experiments that judge its
claims (``judges``), and the best set the paper's text supports, under which every judged claim of
the paper is counted at once (docs/statistics.md, "Judged readings").

A judged row (one claim under one reading, :func:`simcore.report.judged.judged_rows`) belongs to a
set when its reading agrees with the set on that experiment's parameters and the set holds every
other parameter at the judged experiment's own value (the experiment ran with it there): a claim
judged by two experiments with different parameters (corr05's readings of its simulator and of its
control) takes, under a set, the row that ran the set's values, and a set under which some judged
claim has no such row was never run and is left out. A set is supported when
every value in it is, i.e. when every row that belongs to it is (a row is supported when every value
of its own reading is, ``supported``). BEST_SET is the rule that picks one set per paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: the rule that picks a paper's set among the supported ones, written once (docs/statistics.md)
BEST_SET = ("most claims reproduced under it; ties: fewest contradicted; then the set whose values come first "
            "in the specs' listing (the judged experiment's own value first)")


@dataclass
class ReadingSet:
    """One value per reading parameter of a paper (``values``: in the specs' order) and the row
    each judged claim, (judged experiment, claim id), has under it."""
    values: dict[str, str]
    rank: tuple[int, ...] = ()      # each value's place in its parameter's listing (0: the judged experiment's own)
    rows: dict[tuple[str, str], dict] = field(default_factory=dict)
    supported: bool = True          # every row that belongs to it is supported

    @property
    def own(self) -> bool:
        """Whether every value is the judged experiments' own (the default reading)."""
        return not any(self.rank)

    def verdict(self, key: tuple[str, str]) -> str | None:
        """The claim's verdict under the set, None when no experiment judges it ('missing' without one)."""
        row = self.rows.get(key)
        if row is None:
            return None
        return row["verdict"] if isinstance(row.get("verdict"), str) else "missing"

    def count(self, verdict: str) -> int:
        return sum(self.verdict(key) == verdict for key in self.rows)

    def text(self) -> str:
        """'rules_scope = all; domain_init = x86_64-2.6.12; ...'."""
        return "; ".join(f"{name} = {value}" for name, value in self.values.items())


def reading_values(reading) -> dict[str, str]:
    """A row's reading, 'name = value; ...', as {name: value} (values as text)."""
    parts = (p.strip().partition(" = ") for p in str(reading).split(";"))
    return {name: value for name, _, value in parts if name}


def supported(row: dict) -> bool:
    """Whether the text supports every value of a judged row's reading (as read back from a CSV too)."""
    return str(row.get("supported")).lower() == "true"


def _agrees(values: dict[str, str], other: dict[str, str]) -> bool:
    return all(values[k] == v for k, v in other.items() if k in values)


def reading_sets(rows: list[dict], defaults: dict[tuple[str, str], dict] | None = None) -> list[ReadingSet]:
    """Every set a paper's judged ``rows`` allow: each experiment's readings that occur, joined with
    the other experiments' readings they agree with (experiments that share their parameters give
    as many sets as one of them has readings), each with the row every judged claim has under it.
    ``defaults``: each judged claim's own row in its experiment, which the set of every own value
    takes (the judged experiment ran those values, with its own replications)."""
    per_experiment: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        readings = per_experiment.setdefault(row["readings_experiment"], [])
        values = reading_values(row["reading"])
        if values not in readings:
            readings.append(values)
    joined: list[dict[str, str]] = [{}]
    for readings in per_experiment.values():
        joined = _unique([{**s, **r} for s in joined for r in readings if _agrees(s, r)])
    listing = _listing(rows)
    sets = [ReadingSet(values, tuple(listing[k].index(v) for k, v in values.items()))
            for values in joined] if per_experiment else []
    for row in sorted(rows, key=lambda r: r["readings_experiment"]):   # two that ran a set's values: the first by id
        values, key = reading_values(row["reading"]), (row["judged"], row["judged_claim"])
        for s in sets:
            if _agrees(s.values, values) and _own_elsewhere(s, values):
                s.rows.setdefault(key, row)
                s.supported = s.supported and supported(row)
    claims = {(row["judged"], row["judged_claim"]) for row in rows}
    for s in sets:
        if s.own and defaults:
            s.rows = {key: defaults.get(key, row) for key, row in s.rows.items()}
    return [s for s in sets if set(s.rows) == claims]


def _own_elsewhere(s: ReadingSet, values: dict[str, str]) -> bool:
    """Whether ``s`` holds every parameter a row's reading does not name at its own value."""
    return all(rank == 0 for name, rank in zip(s.values, s.rank) if name not in values)


def _unique(sets: list[dict]) -> list[dict]:
    out: list[dict] = []
    for s in sets:
        if s not in out:
            out.append(s)
    return out


def best_set(rows: list[dict], defaults: dict[tuple[str, str], dict] | None = None) -> ReadingSet | None:
    """The supported set BEST_SET picks among a paper's (``rows``: its judged rows, in the specs'
    order; ``defaults``: as for :func:`reading_sets`), None when no set is supported."""
    backed = [s for s in reading_sets(rows, defaults) if s.supported]
    return min(backed, key=lambda s: (-s.count("reproduced"), s.count("contradicted"), s.rank), default=None)


def _listing(rows: list[dict]) -> dict[str, list[str]]:
    """Each parameter's values in the order the rows first give them (the specs' listing: an
    experiment's readings run over its parameters' values in the order declared, its own first)."""
    out: dict[str, list[str]] = {}
    for row in rows:
        for name, value in reading_values(row["reading"]).items():
            if value not in out.setdefault(name, []):
                out[name].append(value)
    return out


def best_sets(specs, judged: dict[tuple[str, str], list[dict]],
              defaults: dict[tuple[str, str], dict] | None = None) -> dict[str, ReadingSet | None]:
    """Per paper, its best supported set (``judged``: :func:`simcore.report.judged.judged_rows`;
    ``defaults``: every claim's own row, (experiment, claim id) -> row); None for a paper without
    judged rows or without a supported set."""
    paper_of = {spec.id: spec["paper"] for spec in specs}
    rows: dict[str, list[dict]] = {}
    for (experiment, _), found in judged.items():
        rows.setdefault(paper_of.get(experiment), []).extend(found)
    return {spec["paper"]: best_set(rows.get(spec["paper"], []), defaults) for spec in specs}
