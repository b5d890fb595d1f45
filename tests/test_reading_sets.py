"""A paper's claims are counted under one reading set for all of them (docs/statistics.md, "Judged
readings", "Reading sets"): the set, its support, the rule that picks the best one, what counts as
explained, and the first page's counts by default and under the set. Synthetic claims.csv tables,
each count derived by hand below."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from simcore.report.headline import _set_lines, _set_table
from simcore.report.reading_sets import best_set, reading_sets
from simcore.report.scorecard import paper_sets, reproduced, standing_counts, verdict_counts


class _Spec:
    """A spec stand-in: its id, its paper (the id's first word), its claims or the experiment it judges."""

    def __init__(self, id: str, claims=(), judges: str | None = None):
        self.id = id
        self.data = {"paper": id.split("-")[0], "claims": [{"id": c, "text": c} for c in claims]}
        if judges:
            self.data["judges"] = judges

    def __getitem__(self, key):
        return self.data[key]


def _experiment(results: Path, id: str, verdicts: dict[str, str], published: dict[str, float] | None = None) -> _Spec:
    """An experiment whose claims (id -> default verdict) have these rows in its claims.csv."""
    rows = [{"claim": c, "verdict": v, "published_effect": (published or {}).get(c)} for c, v in verdicts.items()]
    _write(results, id, rows)
    return _Spec(id, claims=verdicts)


def _judging(results: Path, judged: str, readings: dict[str, dict[str, str]], unsupported=(),
             suffix: str = "readings") -> _Spec:
    """``judged``-``suffix``, judging its claims under each reading ('x = x0; ...' -> claim -> verdict,
    the judged experiment's own first); a reading holding a value of ``unsupported`` is not supported."""
    rows = [{"claim": f"{c} | {reading}", "judged": judged, "judged_claim": c, "reading": reading,
             "supported": not {p.split(" = ")[1] for p in reading.split("; ")} & set(unsupported),
             "verdict": v, "statistic": "ratio", "estimate": 1.0, "ci_low": 0.9, "ci_high": 1.1}
            for reading, verdicts in readings.items() for c, v in verdicts.items()]
    _write(results, f"{judged}-{suffix}", rows)
    return _Spec(f"{judged}-{suffix}", judges=judged)


def _write(results: Path, id: str, rows: list[dict]) -> None:
    (results / id).mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(results / id / "claims.csv", index=False)


def _union_explained(specs, results: Path) -> int:
    """The old rule, for comparison: a claim not reproduced by default counts as explained when any
    supported reading, chosen for it alone, reproduces it."""
    from simcore.report.data import claim_rows, verdict_of
    from simcore.report.judged import judged_rows

    judged = judged_rows(specs, results)
    return sum(verdict_of(row) not in ("reproduced", "calibrated")
               and any(str(r["supported"]) == "True" and r["verdict"] == "reproduced"
                       for r in judged.get((spec.id, claim["id"]), []))
               for spec in specs for claim, row in claim_rows(spec, results))


def test_a_reading_that_reproduces_one_claim_and_contradicts_another_explains_only_as_the_best_set(tmp_path):
    """Claims A (negligible by default), B (inconclusive by default), C (absent by default), judged
    under x0 (the own value, as by default), x1 and x2, all supported.

    First table: x1 reproduces A and contradicts B (1 reproduced, 1 contradicted); x2 reproduces C
    (1 reproduced, 0 contradicted); x0 reproduces nothing. x1 and x2 tie on reproduced, x2 has fewer
    contradicted (though x1 is listed first): the best set is x2, only C is explained: 1 (the old
    per-claim rule explained A through x1 and C through x2: 2).

    Second table: x1 reproduces A and C and contradicts B (2 reproduced against x2's 1): the best
    set is x1, A and C are explained (2), and the first page's counts under x1 show B contradicted:
    by default inconclusive 1 (B), negligible 1 (A), absent 1 (C); under x1 reproduced 2 (A, C),
    contradicted 1 (B). Standing: A and C explained, B not reproduced."""
    fig = _experiment(tmp_path, "p-fig1", {"A": "negligible", "B": "inconclusive", "C": "absent"})
    x0 = {"A": "negligible", "B": "inconclusive", "C": "absent"}
    x2 = {"A": "negligible", "B": "inconclusive", "C": "reproduced"}
    judging = _judging(
        tmp_path,
        "p-fig1",
        {"x = x0": x0, "x = x1": {"A": "reproduced", "B": "contradicted", "C": "absent"}, "x = x2": x2},
    )
    specs = [fig, judging]
    assert paper_sets(specs, tmp_path)["p"].values == {"x": "x2"}
    assert standing_counts(specs, tmp_path)["p"]["explained"] == 1 and _union_explained(specs, tmp_path) == 2

    _judging(tmp_path, "p-fig1", {"x = x0": x0, "x = x1": {"A": "reproduced", "B": "contradicted", "C": "reproduced"},
                                  "x = x2": x2})
    sets = paper_sets(specs, tmp_path)
    assert sets["p"].values == {"x": "x1"}
    counts = standing_counts(specs, tmp_path)["p"]
    assert (counts["explained"], counts["not reproduced"], reproduced(counts)) == (2, 1, 0)
    under = verdict_counts(specs, tmp_path, sets)["p"]
    assert (under["reproduced"], under["contradicted"], under["inconclusive"], under["negligible"]) == (2, 1, 0, 0)
    table = "\n".join(_set_table(verdict_counts(specs, tmp_path), {"p": under}))
    # columns that occur: reproduced, contradicted, absent, negligible, inconclusive; cells 'default / under x1'
    assert r"Paper & reproduced & contradicted & absent & negligible & inconclusive \\" in table
    assert r"p & 0 / 2 & 0 / 1 & 1 / 0 & 1 / 0 & 1 / 0 \\" in table
    assert _set_lines(sets, {"p": 3}) == [r"\textbf{p}: x x1.\par"]


def test_two_readings_each_reproducing_another_claim_explain_one_claim_not_both(tmp_path):
    """A and B negligible by default; x1 reproduces A only, x2 B only, x0 neither; all supported.
    Reproduced: x0 0, x1 1, x2 1; contradicted 0 each: x1 and x2 tie, and x1 is listed first
    (x0, x1, x2), so the best set is x1 and only A is explained: 1 (the union of each claim's best
    reading would explain A and B: 2). B stays not reproduced."""
    fig = _experiment(tmp_path, "p-fig1", {"A": "negligible", "B": "negligible"})
    judging = _judging(tmp_path, "p-fig1", {"x = x0": {"A": "negligible", "B": "negligible"},
                                             "x = x1": {"A": "reproduced", "B": "negligible"},
                                             "x = x2": {"A": "negligible", "B": "reproduced"}})
    specs = [fig, judging]
    assert paper_sets(specs, tmp_path)["p"].values == {"x": "x1"}
    counts = standing_counts(specs, tmp_path)["p"]
    assert (counts["explained"], counts["not reproduced"]) == (1, 1)
    assert _union_explained(specs, tmp_path) == 2


def test_an_unsupported_set_never_counts(tmp_path):
    """Claims A of p-fig1 and B of p-fig2, negligible by default. Both readings experiments read x
    (x0, x1) and y (y1 has no sentence of the paper). Sets, joined: (x0, y0),
    (x0, y1), (x1, y0), (x1, y1); those with y1 are unsupported. Under x1 A reproduces; B reproduces
    under (x1, y1) only. Supported: (x0, y0) reproduces 0, (x1, y0) 1 (A): the best set is (x1, y0),
    A is explained, B not (its only reproducing reading is unsupported): explained 1. The unsupported
    (x1, y1) reproduces 2 and still is not chosen. A paper whose every set is unsupported has no best
    set and explains nothing, and the first page says so."""
    a = _experiment(tmp_path, "p-fig1", {"A": "negligible"})
    b = _experiment(tmp_path, "p-fig2", {"B": "negligible"})
    ra = _judging(tmp_path, "p-fig1", {"x = x0; y = y0": {"A": "negligible"}, "x = x0; y = y1": {"A": "negligible"},
                                        "x = x1; y = y0": {"A": "reproduced"}, "x = x1; y = y1": {"A": "reproduced"}},
                  unsupported=("y1",))
    rb = _judging(tmp_path, "p-fig2", {"x = x0; y = y0": {"B": "negligible"}, "x = x0; y = y1": {"B": "negligible"},
                                        "x = x1; y = y0": {"B": "negligible"}, "x = x1; y = y1": {"B": "reproduced"}},
                  unsupported=("y1",))
    specs = [a, b, ra, rb]
    from simcore.report.judged import judged_rows

    rows = [r for found in judged_rows(specs, tmp_path).values() for r in found]
    found = {tuple(s.values.values()): (s.supported, s.count("reproduced")) for s in reading_sets(rows)}
    assert found == {("x0", "y0"): (True, 0), ("x0", "y1"): (False, 0), ("x1", "y0"): (True, 1),
                     ("x1", "y1"): (False, 2)}
    assert best_set(rows).values == {"x": "x1", "y": "y0"}
    assert standing_counts(specs, tmp_path)["p"]["explained"] == 1

    only = _judging(tmp_path, "p-fig1", {"x = x1": {"A": "reproduced"}}, unsupported=("x1",))
    assert paper_sets([a, only], tmp_path)["p"] is None
    assert standing_counts([a, only], tmp_path)["p"]["explained"] == 0
    assert _set_lines({"p": None}, {"p": 1}) == [
        r"\textbf{p}: no reading set the text supports (its default verdicts).\par"
    ]


def test_a_claim_two_experiments_judge_on_different_readings_counts_only_under_sets_that_ran(tmp_path):
    """Claim A of p-fig1 (negligible by default) is judged by p-fig1-readings over x (x0 own, x1) and
    by p-fig1-control over c (c0 own, c1); each ran the other's parameter at its own value. Joined
    sets: (x0, c0), (x0, c1), (x1, c0), (x1, c1). A row stands for a set when it agrees with it and the
    set holds the parameter the row does not name at its own value: (x0, c0) both rows, the first
    by id (p-fig1-control: inconclusive); (x1, c0) the readings' x1 row (reproduced); (x0, c1) the
    control's c1 row (contradicted); (x1, c1) none (no run had x1 and c1 together), so that set is
    left out. Switch the rule off and (x1, c1) appears, with a verdict from a run of other values."""
    fig = _experiment(tmp_path, "p-fig1", {"A": "negligible"})
    ra = _judging(tmp_path, "p-fig1", {"x = x0": {"A": "negligible"}, "x = x1": {"A": "reproduced"}})
    rc = _judging(tmp_path, "p-fig1", {"c = c0": {"A": "inconclusive"}, "c = c1": {"A": "contradicted"}},
                  suffix="control")
    from simcore.report.judged import judged_rows

    rows = [r for found in judged_rows([fig, ra, rc], tmp_path).values() for r in found]
    found = {tuple(sorted(s.values.values())): s.verdict(("p-fig1", "A")) for s in reading_sets(rows)}
    assert found == {("c0", "x0"): "inconclusive", ("c0", "x1"): "reproduced", ("c1", "x0"): "contradicted"}
    assert best_set(rows).values == {"x": "x1", "c": "c0"}


def test_the_set_of_own_values_takes_the_judged_experiments_own_verdicts(tmp_path):
    """A is negligible in p-fig1 itself; p-fig1-readings, with fewer replications, finds it
    reproduced under x0 (p-fig1's own value) and negligible under x1. The set {x: x0} is p-fig1's own
    run, so it takes p-fig1's verdict: negligible; {x: x1} negligible too. Both reproduce 0 and
    contradict 0, so the first listed, x0, is the best set, and A is not explained (0). With the
    judging experiment's row standing for the own set, A would be 'explained' by its own values."""
    fig = _experiment(tmp_path, "p-fig1", {"A": "negligible"})
    judging = _judging(tmp_path, "p-fig1", {"x = x0": {"A": "reproduced"}, "x = x1": {"A": "negligible"}})
    best = paper_sets([fig, judging], tmp_path)["p"]
    assert best.values == {"x": "x0"} and best.verdict(("p-fig1", "A")) == "negligible"
    assert standing_counts([fig, judging], tmp_path)["p"]["explained"] == 0


def test_larger_than_published_is_not_counted_as_reproduced(tmp_path):
    """D states the paper's number (1.2) and is larger than published by default and under the best
    set x0 (x1 makes it smaller); E, a direction claim, reproduces. Reproduced = 0 with the paper's
    number + 1 direction claim = 1 (E), other size 1 (D), explained 0; under x0: reproduced 1,
    other size 1 (the box's two columns, never one)."""
    fig = _experiment(tmp_path, "p-fig1", {"D": "larger than published", "E": "reproduced"}, published={"D": 1.2})
    judging = _judging(tmp_path, "p-fig1", {"x = x0": {"D": "larger than published", "E": "reproduced"},
                                             "x = x1": {"D": "smaller than published", "E": "reproduced"}})
    specs = [fig, judging]
    counts = standing_counts(specs, tmp_path)["p"]
    assert (reproduced(counts), counts["reproduced with magnitude"], counts["other size"], counts["explained"]) == (
        1,
        0,
        1,
        0,
    )
    sets = paper_sets(specs, tmp_path)
    assert sets["p"].values == {"x": "x0"}
    table = "\n".join(_set_table(verdict_counts(specs, tmp_path), verdict_counts(specs, tmp_path, sets)))
    assert r"Paper & reproduced & other size \\" in table and r"p & 1 / 1 & 1 / 1 \\" in table
