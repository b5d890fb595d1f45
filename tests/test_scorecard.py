"""The report's first page and scorecard, built from the committed full-scale reference
(results/reference): the box of counts per paper, the notes that say why a claim does not
reproduce (each written once, cited by number) and the units of every statistic."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from simcore.experiments import load_spec
from simcore.report.data import spec_order, tex_escape

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "results/reference"
PARTS = ("claims", "reproduced", "number", "direction", "predicted", "other size", "explained", "not reproduced",
         "calibrated")


@pytest.fixture(scope="module")
def scored():
    from simcore.report.scorecard import figure_claims

    specs = [load_spec(p) for p in sorted((ROOT / "config/experiments").glob("*.yaml"))]
    return sorted([*specs, *figure_claims(ROOT / "config/san")], key=spec_order)


@pytest.fixture(scope="module")
def headline(scored) -> str:
    from simcore.report.headline import headline_tex

    return headline_tex(scored, REFERENCE)


@pytest.fixture(scope="module")
def scorecard(scored) -> str:
    from simcore.report.scorecard import scorecard_tex

    return scorecard_tex(scored, REFERENCE)


def _values(reading: str) -> dict[str, str]:
    return dict(part.split(" = ", 1) for part in reading.split("; "))


def best_rows(claims: pd.DataFrame) -> dict[str, dict[tuple[str, str], str]]:
    """Per paper, each judged claim's verdict under its best supported set, from claims.csv alone.
    A parameter's own value is the first the rows list; the sets a run stands for are one judging
    experiment's reading with every other parameter at its own value; under a set, a claim has the
    row of the first experiment (by id) whose reading agrees with it and which names every
    parameter the set holds elsewhere than its own (the set of own values: the claim's own row). A
    set is supported when every such row is; the
    best: the most rows 'reproduced', then the fewest 'contradicted', then the values listed first."""
    judged = claims[claims.judged.notna()]
    own_rows = claims[claims.judged.isna()]
    defaults = dict(zip(zip(own_rows.experiment, own_rows.claim), own_rows.verdict))
    out: dict[str, dict[tuple[str, str], str]] = {}
    for paper, rows in judged.groupby(judged.experiment.str.split("-").str[0], sort=False):
        listing: dict[str, list[str]] = {}
        for reading in rows.reading:
            for name, value in _values(reading).items():
                values = listing.setdefault(name, [])
                if value not in values:
                    values.append(value)
        own = {name: values[0] for name, values in listing.items()}
        keys = set(zip(rows.judged, rows.judged_claim))
        ranked = []
        for candidate in {tuple({**own, **_values(r)}.items()) for r in rows.reading}:
            chosen, backed = {}, True
            for row in rows.sort_values("experiment", kind="stable").itertuples():
                mine = _values(row.reading)
                if all(v == mine.get(k, own[k]) for k, v in candidate):
                    chosen.setdefault((row.judged, row.judged_claim), row.verdict)
                    backed = backed and str(row.supported).lower() == "true"
            if backed and set(chosen) == keys:
                rank = tuple(listing[k].index(v) for k, v in candidate)
                if not any(rank):   # the judged experiments' own values: their own verdicts
                    chosen = {key: defaults.get(key, v) for key, v in chosen.items()}
                verdicts = list(chosen.values())
                ranked.append(((-verdicts.count("reproduced"), verdicts.count("contradicted"), rank), chosen))
        out[paper] = min(ranked, key=lambda r: r[0])[1] if ranked else {}
    return out


def expected_counts() -> dict[str, dict[str, int]]:
    """Per paper (an experiment id's first word), from results/reference/claims.csv alone: a claim
    is its own row (no ``judged``); reproduced is the verdict 'reproduced', split by whether the
    row has a published effect (the paper's number) or not (a direction claim); predicted: of
    these, those with a ``calibrated_input``; calibrated: the verdict 'calibrated'; explained: any
    other verdict, reproduced under its paper's best supported set (:func:`best_rows`); other
    size: the rest of 'smaller'/'larger than published' but for a claim of a value (no direction to
    hold); not reproduced: the rest."""
    claims = pd.read_csv(REFERENCE / "claims.csv")
    explains = {key for chosen in best_rows(claims).values() for key, verdict in chosen.items()
                if verdict == "reproduced"}
    out: dict[str, dict[str, int]] = {}
    for r in claims[claims.judged.isna()].itertuples():
        counts = out.setdefault(r.experiment.split("-")[0], dict.fromkeys(PARTS, 0))
        counts["claims"] += 1
        if r.verdict == "reproduced":
            counts["reproduced"] += 1
            counts["number" if pd.notna(r.published_effect) else "direction"] += 1
            counts["predicted"] += pd.notna(r.calibrated_input) and bool(str(r.calibrated_input).strip())
        elif r.verdict == "calibrated":
            counts["calibrated"] += 1
        elif (r.experiment, r.claim) in explains:
            counts["explained"] += 1
        elif r.verdict in ("smaller than published", "larger than published") and r.kind != "value":
            counts["other size"] += 1
        else:
            counts["not reproduced"] += 1
    return out


def _box_cells(c: dict[str, int]) -> list[str]:
    """A paper's cells in the box: claims, reproduced as number + direction, predicted, other
    size, explained, not reproduced, calibrated."""
    return [str(c["claims"]), f"{c['reproduced']} = {c['number']} + {c['direction']}",
            *(str(c[k]) for k in ("predicted", "other size", "explained", "not reproduced", "calibrated"))]


def test_the_box_counts_each_papers_claims_as_the_references_claims_csv_gives_them(headline, scorecard):
    """Each paper's row of the first page's box (claims; reproduced = with the paper's number +
    direction claims; predicted; right direction, other size; explained; not reproduced;
    calibrated) equals the counts derived from results/reference/claims.csv's verdict column
    (:func:`expected_counts`), the 'all' row their sums; each row adds up to its claims, and the
    scorecard's sentence sets the verdicts beside the same counts."""
    expected = expected_counts()
    assert set(expected) == {"amir", "barak96", "corr05", "mehta", "zhou91", "solsona"}
    for paper, c in expected.items():
        assert rf"{paper} (\S\ref{{sec:{paper}}}) & {' & '.join(_box_cells(c))} \\" in headline
        assert c["claims"] == sum(c[k] for k in ("reproduced", "other size", "explained", "not reproduced",
                                                  "calibrated"))
    total = {k: sum(c[k] for c in expected.values()) for k in PARTS}
    assert rf"\textbf{{all}} & {' & '.join(_box_cells(total))} \\" in headline
    assert (f"The verdict reproduced ({total['reproduced']}) is the first page's reproduced: {total['number']} with "
            f"the paper's number + {total['direction']} direction claims") in scorecard


def _notes(scorecard: str) -> dict[int, str]:
    """The scorecard's notes: number -> text."""
    return {int(m.group(1)): m.group(2) for m in re.finditer(
        r"^\\item\[R(\d+)\]\\label\{note:\d+\} \([^)]*\) (.*)$", scorecard, re.M)}


def _cells(scorecard: str, experiment: str, text: str) -> list[str]:
    """The cells of a claim's row of the scorecard (``text``: the claim's, as the spec gives it),
    from the claim's text on."""
    line = next(
        l for l in scorecard.splitlines() if rf"\hyperref[tab:{experiment}]" in l and f"& {tex_escape(text)} &" in l
    )
    cells = line.split(" & ")
    return cells[cells.index(tex_escape(text)):]


def test_each_reason_is_written_once_and_the_claims_it_explains_cite_its_number(scored, scorecard):
    """Every distinct reason (``if_not_reproduced``) of a claim the reference decides otherwise
    than reproduced (contradicted, absent, negligible, not specific, smaller or larger than
    published) appears once in the scorecard, as a numbered note; that claim's row cites the
    note's number; no two notes say the same. mehta's 18 turnaround claims of Tables 3-5 (nine
    experiments) share one reason, so one note; their 90 published points (``point_claims``) another."""
    from simcore.report.data import claim_rows

    decided = ("contradicted", "absent", "negligible", "not specific", "smaller than published",
               "larger than published")
    notes = _notes(scorecard)
    assert notes and len(set(notes.values())) == len(notes)
    number = {text: n for n, text in notes.items()}
    turnaround, points = set(), set()
    for spec in scored:
        for claim, row in claim_rows(spec, REFERENCE):
            reason = claim.get("if_not_reproduced")
            if not (reason and row and row["verdict"] in decided):
                continue
            text = tex_escape(reason)
            assert scorecard.count(text) == 1, f"{spec.id} {claim['id']}"
            assert rf"\hyperref[note:{number[text]}]{{R{number[text]}}}" in _cells(scorecard, spec.id, claim["text"])[2]
            if re.fullmatch(r"mehta-table[345]-w\d", spec.id) and claim["id"] != "fewer-migrations":
                (points if claim.get("point") else turnaround).add(number[text])
    assert len(turnaround) == 1 and len(points) == 1


@pytest.mark.parametrize(
    "experiment, claim, statistic",
    [
        # a paired difference of execution times (corr05-fig10's metric: exec_time, unit s)
        ("corr05-fig10", "multilevel-better-all", r"difference (s) 0.09163 [0.07043, 0.11283] \ensuremath{<} 0"),
        # a ratio: policy / than, no unit
        (
            "amir-table4",
            "pvm-over-mosix",
            r"ratio (\ensuremath{\times}) 2.564 [2.394, 2.746] \ensuremath{>} 1 (paper 1.675)",
        ),
        # a share of replications, shown in percent: 0.9450 [0.9349, 0.9539] against 0.9
        ("amir-fig1", "epvm-below-diagonal", r"share (\% of replications) 94.50 [93.49, 95.39] \ensuremath{>} 90"),
        # a spread (the standard deviation of a ratio) in percent: 0.1064 against the paper's 0.139
        ("barak96-fig2", "pvm-slowdown-spread", r"spread (\%) 10.64 [9.74, 11.63] \ensuremath{>} 0 (paper 13.9)"),
        # a count without a unit: named by its label (mehta's migrations: 'migrations')
        ("mehta-table5-w1", "fewer-migrations", r"difference (migrations) \ensuremath{-}0.6100 [\ensuremath{-}1.2545"),
        # zhou91's response time is in the model's time units
        ("zhou91-fig3", "response-levels", r"value (time units) 327.7 [308.4, 348.2] (paper 342)"),
        # a SAN figure's claim: a difference of two probabilities
        (
            "corr05-fig8",
            "multilevel-finishes-more",
            r"difference (probability) \ensuremath{-}7.165\ensuremath{\times 10^{-4}} \ensuremath{>} 0",
        ),
    ],
)
def test_a_statistic_in_the_scorecard_is_given_in_its_unit(scorecard, experiment, claim, statistic):
    """The statistic cell of a claim's row names its unit after the statistic: the metric's unit
    in the spec, × for a ratio, % for a share of replications or a spread (its numbers times 100),
    the metric's label for a count; the numbers are claims.csv's (above, by hand)."""
    claims = pd.read_csv(REFERENCE / "claims.csv")
    text = claims[(claims.experiment == experiment) & (claims.claim == claim)].text.iloc[0]
    assert _cells(scorecard, experiment, text)[1].startswith(statistic)


def test_every_claims_statistic_in_the_scorecard_has_a_unit(scorecard):
    """Every claim of the reference: its statistic's name, then its unit in parentheses."""
    for r in pd.read_csv(REFERENCE / "claims.csv").query("judged.isna()").itertuples():
        cell = _cells(scorecard, r.experiment, r.text)[1]
        assert re.match(r"[a-z]+ \(.+\) ", cell), cell


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk is not installed")
def test_the_reference_reports_first_page_shows_each_papers_counts(tmp_path, monkeypatch):
    """The report built from results/reference alone, as `make report-from-reference` builds it
    (report.tex and its sections, every input `simcore report-from-results` makes): page 1's text
    gives each paper's row of counts as derived from claims.csv (:func:`expected_counts`), after
    the title and before the scorecard's section."""
    pypdf = pytest.importorskip("pypdf")
    from simcore.experiments.spec import load_untested
    from simcore.report.reference import rebuild_report

    monkeypatch.chdir(ROOT)
    paper = tmp_path / "paper"
    shutil.copytree(ROOT / "paper", paper, ignore=shutil.ignore_patterns("build", "figures", "tables", "generated"))
    specs = [load_spec(p) for p in sorted((ROOT / "config/experiments").glob("*.yaml"))]
    rebuild_report(REFERENCE, paper, specs, ROOT / "config/san", load_untested(ROOT / "config/untested.yaml"))
    run = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-outdir=build",
                          "report.tex"], cwd=paper, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:]
    page = " ".join(pypdf.PdfReader(paper / "build/report.pdf").pages[0].extract_text().split())
    assert "NUMA multiprocessors and workstation clusters" in page
    for name, c in expected_counts().items():
        assert re.search(rf"{name} \(§\d+\) {re.escape(' '.join(_box_cells(c)))}", page), name
    assert page.index("What reproduces") < page.index("Main reason") < page.index("1 Scorecard")


class _Spec:
    """A spec stand-in: its id, paper and the claims with the rows claim_rows gives."""

    def __init__(self, id: str, claims: list[tuple[dict, dict | None]]):
        self.id, self.paper, self.claims = id, id.split("-")[0], claims

    def __getitem__(self, key):
        return getattr(self, key)


def test_notes_are_numbered_once_in_the_order_claims_first_cite_them(monkeypatch):
    """Two experiments, six claims: a reason shared by a contradicted and a smaller claim is one
    note (R1) cited by both; a calibrated claim cites what its number chose (R2); a partly
    calibrated one keeps its verdict and cites what it holds (R3); a reproduced or inconclusive
    claim cites no reason; a contradicted claim without one counts as unexplained."""
    from simcore.report import scorecard

    why = "the paper's machine is faster"
    a = _Spec("amir-x", [({"id": "b", "text": "B", "if_not_reproduced": why}, {"verdict": "smaller than published"}),
                         ({"id": "c", "text": "C"}, {"verdict": "contradicted"}),
                         ({"id": "d", "text": "D", "calibrated": "cost chosen for it"}, {"verdict": "calibrated"})])
    b = _Spec("barak96-y", [({"id": "e", "text": "E", "if_not_reproduced": why}, {"verdict": "contradicted"}),
                            ({"id": "f", "text": "F", "if_not_reproduced": "other", "calibrated_input": "cost of D"},
                             {"verdict": "reproduced"}),
                            ({"id": "g", "text": "G", "if_not_reproduced": "open"}, {"verdict": "inconclusive"})])
    monkeypatch.setattr(scorecard, "claim_rows", lambda spec, results: spec.claims)
    found, cites = scorecard.notes([a, b], Path("results"))
    assert [n.text for n in found] == [why, "Calibrated: its number chose a model value: cost chosen for it.",
                                       "Partly calibrated (the verdict stands): cost of D."]
    assert [n.reason for n in found] == [True, False, False] and [n.number for n in found] == [1, 2, 3]
    assert found[0].papers == {"amir": 1, "barak96": 1}
    assert cites == {("amir-x", "b"): [1], ("amir-x", "d"): [2], ("barak96-y", "e"): [1], ("barak96-y", "f"): [3]}
    assert scorecard.unexplained_counts([a, b], Path("results")) == {"amir": 1, "barak96": 0}
    tex = "\n".join(scorecard.notes_tex(found, {"amir": 1, "barak96": 0}))
    assert tex.count(why) == 1 and r"\item[R1]\label{note:1} (amir 1, barak96 1 claims) " + why in tex
    assert r"\item[--] No reason identified yet for 1 claims decided otherwise (amir 1)." in tex


def test_the_box_gives_each_paper_the_reason_most_of_its_claims_not_reproduced_cite():
    """A paper with 5 claims not reproduced (10 claims - 4 reproduced - 1 calibrated) whose reasons
    R2 and R3 are cited by 3 and 1 of them: R2, '3 of 5', its first clause without its
    parentheses, cut at a word before 40 characters; a paper whose claims each give their own
    reason: no reason shared, all of them named; one whose claims all reproduce: says so."""
    from simcore.report.headline import _reason_line, gist
    from simcore.report.scorecard import STANDINGS, Note

    counts = dict.fromkeys(STANDINGS, 0) | {"reproduced with magnitude": 3, "reproduced direction": 1,
                                            "other size": 2, "not reproduced": 3, "calibrated": 1}
    found = [
        Note(1, "Calibrated: x.", False, {"amir": 1}),
        Note(2, "Long reason (aside) here; more.", True, {"amir": 3}),
        Note(3, "Other.", True, {"amir": 1, "mehta": 1}),
        Note(4, "Own.", True, {"mehta": 1}),
    ]
    assert _reason_line("amir", counts, found) == r"\textbf{amir}: \hyperref[note:2]{R2} (3 of 5) Long reason here.\par"
    assert _reason_line("mehta", counts, found) == (r"\textbf{mehta}: no reason shared: 2 of the 5 claims each give "
                                                    r"their own (\hyperref[note:3]{R3}, \hyperref[note:4]{R4}).\par")
    done = dict.fromkeys(STANDINGS, 0) | {"reproduced direction": 2, "calibrated": 1}
    assert _reason_line("zhou91", done, found) == r"\textbf{zhou91}: every claim reproduces or is calibrated.\par"
    assert gist("Both methods (the two of them (all)) do far worse here than in the paper, so the gap lies; rest.",
                40) == "Both methods do far worse here than in..."
